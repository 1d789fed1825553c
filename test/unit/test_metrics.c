/* CUnit suite for the metrics (ring/daemon/metrics.c): the exposition is Prometheus
 * text that a scraper accepts (every sample line parses, HELP and TYPE come
 * first, names and units by the conventions), and the histograms are
 * cumulative with +Inf equal to the count. */
#include <CUnit/CUnit.h>

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/metrics.h"
#include "lib/suites.h"

struct sample {
	char name[96];
	char labels[160]; /* between the braces, "" when none */
	char value[48];
};

struct family {
	char name[96];
	char type[16];
	bool help;
};

struct parsed {
	struct sample s[512];
	size_t ns;
	struct family f[128];
	size_t nf;
	int errors;
};

static void bad(struct parsed *p, const char *why, const char *line)
{
	fprintf(stderr, "\n  exposition: %s: '%s'\n", why, line);
	p->errors++;
}

static struct family *family_of(struct parsed *p, const char *name)
{
	for (size_t i = 0; i < p->nf; i++)
		if (strcmp(p->f[i].name, name) == 0)
			return &p->f[i];
	return NULL;
}

/* The family a sample belongs to: a histogram's _bucket, _sum and _count
 * samples are its own. */
static struct family *owner(struct parsed *p, const char *name)
{
	static const char *suffix[] = {"_bucket", "_sum", "_count"};
	struct family *f = family_of(p, name);
	if (f)
		return f;
	for (size_t k = 0; k < 3; k++) {
		size_t n = strlen(name), m = strlen(suffix[k]);
		if (n > m && strcmp(name + n - m, suffix[k]) == 0) {
			char base[96];
			snprintf(base, sizeof base, "%.*s", (int)(n - m), name);
			f = family_of(p, base);
			if (f && strcmp(f->type, "histogram") == 0)
				return f;
		}
	}
	return NULL;
}

/* Parses TEXT as Prometheus text format 0.0.4, checking as it goes. */
static void parse(const char *text, struct parsed *p)
{
	regex_t sample_re, name_re, label_re;
	CU_ASSERT_FATAL(regcomp(&sample_re,
				"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? ([^ ]+)$",
				REG_EXTENDED) == 0);
	CU_ASSERT_FATAL(regcomp(&name_re, "^ring_[a-z0-9_]+$", REG_EXTENDED | REG_NOSUB) == 0);
	CU_ASSERT_FATAL(regcomp(&label_re,
				"^[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\"(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\")*$",
				REG_EXTENDED | REG_NOSUB) == 0);
	memset(p, 0, sizeof *p);
	const char *at = text;
	CU_ASSERT(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	while (*at) {
		const char *nl = strchr(at, '\n');
		size_t len = nl ? (size_t)(nl - at) : strlen(at);
		char line[512];
		CU_ASSERT_FATAL(len < sizeof line);
		memcpy(line, at, len);
		line[len] = '\0';
		at += len + (nl ? 1 : 0);
		char name[96], rest[400];
		if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0) {
			if (sscanf(line + 7, "%95s %399[^\n]", name, rest) != 2) {
				bad(p, "HELP or TYPE without a name and text", line);
				continue;
			}
			if (regexec(&name_re, name, 0, NULL, 0) != 0)
				bad(p, "name not ^ring_[a-z0-9_]+$", line);
			struct family *f = family_of(p, name);
			if (!f) {
				CU_ASSERT_FATAL(p->nf < 128);
				f = &p->f[p->nf++];
				snprintf(f->name, sizeof f->name, "%s", name);
			}
			for (size_t i = 0; i < p->ns; i++)
				if (owner(p, p->s[i].name) == f)
					bad(p, "HELP or TYPE after the family's samples", line);
			if (line[2] == 'H') {
				if (f->help)
					bad(p, "a second HELP", line);
				f->help = true;
			} else {
				if (f->type[0])
					bad(p, "a second TYPE", line);
				if (strcmp(rest, "counter") && strcmp(rest, "gauge") &&
				    strcmp(rest, "histogram"))
					bad(p, "unknown TYPE", line);
				snprintf(f->type, sizeof f->type, "%.15s", rest);
			}
			continue;
		}
		if (line[0] == '#' || line[0] == '\0') {
			bad(p, "a comment or blank line the writer should not make", line);
			continue;
		}
		regmatch_t m[5];
		if (regexec(&sample_re, line, 5, m, 0) != 0) {
			bad(p, "not name{labels} value", line);
			continue;
		}
		CU_ASSERT_FATAL(p->ns < 512);
		struct sample *s = &p->s[p->ns++];
		snprintf(s->name, sizeof s->name, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), line + m[1].rm_so);
		if (m[3].rm_so >= 0)
			snprintf(s->labels, sizeof s->labels, "%.*s", (int)(m[3].rm_eo - m[3].rm_so),
				 line + m[3].rm_so);
		snprintf(s->value, sizeof s->value, "%.*s", (int)(m[4].rm_eo - m[4].rm_so), line + m[4].rm_so);
		char *end;
		strtod(s->value, &end);
		if (*end != '\0')
			bad(p, "value is not a float", line);
		if (s->labels[0] && regexec(&label_re, s->labels, 0, NULL, 0) != 0)
			bad(p, "labels not name=\"value\",...", line);
		if (regexec(&name_re, s->name, 0, NULL, 0) != 0)
			bad(p, "name not ^ring_[a-z0-9_]+$", line);
		struct family *f = owner(p, s->name);
		if (!f || !f->help || !f->type[0])
			bad(p, "sample before its HELP and TYPE", line);
	}
	for (size_t i = 0; i < p->nf; i++) {
		const struct family *f = &p->f[i];
		size_t n = strlen(f->name);
		bool total = n > 6 && strcmp(f->name + n - 6, "_total") == 0;
		if (!f->help || !f->type[0])
			bad(p, "a family without HELP or TYPE", f->name);
		if (strcmp(f->type, "counter") == 0 && !total)
			bad(p, "a counter not named *_total", f->name);
		if (strcmp(f->type, "counter") != 0 && total)
			bad(p, "a *_total that is no counter", f->name);
		if (strstr(f->name, "_ms") || strstr(f->name, "millis"))
			bad(p, "a unit other than seconds", f->name);
	}
	regfree(&sample_re);
	regfree(&name_re);
	regfree(&label_re);
}

/* The value of sample NAME{LABELS}; -1 when there is none. */
static double value(const struct parsed *p, const char *name, const char *labels)
{
	for (size_t i = 0; i < p->ns; i++)
		if (strcmp(p->s[i].name, name) == 0 && strcmp(p->s[i].labels, labels) == 0)
			return strtod(p->s[i].value, NULL);
	return -1;
}

static struct ring_layout layout3(void)
{
	struct ring_layout l;
	ring_layout_defaults(&l);
	snprintf(l.name, sizeof l.name, "test-ring");
	l.n = 3;
	for (size_t i = 0; i < 3; i++)
		l.members[i].id = (uint16_t)(i + 1);
	return l;
}

static char *format(const struct ring_layout *l, const struct ring_status *st,
		    const struct ring_metrics *m)
{
	char *buf = malloc(RING_METRICS_MAX);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	int n = ring_metrics_format(buf, RING_METRICS_MAX, l, st, m);
	CU_ASSERT_FATAL(n > 0 && n < RING_METRICS_MAX);
	CU_ASSERT_EQUAL(strlen(buf), (size_t)n);
	return buf;
}

static void test_exposition_is_well_formed_prometheus_text(void)
{
	struct ring_layout l = layout3();
	struct ring_status st = {.node = 2, .state = RING_STATE_HOLDING, .epoch = 258,
				 .fence = ring_fence(258, 7), .successor = 3,
				 .token_seen_ms_ago = 1234, .has_token = true, .granted = true,
				 .queued = 4};
	ring_set_add(&st.alive, 0);
	ring_set_add(&st.alive, 1);
	st.counters.cs_entries = 7;
	st.counters.summons = 3;
	struct ring_metrics m = {0};
	m.rx[RING_MSG_TOKEN] = 11;
	m.tx[RING_MSG_TOKEN] = 12;
	m.rx[0] = 2;
	ring_hist_observe(&m.grant_wait, 150);
	ring_hist_observe(&m.hold, 2000000);
	char *text = format(&l, &st, &m);
	static struct parsed p;
	parse(text, &p);
	CU_ASSERT_EQUAL(p.errors, 0);
	CU_ASSERT(p.ns > 60);
	/* A few values, each where a reader looks for it. */
	CU_ASSERT_EQUAL(value(&p, "ring_member_info", "ring=\"test-ring\",node=\"2\""), 1);
	CU_ASSERT_EQUAL(value(&p, "ring_epoch", ""), 258);
	CU_ASSERT_EQUAL(value(&p, "ring_alive_members", ""), 2);
	CU_ASSERT_EQUAL(value(&p, "ring_queue_length", ""), 4);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_token_seen_seconds_ago", ""), 1.234, 1e-9);
	CU_ASSERT_EQUAL(value(&p, "ring_cs_entries_total", ""), 7);
	CU_ASSERT_EQUAL(value(&p, "ring_summons_total", ""), 3);
	CU_ASSERT_EQUAL(value(&p, "ring_datagrams_received_total", "type=\"token\""), 11);
	CU_ASSERT_EQUAL(value(&p, "ring_datagrams_sent_total", "type=\"token\""), 12);
	CU_ASSERT_EQUAL(value(&p, "ring_datagrams_received_total", "type=\"unknown\""), 2);
	CU_ASSERT_EQUAL(value(&p, "ring_datagrams_sent_total", "type=\"heartbeat\""), 0);
	/* The fence is exact in the text, above what a double holds. */
	char want[64];
	snprintf(want, sizeof want, "\nring_fence %llu\n", (unsigned long long)ring_fence(258, 7));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
	free(text);
}

/* One state at 1, every other at 0, every state named. */
static void test_state_is_one_hot_over_every_state(void)
{
	struct ring_layout l = layout3();
	static const char *names[] = {"idle", "waiting", "holding", "electing", "no-quorum"};
	for (int s = 0; s < 5; s++) {
		struct ring_status st = {.node = 1, .state = (enum ring_state)s,
					 .token_seen_ms_ago = UINT64_MAX};
		struct ring_metrics m = {0};
		char *text = format(&l, &st, &m);
		static struct parsed p;
		parse(text, &p);
		CU_ASSERT_EQUAL(p.errors, 0);
		for (int k = 0; k < 5; k++) {
			char labels[64];
			snprintf(labels, sizeof labels, "state=\"%s\"", names[k]);
			CU_ASSERT_EQUAL(value(&p, "ring_state", labels), k == s ? 1 : 0);
		}
		/* Never seen: +Inf, which a scraper reads as a float. */
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nring_token_seen_seconds_ago +Inf\n"));
		free(text);
	}
}

/* Bounds are inclusive (le); the buckets add up; +Inf, _count and the
 * number of samples agree; _sum is exact in seconds. */
static void test_histogram_buckets_are_cumulative_and_inf_is_the_count(void)
{
	struct ring_layout l = layout3();
	struct ring_status st = {.node = 1};
	struct ring_metrics m = {0};
	const uint64_t us[] = {0, 100, 101, 999, 1000, 1001, 59999999, 60000000, 60000001,
			       3600000000ull};
	uint64_t sum = 0;
	for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
		ring_hist_observe(&m.grant_wait, us[i]);
		sum += us[i];
	}
	char *text = format(&l, &st, &m);
	static struct parsed p;
	parse(text, &p);
	CU_ASSERT_EQUAL(p.errors, 0);
	const char *h = "ring_grant_wait_seconds_bucket";
	CU_ASSERT_EQUAL(value(&p, h, "le=\"0.0001\""), 2);
	CU_ASSERT_EQUAL(value(&p, h, "le=\"0.00025\""), 3);
	CU_ASSERT_EQUAL(value(&p, h, "le=\"0.001\""), 5);
	CU_ASSERT_EQUAL(value(&p, h, "le=\"0.0025\""), 6);
	CU_ASSERT_EQUAL(value(&p, h, "le=\"60\""), 8);
	CU_ASSERT_EQUAL(value(&p, h, "le=\"+Inf\""), 10);
	CU_ASSERT_EQUAL(value(&p, "ring_grant_wait_seconds_count", ""), 10);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_grant_wait_seconds_sum", ""), sum / 1e6, 1e-6);
	/* Every histogram: le ascending, counts never falling, +Inf last and
	 * equal to _count. */
	const char *hists[] = {"ring_grant_wait_seconds", "ring_hold_seconds"};
	for (size_t k = 0; k < 2; k++) {
		char bucket[96], count[96];
		snprintf(bucket, sizeof bucket, "%s_bucket", hists[k]);
		snprintf(count, sizeof count, "%s_count", hists[k]);
		double last_le = -1, last = -1;
		size_t buckets = 0;
		bool inf = false;
		for (size_t i = 0; i < p.ns; i++) {
			if (strcmp(p.s[i].name, bucket) != 0)
				continue;
			buckets++;
			CU_ASSERT(!inf); /* nothing after +Inf */
			double le = strtod(p.s[i].labels + 4, NULL), v = strtod(p.s[i].value, NULL);
			inf = strcmp(p.s[i].labels, "le=\"+Inf\"") == 0;
			CU_ASSERT(le > last_le);
			CU_ASSERT(v >= last);
			last_le = le;
			last = v;
		}
		CU_ASSERT(inf);
		CU_ASSERT_EQUAL(buckets, RING_HIST_BUCKETS + 1);
		CU_ASSERT_EQUAL(last, value(&p, count, ""));
	}
	/* A lock's range: the smallest bound ~100 us, the largest ~60 s. */
	CU_ASSERT_EQUAL(value(&p, "ring_hold_seconds_bucket", "le=\"0.0001\""), 0);
	CU_ASSERT(value(&p, "ring_hold_seconds_bucket", "le=\"60\"") == 0);
	free(text);
}

/* The lease-advice gauges carry the fine histogram's figures and the
 * member's own advice: 0 until 20 holds, then the rule of common/advice.c. */
static void test_hold_percentiles_pause_and_advice_are_gauges(void)
{
	struct ring_layout l = layout3();
	struct ring_status st = {.node = 1, .state = RING_STATE_IDLE, .successor = 2};
	static struct ring_metrics m;
	memset(&m, 0, sizeof m);
	for (int k = 0; k < 19; k++)
		ring_metrics_hold(&m, 50000);
	ring_metrics_pause(&m, 400);
	ring_metrics_pause(&m, 499);
	ring_metrics_pause(&m, 120);
	static struct parsed p;
	char *text = format(&l, &st, &m);
	parse(text, &p);
	CU_ASSERT_EQUAL(p.errors, 0);
	CU_ASSERT_EQUAL(value(&p, "ring_hold_seconds_count", ""), 19);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_hold_p50_seconds", ""), 0.05, 0.05 / 32);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_hold_max_seconds", ""), 0.05, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_pause_max_seconds", ""), 0.499, 1e-9);
	CU_ASSERT_EQUAL(value(&p, "ring_lease_advice_seconds", ""), 0); /* 19 holds */
	CU_ASSERT_EQUAL(value(&p, "ring_max_hold_advice_seconds", ""), 0);
	CU_ASSERT_EQUAL(m.pauses, 3);
	free(text);
	ring_metrics_hold(&m, 60000);
	text = format(&l, &st, &m);
	parse(text, &p);
	CU_ASSERT_EQUAL(p.errors, 0);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_hold_p999_seconds", ""), 0.06, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_hold_max_seconds", ""), 0.06, 1e-9);
	/* 3 x 499 ms = 1497 -> 2000 ms; 2 x 60 ms -> 200, not below the lease */
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_lease_advice_seconds", ""), 2.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(value(&p, "ring_max_hold_advice_seconds", ""), 2.0, 1e-9);
	free(text);
}

static void test_every_counter_has_help(void)
{
	for (size_t k = 0; k < RING_COUNTER_COUNT; k++)
		CU_ASSERT_PTR_NOT_NULL(ring_metrics_counter_help(k));
	CU_ASSERT_PTR_NULL(ring_metrics_counter_help(RING_COUNTER_COUNT));
}

/* The largest values fit RING_METRICS_MAX; a small buffer is cut like
 * snprintf and says how much room it needed. */
static void test_largest_text_fits_and_small_buffer_is_cut_safely(void)
{
	struct ring_layout l = layout3();
	memset(l.name, 'n', RING_NAME_MAX - 1);
	l.name[RING_NAME_MAX - 1] = '\0';
	struct ring_status st;
	memset(&st, 0xff, sizeof st);
	st.state = RING_STATE_NO_QUORUM;
	st.has_token = st.token_held = st.parked = st.granted = true;
	struct ring_metrics m;
	memset(&m, 0xff, sizeof m);
	char *big = malloc(RING_METRICS_MAX);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	int need = ring_metrics_format(big, RING_METRICS_MAX, &l, &st, &m);
	CU_ASSERT(need > 0 && need < RING_METRICS_MAX);
	char small[100];
	memset(small, 'x', sizeof small);
	CU_ASSERT_EQUAL(ring_metrics_format(small, 64, &l, &st, &m), need);
	CU_ASSERT_EQUAL(small[63], '\0');
	CU_ASSERT_EQUAL(small[64], 'x');
	CU_ASSERT_EQUAL(memcmp(small, big, 63), 0);
	CU_ASSERT_EQUAL(ring_metrics_format(NULL, 0, &l, &st, &m), need);
	free(big);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_metrics_tests[] = {
	T_(test_exposition_is_well_formed_prometheus_text),
	T_(test_state_is_one_hot_over_every_state),
	T_(test_histogram_buckets_are_cumulative_and_inf_is_the_count),
	T_(test_hold_percentiles_pause_and_advice_are_gauges),
	T_(test_every_counter_has_help),
	T_(test_largest_text_fits_and_small_buffer_is_cut_safely),
	CU_TEST_INFO_NULL,
};
#undef T_
