/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a dynamic (__data_loc / __rel_loc) field's bytes lie in a record:
 * the one set of rules the parser, the JSON field writer and the
 * trace-cmd plugin apply. Inline because the parser asks it four times
 * per user stack record; td_dyn_field() (trace-defer/filetab.h) is the
 * same for the library's users. Private to the library.
 */
#ifndef TD_LIB_DYNFIELD_H
#define TD_LIB_DYNFIELD_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <event-parse.h>

/*
 * @f's data in a record of @size bytes at @data, whose numbers are
 * big-endian when @big_endian (a trace.dat from such a machine), else
 * little-endian. False when @f is not a 4-byte dynamic field, when it or
 * its data lies outside the record, or when a __data_loc points into the
 * fixed part up to the field's own end: a record the kernel cannot write.
 * @data may be NULL only when @size is 0.
 */
static inline bool td_dyn_locate(const struct tep_format_field *f, const void *data, int size,
				 bool big_endian, unsigned int *off, unsigned int *len)
{
	uint64_t start, field_end;
	uint32_t loc;

	if (!f || !(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4 || f->offset < 0 ||
	    size < 0 || (uint64_t)f->offset + 4 > (uint64_t)size)
		return false;
	memcpy(&loc, (const uint8_t *)data + f->offset, sizeof(loc));
	loc = big_endian ? be32toh(loc) : le32toh(loc);
	start = loc & 0xffff;
	field_end = (uint64_t)f->offset + 4;
	/* A __rel_loc counts from the end of the field itself. */
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		start += field_end;
	else if (start < field_end)
		return false;
	if (start + (loc >> 16) > (uint64_t)size)
		return false;
	*off = (unsigned int)start;
	*len = loc >> 16;
	return true;
}

#endif /* TD_LIB_DYNFIELD_H */
