/* CUnit suite for the control protocol's parser and status formatter
 * (ring/common/control.c): what a local client may write, and what it reads. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "common/control.h"
#include "core/err.h"
#include "lib/suites.h"

static int parse(const char *line, struct ring_ctl_request *r)
{
	char err[128];
	return ring_ctl_parse(line, r, err, sizeof err);
}

static void test_acquire_with_and_without_timeout(void)
{
	struct ring_ctl_request r;
	CU_ASSERT_EQUAL(parse("ACQUIRE", &r), 0);
	CU_ASSERT_EQUAL(r.cmd, RING_CTL_ACQUIRE);
	CU_ASSERT_FALSE(r.has_timeout);
	CU_ASSERT_EQUAL(parse("ACQUIRE 250", &r), 0);
	CU_ASSERT_TRUE(r.has_timeout);
	CU_ASSERT_EQUAL(r.timeout_ms, 250);
	CU_ASSERT_EQUAL(parse("ACQUIRE 0", &r), 0);
	CU_ASSERT_EQUAL(r.timeout_ms, 0);
	CU_ASSERT_EQUAL(parse("ACQUIRE 4294967295", &r), 0);
}

static void test_acquire_with_a_bad_timeout_is_refused(void)
{
	struct ring_ctl_request r;
	const char *bad[] = {"ACQUIRE -1", "ACQUIRE 1x", "ACQUIRE 4294967296", "ACQUIRE 1 2",
			     "ACQUIRE 0x10"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CU_ASSERT_EQUAL(parse(bad[i], &r), -RING_EFIELD);
}

static void test_release_and_status_take_no_argument(void)
{
	struct ring_ctl_request r;
	CU_ASSERT_EQUAL(parse("RELEASE", &r), 0);
	CU_ASSERT_EQUAL(r.cmd, RING_CTL_RELEASE);
	CU_ASSERT_EQUAL(parse("STATUS", &r), 0);
	CU_ASSERT_EQUAL(r.cmd, RING_CTL_STATUS);
	CU_ASSERT_EQUAL(parse("RELEASE now", &r), -RING_EFIELD);
	CU_ASSERT_EQUAL(parse("STATUS x", &r), -RING_EFIELD);
	CU_ASSERT_EQUAL(parse("METRICS", &r), 0);
	CU_ASSERT_EQUAL(r.cmd, RING_CTL_METRICS);
	CU_ASSERT_EQUAL(parse("METRICS all", &r), -RING_EFIELD);
}

static void test_unknown_empty_and_junk_lines_are_refused(void)
{
	struct ring_ctl_request r;
	const char *bad[] = {"", "   ", "acquire", "HELLO", "\x01\x02", "ACQUIRE\t1\t2\t3\t4"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CU_ASSERT_EQUAL(parse(bad[i], &r), -RING_EFIELD);
	char longline[RING_CTL_LINE_MAX + 10];
	memset(longline, 'A', sizeof longline - 1);
	longline[sizeof longline - 1] = 0;
	CU_ASSERT_EQUAL(parse(longline, &r), -RING_EFIELD);
}

static void test_every_inject_parses_with_its_argument(void)
{
	struct ring_ctl_request r;
	CU_ASSERT_EQUAL(parse("INJECT drop-token", &r), 0);
	CU_ASSERT_EQUAL(r.inject, RING_INJECT_DROP_TOKEN);
	CU_ASSERT_EQUAL(parse("INJECT loss 10", &r), 0);
	CU_ASSERT_EQUAL(r.inject, RING_INJECT_LOSS);
	CU_ASSERT_EQUAL(r.arg, 10);
	CU_ASSERT_EQUAL(parse("INJECT block 3", &r), 0);
	CU_ASSERT_EQUAL(r.inject, RING_INJECT_BLOCK);
	CU_ASSERT_EQUAL(parse("INJECT unblock 3", &r), 0);
	CU_ASSERT_EQUAL(parse("INJECT pause 1500", &r), 0);
	CU_ASSERT_EQUAL(r.arg, 1500);
	CU_ASSERT_EQUAL(parse("INJECT clear", &r), 0);
	CU_ASSERT_EQUAL(r.inject, RING_INJECT_CLEAR);
}

static void test_bad_injects_are_refused(void)
{
	struct ring_ctl_request r;
	const char *bad[] = {"INJECT", "INJECT loss", "INJECT loss 101", "INJECT block 0",
			     "INJECT block 65536", "INJECT drop-token 1", "INJECT clear x",
			     "INJECT explode", "INJECT pause 600001"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CU_ASSERT_EQUAL(parse(bad[i], &r), -RING_EFIELD);
}

static void test_status_json_has_the_spec_fields(void)
{
	struct ring_layout l;
	ring_layout_defaults(&l);
	strcpy(l.name, "demo");
	l.n = 3;
	for (size_t i = 0; i < 3; i++)
		l.members[i].id = (uint16_t)(i + 1);
	struct ring_status st = {.node = 2, .state = RING_STATE_NO_QUORUM, .epoch = 258,
				 .fence = 42, .successor = 3, .token_seen_ms_ago = UINT64_MAX};
	ring_set_add(&st.alive, 0);
	ring_set_add(&st.alive, 2);
	st.counters.cs_entries = 7;
	char buf[4096];
	int n = ring_ctl_status_json(buf, sizeof buf, &l, &st, true);
	CU_ASSERT(n > 0 && (size_t)n < sizeof buf);
	const char *want[] = {"\"node\":2", "\"ring\":\"demo\"", "\"epoch\":258",
			      "\"state\":\"no-quorum\"", "\"fence\":42", "\"successor\":3",
			      "\"alive\":[1,3]", "\"token_seen_ms_ago\":null",
			      "\"tokens_passed\":0", "\"cs_entries\":7", "\"retransmits\":0",
			      "\"skips\":0", "\"elections\":0", "\"regenerations\":0",
			      "\"stale_dropped\":0", "\"bad_packets\":0", "\"auth_failures\":0",
			      "\"authenticated\":true"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		CU_ASSERT_PTR_NOT_NULL(strstr(buf, want[i]));
	CU_ASSERT_EQUAL(buf[n - 1], '\n');
	ring_ctl_status_json(buf, sizeof buf, &l, &st, false);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"authenticated\":false"));
}

static void test_status_json_truncates_like_snprintf(void)
{
	struct ring_layout l;
	ring_layout_defaults(&l);
	strcpy(l.name, "r");
	l.n = 2;
	l.members[0].id = 1;
	l.members[1].id = 2;
	struct ring_status st = {.node = 1};
	char small[16];
	int n = ring_ctl_status_json(small, sizeof small, &l, &st, false);
	CU_ASSERT(n >= (int)sizeof small);
	CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_control_tests[] = {
	T_(test_acquire_with_and_without_timeout),
	T_(test_acquire_with_a_bad_timeout_is_refused),
	T_(test_release_and_status_take_no_argument),
	T_(test_unknown_empty_and_junk_lines_are_refused),
	T_(test_every_inject_parses_with_its_argument),
	T_(test_bad_injects_are_refused),
	T_(test_status_json_has_the_spec_fields),
	T_(test_status_json_truncates_like_snprintf),
	CU_TEST_INFO_NULL,
};
#undef T_
