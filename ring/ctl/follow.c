/* `ringctl follow`: one column per member, one line per event people watch,
 * time relative to the first line shown. What each line looks like (which
 * events, which fields, which colour) is decided here; reading the files is
 * logread.c's. */
#include "ctl/follow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "ctl/logread.h"

#define COLUMNS_MAX 256 /* a ring has at most 256 members */

enum tone { T_PLAIN, T_WARN, T_BAD, T_DIM, T_NOTE };

/* The events shown, and how. Token hops are sampled (opts.hops); the rest
 * (cs_exit, token_recv, unparking and summons, epoch bookkeeping) only
 * with --all. A park is shown: in a default log (no -v) it is the one
 * line that says where a quiet ring's token is, heartbeating unlogged. */
static const struct {
	const char *name;
	enum tone tone;
	const char *keep[3]; /* fields shown; none listed: all of them */
} shown[] = {
	{"node_start", T_PLAIN, {"ring", "epoch", NULL}},
	{"node_stop", T_PLAIN, {NULL}},
	{"cs_enter", T_PLAIN, {"fence", NULL}},
	{"token_park", T_DIM, {"epoch", NULL}},
	{"lease_expired", T_WARN, {NULL}},
	{"retransmit", T_WARN, {NULL}},
	{"successor_skip", T_WARN, {NULL}},
	{"member_rejoin", T_WARN, {NULL}},
	{"member_leave", T_WARN, {NULL}},
	{"loss_suspect", T_WARN, {NULL}},
	{"election_start", T_WARN, {NULL}},
	{"election_won", T_WARN, {NULL}},
	{"token_regen", T_WARN, {NULL}},
	{"token_stale_drop", T_WARN, {NULL}},
	{"pause_detected", T_WARN, {NULL}},
	{"no_quorum", T_BAD, {NULL}},
	{"config_mismatch", T_BAD, {NULL}},
	{"version_mismatch", T_BAD, {NULL}},
	{"bad_packet", T_BAD, {NULL}},
	{"auth_fail", T_BAD, {NULL}},
	{"leave_timeout", T_BAD, {NULL}},
	{"fatal", T_BAD, {NULL}},
	{"inject", T_PLAIN, {NULL}},
	{"leave_start", T_PLAIN, {NULL}},
};

struct follower {
	const struct ring_follow_opts *o;
	FILE *out;
	uint16_t col[COLUMNS_MAX];
	size_t ncol;
	bool fixed;     /* columns given: new ids are not added */
	bool started;   /* t0 is set */
	uint64_t t0;
	uint64_t passes;
};

static int shown_index(const char *ev)
{
	for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
		if (strcmp(ev, shown[i].name) == 0)
			return (int)i;
	return -1;
}

static const char *paint_on(const struct follower *f, enum tone t)
{
	if (!f->o->color)
		return "";
	switch (t) {
	case T_WARN:
		return "\033[33m";
	case T_BAD:
		return "\033[1;31m";
	case T_DIM:
		return "\033[2m";
	case T_NOTE:
		return "\033[1;36m";
	default:
		return "";
	}
}

static const char *paint_off(const struct follower *f, enum tone t)
{
	return f->o->color && t != T_PLAIN ? "\033[0m" : "";
}

static void header(struct follower *f)
{
	fputs("    time", f->out);
	for (size_t i = 0; i < f->ncol; i++)
		fprintf(f->out, " %u", f->col[i]);
	fputs("   event\n", f->out);
}

/* Adds member ID as a column, in id order; false when there is no room. */
static bool add_column(struct follower *f, uint16_t id)
{
	for (size_t i = 0; i < f->ncol; i++)
		if (f->col[i] == id)
			return true;
	if (f->fixed || f->ncol == COLUMNS_MAX)
		return false;
	size_t i = f->ncol++;
	for (; i > 0 && f->col[i - 1] > id; i--)
		f->col[i] = f->col[i - 1];
	f->col[i] = id;
	return true;
}

/* One field as the text log writes it: fences as epoch:count. */
static void put_field(FILE *out, const char *key, json_t *v)
{
	fprintf(out, " %s=", key);
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		uint64_t n = (uint64_t)json_integer_value(v);
		if (strcmp(key, "fence") == 0)
			fprintf(out, "%" PRIu64 ":%" PRIu64, n >> 32, n & 0xffffffffu);
		else
			fprintf(out, "%" PRIu64, n);
	} else if (json_is_string(v)) {
		fputs(json_string_value(v), out);
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		fputs(s ? s : "?", out);
		free(s);
	}
}

static bool skipped_key(const char *key)
{
	return strcmp(key, "ts") == 0 || strcmp(key, "node") == 0 || strcmp(key, "event") == 0;
}

static void put_fields(FILE *out, const struct ring_logrec *r, const char *const *keep)
{
	if (keep && keep[0]) {
		for (size_t k = 0; k < 3 && keep[k]; k++) {
			json_t *v = json_object_get(r->obj, keep[k]);
			if (v)
				put_field(out, keep[k], v);
		}
		return;
	}
	const char *key;
	json_t *v;
	json_object_foreach(r->obj, key, v) {
		if (!skipped_key(key))
			put_field(out, key, v);
	}
}

static double rel_s(const struct follower *f, uint64_t ts)
{
	return ts >= f->t0 ? (double)(ts - f->t0) / 1e6 : -(double)(f->t0 - ts) / 1e6;
}

/* A line naming no member: a script's note ("event":"note","text":...)
 * or a marker such as the lab's faults. */
static void show_note(struct follower *f, const struct ring_logrec *r)
{
	fprintf(f->out, "%7.2fs  %s>>> ", rel_s(f, r->ts), paint_on(f, T_NOTE));
	const char *text = ring_logrec_str(r, "text");
	if (strcmp(r->event, "note") == 0 && text) {
		fputs(text, f->out);
	} else {
		fputs(r->event, f->out);
		put_fields(f->out, r, NULL);
	}
	fprintf(f->out, "%s\n", paint_off(f, T_NOTE));
}

static void show(struct follower *f, const struct ring_logrec *r)
{
	if (!f->started) {
		f->t0 = r->ts;
		f->started = true;
	}
	if (r->node == 0) {
		show_note(f, r);
		return;
	}
	bool is_pass = strcmp(r->event, "token_pass") == 0;
	int si = shown_index(r->event);
	if (is_pass) {
		if (f->o->hops == 0 || ++f->passes % f->o->hops != 0)
			return;
	} else if (si < 0 && (!f->o->all || strcmp(r->event, "token_recv") == 0)) {
		return;
	}
	uint16_t id = (uint16_t)r->node;
	size_t before = f->ncol;
	bool has_col = add_column(f, id);
	if (f->ncol != before)
		header(f);
	enum tone t = is_pass ? T_DIM : si >= 0 ? shown[si].tone : T_PLAIN;
	fprintf(f->out, "%7.2fs", rel_s(f, r->ts));
	for (size_t i = 0; i < f->ncol; i++) {
		int w = snprintf(NULL, 0, "%u", f->col[i]);
		if (f->col[i] == id)
			fprintf(f->out, " %u", id);
		else
			fprintf(f->out, " %*s", w, ".");
	}
	fprintf(f->out, "   %s%-16s", paint_on(f, t), r->event);
	if (!has_col)
		fprintf(f->out, " node=%u", id);
	put_fields(f->out, r, si >= 0 ? shown[si].keep : NULL);
	if (is_pass)
		fprintf(f->out, "   (1 hop in %u)", f->o->hops);
	fprintf(f->out, "%s\n", paint_off(f, t));
}

/* Every member the files name now, for the first header: one pass over
 * what they hold (streamed, one line in memory at a time). */
static int scan_members(struct follower *f, const char *const *files, size_t n, char *err,
			size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		struct ring_logreader r;
		int rc = ring_logreader_open(&r, files[i], true, err, errlen);
		if (rc < 0)
			return rc;
		struct ring_logrec rec;
		while ((rc = ring_logreader_next(&r, &rec, false)) == 1) {
			if (rec.node)
				add_column(f, (uint16_t)rec.node);
			ring_logrec_clear(&rec);
		}
		ring_logreader_close(&r);
		if (rc < 0) {
			snprintf(err, errlen, "%s: read error", files[i]);
			return rc;
		}
	}
	return 0;
}

/* Prints every complete line the files hold now; returns how many records
 * were read, or a negative error. */
static long drain(struct follower *f, struct ring_logmerge *m, bool final)
{
	long count = 0;
	struct ring_logrec rec;
	int rc;
	while ((rc = ring_logmerge_next(m, &rec, final)) == 1) {
		show(f, &rec);
		ring_logrec_clear(&rec);
		count++;
	}
	fflush(f->out);
	return rc < 0 ? rc : count;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL); /* a signal cuts it short: the loop looks at stop */
}

int ring_follow(const char *const *files, size_t n, const struct ring_follow_opts *opts,
		FILE *out, size_t *skipped, char *err, size_t errlen)
{
	struct follower f = {.o = opts, .out = out};
	if (opts->members && opts->nmembers) {
		for (size_t i = 0; i < opts->nmembers && i < COLUMNS_MAX; i++)
			f.col[f.ncol++] = opts->members[i];
		f.fixed = true;
	} else {
		int rc = scan_members(&f, files, n, err, errlen);
		if (rc < 0)
			return rc;
	}
	header(&f);
	struct ring_logmerge m;
	int rc = ring_logmerge_open(&m, files, n, !opts->once, err, errlen);
	if (rc < 0)
		return rc;
	long got = drain(&f, &m, opts->once);
	/* Following: look again every poll_ms until told to stop; a stop
	 * still prints what was complete by then. */
	unsigned poll = opts->poll_ms ? opts->poll_ms : 100;
	while (got >= 0 && !opts->once && !(opts->stop && *opts->stop)) {
		for (size_t i = 0; i < m.n; i++)
			ring_logreader_recheck(&m.r[i]);
		got = drain(&f, &m, false);
		if (got == 0)
			sleep_ms(poll);
	}
	if (got >= 0 && !opts->once)
		got = drain(&f, &m, false);
	if (skipped)
		*skipped = ring_logmerge_garbage(&m);
	ring_logmerge_close(&m);
	if (got < 0) {
		snprintf(err, errlen, "reading the logs: %s", strerror(errno));
		return (int)got;
	}
	return 0;
}
