/* A set of ring members by ring index (0..255): who is alive in a token,
 * who took part in an election. Fixed 32 bytes so it travels as is. */
#ifndef RING_SET_H
#define RING_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ring_set {
	uint8_t bits[32];
};

static inline void ring_set_clear(struct ring_set *s)
{
	memset(s->bits, 0, sizeof s->bits);
}

static inline bool ring_set_has(const struct ring_set *s, size_t i)
{
	return i < 256 && ((unsigned)s->bits[i / 8] >> (i % 8)) & 1u;
}

static inline void ring_set_add(struct ring_set *s, size_t i)
{
	if (i < 256)
		s->bits[i / 8] = (uint8_t)(s->bits[i / 8] | (1u << (i % 8)));
}

static inline void ring_set_del(struct ring_set *s, size_t i)
{
	if (i < 256)
		s->bits[i / 8] = (uint8_t)(s->bits[i / 8] & ~(1u << (i % 8)));
}

static inline size_t ring_set_count(const struct ring_set *s)
{
	size_t c = 0;
	for (size_t i = 0; i < sizeof s->bits; i++)
		c += (size_t)__builtin_popcount(s->bits[i]);
	return c;
}

#endif
