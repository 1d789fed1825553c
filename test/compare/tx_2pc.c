/* Two-phase commit as a pure state machine (tx_2pc.h): one site, coordinator (index 0) or
 * participant. Presumed abort: the coordinator logs only its decision, so one that restarts
 * without a decision aborts; a participant logs its yes vote before sending it, so one that
 * restarts uncertain asks instead of deciding alone. */
#include "compare/tx_2pc.h"

#include <stdlib.h>

struct tx_2pc {
	struct tx_config cfg;
	enum tx_state st;
	uint64_t all;   /* every participant, as a bit set */
	uint64_t yes;   /* coordinator: participants that voted yes */
	uint64_t acked; /* coordinator: participants that said haveCommitted */
};

/* Timers, in units of the round-trip bound t_us. A participant waits for canCommit? longer
 * than the coordinator waits for votes, and asks for the decision only after the
 * coordinator has had its vote timeout and a message time to tell it. */
#define WAIT_VOTES 1 /* coordinator: votes, then abort */
#define WAIT_ASK 2   /* uncertain participant: before asking, and between asks */
#define WAIT_ACKS 2  /* coordinator: before telling doCommit again */
#define WAIT_START 3 /* participant: canCommit?, then abort alone */

static bool is_coord(const struct tx_2pc *s)
{
	return s->cfg.me == TX_COORD;
}

static void *make(const struct tx_config *cfg, enum tx_state stored, bool coop)
{
	if (cfg->n < 2 || cfg->n > TX_MAX_N || cfg->me >= cfg->n || stored == TX_ST_PRECOMMITTED)
		return NULL;
	struct tx_2pc *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->cfg.cooperative = coop;
	s->st = stored;
	for (size_t i = 1; i < cfg->n; i++)
		s->all |= (uint64_t)1 << i;
	return s;
}

static void *make_plain(const struct tx_config *cfg, enum tx_state stored)
{
	return make(cfg, stored, false);
}

static void *make_coop(const struct tx_config *cfg, enum tx_state stored)
{
	return make(cfg, stored, true);
}

static void release(void *site)
{
	free(site);
}

/* Log the decision, then act on it: the log comes first so that a crash
 * after any message leaves the decision on disk. */
static void decide(struct tx_2pc *s, struct tx_update *up, bool commit)
{
	s->st = commit ? TX_ST_COMMITTED : TX_ST_ABORTED;
	tx_persist(up, s->st);
	tx_decide(up, commit);
}

static void coord_tell(struct tx_2pc *s, struct tx_update *up)
{
	bool commit = s->st == TX_ST_COMMITTED;
	for (size_t i = 1; i < s->cfg.n; i++)
		if (!commit || !(s->acked >> i & 1))
			tx_send(up, &s->cfg, (uint16_t)i, commit ? TX_MSG_DO_COMMIT : TX_MSG_DO_ABORT,
				0, 0);
	/* doAbort needs no acknowledgement: a participant that never heard it
	 * asks, and the answer is abort (presumed abort). */
	tx_timer(up, commit && s->acked != s->all ? WAIT_ACKS * s->cfg.t_us : TX_NO_TIMER);
}

static void coord_decide(struct tx_2pc *s, struct tx_update *up, bool commit)
{
	decide(s, up, commit);
	coord_tell(s, up);
}

/* An uncertain participant asks: the coordinator, and in the cooperative
 * variant every other participant, any of which may know. */
static void ask(struct tx_2pc *s, struct tx_update *up)
{
	for (size_t i = 0; i < s->cfg.n; i++)
		if (i != s->cfg.me && (i == TX_COORD || s->cfg.cooperative))
			tx_send(up, &s->cfg, (uint16_t)i, TX_MSG_GET_DECISION, 0, 0);
	tx_timer(up, WAIT_ASK * s->cfg.t_us);
}

/* A participant that has not voted may abort alone: without its vote the
 * coordinator cannot commit. */
static void abort_alone(struct tx_2pc *s, struct tx_update *up)
{
	decide(s, up, false);
	tx_timer(up, TX_NO_TIMER);
}

static void on_begin(void *site, struct tx_update *up)
{
	struct tx_2pc *s = site;
	if (s->st != TX_ST_INIT)
		return;
	if (is_coord(s)) {
		s->st = TX_ST_UNCERTAIN; /* collecting votes; not logged (presumed abort) */
		for (size_t i = 1; i < s->cfg.n; i++)
			tx_send(up, &s->cfg, (uint16_t)i, TX_MSG_CAN_COMMIT, 0, 0);
		tx_timer(up, WAIT_VOTES * s->cfg.t_us);
	} else {
		tx_timer(up, WAIT_START * s->cfg.t_us);
	}
}

static void on_timeout(void *site, struct tx_update *up)
{
	struct tx_2pc *s = site;
	if (is_coord(s)) {
		if (s->st == TX_ST_UNCERTAIN)
			coord_decide(s, up, false); /* a vote is missing */
		else if (s->st == TX_ST_COMMITTED)
			coord_tell(s, up);
		return;
	}
	if (s->st == TX_ST_INIT)
		abort_alone(s, up);
	else if (s->st == TX_ST_UNCERTAIN)
		ask(s, up);
}

static void on_recover(void *site, struct tx_update *up)
{
	struct tx_2pc *s = site;
	if (is_coord(s)) {
		if (tx_decided(s->st))
			coord_tell(s, up); /* who heard it before the crash is not logged */
		else
			coord_decide(s, up, false); /* no decision logged: presumed abort */
		return;
	}
	if (s->st == TX_ST_INIT)
		abort_alone(s, up); /* it never voted */
	else if (s->st == TX_ST_UNCERTAIN)
		ask(s, up);
}

static void coord_message(struct tx_2pc *s, struct tx_update *up, const struct tx_msg *m)
{
	uint64_t bit = (uint64_t)1 << m->from;
	switch (m->type) {
	case TX_MSG_VOTE:
		if (s->st != TX_ST_UNCERTAIN)
			break; /* decided: a late or duplicated vote changes nothing */
		if (!m->arg) {
			coord_decide(s, up, false);
			break;
		}
		s->yes |= bit;
		if (s->yes == s->all)
			coord_decide(s, up, true);
		break;
	case TX_MSG_HAVE_COMMITTED:
		s->acked |= bit;
		if (s->st == TX_ST_COMMITTED && s->acked == s->all)
			tx_timer(up, TX_NO_TIMER);
		break;
	case TX_MSG_GET_DECISION:
		if (tx_decided(s->st)) /* still collecting votes: it will ask again */
			tx_send(up, &s->cfg, m->from, TX_MSG_DECISION, s->st == TX_ST_COMMITTED, 0);
		break;
	default:
		break;
	}
}

static void part_learn(struct tx_2pc *s, struct tx_update *up, bool commit, bool from_coord)
{
	if (s->st == TX_ST_UNCERTAIN || (s->st == TX_ST_INIT && !commit)) {
		decide(s, up, commit);
		tx_timer(up, TX_NO_TIMER);
	}
	if (commit && from_coord && s->st == TX_ST_COMMITTED)
		tx_send(up, &s->cfg, TX_COORD, TX_MSG_HAVE_COMMITTED, 0, 0);
}

static void part_message(struct tx_2pc *s, struct tx_update *up, const struct tx_msg *m)
{
	bool from_coord = m->from == TX_COORD;
	switch (m->type) {
	case TX_MSG_CAN_COMMIT:
		if (!from_coord)
			break;
		if (s->st == TX_ST_INIT) {
			bool yes = s->cfg.vote_yes;
			/* The yes vote is logged before it is sent: a participant
			 * that forgot it could abort after the coordinator committed. */
			s->st = yes ? TX_ST_UNCERTAIN : TX_ST_ABORTED;
			tx_persist(up, s->st);
			tx_vote(up, yes);
			if (!yes)
				tx_decide(up, false);
			tx_timer(up, yes ? WAIT_ASK * s->cfg.t_us : TX_NO_TIMER);
		}
		/* Again for a duplicated canCommit?: the first vote may be lost. */
		if (s->st != TX_ST_INIT)
			tx_send(up, &s->cfg, TX_COORD, TX_MSG_VOTE, s->st != TX_ST_ABORTED, 0);
		break;
	case TX_MSG_DO_COMMIT:
		if (from_coord)
			part_learn(s, up, true, true);
		break;
	case TX_MSG_DO_ABORT:
		if (from_coord)
			part_learn(s, up, false, true);
		break;
	case TX_MSG_DECISION:
		part_learn(s, up, m->arg != 0, false);
		break;
	case TX_MSG_GET_DECISION:
		/* Cooperative termination: answer what we know. One that has not
		 * voted aborts alone, which settles it for everyone. */
		if (!s->cfg.cooperative)
			break;
		if (s->st == TX_ST_INIT)
			abort_alone(s, up);
		if (tx_decided(s->st))
			tx_send(up, &s->cfg, m->from, TX_MSG_DECISION, s->st == TX_ST_COMMITTED, 0);
		break;
	default:
		break;
	}
}

static void on_message(void *site, struct tx_update *up, const struct tx_msg *m)
{
	struct tx_2pc *s = site;
	if (is_coord(s))
		coord_message(s, up, m);
	else
		part_message(s, up, m);
}

static const struct tx_handlers handlers = {
	.begin = on_begin, .timeout = on_timeout, .recover = on_recover,
	.message = on_message, .granted = NULL, /* no lock service: the coordinator is site 0 */
};

static void step(void *site, const struct tx_event *ev, struct tx_update *up)
{
	struct tx_2pc *s = site;
	tx_step(&handlers, s, &s->cfg, ev, up);
}

const struct tx_proto tx_2pc = {"2pc", "2PC", make_plain, release, step, TX_MSG_DO_COMMIT,
				false, false};
const struct tx_proto tx_2pc_coop = {"2pc-coop", "2PC cooperative", make_coop, release, step,
				     TX_MSG_DO_COMMIT, true, false};
