/* CUnit suite for the log (ring/common/log.c): the exact bytes of text and JSON
 * lines, the timestamp formatted once a second, and the buffer: lines wait
 * for a flush, go out whole when it fills, and a line longer than the
 * buffer is still written whole and in order. */
#include <CUnit/CUnit.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "lib/suites.h"

/* The wall clock the log reads, set by each test. */
static struct timespec fake_now;

static void fake_clock(struct timespec *ts)
{
	*ts = fake_now;
}

static void set_clock(time_t sec, long usec)
{
	fake_now = (struct timespec){.tv_sec = sec, .tv_nsec = usec * 1000 + 999};
}

#define T_2024_05_01_120000 ((time_t)1714564800)
#define T_2024_12_31_235959 ((time_t)1735689599)

struct fixture {
	struct ring_log log;
	char path[64];
};

/* A log of member 7 on a scratch file, on the fake clock. */
static void open_log(struct fixture *x, enum ring_log_format format, bool verbose)
{
	strcpy(x->path, "/tmp/ring-test-log-XXXXXX");
	int fd = mkstemp(x->path);
	CU_ASSERT_FATAL(fd >= 0);
	close(fd);
	char err[128];
	CU_ASSERT_FATAL(ring_log_open(&x->log, x->path, format, verbose, 7, err, sizeof err) == 0);
	x->log.clock = fake_clock;
	set_clock(T_2024_05_01_120000, 42);
}

static void close_log(struct fixture *x)
{
	ring_log_close(&x->log);
	unlink(x->path);
}

/* The file as it is now on disk (not what is still buffered); free it. */
static char *on_disk(const struct fixture *x, size_t *len)
{
	FILE *f = fopen(x->path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	if (len)
		*len = (size_t)n;
	return s;
}

/* Flushes X's log and checks that its file holds exactly WANT. */
static void expect_flushed(struct fixture *x, const char *want)
{
	ring_log_flush(&x->log);
	char *s = on_disk(x, NULL);
	CU_ASSERT_STRING_EQUAL(s, want);
	free(s);
}

/* Line number SEQ: "seq" counts lines, so order and gaps show. */
static void emit_seq(struct fixture *x, uint64_t seq)
{
	struct ring_log_field f[] = {RING_LF_N("seq", seq), RING_LF_S("pad", "0123456789abcdef")};
	ring_log_emit(&x->log, "token_recv", false, f, 2);
}

/* Every line of S whole and numbered 0, 1, 2...; returns how many, or -1. */
static long whole_numbered_lines(const char *s, size_t len)
{
	if (len > 0 && s[len - 1] != '\n')
		return -1; /* half a line on disk */
	long k = 0;
	for (const char *p = s; *p; k++) {
		const char *nl = strchr(p, '\n');
		char want[64];
		snprintf(want, sizeof want, " seq=%ld pad=0123456789abcdef\n", k);
		size_t w = strlen(want);
		if (!nl || (size_t)(nl + 1 - p) < w || memcmp(nl + 1 - w, want, w) != 0)
			return -1;
		p = nl + 1;
	}
	return k;
}

/* Tools parse these lines (test/integration, test/lab, ring/ctl/trace.c):
 * these are the bytes the log wrote before it was buffered. */
static void test_text_line_is_byte_for_byte_the_documented_format(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, false);
	struct ring_log_field f[] = {
		{.key = "fence", .kind = RING_LF_FENCE, .num = (3ull << 32) | 9},
		RING_LF_N("epoch", 3),
		RING_LF_S("addr", "127.0.0.1:9"),
		RING_LF_S("none", NULL),
	};
	ring_log_emit(&x.log, "cs_enter", false, f, 4);
	ring_log_emit(&x.log, "an_event_longer_than_17", false, NULL, 0);
	expect_flushed(&x, "2024-05-01T12:00:00.000042Z  node 7     cs_enter         "
			   " fence=3:9 epoch=3 addr=127.0.0.1:9 none=\n"
			   "2024-05-01T12:00:00.000042Z  node 7     an_event_longer_than_17\n");
	close_log(&x);
}

static void test_json_line_is_byte_for_byte_the_documented_format(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_JSON, false);
	struct ring_log_field f[] = {
		RING_LF_N("from", 18446744073709551615ull),
		RING_LF_S("reason", "a \"quoted\" \\ back\nslash\x01"),
		{.key = "fence", .kind = RING_LF_FENCE, .num = (3ull << 32) | 9},
		RING_LF_S("none", NULL),
	};
	ring_log_emit(&x.log, "auth_fail", false, f, 4);
	expect_flushed(&x, "{\"ts\":\"2024-05-01T12:00:00.000042Z\",\"node\":7,"
			   "\"event\":\"auth_fail\",\"from\":18446744073709551615,"
			   "\"reason\":\"a \\\"quoted\\\" \\\\ back\\u000aslash\\u0001\","
			   "\"fence\":12884901897,\"none\":\"\"}\n");
	close_log(&x);
}

/* The seconds are formatted once and kept; a new second (in the same
 * minute, or a new day and year) must be formatted again. */
static void test_timestamp_follows_the_clock_across_seconds_and_days(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, false);
	set_clock(T_2024_12_31_235959, 999999);
	ring_log_emit(&x.log, "a", false, NULL, 0);
	set_clock(T_2024_12_31_235959 + 1, 1);
	ring_log_emit(&x.log, "b", false, NULL, 0);
	set_clock(T_2024_12_31_235959 + 1, 500000);
	ring_log_emit(&x.log, "c", false, NULL, 0);
	set_clock(T_2024_12_31_235959 + 4, 0);
	ring_log_emit(&x.log, "d", false, NULL, 0);
	set_clock(T_2024_12_31_235959 + 62, 0);
	ring_log_emit(&x.log, "e", false, NULL, 0);
	expect_flushed(&x, "2024-12-31T23:59:59.999999Z  node 7     a                \n"
			   "2025-01-01T00:00:00.000001Z  node 7     b                \n"
			   "2025-01-01T00:00:00.500000Z  node 7     c                \n"
			   "2025-01-01T00:00:03.000000Z  node 7     d                \n"
			   "2025-01-01T00:01:01.000000Z  node 7     e                \n");
	close_log(&x);
}

/* One write per loop iteration: until the daemon flushes, lines stay in
 * memory; then all of them go out, in order. */
static void test_lines_wait_in_memory_until_flushed(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, false);
	for (uint64_t k = 0; k < 3; k++)
		emit_seq(&x, k);
	size_t len;
	char *s = on_disk(&x, &len);
	CU_ASSERT_EQUAL(len, 0);
	free(s);
	ring_log_flush(&x.log);
	s = on_disk(&x, &len);
	CU_ASSERT_EQUAL(whole_numbered_lines(s, len), 3);
	free(s);
	close_log(&x);
}

/* A full buffer is written before the line that did not fit, so the file
 * never holds half a line, and nothing is lost or reordered. */
static void test_a_full_buffer_writes_only_whole_lines(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, false);
	uint64_t k = 0;
	size_t len = 0;
	char *s = NULL;
	for (; k < 10000 && len == 0; k++) {
		emit_seq(&x, k);
		free(s);
		s = on_disk(&x, &len);
	}
	CU_ASSERT(len > RING_LOG_BUF / 2); /* it filled before it was written */
	CU_ASSERT(len <= RING_LOG_BUF);
	long whole = whole_numbered_lines(s, len);
	CU_ASSERT_EQUAL(whole, (long)(k - 1)); /* the line that did not fit waits */
	free(s);
	for (uint64_t m = k; m < 3 * k; m++)
		emit_seq(&x, m);
	ring_log_flush(&x.log);
	s = on_disk(&x, &len);
	CU_ASSERT_EQUAL(whole_numbered_lines(s, len), (long)(3 * k));
	free(s);
	close_log(&x);
}

/* A line longer than the whole buffer (a long path in an error, say) is
 * written whole, after the lines before it and before those after it. */
static void test_a_line_longer_than_the_buffer_is_written_whole_in_order(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, false);
	size_t big = 3 * RING_LOG_BUF;
	char *v = malloc(big + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	memset(v, 'x', big);
	v[big] = 0;
	ring_log_emit(&x.log, "before", false, NULL, 0);
	struct ring_log_field f = RING_LF_S("error", v);
	ring_log_emit(&x.log, "big", false, &f, 1);
	ring_log_emit(&x.log, "after", false, NULL, 0);
	ring_log_flush(&x.log);
	size_t len;
	char *s = on_disk(&x, &len);
	const char *head = "2024-05-01T12:00:00.000042Z  node 7     ";
	char *l1 = s, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
	CU_ASSERT_EQUAL((size_t)(l2 - l1), strlen(head) + 17 + 1);
	CU_ASSERT_NSTRING_EQUAL(l1 + strlen(head), "before ", 7);
	CU_ASSERT_EQUAL((size_t)(l3 - l2), strlen(head) + 17 + strlen(" error=") + big + 1);
	CU_ASSERT_NSTRING_EQUAL(l2 + strlen(head), "big               error=xxx", 27);
	CU_ASSERT_NSTRING_EQUAL(l3 + strlen(head), "after ", 6);
	CU_ASSERT_EQUAL(len, (size_t)(l3 - s) + strlen(head) + 17 + 1);
	free(s);
	free(v);
	close_log(&x);
}

static int pending_calls;

static void count_pending(void *arg)
{
	(void)arg;
	pending_calls++;
}

/* The daemon flushes when told that lines wait; a verbose line that is
 * dropped leaves nothing to flush and tells nobody. */
static void test_the_loop_is_told_when_lines_wait(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, false);
	pending_calls = 0;
	ring_log_on_pending(&x.log, count_pending, NULL);
	ring_log_emit(&x.log, "token_recv", true, NULL, 0);
	CU_ASSERT_EQUAL(pending_calls, 0);
	ring_log_emit(&x.log, "cs_enter", false, NULL, 0);
	CU_ASSERT(pending_calls >= 1);
	ring_log_on_pending(&x.log, NULL, NULL);
	close_log(&x);
}

/* Leaving, or failing, ringd closes its log: nothing buffered is lost, and
 * a second close does nothing. */
static void test_close_writes_what_is_buffered(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, false);
	emit_seq(&x, 0);
	emit_seq(&x, 1);
	ring_log_close(&x.log);
	size_t len;
	char *s = on_disk(&x, &len);
	CU_ASSERT_EQUAL(whole_numbered_lines(s, len), 2);
	free(s);
	emit_seq(&x, 2); /* on a closed log: nothing */
	close_log(&x);
}

/* JOURNAL_STREAM naming the scratch file's device and inode (plus DINO),
 * as systemd sets it for the stream it connects to stderr. */
static void fake_journal(const struct fixture *x, long dino)
{
	struct stat st;
	CU_ASSERT_FATAL(stat(x->path, &st) == 0);
	char env[64];
	snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + (unsigned long long)dino);
	setenv("JOURNAL_STREAM", env, 1);
}

/* Reopens X's log with JOURNAL_STREAM pointing at its file, or DINO off. */
static void reopen_as_journal(struct fixture *x, enum ring_log_format format, long dino)
{
	fake_journal(x, dino);
	ring_log_close(&x->log);
	char err[128];
	CU_ASSERT_FATAL(ring_log_open(&x->log, x->path, format, true, 7, err, sizeof err) == 0);
	x->log.clock = fake_clock;
	unsetenv("JOURNAL_STREAM");
}

/* sd-daemon(3) prefixes: journalctl -p warning must find what needs a
 * look, and -p err why a member stopped. */
static void test_text_lines_to_the_journal_carry_syslog_priorities(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_TEXT, true);
	reopen_as_journal(&x, RING_LOG_TEXT, 0);
	CU_ASSERT(x.log.journal);
	struct ring_log_field err = RING_LF_S("reason", "error"), leave = RING_LF_S("reason", "leave");
	const struct {
		const char *event;
		const struct ring_log_field *f;
		const char *prefix;
	} rows[] = {
		{"epoch_exhausted", NULL, "<3>"}, {"node_stop", &err, "<3>"},
		{"node_stop", &leave, "<6>"},     {"loss_suspect", NULL, "<4>"},
		{"successor_skip", NULL, "<4>"},  {"token_stale_drop", NULL, "<4>"},
		{"bad_packet", NULL, "<4>"},      {"auth_fail", NULL, "<4>"},
		{"config_mismatch", NULL, "<4>"}, {"pause_detected", NULL, "<4>"},
		{"lease_expired", NULL, "<4>"},   {"no_quorum", NULL, "<4>"},
		{"token_regen", NULL, "<5>"},     {"cs_enter", NULL, "<6>"},
		{"token_recv", NULL, "<7>"},
	};
	size_t n = sizeof rows / sizeof rows[0];
	for (size_t i = 0; i < n; i++)
		ring_log_emit(&x.log, rows[i].event, false, rows[i].f, rows[i].f ? 1 : 0);
	ring_log_flush(&x.log);
	char *s = on_disk(&x, NULL);
	const char *line = s;
	for (size_t i = 0; i < n && line && *line; i++) {
		char want[96];
		snprintf(want, sizeof want, "%s2024-05-01T12:00:00.000042Z  node 7     %s", rows[i].prefix,
			 rows[i].event);
		if (strncmp(line, want, strlen(want)) != 0) {
			fprintf(stderr, "\n  want '%s', got '%.*s'\n", want,
				(int)strcspn(line, "\n"), line);
			CU_FAIL("priority prefix");
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	free(s);
	close_log(&x);
}

/* JSON stays JSON; a stream that is not the journal (another inode, no
 * variable, junk in it) gets no prefix. */
static void test_json_lines_and_other_streams_get_no_prefix(void)
{
	struct fixture x;
	open_log(&x, RING_LOG_JSON, false);
	reopen_as_journal(&x, RING_LOG_JSON, 0);
	CU_ASSERT_FALSE(x.log.journal);
	reopen_as_journal(&x, RING_LOG_TEXT, 1);
	CU_ASSERT_FALSE(x.log.journal);
	ring_log_emit(&x.log, "loss_suspect", false, NULL, 0);
	ring_log_flush(&x.log);
	char *s = on_disk(&x, NULL);
	CU_ASSERT_EQUAL(s[0], '2');
	free(s);

	int fd = open(x.path, O_WRONLY);
	CU_ASSERT_FATAL(fd >= 0);
	unsetenv("JOURNAL_STREAM");
	CU_ASSERT_FALSE(ring_log_is_journal(fd));
	fake_journal(&x, 0);
	CU_ASSERT_TRUE(ring_log_is_journal(fd));
	/* A descriptor dup'ed onto it is the same stream. */
	int fd2 = dup(fd);
	CU_ASSERT_TRUE(ring_log_is_journal(fd2));
	close(fd2);
	const char *junk[] = {"", "1", "1:", ":1", "1:2x", "x:y", "1:2:3", "-1:-1"};
	for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
		setenv("JOURNAL_STREAM", junk[i], 1);
		CU_ASSERT_FALSE(ring_log_is_journal(fd));
	}
	unsetenv("JOURNAL_STREAM");
	close(fd);
	close_log(&x);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_log_tests[] = {
	T_(test_text_line_is_byte_for_byte_the_documented_format),
	T_(test_json_line_is_byte_for_byte_the_documented_format),
	T_(test_timestamp_follows_the_clock_across_seconds_and_days),
	T_(test_lines_wait_in_memory_until_flushed),
	T_(test_a_full_buffer_writes_only_whole_lines),
	T_(test_a_line_longer_than_the_buffer_is_written_whole_in_order),
	T_(test_the_loop_is_told_when_lines_wait),
	T_(test_close_writes_what_is_buffered),
	T_(test_text_lines_to_the_journal_carry_syslog_priorities),
	T_(test_json_lines_and_other_streams_get_no_prefix),
	CU_TEST_INFO_NULL,
};
