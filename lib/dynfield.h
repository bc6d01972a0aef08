/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a dynamic (__data_loc / __rel_loc) field's bytes lie in a record.
 * Inline because the parser asks it four times per user stack record;
 * td_dyn_field() (trace-defer/filetab.h) is the same for the library's
 * users. Private to the library.
 */
#ifndef TD_LIB_DYNFIELD_H
#define TD_LIB_DYNFIELD_H

#include <stdbool.h>
#include <stdint.h>

#include <event-parse.h>

#include "le.h"

/*
 * @f's data in a record of @size bytes at @data: false when @f is not a
 * 4-byte dynamic field, or it or its data lies outside the record.
 */
static inline bool td_dyn_locate(const struct tep_format_field *f, const uint8_t *data, int size,
				 unsigned int *off, unsigned int *len)
{
	uint64_t start;
	uint32_t loc;

	if (!f || !(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4 || f->offset < 0 ||
	    size < 0 || (uint64_t)f->offset + 4 > (uint64_t)size)
		return false;
	loc = td_get_le32(data + f->offset);
	start = loc & 0xffff;
	/* A __rel_loc counts from the end of the field itself. */
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		start += (uint64_t)f->offset + 4;
	if (start + (loc >> 16) > (uint64_t)size)
		return false;
	*off = (unsigned int)start;
	*len = loc >> 16;
	return true;
}

#endif /* TD_LIB_DYNFIELD_H */
