/* CUnit suite for fault injection (ring/daemon/inject.c): what each `ringctl inject`
 * word plants, what it refuses, and the drop decisions the daemon's send and
 * receive paths get from it. */
#include <CUnit/CUnit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fingerprint.h"
#include "core/err.h"
#include "daemon/inject.h"
#include "lib/harness.h"
#include "lib/suites.h"
#include "core/wire.h"

struct fixture {
	struct ring_conf conf;
	struct ring_faults f;
	struct ring_log log;
	char log_path[64];
	char why[160];
};

/* Member index 0 of a 3-member ring (ids from make_layout), logging to a
 * scratch file. */
static void setup(struct fixture *x, bool allow)
{
	memset(x, 0, sizeof *x);
	make_layout(&x->conf.layout, 3);
	x->conf.allow_inject = allow;
	strcpy(x->conf.path, "ring.ini");
	ring_faults_init(&x->f, 42);
	strcpy(x->log_path, "/tmp/ring-test-inject-XXXXXX");
	int fd = mkstemp(x->log_path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	char err[128];
	CU_ASSERT_FATAL(ring_log_open(&x->log, x->log_path, RING_LOG_JSON, false, 1, err,
				      sizeof err) == 0);
}

static void teardown(struct fixture *x)
{
	ring_log_close(&x->log);
	unlink(x->log_path);
}

static int apply(struct fixture *x, enum ring_inject what, uint32_t arg)
{
	struct ring_ctl_request r = {.cmd = RING_CTL_INJECT, .inject = what, .arg = arg};
	x->why[0] = 0;
	return ring_faults_apply(&x->f, &x->conf, 0, &r, &x->log, x->why, sizeof x->why);
}

static uint16_t id_at(const struct fixture *x, size_t idx)
{
	return x->conf.layout.members[idx].id;
}

static size_t encode(const struct fixture *x, enum ring_msg_type type, uint8_t *buf)
{
	struct ring_msg m = {.type = type, .from = id_at(x, 0), .to = id_at(x, 1)};
	m.fingerprint = ring_layout_fingerprint(&x->conf.layout);
	int n = ring_wire_encode(&m, buf, RING_WIRE_MAX);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static void test_inject_is_refused_unless_allowed_and_plants_nothing(void)
{
	struct fixture x;
	setup(&x, false);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_BLOCK, id_at(&x, 1)), -RING_EFIELD);
	CU_ASSERT_PTR_NOT_NULL(strstr(x.why, "allow_inject = false in ring.ini"));
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_LOSS, 100), -RING_EFIELD);
	CU_ASSERT_FALSE(ring_faults_blocked(&x.f, 1));
	CU_ASSERT_FALSE(ring_faults_lose(&x.f, 1));
	CU_ASSERT_FALSE(ring_faults_lose(&x.f, 2));
	teardown(&x);
}

static void test_block_cuts_one_member_both_ways_until_unblocked(void)
{
	struct fixture x;
	setup(&x, true);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_BLOCK, id_at(&x, 2)), 0);
	CU_ASSERT_TRUE(ring_faults_blocked(&x.f, 2));
	CU_ASSERT_TRUE(ring_faults_lose(&x.f, 2));
	CU_ASSERT_FALSE(ring_faults_blocked(&x.f, 1));
	CU_ASSERT_FALSE(ring_faults_lose(&x.f, 1));
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_UNBLOCK, id_at(&x, 2)), 0);
	CU_ASSERT_FALSE(ring_faults_blocked(&x.f, 2));
	CU_ASSERT_FALSE(ring_faults_lose(&x.f, 2));
	teardown(&x);
}

static void test_block_of_itself_or_a_stranger_is_refused(void)
{
	struct fixture x;
	setup(&x, true);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_BLOCK, id_at(&x, 0)), -RING_EFIELD);
	CU_ASSERT_PTR_NOT_NULL(strstr(x.why, "is not another member"));
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_BLOCK, 9999), -RING_EFIELD);
	CU_ASSERT_FALSE(ring_faults_blocked(&x.f, 0));
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_FALSE(ring_faults_lose(&x.f, i));
	teardown(&x);
}

static void test_drop_token_swallows_the_next_token_only(void)
{
	struct fixture x;
	setup(&x, true);
	uint8_t tok[RING_WIRE_MAX], hb[RING_WIRE_MAX];
	size_t tn = encode(&x, RING_MSG_TOKEN, tok);
	size_t hn = encode(&x, RING_MSG_HEARTBEAT, hb);
	CU_ASSERT_FALSE(ring_faults_swallow_token(&x.f, tok, tn)); /* nothing planted */
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_DROP_TOKEN, 0), 0);
	CU_ASSERT_FALSE(ring_faults_swallow_token(&x.f, hb, hn)); /* not a token: kept */
	CU_ASSERT_TRUE(ring_faults_swallow_token(&x.f, tok, tn));
	CU_ASSERT_FALSE(ring_faults_swallow_token(&x.f, tok, tn)); /* once */
	teardown(&x);
}

static void test_loss_drops_about_its_share_and_clear_undoes_every_fault(void)
{
	struct fixture x;
	setup(&x, true);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_LOSS, 30), 0);
	unsigned lost = 0;
	for (int k = 0; k < 10000; k++)
		lost += ring_faults_lose(&x.f, 1);
	CU_ASSERT(lost > 2500 && lost < 3500);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_LOSS, 100), 0);
	for (int k = 0; k < 100; k++)
		CU_ASSERT_TRUE(ring_faults_lose(&x.f, 1));
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_BLOCK, id_at(&x, 2)), 0);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_DROP_TOKEN, 0), 0);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_CLEAR, 0), 0);
	uint8_t tok[RING_WIRE_MAX];
	size_t tn = encode(&x, RING_MSG_TOKEN, tok);
	CU_ASSERT_FALSE(ring_faults_swallow_token(&x.f, tok, tn));
	for (int k = 0; k < 100; k++) {
		CU_ASSERT_FALSE(ring_faults_lose(&x.f, 1));
		CU_ASSERT_FALSE(ring_faults_lose(&x.f, 2));
	}
	teardown(&x);
}

/* The trace checker and the lab time recovery from these lines. */
static void test_every_planted_fault_is_logged_with_its_argument(void)
{
	struct fixture x;
	setup(&x, true);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_LOSS, 25), 0);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_PAUSE, 1500), 0);
	CU_ASSERT_EQUAL(apply(&x, RING_INJECT_BLOCK, id_at(&x, 0)), -RING_EFIELD);
	ring_log_close(&x.log);
	FILE *in = fopen(x.log_path, "r");
	CU_ASSERT_FATAL(in != NULL);
	char line[512], all[2048] = "";
	int lines = 0;
	while (fgets(line, sizeof line, in) && strlen(all) + strlen(line) < sizeof all) {
		strcat(all, line);
		lines++;
	}
	fclose(in);
	CU_ASSERT_EQUAL(lines, 2); /* the refused one is not logged */
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "\"what\":\"loss 25\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "\"what\":\"pause 1500\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(all, "\"event\":\"inject\""));
	teardown(&x); /* closing a closed log does nothing */
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_inject_tests[] = {
	T_(test_inject_is_refused_unless_allowed_and_plants_nothing),
	T_(test_block_cuts_one_member_both_ways_until_unblocked),
	T_(test_block_of_itself_or_a_stranger_is_refused),
	T_(test_drop_token_swallows_the_next_token_only),
	T_(test_loss_drops_about_its_share_and_clear_undoes_every_fault),
	T_(test_every_planted_fault_is_logged_with_its_argument),
	CU_TEST_INFO_NULL,
};
#undef T_
