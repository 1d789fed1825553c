/* The byte cursors of the wire format and the bodies of its messages,
 * shared by wire.c (the frame, the checks) and wire_body.c (each message
 * type's fields in order). Nothing outside ring/core/wire*.c includes it. */
#ifndef RING_CORE_WIRE_BODY_H
#define RING_CORE_WIRE_BODY_H

#include <string.h>

#include "core/bytes.h"
#include "core/wire.h"

#define SET_BYTES sizeof(struct ring_set)

_Static_assert(sizeof(struct ring_set) == 32, "a ring_set travels as 32 raw bytes");

/* Cursors over bytes.h: each helper returns the position after its field. */
static inline uint8_t *put_u8(uint8_t *p, uint8_t v)
{
	p[0] = v;
	return p + 1;
}

static inline uint8_t *put_u16(uint8_t *p, uint16_t v)
{
	ring_put_be16(p, v);
	return p + 2;
}

static inline uint8_t *put_u32(uint8_t *p, uint32_t v)
{
	ring_put_be32(p, v);
	return p + 4;
}

static inline uint8_t *put_u64(uint8_t *p, uint64_t v)
{
	ring_put_be64(p, v);
	return p + 8;
}

static inline uint8_t *put_set(uint8_t *p, const struct ring_set *s)
{
	memcpy(p, s->bits, SET_BYTES);
	return p + SET_BYTES;
}

static inline uint8_t *put_hop(uint8_t *p, const struct ring_hop *h)
{
	p = put_u32(p, h->epoch);
	return put_u32(p, h->seq);
}

static inline const uint8_t *get_u8(const uint8_t *p, uint8_t *v)
{
	*v = p[0];
	return p + 1;
}

static inline const uint8_t *get_u16(const uint8_t *p, uint16_t *v)
{
	*v = ring_get_be16(p);
	return p + 2;
}

static inline const uint8_t *get_u32(const uint8_t *p, uint32_t *v)
{
	*v = ring_get_be32(p);
	return p + 4;
}

static inline const uint8_t *get_u64(const uint8_t *p, uint64_t *v)
{
	*v = ring_get_be64(p);
	return p + 8;
}

static inline const uint8_t *get_set(const uint8_t *p, struct ring_set *s)
{
	memcpy(s->bits, p, SET_BYTES);
	return p + SET_BYTES;
}

static inline const uint8_t *get_hop(const uint8_t *p, struct ring_hop *h)
{
	p = get_u32(p, &h->epoch);
	return get_u32(p, &h->seq);
}

/* Writes MSG's body at P (its type known good): the position after it. */
uint8_t *wire_put_body(uint8_t *p, const struct ring_msg *msg);
/* Reads MSG->type's body from P, whose length the caller checked. */
const uint8_t *wire_get_body(const uint8_t *p, struct ring_msg *msg);

#endif
