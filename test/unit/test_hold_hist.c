/* CUnit suite for the fine hold-time histogram (ring/daemon/hold_hist.c):
 * percentiles by nearest rank are upper bounds within 1/32 of the true
 * value, never above the exact maximum, and in order. */
#include <CUnit/CUnit.h>

#include <stdlib.h>
#include <string.h>

#include "daemon/hold_hist.h"
#include "lib/harness.h"
#include "lib/suites.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The true nearest-rank percentile of N sorted values. */
static uint64_t exact(const uint64_t *v, size_t n, unsigned per_mille)
{
	size_t rank = ((uint64_t)n * per_mille + 999) / 1000;
	return v[(rank ? rank : 1) - 1];
}

static void test_empty_histogram_says_zero(void)
{
	static struct ring_hold_hist h;
	memset(&h, 0, sizeof h);
	CU_ASSERT_EQUAL(ring_hold_hist_quantile(&h, 500), 0);
	struct ring_advice_figures f = {.pause_max_us = 7};
	ring_hold_hist_figures(&h, &f);
	CU_ASSERT_EQUAL(f.holds, 0);
	CU_ASSERT_EQUAL(f.max_us, 0);
	CU_ASSERT_EQUAL(f.pause_max_us, 7); /* not its to set */
}

/* 40 holds of 50 ms and one of 520 ms (a paused client): the median is
 * 50 ms within 1/32, and the tail is the long one, exactly. */
static void test_known_holds_give_their_percentiles(void)
{
	static struct ring_hold_hist h;
	memset(&h, 0, sizeof h);
	for (int k = 0; k < 40; k++)
		ring_hold_hist_observe(&h, 50000 + (uint64_t)k * 10);
	ring_hold_hist_observe(&h, 520000);
	struct ring_advice_figures f;
	ring_hold_hist_figures(&h, &f);
	CU_ASSERT_EQUAL(f.holds, 41);
	CU_ASSERT(f.p50_us >= 50200 && f.p50_us <= 50200 + 50200 / 32);
	CU_ASSERT(f.p99_us == 520000);  /* rank 41 of 41 */
	CU_ASSERT(f.p999_us == 520000);
	CU_ASSERT_EQUAL(f.max_us, 520000);
}

/* Small values are exact; every bucket's width is at most 1/32 of its
 * lower end. */
static void test_small_values_are_exact(void)
{
	for (uint64_t v = 0; v < 64; v++) {
		static struct ring_hold_hist h;
		memset(&h, 0, sizeof h);
		ring_hold_hist_observe(&h, v);
		ring_hold_hist_observe(&h, 1000000);
		CU_ASSERT_EQUAL(ring_hold_hist_quantile(&h, 500), v);
	}
}

/* Random holds over six orders of magnitude: each percentile is at or
 * above the true one and within 1/32 of it, and they are in order. */
static void test_random_holds_are_within_one_32nd(void)
{
	static struct ring_hold_hist h;
	static uint64_t v[5000];
	uint64_t seed = 0x1234567;
	static const unsigned q[] = {1, 100, 500, 900, 990, 999, 1000};
	for (int round = 0; round < 20; round++) {
		memset(&h, 0, sizeof h);
		size_t n = 1 + (size_t)(xorshift_next(&seed) % 5000);
		for (size_t k = 0; k < n; k++) {
			uint64_t scale = 1ull << (xorshift_next(&seed) % 34);
			v[k] = xorshift_next(&seed) % scale;
			ring_hold_hist_observe(&h, v[k]);
		}
		qsort(v, n, sizeof v[0], cmp_u64);
		CU_ASSERT_EQUAL(h.max_us, v[n - 1]);
		uint64_t last = 0;
		for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
			uint64_t got = ring_hold_hist_quantile(&h, q[k]), want = exact(v, n, q[k]);
			CU_ASSERT(got >= want);
			CU_ASSERT(got <= want + want / 32);
			CU_ASSERT(got >= last);
			last = got;
		}
		CU_ASSERT_EQUAL(ring_hold_hist_quantile(&h, 1000), v[n - 1]);
	}
}

/* Beyond the top bucket's bound: still counted, and the maximum exact. */
static void test_huge_holds_are_kept(void)
{
	static struct ring_hold_hist h;
	memset(&h, 0, sizeof h);
	ring_hold_hist_observe(&h, UINT64_MAX);
	ring_hold_hist_observe(&h, 1ull << 45);
	CU_ASSERT_EQUAL(h.count, 2);
	CU_ASSERT_EQUAL(h.bucket[RING_HOLD_BUCKETS - 1], 2);
	CU_ASSERT_EQUAL(ring_hold_hist_quantile(&h, 500), UINT64_MAX);
	CU_ASSERT_EQUAL(h.max_us, UINT64_MAX);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_hold_hist_tests[] = {
	T_(test_empty_histogram_says_zero),
	T_(test_known_holds_give_their_percentiles),
	T_(test_small_values_are_exact),
	T_(test_random_holds_are_within_one_32nd),
	T_(test_huge_holds_are_kept),
	CU_TEST_INFO_NULL,
};
#undef T_
