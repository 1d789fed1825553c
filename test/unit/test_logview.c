/* CUnit suite for reading logs back (ring/ctl/logread.c) and the two views on
 * them (ring/ctl/follow.c, ring/ctl/timeline.c): garbage, a half-written last
 * line, an overlong line; scripted events in, SVG marks and lanes out. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/follow.h"
#include "ctl/logread.h"
#include "lib/suites.h"
#include "ctl/timeline.h"

static char dir[64];

int ring_test_logview_init(void)
{
	snprintf(dir, sizeof dir, "/tmp/ring-logview-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

int ring_test_logview_cleanup(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *path_of(const char *name)
{
	static char p[4][128];
	static int k;
	char *s = p[k++ % 4];
	snprintf(s, 128, "%s/%s", dir, name);
	return s;
}

/* Writes TEXT to dir/NAME (MODE "w" or "a"). */
static const char *put(const char *name, const char *mode, const char *text)
{
	const char *p = path_of(name);
	FILE *f = fopen(p, mode);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* One log line at SEC seconds after 09:00:00 (SEC < 60). */
static void line(FILE *f, double sec, unsigned node, const char *ev, const char *fields)
{
	fprintf(f, "{\"ts\":\"2026-11-30T09:00:%02d.%06dZ\",\"node\":%u,\"event\":\"%s\"%s%s}\n",
		(int)sec, (int)((sec - (int)sec) * 1e6 + 0.5), node, ev, *fields ? "," : "", fields);
}

static char *slurp(const char *p)
{
	FILE *f = fopen(p, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	s[fread(s, 1, (size_t)n, f)] = 0;
	fclose(f);
	return s;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* ---- the reader ---- */

static void test_reader_skips_and_counts_garbage(void)
{
	const char *p = put("garbage.log", "w",
			    "{\"ts\":\"2026-11-30T09:00:01.000001Z\",\"node\":1,\"event\":\"cs_enter\",\"fence\":7}\n"
			    "not json\n"
			    "\n"
			    "[1,2,3]\n"
			    "{\"ts\":\"yesterday\",\"node\":1,\"event\":\"x\"}\n"
			    "{\"ts\":\"2026-11-30T09:00:02Z\",\"node\":0,\"event\":\"x\"}\n"
			    "{\"ts\":\"2026-11-30T09:00:02Z\",\"node\":2}\n"
			    "\x01\xff\xfe binary\n"
			    "{\"ts\":\"2026-11-30T09:00:03.5Z\",\"event\":\"note\",\"text\":\"hi\"}\n");
	struct ring_logreader r;
	char err[128];
	CU_ASSERT_EQUAL_FATAL(ring_logreader_open(&r, p, false, err, sizeof err), 0);
	struct ring_logrec rec;
	uint64_t v = 0;
	CU_ASSERT_EQUAL_FATAL(ring_logreader_next(&r, &rec, true), 1);
	CU_ASSERT_STRING_EQUAL(rec.event, "cs_enter");
	CU_ASSERT_EQUAL(rec.node, 1);
	CU_ASSERT(ring_logrec_num(&rec, "fence", &v) && v == 7);
	CU_ASSERT_EQUAL(rec.ts % 1000000, 1);
	ring_logrec_clear(&rec);
	CU_ASSERT_EQUAL_FATAL(ring_logreader_next(&r, &rec, true), 1);
	CU_ASSERT_STRING_EQUAL(rec.event, "note");
	CU_ASSERT_EQUAL(rec.node, 0);
	CU_ASSERT_EQUAL(rec.ts % 1000000, 500000);
	CU_ASSERT_STRING_EQUAL(ring_logrec_str(&rec, "text"), "hi");
	ring_logrec_clear(&rec);
	CU_ASSERT_EQUAL(ring_logreader_next(&r, &rec, true), 0);
	CU_ASSERT_EQUAL(r.garbage, 6);
	CU_ASSERT_EQUAL(r.truncated, 0);
	ring_logreader_close(&r);
}

/* A file being written: its last line waits for its newline; once the file
 * is final, a line that never got one is counted as truncated. */
static void test_reader_waits_for_a_half_written_line(void)
{
	const char *p = put("growing.log", "w",
			    "{\"ts\":\"2026-11-30T09:00:01Z\",\"node\":1,\"event\":\"a\"}\n"
			    "{\"ts\":\"2026-11-30T09:00:02Z\",\"no");
	struct ring_logreader r;
	char err[128];
	struct ring_logrec rec;
	CU_ASSERT_EQUAL_FATAL(ring_logreader_open(&r, p, false, err, sizeof err), 0);
	CU_ASSERT_EQUAL(ring_logreader_next(&r, &rec, false), 1);
	ring_logrec_clear(&rec);
	CU_ASSERT_EQUAL(ring_logreader_next(&r, &rec, false), 0);
	CU_ASSERT_EQUAL(r.garbage + r.truncated, 0);
	put("growing.log", "a", "de\":1,\"event\":\"b\"}\n{\"ts\":\"2026-11-30T09:00:03Z\",\"node\":1,");
	CU_ASSERT_FALSE(ring_logreader_recheck(&r)); /* grew: nothing to reopen */
	CU_ASSERT_EQUAL_FATAL(ring_logreader_next(&r, &rec, false), 1);
	CU_ASSERT_STRING_EQUAL(rec.event, "b");
	ring_logrec_clear(&rec);
	CU_ASSERT_EQUAL(ring_logreader_next(&r, &rec, true), 0);
	CU_ASSERT_EQUAL(r.truncated, 1);
	CU_ASSERT_EQUAL(r.garbage, 0);
	/* Truncated in place and written again: read from the top. */
	put("growing.log", "w", "{\"ts\":\"2026-11-30T09:00:04Z\",\"node\":1,\"event\":\"c\"}\n");
	CU_ASSERT_TRUE(ring_logreader_recheck(&r));
	CU_ASSERT_EQUAL_FATAL(ring_logreader_next(&r, &rec, false), 1);
	CU_ASSERT_STRING_EQUAL(rec.event, "c");
	ring_logrec_clear(&rec);
	ring_logreader_close(&r);
}

static void test_reader_drops_an_overlong_line_whole(void)
{
	const char *p = path_of("long.log");
	FILE *f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"ts\":\"2026-11-30T09:00:01Z\",\"node\":1,\"event\":\"", f);
	for (int i = 0; i < 3 * RING_LOGREAD_LINE_MAX; i++)
		fputc('x', f);
	fputs("\"}\n", f);
	line(f, 2, 1, "after", "");
	fclose(f);
	struct ring_logreader r;
	char err[128];
	struct ring_logrec rec;
	CU_ASSERT_EQUAL_FATAL(ring_logreader_open(&r, p, false, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(ring_logreader_next(&r, &rec, true), 1);
	CU_ASSERT_STRING_EQUAL(rec.event, "after");
	ring_logrec_clear(&rec);
	CU_ASSERT_EQUAL(r.garbage, 1);
	CU_ASSERT(r.cap <= 4 * RING_LOGREAD_LINE_MAX); /* memory stayed bounded */
	ring_logreader_close(&r);
}

static void test_merge_orders_files_by_time(void)
{
	FILE *a = fopen(path_of("m1.log"), "w"), *b = fopen(path_of("m2.log"), "w");
	CU_ASSERT_FATAL(a && b);
	line(a, 1, 1, "e1", "");
	line(b, 2, 2, "e2", "");
	line(a, 3, 1, "e3", "");
	line(b, 4, 2, "e4", "");
	fclose(a);
	fclose(b);
	const char *files[] = {path_of("m1.log"), path_of("m2.log")};
	struct ring_logmerge m;
	char err[128];
	CU_ASSERT_EQUAL_FATAL(ring_logmerge_open(&m, files, 2, false, err, sizeof err), 0);
	struct ring_logrec rec;
	const char *want[] = {"e1", "e2", "e3", "e4"};
	for (int i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL_FATAL(ring_logmerge_next(&m, &rec, true), 1);
		CU_ASSERT_STRING_EQUAL(rec.event, want[i]);
		ring_logrec_clear(&rec);
	}
	CU_ASSERT_EQUAL(ring_logmerge_next(&m, &rec, true), 0);
	ring_logmerge_close(&m);
}

static void test_timestamps_parse_and_print(void)
{
	uint64_t us;
	char buf[40];
	CU_ASSERT_TRUE(ring_log_parse_ts("1970-01-01T00:00:01.000002Z", &us));
	CU_ASSERT_EQUAL(us, 1000002);
	CU_ASSERT_TRUE(ring_log_parse_ts("2026-11-30T09:12:27.609673Z", &us));
	ring_log_format_ts(us, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "2026-11-30T09:12:27.609673Z");
	CU_ASSERT_FALSE(ring_log_parse_ts("2026-11-30T09:12:27.Z", &us));
	CU_ASSERT_FALSE(ring_log_parse_ts("2026-11-30 09:12:27Z", &us));
	CU_ASSERT_FALSE(ring_log_parse_ts("2026-13-30T09:12:27Z", &us));
	CU_ASSERT_FALSE(ring_log_parse_ts("2026-11-30T09:12:27+01:00", &us));
}

/* ---- follow ---- */

static void test_follow_once_draws_a_column_per_member(void)
{
	FILE *f = fopen(path_of("f.log"), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	line(f, 1.0, 1, "node_start", "\"ring\":\"r\",\"host\":\"h\",\"epoch\":0");
	line(f, 1.1, 12, "node_start", "\"ring\":\"r\",\"epoch\":0");
	line(f, 1.2, 12, "token_pass", "\"to\":1");
	line(f, 1.3, 1, "token_pass", "\"to\":12");
	line(f, 1.5, 1, "cs_enter", "\"fence\":4294967298,\"epoch\":1,\"client\":3");
	line(f, 1.6, 1, "cs_exit", "\"fence\":4294967298");
	line(f, 1.6, 1, "token_park", "\"epoch\":1,\"seq\":5,\"idle\":1");
	line(f, 1.65, 12, "token_summon", "\"to\":1,\"epoch\":1,\"seq\":5");
	fputs("{\"ts\":\"2026-11-30T09:00:01.700000Z\",\"event\":\"note\",\"text\":\"kill -9\"}\n", f);
	fclose(f);
	const char *files[] = {path_of("f.log")};
	const char *out = path_of("f.out");
	FILE *o = fopen(out, "w");
	struct ring_follow_opts opts = {.hops = 2, .once = true};
	char err[128];
	size_t skipped = 9;
	CU_ASSERT_EQUAL(ring_follow(files, 1, &opts, o, &skipped, err, sizeof err), 0);
	fclose(o);
	CU_ASSERT_EQUAL(skipped, 0);
	char *s = slurp(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "    time 1 12   event\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "   0.00s 1  .   node_start       ring=r epoch=0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "   0.10s . 12   node_start"));
	/* Every second hop: member 1's, not member 12's. */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "   0.30s 1  .   token_pass       to=12   (1 hop in 2)\n"));
	CU_ASSERT_EQUAL(count(s, "token_pass"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "   0.50s 1  .   cs_enter         fence=1:2\n"));
	CU_ASSERT_PTR_NULL(strstr(s, "cs_exit"));
	/* Where a quiet ring's token rests; a summons only with --all. */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "   0.60s 1  .   token_park       epoch=1\n"));
	CU_ASSERT_PTR_NULL(strstr(s, "token_summon"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "   0.70s  >>> kill -9\n"));
	CU_ASSERT_PTR_NULL(strchr(s, '\033'));
	free(s);
}

/* ---- timeline ---- */

static char *timeline(const char *log, const struct ring_timeline_opts *o,
		      struct ring_timeline_result *res)
{
	const char *files[] = {log};
	const char *svg = path_of("t.svg");
	char err[256];
	int rc = ring_timeline_write(files, 1, o, svg, res, err, sizeof err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	return slurp(svg);
}

/* Two members: grants, a regeneration, member 2 dies (started again with
 * no node_stop between), member 1 stops cleanly; a note with markup. */
static void test_timeline_draws_scripted_events(void)
{
	FILE *f = fopen(path_of("t.log"), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	line(f, 1.0, 1, "auth_off", "\"reason\":\"no secret\"");
	line(f, 1.0, 1, "node_start", "\"epoch\":0");
	line(f, 1.0, 2, "node_start", "\"epoch\":0");
	line(f, 1.1, 1, "token_regen", "\"epoch\":256,\"alive\":2");
	line(f, 1.2, 1, "cs_enter", "\"fence\":4294967297,\"epoch\":1");
	line(f, 1.3, 1, "cs_exit", "\"fence\":4294967297");
	line(f, 1.3, 1, "token_pass", "\"to\":2");
	line(f, 1.4, 2, "token_recv", "\"from\":1");
	line(f, 1.4, 2, "cs_enter", "\"fence\":4294967298,\"epoch\":1");
	fputs("{\"ts\":\"2026-11-30T09:00:01.450000Z\",\"event\":\"note\",\"text\":\"kill <2> & go\"}\n", f);
	line(f, 2.0, 1, "loss_suspect", "\"silent_ms\":500");
	line(f, 2.0, 1, "retransmit", "\"to\":2");
	line(f, 2.1, 1, "successor_skip", "\"dead\":2");
	line(f, 2.2, 2, "auth_off", "\"reason\":\"no secret\"");
	line(f, 2.2, 2, "node_start", "\"epoch\":256");
	line(f, 2.5, 1, "node_stop", "\"reason\":\"leave\"");
	line(f, 2.6, 2, "node_stop", "\"reason\":\"leave\"");
	fclose(f);
	struct ring_timeline_opts o = {.title = "a <test>"};
	struct ring_timeline_result res;
	char *s = timeline(path_of("t.log"), &o, &res);
	CU_ASSERT_EQUAL(res.members, 2);
	CU_ASSERT_EQUAL(res.events, 17);
	CU_ASSERT_FALSE(res.aggregated);
	CU_ASSERT_EQUAL(count(s, "class=\"lane\""), 2);
	CU_ASSERT_EQUAL(count(s, "class=\"cs\""), 2); /* member 2's ends with its crash */
	CU_ASSERT_EQUAL(count(s, "class=\"crash\""), 1);
	/* Dated by member 1's silence: it heard the token until 1.5. */
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "member 2, +0.500000 s: crash"));
	CU_ASSERT_EQUAL(count(s, "class=\"regen\""), 1);
	/* The note's dashed line has its entry in the legend. */
	CU_ASSERT_EQUAL(count(s, "class=\"note\""), 1);
	CU_ASSERT_EQUAL(count(s, "class=\"note k-note\""), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, ">fault (faults.log)</text>"));
	CU_ASSERT_EQUAL(count(s, "class=\"skip\""), 1);
	CU_ASSERT_EQUAL(count(s, "class=\"retransmit\""), 1);
	CU_ASSERT_EQUAL(count(s, "class=\"loss\""), 1);
	CU_ASSERT_EQUAL(count(s, "class=\"join\""), 3);
	CU_ASSERT_EQUAL(count(s, "class=\"leave\""), 2);
	CU_ASSERT_EQUAL(count(s, "class=\"run\""), 3);
	CU_ASSERT_EQUAL(count(s, "class=\"note\""), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "fence 1:1 (4294967297)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "kill &lt;2&gt; &amp; go"));
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "a &lt;test&gt;"));
	CU_ASSERT_PTR_NULL(strstr(s, "<script"));
	free(s);

	/* Zoomed to the second half: the grants before it are not drawn. */
	struct ring_timeline_opts z = {.from = {.set = true, .us = 900000}};
	s = timeline(path_of("t.log"), &z, &res);
	CU_ASSERT_EQUAL(count(s, "class=\"cs\""), 0);
	CU_ASSERT_EQUAL(count(s, "class=\"skip\""), 1);
	free(s);
}

/* An hour's worth of one kind of event does not make the file grow with
 * it: the lane is drawn per pixel column. */
static void test_timeline_aggregates_dense_lanes(void)
{
	FILE *f = fopen(path_of("dense.log"), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	char fence[64];
	for (int i = 0; i < 20000; i++) {
		double t = 1.0 + i * 0.002;
		snprintf(fence, sizeof fence, "\"fence\":%d", i + 1);
		line(f, t, 1 + i % 3, "cs_enter", fence);
		line(f, t + 0.001, 1 + i % 3, "cs_exit", fence);
		line(f, t + 0.001, 1 + i % 3, "retransmit", "\"to\":2");
	}
	fclose(f);
	struct ring_timeline_opts o = {.title = NULL};
	struct ring_timeline_result res;
	char *s = timeline(path_of("dense.log"), &o, &res);
	CU_ASSERT_TRUE(res.aggregated);
	CU_ASSERT_EQUAL(res.members, 3);
	CU_ASSERT(res.bytes < 400000);
	CU_ASSERT(count(s, "class=\"agg-cs\"") > 0);
	CU_ASSERT(count(s, "class=\"agg retransmit\"") > 0);
	CU_ASSERT_EQUAL(count(s, "class=\"cs\""), 0);
	CU_ASSERT_PTR_NULL(strstr(s, "fault (faults.log)")); /* no notes, no entry */
	free(s);
}

static void test_timeline_bounds_parse(void)
{
	struct ring_timeline_bound b;
	CU_ASSERT_EQUAL(ring_timeline_parse_bound("12.5", &b), 0);
	CU_ASSERT(b.set && !b.absolute && b.us == 12500000);
	CU_ASSERT_EQUAL(ring_timeline_parse_bound("1970-01-01T00:00:02.5Z", &b), 0);
	CU_ASSERT(b.set && b.absolute && b.us == 2500000);
	CU_ASSERT_EQUAL(ring_timeline_parse_bound("-1", &b), -1);
	CU_ASSERT_EQUAL(ring_timeline_parse_bound("soon", &b), -1);
	CU_ASSERT_EQUAL(ring_timeline_parse_bound("nan", &b), -1);
}

CU_TestInfo ring_test_logview_tests[] = {
	{"reader skips and counts garbage", test_reader_skips_and_counts_garbage},
	{"reader waits for a half-written line", test_reader_waits_for_a_half_written_line},
	{"reader drops an overlong line whole", test_reader_drops_an_overlong_line_whole},
	{"merge orders files by time", test_merge_orders_files_by_time},
	{"timestamps parse and print", test_timestamps_parse_and_print},
	{"follow --once draws a column per member", test_follow_once_draws_a_column_per_member},
	{"timeline draws scripted events", test_timeline_draws_scripted_events},
	{"timeline aggregates dense lanes", test_timeline_aggregates_dense_lanes},
	{"timeline bounds parse", test_timeline_bounds_parse},
	CU_TEST_INFO_NULL,
};
