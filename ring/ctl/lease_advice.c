/* `ringctl lease-advice`: the members' hold times and pauses as a table or
 * JSON, the ring's worst figures and the advice common/advice.c draws from
 * them, with its reasoning. See lease_advice.h. */
#include "ctl/lease_advice.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/err.h"

void ring_lease_advice_figures(const struct ring_msg_advice_resp *r,
			       struct ring_advice_figures *f)
{
	*f = (struct ring_advice_figures){
		.holds = r->holds, .p50_us = r->p50_us, .p99_us = r->p99_us, .p999_us = r->p999_us,
		.max_us = r->max_us, .pause_max_us = r->pause_max_us, .pauses = r->pauses};
}

void ring_lease_advice_collect(const struct ring_layout *l,
			       const struct ring_msg_advice_resp *const *ans, struct ring_advice *a)
{
	ring_advice_init(a);
	for (size_t i = 0; i < l->n; i++) {
		if (!ans[i])
			continue;
		struct ring_advice_figures f;
		ring_lease_advice_figures(ans[i], &f);
		ring_advice_add(a, l->members[i].id, &f);
	}
	ring_advice_decide(a);
}

/* Microseconds as "52.3 ms" in W columns; "-" when there is nothing (NONE). */
static void ms_col(FILE *out, uint64_t us, bool none, int w)
{
	char b[48];
	if (none)
		snprintf(b, sizeof b, "-");
	else
		snprintf(b, sizeof b, "%llu.%llu ms", (unsigned long long)(us / 1000u),
			 (unsigned long long)(us % 1000u / 100u));
	fprintf(out, " %*s", w, b);
}

static void print_row(FILE *out, uint16_t id, const struct ring_msg_advice_resp *r)
{
	if (!r) {
		fprintf(out, "  %5u  %s\n", id, "down");
		return;
	}
	fprintf(out, "  %5u %8llu", id, (unsigned long long)r->holds);
	ms_col(out, r->p50_us, r->holds == 0, 11);
	ms_col(out, r->p99_us, r->holds == 0, 11);
	ms_col(out, r->p999_us, r->holds == 0, 11);
	ms_col(out, r->max_us, r->holds == 0, 11);
	fprintf(out, " %7llu", (unsigned long long)r->pauses);
	ms_col(out, r->pause_max_us, r->pause_max_us == 0, 14);
	fprintf(out, "\n");
}

/* "highest p99.9 53.2 ms (member 1)" */
static void ring_figure(FILE *out, const char *what, uint64_t us, uint16_t at)
{
	fprintf(out, "; %s ", what);
	if (!at) {
		fprintf(out, "none");
		return;
	}
	fprintf(out, "%llu.%llu ms (member %u)", (unsigned long long)(us / 1000u),
		(unsigned long long)(us % 1000u / 100u), at);
}

static int print_text(FILE *out, const struct ring_layout *l,
		      const struct ring_msg_advice_resp *const *ans, const struct ring_advice *a,
		      const char *why)
{
	fprintf(out, "ring \"%s\": %zu of %zu members answer; hold times (GRANTED to release) and "
		"pauses each member saw since it started\n", l->name, a->members, l->n);
	fprintf(out, "  %5s %8s %11s %11s %11s %11s %7s %14s\n", "id", "holds", "p50", "p99",
		"p99.9", "max", "pauses", "longest pause");
	for (size_t i = 0; i < l->n; i++)
		print_row(out, l->members[i].id, ans[i]);
	fprintf(out, "ring: %llu holds", (unsigned long long)a->holds);
	ring_figure(out, "highest p99.9", a->p999_us, a->p999_at);
	ring_figure(out, "longest hold", a->max_us, a->max_at);
	ring_figure(out, "longest pause", a->pause_us, a->pause_at);
	fprintf(out, "\n%s", why);
	return ferror(out) ? -RING_EIO : 0;
}

/* A figure as a JSON integer (json_int_t is signed 64 bits): one above
 * what it holds, which no honest member reaches, is clamped. */
static json_int_t jint(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

static json_t *member_json(uint16_t id, const struct ring_msg_advice_resp *r)
{
	if (!r)
		return json_pack("{s:I, s:s}", "node", jint(id), "state", "down");
	return json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "node", jint(id),
			 "state", "up", "holds", jint(r->holds), "p50_us", jint(r->p50_us),
			 "p99_us", jint(r->p99_us), "p999_us", jint(r->p999_us),
			 "max_us", jint(r->max_us), "pause_max_us", jint(r->pause_max_us),
			 "pauses", jint(r->pauses));
}

/* The reasoning, one string per line. */
static json_t *reasons_json(const char *why)
{
	json_t *arr = json_array();
	for (const char *p = why; arr && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		json_array_append_new(arr, json_stringn(p, n));
		p += n + (nl ? 1 : 0);
	}
	return arr;
}

static json_t *report_json(const struct ring_layout *l,
			   const struct ring_msg_advice_resp *const *ans, const struct ring_advice *a,
			   const char *why)
{
	json_t *members = json_array();
	for (size_t i = 0; members && i < l->n; i++)
		json_array_append_new(members, member_json(l->members[i].id, ans[i]));
	json_t *advice = a->enough
		? json_pack("{s:I, s:I, s:b, s:I, s:I, s:I}", "lease_ms", jint(a->lease_ms),
			    "max_hold_ms", jint(a->max_hold_ms), "max_hold_optional",
			    a->max_hold_optional, "by_pause_ms", jint(a->by_pause_ms),
			    "by_hold_ms", jint(a->by_hold_ms), "by_max_ms",
			    jint(a->by_max_ms))
		: json_null();
	return json_pack("{s:s, s:I, s:I, s:o*, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:o*,"
			 " s:{s:I, s:I}, s:o*}",
			 "ring", l->name, "answered", jint(a->members), "members_total",
			 jint(l->n), "members", members, "holds", jint(a->holds),
			 "pauses", jint(a->pauses), "p999_us", jint(a->p999_us),
			 "p999_node", jint(a->p999_at), "max_us", jint(a->max_us),
			 "max_node", jint(a->max_at), "pause_max_us", jint(a->pause_us),
			 "pause_node", jint(a->pause_at), "enough_data", a->enough, "advice",
			 advice, "now", "lease_ms", jint(l->lease_ms), "max_hold_ms",
			 jint(l->max_hold_ms), "reasons", reasons_json(why));
}

int ring_lease_advice_print(FILE *out, const struct ring_layout *l,
			    const struct ring_msg_advice_resp *const *ans, bool json)
{
	struct ring_advice a;
	ring_lease_advice_collect(l, ans, &a);
	char why[2048];
	ring_advice_explain(&a, l->lease_ms, l->max_hold_ms, why, sizeof why);
	if (!json)
		return print_text(out, l, ans, &a, why);
	json_t *o = report_json(l, ans, &a, why);
	if (!o)
		return -RING_ENOMEM;
	int rc = json_dumpf(o, out, JSON_COMPACT) < 0 || fputc('\n', out) == EOF ? -RING_EIO : 0;
	json_decref(o);
	return rc;
}
