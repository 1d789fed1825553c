/* The fine hold-time histogram behind lease advice: which bucket a
 * sample falls in, each bucket's upper bound, and percentiles by nearest
 * rank. See hold_hist.h for the error bound. */
#include "daemon/hold_hist.h"

#include <stddef.h>

/* The bucket of US: below RING_HOLD_LINEAR its own; above, the power of two
 * it is in and which of its RING_HOLD_SUB equal slices. */
static size_t index_of(uint64_t us)
{
	if (us < RING_HOLD_LINEAR)
		return (size_t)us;
	unsigned e = 63u - (unsigned)__builtin_clzll(us); /* 2^e <= us < 2^(e+1), e >= 6 */
	if (e >= RING_HOLD_TOP)
		return RING_HOLD_BUCKETS - 1;
	unsigned shift = e - 5u; /* slices of 2^shift: 32 of them per power of two */
	size_t sub = (size_t)(us >> shift) - RING_HOLD_SUB;
	return RING_HOLD_LINEAR + (size_t)(e - 6u) * RING_HOLD_SUB + sub;
}

/* The largest value bucket K holds (the last one: no bound). */
static uint64_t upper_of(size_t k)
{
	if (k < RING_HOLD_LINEAR)
		return k;
	if (k >= RING_HOLD_BUCKETS - 1)
		return UINT64_MAX;
	size_t e = 6 + (k - RING_HOLD_LINEAR) / RING_HOLD_SUB;
	size_t sub = (k - RING_HOLD_LINEAR) % RING_HOLD_SUB;
	return (((uint64_t)RING_HOLD_SUB + sub + 1) << (e - 5)) - 1;
}

void ring_hold_hist_observe(struct ring_hold_hist *h, uint64_t us)
{
	h->bucket[index_of(us)]++;
	h->count++;
	if (us > h->max_us)
		h->max_us = us;
}

uint64_t ring_hold_hist_quantile(const struct ring_hold_hist *h, unsigned per_mille)
{
	if (h->count == 0)
		return 0;
	if (per_mille > 1000)
		per_mille = 1000;
	/* rank = ceil(count * q), at least 1; count * 1000 cannot wrap for
	 * any count a member reaches (2^54 holds) */
	uint64_t rank = (h->count * per_mille + 999) / 1000;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (size_t k = 0; k < RING_HOLD_BUCKETS; k++) {
		seen += h->bucket[k];
		if (seen >= rank) {
			uint64_t up = upper_of(k);
			return up < h->max_us ? up : h->max_us;
		}
	}
	return h->max_us; /* unreachable: the buckets add up to count */
}

void ring_hold_hist_figures(const struct ring_hold_hist *h, struct ring_advice_figures *f)
{
	f->holds = h->count;
	f->p50_us = ring_hold_hist_quantile(h, 500);
	f->p99_us = ring_hold_hist_quantile(h, 990);
	f->p999_us = ring_hold_hist_quantile(h, 999);
	f->max_us = h->max_us;
}
