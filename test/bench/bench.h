/* What the benchmark programs share: the clocks, read through ring/clock.h,
 * sorting a sample of times to read its percentiles, and the critical
 * section every lock client runs, so that ring and Redis run the same one. */
#ifndef RING_BENCH_H
#define RING_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v[0..n-1] ascending, so that v[n / 2] is the median. */
static inline void bench_sort(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, bench_cmp_u64);
}

/* The critical section: add one to the 8-byte counter at the start of the
 * shared file FD (pread, pwrite). Under a lock that works, the counter ends
 * equal to the sum of every client's entries; a lost update shows an overlap.
 * Returns 0, or -1 when the file cannot be read or written. */
static inline int bench_cs(int fd)
{
	uint64_t v = 0;
	if (pread(fd, &v, sizeof v, 0) < 0)
		return -1;
	v++;
	return pwrite(fd, &v, sizeof v, 0) == (ssize_t)sizeof v ? 0 : -1;
}

#endif
