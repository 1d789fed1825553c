/* CUnit suite for the trace checker (ring/ctl/trace.c): synthetic member logs
 * with one known defect each, and a clean one. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/suites.h"
#include "common/clock.h"
#include "ctl/trace.h"
#include "ctl/trace_gaps.h"

static char dir[64];

int ring_test_trace_init(void)
{
	snprintf(dir, sizeof dir, "/tmp/ring-trace-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

int ring_test_trace_cleanup(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#define F(e, c) ((unsigned long long)(e) << 32 | (c))

/* FIELDS as JSON: a fence written E:C, as the reports print it, becomes the
 * number the log holds (E << 32 | C). */
static void expand_fence(const char *fields, char *out, size_t cap)
{
	const char *at = strstr(fields, "\"fence\":");
	unsigned e, c;
	int used;
	if (at && sscanf(at + 8, "%u:%u%n", &e, &c, &used) == 2)
		snprintf(out, cap, "%.*s%llu%s", (int)(at + 8 - fields), fields, F(e, c),
			 at + 8 + used);
	else
		snprintf(out, cap, "%s", fields);
}

/* Writes LINES (one JSON object each, ts given as seconds after 09:00:00)
 * to dir/NAME. Each line: "SEC NODE EVENT FIELDS", FIELDS JSON but for
 * fences (expand_fence). */
static const char *write_log(const char *name, const char *const *lines, size_t n)
{
	static char path[4][128];
	static int k;
	char *p = path[k++ % 4];
	snprintf(p, 128, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (size_t i = 0; i < n; i++) {
		double sec;
		unsigned node;
		char ev[32], text[200] = "", fields[240];
		int got = sscanf(lines[i], "%lf %u %31s %199[^\n]", &sec, &node, ev, text);
		CU_ASSERT_FATAL(got >= 3);
		expand_fence(text, fields, sizeof fields);
		fprintf(f, "{\"ts\":\"2026-11-30T09:00:%02d.%06dZ\",\"node\":%u,\"event\":\"%s\"%s%s}\n",
			(int)sec, (int)((sec - (int)sec) * 1e6 + 0.5), node, ev, got == 4 ? "," : "",
			got == 4 ? fields : "");
	}
	fclose(f);
	return p;
}

/* dir/NAME holding the lines given, for the checker's FILES. */
#define LOG(name, ...)                                       \
	write_log(name, (const char *const[]){__VA_ARGS__},  \
		  sizeof (const char *const[]){__VA_ARGS__} / sizeof(const char *))

static int check(const char *const *files, size_t n, bool allow, struct ring_trace_result *r)
{
	struct ring_trace_opts o = {.allow_overlap = allow, .gap_ms = 1000};
	char err[256];
	FILE *sink = fopen("/dev/null", "w");
	int rc = ring_trace_check(files, n, &o, sink, r, err, sizeof err);
	fclose(sink);
	return rc;
}

static void test_clean_ring_passes(void)
{
	const char *files[] = {
		LOG("c1", "1.0 1 token_recv \"from\":2,\"epoch\":256,\"seq\":1",
		          "1.1 1 cs_enter \"fence\":256:1,\"epoch\":256,\"client\":1",
		          "1.2 1 cs_exit \"fence\":256:1,\"client\":1"),
		LOG("c2", "1.3 2 token_recv \"from\":1,\"epoch\":256,\"seq\":2",
		          "1.4 2 cs_enter \"fence\":256:2,\"epoch\":256,\"client\":1",
		          "1.5 2 cs_exit \"fence\":256:2,\"client\":1"),
	};
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check(files, 2, false, &r), 0);
	CU_ASSERT_EQUAL(r.grants, 2);
	CU_ASSERT_EQUAL(r.members, 2);
	CU_ASSERT_FALSE(r.violation);
}

static void test_fence_granted_twice_is_a_violation(void)
{
	const char *files[] = {
		LOG("d1", "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		          "1.1 1 cs_exit \"fence\":256:1"),
		LOG("d2", "2.0 2 cs_enter \"fence\":256:1,\"epoch\":256",
		          "2.1 2 cs_exit \"fence\":256:1"),
	};
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check(files, 2, true, &r), 1);
	CU_ASSERT_EQUAL(r.dup_fences, 1);
}

static void test_fence_going_back_along_the_path_is_a_violation(void)
{
	const char *files[] = {
		LOG("e1", "1.0 1 token_recv \"epoch\":256,\"seq\":1",
		          "1.1 1 cs_enter \"fence\":256:5,\"epoch\":256",
		          "1.2 1 cs_exit \"fence\":256:5"),
		LOG("e2", "1.3 2 token_recv \"epoch\":256,\"seq\":2",
		          "1.4 2 cs_enter \"fence\":256:4,\"epoch\":256",
		          "1.5 2 cs_exit \"fence\":256:4"),
	};
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check(files, 2, true, &r), 1);
	CU_ASSERT_EQUAL(r.backwards, 1);
}

static void test_grant_under_an_epoch_known_old_is_a_violation(void)
{
	const char *files[] = {
		LOG("s1", "1.0 1 epoch_adopt \"epoch\":512,\"from\":2",
		          "1.1 1 cs_enter \"fence\":256:9,\"epoch\":256",
		          "1.2 1 cs_exit \"fence\":256:9"),
	};
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check(files, 1, true, &r), 1);
	CU_ASSERT_EQUAL(r.stale_grants, 1);
}

static void test_overlap_is_a_violation_unless_allowed(void)
{
	const char *files[] = {
		LOG("o1", "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		          "3.0 1 cs_exit \"fence\":256:1"),
		LOG("o2", "2.0 2 cs_enter \"fence\":513:1,\"epoch\":513",
		          "2.5 2 cs_exit \"fence\":513:1"),
	};
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check(files, 2, false, &r), 1);
	CU_ASSERT_EQUAL(r.overlaps, 1);
	CU_ASSERT_EQUAL(r.worst_overlap_us, 500000);
	CU_ASSERT_EQUAL(check(files, 2, true, &r), 0);
	CU_ASSERT_EQUAL(r.overlaps, 1);
}

static void test_a_killed_holder_holds_until_the_fault(void)
{
	/* n1 logs nothing after its grant: without the fault it would seem
	 * to end at once; the kill at 5.0 says it held until then. */
	const char *files[] = {
		LOG("k1", "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		          "1.0 1 token_pass \"to\":2,\"epoch\":256,\"seq\":3"),
		LOG("k2", "4.0 2 cs_enter \"fence\":513:1,\"epoch\":513",
		          "4.1 2 cs_exit \"fence\":513:1"),
		LOG("kf", "5.0 0 fault \"what\":\"kill 1\""),
	};
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check(files, 3, false, &r), 1);
	CU_ASSERT_EQUAL(r.overlaps, 1);
	CU_ASSERT_EQUAL(r.incidents, 1);
}

static void test_recovery_after_a_fault_is_measured(void)
{
	const char *files[] = {
		LOG("r1", "1.75 1 cs_enter \"fence\":513:1,\"epoch\":513",
		          "1.8 1 cs_exit \"fence\":513:1"),
		LOG("rf", "1.0 0 fault \"what\":\"kill 3\""),
	};
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check(files, 2, false, &r), 0);
	CU_ASSERT_EQUAL(r.worst_recovery_us, 750000);
}

/* The report of FILES to dir/NAME, read back into BUF. */
static int check_text(const char *const *files, size_t n, struct ring_trace_result *r,
		      char *buf, size_t len)
{
	struct ring_trace_opts o = {.allow_overlap = true, .gap_ms = 1000};
	char err[256], path[128];
	snprintf(path, sizeof path, "%s/report.txt", dir);
	FILE *out = fopen(path, "w+");
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	int rc = ring_trace_check(files, n, &o, out, r, err, sizeof err);
	rewind(out);
	size_t got = fread(buf, 1, len - 1, out);
	buf[got] = '\0';
	fclose(out);
	return rc;
}

static void test_a_log_that_ends_early_is_a_crash_timed_from_the_last_heartbeat_heard(void)
{
	/* n1 is granted at 1.0 and says nothing more: the token died with it.
	 * n2 suspects the loss after 500 ms of silence (it heard the token
	 * last at 1.1), regenerates and is granted at 1.8. n2 and n3 end
	 * without node_stop too, but nothing says they died: still running
	 * when the logs were read. The crash came after the last heartbeat
	 * n2 heard, 1.1, and before the next was due: n1's node_start tells
	 * heartbeat_ms 100, so 1.15. */
	const char *files[] = {
		LOG("x1", "0.5 1 node_start \"epoch\":0,\"heartbeat_ms\":100",
		          "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256"),
		LOG("x2", "0.5 2 node_start \"epoch\":0",
		          "0.6 2 loss_suspect \"silent_ms\":0,\"epoch\":0",
		          "1.6 2 loss_suspect \"silent_ms\":500,\"epoch\":256",
		          "1.7 2 token_regen \"epoch\":513,\"alive\":2",
		          "1.8 2 cs_enter \"fence\":513:1,\"epoch\":513"),
		LOG("x3", "0.5 3 node_start \"epoch\":0",
		          "0.9 3 epoch_adopt \"epoch\":256,\"from\":2"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 3, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_EQUAL(r.faults_inferred, 1);
	CU_ASSERT_EQUAL(r.faults_listed, 0);
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 650000);
	CU_ASSERT_EQUAL(r.incidents, 0); /* faults.log's count, unchanged */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "inferred fault at 0.650 s: crash n1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "next grant 0.650 s later (n2 fence 513:1)"));
	/* Its critical region lasted until then, not 0 s: no stretch
	 * without a token from its grant to the silence. */
	CU_ASSERT_EQUAL(r.gaps, 0);

	/* Without heartbeat_ms (an older ringd), the last heartbeat heard;
	 * with a silence that began before the holder's last word (it was
	 * granted since), that word. */
	const char *older[] = {
		LOG("y1", "0.5 1 node_start \"epoch\":0",
		          "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256"),
		LOG("y2", "0.5 2 node_start \"epoch\":0",
		          "1.6 2 loss_suspect \"silent_ms\":500,\"epoch\":256",
		          "1.8 2 cs_enter \"fence\":513:1,\"epoch\":513"),
	};
	CU_ASSERT_EQUAL(check_text(older, 2, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 700000);
	const char *early[] = {
		LOG("z1", "0.5 1 node_start \"epoch\":0,\"heartbeat_ms\":100",
		          "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256"),
		LOG("z2", "0.5 2 node_start \"epoch\":0",
		          "0.6 2 token_regen \"epoch\":256,\"alive\":2",
		          "1.6 2 loss_suspect \"silent_ms\":900,\"epoch\":256",
		          "1.8 2 cs_enter \"fence\":513:1,\"epoch\":513"),
	};
	CU_ASSERT_EQUAL(check_text(early, 2, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 800000);
}

/* A parked token heartbeats unlogged: the stretch from its park to the
 * next event is no gap; a graceful restart (node_stop, node_start, its
 * rejoin: a grant follows it, so it would be a fault of its own) is no
 * fault; the kill of the parked holder is one, dated by the
 * silence, and the outage after it is the one gap. */
static void test_a_parked_token_is_alive_and_a_graceful_restart_no_fault(void)
{
	const char *files[] = {
		LOG("p1", "0.5 1 node_start \"epoch\":0,\"heartbeat_ms\":100",
		          "0.7 1 token_park \"epoch\":256,\"seq\":2,\"idle\":2",
		          "3.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		          "4.0 1 cs_exit \"fence\":256:1",
		          "4.0 1 token_park \"epoch\":256,\"seq\":9,\"idle\":2",
		          "9.0 1 member_rejoin \"id\":3,\"epoch\":512",
		          "10.0 1 cs_enter \"fence\":512:1,\"epoch\":512",
		          "10.5 1 cs_exit \"fence\":512:1",
		          "10.5 1 token_park \"epoch\":512,\"seq\":3,\"idle\":2"),
		LOG("p2", "0.5 2 node_start \"epoch\":0",
		          "0.6 2 token_regen \"epoch\":256,\"alive\":3",
		          "21.5 2 loss_suspect \"silent_ms\":1000,\"epoch\":512",
		          "21.6 2 token_regen \"epoch\":769,\"alive\":2",
		          "21.7 2 token_park \"epoch\":769,\"seq\":2,\"idle\":1",
		          "21.7 2 cs_enter \"fence\":769:1,\"epoch\":769",
		          "21.8 2 cs_exit \"fence\":769:1"),
		LOG("p3", "0.5 3 node_start \"epoch\":0",
		          "8.0 3 leave_done \"epoch\":256",
		          "8.0 3 node_stop \"reason\":\"leave\"",
		          "8.5 3 node_start \"epoch\":256",
		          "21.5 3 loss_suspect \"silent_ms\":1001,\"epoch\":512"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 3, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "inferred fault at 20.050 s: crash n1"));
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 1150000);
	CU_ASSERT_EQUAL(r.gaps, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "no token seen for 1.100 s from 20.000 s"));
}

/* With -v, the pass that gave n1 the token can be logged a moment after
 * n1's token_recv: it is not the token elsewhere, and n1, killed holding
 * it, crashed with it. */
static void test_a_pass_logged_after_its_recv_is_not_the_token_elsewhere(void)
{
	const char *files[] = {
		LOG("v1", "0.5 1 node_start \"epoch\":0,\"heartbeat_ms\":100",
		          "1.0 1 token_recv \"from\":2,\"epoch\":256,\"seq\":3"),
		LOG("v2", "0.5 2 node_start \"epoch\":0",
		          "0.6 2 token_regen \"epoch\":256,\"alive\":2",
		          "1.00002 2 token_pass \"to\":1,\"epoch\":256,\"seq\":3",
		          "2.5 2 loss_suspect \"silent_ms\":1000,\"epoch\":256",
		          "2.6 2 token_regen \"epoch\":513,\"alive\":1",
		          "2.7 2 cs_enter \"fence\":513:1,\"epoch\":513"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 2, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "inferred fault at 1.050 s: crash n1"));
	CU_ASSERT_EQUAL(r.gaps, 1); /* 1.5 .. 2.6: the outage */
}

/* With -v, a parked token's lap shows: n2 passes, and n3's pass to n1
 * is logged after n1's pass and n2's arrival (CI, 2026-12-04: each pass
 * is logged after its send). That older hop is not the token elsewhere:
 * the token sat at n2 until its next lap, 1.001 s later, no gap. */
static void test_an_older_hop_logged_late_does_not_end_a_park(void)
{
	const char *files[] = {
		LOG("l1", "0.5 1 node_start \"epoch\":0,\"heartbeat_ms\":100",
		          "1.000050 1 token_recv \"from\":3,\"epoch\":256,\"seq\":2",
		          "1.000060 1 token_pass \"to\":2,\"epoch\":256,\"seq\":3",
		          "2.001050 1 token_recv \"from\":3,\"epoch\":256,\"seq\":5",
		          "2.001060 1 token_pass \"to\":2,\"epoch\":256,\"seq\":6"),
		LOG("l2", "0.5 2 node_start \"epoch\":0",
		          "0.6 2 token_park \"epoch\":256,\"seq\":0,\"idle\":1",
		          "1.000000 2 token_pass \"to\":3,\"epoch\":256,\"seq\":1",
		          "1.000070 2 token_recv \"from\":1,\"epoch\":256,\"seq\":3",
		          "2.001000 2 token_pass \"to\":3,\"epoch\":256,\"seq\":4",
		          "2.001070 2 token_recv \"from\":1,\"epoch\":256,\"seq\":6"),
		LOG("l3", "0.5 3 node_start \"epoch\":0",
		          "1.000030 3 token_recv \"from\":2,\"epoch\":256,\"seq\":1",
		          "1.000090 3 token_pass \"to\":1,\"epoch\":256,\"seq\":2",
		          "2.001030 3 token_recv \"from\":2,\"epoch\":256,\"seq\":4",
		          "2.001090 3 token_pass \"to\":1,\"epoch\":256,\"seq\":5",
		          "2.5 3 node_stop \"reason\":\"leave\""),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 3, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.gaps, 0);
	CU_ASSERT_PTR_NULL(strstr(out, "no token seen for"));
}

/* A summons unparks the token at a holder whose client is in the region;
 * the token waits there for the client: killed then, it died with the
 * token, a crash, not a loss of a token that had moved on. */
static void test_a_holder_unparked_with_its_client_inside_still_holds(void)
{
	const char *files[] = {
		LOG("u1", "0.5 1 node_start \"epoch\":0,\"heartbeat_ms\":100",
		          "0.7 1 token_park \"epoch\":256,\"seq\":2,\"idle\":2",
		          "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		          "1.2 1 token_unpark \"by\":2,\"epoch\":256,\"seq\":2"),
		LOG("u2", "0.5 2 node_start \"epoch\":0",
		          "0.6 2 token_regen \"epoch\":256,\"alive\":2",
		          "1.2 2 token_summon \"to\":1,\"epoch\":256,\"seq\":2",
		          "3.0 2 loss_suspect \"silent_ms\":1000,\"epoch\":256",
		          "3.1 2 token_regen \"epoch\":513,\"alive\":1",
		          "3.2 2 cs_enter \"fence\":513:1,\"epoch\":513"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 2, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "inferred fault at 1.550 s: crash n1"));
	CU_ASSERT_EQUAL(r.gaps, 1); /* 2.0 .. 3.1 */
}

static void test_one_file_shared_by_several_members_is_read_per_member(void)
{
	/* Two members' logs in one file (one journal): n2 is granted while n1
	 * still holds (an overlap), then n2 dies; n1 skips it and goes on.
	 * Each member is read on its own: the overlap is seen, n2's crash is
	 * the one fault, and n1, whose lines alternate with n2's, did not
	 * crash. */
	const char *files[] = {
		LOG("shared", "0.5 1 node_start \"epoch\":0",
		              "0.5 2 node_start \"epoch\":0",
		              "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		              "1.2 2 cs_enter \"fence\":256:2,\"epoch\":256",
		              "1.5 1 cs_exit \"fence\":256:1",
		              "1.6 2 cs_exit \"fence\":256:2",
		              "3.0 1 successor_skip \"dead\":2,\"epoch\":256",
		              "3.1 1 cs_enter \"fence\":512:1,\"epoch\":512",
		              "3.2 1 cs_exit \"fence\":512:1",
		              "4.0 1 node_stop \"reason\":\"signal\""),
	};
	struct ring_trace_result r;
	char out[4096];
	check_text(files, 1, &r, out, sizeof out);
	CU_ASSERT_EQUAL(r.grants, 3);
	CU_ASSERT_EQUAL(r.overlaps, 1);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "crash n2"));
	CU_ASSERT_PTR_NULL(strstr(out, "crash n1"));
}

static void test_a_silence_begins_at_the_last_sign_of_the_token(void)
{
	/* n1 is granted at 1.0 and dies; n2's last heartbeat came at 0.9, so it
	 * reports 700 ms of silence at 1.6. The token was alive at 1.0: one
	 * fault, the crash, with the suspicion as its evidence. */
	const char *files[] = {
		LOG("l1", "0.5 1 node_start \"epoch\":0",
		          "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256"),
		LOG("l2", "0.5 2 node_start \"epoch\":0",
		          "0.8 2 cs_enter \"fence\":255:9,\"epoch\":256",
		          "1.6 2 loss_suspect \"silent_ms\":700,\"epoch\":256",
		          "1.8 2 cs_enter \"fence\":513:1,\"epoch\":513"),
	};
	struct ring_trace_result r;
	char out[4096];
	check_text(files, 2, &r, out, sizeof out);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "crash n1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "loss_suspect n2 (silent 700 ms)"));
}

static void test_a_fresh_rings_start_is_not_a_fault(void)
{
	/* Three members start one after another. n2 mints the first token at
	 * 0.4 and readmits n1 (its first start); n3, started at 0.3, suspects
	 * a loss of a silence since 0.3, before any token existed. Then n1 is
	 * readmitted again in its second life, after a crash: that one is a
	 * fault. */
	const char *files[] = {
		LOG("s1", "0.0 1 node_start \"epoch\":0",
		          "0.1 1 loss_suspect \"silent_ms\":0,\"epoch\":0",
		          "2.0 1 node_start \"epoch\":256"),
		LOG("s2", "0.2 2 node_start \"epoch\":0",
		          "0.4 2 token_regen \"epoch\":256,\"alive\":2",
		          "0.45 2 member_rejoin \"id\":1,\"epoch\":256",
		          "0.5 2 cs_enter \"fence\":256:1,\"epoch\":256"),
		LOG("s3", "0.3 3 node_start \"epoch\":0",
		          "0.9 3 loss_suspect \"silent_ms\":600,\"epoch\":0",
		          "2.2 3 member_rejoin \"id\":1,\"epoch\":512"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 3, &r, out, sizeof out), 0);
	CU_ASSERT_PTR_NULL(strstr(out, "token loss"));
	CU_ASSERT_PTR_NULL(strstr(out, "at 0.450 s: rejoin"));
	/* n1's second start: it crashed (a start after no stop) at its last
	 * word, 0.1 s, which is the one fault. */
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "crash n1"));
}

static void test_a_pause_is_a_fault_from_when_the_stall_began(void)
{
	/* n1 woke at 3.0 from a stall of 1500 ms: it began at 1.5; n2 was
	 * granted at 2.2. */
	const char *files[] = {
		LOG("p1", "0.5 1 node_start \"epoch\":0",
		          "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		          "3.0 1 pause_detected \"ms\":1500"),
		LOG("p2", "0.5 2 node_start \"epoch\":0",
		          "2.2 2 cs_enter \"fence\":513:1,\"epoch\":513"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 2, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_EQUAL(r.faults_inferred, 1);
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 700000);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "pause n1"));
}

static void test_a_skip_is_a_fault_from_its_first_retransmit(void)
{
	/* n1 passes to n2 from 1.2 on, gets no ack, skips it at 1.26; n3 is
	 * granted at 1.5. (n2's own log is not given.) */
	const char *files[] = {
		LOG("q1", "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256",
		          "1.1 1 cs_exit \"fence\":256:1",
		          "1.2 1 retransmit \"to\":2,\"epoch\":256,\"seq\":3",
		          "1.22 1 retransmit \"to\":2,\"epoch\":256,\"seq\":3",
		          "1.24 1 retransmit \"to\":2,\"epoch\":256,\"seq\":3",
		          "1.26 1 successor_skip \"dead\":2,\"epoch\":257"),
		LOG("q3", "1.5 3 cs_enter \"fence\":257:1,\"epoch\":257"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 2, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_EQUAL(r.faults_inferred, 1);
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 300000);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "skip n2"));
}

static void test_a_fault_in_faults_log_and_in_the_logs_counts_once(void)
{
	/* The lab killed n2 at 1.1; n2's log ends at its grant (1.0), n1
	 * suspects the loss and regenerates: one fault, faults.log's, timed
	 * from the kill. */
	const char *files[] = {
		LOG("m2", "0.5 2 node_start \"epoch\":0",
		          "1.0 2 cs_enter \"fence\":256:1,\"epoch\":256"),
		LOG("m1", "0.5 1 node_start \"epoch\":0",
		          "1.7 1 loss_suspect \"silent_ms\":550,\"epoch\":256",
		          "1.75 1 token_regen \"epoch\":513,\"alive\":1",
		          "1.8 1 cs_enter \"fence\":513:1,\"epoch\":513"),
		LOG("mf", "1.1 0 fault \"what\":\"kill 2\""),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 3, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_EQUAL(r.faults_listed, 1);
	CU_ASSERT_EQUAL(r.faults_inferred, 0);
	CU_ASSERT_EQUAL(r.incidents, 1);
	CU_ASSERT_EQUAL(r.worst_recovery_us, 700000);
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 700000);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "fault at 0.600 s: kill 2"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "the logs show it too: n2's log ends without node_stop"));
}

static void test_a_fault_with_no_grant_after_it_is_unrecovered_not_zero(void)
{
	const char *files[] = {
		LOG("u1", "0.5 1 node_start \"epoch\":0",
		          "1.0 1 cs_enter \"fence\":256:1,\"epoch\":256"),
		LOG("u2", "0.5 2 node_start \"epoch\":0",
		          "2.0 2 loss_suspect \"silent_ms\":600,\"epoch\":256"),
	};
	struct ring_trace_result r;
	char out[4096];
	CU_ASSERT_EQUAL(check_text(files, 2, &r, out, sizeof out), 0);
	CU_ASSERT_EQUAL(r.faults, 1);
	CU_ASSERT_EQUAL(r.faults_unrecovered, 1);
	CU_ASSERT_EQUAL(r.slowest_recovery_us, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "crash n1         no grant after it: unrecovered"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 with no grant after them"));
}

static void test_junk_lines_are_counted_not_fatal(void)
{
	const char *path = write_log("j1", (const char *[]){"1.0 1 node_start \"epoch\":0"}, 1);
	FILE *f = fopen(path, "a");
	fputs("not json\n{\"ts\":\"yesterday\",\"node\":1,\"event\":\"x\"}\n{}\n", f);
	fclose(f);
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check((const char *[]){path}, 1, false, &r), 0);
	CU_ASSERT_EQUAL(r.unparsed, 3);
	CU_ASSERT_EQUAL(r.events, 1);
}

static void no_gap(void *arg, uint64_t from, uint64_t d)
{
	(void)from;
	(void)d;
	++*(long *)arg;
}

/* A quiet ring's week: 200,000 parks of one member, 5 s apart, each ended
 * by the next. Every stretch between them is a park's, so no gap; and
 * finding the park that covers each stretch must not cost a scan of all
 * parks (it took 7.5 s for these, quadrupling with each doubling). */
static void test_many_parks_are_checked_in_linear_time(void)
{
	enum { PARKS = 200000 };
	struct ring_trace_gaps *g = ring_trace_gaps_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	uint64_t t = 1000000;
	for (int i = 0; i < PARKS; i++, t += 5000000)
		CU_ASSERT_EQUAL_FATAL(ring_trace_gaps_park(g, 1, t, 0), 0);
	CU_ASSERT_EQUAL(ring_trace_gaps_unpark(g, 1, t), 0);
	long seen = 0;
	uint64_t longest, t0 = ring_mono_us();
	CU_ASSERT_EQUAL(ring_trace_gaps_check(g, NULL, t, NULL, 0, 1000000, &longest, no_gap, &seen),
			0);
	uint64_t took = ring_mono_us() - t0;
	CU_ASSERT_EQUAL(seen, 0);
	CU_ASSERT(took < 2000000);
	if (took >= 2000000)
		fprintf(stderr, "gaps check of %d parks: %llu ms\n", PARKS,
			(unsigned long long)(took / 1000));
	ring_trace_gaps_free(g);
}

/* A hostile log: one member's parks alternate between early times and
 * times a week later (a clock stepping to and fro, or a crafted file), so
 * each early park seemed to last until a late one, over every other
 * early park. A member's parks never overlap: each ends by its next, and
 * its end is found without a walk over all the others (100,000 pairs
 * took 5 s). */
static void test_a_members_parks_out_of_order_are_checked_in_linear_time(void)
{
	enum { PAIRS = 100000 };
	const uint64_t far = 7ull * 86400 * 1000000;
	struct ring_trace_gaps *g = ring_trace_gaps_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	for (uint64_t i = 0; i < PAIRS; i++) {
		CU_ASSERT_EQUAL_FATAL(ring_trace_gaps_park(g, 1, 1000000 + i * 1000, 0), 0);
		CU_ASSERT_EQUAL_FATAL(ring_trace_gaps_park(g, 1, far + i, 0), 0);
	}
	CU_ASSERT_EQUAL(ring_trace_gaps_unpark(g, 1, far + PAIRS), 0);
	long seen = 0;
	uint64_t longest, t0 = ring_mono_us();
	CU_ASSERT(ring_trace_gaps_check(g, NULL, far + PAIRS, NULL, 0, 1000000, &longest, no_gap,
					&seen) >= 0);
	uint64_t took = ring_mono_us() - t0;
	CU_ASSERT(took < 2000000);
	if (took >= 2000000)
		fprintf(stderr, "gaps check of %d pairs of parks: %llu ms\n", PAIRS,
			(unsigned long long)(took / 1000));
	uint64_t end;
	CU_ASSERT_TRUE(ring_trace_gaps_park_end(g, 1, 1000000, &end));
	CU_ASSERT_EQUAL(end, 1000000 + 1000);
	ring_trace_gaps_free(g);
}

/* A "node" that is no member id (beyond 65535, negative, not an integer)
 * makes the line junk: 4294967297 was read as member 1 (granting its
 * fence again), -1 and 1.5 as 0, 65537 shared member 1's park. */
static void test_a_line_whose_node_is_no_member_id_is_junk(void)
{
	char path[128];
	snprintf(path, sizeof path, "%s/nodes", dir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	const char *enter = "\"event\":\"cs_enter\",\"fence\":1099511627777,\"epoch\":256";
	fprintf(f, "{\"ts\":\"2026-11-30T09:00:01.000000Z\",\"node\":1,%s}\n", enter);
	fprintf(f, "{\"ts\":\"2026-11-30T09:00:01.100000Z\",\"node\":1,\"event\":\"cs_exit\","
		   "\"fence\":1099511627777}\n");
	const char *bad[] = {"4294967297", "-1", "1.5", "65537"};
	for (int i = 0; i < 4; i++)
		fprintf(f, "{\"ts\":\"2026-11-30T09:00:02.000000Z\",\"node\":%s,%s}\n", bad[i], enter);
	fclose(f);
	struct ring_trace_result r;
	CU_ASSERT_EQUAL(check((const char *[]){path}, 1, false, &r), 0);
	CU_ASSERT_EQUAL(r.unparsed, 4);
	CU_ASSERT_EQUAL(r.grants, 1);
	CU_ASSERT_EQUAL(r.members, 1);
	CU_ASSERT_FALSE(r.violation);
}

static void test_missing_file_is_an_error(void)
{
	struct ring_trace_opts o = {.gap_ms = 1000};
	char err[256];
	const char *files[] = {"/nonexistent/ring.log"};
	CU_ASSERT(ring_trace_check(files, 1, &o, stdout, NULL, err, sizeof err) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/ring.log"));
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_trace_tests[] = {
	T_(test_clean_ring_passes),
	T_(test_fence_granted_twice_is_a_violation),
	T_(test_fence_going_back_along_the_path_is_a_violation),
	T_(test_grant_under_an_epoch_known_old_is_a_violation),
	T_(test_overlap_is_a_violation_unless_allowed),
	T_(test_a_killed_holder_holds_until_the_fault),
	T_(test_recovery_after_a_fault_is_measured),
	T_(test_a_log_that_ends_early_is_a_crash_timed_from_the_last_heartbeat_heard),
	T_(test_a_parked_token_is_alive_and_a_graceful_restart_no_fault),
	T_(test_a_pass_logged_after_its_recv_is_not_the_token_elsewhere),
	T_(test_an_older_hop_logged_late_does_not_end_a_park),
	T_(test_a_holder_unparked_with_its_client_inside_still_holds),
	T_(test_one_file_shared_by_several_members_is_read_per_member),
	T_(test_a_silence_begins_at_the_last_sign_of_the_token),
	T_(test_a_fresh_rings_start_is_not_a_fault),
	T_(test_a_pause_is_a_fault_from_when_the_stall_began),
	T_(test_a_skip_is_a_fault_from_its_first_retransmit),
	T_(test_a_fault_in_faults_log_and_in_the_logs_counts_once),
	T_(test_a_fault_with_no_grant_after_it_is_unrecovered_not_zero),
	T_(test_junk_lines_are_counted_not_fatal),
	T_(test_missing_file_is_an_error),
	T_(test_a_line_whose_node_is_no_member_id_is_junk),
	T_(test_many_parks_are_checked_in_linear_time),
	T_(test_a_members_parks_out_of_order_are_checked_in_linear_time),
	CU_TEST_INFO_NULL,
};
#undef T_
