/* Three-phase commit as a pure state machine (tx_3pc.h): one site, the original coordinator
 * (index 0, epoch 0) or a participant, which may lead the termination protocol in a later
 * epoch. Epoch e is led by site e mod n; site 0 leads only epoch 0. A site follows the
 * newest epoch it has heard and ignores the orders of older ones, so that a late preCommit
 * from a coordinator given up for dead cannot reopen what a newer leader decided. */
#include "compare/tx_3pc.h"

#include <stdlib.h>

/* What the site is doing as a coordinator, original or elected. */
enum phase {
	PH_NONE,
	PH_VOTES,     /* original coordinator: collecting votes */
	PH_ACKS,      /* original coordinator: collecting preCommit acks */
	PH_STATES,    /* new coordinator: collecting the survivors' states */
	PH_TERM_ACKS, /* new coordinator: collecting acks of the preCommits it sent */
};

struct tx_3pc {
	struct tx_config cfg;
	enum tx_state st;
	enum phase ph;
	uint32_t epoch;    /* whose orders it follows */
	uint32_t cand;     /* termination: the epoch whose leader it waits for */
	uint64_t parts;    /* every participant, as a bit set */
	uint64_t others;   /* every site but this one */
	uint64_t got;      /* votes, acks or states received in this phase */
	uint64_t need;     /* PH_TERM_ACKS: whom it sent preCommit */
	uint64_t uncertain; /* PH_STATES: who replied uncertain */
	bool seen_pre, seen_commit, seen_abort; /* PH_STATES: in the replies */
	bool recovered;    /* restarted: asks, never leads (it may have missed an epoch) */
};

/* Timers, in units of the round-trip bound t_us. Each waits for the one
 * before it to run out and its message to arrive: a participant suspects
 * the coordinator only after the coordinator's own vote or ack timeout, a
 * follower gives up on a leader only after that leader's collection and
 * preCommit rounds. A site suspects at most a round trip before or after
 * another, which the candidate wait covers. */
#define WAIT_ROUND 1    /* a coordinator: votes, acks or states */
#define WAIT_COORD 2    /* uncertain or precommitted: the original coordinator's next order */
#define WAIT_CAND 3     /* termination: the candidate's stateReq */
#define WAIT_LEADER 4   /* termination: the leader's decision after our state */
#define WAIT_ASK 2      /* recovered: between getDecisions */
#define WAIT_START 3    /* participant: canCommit?, then abort alone */

static uint64_t bit(size_t i)
{
	return (uint64_t)1 << i;
}

static size_t leader_of(const struct tx_3pc *s, uint32_t epoch)
{
	return epoch % s->cfg.n;
}

static void *make(const struct tx_config *cfg, enum tx_state stored)
{
	if (cfg->n < 2 || cfg->n > TX_MAX_N || cfg->me >= cfg->n)
		return NULL;
	struct tx_3pc *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->st = stored;
	for (size_t i = 0; i < cfg->n; i++) {
		if (i != TX_COORD)
			s->parts |= bit(i);
		if (i != cfg->me)
			s->others |= bit(i);
	}
	return s;
}

static void release(void *site)
{
	free(site);
}

static void timer(struct tx_3pc *s, struct tx_update *up, int units)
{
	tx_timer(up, (uint64_t)units * s->cfg.t_us);
}

/* Logs the decision, then tells it: with the original coordinator's or a
 * leader's epoch, or as a DECISION (a fact, valid in any epoch) when
 * answering a question or after a restart. */
static void decide(struct tx_3pc *s, struct tx_update *up, bool commit)
{
	s->st = commit ? TX_ST_COMMITTED : TX_ST_ABORTED;
	s->ph = PH_NONE;
	tx_persist(up, s->st);
	tx_decide(up, commit);
	tx_timer(up, TX_NO_TIMER);
}

static void decide_and_tell(struct tx_3pc *s, struct tx_update *up, bool commit)
{
	decide(s, up, commit);
	tx_send_all(up, &s->cfg, commit ? TX_MSG_DO_COMMIT : TX_MSG_DO_ABORT, 0, s->epoch);
}

static void precommit(struct tx_3pc *s, struct tx_update *up)
{
	if (s->st == TX_ST_UNCERTAIN) {
		s->st = TX_ST_PRECOMMITTED;
		tx_persist(up, s->st); /* before any preCommit leaves: see on_recover */
	}
}

static void ask(struct tx_3pc *s, struct tx_update *up)
{
	tx_send_all(up, &s->cfg, TX_MSG_GET_DECISION, 0, 0);
	timer(s, up, WAIT_ASK);
}

/* ---- the termination protocol ---- */

static void lead(struct tx_3pc *s, struct tx_update *up)
{
	s->epoch = s->cand;
	s->ph = PH_STATES;
	s->got = s->uncertain = 0;
	s->seen_pre = s->seen_commit = s->seen_abort = false;
	tx_send_all(up, &s->cfg, TX_MSG_STATE_REQ, 0, s->epoch);
	timer(s, up, WAIT_ROUND);
}

/* The coordinator (or the last leader) is given up for dead: wait for the
 * next epoch's leader, or lead it. */
static void suspect(struct tx_3pc *s, struct tx_update *up)
{
	uint32_t e = s->cand > s->epoch ? s->cand : s->epoch;
	do
		e++;
	while (leader_of(s, e) == TX_COORD);
	s->cand = e;
	if (leader_of(s, e) == s->cfg.me)
		lead(s, up);
	else
		timer(s, up, WAIT_CAND);
}

/* Skeen's rule, from the states collected (its own included): any decision
 * stands; else if anyone is precommitted every site voted yes, so commit,
 * after bringing the uncertain ones to precommitted; else nobody can have
 * committed, so abort. */
static void term_decide(struct tx_3pc *s, struct tx_update *up)
{
	if (s->seen_commit || s->seen_abort) {
		decide_and_tell(s, up, s->seen_commit);
		return;
	}
	if (!s->seen_pre && s->st != TX_ST_PRECOMMITTED) {
		decide_and_tell(s, up, false);
		return;
	}
	precommit(s, up);
	s->need = s->uncertain;
	if (!s->need) {
		decide_and_tell(s, up, true);
		return;
	}
	for (size_t i = 0; i < s->cfg.n; i++)
		if (s->need & bit(i))
			tx_send(up, &s->cfg, (uint16_t)i, TX_MSG_PRE_COMMIT, 0, s->epoch);
	s->ph = PH_TERM_ACKS;
	s->got = 0;
	timer(s, up, WAIT_ROUND);
}

/* A newer epoch's message: follow it, and stop coordinating an older one. */
static void adopt(struct tx_3pc *s, uint32_t epoch)
{
	if (epoch > s->epoch) {
		s->epoch = epoch;
		s->ph = PH_NONE;
	}
	if (epoch > s->cand)
		s->cand = epoch;
}

static void on_state_req(struct tx_3pc *s, struct tx_update *up, const struct tx_msg *m)
{
	if (m->epoch < s->epoch || m->epoch == 0)
		return;
	adopt(s, m->epoch);
	/* One that has not voted, or a coordinator still counting votes, aborts
	 * alone: nobody can be precommitted yet. */
	if (s->st == TX_ST_INIT || (s->cfg.me == TX_COORD && s->st == TX_ST_UNCERTAIN))
		decide(s, up, false);
	tx_send(up, &s->cfg, m->from, TX_MSG_STATE, (uint8_t)s->st, m->epoch);
	if (!tx_decided(s->st) && !s->recovered)
		timer(s, up, WAIT_LEADER);
}

static void on_state(struct tx_3pc *s, struct tx_update *up, const struct tx_msg *m)
{
	if (s->ph != PH_STATES || m->epoch != s->epoch)
		return;
	s->got |= bit(m->from);
	switch ((enum tx_state)m->arg) {
	case TX_ST_COMMITTED:
		s->seen_commit = true;
		break;
	case TX_ST_ABORTED:
		s->seen_abort = true;
		break;
	case TX_ST_PRECOMMITTED:
		s->seen_pre = true;
		break;
	case TX_ST_UNCERTAIN:
		s->uncertain |= bit(m->from);
		break;
	case TX_ST_INIT:
		break;
	}
	if (s->got == s->others)
		term_decide(s, up);
}

/* ---- events ---- */

static void on_begin(void *site, struct tx_update *up)
{
	struct tx_3pc *s = site;
	if (s->st != TX_ST_INIT)
		return;
	if (s->cfg.me == TX_COORD) {
		s->st = TX_ST_UNCERTAIN; /* counting votes; not logged: see on_recover */
		s->ph = PH_VOTES;
		tx_send_all(up, &s->cfg, TX_MSG_CAN_COMMIT, 0, 0);
		timer(s, up, WAIT_ROUND);
	} else {
		timer(s, up, WAIT_START);
	}
}

static void on_timeout(void *site, struct tx_update *up)
{
	struct tx_3pc *s = site;
	switch (s->ph) {
	case PH_VOTES:
		decide_and_tell(s, up, false); /* a vote is missing */
		return;
	case PH_ACKS:
	case PH_TERM_ACKS:
		/* Everyone voted yes and every site it could reach is
		 * precommitted: a silent one has crashed and will ask. */
		decide_and_tell(s, up, true);
		return;
	case PH_STATES:
		term_decide(s, up);
		return;
	case PH_NONE:
		break;
	}
	if (s->st == TX_ST_INIT)
		decide(s, up, false); /* no canCommit?: it may abort alone */
	else if (tx_decided(s->st))
		return;
	else if (s->recovered)
		ask(s, up);
	else
		suspect(s, up);
}

static void on_recover(void *site, struct tx_update *up)
{
	struct tx_3pc *s = site;
	if (tx_decided(s->st)) {
		/* Who heard it before the crash is not logged. */
		tx_send_all(up, &s->cfg, TX_MSG_DECISION, s->st == TX_ST_COMMITTED, 0);
		return;
	}
	if (s->st == TX_ST_INIT) {
		/* A participant that never voted, or a coordinator that never
		 * logged precommitted and so never sent preCommit: nobody can
		 * have committed. */
		decide(s, up, false);
		if (s->cfg.me == TX_COORD)
			tx_send_all(up, &s->cfg, TX_MSG_DECISION, 0, 0);
		return;
	}
	/* Uncertain or precommitted: others may have decided either way
	 * while it was down. */
	s->recovered = true;
	ask(s, up);
}

static void on_message(void *site, struct tx_update *up, const struct tx_msg *m)
{
	struct tx_3pc *s = site;
	bool from_leader = leader_of(s, m->epoch) == m->from;
	switch (m->type) {
	case TX_MSG_CAN_COMMIT:
		if (m->from != TX_COORD || m->epoch != 0 || s->epoch != 0)
			break; /* a termination has begun: too late to vote */
		if (s->st == TX_ST_INIT) {
			bool yes = s->cfg.vote_yes;
			s->st = yes ? TX_ST_UNCERTAIN : TX_ST_ABORTED;
			tx_persist(up, s->st);
			tx_vote(up, yes);
			if (yes)
				timer(s, up, WAIT_COORD);
			else
				decide(s, up, false);
		}
		tx_send(up, &s->cfg, TX_COORD, TX_MSG_VOTE, s->st != TX_ST_ABORTED, 0);
		break;
	case TX_MSG_VOTE:
		if (s->ph != PH_VOTES)
			break;
		if (!m->arg) {
			decide_and_tell(s, up, false);
			break;
		}
		s->got |= bit(m->from);
		if (s->got == s->parts) {
			precommit(s, up);
			tx_send_all(up, &s->cfg, TX_MSG_PRE_COMMIT, 0, 0);
			s->ph = PH_ACKS;
			s->got = 0;
			timer(s, up, WAIT_ROUND);
		}
		break;
	case TX_MSG_PRE_COMMIT:
		if (!from_leader || m->epoch < s->epoch || tx_decided(s->st) || s->st == TX_ST_INIT)
			break;
		adopt(s, m->epoch);
		precommit(s, up);
		tx_send(up, &s->cfg, m->from, TX_MSG_ACK, 0, m->epoch);
		if (!s->recovered)
			timer(s, up, m->epoch == 0 ? WAIT_COORD : WAIT_LEADER);
		break;
	case TX_MSG_ACK:
		if (m->epoch != s->epoch)
			break;
		s->got |= bit(m->from);
		if ((s->ph == PH_ACKS && s->got == s->parts) ||
		    (s->ph == PH_TERM_ACKS && (s->got & s->need) == s->need))
			decide_and_tell(s, up, true);
		break;
	case TX_MSG_DO_COMMIT:
	case TX_MSG_DO_ABORT:
		if (!from_leader || m->epoch < s->epoch || tx_decided(s->st))
			break;
		if (m->type == TX_MSG_DO_COMMIT && s->st == TX_ST_INIT)
			break; /* cannot happen: a commit needs its vote */
		adopt(s, m->epoch);
		decide(s, up, m->type == TX_MSG_DO_COMMIT);
		break;
	case TX_MSG_DECISION:
		if (tx_decided(s->st) || (m->arg && s->st == TX_ST_INIT))
			break;
		decide(s, up, m->arg != 0);
		break;
	case TX_MSG_GET_DECISION:
		if (tx_decided(s->st))
			tx_send(up, &s->cfg, m->from, TX_MSG_DECISION, s->st == TX_ST_COMMITTED, 0);
		break;
	case TX_MSG_STATE_REQ:
		if (from_leader)
			on_state_req(s, up, m);
		break;
	case TX_MSG_STATE:
		on_state(s, up, m);
		break;
	case TX_MSG_HAVE_COMMITTED:
	case TX_MSG_OPEN:
	case TX_MSG_REPORT:
		break;
	}
}

static const struct tx_handlers handlers = {
	.begin = on_begin, .timeout = on_timeout, .recover = on_recover,
	.message = on_message, .granted = NULL, /* no lock service: epochs elect the leader */
};

static void step(void *site, const struct tx_event *ev, struct tx_update *up)
{
	struct tx_3pc *s = site;
	tx_step(&handlers, s, &s->cfg, ev, up);
}

const struct tx_proto tx_3pc = {"3pc", "3PC", make, release, step, TX_MSG_PRE_COMMIT, false, false};
