/* Big-endian (network order) integers in byte buffers, byte by byte so that
 * neither the host's byte order nor the buffer's alignment matters. The one
 * copy for the wire format, the auth trailer, the tests and the benchmarks. */
#ifndef RING_BYTES_H
#define RING_BYTES_H

#include <stdint.h>

static inline void ring_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void ring_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void ring_put_be64(uint8_t *p, uint64_t v)
{
	ring_put_be32(p, (uint32_t)(v >> 32));
	ring_put_be32(p + 4, (uint32_t)v);
}

static inline uint16_t ring_get_be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | (unsigned)p[1]);
}

static inline uint32_t ring_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint64_t ring_get_be64(const uint8_t *p)
{
	return (uint64_t)ring_get_be32(p) << 32 | ring_get_be32(p + 4);
}

#endif
