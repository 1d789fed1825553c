/* Hold times exact enough to quote: log-linear buckets (HdrHistogram's
 * idea), 32 to each power of two, so that a percentile read off them is an
 * upper bound within 1/32 (3 %) of the true value; the longest hold is kept
 * exactly. Pure: the daemon feeds the samples, tests their own. */
#ifndef RING_HOLD_HIST_H
#define RING_HOLD_HIST_H

#include <stdint.h>

#include "common/advice.h"

#define RING_HOLD_SUB 32u     /* buckets per power of two */
#define RING_HOLD_LINEAR 64u  /* 0..63 us: one bucket each, exact */
#define RING_HOLD_TOP 40u     /* 2^40 us (12.7 days) and above share the last bucket */
#define RING_HOLD_BUCKETS (RING_HOLD_LINEAR + (RING_HOLD_TOP - 6u) * RING_HOLD_SUB)

struct ring_hold_hist {
	uint64_t bucket[RING_HOLD_BUCKETS];
	uint64_t count;
	uint64_t max_us;
};

/* One hold of US microseconds: a bit scan and two increments. */
void ring_hold_hist_observe(struct ring_hold_hist *h, uint64_t us);

/* The PER_MILLE-th per mille (500: the median, 999: p99.9) by nearest
 * rank: the smallest bucket bound below which at least that share of the
 * holds lie, never above the longest hold. 0 when there are none. */
uint64_t ring_hold_hist_quantile(const struct ring_hold_hist *h, unsigned per_mille);

/* The hold figures of F (count, p50, p99, p99.9, max); the pause fields
 * are left as they are. */
void ring_hold_hist_figures(const struct ring_hold_hist *h, struct ring_advice_figures *f);

#endif
