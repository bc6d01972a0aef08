/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task names as the kernel keeps them (TASK_COMM_LEN, 16 bytes: the name,
 * then a NUL when it is shorter) read a word at a time: no strnlen() call
 * per name, and bytes after the NUL, which a record may hold, made zero so
 * that equal names are equal bytes. Every function reads all 16 bytes of
 * its source. Private to the library.
 */
#ifndef TD_LIB_COMM_H
#define TD_LIB_COMM_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include <trace-defer/types.h>

#include "le.h"

#define TD_BYTES_ONES	0x0101010101010101ULL
#define TD_BYTES_HIGHS	0x8080808080808080ULL

/*
 * Flags of the zero bytes of @v: the lowest is exact (a borrow only runs
 * upwards), bit 8k + 7 for zero byte k; bits above it may be wrong.
 */
static inline uint64_t td_nul_flags(uint64_t v)
{
	return (v - TD_BYTES_ONES) & ~v & TD_BYTES_HIGHS;
}

/* The bytes of @v below the zero byte that @flags (non-zero) flags first. */
static inline uint64_t td_below_nul(uint64_t v, uint64_t flags)
{
	return v & ((1ULL << (__builtin_ctzll(flags) - 7)) - 1);
}

/* The 16 bytes at @s as two little-endian words, every byte from the first NUL on zero. */
static inline void td_comm_words(const char *s, uint64_t *lo, uint64_t *hi)
{
	uint64_t a = td_get_le64((const uint8_t *)s), b = td_get_le64((const uint8_t *)s + 8);
	uint64_t z = td_nul_flags(a);

	if (z) {
		*lo = td_below_nul(a, z);
		*hi = 0;
		return;
	}
	z = td_nul_flags(b);
	*lo = a;
	*hi = z ? td_below_nul(b, z) : b;
}

/*
 * The name at @src into @dst as a C string of at most 15 bytes (a 16-byte
 * name is cut, as strnlen() and a copy of 15 would), the rest of @dst zero.
 */
static inline void td_comm_copy(char *dst, const char *src)
{
	uint64_t lo, hi;

	td_comm_words(src, &lo, &hi);
	hi = htole64(hi & 0x00ffffffffffffffULL);
	lo = htole64(lo);
	memcpy(dst, &lo, 8);
	memcpy(dst + 8, &hi, 8);
}

#endif /* TD_LIB_COMM_H */
