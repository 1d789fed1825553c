/* The system's clocks read as integers: one conversion for ringd, ringctl,
 * the security tool and the benchmarks. Which clock a caller reads is its
 * own choice, argued where it reads it; the core's time, for one, is
 * CLOCK_BOOTTIME (daemon.c, PROTOCOL.md §5.5). */
#ifndef RING_CLOCK_H
#define RING_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on the clock id. */
static inline uint64_t ring_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Microseconds on the clock id. */
static inline uint64_t ring_clock_us(clockid_t id)
{
	return ring_clock_ns(id) / 1000u;
}

/* Microseconds on CLOCK_MONOTONIC: how long a tool has waited. */
static inline uint64_t ring_mono_us(void)
{
	return ring_clock_us(CLOCK_MONOTONIC);
}

/* For the authentication trailer's time stamp (auth.c): the wall clock,
 * since another host's replay window checks it. */
static inline uint64_t ring_wall_us(void)
{
	return ring_clock_us(CLOCK_REALTIME);
}

#endif
