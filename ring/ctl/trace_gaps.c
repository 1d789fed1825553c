/* Where the token was seen alive, and the stretches it was not: a parked
 * token heartbeats, unlogged, from its token_park to whatever ends the park
 * (unpark, pass, stop, no quorum), its holder's crash (as trace_faults.c
 * dates it), the first sign of the token elsewhere, or the first member
 * that stopped hearing it. docs/testing.md tells the rules. */
#include "ctl/trace_gaps.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"

struct sighting {
	uint64_t t;
	uint32_t node; /* 0: somewhere (a heartbeat heard, its sender not logged) */
	uint32_t to;   /* a token_pass's: where the token went */
	uint64_t hop;  /* ring_trace_hop of the token shown, 0 if unknown */
};

struct park {
	uint32_t node;
	uint64_t a, b;
	uint64_t hop;    /* of the token it began with, 0 if unknown */
	bool life_ended; /* it lasted as long as its holder's life */
};

#define NO_PARK UINT32_MAX

struct ring_trace_gaps {
	struct sighting *si;
	size_t nsi, capsi;
	struct sighting *heard; /* each suspicion's last heard token, by its member */
	size_t nh, caph;
	struct park *pk;
	size_t npk, cappk;
	uint32_t *open; /* by member: its open park's index, or NO_PARK */
};

struct ring_trace_gaps *ring_trace_gaps_new(void)
{
	struct ring_trace_gaps *g = calloc(1, sizeof *g);
	if (g && !(g->open = malloc(65536 * sizeof *g->open))) {
		free(g);
		return NULL;
	}
	for (size_t i = 0; g && i < 65536; i++)
		g->open[i] = NO_PARK;
	return g;
}

void ring_trace_gaps_free(struct ring_trace_gaps *g)
{
	if (!g)
		return;
	free(g->si);
	free(g->heard);
	free(g->pk);
	free(g->open);
	free(g);
}

static int push_to(struct sighting **a, size_t *n, size_t *cap, uint32_t node, uint64_t t,
		   uint32_t to, uint64_t hop)
{
	if (!ring_trace_grow((void **)a, cap, *n, sizeof **a))
		return -RING_ENOMEM;
	(*a)[(*n)++] = (struct sighting){t, node, to, hop};
	return 0;
}

static int push(struct sighting **a, size_t *n, size_t *cap, uint32_t node, uint64_t t)
{
	return push_to(a, n, cap, node, t, 0, 0);
}

int ring_trace_gaps_seen(struct ring_trace_gaps *g, uint32_t node, uint64_t t, uint32_t to,
			 uint64_t hop)
{
	return push_to(&g->si, &g->nsi, &g->capsi, node, t, to, hop);
}

int ring_trace_gaps_silence(struct ring_trace_gaps *g, uint32_t node, uint64_t heard)
{
	return push(&g->heard, &g->nh, &g->caph, node, heard);
}

int ring_trace_gaps_park(struct ring_trace_gaps *g, uint32_t node, uint64_t t, uint64_t hop)
{
	node &= 0xffff;
	if (g->open[node] != NO_PARK) /* parked again: after its own client, or after */
		g->pk[g->open[node]].b = t; /* the token came back unlogged; either way */
	if (!ring_trace_grow((void **)&g->pk, &g->cappk, g->npk, sizeof *g->pk))
		return -RING_ENOMEM;
	g->pk[g->npk] = (struct park){node, t, t, hop, false};
	g->open[node] = (uint32_t)g->npk++;
	return 0;
}

static void end_park(struct ring_trace_gaps *g, uint32_t node, uint64_t t, bool life)
{
	node &= 0xffff;
	if (g->open[node] == NO_PARK)
		return;
	struct park *p = &g->pk[g->open[node]];
	p->b = t > p->a ? t : p->a;
	p->life_ended = life;
	g->open[node] = NO_PARK;
}

int ring_trace_gaps_unpark(struct ring_trace_gaps *g, uint32_t node, uint64_t t)
{
	end_park(g, node, t, false);
	return 0;
}

int ring_trace_gaps_life_end(struct ring_trace_gaps *g, uint32_t node, uint64_t t)
{
	end_park(g, node, t, true);
	return 0;
}

/* ---- the check ---- */

/* qsort, but never of an empty array: its pointer may be NULL then. */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static int by_t(const void *a, const void *b)
{
	const struct sighting *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int by_node_a(const void *a, const void *b)
{
	const struct park *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->a < y->a ? -1 : x->a > y->a;
}

/* The first of the sorted S (N of them) after T. */
static size_t first_after(const struct sighting *s, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether S showed an older token than park P began with: with -v a
 * token_pass is logged after its send, so two hops upstream may log its
 * pass after P's holder logged the arrival (2 µs apart on loopback). It
 * says where the token was, not where it is. */
static bool older(const struct sighting *s, const struct park *p)
{
	return s->hop && p->hop && s->hop <= p->hop;
}

/* Park P's true end: its life's end means a crash (dated by FS) or a
 * holder still running at the logs' end (LAST); a park ends anyway where
 * the token shows elsewhere or a member stops hearing it, and by NEXT,
 * the start of its member's next park. That last bound matters only to a
 * file whose times go back (each park then ended at the next line's):
 * without it one member's parks overlapped, and finding their ends
 * walked over one another's sightings, parks times sightings. */
static void close_park(const struct ring_trace_gaps *g, size_t nsi,
		       const struct ring_trace_faults *fs, uint64_t last, uint64_t next,
		       struct park *p)
{
	uint64_t at;
	if (p->life_ended)
		p->b = ring_trace_faults_crashed(fs, p->node, p->a, &at) ? (at > p->b ? at : p->b)
									  : (last > p->b ? last : p->b);
	if (p->b > next)
		p->b = next;
	for (size_t k = first_after(g->si, nsi, p->a); k < nsi && g->si[k].t < p->b; k++)
		if (g->si[k].node && g->si[k].node != p->node && g->si[k].to != p->node &&
		    !older(&g->si[k], p)) {
			p->b = g->si[k].t;
			break;
		}
	for (size_t k = first_after(g->heard, g->nh, p->a); k < g->nh && g->heard[k].t < p->b; k++)
		if (g->heard[k].node != p->node) {
			p->b = g->heard[k].t;
			break;
		}
}

/* The held spans and the parks, by start, each with the latest end of
 * any that starts no later (a prefix maximum): whether some span covers a
 * stretch is then one search, not a scan of them all per stretch (which
 * made a week of parks take minutes). */
static int by_a(const void *x, const void *y)
{
	const struct ring_trace_span *p = x, *q = y;
	return p->a < q->a ? -1 : p->a > q->a;
}

static struct ring_trace_span *cover_new(const struct ring_trace_gaps *g,
					 const struct ring_trace_span *held, size_t n)
{
	struct ring_trace_span *c = malloc((n + g->npk + 1) * sizeof *c);
	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++)
		c[i] = held[i];
	for (size_t i = 0; i < g->npk; i++)
		c[n + i] = (struct ring_trace_span){g->pk[i].a, g->pk[i].b};
	sort(c, n + g->npk, sizeof *c, by_a);
	for (size_t i = 1; i < n + g->npk; i++)
		if (c[i].b < c[i - 1].b)
			c[i].b = c[i - 1].b;
	return c;
}

/* Whether a span of the N in C (cover_new) starts by FROM and lasts to TO. */
static bool covered(const struct ring_trace_span *c, size_t n, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = n; /* the first that starts after FROM */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c[mid].a <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && c[lo - 1].b >= to;
}

long ring_trace_gaps_check(struct ring_trace_gaps *g, const struct ring_trace_faults *fs,
			   uint64_t last, const struct ring_trace_span *held, size_t n,
			   uint64_t limit_us, uint64_t *longest, ring_trace_gap_fn fn, void *arg)
{
	*longest = 0;
	for (size_t i = 0; i < 65536; i++) /* parks still open: the file ended first */
		if (g->open[i] != NO_PARK)
			end_park(g, (uint32_t)i, g->pk[g->open[i]].a, true);
	/* A park's start is a sighting too, and ends any other park. */
	for (size_t i = 0; i < g->npk; i++)
		if (push(&g->si, &g->nsi, &g->capsi, g->pk[i].node, g->pk[i].a) < 0)
			return -RING_ENOMEM;
	sort(g->si, g->nsi, sizeof *g->si, by_t);
	sort(g->heard, g->nh, sizeof *g->heard, by_t);
	size_t nsi = g->nsi;
	sort(g->pk, g->npk, sizeof *g->pk, by_node_a); /* g->open is done with */
	for (size_t i = 0; i < g->npk; i++) {
		bool more = i + 1 < g->npk && g->pk[i + 1].node == g->pk[i].node;
		close_park(g, nsi, fs, last, more ? g->pk[i + 1].a : UINT64_MAX, &g->pk[i]);
	}
	for (size_t i = 0; i < g->npk; i++)
		if (push(&g->si, &g->nsi, &g->capsi, g->pk[i].node, g->pk[i].b) < 0)
			return -RING_ENOMEM;
	/* A member that stopped hearing the token had heard it then. */
	for (size_t i = 0; i < g->nh; i++)
		if (push(&g->si, &g->nsi, &g->capsi, 0, g->heard[i].t) < 0)
			return -RING_ENOMEM;
	sort(g->si, g->nsi, sizeof *g->si, by_t);
	sort(g->pk, g->npk, sizeof *g->pk, by_node_a);
	struct ring_trace_span *cover = cover_new(g, held, n);
	if (!cover)
		return -RING_ENOMEM;
	long gaps = 0;
	for (size_t i = 1; i < g->nsi; i++) {
		uint64_t d = g->si[i].t - g->si[i - 1].t;
		if (d <= limit_us || covered(cover, n + g->npk, g->si[i - 1].t, g->si[i].t))
			continue;
		gaps++;
		if (d > *longest)
			*longest = d;
		fn(arg, g->si[i - 1].t, d);
	}
	free(cover);
	return gaps;
}

bool ring_trace_gaps_park_end(const struct ring_trace_gaps *g, uint32_t node, uint64_t t,
			      uint64_t *end)
{
	struct park key = {.node = node & 0xffff, .a = t};
	const struct park *p = g->npk ? bsearch(&key, g->pk, g->npk, sizeof *g->pk, by_node_a)
				       : NULL;
	if (p)
		*end = p->b;
	return p != NULL;
}
