/* What the benchmark programs share: the clocks, read through ring/clock.h,
 * and sorting a sample of times to read its percentiles. */
#ifndef RING_BENCH_H
#define RING_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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

#endif
