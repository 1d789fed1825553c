/* CUnit suite for lease advice (ring/common/advice.c): the worst figure of
 * any member is what counts, the rule picks the larger of 3 x the longest
 * pause and 1.5 x the p99.9 hold, rounded up in 1-2-5 steps, max_hold_ms is
 * twice the longest hold and never below the lease, and fewer than 20
 * holds give no advice. */
#include <CUnit/CUnit.h>

#include <stdlib.h>
#include <string.h>

#include "common/advice.h"
#include "lib/suites.h"

static struct ring_advice_figures fig(uint64_t holds, uint64_t p50, uint64_t p99, uint64_t p999,
				      uint64_t max, uint64_t pause)
{
	return (struct ring_advice_figures){holds, p50, p99, p999, max, pause, pause ? 1 : 0};
}

static void test_step_up_is_1_2_5(void)
{
	static const uint64_t in[] = {0, 1, 2, 3, 5, 6, 10, 11, 99, 101, 150, 1497, 2001, 5000, 5001};
	static const uint64_t want[] = {1, 1, 2, 5, 5, 10, 10, 20, 100, 200, 200, 2000, 5000, 5000,
					10000};
	for (size_t k = 0; k < sizeof in / sizeof in[0]; k++)
		CU_ASSERT_EQUAL(ring_advice_step_up(in[k]), want[k]);
	CU_ASSERT_EQUAL(ring_advice_step_up(5000000000000000000ULL), 5000000000000000000ULL);
	CU_ASSERT_EQUAL(ring_advice_step_up(5000000000000000001ULL), UINT64_MAX);
	CU_ASSERT_EQUAL(ring_advice_step_up(UINT64_MAX), UINT64_MAX);
}

/* A 500 ms pause at member 2 outweighs 55 ms holds at member 1:
 * 3 x 500 = 1500 -> 2000; 2 x 60 ms = 120 -> 200, below the lease: 2000. */
static void test_a_pause_decides_the_lease(void)
{
	struct ring_advice a;
	ring_advice_init(&a);
	struct ring_advice_figures one = fig(30, 50000, 54000, 55000, 60000, 0);
	struct ring_advice_figures two = fig(10, 1000, 2000, 3000, 4000, 500000);
	ring_advice_add(&a, 1, &one);
	ring_advice_add(&a, 2, &two);
	ring_advice_decide(&a);
	CU_ASSERT_EQUAL(a.members, 2);
	CU_ASSERT_EQUAL(a.holds, 40);
	CU_ASSERT_EQUAL(a.pauses, 1);
	CU_ASSERT_TRUE(a.enough);
	CU_ASSERT_EQUAL(a.p999_us, 55000);
	CU_ASSERT_EQUAL(a.p999_at, 1);
	CU_ASSERT_EQUAL(a.max_us, 60000);
	CU_ASSERT_EQUAL(a.max_at, 1);
	CU_ASSERT_EQUAL(a.pause_us, 500000);
	CU_ASSERT_EQUAL(a.pause_at, 2);
	CU_ASSERT_EQUAL(a.by_pause_ms, 1500);
	CU_ASSERT_EQUAL(a.by_hold_ms, 83); /* 82.5 rounded up */
	CU_ASSERT_EQUAL(a.lease_ms, 2000);
	CU_ASSERT_EQUAL(a.by_max_ms, 120);
	CU_ASSERT_EQUAL(a.max_hold_ms, 2000);
	CU_ASSERT_TRUE(a.max_hold_optional);
	CU_ASSERT_FALSE(a.capped);
}

/* Long holds and no pause: 1.5 x 3.1 s = 4650 -> 5000; 2 x 9 s -> 20000,
 * and a 9 s hold does not fit a 5 s lease: max_hold_ms is needed. */
static void test_long_holds_decide_both(void)
{
	struct ring_advice a;
	ring_advice_init(&a);
	struct ring_advice_figures f = fig(1000, 1000000, 3000000, 3100000, 9000000, 0);
	ring_advice_add(&a, 7, &f);
	ring_advice_decide(&a);
	CU_ASSERT_EQUAL(a.pause_at, 0);
	CU_ASSERT_EQUAL(a.by_pause_ms, 0);
	CU_ASSERT_EQUAL(a.by_hold_ms, 4650);
	CU_ASSERT_EQUAL(a.lease_ms, 5000);
	CU_ASSERT_EQUAL(a.max_hold_ms, 20000);
	CU_ASSERT_FALSE(a.max_hold_optional);
}

static void test_fewer_than_20_holds_is_not_enough_data(void)
{
	struct ring_advice a;
	ring_advice_init(&a);
	struct ring_advice_figures f = fig(RING_ADVICE_MIN_HOLDS - 1, 10, 20, 30, 40, 900000);
	ring_advice_add(&a, 1, &f);
	ring_advice_decide(&a);
	CU_ASSERT_FALSE(a.enough);
	CU_ASSERT_EQUAL(a.lease_ms, 0);
	CU_ASSERT_EQUAL(a.max_hold_ms, 0);
	char buf[512];
	ring_advice_explain(&a, 5000, 0, buf, sizeof buf);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "not enough data: 19 holds in all, the advice needs 20"));
	/* one more hold, at another member, is enough */
	struct ring_advice_figures g = fig(1, 10, 10, 10, 10, 0);
	ring_advice_add(&a, 2, &g);
	ring_advice_decide(&a);
	CU_ASSERT_TRUE(a.enough);
	CU_ASSERT_EQUAL(a.lease_ms, 5000); /* 3 x 900 ms = 2700 */
}

/* One line per key, the figures and members named, compared with now. */
static void test_explain_gives_one_line_each_with_its_reasons(void)
{
	struct ring_advice a;
	ring_advice_init(&a);
	struct ring_advice_figures one = fig(30, 50000, 54000, 55000, 60000, 0);
	struct ring_advice_figures two = fig(10, 1000, 2000, 3000, 4000, 500000);
	ring_advice_add(&a, 1, &one);
	ring_advice_add(&a, 2, &two);
	ring_advice_decide(&a);
	char buf[1024];
	int n = ring_advice_explain(&a, 1000, 0, buf, sizeof buf);
	CU_ASSERT_EQUAL((size_t)n, strlen(buf));
	char *nl = strchr(buf, '\n');
	CU_ASSERT_PTR_NOT_NULL_FATAL(nl);
	CU_ASSERT_EQUAL(strchr(nl + 1, '\n'), buf + n - 1); /* two lines */
	CU_ASSERT_EQUAL(strncmp(buf, "lease_ms >= 2000: 3 x the longest pause (500.0 ms at member 2) "
				     "= 1500 ms, above 1.5 x the highest p99.9 hold (55.0 ms at "
				     "member 1) = 83 ms",
				strlen("lease_ms >= 2000: 3 x the longest pause (500.0 ms at member 2) "
				       "= 1500 ms, above 1.5 x the highest p99.9 hold (55.0 ms at "
				       "member 1) = 83 ms")),
			0);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "now 1000: too short\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(nl + 1, "max_hold_ms >= 2000: 2 x the longest hold (60.0 ms at "
					      "member 1) = 120 ms"));
	CU_ASSERT_PTR_NOT_NULL(strstr(nl + 1, "or 0 (none)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(nl + 1, "now 0 (none): fine\n"));
	/* cut short like snprintf, terminated, the whole length returned */
	char small[16];
	CU_ASSERT_EQUAL(ring_advice_explain(&a, 1000, 0, small, sizeof small), n);
	CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
	CU_ASSERT_EQUAL(ring_advice_explain(&a, 1000, 0, NULL, 0), n);
}

/* Figures off the wire may be anything decode allows: nothing wraps, and
 * the advice stops at the keys' bounds, saying so. */
static void test_huge_figures_saturate_and_are_capped(void)
{
	struct ring_advice a;
	ring_advice_init(&a);
	struct ring_advice_figures f = fig(UINT64_MAX, 0, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX);
	ring_advice_add(&a, 1, &f);
	ring_advice_add(&a, 2, &f);
	ring_advice_decide(&a);
	CU_ASSERT_EQUAL(a.holds, UINT64_MAX);
	CU_ASSERT_EQUAL(a.by_pause_ms, UINT64_MAX / 1000 * 3 + 2); /* ceil(3 x (2^64 - 1) / 1000) */
	CU_ASSERT_EQUAL(a.lease_ms, RING_ADVICE_LEASE_MAX_MS);
	CU_ASSERT_EQUAL(a.max_hold_ms, RING_ADVICE_MAX_HOLD_MAX_MS);
	CU_ASSERT_TRUE(a.capped);
	char buf[1024];
	ring_advice_explain(&a, 5000, 0, buf, sizeof buf);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "capped"));
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_advice_tests[] = {
	T_(test_step_up_is_1_2_5),
	T_(test_a_pause_decides_the_lease),
	T_(test_long_holds_decide_both),
	T_(test_fewer_than_20_holds_is_not_enough_data),
	T_(test_explain_gives_one_line_each_with_its_reasons),
	T_(test_huge_figures_saturate_and_are_capped),
	CU_TEST_INFO_NULL,
};
#undef T_
