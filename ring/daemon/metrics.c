/* The Prometheus text exposition (format 0.0.4) of a member's status and its
 * metrics, and the histograms behind it. Pure: the caller passes every value,
 * so tests can check the text without a daemon or a clock. */
#include "daemon/metrics.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/wire.h"

static const uint64_t bound_us[RING_HIST_BUCKETS] = {
#define RING_HIST_US_(us, le) us,
	RING_HIST_BOUNDS(RING_HIST_US_)
#undef RING_HIST_US_
};

static const char *const bound_le[RING_HIST_BUCKETS] = {
#define RING_HIST_LE_(us, le) le,
	RING_HIST_BOUNDS(RING_HIST_LE_)
#undef RING_HIST_LE_
};

#define RING_MSG_SLOT_CHECK_(name, code, str) \
	_Static_assert(code > 0 && code < RING_MSG_SLOTS, "RING_MSG_SLOTS holds every type");
RING_MSG_TYPES(RING_MSG_SLOT_CHECK_)
#undef RING_MSG_SLOT_CHECK_

void ring_hist_observe(struct ring_histogram *h, uint64_t us)
{
	/* Most grants are fast: the scan from the small end ends early. */
	size_t k = 0;
	while (k < RING_HIST_BUCKETS && us > bound_us[k])
		k++;
	h->bucket[k]++;
	h->count++;
	h->sum_us += us;
}

void ring_metrics_hold(struct ring_metrics *m, uint64_t us)
{
	ring_hist_observe(&m->hold, us);
	ring_hold_hist_observe(&m->hold_fine, us);
}

void ring_metrics_pause(struct ring_metrics *m, uint64_t ms)
{
	uint64_t us = ms > UINT64_MAX / 1000u ? UINT64_MAX : ms * 1000u;
	m->pauses++;
	if (us > m->pause_max_us)
		m->pause_max_us = us;
}

void ring_metrics_figures(const struct ring_metrics *m, struct ring_advice_figures *f)
{
	ring_hold_hist_figures(&m->hold_fine, f);
	f->pause_max_us = m->pause_max_us;
	f->pauses = m->pauses;
}

/* What each status counter means, by its place in struct ring_counters: a
 * counter renamed in counters.h stops this compiling, one added without a
 * line here is caught by test/unit/test_metrics.c (its help would be NULL). */
#define AT_(name) [offsetof(struct ring_counters, name) / sizeof(uint64_t)]
static const char *const counter_help[RING_COUNTER_COUNT] = {
	AT_(tokens_passed) = "Tokens this member passed on to its successor.",
	AT_(cs_entries) = "Grants of the critical region to this member's clients.",
	AT_(retransmits) = "Token retransmits after a hop's ack did not come in time.",
	AT_(skips) = "Successors skipped as dead after every retransmit went unanswered.",
	AT_(elections) = "Elections this member started after suspecting a lost token.",
	AT_(regenerations) = "Tokens this member regenerated after winning an election.",
	AT_(stale_dropped) = "Tokens of an old epoch dropped here.",
	AT_(bad_packets) = "Datagrams dropped as malformed, of another ring or not from a member.",
	AT_(auth_failures) = "Datagrams dropped for a bad MAC or as replays.",
	AT_(config_mismatches) = "Datagrams from a member whose configuration differs.",
	AT_(version_mismatches) = "Datagrams of another wire version (a mixed-version ring).",
	AT_(pauses) = "Stalls of this process longer than a lease (pause_detected).",
	AT_(parks) = "Times an unwanted token parked at this member.",
	AT_(summons) = "Times this member summoned a parked token for its clients.",
};
#undef AT_

/* Appends to a bounded buffer, counting what did not fit. */
struct out {
	char *p;
	size_t len, off;
};

__attribute__((format(printf, 2, 3)))
static void add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bool room = o->off < o->len;
	int k = vsnprintf(room ? o->p + o->off : NULL, room ? o->len - o->off : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->off += (size_t)k;
}

static void head(struct out *o, const char *name, const char *type, const char *help)
{
	add(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void gauge(struct out *o, const char *name, const char *help, uint64_t v)
{
	head(o, name, "gauge", help);
	add(o, "%s %llu\n", name, (unsigned long long)v);
}

/* Microseconds as seconds, exactly: 1234567 is "1.234567". */
static void add_seconds(struct out *o, uint64_t us)
{
	add(o, "%llu.%06llu", (unsigned long long)(us / 1000000u),
	    (unsigned long long)(us % 1000000u));
}

static void gauge_seconds(struct out *o, const char *name, const char *help, uint64_t us)
{
	head(o, name, "gauge", help);
	add(o, "%s ", name);
	add_seconds(o, us);
	add(o, "\n");
}

/* This member's hold percentiles and longest pause, and the advice they
 * imply by themselves (ringctl lease-advice combines every member's). */
static void advice(struct out *o, const struct ring_metrics *m)
{
	struct ring_advice_figures f;
	ring_metrics_figures(m, &f);
	struct ring_advice a;
	ring_advice_init(&a);
	ring_advice_add(&a, 0, &f);
	ring_advice_decide(&a);
	gauge_seconds(o, "ring_hold_p50_seconds", "Median hold here (an upper bound within 3 %); "
		      "0 before the first hold.", f.p50_us);
	gauge_seconds(o, "ring_hold_p99_seconds", "99th percentile of holds here (within 3 %).",
		      f.p99_us);
	gauge_seconds(o, "ring_hold_p999_seconds", "99.9th percentile of holds here (within 3 %).",
		      f.p999_us);
	gauge_seconds(o, "ring_hold_max_seconds", "Longest hold here, exact.", f.max_us);
	gauge_seconds(o, "ring_pause_max_seconds", "Longest pause this member detected; 0: none.",
		      f.pause_max_us);
	gauge_seconds(o, "ring_lease_advice_seconds",
		      "lease_ms this member's figures imply (docs/operations.md, Choosing a lease); "
		      "0 until 20 holds.", a.enough ? (uint64_t)a.lease_ms * 1000u : 0);
	gauge_seconds(o, "ring_max_hold_advice_seconds",
		      "max_hold_ms this member's figures imply; 0 until 20 holds.",
		      a.enough ? (uint64_t)a.max_hold_ms * 1000u : 0);
}

static void histogram(struct out *o, const char *name, const char *help,
		      const struct ring_histogram *h)
{
	head(o, name, "histogram", help);
	uint64_t cum = 0;
	for (size_t k = 0; k < RING_HIST_BUCKETS; k++) {
		cum += h->bucket[k];
		add(o, "%s_bucket{le=\"%s\"} %llu\n", name, bound_le[k], (unsigned long long)cum);
	}
	/* +Inf is the count by definition, not a sum that could drift. */
	add(o, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->count);
	add(o, "%s_sum ", name);
	add_seconds(o, h->sum_us);
	add(o, "\n%s_count %llu\n", name, (unsigned long long)h->count);
}

static void datagrams(struct out *o, const char *name, const char *help, const uint64_t *slots)
{
	head(o, name, "counter", help);
#define RING_MSG_SAMPLE_(n, code, str) \
	add(o, "%s{type=\"%s\"} %llu\n", name, str, (unsigned long long)slots[code]);
	RING_MSG_TYPES(RING_MSG_SAMPLE_)
#undef RING_MSG_SAMPLE_
	add(o, "%s{type=\"unknown\"} %llu\n", name, (unsigned long long)slots[0]);
}

int ring_metrics_format(char *buf, size_t len, const struct ring_layout *layout,
			const struct ring_status *st, const struct ring_metrics *m)
{
	struct out o = {buf, len, 0};
	if (len > 0)
		buf[0] = '\0';
	/* The ring's name is A-Z a-z 0-9 . _ - (conf.c): nothing to escape. */
	head(&o, "ring_member_info", "gauge", "This member's id and ring; the value is always 1.");
	add(&o, "ring_member_info{ring=\"%s\",node=\"%u\"} 1\n", layout->name, st->node);
	head(&o, "ring_state", "gauge", "1 for the state this member is in, 0 for the others.");
#define RING_STATE_SAMPLE_(name, str) \
	add(&o, "ring_state{state=\"%s\"} %d\n", str, st->state == RING_STATE_##name);
	RING_STATES(RING_STATE_SAMPLE_)
#undef RING_STATE_SAMPLE_
	gauge(&o, "ring_epoch", "Newest epoch this member knows.", st->epoch);
	gauge(&o, "ring_fence", "Last fence granted here, 0 if none (epoch << 32 | counter; "
	      "exact in this text, a float64 in Prometheus).", st->fence);
	gauge(&o, "ring_successor", "Member id the token goes to next from here.", st->successor);
	gauge(&o, "ring_members", "Members in the ring's configuration.", layout->n);
	size_t alive = 0;
	for (size_t i = 0; i < layout->n; i++)
		alive += ring_set_has(&st->alive, i);
	gauge(&o, "ring_alive_members", "Members this member believes alive.", alive);
	head(&o, "ring_token_seen_seconds_ago", "gauge",
	     "Time since this member last saw the token or a heartbeat of it; +Inf if never.");
	if (st->token_seen_ms_ago == UINT64_MAX)
		add(&o, "ring_token_seen_seconds_ago +Inf\n");
	else
		add(&o, "ring_token_seen_seconds_ago %llu.%03llu\n",
		    (unsigned long long)(st->token_seen_ms_ago / 1000),
		    (unsigned long long)(st->token_seen_ms_ago % 1000));
	gauge(&o, "ring_has_token", "1 while this member holds the token or awaits its ack.",
	      st->has_token);
	gauge(&o, "ring_token_parked", "1 while the token is parked here.", st->parked);
	gauge(&o, "ring_in_critical_region", "1 while a client of this member is granted.",
	      st->granted);
	gauge(&o, "ring_queue_length", "Clients of this member waiting for the critical region.",
	      st->queued);
#define RING_COUNTER_SAMPLE_(name)                                                       \
	{                                                                                 \
		size_t k_ = offsetof(struct ring_counters, name) / sizeof(uint64_t);       \
		head(&o, "ring_" #name "_total", "counter",                               \
		     counter_help[k_] ? counter_help[k_] : "A status counter.");          \
		add(&o, "ring_" #name "_total %llu\n", (unsigned long long)st->counters.name); \
	}
	RING_COUNTERS(RING_COUNTER_SAMPLE_)
#undef RING_COUNTER_SAMPLE_
	datagrams(&o, "ring_datagrams_received_total",
		  "Datagrams received, by message type, after authentication.", m->rx);
	datagrams(&o, "ring_datagrams_sent_total",
		  "Datagrams sent, by message type (a broadcast counts once per member).", m->tx);
	histogram(&o, "ring_grant_wait_seconds",
		  "Time from a client's ACQUIRE to its GRANTED.", &m->grant_wait);
	histogram(&o, "ring_hold_seconds",
		  "Time from GRANTED to the client's release, disconnect or revocation.", &m->hold);
	advice(&o, m);
	return (int)(o.off > (size_t)INT32_MAX ? INT32_MAX : o.off);
}

const char *ring_metrics_counter_help(size_t k)
{
	return k < RING_COUNTER_COUNT ? counter_help[k] : NULL;
}
