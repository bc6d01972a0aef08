/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian loads at any alignment: ring-buffer records are the
 * kernel's bytes, packed (the stores are td_put_le32/64 in
 * trace-defer/pagegen.h). Private to the library.
 */
#ifndef TD_LIB_LE_H
#define TD_LIB_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t td_get_le16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t td_get_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t td_get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

#endif /* TD_LIB_LE_H */
