/* `ringctl timeline`: from members' JSON logs to one SVG that any browser
 * opens (no script, no external resource). Each element carries a stable
 * class ("cs", "hold", "regen", "crash", ...) that the tests count. Crashes
 * and parked stretches are drawn as trace reads them (trace.h's view: a
 * few words per grant, park and fault). The drawing's memory and output
 * stay bounded whatever the logs' size: every lane keeps a fixed number of
 * pixel-column buckets, and a lane with more events than it can draw one
 * by one is drawn from its buckets instead. */
#include "ctl/timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "ctl/logread.h"
#include "ctl/trace.h"

/* ---- the picture's geometry ---- */

#define WIDTH 1200
#define LEFT 84          /* lane labels */
#define RIGHT 16
#define PLOT (WIDTH - LEFT - RIGHT)
#define BUCKETS (PLOT / 2) /* one bucket per two pixels */
#define TOP 78           /* title, subtitle, axis labels */
#define TIP_MAX 120      /* bytes of a point's tooltip */
#define RUNS_MAX 256     /* runs (start to stop or crash) drawn per lane */
#define NOTES_MAX 200    /* notes (lines naming no member) drawn */

/* The point marks, with their class names, legend text and colours. */
#define MARKS(X)                                                        \
	X(PASS, "pass", "token pass (-v)", "#8a96a8")                   \
	X(RETRANSMIT, "retransmit", "retransmit", "#e6a700")            \
	X(SKIP, "skip", "successor skipped", "#d9731a")                 \
	X(LOSS, "loss", "loss suspected", "#c0392b")                    \
	X(ELECTION, "election", "election", "#8e44ad")                  \
	X(REGEN, "regen", "token regenerated", "#e0218a")               \
	X(JOIN, "join", "start / rejoin", "#1e8449")                    \
	X(LEAVE, "leave", "stop / leave", "#566573")                    \
	X(PAUSE, "pause", "pause detected", "#b7950b")                  \
	X(STALE, "stale", "stale token dropped", "#a04000")             \
	X(LEASE, "lease", "lease expired", "#d35400")                   \
	X(PARK, "park", "token parked", "#5dade2")                      \
	X(INJECT, "inject", "fault injected", "#34495e")                \
	X(TROUBLE, "trouble", "no quorum / bad packet", "#ff0000")      \
	X(CRASH, "crash", "crash (log ends, no node_stop)", "#000000")

enum mark {
#define MARK_ENUM_(e, cls, text, color) M_##e,
	MARKS(MARK_ENUM_)
#undef MARK_ENUM_
	M_COUNT
};

static const struct {
	const char *cls, *text, *color;
} marks[] = {
#define MARK_ROW_(e, cls, text, color) {cls, text, color},
	MARKS(MARK_ROW_)
#undef MARK_ROW_
};

/* Events that become point marks; the rest shape spans or are not drawn. */
static const struct {
	const char *event;
	enum mark mark;
} event_marks[] = {
	{"token_pass", M_PASS},          {"retransmit", M_RETRANSMIT},
	{"successor_skip", M_SKIP},      {"loss_suspect", M_LOSS},
	{"election_start", M_ELECTION},  {"election_won", M_ELECTION},
	{"token_regen", M_REGEN},        {"node_start", M_JOIN},
	{"member_rejoin", M_JOIN},       {"node_stop", M_LEAVE},
	{"member_leave", M_LEAVE},       {"pause_detected", M_PAUSE},
	{"token_stale_drop", M_STALE},   {"lease_expired", M_LEASE},
	{"token_park", M_PARK},          {"inject", M_INJECT},
	{"no_quorum", M_TROUBLE},        {"bad_packet", M_TROUBLE},
	{"auth_fail", M_TROUBLE},        {"config_mismatch", M_TROUBLE},
	{"leave_timeout", M_TROUBLE},    {"version_mismatch", M_TROUBLE},
};

enum span_kind { S_HOLD, S_CS };

struct span {
	uint64_t a, b, fence;
	uint8_t kind;
	bool lease; /* a critical region the lease ended */
};

struct point {
	uint64_t t, len; /* len: a pause's length, drawn as a width */
	uint8_t mark;
	char tip[TIP_MAX];
};

struct run {
	uint64_t a, b;
	enum { END_STOP, END_CRASH, END_OPEN } end;
};

struct lane {
	uint16_t id;
	bool hops; /* its log has token_recv/token_pass (-v) */
	/* What the log said so far (pass 2). */
	bool up, started, holding, in_cs; /* started: this run began with node_start */
	uint64_t run_start, last_ts, hold_start, cs_start, cs_fence;
	/* What is drawn. */
	struct span *spans;
	size_t nspans;
	bool dense_spans;
	struct point *pts;
	size_t npts;
	bool dense_pts;
	size_t npass;
	struct run runs[RUNS_MAX];
	size_t nruns;
	/* Per bucket: events of each mark, and microseconds held / in the
	 * critical region. Always kept; drawn when the lane is dense. */
	uint32_t (*count)[M_COUNT];
	uint64_t (*cover)[2];
};

struct note {
	uint64_t t;
	char tip[TIP_MAX];
};

struct tl {
	const struct ring_timeline_opts *o;
	struct ring_trace_view *view; /* trace's reading: crashes, parks */
	uint64_t first, last, from, to;
	bool any;
	uint16_t *index; /* member id -> lane + 1 */
	struct lane *lanes;
	size_t nlanes;
	size_t pts_cap, spans_cap, pass_cap;
	size_t group; /* buckets drawn as one when aggregating (many lanes) */
	struct note notes[NOTES_MAX];
	size_t nnotes;
	size_t events, skipped, marks;
	bool aggregated;
};

/* ---- bounds ---- */

int ring_timeline_parse_bound(const char *s, struct ring_timeline_bound *b)
{
	memset(b, 0, sizeof *b);
	if (ring_log_parse_ts(s, &b->us)) {
		b->set = b->absolute = true;
		return 0;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		return -1;
	b->us = (uint64_t)llround(v * 1e6);
	b->set = true;
	return 0;
}

static uint64_t bound_us(const struct ring_timeline_bound *b, uint64_t first, uint64_t dflt)
{
	if (!b->set)
		return dflt;
	return b->absolute ? b->us : first + b->us;
}

/* ---- reading ---- */

/* Calls FN on every record of every file, one line in memory at a time. */
static int each_record(struct tl *tl, const char *const *files, size_t n,
		       int (*fn)(struct tl *, const struct ring_logrec *), char *err, size_t errlen)
{
	tl->skipped = 0;
	for (size_t i = 0; i < n; i++) {
		struct ring_logreader r;
		int rc = ring_logreader_open(&r, files[i], false, err, errlen);
		if (rc < 0)
			return rc;
		struct ring_logrec rec;
		while ((rc = ring_logreader_next(&r, &rec, true)) == 1) {
			int frc = fn(tl, &rec);
			ring_logrec_clear(&rec);
			if (frc < 0) {
				rc = frc;
				break;
			}
		}
		tl->skipped += r.garbage + r.truncated;
		ring_logreader_close(&r);
		if (rc < 0) {
			snprintf(err, errlen, "%s: %s", files[i],
				 rc == -RING_ENOMEM ? "out of memory" : "read error");
			return rc;
		}
	}
	return 0;
}

static struct lane *lane_of(struct tl *tl, uint32_t node)
{
	return node && tl->index[node] ? &tl->lanes[tl->index[node] - 1] : NULL;
}

/* Pass 1: the time span, the members, which logs have token hops. */
static int survey(struct tl *tl, const struct ring_logrec *r)
{
	tl->events++;
	if (!tl->any || r->ts < tl->first)
		tl->first = r->ts;
	if (!tl->any || r->ts > tl->last)
		tl->last = r->ts;
	tl->any = true;
	if (!r->node)
		return 0;
	if (!tl->index[r->node]) {
		if (tl->nlanes == 65535)
			return 0;
		struct lane *l = realloc(tl->lanes, (tl->nlanes + 1) * sizeof *l);
		if (!l)
			return -RING_ENOMEM;
		tl->lanes = l;
		memset(&l[tl->nlanes], 0, sizeof *l);
		l[tl->nlanes].id = (uint16_t)r->node;
		tl->index[r->node] = (uint16_t)++tl->nlanes;
	}
	if (strcmp(r->event, "token_recv") == 0 || strcmp(r->event, "token_pass") == 0)
		lane_of(tl, r->node)->hops = true;
	return 0;
}

/* ---- pass 2: what each lane shows ---- */

static size_t bucket_of(const struct tl *tl, uint64_t t)
{
	if (t <= tl->from)
		return 0;
	uint64_t k = (t - tl->from) * BUCKETS / (tl->to - tl->from);
	return k >= BUCKETS ? BUCKETS - 1 : (size_t)k;
}

static bool in_window(const struct tl *tl, uint64_t t)
{
	return t >= tl->from && t <= tl->to;
}

/* Adds [A, B) to the buckets' cover of KIND, clipped to the window. */
static void cover(struct tl *tl, struct lane *l, int kind, uint64_t a, uint64_t b)
{
	if (a < tl->from)
		a = tl->from;
	if (b > tl->to)
		b = tl->to;
	if (b <= a)
		return;
	uint64_t span = tl->to - tl->from;
	for (size_t k = bucket_of(tl, a); k < BUCKETS; k++) {
		uint64_t ka = tl->from + span * k / BUCKETS, kb = tl->from + span * (k + 1) / BUCKETS;
		uint64_t x = a > ka ? a : ka, y = b < kb ? b : kb;
		if (y > x)
			l->cover[k][kind] += y - x;
		if (kb >= b)
			break;
	}
}

static void add_span(struct tl *tl, struct lane *l, uint8_t kind, uint64_t a, uint64_t b,
		     uint64_t fence, bool lease)
{
	if (b < a || b < tl->from || a > tl->to)
		return;
	cover(tl, l, kind, a, b);
	if (l->dense_spans)
		return;
	if (l->nspans == tl->spans_cap) {
		l->dense_spans = true; /* from now on drawn from the buckets */
		tl->aggregated = true;
		return;
	}
	l->spans[l->nspans++] = (struct span){a, b, fence, kind, lease};
}

/* The record as a short text: "event key=value ...". */
static void describe(const struct ring_logrec *r, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", r->event);
	const char *key;
	json_t *v;
	json_object_foreach(r->obj, key, v) {
		if (n >= len || !strcmp(key, "ts") || !strcmp(key, "node") || !strcmp(key, "event"))
			continue;
		if (json_is_integer(v) && strcmp(key, "fence") == 0) {
			uint64_t f = (uint64_t)json_integer_value(v);
			n += (size_t)snprintf(buf + n, len - n, " fence=%" PRIu64 ":%" PRIu64, f >> 32,
					      f & 0xffffffffu);
		} else if (json_is_integer(v)) {
			n += (size_t)snprintf(buf + n, len - n, " %s=%" JSON_INTEGER_FORMAT, key,
					      json_integer_value(v));
		} else if (json_is_string(v)) {
			n += (size_t)snprintf(buf + n, len - n, " %s=%s", key, json_string_value(v));
		}
	}
}

static void add_point(struct tl *tl, struct lane *l, enum mark m, uint64_t t, uint64_t len,
		      const struct ring_logrec *r, const char *tip)
{
	if (!in_window(tl, t))
		return;
	l->count[bucket_of(tl, t)][m]++;
	if (m == M_PASS) {
		l->npass++; /* drawn one by one only while few: see draw_lane */
		if (l->npass > tl->pass_cap)
			tl->aggregated = true;
		return;
	}
	if (l->dense_pts && m != M_CRASH)
		return;
	if (l->npts == tl->pts_cap + RUNS_MAX) /* crashes always fit */
		return;
	if (l->npts >= tl->pts_cap && m != M_CRASH) {
		l->dense_pts = true;
		tl->aggregated = true;
		return;
	}
	struct point *p = &l->pts[l->npts++];
	p->t = t;
	p->len = len;
	p->mark = (uint8_t)m;
	if (tip)
		snprintf(p->tip, sizeof p->tip, "%s", tip);
	else
		describe(r, p->tip, sizeof p->tip);
}

static void end_hold(struct tl *tl, struct lane *l, uint64_t t)
{
	if (l->holding)
		add_span(tl, l, S_HOLD, l->hold_start, t, 0, false);
	l->holding = false;
}

static void end_cs(struct tl *tl, struct lane *l, uint64_t t, bool lease)
{
	if (l->in_cs) {
		add_span(tl, l, S_CS, l->cs_start, t, l->cs_fence, lease);
		/* Without token hops in the log the critical region is the
		 * only time the member surely held the token. */
		if (!l->hops)
			add_span(tl, l, S_HOLD, l->cs_start, t, 0, false);
	}
	l->in_cs = false;
}

/* The run that started at run_start ended at T: by node_stop, or not. */
static void end_run(struct tl *tl, struct lane *l, uint64_t t, int how)
{
	end_cs(tl, l, t, false);
	end_hold(tl, l, t);
	if (l->up && l->nruns < RUNS_MAX && t >= tl->from && l->run_start <= tl->to)
		l->runs[l->nruns++] = (struct run){l->run_start, t, how};
	if (how == END_CRASH) {
		char tip[TIP_MAX];
		snprintf(tip, sizeof tip, "crash: dated by the others' logs; its own log ends %.3f s "
			 "before, without node_stop (kill -9, power, OOM)",
			 (double)(t - l->last_ts) / 1e6);
		add_point(tl, l, M_CRASH, t, 0, NULL, tip);
	}
	l->up = false;
}

/* The lane's run ends with its log (a restart follows, or the files end):
 * a crash where trace dates one, else still running. */
static void end_unstopped(struct tl *tl, struct lane *l)
{
	uint64_t at;
	if (ring_trace_view_crashed(tl->view, l->id, l->last_ts, &at))
		end_run(tl, l, at > l->last_ts ? at : l->last_ts, END_CRASH);
	else
		end_run(tl, l, l->last_ts, END_OPEN);
}

static enum mark mark_of(const char *ev)
{
	for (size_t i = 0; i < sizeof event_marks / sizeof event_marks[0]; i++)
		if (strcmp(ev, event_marks[i].event) == 0)
			return event_marks[i].mark;
	return M_COUNT;
}

static int draw_record(struct tl *tl, const struct ring_logrec *r)
{
	struct lane *l = lane_of(tl, r->node);
	if (!l) {
		if (!r->node && in_window(tl, r->ts) && tl->nnotes < NOTES_MAX) {
			struct note *nt = &tl->notes[tl->nnotes++];
			nt->t = r->ts;
			const char *text = ring_logrec_str(r, "text");
			if (text)
				snprintf(nt->tip, sizeof nt->tip, "%s", text);
			else
				describe(r, nt->tip, sizeof nt->tip);
		}
		return 0;
	}
	const char *ev = r->event;
	uint64_t t = r->ts, v = 0;
	/* ringd logs a line or two before node_start (main.c: auth_off): such
	 * a line belongs to the next run, not to one that died before it. */
	bool preamble = strcmp(ev, "auth_off") == 0 || strcmp(ev, "auth_key") == 0;
	if (strcmp(ev, "node_start") == 0) {
		if (l->up && l->started)
			end_unstopped(tl, l); /* started again: it had died */
		if (!l->up)
			l->run_start = t;
		l->up = l->started = true;
	} else if (!l->up) {
		/* A log that begins mid-run (rotated, or --from cut it), or
		 * the preamble: the run starts at its first line. */
		l->up = true;
		l->started = false;
		l->run_start = t;
	}
	if (!preamble || !l->started)
		l->last_ts = t;
	if (strcmp(ev, "token_recv") == 0 || (strcmp(ev, "token_regen") == 0 && l->hops)) {
		if (!l->holding) {
			l->holding = true;
			l->hold_start = t;
		}
	} else if (strcmp(ev, "token_pass") == 0) {
		end_hold(tl, l, t);
	} else if (strcmp(ev, "token_park") == 0 && !l->hops) {
		/* Parked here, heartbeating, until trace's reading ends it
		 * (an unpark, a crash, the token seen elsewhere: trace_gaps.c). */
		uint64_t end;
		if (ring_trace_view_park_end(tl->view, l->id, t, &end))
			add_span(tl, l, S_HOLD, t, end, 0, false);
	} else if (strcmp(ev, "cs_enter") == 0) {
		end_cs(tl, l, t, false);
		l->in_cs = true;
		l->cs_start = t;
		l->cs_fence = ring_logrec_num(r, "fence", &v) ? v : 0;
	} else if (strcmp(ev, "cs_exit") == 0) {
		end_cs(tl, l, t, false);
	} else if (strcmp(ev, "lease_expired") == 0) {
		end_cs(tl, l, t, true);
	}
	enum mark m = mark_of(ev);
	if (m == M_PAUSE) {
		uint64_t ms = 0;
		ring_logrec_num(r, "ms", &ms);
		add_point(tl, l, m, t, ms * 1000, r, NULL);
	} else if (m != M_COUNT) {
		add_point(tl, l, m, t, 0, r, NULL);
	}
	if (strcmp(ev, "node_stop") == 0)
		end_run(tl, l, t, END_STOP);
	return 0;
}

/* ---- writing ---- */

/* TEXT as XML character data, at most MAX bytes of it, cut at a character
 * boundary; control characters (not allowed in XML 1.0) become '?'. */
static void esc(FILE *f, const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--; /* not inside a UTF-8 sequence */
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20 || c == 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
}

static double x_of(const struct tl *tl, uint64_t t)
{
	if (t < tl->from)
		t = tl->from;
	if (t > tl->to)
		t = tl->to;
	return LEFT + (double)(t - tl->from) * PLOT / (double)(tl->to - tl->from);
}

/* Seconds after the first event, as a label: "12.5 s", or "m:ss". */
static void time_label(char *buf, size_t len, double s, double step)
{
	if (step >= 60) {
		long v = lround(s);
		if (v >= 3600)
			snprintf(buf, len, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
		else
			snprintf(buf, len, "%ld:%02ld", v / 60, v % 60);
		return;
	}
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	snprintf(buf, len, "%.*f s", dec, s);
}

static double lane_height(size_t n)
{
	return n <= 8 ? 34 : n <= 24 ? 24 : 15;
}

static void draw_axis(FILE *f, const struct tl *tl, double y0, double y1)
{
	double span = (double)(tl->to - tl->from) / 1e6;
	double raw = span / 10, step = 1e-6;
	static const double nice[] = {1, 2, 5};
	for (int e = -6; e < 7; e++)
		for (int k = 0; k < 3; k++) {
			double s = nice[k] * pow(10, e);
			if (s <= raw * 1.0000001 || step < 1e-6 * 1.5)
				step = s;
		}
	if (step < 1e-6)
		step = 1e-6;
	double off = (double)(tl->from - tl->first) / 1e6;
	double first_tick = ceil(off / step - 1e-9) * step;
	fputs("<g class=\"axis\">\n", f);
	for (int k = 0; k < 40; k++) {
		double s = first_tick + k * step;
		if (s > off + span + 1e-9)
			break;
		double x = LEFT + (s - off) / (span > 0 ? span : 1) * PLOT;
		char lab[32];
		time_label(lab, sizeof lab, s, step);
		fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			x, y0 - 4, x, y1, x, y0 - 8, lab);
	}
	fputs("</g>\n", f);
}

/* A span drawn alone, with its tooltip. */
static void draw_span(FILE *f, const struct tl *tl, const struct lane *l, const struct span *s,
		      double y, double h)
{
	double x0 = x_of(tl, s->a), x1 = x_of(tl, s->b), ms = (double)(s->b - s->a) / 1e3;
	double w = x1 - x0 < 1 ? 1 : x1 - x0;
	double sy = s->kind == S_HOLD ? y + 2 : y + h * 0.5;
	double sh = h * 0.5 - 2;
	if (s->kind == S_HOLD) {
		fprintf(f, "<rect class=\"hold\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			   "<title>member %u held the token %.3f ms (+%.6f s)</title></rect>\n",
			x0, sy, w, sh, l->id, ms, (double)(s->a - tl->first) / 1e6);
	} else {
		fprintf(f, "<rect class=\"cs\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			   "<title>member %u: a client in the critical region, fence %" PRIu64
			   ":%" PRIu64 " (%" PRIu64 "), %.3f ms (+%.6f s)%s</title></rect>\n",
			x0, sy, w, sh, l->id, s->fence >> 32, s->fence & 0xffffffffu, s->fence, ms,
			(double)(s->a - tl->first) / 1e6, s->lease ? "; the lease expired" : "");
	}
}

/* Bucket sums over the group starting at K. */
static uint64_t group_cover(const struct tl *tl, const struct lane *l, size_t k, int kind)
{
	uint64_t c = 0;
	for (size_t i = k; i < k + tl->group && i < BUCKETS; i++)
		c += l->cover[i][kind];
	return c;
}

static uint32_t group_count(const struct tl *tl, const struct lane *l, size_t k, int m)
{
	uint32_t c = 0;
	for (size_t i = k; i < k + tl->group && i < BUCKETS; i++)
		c += l->count[i][m];
	return c;
}

/* Dense spans: per bucket the share of time covered, in eight steps, runs of
 * equal steps as one rectangle. */
static void draw_cover(FILE *f, const struct tl *tl, const struct lane *l, int kind, double y,
		       double h)
{
	double bucket_us = (double)(tl->to - tl->from) * (double)tl->group / BUCKETS;
	const char *cls = kind == S_HOLD ? "agg-hold" : "agg-cs";
	double sy = kind == S_HOLD ? y + 2 : y + h * 0.5, sh = h * 0.5 - 2;
	for (size_t k = 0; k < BUCKETS;) {
		int level = (int)lround(8.0 * (double)group_cover(tl, l, k, kind) / bucket_us);
		size_t e = k + tl->group;
		while (e < BUCKETS &&
		       (int)lround(8.0 * (double)group_cover(tl, l, e, kind) / bucket_us) == level)
			e += tl->group;
		if (e > BUCKETS)
			e = BUCKETS;
		if (level > 0) {
			if (level > 8)
				level = 8;
			fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				   "fill-opacity=\"%.3f\"><title>member %u %s about %d%% of this stretch</title></rect>\n",
				cls, LEFT + (double)k * PLOT / BUCKETS, sy, (double)(e - k) * PLOT / BUCKETS,
				sh, level / 8.0, l->id,
				kind == S_HOLD ? "held the token" : "had a client in the critical region",
				level * 100 / 8);
		}
		k = e;
	}
}

static void draw_point(FILE *f, struct tl *tl, const struct lane *l, const struct point *p,
		       double y, double h)
{
	double x = x_of(tl, p->t);
	double w = 2;
	if (p->len) {
		/* A pause ended at its log line; it began len earlier. */
		double x0 = x_of(tl, p->t > p->len ? p->t - p->len : 0);
		w = x - x0 < 2 ? 2 : x - x0;
		x = x - w;
	} else {
		x -= 1;
	}
	double py = y, ph = h;
	if (p->mark == M_CRASH) {
		w = 4;
		x = x_of(tl, p->t);
	}
	fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>",
		marks[p->mark].cls, x, py, w, ph);
	fprintf(f, "member %u, +%.6f s: ", l->id, (double)(p->t - tl->first) / 1e6);
	esc(f, p->tip, TIP_MAX);
	fputs("</title></rect>\n", f);
	tl->marks++;
}

/* Dense points: per bucket (group) one mark coloured by its most frequent
 * kind, with every kind's count in the tooltip; in the lane's top third, so
 * that the holding and critical-region cover stays visible below. */
static void draw_agg_points(FILE *f, struct tl *tl, const struct lane *l, double y, double h)
{
	double bucket_s = (double)(tl->to - tl->from) / BUCKETS / 1e6;
	for (size_t k = 0; k < BUCKETS; k += tl->group) {
		int top = -1;
		uint32_t c[M_COUNT];
		for (int m = 0; m < M_COUNT; m++) {
			c[m] = group_count(tl, l, k, m);
			if (m != M_PASS && m != M_CRASH && c[m] && (top < 0 || c[m] > c[top]))
				top = m;
		}
		if (top < 0)
			continue;
		double at = (double)(tl->from - tl->first) / 1e6 + (double)k * bucket_s;
		fprintf(f, "<rect class=\"agg %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\">"
			   "<title>member %u, +%.3f to +%.3f s:",
			marks[top].cls, LEFT + (double)k * PLOT / BUCKETS, y, 2.0 * (double)tl->group, h / 3,
			l->id, at, at + bucket_s * (double)tl->group);
		for (int m = 0; m < M_COUNT; m++)
			if (m != M_PASS && m != M_CRASH && c[m])
				fprintf(f, " %u %s", c[m], marks[m].text);
		fputs("</title></rect>\n", f);
		tl->marks++;
	}
}

/* Token hops: a short tick each while few, else a strip whose darkness is
 * the hop rate per bucket. */
static void draw_passes(FILE *f, struct tl *tl, const struct lane *l, double y, double h)
{
	if (l->npass == 0)
		return;
	double sy = y + h - 4;
	double bucket_s = (double)(tl->to - tl->from) / BUCKETS / 1e6;
	if (l->npass <= tl->pass_cap) {
		for (size_t k = 0; k < BUCKETS; k++)
			if (l->count[k][M_PASS])
				fprintf(f, "<rect class=\"pass\" x=\"%.1f\" y=\"%.1f\" width=\"1\" height=\"4\">"
					   "<title>member %u passed the token %u time(s) here</title></rect>\n",
					LEFT + (double)k * PLOT / BUCKETS, sy, l->id, l->count[k][M_PASS]);
		return;
	}
	uint32_t most = 1;
	for (size_t k = 0; k < BUCKETS; k++)
		if (l->count[k][M_PASS] > most)
			most = l->count[k][M_PASS];
	for (size_t k = 0; k < BUCKETS;) {
		int level = (int)ceil(4.0 * l->count[k][M_PASS] / most);
		size_t e = k + 1;
		while (e < BUCKETS && (int)ceil(4.0 * l->count[e][M_PASS] / most) == level)
			e++;
		if (level > 0)
			fprintf(f, "<rect class=\"agg-pass\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"4\" "
				   "fill-opacity=\"%.2f\"><title>member %u: up to %.0f token passes a second"
				   "</title></rect>\n",
				LEFT + (double)k * PLOT / BUCKETS, sy, (double)(e - k) * PLOT / BUCKETS,
				level / 4.0, l->id, most * level / 4.0 / bucket_s);
		k = e;
	}
}

static void draw_lane(FILE *f, struct tl *tl, const struct lane *l, double y, double h)
{
	fprintf(f, "<g class=\"lane\" id=\"lane-%u\">\n", l->id);
	fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%.1f\">member %u</text>\n", LEFT - 8,
		y + h / 2 + 4, l->id);
	fprintf(f, "<rect class=\"bg\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\"/>\n", LEFT, y,
		PLOT, h);
	for (size_t i = 0; i < l->nruns; i++) {
		const struct run *r = &l->runs[i];
		double x0 = x_of(tl, r->a), x1 = x_of(tl, r->b);
		fprintf(f, "<rect class=\"run\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			   "<title>member %u running, +%.3f to +%.3f s%s</title></rect>\n",
			x0, y, x1 - x0 < 1 ? 1 : x1 - x0, h, l->id, (double)(r->a - tl->first) / 1e6,
			(double)(r->b - tl->first) / 1e6,
			r->end == END_CRASH ? ", then crashed"
			: r->end == END_OPEN ? ", still running at the end of its log"
					     : ", then stopped (node_stop)");
	}
	if (l->dense_spans) {
		draw_cover(f, tl, l, S_HOLD, y, h);
		draw_cover(f, tl, l, S_CS, y, h);
	} else {
		for (size_t i = 0; i < l->nspans; i++)
			draw_span(f, tl, l, &l->spans[i], y, h);
	}
	draw_passes(f, tl, l, y, h);
	if (l->dense_pts)
		draw_agg_points(f, tl, l, y, h);
	for (size_t i = 0; i < l->npts; i++)
		if (!l->dense_pts || l->pts[i].mark == M_CRASH)
			draw_point(f, tl, l, &l->pts[i], y, h);
	fputs("</g>\n", f);
}

/* The legend: the spans, the marks, and the dashed line of a note (a line
 * naming no member: faults.log's) when there are notes. Without F it only
 * counts the rows it takes. */
static int draw_legend(FILE *f, double y, bool notes)
{
	static const struct {
		const char *cls, *text;
	} spans[] = {{"k-run", "member running"},
		     {"k-hold", "holding the token"},
		     {"k-cs", "client in the critical region"}};
	double x = LEFT;
	int row = 0;
	if (f)
		fputs("<g class=\"legend\">\n", f);
	for (size_t i = 0; i < 3 + (size_t)M_COUNT + notes; i++) {
		const char *cls = i < 3 ? spans[i].cls : NULL, *text = i < 3 ? spans[i].text : NULL;
		char kc[32];
		if (i >= 3 + M_COUNT) {
			cls = NULL;
			text = "fault (faults.log)";
		} else if (i >= 3) {
			snprintf(kc, sizeof kc, "k-%s", marks[i - 3].cls);
			cls = kc;
			text = marks[i - 3].text;
		}
		double w = 22 + 6.2 * (double)strlen(text);
		if (x + w > WIDTH - RIGHT) {
			x = LEFT;
			row++;
		}
		double yy = y + row * 18;
		if (f && cls)
			fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\"/>",
				cls, x, yy);
		else if (f)
			fprintf(f, "<line class=\"note k-note\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				   "y2=\"%.1f\"/>", x + 6, yy - 1, x + 6, yy + 11);
		if (f)
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 16, yy + 9, text);
		x += w + 12;
	}
	if (f)
		fputs("</g>\n", f);
	return row + 1;
}

static void write_style(FILE *f)
{
	fputs("<style>\n"
	      "text{font:11px sans-serif;fill:#222}\n"
	      ".title{font:bold 14px sans-serif}.sub{fill:#555}\n"
	      ".label{text-anchor:end}\n"
	      ".tick{stroke:#d5d9e0;stroke-width:1}\n"
	      ".bg{fill:#f7f8fa}.run,.k-run{fill:#e3e8ef}\n"
	      ".hold,.agg-hold,.k-hold{fill:#4a90d9}\n"
	      ".cs,.agg-cs,.k-cs{fill:#27ae60}\n"
	      ".agg-pass{fill:#5d6d7e}\n"
	      ".note{stroke:#17a2b8;stroke-width:1;stroke-dasharray:3,3}\n",
	      f);
	for (int m = 0; m < M_COUNT; m++)
		fprintf(f, ".%s,.k-%s{fill:%s}\n", marks[m].cls, marks[m].cls, marks[m].color);
	fputs(".pause{fill-opacity:.6}\n</style>\n", f);
}

static int render(struct tl *tl, FILE *f)
{
	double lh = lane_height(tl->nlanes), gap = 4;
	double lanes_h = (double)tl->nlanes * (lh + gap);
	double legend_y = TOP + lanes_h + 24;
	int legend_rows = draw_legend(NULL, 0, tl->nnotes > 0);
	double height = legend_y + legend_rows * 18 + 10;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
		   "viewBox=\"0 0 %d %.0f\">\n",
		WIDTH, height, WIDTH, height);
	write_style(f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n", WIDTH,
		height);
	char a[40], b[40], first[40];
	ring_log_format_ts(tl->from, a, sizeof a);
	ring_log_format_ts(tl->to, b, sizeof b);
	ring_log_format_ts(tl->first, first, sizeof first);
	fputs("<text class=\"title\" x=\"10\" y=\"20\">", f);
	esc(f, tl->o->title ? tl->o->title : "ring timeline", 200);
	fprintf(f, "</text>\n<text class=\"sub\" x=\"10\" y=\"38\">%zu members, %s to %s (%.3f s); "
		   "times are seconds after the first event, %s</text>\n",
		tl->nlanes, a, b, (double)(tl->to - tl->from) / 1e6, first);
	bool hops = false;
	for (size_t i = 0; i < tl->nlanes; i++)
		hops |= tl->lanes[i].hops;
	fprintf(f, "<text class=\"sub\" x=\"10\" y=\"54\">%s%s</text>\n",
		hops ? "holding: from token_recv to token_pass (ringd -v)"
		     : "no token hops in these logs (ringd without -v): holding is shown while a "
		       "client is in the critical region or the token is parked",
		tl->aggregated ? "; dense stretches are drawn per pixel column" : "");
	draw_axis(f, tl, TOP, TOP + lanes_h);
	for (size_t i = 0; i < tl->nlanes; i++)
		draw_lane(f, tl, &tl->lanes[i], TOP + (double)i * (lh + gap), lh);
	for (size_t i = 0; i < tl->nnotes; i++) {
		double x = x_of(tl, tl->notes[i].t);
		fprintf(f, "<line class=\"note\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"><title>",
			x, TOP - 4, x, TOP + lanes_h);
		esc(f, tl->notes[i].tip, TIP_MAX);
		fputs("</title></line>\n", f);
	}
	draw_legend(f, legend_y, tl->nnotes > 0);
	fputs("</svg>\n", f);
	return ferror(f) ? -RING_EIO : 0;
}

static int cmp_lane(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static void free_tl(struct tl *tl)
{
	for (size_t i = 0; i < tl->nlanes; i++) {
		free(tl->lanes[i].spans);
		free(tl->lanes[i].pts);
		free(tl->lanes[i].count);
		free(tl->lanes[i].cover);
	}
	free(tl->lanes);
	free(tl->index);
}

/* After the survey: lanes in id order (the index follows them), the time
 * window, and what each lane may draw one by one. */
static void lay_out(struct tl *tl)
{
	qsort(tl->lanes, tl->nlanes, sizeof *tl->lanes, cmp_lane);
	for (size_t i = 0; i < tl->nlanes; i++)
		tl->index[tl->lanes[i].id] = (uint16_t)(i + 1);
	tl->from = bound_us(&tl->o->from, tl->first, tl->first);
	tl->to = bound_us(&tl->o->to, tl->first, tl->last);
	if (tl->to <= tl->from)
		tl->to = tl->from + 1000; /* one event, or an empty window: a millisecond */
	/* What one lane may draw one by one: the SVG stays some hundred
	 * kilobytes at most for 64 members. */
	size_t nl = tl->nlanes ? tl->nlanes : 1;
	tl->pts_cap = 4000 / nl > 60 ? 4000 / nl : 60;
	tl->spans_cap = 3000 / nl > 40 ? 3000 / nl : 40;
	tl->pass_cap = BUCKETS / 4;
	/* Aggregated marks: at most about 6000 over all lanes, so that 64
	 * dense lanes still make a file of a few megabytes at most. */
	tl->group = (nl * BUCKETS + 5999) / 6000;
}

static int alloc_lanes(struct tl *tl, char *err, size_t errlen)
{
	for (size_t i = 0; i < tl->nlanes; i++) {
		struct lane *l = &tl->lanes[i];
		l->spans = calloc(tl->spans_cap, sizeof *l->spans);
		l->pts = calloc(tl->pts_cap + RUNS_MAX, sizeof *l->pts);
		l->count = calloc(BUCKETS, sizeof *l->count);
		l->cover = calloc(BUCKETS, sizeof *l->cover);
		if (!l->spans || !l->pts || !l->count || !l->cover) {
			snprintf(err, errlen, "out of memory");
			return -RING_ENOMEM;
		}
	}
	return 0;
}

/* A member still up when its log ends crashed if the others' logs say so
 * (trace_faults.c), else it may still be running. */
static void end_open_runs(struct tl *tl)
{
	for (size_t i = 0; i < tl->nlanes; i++)
		if (tl->lanes[i].up)
			end_unstopped(tl, &tl->lanes[i]);
}

/* The picture into the file OUT; *SIZE its length in bytes. */
static int write_svg(struct tl *tl, const char *out, long *size, char *err, size_t errlen)
{
	FILE *f = fopen(out, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", out, strerror(errno));
		return -RING_EIO;
	}
	int rc = render(tl, f);
	*size = ftell(f);
	if (fclose(f) != 0 || rc < 0) {
		snprintf(err, errlen, "%s: %s", out, strerror(errno));
		return -RING_EIO;
	}
	return 0;
}

int ring_timeline_write(const char *const *files, size_t n, const struct ring_timeline_opts *opts,
			const char *out, struct ring_timeline_result *res, char *err, size_t errlen)
{
	struct tl *tl = calloc(1, sizeof *tl);
	if (!tl || !(tl->index = calloc(65536, sizeof *tl->index))) {
		free(tl);
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	tl->o = opts;
	/* Trace's reading first, then two passes over the files: the lanes
	 * and their buckets are sized by what the first one finds. */
	int rc = 0;
	if (!(tl->view = ring_trace_view_read(files, n, err, errlen)))
		rc = -RING_EIO;
	if (rc == 0)
		rc = each_record(tl, files, n, survey, err, errlen);
	if (rc == 0 && !tl->any) {
		snprintf(err, errlen, "no log records in the files given");
		rc = -RING_EIO;
	}
	if (rc < 0)
		goto out;
	lay_out(tl);
	if ((rc = alloc_lanes(tl, err, errlen)) < 0)
		goto out;
	if ((rc = each_record(tl, files, n, draw_record, err, errlen)) < 0)
		goto out;
	end_open_runs(tl);
	long size;
	if ((rc = write_svg(tl, out, &size, err, errlen)) < 0)
		goto out;
	if (res) {
		*res = (struct ring_timeline_result){
			.members = tl->nlanes,
			.events = tl->events,
			.skipped = tl->skipped,
			.marks = tl->marks,
			.span_us = tl->to - tl->from,
			.bytes = size > 0 ? (size_t)size : 0,
			.aggregated = tl->aggregated,
		};
	}
out:
	ring_trace_view_free(tl->view);
	free_tl(tl);
	free(tl);
	return rc;
}
