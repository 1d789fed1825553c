/* What the atomic commit protocols beside the lock (tx_2pc.c, tx_3pc.c, tx_fenced.c) share:
 * their messages, states, events and actions, one step's dispatch, and the table of protocols
 * compare_tx.c drives. Like alg.h's algorithms they are pure state machines: an event in,
 * actions out, no clock, no I/O; a timeout is an action asking for a TIMEOUT event later. Test
 * code, not part of ring. */
#ifndef TX_H
#define TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TX_MAX_N 32    /* sites per transaction; member sets are 64-bit masks */
#define TX_MSG_LEN 12  /* type(1) arg(1) from(2) tx(4) epoch(4), big-endian */
#define TX_COORD 0     /* the original coordinator's index; participants are 1..n-1 */
#define TX_NO_TIMER UINT64_MAX

/* The textbook's names where it has them (Coulouris et al., 2PC: canCommit?, doCommit,
 * doAbort, haveCommitted, getDecision); the rest are 3PC's (Skeen's pre-commit and its
 * termination protocol). */
#define TX_MSG_TYPES(X)                                                              \
	X(CAN_COMMIT, 1, "canCommit?")   /* coordinator: vote on the transaction */  \
	X(VOTE, 2, "vote")               /* arg: 1 yes, 0 no */                       \
	X(PRE_COMMIT, 3, "preCommit")    /* 3PC: everyone voted yes */               \
	X(ACK, 4, "ack")                 /* 3PC: preCommit received */               \
	X(DO_COMMIT, 5, "doCommit")                                                  \
	X(DO_ABORT, 6, "doAbort")                                                    \
	X(HAVE_COMMITTED, 7, "haveCommitted") /* 2PC: the coordinator may forget */  \
	X(GET_DECISION, 8, "getDecision")     /* an uncertain site asks */           \
	X(DECISION, 9, "decision")       /* the answer; arg: 1 commit, 0 abort */     \
	X(STATE_REQ, 10, "stateReq")     /* 3PC termination: a new coordinator asks */ \
	X(STATE, 11, "state")            /* arg: the replier's enum tx_state */  \
	X(OPEN, 12, "openSubTransaction") /* nested: a parent opens a child */      \
	X(REPORT, 13, "report")          /* nested: arg 1 provisionally committed,  \
					    epoch: the sites below that did too */

enum tx_msg_type {
#define TX_MSG_ENUM_(name, code, str) TX_MSG_##name = code,
	TX_MSG_TYPES(TX_MSG_ENUM_)
#undef TX_MSG_ENUM_
	TX_MSG_LAST_ = TX_MSG_REPORT
};

/* EPOCH: 3PC's coordinator generation, 0 for the original coordinator;
 * a site follows the newest it has heard and ignores orders of older ones.
 * 2PC sends 0; a nested REPORT carries a set of sites in it; fenced 2PC
 * carries the coordinator's fence (tx_fenced.c). TX: the transaction, so
 * that one site could hold several. */
struct tx_msg {
	enum tx_msg_type type;
	uint8_t arg;
	uint16_t from;
	uint32_t tx;
	uint32_t epoch;
};

static inline const char *tx_msg_name(enum tx_msg_type type)
{
	switch (type) {
#define TX_MSG_NAME_(name, code, str) case TX_MSG_##name: return str;
		TX_MSG_TYPES(TX_MSG_NAME_)
#undef TX_MSG_NAME_
	}
	return "?";
}

static inline void tx_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static inline uint32_t tx_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void tx_msg_encode(const struct tx_msg *m, uint8_t out[TX_MSG_LEN])
{
	out[0] = (uint8_t)m->type;
	out[1] = m->arg;
	out[2] = (uint8_t)(m->from >> 8);
	out[3] = (uint8_t)m->from;
	tx_put32(out + 4, m->tx);
	tx_put32(out + 8, m->epoch);
}

/* Returns 0, or -1 when BUF is not exactly one well-formed message. */
static inline int tx_msg_decode(const uint8_t *buf, size_t len, struct tx_msg *m)
{
	if (len != TX_MSG_LEN || buf[0] < TX_MSG_CAN_COMMIT || buf[0] > TX_MSG_LAST_)
		return -1;
	m->type = (enum tx_msg_type)buf[0];
	m->arg = buf[1];
	m->from = (uint16_t)(buf[2] << 8 | buf[3]);
	m->tx = tx_get32(buf + 4);
	m->epoch = tx_get32(buf + 8);
	return 0;
}

/* A site's state in the transaction, as its log keeps it. INIT is the empty
 * log; the coordinator collecting votes is UNCERTAIN without logging it. */
#define TX_STATES(X)                        \
	X(INIT, 0, "init")                  \
	X(UNCERTAIN, 1, "uncertain")        \
	X(PRECOMMITTED, 2, "precommitted")  \
	X(COMMITTED, 3, "committed")        \
	X(ABORTED, 4, "aborted")

enum tx_state {
#define TX_STATE_ENUM_(name, code, str) TX_ST_##name = code,
	TX_STATES(TX_STATE_ENUM_)
#undef TX_STATE_ENUM_
};

static inline const char *tx_state_name(enum tx_state s)
{
	switch (s) {
#define TX_STATE_NAME_(name, code, str) case TX_ST_##name: return str;
		TX_STATES(TX_STATE_NAME_)
#undef TX_STATE_NAME_
	}
	return "?";
}

static inline bool tx_decided(enum tx_state s)
{
	return s == TX_ST_COMMITTED || s == TX_ST_ABORTED;
}

/* One site of one transaction. T_US is the protocol's timeout unit: it must
 * exceed a round trip (the protocols assume a synchronous network, as 3PC
 * must); every timer is a small multiple of it. */
struct tx_config {
	size_t n, me;
	uint32_t tx;
	bool vote_yes;     /* what this participant's resources say */
	bool cooperative;  /* 2PC: an uncertain participant asks the others too */
	uint64_t t_us;
	uint32_t fence;    /* fenced: the highest fence its log keeps (0 for a fresh one) */
};

enum tx_event_type {
	TX_EVENT_BEGIN,   /* the client closed the transaction: the work is done everywhere */
	TX_EVENT_MESSAGE, /* a message arrived */
	TX_EVENT_TIMEOUT, /* the timer the last TIMER action set went off */
	TX_EVENT_RECOVER, /* the process restarted from its log (given to _new) */
	TX_EVENT_GRANTED, /* fenced: the lock service made it coordinator, with fence */
};

struct tx_event {
	enum tx_event_type type;
	const uint8_t *buf; /* MESSAGE */
	size_t len;
	uint16_t from;      /* MESSAGE: index of the site at the source address */
	uint32_t fence;     /* GRANTED */
};

enum tx_action_type {
	TX_ACTION_PERSIST, /* write state to the log; done before the actions after it */
	TX_ACTION_SEND,    /* send buf to site `to` */
	TX_ACTION_TIMER,   /* (re)arm the one timer after_us from now; TX_NO_TIMER cancels */
	TX_ACTION_VOTE,    /* this participant votes: yes or not (for the checker) */
	TX_ACTION_DECIDE,  /* this site decides: commit or not (for the checker) */
	TX_ACTION_ACQUIRE, /* fenced: ask the lock service for the coordinator role */
	TX_ACTION_RELEASE, /* fenced: give the role back */
};

struct tx_action {
	enum tx_action_type type;
	uint16_t to;          /* SEND */
	bool yes;             /* VOTE: yes; DECIDE: commit */
	enum tx_state state;  /* PERSIST */
	uint32_t fence;       /* PERSIST: fenced protocols log their highest fence too */
	uint64_t after_us;    /* TIMER */
	uint8_t buf[TX_MSG_LEN];
};

/* A step sends at most one message to every other site, plus a few. */
#define TX_UPDATE_MAX (TX_MAX_N + 8)

struct tx_update {
	size_t n;
	struct tx_action action[TX_UPDATE_MAX];
};

static inline void tx_push(struct tx_update *up, struct tx_action a)
{
	if (up->n < TX_UPDATE_MAX) /* no step outgrows it: see TX_UPDATE_MAX */
		up->action[up->n++] = a;
}

static inline void tx_send(struct tx_update *up, const struct tx_config *c, uint16_t to,
			   enum tx_msg_type type, uint8_t arg, uint32_t epoch)
{
	struct tx_msg m = {type, arg, (uint16_t)c->me, c->tx, epoch};
	struct tx_action a = {.type = TX_ACTION_SEND, .to = to};
	tx_msg_encode(&m, a.buf);
	tx_push(up, a);
}

/* Sends to every site but this one. */
static inline void tx_send_all(struct tx_update *up, const struct tx_config *c,
			       enum tx_msg_type type, uint8_t arg, uint32_t epoch)
{
	for (size_t i = 0; i < c->n; i++)
		if (i != c->me)
			tx_send(up, c, (uint16_t)i, type, arg, epoch);
}

static inline void tx_persist(struct tx_update *up, enum tx_state s)
{
	tx_push(up, (struct tx_action){.type = TX_ACTION_PERSIST, .state = s});
}

static inline void tx_timer(struct tx_update *up, uint64_t after_us)
{
	tx_push(up, (struct tx_action){.type = TX_ACTION_TIMER, .after_us = after_us});
}

static inline void tx_vote(struct tx_update *up, bool yes)
{
	tx_push(up, (struct tx_action){.type = TX_ACTION_VOTE, .yes = yes});
}

static inline void tx_decide(struct tx_update *up, bool commit)
{
	tx_push(up, (struct tx_action){.type = TX_ACTION_DECIDE, .yes = commit});
}

/* Decodes the message EV carries into M for site C: 0, or -1 when the site must not read
 * it: malformed, naming another sender than the site at the address it came from, from
 * itself or from no site of the transaction, or about another transaction. */
static inline int tx_msg_accept(const struct tx_config *c, const struct tx_event *ev,
				struct tx_msg *m)
{
	if (tx_msg_decode(ev->buf, ev->len, m) < 0 || m->from != ev->from || m->from >= c->n ||
	    m->from == c->me || m->tx != c->tx)
		return -1;
	return 0;
}

/* What a flat protocol does on each event, for tx_step. SITE is the protocol's own struct.
 * GRANTED is NULL where the coordinator is not a lease of the lock service; MESSAGE sees
 * only what tx_msg_accept lets through. */
struct tx_handlers {
	void (*begin)(void *site, struct tx_update *up);
	void (*timeout)(void *site, struct tx_update *up);
	void (*recover)(void *site, struct tx_update *up);
	void (*granted)(void *site, struct tx_update *up, uint32_t fence);
	void (*message)(void *site, struct tx_update *up, const struct tx_msg *m);
};

/* One step of SITE (configured as C) on EV: UP holds its actions only. */
static inline void tx_step(const struct tx_handlers *h, void *site, const struct tx_config *c,
			   const struct tx_event *ev, struct tx_update *up)
{
	struct tx_msg m;
	up->n = 0;
	switch (ev->type) {
	case TX_EVENT_BEGIN:
		h->begin(site, up);
		break;
	case TX_EVENT_TIMEOUT:
		h->timeout(site, up);
		break;
	case TX_EVENT_RECOVER:
		h->recover(site, up);
		break;
	case TX_EVENT_GRANTED:
		if (h->granted)
			h->granted(site, up, ev->fence);
		break;
	case TX_EVENT_MESSAGE:
		if (tx_msg_accept(c, ev, &m) == 0)
			h->message(site, up, &m);
		break;
	}
}

/* A protocol as the driver sees it. NEW makes site cfg->me with its log's
 * last STORED state (TX_ST_INIT for a fresh one; RECOVER follows when it is
 * a restart); NULL when the numbers are out of range or memory runs out.
 * DECISION_MSG is the message that first carries the commit decision
 * (doCommit; preCommit for 3PC): the failure rows crash around it. */
struct tx_proto {
	const char *arg, *title;
	void *(*make)(const struct tx_config *cfg, enum tx_state stored);
	void (*release)(void *site);
	void (*step)(void *site, const struct tx_event *ev, struct tx_update *up);
	enum tx_msg_type decision_msg;
	bool cooperative;
	bool fenced; /* the coordinator role is a lease from the lock service (tx_fenced.c) */
};

#endif
