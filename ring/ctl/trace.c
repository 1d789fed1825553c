/* The trace checker: reads every member's JSON log, orders grants by epoch
 * and token hop rather than by clocks alone, and reports duplicated or
 * backward fences, grants under an epoch the member knew to be old,
 * overlapping critical regions, stretches with no token, and (through
 * trace_faults.c) every fault, listed or inferred, timed to the next grant. */
#include "ctl/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/err.h"
#include "core/node.h"
#include "ctl/trace_faults.h"
#include "ctl/trace_gaps.h"

#define LIST_MAX 8 /* incidents of each kind printed in full */
#define FAULT_JSON_MAX 1000 /* faults listed one by one in --json */

enum kind {
	K_OTHER,
	K_CS_ENTER,
	K_CS_EXIT,
	K_LEASE_EXPIRED,
	K_TOKEN_RECV,
	K_TOKEN_PASS,
	K_TOKEN_REGEN,
	K_SKIP,
	K_REJOIN,
	K_STALE_DROP,
	K_PAUSE,
	K_NODE_START,
	K_NODE_STOP,
	K_FAULT,
	K_PARK,      /* token_park: the token stays here, heartbeating */
	K_PARK_END,  /* what ends a park here: unpark, leave_done, no_quorum */
	K_LOSS,      /* loss_suspect */
	K_PREAMBLE,  /* ringd's lines before node_start: of the next life */
};

/* What the checker makes of a core event; the names come from the core's
 * own table (RING_LOG_EVENTS in node.h), so a renamed event cannot drift. */
static enum kind core_kind(enum ring_log_event ev)
{
	switch (ev) {
	case RING_LOG_CS_ENTER:
		return K_CS_ENTER;
	case RING_LOG_CS_EXIT:
		return K_CS_EXIT;
	case RING_LOG_LEASE_EXPIRED:
		return K_LEASE_EXPIRED;
	case RING_LOG_TOKEN_RECV:
		return K_TOKEN_RECV;
	case RING_LOG_TOKEN_PASS:
		return K_TOKEN_PASS;
	case RING_LOG_TOKEN_REGEN:
		return K_TOKEN_REGEN;
	case RING_LOG_SUCCESSOR_SKIP:
		return K_SKIP;
	case RING_LOG_MEMBER_REJOIN:
		return K_REJOIN;
	case RING_LOG_TOKEN_STALE_DROP:
		return K_STALE_DROP;
	case RING_LOG_PAUSE_DETECTED:
		return K_PAUSE;
	case RING_LOG_TOKEN_PARK:
		return K_PARK;
	case RING_LOG_TOKEN_UNPARK:
	case RING_LOG_LEAVE_DONE:
	case RING_LOG_NO_QUORUM:
		return K_PARK_END;
	case RING_LOG_LOSS_SUSPECT:
		return K_LOSS;
	default:
		return K_OTHER;
	}
}

/* Events the core does not log: ringd's own start and stop (daemon.c), and
 * the fault markers the test scripts write into the logs. */
static const struct {
	const char *name;
	enum kind kind;
} shell_kinds[] = {
	{"node_start", K_NODE_START},
	{"node_stop", K_NODE_STOP},
	{"fault", K_FAULT},
	{"auth_key", K_PREAMBLE},
	{"auth_off", K_PREAMBLE},
};

/* EV's kind; *CORE is its core event, or -1. */
static enum kind kind_of(const char *ev, int *core)
{
	*core = -1;
	for (int e = 0; e < RING_LOG_COUNT_; e++)
		if (strcmp(ev, ring_log_info((enum ring_log_event)e)->name) == 0) {
			*core = e;
			return core_kind((enum ring_log_event)e);
		}
	for (size_t i = 0; i < sizeof shell_kinds / sizeof shell_kinds[0]; i++)
		if (strcmp(ev, shell_kinds[i].name) == 0)
			return shell_kinds[i].kind;
	return K_OTHER;
}

/* One critical region, from its grant to its end as the logs tell it. */
struct grant {
	uint32_t node;
	uint64_t fence;
	uint32_t epoch;
	int64_t seq;    /* the token hop it was granted on; -1 if unknown (no -v) */
	uint64_t start, end;
	bool ended;     /* by cs_exit or lease_expired, not guessed */
	size_t order;   /* position in its file, for ties */
};

struct fault {
	uint64_t t;
	char what[64];
};

struct tracer {
	struct grant *g;
	size_t ng, capg;
	struct ring_trace_gaps *gaps; /* where the token was seen alive */
	struct fault *f;
	size_t nf, capf;
	uint64_t first, last;
	uint32_t epochs_seen[4096];
	size_t nepochs;
	bool nodes[65536];
	struct ring_trace_faults *faults;
	bool faults_oom; /* the fault inference (or the gaps') ran out of memory */
	struct ring_trace_result *res;
	const struct ring_trace_opts *opts;
	FILE *out;
};

/* "2026-11-30T09:12:27.609673Z" -> microseconds since 1970, UTC. */
static bool parse_ts(const char *s, uint64_t *out)
{
	int y, mo, d, h, mi, sec;
	long us;
	char z;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%6ld%c", &y, &mo, &d, &h, &mi, &sec, &us, &z) != 8 ||
	    z != 'Z' || mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970)
		return false;
	/* days from civil (Howard Hinnant's algorithm) */
	int yy = y - (mo <= 2);
	int era = yy / 400;
	unsigned yoe = (unsigned)(yy - era * 400);
	unsigned doy = (unsigned)((153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1);
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = (int64_t)era * 146097 + (int64_t)doe - 719468;
	*out = (uint64_t)((days * 86400 + h * 3600 + mi * 60 + sec) * 1000000LL + us);
	return true;
}

static uint64_t num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
}

static void note_epoch(struct tracer *tr, uint32_t e)
{
	for (size_t i = 0; i < tr->nepochs; i++)
		if (tr->epochs_seen[i] == e)
			return;
	if (tr->nepochs < sizeof tr->epochs_seen / sizeof tr->epochs_seen[0])
		tr->epochs_seen[tr->nepochs++] = e;
}

/* One log line, as the checker needs it. */
struct record {
	uint64_t t;
	enum kind kind;
	uint32_t node, epoch;
	uint64_t seq, fence, known;
	uint64_t hb_ms;    /* node_start's heartbeat_ms */
	int core;          /* its core event, or -1 */
	uint64_t field[3]; /* the core event's fields, by RING_LOG_EVENTS */
	char what[64];     /* a fault's */
};

/* Parses LINE into R; false for anything but a JSON object with a "ts" and
 * an "event", and a "node" of 0..65535 if any. */
static bool parse_line(const char *line, size_t len, struct record *r)
{
	json_error_t jerr;
	json_t *o = json_loadb(line, len, 0, &jerr);
	const char *ts = o ? json_string_value(json_object_get(o, "ts")) : NULL;
	const char *ev = o ? json_string_value(json_object_get(o, "event")) : NULL;
	/* A "node", when there, is a member id or 0 (a lab's faults.log
	 * names none): not truncated into one (4294967297 was member 1). */
	json_t *node = o ? json_object_get(o, "node") : NULL;
	if (!o || !json_is_object(o) || !ts || !ev || !parse_ts(ts, &r->t) ||
	    (node && (!json_is_integer(node) || json_integer_value(node) < 0 ||
		      json_integer_value(node) > 65535))) {
		json_decref(o);
		return false;
	}
	r->kind = kind_of(ev, &r->core);
	for (int i = 0; i < 3; i++) {
		const char *name = r->core >= 0 ? ring_log_info((enum ring_log_event)r->core)->field[i]
						: NULL;
		r->field[i] = name ? num(o, name) : 0;
	}
	r->node = (uint32_t)num(o, "node");
	r->epoch = (uint32_t)num(o, "epoch");
	r->seq = num(o, "seq");
	r->fence = num(o, "fence");
	r->known = num(o, "known");
	r->hb_ms = num(o, "heartbeat_ms");
	const char *what = json_string_value(json_object_get(o, "what"));
	snprintf(r->what, sizeof r->what, "%s", what ? what : "?");
	json_decref(o);
	return true;
}

/* What one member's log has told so far: its clock and its knowledge only
 * ever move forward within it. */
struct member_log {
	size_t order;        /* lines read */
	uint32_t max_epoch;  /* the newest epoch it knew */
	uint32_t cur_epoch;  /* of the token it last held, */
	int64_t cur_seq;     /* and its hop; -1 if unknown */
	uint64_t last_t;
	ssize_t open;        /* index of its grant still in progress, or -1 */
};

static void note_seen_to(struct tracer *tr, uint32_t node, uint64_t t, uint32_t to,
			 uint64_t hop)
{
	if (ring_trace_gaps_seen(tr->gaps, node, t, to, hop) < 0)
		tr->faults_oom = true;
}

static void note_seen(struct tracer *tr, uint32_t node, uint64_t t)
{
	note_seen_to(tr, node, t, 0, 0);
}

static void apply_grant(struct tracer *tr, struct member_log *m, const struct record *r)
{
	struct ring_trace_result *res = tr->res;
	if (m->open >= 0) /* a grant with no end: close where we are */
		tr->g[m->open].end = m->last_t;
	if (r->epoch < m->max_epoch) {
		res->stale_grants++;
		if (res->stale_grants <= LIST_MAX && !tr->opts->json)
			fprintf(tr->out, "VIOLATION n%u granted fence %u:%" PRIu64
				" under epoch %u after it knew epoch %u\n", r->node, r->epoch,
				r->fence & 0xffffffffu, r->epoch, m->max_epoch);
	}
	if (!ring_trace_grow((void **)&tr->g, &tr->capg, tr->ng, sizeof *tr->g))
		return;
	struct grant *g = &tr->g[tr->ng];
	g->node = r->node;
	g->fence = r->fence;
	g->epoch = r->epoch;
	g->seq = r->epoch == m->cur_epoch ? m->cur_seq : -1;
	g->start = g->end = r->t;
	g->ended = false;
	g->order = m->order;
	m->open = (ssize_t)tr->ng++;
	res->grants++;
	note_seen(tr, r->node, r->t);
}

/* What any event tells: the span of the logs, the members and epochs they
 * name, and the newest epoch this member knew. */
static void note_event(struct tracer *tr, struct member_log *m, const struct record *r)
{
	tr->res->events++;
	if (r->node < 65536 && r->node != 0)
		tr->nodes[r->node] = true;
	if (!tr->first || r->t < tr->first)
		tr->first = r->t;
	if (r->t > tr->last)
		tr->last = r->t;
	if (r->epoch > m->max_epoch && r->kind != K_FAULT)
		m->max_epoch = r->epoch;
	if (r->kind == K_STALE_DROP && r->known > m->max_epoch)
		m->max_epoch = (uint32_t)r->known;
	if (r->epoch)
		note_epoch(tr, r->epoch);
}

/* cs_exit or lease_expired: the end of the grant in progress, if it is the
 * one of that fence. */
static void apply_grant_end(struct tracer *tr, struct member_log *m, const struct record *r)
{
	if (m->open >= 0 && tr->g[m->open].fence == r->fence) {
		tr->g[m->open].end = r->t;
		tr->g[m->open].ended = true;
		m->open = -1;
		note_seen(tr, r->node, r->t);
	}
}

/* node_start: a restart. Whatever was in progress died with the old
 * process, at its last word or later (crash_ends: as the others tell). */
static void apply_restart(struct tracer *tr, struct member_log *m, const struct record *r)
{
	(void)ring_trace_gaps_life_end(tr->gaps, r->node, m->last_t);
	if (m->open >= 0)
		tr->g[m->open].end = m->last_t;
	m->open = -1;
	m->cur_epoch = 0;
	m->cur_seq = -1;
}

static void note_fault(struct tracer *tr, const struct record *r)
{
	if (ring_trace_grow((void **)&tr->f, &tr->capf, tr->nf, sizeof *tr->f)) {
		tr->f[tr->nf].t = r->t;
		snprintf(tr->f[tr->nf].what, sizeof tr->f[tr->nf].what, "%s", r->what);
		tr->nf++;
	}
}

/* What a line tells of where the token stays (trace_gaps.c): from its
 * arrival (or park) to its departure, heartbeating, unlogged. */
static void apply_park(struct tracer *tr, const struct record *r)
{
	int rc = 0;
	switch (r->kind) {
	case K_PARK:
	case K_TOKEN_RECV:
	case K_TOKEN_REGEN:
		rc = ring_trace_gaps_park(tr->gaps, r->node, r->t,
					  ring_trace_hop(r->epoch, r->kind == K_TOKEN_REGEN ? 0 : r->seq));
		break;
	case K_TOKEN_PASS:
	case K_PARK_END:
	case K_NODE_STOP:
		rc = ring_trace_gaps_unpark(tr->gaps, r->node, r->t);
		break;
	case K_LOSS:
		/* It heard the token silent_ms ago: alive then. */
		if (r->field[0] && r->field[0] * 1000 <= r->t)
			rc = ring_trace_gaps_silence(tr->gaps, r->node, r->t - r->field[0] * 1000);
		break;
	default:
		break;
	}
	if (rc < 0)
		tr->faults_oom = true;
}

/* Counts and places one event of a member's log. */
static void apply(struct tracer *tr, struct member_log *m, const struct record *r)
{
	struct ring_trace_result *res = tr->res;
	note_event(tr, m, r);
	switch (r->kind) {
	case K_TOKEN_RECV:
		m->cur_epoch = r->epoch;
		m->cur_seq = (int64_t)r->seq;
		note_seen_to(tr, r->node, r->t, 0, ring_trace_hop(r->epoch, r->seq));
		break;
	case K_TOKEN_PASS:
		note_seen_to(tr, r->node, r->t, (uint32_t)r->field[0],
			     ring_trace_hop(r->epoch, r->seq));
		break;
	case K_TOKEN_REGEN:
		note_seen_to(tr, r->node, r->t, 0, ring_trace_hop(r->epoch, 0));
		res->regenerations++;
		m->cur_epoch = r->epoch;
		m->cur_seq = 0;
		break;
	case K_SKIP:
	case K_REJOIN:
		/* Both re-epoch the token here: its next hop is 1. */
		r->kind == K_SKIP ? res->skips++ : res->rejoins++;
		m->cur_epoch = r->epoch;
		m->cur_seq = 0;
		break;
	case K_STALE_DROP:
		res->stale_drops++;
		break;
	case K_PAUSE:
		res->pauses++;
		break;
	case K_CS_ENTER:
		apply_grant(tr, m, r);
		break;
	case K_CS_EXIT:
	case K_LEASE_EXPIRED:
		apply_grant_end(tr, m, r);
		break;
	case K_NODE_START:
		apply_restart(tr, m, r);
		break;
	case K_FAULT:
		note_fault(tr, r);
		break;
	default:
		break;
	}
	apply_park(tr, r);
	if (r->kind != K_PREAMBLE)
		m->last_t = r->t;
}

/* The same line, to the fault inference. */
static void to_faults(struct tracer *tr, const struct record *r)
{
	struct ring_trace_line l = {
		.t = r->t,
		.node = r->node,
		.core = r->core,
		.shell = r->kind == K_NODE_START  ? RING_TRACE_SHELL_START
			 : r->kind == K_NODE_STOP ? RING_TRACE_SHELL_STOP
			 : r->kind == K_FAULT     ? RING_TRACE_SHELL_FAULT
						  : RING_TRACE_SHELL_NONE,
		.field = {r->field[0], r->field[1], r->field[2]},
		.what = r->what,
		.hb_ms = r->hb_ms,
	};
	if (r->kind == K_PREAMBLE)
		return; /* of the life its node_start begins, which tells more */
	if (ring_trace_faults_line(tr->faults, &l) < 0)
		tr->faults_oom = true;
}

/* The members one file speaks for: usually one, several when their logs
 * were written to one file (one journal, one shared stderr). Each keeps
 * its own state; a file's lines are in time order for each of them. */
struct file_members {
	struct member_log *m;
	uint32_t *node;
	size_t n, cap;
};

static struct member_log *member_of(struct file_members *fm, uint32_t node)
{
	for (size_t i = 0; i < fm->n; i++)
		if (fm->node[i] == node)
			return &fm->m[i];
	if (fm->n == fm->cap) {
		size_t c = fm->cap ? fm->cap * 2 : 4;
		struct member_log *m = realloc(fm->m, c * sizeof *m);
		if (!m)
			return NULL;
		fm->m = m;
		uint32_t *nd = realloc(fm->node, c * sizeof *nd);
		if (!nd)
			return NULL;
		fm->node = nd;
		fm->cap = c;
	}
	fm->node[fm->n] = node;
	fm->m[fm->n] = (struct member_log){.cur_seq = -1, .open = -1};
	return &fm->m[fm->n++];
}

/* One file of logs, each member's lines in their own order. */
static int read_file(struct tracer *tr, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -RING_EIO;
	}
	struct file_members fm = {0};
	size_t order = 0;
	bool nomem = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		order++;
		struct record r;
		if (!parse_line(line, (size_t)len, &r)) {
			tr->res->unparsed++;
			continue;
		}
		struct member_log *m = member_of(&fm, r.node);
		if (!m) {
			nomem = true;
			break;
		}
		m->order = order;
		apply(tr, m, &r);
		to_faults(tr, &r);
	}
	ring_trace_faults_end_file(tr->faults);
	for (size_t i = 0; i < fm.n; i++) {
		(void)ring_trace_gaps_life_end(tr->gaps, fm.node[i], fm.m[i].last_t);
		if (fm.m[i].open >= 0)
			tr->g[fm.m[i].open].end = fm.m[i].last_t;
	}
	free(fm.m);
	free(fm.node);
	free(line);
	if (nomem) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -RING_ENOMEM;
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		snprintf(err, errlen, "%s: read error", path);
		return -RING_EIO;
	}
	return 0;
}

/* A member killed or stopped in its critical region held it until the
 * fault, which its own log cannot tell. */
static void end_at_faults(struct tracer *tr)
{
	for (size_t i = 0; i < tr->ng; i++) {
		struct grant *g = &tr->g[i];
		if (g->ended)
			continue;
		for (size_t k = 0; k < tr->nf; k++) {
			unsigned id;
			char verb[16];
			if (sscanf(tr->f[k].what, "%15s %u", verb, &id) != 2 || id != g->node)
				continue;
			if ((strcmp(verb, "kill") == 0 || strcmp(verb, "stop") == 0) &&
			    tr->f[k].t >= g->start) {
				g->end = tr->f[k].t;
				break;
			}
		}
	}
}

static int by_fence(const void *a, const void *b)
{
	const struct grant *x = a, *y = b;
	return x->fence < y->fence ? -1 : x->fence > y->fence;
}

static int by_path(const void *a, const void *b)
{
	const struct grant *x = a, *y = b;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_start(const void *a, const void *b)
{
	const struct grant *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static double rel(const struct tracer *tr, uint64_t t)
{
	return (double)(t - tr->first) / 1e6;
}

static void check_fences(struct tracer *tr)
{
	struct ring_trace_result *res = tr->res;
	if (tr->ng > 1)
		qsort(tr->g, tr->ng, sizeof *tr->g, by_fence);
	for (size_t i = 1; i < tr->ng; i++)
		if (tr->g[i].fence == tr->g[i - 1].fence) {
			res->dup_fences++;
			if (res->dup_fences <= LIST_MAX && !tr->opts->json)
				fprintf(tr->out, "VIOLATION fence %" PRIu64 ":%" PRIu64
					" granted twice (n%u and n%u)\n", tr->g[i].fence >> 32,
					tr->g[i].fence & 0xffffffffu, tr->g[i - 1].node, tr->g[i].node);
		}
	/* Along the token's path (epoch, then hop), fences only grow. */
	if (tr->ng > 1)
		qsort(tr->g, tr->ng, sizeof *tr->g, by_path);
	for (size_t i = 1; i < tr->ng; i++) {
		const struct grant *p = &tr->g[i - 1], *g = &tr->g[i];
		if (p->epoch != g->epoch || p->seq < 0 || g->seq < 0)
			continue;
		if (g->fence <= p->fence) {
			res->backwards++;
			if (res->backwards <= LIST_MAX && !tr->opts->json)
				fprintf(tr->out, "VIOLATION fence went back along the token's path: "
					"n%u hop %" PRId64 " fence %" PRIu64 ":%" PRIu64 " after n%u hop %"
					PRId64 " fence %" PRIu64 ":%" PRIu64 "\n", g->node, g->seq,
					g->fence >> 32, g->fence & 0xffffffffu, p->node, p->seq,
					p->fence >> 32, p->fence & 0xffffffffu);
		}
	}
}

static void check_overlaps(struct tracer *tr)
{
	struct ring_trace_result *res = tr->res;
	if (tr->ng > 1)
		qsort(tr->g, tr->ng, sizeof *tr->g, by_start);
	size_t reach = 0; /* the grant reaching furthest so far */
	for (size_t i = 1; i < tr->ng; i++) {
		const struct grant *g = &tr->g[i], *p = &tr->g[reach];
		if (g->start < p->end && p->node != g->node) {
			uint64_t until = g->end < p->end ? g->end : p->end;
			uint64_t d = until - g->start;
			res->overlaps++;
			if (d > res->worst_overlap_us)
				res->worst_overlap_us = d;
			if (res->overlaps <= LIST_MAX && !tr->opts->json)
				fprintf(tr->out, "%s n%u fence %" PRIu64 ":%" PRIu64
					" [%.3f .. %.3f s] overlaps n%u fence %" PRIu64 ":%" PRIu64
					" [%.3f .. %.3f s]%s\n",
					tr->opts->allow_overlap ? "overlap  " : "VIOLATION", g->node,
					g->fence >> 32, g->fence & 0xffffffffu, rel(tr, g->start),
					rel(tr, g->end), p->node, p->fence >> 32, p->fence & 0xffffffffu,
					rel(tr, p->start), rel(tr, p->end),
					g->fence > p->fence ? "; the newer fence wins at the resource"
							    : "; the older grant came later: its writes are refused once the newer one wrote");
		}
		if (g->end > p->end)
			reach = i;
	}
}

/* A critical region its log does not end (no cs_exit: the member died in
 * it) lasted until the crash, as the others' logs date it. */
static void crash_ends(struct tracer *tr)
{
	uint64_t at;
	for (size_t i = 0; i < tr->ng; i++) {
		struct grant *g = &tr->g[i];
		if (!g->ended && ring_trace_faults_crashed(tr->faults, g->node, g->start, &at) &&
		    at > g->end) {
			g->end = at;
			note_seen(tr, g->node, at);
		}
	}
}

static void print_gap(void *arg, uint64_t from, uint64_t len)
{
	struct tracer *tr = arg;
	if (tr->res->gaps < LIST_MAX && !tr->opts->json)
		fprintf(tr->out, "no token seen for %.3f s from %.3f s\n", (double)len / 1e6,
			rel(tr, from));
	tr->res->gaps++;
}

/* A critical region in progress, or a parked token, is the token at its
 * holder, heartbeats or not (they are not logged): trace_gaps.c. */
static int check_gaps(struct tracer *tr)
{
	struct ring_trace_span *held = malloc((tr->ng + 1) * sizeof *held);
	if (!held)
		return -RING_ENOMEM;
	for (size_t i = 0; i < tr->ng; i++)
		held[i] = (struct ring_trace_span){tr->g[i].start, tr->g[i].end};
	tr->res->gaps = 0;
	long n = ring_trace_gaps_check(tr->gaps, tr->faults, tr->last, held, tr->ng,
				       tr->opts->gap_ms * 1000, &tr->res->longest_gap_us, print_gap, tr);
	free(held);
	return n < 0 ? (int)n : 0;
}

/* Every fault, from faults.log or inferred from the logs (trace_faults.c),
 * with the time to the next grant anywhere: resolved before the checks
 * (a crash ends its member's region and park), printed after them. */
static int resolve_faults(struct tracer *tr)
{
	struct ring_trace_result *res = tr->res;
	struct ring_trace_fault_totals tot;
	int rc = ring_trace_faults_resolve(tr->faults, &tot);
	if (rc < 0)
		return rc;
	res->incidents = tot.listed_count;
	res->worst_recovery_us = tot.listed_slowest_us;
	res->faults = tot.faults;
	res->faults_listed = tot.listed;
	res->faults_inferred = tot.inferred;
	res->faults_unrecovered = tot.unrecovered;
	res->slowest_recovery_us = tot.slowest_us;
	return 0;
}

static void report(struct tracer *tr)
{
	struct ring_trace_result *r = tr->res;
	size_t members = 0;
	for (size_t i = 1; i < 65536; i++)
		members += tr->nodes[i];
	r->members = members;
	r->epochs = tr->nepochs;
	if (tr->opts->json) {
		json_t *o = json_pack(
			"{s:s, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			"s:I, s:f, s:I, s:f, s:I, s:f}",
			"verdict", r->violation ? "violation" : "ok", "files", (json_int_t)r->files,
			"events", (json_int_t)r->events, "unparsed", (json_int_t)r->unparsed,
			"members", (json_int_t)members, "seconds",
			tr->last > tr->first ? (double)(tr->last - tr->first) / 1e6 : 0.0, "grants",
			(json_int_t)r->grants, "epochs", (json_int_t)r->epochs, "regenerations",
			(json_int_t)r->regenerations, "skips", (json_int_t)r->skips, "rejoins",
			(json_int_t)r->rejoins, "stale_drops", (json_int_t)r->stale_drops,
			"duplicate_fences", (json_int_t)r->dup_fences, "backward_fences",
			(json_int_t)r->backwards, "stale_grants", (json_int_t)r->stale_grants,
			"overlaps", (json_int_t)r->overlaps, "worst_overlap_s",
			(double)r->worst_overlap_us / 1e6, "gaps", (json_int_t)r->gaps,
			"longest_gap_s", (double)r->longest_gap_us / 1e6, "incidents",
			(json_int_t)r->incidents, "worst_recovery_s",
			(double)r->worst_recovery_us / 1e6);
		if (o) {
			/* Added after the fields above, which keep their meaning:
			 * incidents and worst_recovery_s are faults.log's alone. */
			json_object_set_new(o, "faults", json_integer((json_int_t)r->faults));
			json_object_set_new(o, "faults_listed",
					    json_integer((json_int_t)r->faults_listed));
			json_object_set_new(o, "faults_inferred",
					    json_integer((json_int_t)r->faults_inferred));
			json_object_set_new(o, "faults_unrecovered",
					    json_integer((json_int_t)r->faults_unrecovered));
			json_object_set_new(o, "slowest_recovery_s",
					    json_real((double)r->slowest_recovery_us / 1e6));
			json_t *list = ring_trace_faults_json(tr->faults, tr->first, FAULT_JSON_MAX);
			json_object_set_new(o, "fault_list", list ? list : json_array());
			json_dumpf(o, tr->out, JSON_COMPACT);
			fputc('\n', tr->out);
			json_decref(o);
		}
		return;
	}
	fprintf(tr->out,
		"trace: %zu logs, %zu events (%zu unreadable lines), %zu members, %.3f s\n"
		"  grants %zu in %zu epochs; regenerations %zu, skips %zu, rejoins %zu, "
		"stale tokens dropped %zu, pauses %zu\n"
		"  fences granted twice: %zu; fences backwards along the token's path: %zu; "
		"grants under an old epoch: %zu\n"
		"  overlapping critical regions: %zu (longest %.3f s)%s\n"
		"  stretches with no token seen over %" PRIu64 " ms: %zu (longest %.3f s)\n"
		"  faults: %zu (%zu from faults.log, %zu inferred from the logs; %zu with no grant "
		"after them) - slowest recovery to the next grant %.3f s\n"
		"verdict: %s\n",
		r->files, r->events, r->unparsed, members,
		tr->last > tr->first ? (double)(tr->last - tr->first) / 1e6 : 0.0, r->grants,
		r->epochs, r->regenerations, r->skips, r->rejoins, r->stale_drops, r->pauses,
		r->dup_fences, r->backwards, r->stale_grants, r->overlaps,
		(double)r->worst_overlap_us / 1e6,
		r->overlaps ? (tr->opts->allow_overlap ? " - allowed: fencing keeps the resource safe"
						       : " - not allowed")
			    : "",
		tr->opts->gap_ms, r->gaps, (double)r->longest_gap_us / 1e6, r->faults,
		r->faults_listed, r->faults_inferred, r->faults_unrecovered,
		(double)r->slowest_recovery_us / 1e6,
		r->violation ? "VIOLATION" : "OK: mutual exclusion and fencing held");
}

static void tracer_free(struct tracer *tr)
{
	if (!tr)
		return;
	ring_trace_faults_free(tr->faults);
	ring_trace_gaps_free(tr->gaps);
	free(tr->g);
	free(tr->f);
	free(tr);
}

/* Reads FILES and resolves their faults into *TRP. Returns 0, or
 * -RING_EIO or -RING_ENOMEM with ERR set. */
static int tracer_read(const char *const *files, size_t n, const struct ring_trace_opts *opts,
		       FILE *out, struct ring_trace_result *res, struct tracer **trp, char *err,
		       size_t errlen)
{
	struct tracer *tr = calloc(1, sizeof *tr);
	*trp = NULL;
	if (tr) {
		tr->faults = ring_trace_faults_new();
		tr->gaps = ring_trace_gaps_new();
	}
	if (!tr || !tr->faults || !tr->gaps) {
		tracer_free(tr);
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	tr->res = res;
	tr->opts = opts;
	tr->out = out;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = read_file(tr, files[i], err, errlen);
		res->files++;
	}
	if (rc == 0 && (tr->faults_oom || resolve_faults(tr) < 0)) {
		snprintf(err, errlen, "out of memory");
		rc = -RING_ENOMEM;
	}
	if (rc < 0) {
		tracer_free(tr);
		return rc;
	}
	*trp = tr;
	return 0;
}

struct ring_trace_view {
	struct tracer *tr;
};

static void no_gap(void *arg, uint64_t from, uint64_t len)
{
	(void)arg, (void)from, (void)len;
}

struct ring_trace_view *ring_trace_view_read(const char *const *files, size_t n, char *err,
					     size_t errlen)
{
	static const struct ring_trace_opts quiet = {.json = true}; /* prints nothing */
	struct ring_trace_view *v = calloc(1, sizeof *v);
	struct ring_trace_result *res = calloc(1, sizeof *res);
	if (!v || !res || tracer_read(files, n, &quiet, NULL, res, &v->tr, err, errlen) < 0) {
		if (!v || !res)
			snprintf(err, errlen, "out of memory");
		free(v);
		free(res);
		return NULL;
	}
	crash_ends(v->tr);
	uint64_t longest;
	if (ring_trace_gaps_check(v->tr->gaps, v->tr->faults, v->tr->last, NULL, 0, UINT64_MAX, &longest,
				  no_gap, NULL) < 0 || v->tr->faults_oom) {
		snprintf(err, errlen, "out of memory");
		ring_trace_view_free(v);
		return NULL;
	}
	return v;
}

void ring_trace_view_free(struct ring_trace_view *v)
{
	if (!v)
		return;
	if (v->tr)
		free(v->tr->res);
	tracer_free(v->tr);
	free(v);
}

bool ring_trace_view_crashed(const struct ring_trace_view *v, uint32_t node, uint64_t t,
			     uint64_t *at)
{
	return ring_trace_faults_crashed(v->tr->faults, node, t, at);
}

bool ring_trace_view_park_end(const struct ring_trace_view *v, uint32_t node, uint64_t t,
			      uint64_t *end)
{
	return ring_trace_gaps_park_end(v->tr->gaps, node, t, end);
}

int ring_trace_check(const char *const *files, size_t n, const struct ring_trace_opts *opts,
		     FILE *out, struct ring_trace_result *res, char *err, size_t errlen)
{
	struct ring_trace_result local;
	if (!res)
		res = &local;
	memset(res, 0, sizeof *res);
	struct tracer *tr;
	int rc = tracer_read(files, n, opts, out, res, &tr, err, errlen);
	if (rc < 0)
		return rc;
	crash_ends(tr);
	end_at_faults(tr);
	check_fences(tr);
	check_overlaps(tr);
	if (check_gaps(tr) < 0 || tr->faults_oom) {
		snprintf(err, errlen, "out of memory");
		tracer_free(tr);
		return -RING_ENOMEM;
	}
	if (!opts->json)
		ring_trace_faults_print(tr->faults, tr->first, LIST_MAX, tr->out);
	res->violation = res->dup_fences || res->backwards || res->stale_grants ||
			 (res->overlaps && !opts->allow_overlap);
	report(tr);
	tracer_free(tr);
	return res->violation ? 1 : 0;
}
