/* Fenced two-phase commit as a pure state machine (tx_fenced.h). The coordinator role is a lease
 * from a lock service (compare_tx.c models it: ring's critical region, abstractly) whose grants
 * carry a fence that grows with every grant. Site 0 takes the role first and runs 2PC; an
 * uncertain participant that hears nothing asks for the role, and when it gets it, with a
 * higher fence, it finishes the transaction from every participant's state. Every message that
 * asks or orders carries the sender's fence; a site logs the highest fence it has seen before
 * answering, and refuses anything older. So a coordinator that paused, woke up and carried on
 * is refused by every site its successor asked, and the successor's decision stands.
 *
 * Where the outcome lives: at the participants, the sites with data. A coordinator's order
 * counts only where a participant accepted it under the fence, so site 0 (which holds no data
 * and does not vote) decides only when a participant tells it what it decided (DECISION), or
 * on a newer holder's order: a stale coordinator's belief never becomes a decision. */
#include "compare/tx_fenced.h"

#include <stdlib.h>

enum phase {
	PH_NONE,
	PH_VOTES,   /* site 0: collecting votes */
	PH_ORDERED, /* site 0: told doCommit or doAbort; waiting for a participant's DECISION */
	PH_STATES,  /* a successor: collecting every participant's state */
};

struct tx_fenced {
	struct tx_config cfg;
	enum tx_state st;
	enum phase ph;
	uint32_t fence;   /* the highest fence seen; logged before a reply relies on it */
	uint32_t holding; /* the fence of the role it believes it holds, 0 none */
	bool asked;       /* it asked the lock service for the role */
	bool order;       /* PH_ORDERED: commit */
	bool recovered;   /* site 0 after a restart: asks, never coordinates */
	uint64_t parts;   /* every participant, as a bit set */
	uint64_t got;     /* votes or states received in this phase */
	bool seen_commit, seen_abort; /* PH_STATES: in the states (init counts as abort) */
};

/* Timers, in units of the round-trip bound t_us, as in tx_2pc.c. A successor waits for
 * every participant, however long: that is where fencing leaves 2PC blocking. */
#define WAIT_VOTES 1 /* site 0: votes, then abort */
#define WAIT_ASK 2   /* uncertain participant: before asking for the role */
#define WAIT_ORDER 2 /* site 0: before telling its order again */
#define WAIT_STATES 1 /* successor: before asking the silent ones again */
#define WAIT_START 3 /* participant: canCommit?, then abort alone */

static uint64_t bit(size_t i)
{
	return (uint64_t)1 << i;
}

static bool is_coord(const struct tx_fenced *s)
{
	return s->cfg.me == TX_COORD;
}

static void *make(const struct tx_config *cfg, enum tx_state stored)
{
	if (cfg->n < 2 || cfg->n > TX_MAX_N || cfg->me >= cfg->n || stored == TX_ST_PRECOMMITTED)
		return NULL;
	struct tx_fenced *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->st = stored;
	s->fence = cfg->fence;
	for (size_t i = 1; i < cfg->n; i++)
		s->parts |= bit(i);
	return s;
}

static void release(void *site)
{
	free(site);
}

static void persist(struct tx_fenced *s, struct tx_update *up)
{
	tx_push(up, (struct tx_action){.type = TX_ACTION_PERSIST, .state = s->st,
				       .fence = s->fence});
}

static void send(struct tx_fenced *s, struct tx_update *up, size_t to, enum tx_msg_type type,
		 uint8_t arg, uint32_t fence)
{
	tx_send(up, &s->cfg, (uint16_t)to, type, arg, fence);
}

/* Gives the role back, once it has nothing left to do with it. */
static void give_back(struct tx_fenced *s, struct tx_update *up)
{
	if (s->holding) {
		s->holding = 0;
		tx_push(up, (struct tx_action){.type = TX_ACTION_RELEASE});
	}
}

static void decide(struct tx_fenced *s, struct tx_update *up, bool commit)
{
	s->st = commit ? TX_ST_COMMITTED : TX_ST_ABORTED;
	s->ph = PH_NONE;
	persist(s, up);
	tx_decide(up, commit);
	tx_timer(up, TX_NO_TIMER);
	give_back(s, up);
}

/* The fence rule: a message carrying FENCE is refused when an older one than the highest
 * seen; a newer one is logged (before the reply that promises to refuse what is older) and
 * deposes the role this site believed it held. */
static bool fence_ok(struct tx_fenced *s, struct tx_update *up, uint32_t fence)
{
	if (fence < s->fence)
		return false;
	if (fence > s->fence) {
		s->fence = fence;
		persist(s, up);
		if (s->holding && s->holding < fence) {
			s->holding = 0; /* deposed: its lease ran out and the role moved */
			if (s->ph != PH_NONE)
				s->ph = PH_NONE;
		}
	}
	return true;
}

static void tell(struct tx_fenced *s, struct tx_update *up, size_t to)
{
	if (tx_decided(s->st))
		send(s, up, to, TX_MSG_DECISION, s->st == TX_ST_COMMITTED, s->fence);
}

/* ---- site 0, the first coordinator ---- */

static void give_order(struct tx_fenced *s, struct tx_update *up, bool commit)
{
	s->ph = PH_ORDERED;
	s->order = commit;
	for (size_t i = 1; i < s->cfg.n; i++)
		send(s, up, i, commit ? TX_MSG_DO_COMMIT : TX_MSG_DO_ABORT, 0, s->holding);
	tx_timer(up, WAIT_ORDER * s->cfg.t_us);
}

static void ask(struct tx_fenced *s, struct tx_update *up)
{
	for (size_t i = 1; i < s->cfg.n; i++)
		send(s, up, i, TX_MSG_GET_DECISION, 0, 0);
	tx_timer(up, WAIT_ASK * s->cfg.t_us);
}

/* ---- a successor: Skeen's rule without the precommitted state ---- */

static void lead(struct tx_fenced *s, struct tx_update *up)
{
	s->ph = PH_STATES;
	s->got = 0;
	s->seen_commit = s->seen_abort = false;
	for (size_t i = 1; i < s->cfg.n; i++)
		if (i != s->cfg.me)
			send(s, up, i, TX_MSG_STATE_REQ, 0, s->holding);
	tx_timer(up, WAIT_STATES * s->cfg.t_us);
}

/* Every participant has answered (and so logged this fence): any decision stands; else
 * anyone who never voted aborted on the question, so abort; else all are uncertain and,
 * as 2PC presumes, abort. No older coordinator's order can land after this: every
 * participant now refuses it. */
static void successor_decide(struct tx_fenced *s, struct tx_update *up)
{
	uint32_t f = s->holding;
	bool commit = s->seen_commit || s->st == TX_ST_COMMITTED;
	if (!tx_decided(s->st))
		decide(s, up, commit);
	for (size_t i = 0; i < s->cfg.n; i++)
		if (i != s->cfg.me)
			send(s, up, i, commit ? TX_MSG_DO_COMMIT : TX_MSG_DO_ABORT, 0, f);
}

static void lead_check(struct tx_fenced *s, struct tx_update *up)
{
	uint64_t need = s->parts & ~bit(s->cfg.me);
	if ((s->got & need) == need)
		successor_decide(s, up);
}

/* ---- events ---- */

static void on_granted(void *site, struct tx_update *up, uint32_t fence)
{
	struct tx_fenced *s = site;
	if (!fence_ok(s, up, fence) || fence < s->fence)
		return;
	s->holding = fence;
	if (is_coord(s) && s->st == TX_ST_INIT && s->ph == PH_NONE && !s->recovered) {
		s->st = TX_ST_UNCERTAIN; /* collecting votes; not logged (presumed abort) */
		s->ph = PH_VOTES;
		for (size_t i = 1; i < s->cfg.n; i++)
			send(s, up, i, TX_MSG_CAN_COMMIT, 0, fence);
		tx_timer(up, WAIT_VOTES * s->cfg.t_us);
	} else if (tx_decided(s->st) || is_coord(s)) {
		give_back(s, up); /* nothing to finish (site 0 after a restart only asks) */
	} else {
		lead(s, up);
		lead_check(s, up); /* two sites: nobody else to ask */
	}
}

static void on_begin(void *site, struct tx_update *up)
{
	struct tx_fenced *s = site;
	if (s->st != TX_ST_INIT)
		return;
	if (is_coord(s))
		tx_push(up, (struct tx_action){.type = TX_ACTION_ACQUIRE});
	else
		tx_timer(up, WAIT_START * s->cfg.t_us);
}

static void on_timeout(void *site, struct tx_update *up)
{
	struct tx_fenced *s = site;
	switch (s->ph) {
	case PH_VOTES:
		give_order(s, up, false); /* a vote is missing */
		return;
	case PH_ORDERED:
		give_order(s, up, s->order); /* nobody has said what it did yet */
		return;
	case PH_STATES:
		for (size_t i = 1; i < s->cfg.n; i++)
			if (i != s->cfg.me && !(s->got & bit(i)))
				send(s, up, i, TX_MSG_STATE_REQ, 0, s->holding);
		tx_timer(up, WAIT_STATES * s->cfg.t_us);
		return;
	case PH_NONE:
		break;
	}
	if (is_coord(s)) {
		if (s->recovered && !tx_decided(s->st))
			ask(s, up);
	} else if (s->st == TX_ST_INIT) {
		decide(s, up, false); /* no canCommit?: it may abort alone */
	} else if (s->st == TX_ST_UNCERTAIN && !s->asked) {
		s->asked = true;
		tx_push(up, (struct tx_action){.type = TX_ACTION_ACQUIRE});
	}
}

static void on_recover(void *site, struct tx_update *up)
{
	struct tx_fenced *s = site;
	if (tx_decided(s->st))
		return; /* whoever still asks is answered */
	if (is_coord(s)) {
		/* Its lease may still run, but what it was doing is gone: it
		 * asks, and leaves finishing to a successor. */
		s->recovered = true;
		ask(s, up);
	} else if (s->st == TX_ST_INIT) {
		decide(s, up, false); /* it never voted */
	} else {
		s->asked = true; /* its request died with the process */
		tx_push(up, (struct tx_action){.type = TX_ACTION_ACQUIRE});
	}
}

static void on_message(void *site, struct tx_update *up, const struct tx_msg *m)
{
	struct tx_fenced *s = site;
	switch (m->type) {
	case TX_MSG_CAN_COMMIT:
		if (is_coord(s) || !fence_ok(s, up, m->epoch))
			break;
		if (s->st == TX_ST_INIT) {
			bool yes = s->cfg.vote_yes;
			s->st = yes ? TX_ST_UNCERTAIN : TX_ST_ABORTED;
			persist(s, up); /* the yes vote is logged before it is sent */
			tx_vote(up, yes);
			if (!yes)
				tx_decide(up, false);
			tx_timer(up, yes ? WAIT_ASK * s->cfg.t_us : TX_NO_TIMER);
		}
		send(s, up, m->from, TX_MSG_VOTE, s->st != TX_ST_ABORTED && s->st != TX_ST_INIT,
		     m->epoch);
		break;
	case TX_MSG_VOTE:
		if (s->ph != PH_VOTES || m->epoch != s->holding)
			break;
		if (!m->arg) {
			give_order(s, up, false);
			break;
		}
		s->got |= bit(m->from);
		if (s->got == s->parts)
			give_order(s, up, true);
		break;
	case TX_MSG_DO_COMMIT:
	case TX_MSG_DO_ABORT: {
		bool commit = m->type == TX_MSG_DO_COMMIT;
		if (!fence_ok(s, up, m->epoch)) {
			tell(s, up, m->from); /* refused: the stale one learns the outcome */
			break;
		}
		if (!tx_decided(s->st) && (s->st != TX_ST_INIT || !commit))
			decide(s, up, commit);
		if (!is_coord(s))
			tell(s, up, m->from); /* what it did, for the orderer */
		break;
	}
	case TX_MSG_DECISION:
		/* A fact: only a site that decided sends it. */
		if (!tx_decided(s->st) && !(m->arg && s->st == TX_ST_INIT && !is_coord(s)))
			decide(s, up, m->arg != 0);
		break;
	case TX_MSG_GET_DECISION:
		tell(s, up, m->from);
		break;
	case TX_MSG_STATE_REQ:
		if (is_coord(s) || !fence_ok(s, up, m->epoch))
			break;
		if (s->st == TX_ST_INIT)
			decide(s, up, false); /* without its vote nobody can commit */
		send(s, up, m->from, TX_MSG_STATE, (uint8_t)s->st, m->epoch);
		break;
	case TX_MSG_STATE:
		if (s->ph != PH_STATES || m->epoch != s->holding)
			break;
		s->got |= bit(m->from);
		s->seen_commit |= m->arg == TX_ST_COMMITTED;
		s->seen_abort |= m->arg == TX_ST_ABORTED || m->arg == TX_ST_INIT;
		lead_check(s, up);
		break;
	case TX_MSG_PRE_COMMIT:
	case TX_MSG_ACK:
	case TX_MSG_HAVE_COMMITTED:
	case TX_MSG_OPEN:
	case TX_MSG_REPORT:
		break;
	}
}

static const struct tx_handlers handlers = {
	.begin = on_begin, .timeout = on_timeout, .recover = on_recover,
	.message = on_message, .granted = on_granted,
};

static void step(void *site, const struct tx_event *ev, struct tx_update *up)
{
	struct tx_fenced *s = site;
	tx_step(&handlers, s, &s->cfg, ev, up);
}

const struct tx_proto tx_2pc_fenced = {"2pc-fenced", "2PC fenced", make, release, step,
				       TX_MSG_DO_COMMIT, false, true};
