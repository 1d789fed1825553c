/* Nested transactions over a flat protocol (tx_nested.h): the opening and provisional
 * commits of a two-level tree, then an inner tx_proto site among the members only. The
 * commit phase is a flat transaction of its own whose id is the members' set (the tx
 * field), so a member learns who takes part from the first message it gets. No restart:
 * a provisional commit is not logged, and the table crashes only the flat protocols. */
#include "compare/tx_nested.h"

#include <stdlib.h>

#include "compare/tx_2pc.h"
#include "compare/tx_3pc.h"

struct tx_nested {
	struct tx_config cfg;
	const struct tx_proto *inner_p;
	void *inner;           /* the commit phase's site, once the members are known */
	uint32_t members;      /* bit = site; 0 until known */
	uint16_t outer[TX_MAX_N]; /* inner index -> site */
	uint64_t children, reported;
	uint32_t below;        /* provisionally committed sites reported from below */
	bool done;             /* reported (or, at the root, began the commit) */
	bool begun;            /* the inner site has had its BEGIN */
	bool opened;           /* its parent opened it (a duplicate OPEN changes nothing) */
	struct tx_update tmp;
};

#define WAIT_REPORTS 3 /* per level below: a child's report, then go on without it */

static uint64_t bit(size_t i)
{
	return (uint64_t)1 << i;
}

static size_t first_level(size_t n)
{
	return n / 2; /* ceil((n-1)/2) */
}

size_t tx_nested_parent(size_t n, size_t site)
{
	size_t k = first_level(n);
	if (site == 0 || site >= n)
		return 0;
	return site <= k ? 0 : 1 + (site - k - 1) % k;
}

uint64_t tx_nested_members(size_t n, uint64_t failing)
{
	uint64_t m = 1;
	for (size_t i = 1; i < n; i++) {
		bool ok = true;
		for (size_t a = i; a != 0; a = tx_nested_parent(n, a))
			ok &= !(failing >> a & 1);
		if (ok)
			m |= bit(i);
	}
	return m;
}

static void *make(const struct tx_config *cfg, enum tx_state stored, const struct tx_proto *p)
{
	if (cfg->n < 2 || cfg->n > TX_MAX_N || cfg->me >= cfg->n || stored != TX_ST_INIT)
		return NULL;
	struct tx_nested *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->inner_p = p;
	for (size_t i = 1; i < cfg->n; i++)
		if (tx_nested_parent(cfg->n, i) == cfg->me)
			s->children |= bit(i);
	return s;
}

static void *make_2pc(const struct tx_config *cfg, enum tx_state stored)
{
	return make(cfg, stored, &tx_2pc);
}

static void *make_3pc(const struct tx_config *cfg, enum tx_state stored)
{
	return make(cfg, stored, &tx_3pc);
}

static void release(void *site)
{
	struct tx_nested *s = site;
	if (s && s->inner)
		s->inner_p->release(s->inner);
	free(s);
}

/* Steps the inner site and carries its actions out in the tree's numbering. */
static void inner_step(struct tx_nested *s, const struct tx_event *ev, struct tx_update *up)
{
	s->inner_p->step(s->inner, ev, &s->tmp);
	for (size_t k = 0; k < s->tmp.n; k++) {
		struct tx_action a = s->tmp.action[k];
		if (a.type == TX_ACTION_SEND)
			a.to = s->outer[a.to];
		tx_push(up, a);
	}
}

/* Joins the commit phase of MEMBERS; false when this site is not one. */
static bool join(struct tx_nested *s, uint32_t members)
{
	if (!(members & bit(s->cfg.me)) || !(members & 1))
		return false;
	struct tx_config c = s->cfg;
	c.n = 0;
	for (size_t i = 0; i < s->cfg.n; i++)
		if (members & bit(i)) {
			if (i == s->cfg.me)
				c.me = c.n;
			s->outer[c.n++] = (uint16_t)i;
		}
	c.tx = members;
	c.vote_yes = true; /* a member committed provisionally: it can make it permanent */
	s->inner = s->inner_p->make(&c, TX_ST_INIT);
	if (!s->inner)
		return false;
	s->members = members;
	return true;
}

static size_t inner_index(const struct tx_nested *s, size_t site)
{
	size_t r = 0;
	for (size_t i = 0; i < site; i++)
		r += s->members >> i & 1;
	return r;
}

/* This subtransaction is finished: report it, with what committed below. */
static void finish(struct tx_nested *s, struct tx_update *up)
{
	s->done = true;
	if (s->cfg.me == TX_COORD) {
		/* Every report is in, or the wait is over: commit the top level
		 * with the provisionally committed subtransactions. */
		if (!s->below) {
			/* Every subtransaction aborted: the top level commits
			 * its own work alone. */
			tx_persist(up, TX_ST_COMMITTED);
			tx_decide(up, true);
			tx_timer(up, TX_NO_TIMER);
		} else if (join(s, 1u | s->below)) {
			struct tx_event ev = {.type = TX_EVENT_BEGIN};
			s->begun = true;
			inner_step(s, &ev, up);
		}
		return;
	}
	bool ok = s->cfg.vote_yes;
	uint32_t mask = ok ? (uint32_t)bit(s->cfg.me) | s->below : 0;
	tx_send(up, &s->cfg, (uint16_t)tx_nested_parent(s->cfg.n, s->cfg.me), TX_MSG_REPORT, ok,
		mask);
	tx_timer(up, TX_NO_TIMER); /* a member hears canCommit?; the others are done */
}

static void open_children(struct tx_nested *s, struct tx_update *up)
{
	if (!s->children) {
		finish(s, up);
		return;
	}
	for (size_t i = 1; i < s->cfg.n; i++)
		if (s->children & bit(i))
			tx_send(up, &s->cfg, (uint16_t)i, TX_MSG_OPEN, 0, 0);
	tx_timer(up, (s->cfg.me == TX_COORD ? 2 : 1) * WAIT_REPORTS * s->cfg.t_us);
}

static void on_message(struct tx_nested *s, const struct tx_event *ev, struct tx_update *up)
{
	struct tx_msg m;
	if (tx_msg_decode(ev->buf, ev->len, &m) < 0 || ev->from >= s->cfg.n ||
	    ev->from == s->cfg.me)
		return;
	/* The tree's messages name their sender by site; the commit phase's by
	 * its index among the members, which the inner site checks. */
	bool tree = m.type == TX_MSG_OPEN || m.type == TX_MSG_REPORT;
	if (tree && m.from != ev->from)
		return;
	if (m.type == TX_MSG_OPEN) {
		if (m.tx == s->cfg.tx && m.from == tx_nested_parent(s->cfg.n, s->cfg.me) &&
		    !s->done && !s->opened) {
			s->opened = true;
			open_children(s, up);
		}
		return;
	}
	if (m.type == TX_MSG_REPORT) {
		if (m.tx != s->cfg.tx || !(s->children & bit(m.from)) || s->done ||
		    (s->reported & bit(m.from)))
			return;
		s->reported |= bit(m.from);
		if (m.arg)
			s->below |= m.epoch;
		if (s->reported == s->children)
			finish(s, up);
		return;
	}
	/* The commit phase: its id is its members. */
	if (!s->inner && !join(s, m.tx))
		return;
	if (m.tx != s->members || !(s->members & bit(ev->from)))
		return;
	struct tx_event in = *ev;
	in.from = (uint16_t)inner_index(s, ev->from);
	/* A participant's inner site begins (its own timers) before its first message. */
	if (!s->begun) {
		s->begun = true;
		struct tx_event b = {.type = TX_EVENT_BEGIN};
		inner_step(s, &b, up);
	}
	inner_step(s, &in, up);
}

static void step(void *site, const struct tx_event *ev, struct tx_update *up)
{
	struct tx_nested *s = site;
	up->n = 0;
	switch (ev->type) {
	case TX_EVENT_BEGIN:
		if (s->cfg.me == TX_COORD && !s->done)
			open_children(s, up);
		break;
	case TX_EVENT_MESSAGE:
		on_message(s, ev, up);
		break;
	case TX_EVENT_TIMEOUT:
		if (s->inner)
			inner_step(s, ev, up);
		else if (!s->done)
			finish(s, up); /* a child never reported: it aborted */
		break;
	case TX_EVENT_RECOVER:
		break; /* never made: see make */
	case TX_EVENT_GRANTED: /* no lock service */
		break;
	}
}

const struct tx_proto tx_nested_2pc = {"nested-2pc", "nested 2PC", make_2pc, release, step,
				       TX_MSG_DO_COMMIT, false, false};
const struct tx_proto tx_nested_3pc = {"nested-3pc", "nested 3PC", make_3pc, release, step,
				       TX_MSG_PRE_COMMIT, false, false};
