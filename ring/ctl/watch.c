/* `ringctl watch`'s pure view: rounds of status answers in, rates, down
 * and restarted members, the token's place and the rendered lines out.
 * See watch.h; watch_loop.c drives it. */
#include "ctl/watch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/node.h"
#include "ctl/lease_advice.h"

void ring_watch_init(struct ring_watch *w, const struct ring_layout *l)
{
	memset(w, 0, sizeof *w);
	w->l = l;
}

/* Whether any counter is lower in B than in A: only a new process (or a
 * wiped one) counts backwards. */
static bool counters_went_down(const struct ring_counters *a, const struct ring_counters *b)
{
#define RING_WATCH_LOWER_(name) \
	if (b->name < a->name)  \
		return true;
	RING_COUNTERS(RING_WATCH_LOWER_)
#undef RING_WATCH_LOWER_
	return false;
}

static void answered(struct ring_watch_member *m, const struct ring_msg_status_resp *r,
		     uint64_t now_us)
{
	if (m->ever && counters_went_down(&m->last.counters, &r->counters)) {
		/* A rate against the old process's counters would be
		 * negative nonsense: start again from this answer. */
		m->rated = false;
		m->restarted_until_us = now_us + RING_WATCH_RESTART_US;
		m->restarts++;
	} else if (m->ever && now_us > m->last_us) {
		double dt = (double)(now_us - m->last_us) / 1e6;
		m->grants_s = (double)(r->counters.cs_entries - m->last.counters.cs_entries) / dt;
		m->hops_s = (double)(r->counters.tokens_passed - m->last.counters.tokens_passed) / dt;
		m->rated = true;
	}
	m->up = true;
	m->ever = true;
	m->last = *r;
	m->last_us = now_us;
}

void ring_watch_update(struct ring_watch *w, const struct ring_msg_status_resp *const *answers,
		       uint64_t now_us)
{
	for (size_t i = 0; i < w->l->n; i++) {
		struct ring_watch_member *m = &w->m[i];
		m->hold_known = false; /* until ring_watch_holds says, for this round */
		if (answers[i]) {
			answered(m, answers[i], now_us);
			continue;
		}
		/* Silent this round: down at once, and its rates with it (a
		 * member that comes back gets new ones from its next answers). */
		if (m->up || w->rounds == 0)
			m->down_since_us = now_us;
		m->up = false;
		m->rated = false;
	}
	w->now_us = now_us;
	w->rounds++;
}

void ring_watch_advice(struct ring_watch *w, const struct ring_msg_advice_resp *const *answers)
{
	struct ring_advice a;
	ring_lease_advice_collect(w->l, answers, &a);
	if (a.members == 0)
		return; /* nobody answered: the last advice stands */
	w->advice = a;
	w->advised = true;
}

void ring_watch_holds(struct ring_watch *w, const struct ring_msg_hold_resp *const *answers)
{
	for (size_t i = 0; i < w->l->n; i++) {
		struct ring_watch_member *m = &w->m[i];
		m->hold_known = answers[i] != NULL;
		if (m->hold_known)
			m->hold = *answers[i];
	}
}

void ring_watch_lock(const struct ring_watch *w, struct ring_watch_lock *lk)
{
	memset(lk, 0, sizeof *lk);
	for (size_t i = 0; i < w->l->n; i++) {
		const struct ring_watch_member *m = &w->m[i];
		/* A hold answer from a member whose status did not come is
		 * not counted: the view is of the members that are up. */
		if (!m->up)
			continue;
		if (!m->hold_known) {
			lk->unknown++;
			continue;
		}
		if (m->hold.fence == 0)
			continue;
		if (lk->holders++ == 0) {
			lk->index = i;
			lk->fence = m->hold.fence;
			lk->held_ms = m->hold.held_ms;
		}
	}
}

void ring_watch_token(const struct ring_watch *w, struct ring_watch_token *t)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < w->l->n; i++) {
		const struct ring_watch_member *m = &w->m[i];
		if (!m->up || !(m->last.flags & RING_STATUS_HAS_TOKEN))
			continue;
		if (t->holders++ == 0) {
			t->index = i;
			t->parked = m->last.flags & RING_STATUS_PARKED;
		}
	}
}

size_t ring_watch_up(const struct ring_watch *w)
{
	size_t up = 0;
	for (size_t i = 0; i < w->l->n; i++)
		up += w->m[i].up;
	return up;
}

void ring_watch_rates(const struct ring_watch *w, double *grants_s, double *hops_s)
{
	*grants_s = *hops_s = 0;
	for (size_t i = 0; i < w->l->n; i++)
		if (w->m[i].up && w->m[i].rated) {
			*grants_s += w->m[i].grants_s;
			*hops_s += w->m[i].hops_s;
		}
}

/* ---- rendering ---- */

/* The text as snprintf builds it: what fits in BUF, the length all of it
 * needs in NEED. */
struct out {
	char *buf;
	size_t len, need;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->need < o->len) {
		size_t room = o->len - 1 - o->need;
		memcpy(o->buf + o->need, s, n < room ? n : room);
		o->buf[o->need + (n < room ? n : room)] = '\0';
	}
	o->need += n;
}

/* What snprintf wrote into a buffer of CAP, returning N. */
static void put_n(struct out *o, const char *s, int n, size_t cap)
{
	put(o, s, n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1);
}

/* One screen line, cut to COLS (0: whole); ours are ASCII, so a byte is a
 * column. */
static void line(struct out *o, unsigned cols, const char *fmt, ...)
{
	char l[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l, sizeof l, fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof l ? (size_t)n : sizeof l - 1;
	while (len > 0 && l[len - 1] == ' ')
		len--; /* no trailing blanks: a cut line ends where its text does */
	if (cols && len > cols)
		len = cols;
	put(o, l, len);
	put(o, "\n", 1);
}

static void fence_str(char *b, size_t n, uint64_t fence)
{
	snprintf(b, n, "%llu:%llu", (unsigned long long)(fence >> 32),
		 (unsigned long long)(fence & 0xffffffffu));
}

static void token_str(const struct ring_watch *w, char *b, size_t n, bool line_form)
{
	struct ring_watch_token t;
	ring_watch_token(w, &t);
	if (t.holders == 0) {
		snprintf(b, n, line_form ? "token=- parked=-" : "no token seen");
		return;
	}
	size_t off = 0;
	off += (size_t)snprintf(b, n, line_form ? "token=" : t.holders > 1 ? "token at " :
				t.parked ? "token parked at " : "token at ");
	for (size_t i = 0, k = 0; i < w->l->n && off < n; i++)
		if (w->m[i].up && (w->m[i].last.flags & RING_STATUS_HAS_TOKEN))
			off += (size_t)snprintf(b + off, n - off, "%s%u", k++ ? "," : "",
						w->l->members[i].id);
	if (off < n && line_form)
		snprintf(b + off, n - off, " parked=%s", t.parked && t.holders == 1 ? "yes" : "no");
	else if (off < n && t.holders > 1)
		snprintf(b + off, n - off, " (%zu members say they have it!)", t.holders);
}

/* How long a grant has lasted, in a few characters: tenths of a second
 * while that is short, whole seconds after. */
static void held_str(char *b, size_t n, uint32_t ms)
{
	if (ms < 100000u)
		snprintf(b, n, "%.1f s", ms / 1000.0);
	else
		snprintf(b, n, "%u s", ms / 1000u);
}

/* The ids of the members up whose client is in the region, "20,30". */
static void lock_ids(const struct ring_watch *w, char *b, size_t n)
{
	size_t off = 0;
	b[0] = '\0';
	for (size_t i = 0, k = 0; i < w->l->n && off < n; i++) {
		const struct ring_watch_member *m = &w->m[i];
		if (m->up && m->hold_known && m->hold.fence)
			off += (size_t)snprintf(b + off, n - off, "%s%u", k++ ? "," : "",
						w->l->members[i].id);
	}
}

/* Who holds the lock. Screen: "lock held at member 20 for 2.4 s (fence
 * 7:12)", "lock free", "lock ?" when no member up says. Line: "lock=20
 * held_ms=2400 lock_fence=7:12", "lock=free", "lock=?". */
static void lock_str(const struct ring_watch *w, char *b, size_t n, bool line_form)
{
	struct ring_watch_lock lk;
	ring_watch_lock(w, &lk);
	char ids[1200], fence[32], held[24];
	if (lk.holders == 0) {
		bool some = ring_watch_up(w) > lk.unknown; /* at least one member said */
		if (line_form)
			snprintf(b, n, "lock=%s", some ? "free" : "?");
		else if (!some)
			snprintf(b, n, "lock ?");
		else if (lk.unknown)
			snprintf(b, n, "lock free (%zu up do not say: older ringd)", lk.unknown);
		else
			snprintf(b, n, "lock free");
		return;
	}
	lock_ids(w, ids, sizeof ids);
	fence_str(fence, sizeof fence, lk.fence);
	held_str(held, sizeof held, lk.held_ms);
	if (line_form)
		snprintf(b, n, "lock=%s held_ms=%u lock_fence=%s", ids, lk.held_ms, fence);
	else if (lk.holders > 1)
		snprintf(b, n, "lock held at members %s (%zu members say a client is in the region!)",
			 ids, lk.holders);
	else
		snprintf(b, n, "lock held at member %s for %s (fence %s)", ids, held, fence);
}

/* A rate in at most 6 characters, so the title's width does not depend on
 * how busy the ring is: 12.3, 45.6k, 7.8M. */
static void rate_compact(char *b, size_t n, double v)
{
	if (v < 999.95)
		snprintf(b, n, "%.1f", v);
	else if (v < 999950.0)
		snprintf(b, n, "%.1fk", v / 1e3);
	else if (v < 999950000.0)
		snprintf(b, n, "%.1fM", v / 1e6);
	else
		snprintf(b, n, ">1G");
}

/* The title: ring name, key, time, members up and the ring's rates. Only
 * the name can be long (63 characters), so it is what gives way: cut
 * with "..." until the line fits COLS, the figures kept whole. */
static void title(struct out *o, const struct ring_watch *w, unsigned cols, const char *stamp)
{
	char g[16], h[16], rest[256];
	double gs, hs;
	ring_watch_rates(w, &gs, &hs);
	rate_compact(g, sizeof g, gs);
	rate_compact(h, sizeof h, hs);
	int r = snprintf(rest, sizeof rest, "\" (%s)  %s  %zu/%zu up  %s grants/s  %s hops/s",
			 w->authenticated ? "keyed" : "no key", stamp, ring_watch_up(w), w->l->n, g,
			 h);
	size_t rest_len = r < 0 ? 0 : (size_t)r;
	const char *name = w->l->name;
	int name_len = (int)strlen(name);
	size_t fixed = strlen("ring \"") + rest_len;
	if (cols && fixed + (size_t)name_len > cols) {
		size_t room = cols > fixed ? cols - fixed : 0;
		int keep = room > 4 ? (int)(room - 3) : 1; /* at least a letter and "..." */
		if (keep < name_len) {
			line(o, cols, "ring \"%.*s...%s", keep, name, rest);
			return;
		}
	}
	line(o, cols, "ring \"%s%s", name, rest);
}

static bool restarted(const struct ring_watch *w, const struct ring_watch_member *m)
{
	return m->restarted_until_us && w->now_us < m->restarted_until_us;
}

static void rate_str(char *b, size_t n, const struct ring_watch_member *m, double v)
{
	if (m->rated)
		snprintf(b, n, "%.1f", v);
	else
		snprintf(b, n, "-");
}

static void screen_member(struct out *o, const struct ring_watch *w, size_t i, unsigned cols)
{
	const struct ring_watch_member *m = &w->m[i];
	uint16_t id = w->l->members[i].id;
	if (!m->up) {
		double s = (double)(w->now_us - m->down_since_us) / 1e6;
		line(o, cols, "%4u %-9s %s %.1f s", id, "down",
		     m->ever ? "silent for" : "never answered,", s);
		return;
	}
	const struct ring_msg_status_resp *r = &m->last;
	char fence[32], g[16], h[16];
	fence_str(fence, sizeof fence, r->fence);
	rate_str(g, sizeof g, m, m->grants_s);
	rate_str(h, sizeof h, m, m->hops_s);
	const char *tok = !(r->flags & RING_STATUS_HAS_TOKEN) ? "" :
			  (r->flags & RING_STATUS_PARKED) ? "parked" : "here";
	line(o, cols, "%4u %-9s %-6s %6u %11s %3u %8s %7s %4llu %5llu %5llu  %s", id,
	     ring_state_name((enum ring_state)r->state), tok, r->epoch, fence, r->queued, g, h,
	     (unsigned long long)r->counters.retransmits, (unsigned long long)r->counters.skips,
	     (unsigned long long)r->counters.elections, restarted(w, m) ? "restarted" : "");
}

/* The advice in a few words; LINE_FORM: "advice lease_ms=2000
 * max_hold_ms=2000 holds=43 pause_max_ms=499". */
static void advice_str(const struct ring_watch *w, char *b, size_t n, bool line_form)
{
	const struct ring_advice *a = &w->advice;
	if (!a->enough) {
		snprintf(b, n, line_form ? "advice not-enough-data holds=%llu" :
			 "lease advice: not enough data (%llu holds, 20 needed)",
			 (unsigned long long)a->holds);
		return;
	}
	if (line_form)
		snprintf(b, n, "advice lease_ms=%u max_hold_ms=%u holds=%llu pause_max_ms=%llu",
			 a->lease_ms, a->max_hold_ms, (unsigned long long)a->holds,
			 (unsigned long long)(a->pause_us / 1000u));
	else
		snprintf(b, n, "lease advice: lease_ms >= %u, max_hold_ms >= %u%s (%llu holds, longest "
			 "pause %llu ms; ringctl lease-advice says why)", a->lease_ms, a->max_hold_ms,
			 a->max_hold_optional ? " or 0" : "", (unsigned long long)a->holds,
			 (unsigned long long)(a->pause_us / 1000u));
}

static void render_screen(struct out *o, const struct ring_watch *w, unsigned cols, unsigned rows,
			  const char *stamp)
{
	const struct ring_layout *l = w->l;
	char tok[1200], lk[1400];
	token_str(w, tok, sizeof tok, false);
	lock_str(w, lk, sizeof lk, false);
	size_t up = ring_watch_up(w);
	/* Whether datagrams are authenticated comes first: a narrow terminal
	 * cuts the end of the line. */
	title(o, w, cols, stamp);
	/* The lock before the token: who is in the region is what a reader
	 * looks for, and a cut line keeps it. */
	line(o, cols, "%s  %s", lk, tok);
	/* Within 80 columns for everyday numbers (the terminal's width, less
	 * one: watch_loop.c); larger ones push the columns right. */
	line(o, cols, "%4s %-9s %-6s %6s %11s %3s %8s %7s %4s %5s %5s", "id", "state", "token",
	     "epoch", "fence", "q", "grants/s", "hops/s", "retx", "skips", "elect");
	size_t shown = l->n;
	if (rows && l->n + 3 > rows)
		shown = rows > 4 ? rows - 4 : 0; /* the last line says what is left out */
	for (size_t i = 0; i < shown; i++)
		screen_member(o, w, i, cols);
	if (shown < l->n) {
		size_t down = 0;
		for (size_t i = shown; i < l->n; i++)
			down += !w->m[i].up;
		if (rows >= 4)
			line(o, cols, "  ... %zu more members (%zu down); a taller terminal shows them",
			     l->n - shown, down);
	}
	if (up == 0 && (!rows || rows > l->n + 3))
		line(o, cols, "no member answers: are they running, and on this same file? "
			      "(a member with another file ignores us and logs config_mismatch)");
	else if (w->advised && (!rows || rows > l->n + 3)) {
		char adv[256];
		advice_str(w, adv, sizeof adv, false);
		line(o, cols, "%s", adv);
	}
}

static void render_line(struct out *o, const struct ring_watch *w, const char *stamp)
{
	const struct ring_layout *l = w->l;
	char b[1200], lk[1400];
	double g, h;
	token_str(w, b, sizeof b, true);
	lock_str(w, lk, sizeof lk, true);
	ring_watch_rates(w, &g, &h);
	char head[2800];
	int n = snprintf(head, sizeof head,
			 "%s ring=%s auth=%s up=%zu/%zu %s %s grants/s=%.1f hops/s=%.1f", stamp,
			 l->name, w->authenticated ? "on" : "off", ring_watch_up(w), l->n, b, lk, g,
			 h);
	put_n(o, head, n, sizeof head);
	for (size_t i = 0; i < l->n; i++) {
		const struct ring_watch_member *m = &w->m[i];
		const struct ring_msg_status_resp *r = &m->last;
		char s[400], fence[32], gs[16], hs[16];
		if (!m->up) {
			n = snprintf(s, sizeof s, " | %u down", l->members[i].id);
		} else {
			fence_str(fence, sizeof fence, r->fence);
			rate_str(gs, sizeof gs, m, m->grants_s);
			rate_str(hs, sizeof hs, m, m->hops_s);
			n = snprintf(s, sizeof s,
				     " | %u %s%s epoch=%u fence=%s queue=%u grants/s=%s hops/s=%s "
				     "retransmits=%llu skips=%llu elections=%llu%s",
				     l->members[i].id, ring_state_name((enum ring_state)r->state),
				     !(r->flags & RING_STATUS_HAS_TOKEN) ? "" :
				     (r->flags & RING_STATUS_PARKED) ? " token=parked" : " token=here",
				     r->epoch, fence, r->queued, gs, hs,
				     (unsigned long long)r->counters.retransmits,
				     (unsigned long long)r->counters.skips,
				     (unsigned long long)r->counters.elections,
				     restarted(w, m) ? " restarted" : "");
		}
		put_n(o, s, n, sizeof s);
	}
	if (w->advised) {
		char adv[256];
		advice_str(w, adv, sizeof adv, true);
		put(o, " | ", 3);
		put(o, adv, strlen(adv));
	}
	put(o, "\n", 1);
}

int ring_watch_render(const struct ring_watch *w, enum ring_watch_form form, unsigned cols,
		      unsigned rows, const char *stamp, char *buf, size_t len)
{
	struct out o = {.buf = buf, .len = len, .need = 0};
	if (len > 0)
		buf[0] = '\0';
	if (form == RING_WATCH_SCREEN)
		render_screen(&o, w, cols, rows, stamp);
	else
		render_line(&o, w, stamp);
	return o.need > (size_t)INT32_MAX ? INT32_MAX : (int)o.need;
}
