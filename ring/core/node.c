/* The token-ring protocol core: one member's state machine. Pure: every
 * input is an event with the time, every output an action in the update.
 * Section numbers (§) refer to docs/PROTOCOL.md, which argues each rule. */
#include "core/node.h"

#include <stdlib.h>
#include <string.h>

#include "core/assert.h"
#include "core/err.h"

#define RING_QUEUE_MAX 1024
/* An epoch is generation << 8 | minter index (§4.2): 24 bits of generations. */
#define RING_GEN_MAX 0xffffffu
/* How far above our own generation a datagram's epoch may be (§4.2): one
 * forged or broken datagram can then cost a regeneration and 1/256 of the
 * epoch space, never the ring. A member that falls further behind catches
 * up by asking the others (§5.3). */
#define RING_GEN_JUMP 0x10000u
/* Joins admitted per step, so that a step's actions stay bounded (§7);
 * the rest wait for the token's next visit. */
#define RING_JOINS_PER_STEP 8
#define NEVER UINT64_MAX

static const char *const state_names[] = {
#define RING_STATE_NAME_(name, str) str,
	RING_STATES(RING_STATE_NAME_)
#undef RING_STATE_NAME_
};

const char *ring_state_name(enum ring_state state)
{
	if ((size_t)state >= sizeof state_names / sizeof state_names[0])
		return "unknown";
	return state_names[state];
}

static const struct ring_log_info log_infos[] = {
#define RING_LOG_INFO_(name, str, verbose, a, b, c) {str, verbose, {a, b, c}},
	RING_LOG_EVENTS(RING_LOG_INFO_)
#undef RING_LOG_INFO_
};

const struct ring_log_info *ring_log_info(enum ring_log_event ev)
{
	static const struct ring_log_info unknown = {"unknown", false, {NULL, NULL, NULL}};
	if ((size_t)ev >= RING_LOG_COUNT_)
		return &unknown;
	return &log_infos[ev];
}

/* Where the token is, as far as this member is concerned (§3). */
enum token_phase {
	PHASE_NONE,    /* not here */
	PHASE_HELD,    /* here: we may grant, rest, or pass it */
	PHASE_PASSING, /* sent to pass_to, awaiting its ack; still ours to retransmit */
};

struct election_fwd {
	bool active;
	struct ring_msg_election msg;
	size_t to;
	uint32_t retries_left;
	uint64_t deadline;
};

struct ring_node {
	struct ring_layout layout;
	uint64_t fingerprint;
	uint16_t id;
	size_t me;     /* ring index */
	size_t quorum; /* members a regeneration needs */

	/* Epochs (§4). */
	uint32_t epoch;       /* newest known; persisted before acted on */
	uint32_t start_epoch; /* loaded at start: tokens of epochs <= this are refused (§5.3) */
	uint32_t seen_epoch;  /* the epoch of seen_seq */
	uint32_t seen_seq;    /* highest hop accepted in seen_epoch (§3.2) */
	/* The last hop accepted, whatever re-epoched since: what a LEAVE
	 * says we took (§5.4). seen_* moves to a new epoch we mint. */
	struct ring_hop accepted;

	/* The token. */
	enum token_phase phase;
	struct ring_msg_token token;
	size_t pass_to;
	uint32_t retries_left;
	uint64_t ack_deadline;
	uint64_t pass_sent;   /* first transmission of the current pass */
	/* The successor refused this very pass by name (§3.2): after one more
	 * ack timeout, take it back (JOIN) or skip the leaver (LEAVE). */
	enum { REFUSED_NONE, REFUSED_JOIN, REFUSED_LEAVE } pass_refused;
	uint32_t refused_epoch; /* the JOIN's epoch */
	uint64_t hop_rtt_us;  /* send to ack of the last pass answered first time */
	uint64_t hb_base;     /* when the token last heartbeat (§5.1) */
	uint64_t hb_deadline;
	bool visit_granted;   /* at most one grant per visit (§3.3) */
	bool visit_wanted;    /* someone wanted the token during this visit (§3.4) */
	bool resting;
	uint64_t rest_deadline;
	/* Parking (§3.4): a token a whole rotation found unwanted stays here,
	 * granting our own clients, until another member summons it. */
	bool parked;
	bool summoned;        /* a WANT for this park came: the visit ends with the grant */
	/* The token is out on a lap from its park here, which left with this
	 * epoch and count; lap_epoch 0: no lap. */
	uint32_t lap_epoch, lap_counter;
	uint64_t arrived;     /* when the token last came here, or was made here */

	/* Summoning (§3.4): where the last heartbeat said the token is parked. */
	bool park_known;
	size_t park_at;
	struct ring_hop park_hop;
	struct ring_hop summon_hop; /* the park our last WANT was for */
	uint64_t summon_next;       /* resend the WANT then while still waiting */
	uint64_t summon_every;

	/* The critical region. */
	bool granted;
	uint64_t grant_client;
	uint64_t grant_fence;
	uint64_t lease_deadline;
	uint64_t last_fence;
	uint64_t queue[RING_QUEUE_MAX];
	size_t q_head, q_len;

	/* Liveness and membership. */
	bool heard_ever;
	uint64_t last_heard;    /* a live token (token or heartbeat, current epoch) */
	uint64_t loss_deadline; /* when not holding: suspect loss then */
	struct ring_set alive_view;
	bool no_quorum;
	uint64_t join_next;     /* our own JOIN is rate-limited */
	uint64_t join_until[RING_MAX_MEMBERS]; /* pending JOIN of member i, valid until */
	uint32_t join_epoch[RING_MAX_MEMBERS];
	uint64_t left_until[RING_MAX_MEMBERS]; /* member i announced LEAVE */

	/* Elections (§6). */
	uint32_t elect_round;
	bool elect_active;
	uint64_t elect_started;
	uint64_t participated_until;
	uint16_t best_initiator; /* highest election carried until participated_until */
	uint32_t handled_round[RING_MAX_MEMBERS];
	uint64_t handled_until[RING_MAX_MEMBERS];
	struct election_fwd fwd;

	/* What this member's epoch is worth (§5.3): until a majority of the
	 * others has told it what they know, it takes no token and calls no
	 * election, since its disk may have been wiped or rolled back. */
	bool proven;
	bool query_active;
	bool query_at_start;    /* the start's query, not a catch-up */
	uint64_t first_nonce;   /* this life's queries: first_nonce..query_nonce */
	uint64_t query_nonce;
	uint64_t query_next;    /* resend, or (inactive) the earliest next catch-up */
	uint64_t query_every;   /* resend interval: doubles up to loss_timeout_ms */
	struct ring_set replied; /* to the current query */
	uint32_t reply_epoch[RING_MAX_MEMBERS]; /* its answers */
	/* What each member knew when it first answered us in this life: every
	 * hop it sent before we started is of an epoch at most this (§5.3). */
	struct ring_set floor_known;
	uint32_t floor_from[RING_MAX_MEMBERS];

	/* Leaving and pauses. */
	bool leaving;
	bool left;
	bool started;
	bool broken;            /* a FATAL was returned; nothing more happens */
	struct ring_hop leave_accepted; /* what our LEAVE said we accepted (§5.4) */
	uint64_t leave_started, leave_deadline;
	size_t joins_this_step;
	uint64_t armed_deadline;
	uint64_t quarantine_until;

	struct ring_counters counters;
};

/* ---- small helpers ---- */

static uint64_t ms(uint32_t v)
{
	return (uint64_t)v * 1000;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint16_t id_of(const struct ring_node *node, size_t idx)
{
	return node->layout.members[idx].id;
}

/* The member after IDX in ring order that is in SET, or IDX's own index when
 * no other member is. */
static size_t next_in(const struct ring_node *node, const struct ring_set *set, size_t idx)
{
	size_t n = node->layout.n;
	for (size_t k = 1; k < n; k++) {
		size_t j = (idx + k) % n;
		if (ring_set_has(set, j))
			return j;
	}
	return node->me;
}

/* How long an election may take before its initiator tries again: the loss
 * timeout plus a full ring of hops, each with its retries (§6). */
static uint64_t election_timeout(const struct ring_node *node)
{
	const struct ring_layout *l = &node->layout;
	return ms(l->loss_timeout_ms) +
	       (uint64_t)l->n * (l->retries + 1) * ms(l->ack_timeout_ms);
}

/* A live token was heard recently enough that an election must be a
 * mistake (§6.2). */
static bool recently_heard(const struct ring_node *node, uint64_t now)
{
	return node->heard_ever &&
	       now - node->last_heard < ms(node->layout.loss_timeout_ms) / 2;
}

/* ---- actions ---- */

static size_t update_cap(const struct ring_update *up)
{
	return up->cap == 0 || up->cap > RING_UPDATE_MAX ? RING_UPDATE_MAX : up->cap;
}

/* Replaces everything UP holds with one FATAL: a member that cannot do
 * what it decided must do nothing at all, and stop (§7). */
static void fatal(struct ring_node *node, struct ring_update *up, int reason)
{
	node->broken = true;
	up->n = 1;
	memset(&up->action[0], 0, sizeof up->action[0]);
	up->action[0].type = RING_ACTION_FATAL;
	up->action[0].u.fatal.reason = reason;
}

/* The next action slot. RING_UPDATE_MAX (96) is more than twice what the
 * longest step we know of needs (about forty, §7), but that is an estimate,
 * not a proof, and a driver may give less room (update.cap). Running out
 * must not be silent, since a lost PERSIST would let a member act on an
 * epoch it never stored: the update becomes one FATAL and the member is
 * broken, so this and every later push of the step return NULL and add
 * nothing to it. */
static struct ring_action *push(struct ring_node *node, struct ring_update *up,
				enum ring_action_type type)
{
	if (node->broken)
		return NULL;
	if (up->n >= update_cap(up)) {
		fatal(node, up, -RING_EOVERFLOW);
		return NULL;
	}
	struct ring_action *a = &up->action[up->n++];
	memset(a, 0, sizeof *a);
	a->type = type;
	return a;
}

static void log_event(struct ring_node *node, struct ring_update *up,
		      enum ring_log_event ev, uint64_t a, uint64_t b, uint64_t c)
{
	struct ring_action *act = push(node, up, RING_ACTION_LOG);
	if (!act)
		return;
	act->u.log.event = ev;
	act->u.log.field[0] = a;
	act->u.log.field[1] = b;
	act->u.log.field[2] = c;
}

static void bad_packet(struct ring_node *node, struct ring_update *up, uint16_t from, int err)
{
	node->counters.bad_packets++;
	log_event(node, up, RING_LOG_BAD_PACKET, from, (uint64_t)(err < 0 ? -err : err), 0);
}

/* A datagram of another wire version: a member still on the old binary (or
 * already on the new one) during an upgrade. Its own counter and line, not
 * a bad packet, so that an operator sees at once what is wrong; like any
 * undecodable datagram it goes no further, so the sender is never taken
 * for a live member and never half-joins (PROTOCOL.md §2). */
static void version_mismatch(struct ring_node *node, struct ring_update *up, uint16_t from,
			     int theirs)
{
	node->counters.version_mismatches++;
	log_event(node, up, RING_LOG_VERSION_MISMATCH, from, (uint64_t)theirs, RING_WIRE_VERSION);
}

static void send_msg(struct ring_node *node, struct ring_update *up, uint16_t to,
		     struct ring_msg *msg)
{
	msg->from = node->id;
	msg->to = to;
	msg->fingerprint = node->fingerprint;
	struct ring_action *a = push(node, up, RING_ACTION_SEND);
	if (!a)
		return;
	int len = ring_wire_encode(msg, a->u.send.buf, sizeof a->u.send.buf);
	if (len < 0) {
		up->n--; /* cannot happen: every message fits RING_WIRE_MAX */
		return;
	}
	a->u.send.to = to;
	a->u.send.len = (uint16_t)len;
}

/* Returns false when the member is broken: the epoch was not stored, so it
 * must not be acted on (the update is one FATAL by now). */
static bool persist(struct ring_node *node, struct ring_update *up, uint32_t epoch)
{
	/* An epoch only grows: one persisted below would let us mint again
	 * what we minted (I3). */
	RING_ASSERT(epoch >= node->epoch);
	struct ring_action *a = push(node, up, RING_ACTION_PERSIST);
	if (!a)
		return false;
	a->u.persist.epoch = epoch;
	node->epoch = epoch;
	return true;
}

static void send_ack(struct ring_node *node, struct ring_update *up, uint16_t to,
		     uint32_t epoch, uint32_t seq, uint32_t flags)
{
	struct ring_msg m = {.type = RING_MSG_TOKEN_ACK};
	m.u.token_ack.epoch = epoch;
	m.u.token_ack.seq = seq;
	m.u.token_ack.known_epoch = node->epoch;
	m.u.token_ack.flags = flags;
	send_msg(node, up, to, &m);
}

static void send_join(struct ring_node *node, struct ring_update *up, uint16_t to,
		      uint64_t now)
{
	if (node->leaving || now < node->join_next)
		return;
	node->join_next = now + ms(node->layout.heartbeat_ms);
	struct ring_msg m = {.type = RING_MSG_JOIN};
	m.u.join.epoch = node->epoch;
	send_msg(node, up, to, &m);
}

/* "I will not take this pass" (§5.3, §5.4): a restarted member asks to be
 * taken in (JOIN), a leaving one says it is gone (LEAVE). Naming the exact
 * hop is what lets the sender act at once: a duplicate or an old refusal
 * cannot match a later pass, since every pass has a new seq or epoch. */
static void send_refusal(struct ring_node *node, struct ring_update *up, uint16_t to,
			 const struct ring_msg_token *t)
{
	struct ring_msg m;
	if (node->leaving) {
		m = (struct ring_msg){.type = RING_MSG_LEAVE};
		m.u.leave.epoch = node->epoch;
		m.u.leave.accepted = node->leave_accepted;
		m.u.leave.refused = (struct ring_hop){t->epoch, t->seq};
	} else {
		/* The new epoch must be above the floor that refused it too:
		 * refused for a floor above our own epoch (a forged or
		 * mistaken answer can only set one within reach, §5.3), the
		 * sender's take-back would otherwise mint below it and be
		 * refused again, one epoch per round for as long as it lasts. */
		int ti = ring_layout_index(&node->layout, to);
		uint32_t above = node->epoch;
		if (ti >= 0 && ring_set_has(&node->floor_known, (size_t)ti))
			above = max_u32(above, node->floor_from[ti]);
		m = (struct ring_msg){.type = RING_MSG_JOIN};
		m.u.join.epoch = above;
		m.u.join.refused = (struct ring_hop){t->epoch, t->seq};
	}
	send_msg(node, up, to, &m);
}

static void send_heartbeat(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	struct ring_msg m = {.type = RING_MSG_HEARTBEAT};
	m.u.heartbeat.epoch = node->token.epoch;
	m.u.heartbeat.seq = node->token.seq;
	m.u.heartbeat.counter = node->token.counter;
	/* Summoned, the park is ending: it draws no more summons. */
	m.u.heartbeat.flags = node->parked && !node->summoned ? RING_HB_PARKED : 0;
	m.u.heartbeat.alive = node->token.alive;
	send_msg(node, up, 0, &m);
	node->hb_base = now;
	node->hb_deadline = now + ms(node->layout.heartbeat_ms);
}

/* ---- the client queue ---- */

static bool queue_has(const struct ring_node *node, uint64_t client)
{
	for (size_t k = 0; k < node->q_len; k++)
		if (node->queue[(node->q_head + k) % RING_QUEUE_MAX] == client)
			return true;
	return false;
}

static uint64_t queue_pop(struct ring_node *node)
{
	RING_ASSERT(node->q_len > 0 && node->q_len <= RING_QUEUE_MAX);
	uint64_t c = node->queue[node->q_head];
	node->q_head = (node->q_head + 1) % RING_QUEUE_MAX;
	node->q_len--;
	return c;
}

static void queue_remove(struct ring_node *node, uint64_t client)
{
	size_t out = 0;
	for (size_t k = 0; k < node->q_len; k++) {
		uint64_t c = node->queue[(node->q_head + k) % RING_QUEUE_MAX];
		if (c != client)
			node->queue[(node->q_head + out++) % RING_QUEUE_MAX] = c;
	}
	node->q_len = out;
}

/* ---- epochs (§4) ---- */

/* A new epoch above BASE that only this member can make: the generation
 * above BASE's, with our ring index in the low byte. Two members never mint
 * the same epoch, and we never mint one twice since each is persisted.
 * Returns 0 when the generations are used up (§4.2): the update is then one
 * FATAL, since any epoch we could still make would repeat one. */
static uint32_t mint(struct ring_node *node, struct ring_update *up, uint32_t base)
{
	uint32_t gen = (max_u32(base, node->epoch) >> 8) + 1;
	if (gen > RING_GEN_MAX) {
		log_event(node, up, RING_LOG_EPOCH_EXHAUSTED, max_u32(base, node->epoch), 0, 0);
		fatal(node, up, -RING_EEXHAUSTED);
		return 0;
	}
	uint32_t e = gen << 8 | (uint32_t)node->me;
	RING_ASSERT(e > base && e > node->epoch && (e & 0xffu) == node->me);
	return e;
}

/* Whether epoch E is within one jump of BASE: none, or at most
 * RING_GEN_JUMP generations above it (§4.2), from 0 too. */
static bool within_reach(uint32_t base, uint32_t e)
{
	return e == 0 || (e >> 8) <= (base >> 8) + RING_GEN_JUMP;
}

/* An epoch a datagram may carry: one within reach of ours. A member further
 * behind, a wiped one joining an old ring for instance, learns where the
 * ring is from the others' EPOCH_REPLY, judged by query_settle (§5.3): an
 * answer beyond reach counts only when another member vouches for it too. */
static bool epoch_ok(const struct ring_node *node, uint32_t e)
{
	return within_reach(node->epoch, e);
}

static bool epochs_ok(const struct ring_node *node, const struct ring_msg *m)
{
	switch (m->type) {
	case RING_MSG_TOKEN:
		return epoch_ok(node, m->u.token.epoch);
	case RING_MSG_TOKEN_ACK:
		return epoch_ok(node, m->u.token_ack.epoch) &&
		       epoch_ok(node, m->u.token_ack.known_epoch);
	case RING_MSG_HEARTBEAT:
		return epoch_ok(node, m->u.heartbeat.epoch);
	case RING_MSG_ELECTION:
		return epoch_ok(node, m->u.election.max_epoch);
	case RING_MSG_JOIN:
		return epoch_ok(node, m->u.join.epoch) && epoch_ok(node, m->u.join.refused.epoch);
	case RING_MSG_LEAVE:
		return epoch_ok(node, m->u.leave.epoch) &&
		       epoch_ok(node, m->u.leave.accepted.epoch) &&
		       epoch_ok(node, m->u.leave.refused.epoch);
	case RING_MSG_WANT:
		return epoch_ok(node, m->u.want.epoch);
	default:
		/* EPOCH_REPLY is how a member that fell behind catches up:
		 * on_epoch_reply bounds it, since one answer beyond reach is
		 * evidence only once a second member gives one too (§5.3). */
		return true;
	}
}

static void revoke_grant(struct ring_node *node, struct ring_update *up)
{
	if (!node->granted)
		return;
	struct ring_action *a = push(node, up, RING_ACTION_REVOKE);
	if (a) {
		a->u.revoke.client = node->grant_client;
		a->u.revoke.fence = node->grant_fence;
	}
	log_event(node, up, RING_LOG_CS_EXIT, node->grant_fence, node->grant_client, 0);
	node->granted = false;
}

static void drop_token(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	revoke_grant(node, up);
	node->phase = PHASE_NONE;
	node->resting = false;
	node->parked = false;
	node->summoned = false;
	node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
}

/* Learn that epoch E exists. Tokens older than it are now stale, ours too. */
static void adopt(struct ring_node *node, struct ring_update *up, uint32_t e,
		  uint16_t from, uint64_t now)
{
	if (e <= node->epoch || !persist(node, up, e))
		return;
	log_event(node, up, RING_LOG_EPOCH_ADOPT, e, from, 0);
	if (node->phase != PHASE_NONE && node->token.epoch < e) {
		node->counters.stale_dropped++;
		log_event(node, up, RING_LOG_TOKEN_STALE_DROP, node->token.epoch, from, e);
		drop_token(node, up, now);
	}
}

/* Give the token we hold a new epoch, above BASE (§4.2): after a skip, a
 * membership change, or when its fences run out. Returns false when the
 * member is broken (epochs exhausted, or no room to persist): the caller
 * stops, as the update is one FATAL. */
static bool reepoch(struct ring_node *node, struct ring_update *up, uint32_t base,
		    uint64_t now)
{
	if (!node->proven) {
		/* We may have minted epochs in a life our disk forgot (§5.3):
		 * minting again before a majority told us what exists could
		 * repeat one. The token goes; a proven member regenerates. */
		drop_token(node, up, now);
		return false;
	}
	uint32_t e = mint(node, up, max_u32(base, node->token.epoch));
	if (e == 0 || !persist(node, up, e))
		return false;
	node->token.epoch = e;
	node->token.seq = 0;
	node->token.counter = 0;
	node->seen_epoch = e;
	node->seen_seq = 0;
	return true;
}

/* ---- the token's visit (§3) ---- */

static void pass_token(struct ring_node *node, struct ring_update *up, uint64_t now);

static void send_token(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	struct ring_msg m = {.type = RING_MSG_TOKEN};
	m.u.token = node->token;
	/* Transit counts too: half the last hop's round trip stands in for it,
	 * or a fast ring whose hops are mostly in flight would never reach
	 * its heartbeat (§5.1). */
	uint64_t quiet = now - node->hb_base + node->hop_rtt_us / 2;
	m.u.token.quiet_us = quiet > UINT32_MAX ? UINT32_MAX : (uint32_t)quiet;
	send_msg(node, up, id_of(node, node->pass_to), &m);
}

/* Applies pending joins and leaves to the token we hold; any change gets a
 * new epoch (§5.3, §5.4). Returns false when the token had to be dropped
 * for want of a quorum. */
static bool apply_membership(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* A change needs a new epoch, which a member that has not proven its
	 * epoch may not mint (§5.3): the requests stay pending for the next
	 * proven holder. Our own leave cannot wait; reepoch drops the token. */
	if (!node->proven && !node->leaving)
		return true;
	struct ring_set alive = node->token.alive;
	struct ring_set joined;
	uint32_t base = node->token.epoch;
	bool changed = false;
	ring_set_clear(&joined);
	for (size_t i = 0; i < node->layout.n; i++) {
		if (i == node->me)
			continue;
		if (node->join_until[i] > now && node->joins_this_step < RING_JOINS_PER_STEP) {
			/* Re-epoch also when the joiner is in the set: it
			 * restarted and refuses the epochs it knew (§5.3). */
			if (!ring_set_has(&alive, i) || node->join_epoch[i] >= node->token.epoch) {
				node->joins_this_step++;
				ring_set_add(&alive, i);
				base = max_u32(base, node->join_epoch[i]);
				changed = true;
				ring_set_add(&joined, i);
			}
			node->join_until[i] = 0;
		}
		if (node->left_until[i] > now && ring_set_has(&alive, i)) {
			ring_set_del(&alive, i);
			changed = true;
		}
		node->left_until[i] = 0;
	}
	if (node->leaving && ring_set_has(&alive, node->me)) {
		ring_set_del(&alive, node->me);
		changed = true;
	}
	if (!changed)
		return true;
	if (ring_set_count(&alive) < node->quorum) {
		node->no_quorum = true;
		log_event(node, up, RING_LOG_NO_QUORUM, ring_set_count(&alive), node->quorum, 0);
		drop_token(node, up, now);
		return false;
	}
	node->token.alive = alive;
	node->alive_view = alive;
	if (!reepoch(node, up, base, now))
		return false;
	for (size_t i = 0; i < node->layout.n; i++)
		if (ring_set_has(&joined, i))
			log_event(node, up, RING_LOG_MEMBER_REJOIN, id_of(node, i), node->token.epoch, 0);
	/* A park re-epoched where it rests is a new park: say so at once, or
	 * summons naming the old one are ignored until the next heartbeat. */
	if (node->parked)
		send_heartbeat(node, up, now);
	return true;
}

static void grant(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* One grant at a time, of the token we hold in the epoch we know,
	 * once per visit (§3.3). An unproven member may grant (§5.3: it
	 * mints nothing); the token's epoch is one we persisted either way. */
	RING_ASSERT(node->phase == PHASE_HELD && !node->granted && !node->visit_granted);
	RING_ASSERT(node->token.epoch == node->epoch);
	uint64_t before = node->last_fence;
	uint64_t client = queue_pop(node);
	node->token.counter++;
	node->granted = true;
	node->grant_client = client;
	node->grant_fence = ring_fence(node->token.epoch, node->token.counter);
	node->lease_deadline = now + ms(node->layout.lease_ms);
	/* Fences only grow (I1): strictly above every one this member granted. */
	RING_ASSERT(node->grant_fence > before);
	node->last_fence = node->grant_fence;
	node->visit_granted = true;
	node->visit_wanted = true;
	node->resting = false;
	node->counters.cs_entries++;
	struct ring_action *a = push(node, up, RING_ACTION_GRANT);
	if (a) {
		a->u.grant.client = client;
		a->u.grant.fence = node->grant_fence;
		a->u.grant.epoch = node->token.epoch;
	}
	log_event(node, up, RING_LOG_CS_ENTER, node->grant_fence, node->token.epoch, client);
}

/* Under a majority quorum, grant under an epoch only once a majority has
 * persisted it, so that every later election, which needs a majority, meets
 * it and mints above it (§4.4). The minter and every member that accepted a
 * hop of the epoch persisted it, and within an epoch the hops visit distinct
 * members until the token wraps: seq + 1 members know it. */
static bool epoch_confirmed(const struct ring_node *node)
{
	return (size_t)node->token.seq + 1 >= node->quorum;
}

/* A whole rotation found nobody waiting (§3.4): every other member the token
 * counts passed it on unwanted since it was last wanted. Only when
 * idle_pass_ms is 0; a paced token keeps moving. */
static bool may_park(const struct ring_node *node)
{
	/* A client here that cannot be granted yet (quarantine, an epoch not
	 * confirmed) sends the token on at once: no park to announce. */
	bool can_grant = node->q_len == 0 ||
			 (node->quarantine_until == 0 && epoch_confirmed(node));
	return node->layout.idle_pass_ms == 0 && !node->summoned && can_grant &&
	       (size_t)node->token.idle + 1 >= ring_set_count(&node->token.alive);
}

/* A pass is being made again (a skip, a take-back): the visit was counted
 * in idle by the first, so undo that, and pass_token counts it once. */
static void uncount_pass(struct ring_node *node)
{
	if (node->token.idle == 0)
		node->visit_wanted = true;
	else
		node->token.idle--;
}

/* A parked token grants only while its last lap is recent (§3.4): the
 * token's arrival showed the ring reached us then. A holder cut off from
 * everyone since would otherwise grant for as long as the cut lasts, while
 * the others regenerate; a moving token finds out at its next pass. So a
 * client asking later sends it round once first, as an unparked token
 * would have gone, and the majority side has not yet suspected a loss. */
static bool park_fresh(const struct ring_node *node, uint64_t now)
{
	return !node->parked || now - node->arrived < ms(node->layout.loss_timeout_ms) / 2;
}

/* And it goes round once every loss_timeout_ms even when nobody asks: a
 * member that died is then found, skipped and reported (no-quorum) as on
 * a moving ring, for two datagrams per member a loss timeout. */
static uint64_t lap_at(const struct ring_node *node)
{
	return node->arrived + ms(node->layout.loss_timeout_ms);
}

static bool lap_due(const struct ring_node *node, uint64_t now)
{
	return node->parked && now >= lap_at(node);
}

/* The token stays here, heartbeating; the heartbeat says so at once, so
 * that a member whose client asks knows whom to summon. */
static void park(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	RING_ASSERT(node->phase == PHASE_HELD && !node->granted);
	node->parked = true;
	node->resting = false;
	/* Back from a lap with nothing granted on the way is the same park. */
	bool same = node->token.epoch == node->lap_epoch &&
		    node->token.counter == node->lap_counter;
	if (!same) {
		node->counters.parks++;
		log_event(node, up, RING_LOG_TOKEN_PARK, node->token.epoch, node->token.seq,
			  node->token.idle);
	}
	node->lap_epoch = 0;
	send_heartbeat(node, up, now);
}

/* Decides what the held token does next: grant, rest, park, or move on
 * (§3.3, §3.4). */
static void serve(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (now >= node->quarantine_until)
		node->quarantine_until = 0;
	if (node->phase != PHASE_HELD || node->granted)
		return;
	bool alone = next_in(node, &node->token.alive, node->me) == node->me;
	if (node->leaving) {
		pass_token(node, up, now);
		return;
	}
	if (alone) { /* a park is for a ring: alone, every grant is a visit anyway */
		node->parked = false;
		node->lap_epoch = 0;
	}
	if (!node->parked && !alone && may_park(node))
		park(node, up, now);
	if (node->visit_granted) {
		if (!alone && !(node->parked && !node->summoned && !lap_due(node, now))) {
			pass_token(node, up, now);
			return;
		}
		/* Alone in the ring, or parked with nobody else asking: each
		 * grant is a visit of its own. */
		node->visit_granted = false;
	}
	/* This epoch's fences are used up: a new epoch, which like any other
	 * must be confirmed before it is granted under (§4.1, §4.4). */
	if (node->q_len > 0 && node->token.counter == UINT32_MAX &&
	    !reepoch(node, up, node->token.epoch, now))
		return;
	if (node->q_len > 0 && node->quarantine_until == 0 && epoch_confirmed(node) &&
	    park_fresh(node, now)) {
		grant(node, up, now);
		return;
	}
	if (alone) {
		/* Keep it; an ACQUIRE or a JOIN wakes us (quorum 1: confirmed).
		 * A rest begun before the others left has nothing to end: its
		 * deadline would fire at once, for ever. */
		node->resting = false;
		return;
	}
	if (node->parked) {
		if (node->q_len == 0 && !node->summoned && !lap_due(node, now))
			return;
		/* Summoned, wanted here but stale, or a lap is due: once round,
		 * wanted, so that it parks again only after a whole rotation. */
		node->lap_epoch = node->q_len == 0 && !node->summoned ? node->token.epoch : 0;
		node->lap_counter = node->token.counter;
		node->visit_wanted = true;
		pass_token(node, up, now);
		return;
	}
	if (node->q_len > 0 || node->layout.idle_pass_ms == 0) {
		/* Wanted here but not grantable yet (quarantine, an unconfirmed
		 * epoch), or not yet a rotation unwanted: move on. */
		pass_token(node, up, now);
		return;
	}
	if (!node->resting) {
		node->resting = true;
		node->rest_deadline = now + ms(node->layout.idle_pass_ms);
	} else if (now >= node->rest_deadline) {
		pass_token(node, up, now);
	}
}

static void pass_token(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* A grant ends before the token leaves: a client in the region of a
	 * token elsewhere is two holders (I2). */
	RING_ASSERT(!node->granted);
	/* The park ends here, before a re-epoch below could announce it. */
	node->parked = false;
	if (!apply_membership(node, up, now))
		return;
	/* Hop numbers run out: a new epoch. */
	if (node->token.seq == UINT32_MAX && !reepoch(node, up, node->token.epoch, now))
		return;
	size_t next = next_in(node, &node->token.alive, node->me);
	if (next == node->me) {
		if (node->leaving) { /* nobody to hand it to */
			drop_token(node, up, now);
			return;
		}
		node->visit_granted = false;
		return;
	}
	node->resting = false;
	node->visit_granted = false;
	/* Hops in a row that found nobody waiting: a rotation of them parks
	 * the token (§3.4). */
	if (node->visit_wanted || node->q_len > 0 || node->summoned)
		node->token.idle = 0;
	else if (node->token.idle < UINT32_MAX)
		node->token.idle++;
	node->visit_wanted = false;
	node->summoned = false;
	/* A heartbeat that is due goes first, so the token leaves with its
	 * quiet time reset; otherwise every later holder would find it due. */
	if (now >= node->hb_deadline)
		send_heartbeat(node, up, now);
	/* seen_* stays the last hop we accepted (§3.2): a hop we pass
	 * reaches only its receiver, so recording it would refuse nothing
	 * more (make mutants found the rule redundant; PROTOCOL.md §3.2). */
	node->token.seq++;
	node->phase = PHASE_PASSING;
	node->pass_refused = REFUSED_NONE;
	node->pass_to = next;
	node->retries_left = node->layout.retries;
	node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
	node->pass_sent = now;
	send_token(node, up, now);
	log_event(node, up, RING_LOG_TOKEN_PASS, id_of(node, next), node->token.epoch,
		  node->token.seq);
}

static void finish_leave(struct ring_node *node, struct ring_update *up)
{
	if (node->left)
		return;
	node->left = true;
	log_event(node, up, RING_LOG_LEAVE_DONE, node->epoch, 0, 0);
	push(node, up, RING_ACTION_LEFT);
}

/* The successor did not answer (§3.2): it is dead to this token. */
static void skip_successor(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	size_t dead = node->pass_to;
	node->counters.skips++;
	ring_set_del(&node->token.alive, dead);
	node->phase = PHASE_HELD;
	if (ring_set_count(&node->token.alive) < node->quorum) {
		log_event(node, up, RING_LOG_SUCCESSOR_SKIP, id_of(node, dead), node->token.epoch, 0);
		node->no_quorum = true;
		log_event(node, up, RING_LOG_NO_QUORUM, ring_set_count(&node->token.alive),
			  node->quorum, 0);
		drop_token(node, up, now);
		return;
	}
	/* A new epoch makes the copy the successor may have after all (its
	 * acks lost) stale wherever the two meet (§4.2). */
	if (!reepoch(node, up, node->token.epoch, now))
		return;
	node->alive_view = node->token.alive;
	log_event(node, up, RING_LOG_SUCCESSOR_SKIP, id_of(node, dead), node->token.epoch, 0);
	node->visit_granted = true; /* the visit was over; move on */
	uncount_pass(node);
	/* The skipped member may have passed a copy on before it died with
	 * its ack lost (§3.2): heartbeat the new epoch at once, so that the
	 * copy is dropped, and its grant revoked, within a datagram's time. */
	node->hb_deadline = now;
	pass_token(node, up, now);
}

/* ---- elections (§6) ---- */

static void election_send(struct ring_node *node, struct ring_update *up)
{
	struct ring_msg m = {.type = RING_MSG_ELECTION};
	m.u.election = node->fwd.msg;
	send_msg(node, up, id_of(node, node->fwd.to), &m);
}

static void election_arrive(struct ring_node *node, struct ring_update *up,
			    const struct ring_msg_election *e, uint64_t now);

/* Hands an election to the next member in configured order, whatever the
 * token thinks of it: excluded members take part too. */
static void election_forward(struct ring_node *node, struct ring_update *up,
			     const struct ring_msg_election *e, size_t to, uint64_t now)
{
	if (to == node->me) { /* around the ring with nobody else answering */
		node->fwd.active = false;
		if (e->initiator == node->id)
			election_arrive(node, up, e, now);
		return;
	}
	node->fwd.active = true;
	node->fwd.msg = *e;
	node->fwd.msg.hops = (uint16_t)(e->hops + 1);
	node->fwd.to = to;
	node->fwd.retries_left = node->layout.retries;
	node->fwd.deadline = now + ms(node->layout.ack_timeout_ms);
	election_send(node, up);
}

static void start_election(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	node->elect_round++;
	if (node->elect_round == 0)
		node->elect_round = 1;
	node->elect_active = true;
	node->elect_started = now;
	node->counters.elections++;
	node->loss_deadline = now + election_timeout(node);
	log_event(node, up, RING_LOG_ELECTION_START, node->elect_round, node->epoch, 0);
	struct ring_msg_election e = {
		.initiator = node->id,
		.round = node->elect_round,
		.max_epoch = node->epoch,
		.flags = node->no_quorum ? RING_ELECTION_NO_QUORUM : 0,
	};
	ring_set_add(&e.participants, node->me);
	election_forward(node, up, &e, (node->me + 1) % node->layout.n, now);
}

static void regenerate(struct ring_node *node, struct ring_update *up,
		       const struct ring_msg_election *e, uint64_t now)
{
	uint32_t epoch = mint(node, up, e->max_epoch);
	if (epoch == 0)
		return;
	size_t have = ring_set_count(&e->participants);
	log_event(node, up, RING_LOG_ELECTION_WON, epoch, e->round, have);
	if (!persist(node, up, epoch))
		return;
	memset(&node->token, 0, sizeof node->token);
	node->token.epoch = epoch;
	node->token.alive = e->participants;
	node->seen_epoch = epoch;
	node->seen_seq = 0;
	node->alive_view = e->participants;
	node->counters.regenerations++;
	log_event(node, up, RING_LOG_TOKEN_REGEN, epoch, have, 0);
	node->phase = PHASE_HELD;
	node->visit_granted = false;
	node->visit_wanted = false;
	node->resting = false;
	node->parked = false;
	node->summoned = false;
	node->arrived = now;
	node->no_quorum = false;
	node->participated_until = 0;
	node->heard_ever = true;
	node->last_heard = now;
	send_heartbeat(node, up, now); /* everyone learns the new epoch at once */
	serve(node, up, now);
}

/* Our own election came back around the ring. */
static void election_complete(struct ring_node *node, struct ring_update *up,
			      const struct ring_msg_election *e, uint64_t now)
{
	node->elect_active = false;
	/* A live token heard since the start has ended the election already
	 * (on_token, on_heartbeat clear elect_active: §6.2 rule 3). */
	if (now - node->elect_started > election_timeout(node))
		return; /* too old: what it learned of epochs may be out of date (§6.2) */
	size_t have = ring_set_count(&e->participants);
	if (have < node->quorum) {
		node->no_quorum = true;
		log_event(node, up, RING_LOG_NO_QUORUM, have, node->quorum, 0);
		node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
		return;
	}
	regenerate(node, up, e, now);
}

static void election_arrive(struct ring_node *node, struct ring_update *up,
			    const struct ring_msg_election *e, uint64_t now)
{
	int ii = ring_layout_index(&node->layout, e->initiator);
	if (ii < 0)
		return;
	if ((size_t)ii == node->me) {
		if (node->elect_active && e->round == node->elect_round)
			election_complete(node, up, e, now);
		return;
	}
	/* Retransmissions of an election we already handled. Rounds restart
	 * after a member restarts, so a round is remembered for a while only. */
	if (node->handled_round[ii] == e->round && node->handled_until[ii] > now)
		return;
	node->handled_round[ii] = e->round;
	node->handled_until[ii] = now + election_timeout(node);
	if (node->leaving)
		return;
	if (node->phase != PHASE_NONE) {
		/* A live token ends the election (§6.2). Its heartbeat tells the
		 * initiator; an epoch above what the election saw lets members
		 * that learned a dead epoch accept this token. */
		if (node->phase == PHASE_HELD && e->max_epoch > node->token.epoch &&
		    !reepoch(node, up, e->max_epoch, now))
			return;
		send_heartbeat(node, up, now);
		return;
	}
	/* The initiator alone lost touch, or just started. It is not told:
	 * only the holder's own heartbeats may count as hearing the token,
	 * or members answering each other would keep a dead token "alive".
	 * The holder's next heartbeat reaches it within heartbeat_ms. */
	if (recently_heard(node, now))
		return;
	if (node->elect_active) {
		if (node->id > e->initiator)
			return; /* ours goes on instead (Chang-Roberts) */
		node->elect_active = false;
	}
	/* Having carried a higher initiator's election, carry no lower one:
	 * only one may complete the round (Chang-Roberts). */
	if (now < node->participated_until && e->initiator < node->best_initiator)
		return;
	if (now >= node->participated_until || e->initiator > node->best_initiator)
		node->best_initiator = e->initiator;
	/* The initiator's last round lacked a quorum: so do we, on this side. */
	if (e->flags & RING_ELECTION_NO_QUORUM)
		node->no_quorum = true;
	struct ring_msg_election fwd = *e;
	/* A member that has not proven its epoch carries the election but is
	 * no participant: the token it would be handed it could not take. */
	if (node->proven)
		ring_set_add(&fwd.participants, node->me);
	fwd.max_epoch = max_u32(fwd.max_epoch, node->epoch);
	node->participated_until = now + election_timeout(node);
	if (node->loss_deadline < node->participated_until)
		node->loss_deadline = node->participated_until;
	election_forward(node, up, &fwd, (node->me + 1) % node->layout.n, now);
}

/* ---- summoning a parked token (§3.4) ---- */

static bool wants_token(const struct ring_node *node)
{
	return node->q_len > 0 && node->phase == PHASE_NONE && !node->leaving && !node->left;
}

/* Asks the member where the token parks to send it on, when a client here
 * waits. A summons has no authority, so losing one costs only time: it is
 * sent again, backing off from ack_timeout_ms to heartbeat_ms, and at once
 * for a new park (a parked heartbeat naming another hop). */
static void summon(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (!wants_token(node) || !node->park_known || node->park_at == node->me)
		return;
	bool again = node->summon_hop.epoch == node->park_hop.epoch &&
		     node->summon_hop.seq == node->park_hop.seq;
	if (again && now < node->summon_next)
		return;
	struct ring_msg m = {.type = RING_MSG_WANT};
	m.u.want.epoch = node->park_hop.epoch;
	m.u.want.seq = node->park_hop.seq;
	send_msg(node, up, id_of(node, node->park_at), &m);
	node->counters.summons++;
	if (!again) {
		/* One line per park summoned; the resends are only counted. */
		log_event(node, up, RING_LOG_TOKEN_SUMMON, id_of(node, node->park_at),
			  node->park_hop.epoch, node->park_hop.seq);
		node->summon_every = ms(node->layout.ack_timeout_ms);
	} else if (node->summon_every < ms(node->layout.heartbeat_ms)) {
		node->summon_every = min_u64(2 * node->summon_every, ms(node->layout.heartbeat_ms));
	}
	node->summon_hop = node->park_hop;
	node->summon_next = now + node->summon_every;
}

/* ---- datagrams ---- */

static void on_token(struct ring_node *node, struct ring_update *up, uint16_t from,
		     const struct ring_msg_token *t, uint64_t now)
{
	int fx = ring_layout_index(&node->layout, from);
	if (fx < 0 || (size_t)fx >= RING_MAX_MEMBERS)
		return; /* on_datagram let only members through */
	size_t fi = (size_t)fx;
	if (t->epoch < node->epoch) {
		node->counters.stale_dropped++;
		log_event(node, up, RING_LOG_TOKEN_STALE_DROP, t->epoch, from, node->epoch);
		send_ack(node, up, from, t->epoch, t->seq, RING_ACK_STALE);
		return;
	}
	if (t->epoch == node->seen_epoch && t->seq <= node->seen_seq) {
		send_ack(node, up, from, t->epoch, t->seq, 0); /* a duplicate */
		return;
	}
	if (!ring_set_has(&node->floor_known, fi)) {
		/* The first token from FROM in this life may be a late copy of
		 * one our past accepted, which a lost or rolled-back disk cannot
		 * tell (§5.3). FROM's answer will: say nothing until then, and
		 * its retransmission is judged against it. */
		struct ring_msg q = {.type = RING_MSG_EPOCH_QUERY};
		q.u.epoch_query.nonce = node->query_nonce;
		send_msg(node, up, from, &q);
		return;
	}
	if (t->epoch <= node->start_epoch || t->epoch <= node->floor_from[fi] || node->leaving) {
		/* Restarted: we cannot tell which hops of this epoch our past
		 * accepted, so ask to be taken in under a new one (§5.3).
		 * Leaving: we said which hop was our last (§5.4). Either way the
		 * sender learns that this very pass was refused. */
		send_refusal(node, up, from, t);
		return;
	}
	if (!ring_set_has(&t->alive, node->me)) {
		/* Tokens go only to members they count as alive. */
		bad_packet(node, up, from, -RING_EFIELD);
		return;
	}
	adopt(node, up, t->epoch, from, now);
	uint32_t counter = t->counter;
	if (node->phase != PHASE_NONE && node->token.epoch == t->epoch) {
		/* Our own pass came back around (its ack was lost): the token
		 * moved on, so this is the one token. Keep the highest count so
		 * that no fence of this epoch can be issued twice. */
		revoke_grant(node, up);
		if (node->token.counter > counter)
			counter = node->token.counter;
	}
	node->seen_epoch = t->epoch;
	node->seen_seq = t->seq;
	node->accepted = (struct ring_hop){t->epoch, t->seq};
	/* Acked before the token can move on: a member that crashes between
	 * its pass and its ack would otherwise be skipped while its pass
	 * lives on, a second token with no datagram lost (review of §3.4). */
	send_ack(node, up, from, t->epoch, t->seq, 0);
	node->token = *t;
	node->token.counter = counter;
	node->phase = PHASE_HELD;
	uint64_t quiet = t->quiet_us;
	node->hb_base = quiet < now ? now - quiet : 0;
	node->hb_deadline = node->hb_base + ms(node->layout.heartbeat_ms);
	node->heard_ever = true;
	node->last_heard = now;
	node->alive_view = t->alive;
	node->no_quorum = false;
	node->elect_active = false;
	node->participated_until = 0;
	node->visit_granted = false;
	node->visit_wanted = false;
	node->resting = false;
	node->parked = false;
	node->summoned = false;
	node->park_known = false;
	node->arrived = now;
	log_event(node, up, RING_LOG_TOKEN_RECV, from, t->epoch, t->seq);
	if (apply_membership(node, up, now))
		serve(node, up, now);
}

static void on_token_ack(struct ring_node *node, struct ring_update *up, uint16_t from,
			 const struct ring_msg_token_ack *a, uint64_t now)
{
	if (node->phase != PHASE_PASSING || from != id_of(node, node->pass_to))
		return;
	if (a->flags & RING_ACK_STALE) {
		adopt(node, up, a->known_epoch, from, now);
		if (node->phase != PHASE_NONE && a->epoch == node->token.epoch) {
			node->counters.stale_dropped++;
			log_event(node, up, RING_LOG_TOKEN_STALE_DROP, node->token.epoch, from,
				  a->known_epoch);
			drop_token(node, up, now);
		}
	} else if (a->epoch == node->token.epoch && a->seq == node->token.seq) {
		if (node->retries_left == node->layout.retries)
			node->hop_rtt_us = now - node->pass_sent;
		node->phase = PHASE_NONE;
		node->counters.tokens_passed++;
		node->heard_ever = true;
		node->last_heard = now;
		node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
	}
}

static void on_heartbeat(struct ring_node *node, struct ring_update *up, uint16_t from,
			 const struct ring_msg_heartbeat *h, uint64_t now)
{
	if (h->epoch < node->epoch) {
		/* A stale token is alive at FROM. If ours is not, ask FROM to
		 * take us in: it will re-epoch above what we know (§5.3). */
		if (node->phase == PHASE_NONE && !recently_heard(node, now))
			send_join(node, up, from, now);
		return;
	}
	adopt(node, up, h->epoch, from, now);
	node->heard_ever = true;
	node->last_heard = now;
	node->alive_view = h->alive;
	node->park_known = (h->flags & RING_HB_PARKED) != 0;
	if (node->park_known) {
		node->park_at = (size_t)ring_layout_index(&node->layout, from);
		node->park_hop = (struct ring_hop){h->epoch, h->seq};
		summon(node, up, now);
	}
	node->no_quorum = false;
	node->elect_active = false;
	node->participated_until = 0;
	if (node->phase == PHASE_NONE)
		node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
	if (!ring_set_has(&h->alive, node->me))
		send_join(node, up, from, now);
}

/* A summons for the park we hold (§3.4): the visit ends with the grant in
 * progress, if any. One for another park, or for none, is old or forged. */
static void on_want(struct ring_node *node, struct ring_update *up, size_t from_idx,
		    const struct ring_msg_want *w, uint64_t now)
{
	/* From a member the token leaves out, a summons would cost a rotation
	 * that cannot serve it: its JOIN comes first (§5.3). */
	if (node->phase != PHASE_HELD || !node->parked || node->summoned ||
	    w->epoch != node->token.epoch || w->seq != node->token.seq ||
	    !ring_set_has(&node->token.alive, from_idx))
		return;
	uint16_t from = id_of(node, from_idx);
	node->summoned = true;
	log_event(node, up, RING_LOG_TOKEN_UNPARK, from, w->epoch, w->seq);
	serve(node, up, now);
}

static void on_join(struct ring_node *node, struct ring_update *up, size_t from_idx,
		    const struct ring_msg_join *j, uint64_t now)
{
	if (node->leaving)
		return;
	node->left_until[from_idx] = 0;
	node->join_until[from_idx] = now + 2 * ms(node->layout.loss_timeout_ms);
	node->join_epoch[from_idx] = j->epoch;
	if (node->phase == PHASE_HELD) {
		if (apply_membership(node, up, now))
			serve(node, up, now);
	} else if (node->phase == PHASE_PASSING && node->pass_to == from_idx &&
		   j->refused.epoch == node->token.epoch && j->refused.seq == node->token.seq) {
		/* Our successor restarted and refused this very pass. Only an
		 * exact refusal will do: on any other JOIN (a duplicate, an old
		 * one) the successor may hold the token by now, and passing it
		 * again would make a copy (§5.3). Even so its past life may have
		 * taken the pass, its ack still on the way: wait one more ack
		 * timeout for that ack before taking the token back (§3.2). */
		if (node->pass_refused == REFUSED_NONE) {
			node->pass_refused = REFUSED_JOIN;
			node->refused_epoch = j->epoch;
			node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
		}
	}
}

/* The successor refused our pass and no ack of it came: hand it over again
 * under a new epoch, which readmits the refuser (§5.3). */
static void take_back(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	size_t to = node->pass_to;
	node->phase = PHASE_HELD;
	node->visit_granted = true;
	uncount_pass(node);
	if (!reepoch(node, up, max_u32(node->refused_epoch, node->token.epoch), now))
		return; /* dropped: we may not mint yet */
	node->join_until[to] = 0; /* readmitted by this epoch */
	log_event(node, up, RING_LOG_MEMBER_REJOIN, id_of(node, to), node->token.epoch, 0);
	/* Its past life may have passed the token on (§3.2): as after a skip,
	 * the new epoch is heard at once. */
	node->hb_deadline = now;
	pass_token(node, up, now);
}

/* Whether hop A is B or one after it. */
static bool hop_covers(const struct ring_hop *a, uint32_t epoch, uint32_t seq)
{
	return a->epoch > epoch || (a->epoch == epoch && a->seq >= seq);
}

static void on_leave(struct ring_node *node, struct ring_update *up, size_t from_idx,
		     const struct ring_msg_leave *l, uint64_t now)
{
	log_event(node, up, RING_LOG_MEMBER_LEAVE, id_of(node, from_idx), node->epoch, 0);
	if (node->park_known && node->park_at == from_idx)
		node->park_known = false; /* a leaver hands its park on: no summons to it */
	node->join_until[from_idx] = 0;
	node->left_until[from_idx] = now + 2 * ms(node->layout.loss_timeout_ms);
	ring_set_del(&node->alive_view, from_idx);
	if (node->phase == PHASE_PASSING && node->pass_to == from_idx) {
		/* §5.4: skip at once only when the leaver refused this very
		 * pass; if it accepted it, the token is its to pass on, as if
		 * acked. Otherwise the LEAVE may have crossed our pass, or be
		 * an old one: resend now, and its answer (ack or refusal), or
		 * the retry budget, decides. */
		if (l->refused.epoch == node->token.epoch && l->refused.seq == node->token.seq) {
			/* No retry budget to wait for; one ack timeout only, in
			 * case an earlier life of the leaver took the pass (§3.2). */
			if (node->pass_refused == REFUSED_NONE) {
				node->pass_refused = REFUSED_LEAVE;
				node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
			}
		} else if (hop_covers(&l->accepted, node->token.epoch, node->token.seq)) {
			node->phase = PHASE_NONE;
			node->counters.tokens_passed++;
			node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
		} else {
			/* Resend now, as a retransmission, but without spending the
			 * retry budget: with none left, the deadline would skip the
			 * leaver at once, and it may have taken the pass. */
			node->counters.retransmits++;
			send_token(node, up, now);
			log_event(node, up, RING_LOG_RETRANSMIT, id_of(node, node->pass_to),
				  node->token.epoch, node->token.seq);
			if (node->ack_deadline < now + ms(node->layout.ack_timeout_ms))
				node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
		}
	} else if (node->phase == PHASE_HELD) {
		if (apply_membership(node, up, now))
			serve(node, up, now);
	}
}

/* ---- what a starting member's epoch is worth (§5.3) ---- */

/* Answers a start needs (§5.3). A member with nothing on disk (first start,
 * or a wiped state_dir) needs enough of the others that they share a member
 * other than itself with any majority that persisted an epoch: n - n/2.
 * One with a stored epoch needs a majority counting itself, n/2 others,
 * which a majority ring needs up anyway: that costs no availability and
 * catches a disk rolled back below what any of them knows. quorum = none
 * promises no majority anywhere (§6.3): a stored epoch is taken as it is,
 * and a member with none asks one other. */
static size_t query_needed(const struct ring_node *node)
{
	size_t n = node->layout.n;
	if (node->layout.quorum == RING_QUORUM_MAJORITY)
		return node->start_epoch ? n / 2 : n - n / 2;
	return node->start_epoch ? 0 : 1;
}

static void query_send(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	struct ring_msg m = {.type = RING_MSG_EPOCH_QUERY};
	m.u.epoch_query.nonce = node->query_nonce;
	send_msg(node, up, 0, &m);
	/* Backing off: a member that cannot be proven (too few up) should not
	 * cost the others a datagram every heartbeat for ever. */
	node->query_next = now + node->query_every;
	node->query_every = min_u64(2 * node->query_every, ms(node->layout.loss_timeout_ms));
}

/* Asks every member what epoch it knows: at start, to learn the floor
 * below which our own past may hold tokens we cannot remember; later, to
 * catch up with a ring that moved further than a datagram may jump. */
static void query_start(struct ring_node *node, struct ring_update *up, uint64_t now,
			bool at_start)
{
	node->query_active = true;
	node->query_at_start = at_start;
	/* Nonces grow within this life, and the driver's clock (the daemon's
	 * CLOCK_BOOTTIME) grows across restarts of the process, so answers to
	 * a previous life's queries are not taken for this one's (§5.3). It
	 * starts again near 0 at a reboot; there what keeps a previous life's
	 * answers out is that none outlives the reboot (its socket and queues
	 * are gone, and no datagram lingers in the network that long). */
	node->query_nonce = now + 1 > node->query_nonce ? now + 1 : node->query_nonce + 1;
	if (at_start)
		node->first_nonce = node->query_nonce;
	ring_set_clear(&node->replied);
	node->query_every = ms(node->layout.heartbeat_ms);
	query_send(node, up, now);
}

/* The K-th highest answer to the current query (K is 1 or 2) among those
 * within reach of BASE, or beyond it when FAR; *COUNT says how many there
 * are. 0 when there are fewer than K. */
static uint32_t reply_rank(const struct ring_node *node, uint32_t base, bool far, size_t k,
			   size_t *count)
{
	uint32_t top[2] = {0, 0};
	size_t c = 0;
	for (size_t i = 0; i < node->layout.n; i++) {
		if (!ring_set_has(&node->replied, i))
			continue;
		uint32_t e = node->reply_epoch[i];
		if (within_reach(base, e) == far)
			continue;
		c++;
		if (e > top[0]) {
			top[1] = top[0];
			top[0] = e;
		} else if (e > top[1]) {
			top[1] = e;
		}
	}
	*count = c;
	return top[k > 1 ? 1 : 0];
}

/* How many members must answer beyond reach before we may go there: two,
 * so that one forged answer moves nobody. Except on a keyed ring at the
 * start of a member with nothing on disk whose query needs only one answer
 * (a ring of two, or quorum = none): its epoch 0 says nothing about where
 * the ring is, the one other member it needs is all there is to ask, and
 * with a key nobody else can answer for it. Without the exception a wiped
 * member of such a ring is never proven once the ring is 2^16 generations
 * old; without a key, one forged answer would take it anywhere. */
static size_t far_vouchers(const struct ring_node *node)
{
	if (node->layout.keyed && node->query_at_start && node->start_epoch == 0 &&
	    query_needed(node) < 2)
		return 1;
	return 2;
}

/* Where the current query's answers may take us (§4.2, §5.3): from our
 * epoch, an answer beyond reach counts only when a second member's is
 * beyond reach too; then we may reach the lower of the two highest (two
 * members vouch for it), and judge again from there. Each round climbs, so
 * there are at most n. One datagram, or one member's wild disk, therefore
 * moves nobody further than one jump, and a member that really fell
 * behind (the ring minted 2^16 generations while it was away) catches up
 * once two others answer (one, where far_vouchers says so). */
static uint32_t reply_base(const struct ring_node *node)
{
	size_t vouch = far_vouchers(node);
	uint32_t base = node->epoch;
	for (size_t round = 0; round < node->layout.n; round++) {
		size_t far;
		uint32_t next = reply_rank(node, base, true, vouch, &far);
		if (far < vouch)
			break;
		base = next;
	}
	return base;
}

/* The answers to the current query settle it once enough of them are within
 * reach of where they may take us; those beyond reach that no second member
 * vouched for are left out, and counted as the bad datagrams they are. */
static void query_settle(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	uint32_t base = reply_base(node);
	size_t have;
	uint32_t highest = reply_rank(node, base, false, 1, &have);
	if (have < query_needed(node))
		return;
	node->query_active = false;
	node->query_next = now + ms(node->layout.loss_timeout_ms);
	for (size_t i = 0; i < node->layout.n; i++)
		if (ring_set_has(&node->replied, i) && !within_reach(base, node->reply_epoch[i]))
			bad_packet(node, up, id_of(node, i), -RING_EJUMP);
	/* At start, the highest answer: a majority that persisted an epoch
	 * shares a member with those who answered. Catching up, the second
	 * highest where there is one: one forged answer cannot move us. */
	size_t k = node->query_at_start || have < 2 ? 1 : 2;
	uint32_t floor = max_u32(reply_rank(node, base, false, k, &have), base);
	adopt(node, up, floor, 0, now);
	if (node->broken)
		return;
	/* The members whose first answer of this life was beyond reach have a
	 * floor now that it is within it (§5.3). */
	for (size_t i = 0; i < node->layout.n; i++) {
		if (ring_set_has(&node->replied, i) && !ring_set_has(&node->floor_known, i) &&
		    epoch_ok(node, node->reply_epoch[i])) {
			node->floor_from[i] = node->reply_epoch[i];
			ring_set_add(&node->floor_known, i);
		}
	}
	if (node->query_at_start) {
		/* Any epoch a majority persisted before we started is at most
		 * this; tokens of such epochs may be copies of hops our lost
		 * past accepted, so they are refused like a restart's (§5.3). */
		node->start_epoch = max_u32(node->start_epoch, floor);
		node->proven = true;
		/* Our disk holds an epoch beyond reach of every member that
		 * answered: a bad disk, or a jump nobody followed. It is not
		 * lowered (a low answer may be a peer that was away, and
		 * fences must not go back), so we stay out: our tokens are
		 * beyond everybody's reach, and a regeneration dies at us
		 * (on_election). The operator is told (operations.md). */
		if (highest && !within_reach(highest, node->epoch))
			log_event(node, up, RING_LOG_EPOCH_OUT_OF_REACH, node->epoch, highest, have);
		node->no_quorum = false;
		if (node->loss_deadline < now + 2 * ms(node->layout.heartbeat_ms))
			node->loss_deadline = now + 2 * ms(node->layout.heartbeat_ms);
	}
	log_event(node, up, RING_LOG_EPOCH_LEARNED, floor, have, node->query_at_start);
}

static void on_epoch_reply(struct ring_node *node, struct ring_update *up, size_t from_idx,
			   const struct ring_msg_epoch_reply *r, uint64_t now)
{
	if (from_idx >= RING_MAX_MEMBERS || node->first_nonce == 0 ||
	    r->nonce < node->first_nonce || r->nonce > node->query_nonce)
		return; /* not asked in this life */
	bool near = epoch_ok(node, r->epoch);
	/* Any answer of this life was sent after we started, so it is at
	 * least the epoch of every hop its sender sent us before (§5.3). The
	 * first one: later ones would refuse hops sent after we started. One
	 * beyond reach waits for the query to settle: a floor no token
	 * within reach could pass would shut its sender out for good. */
	if (near && !ring_set_has(&node->floor_known, from_idx)) {
		node->floor_from[from_idx] = r->epoch;
		ring_set_add(&node->floor_known, from_idx);
	}
	if (!node->query_active || r->nonce != node->query_nonce) {
		/* A late answer still teaches: once proven, an epoch a member
		 * knows that the first answers did not is one we must not mint
		 * again. Within reach only (§4.2), like any datagram's. */
		if (!near)
			bad_packet(node, up, id_of(node, from_idx), -RING_EJUMP);
		else if (node->proven)
			adopt(node, up, r->epoch, id_of(node, from_idx), now);
		return;
	}
	ring_set_add(&node->replied, from_idx);
	node->reply_epoch[from_idx] = r->epoch;
	query_settle(node, up, now);
}

/* Admission (§2): what every datagram must pass before its type is looked
 * at. It must decode, come from a member other than us under its own id, be
 * of our configuration, be for us (or for everyone), and carry epochs
 * within reach (§4.2). Returns the sender's ring index, or -1 when the
 * datagram goes no further (counted and logged here). */
static int admit(struct ring_node *node, struct ring_update *up, const struct ring_event *ev,
		 struct ring_msg *m)
{
	uint64_t now = ev->now_us;
	uint16_t from = ev->u.datagram.from_id;
	int err = ring_wire_decode(ev->u.datagram.buf, ev->u.datagram.len, m);
	if (err == -RING_EVERSION) {
		version_mismatch(node, up, from,
				 ring_wire_peek_version(ev->u.datagram.buf, ev->u.datagram.len));
		return -1;
	}
	if (err < 0) {
		bad_packet(node, up, from, err);
		return -1;
	}
	int idx = ring_layout_index(&node->layout, from);
	if (from == 0 || idx < 0) {
		bad_packet(node, up, from, -RING_ENOTMEMBER);
		return -1;
	}
	if (m->fingerprint != node->fingerprint) {
		node->counters.config_mismatches++;
		log_event(node, up, RING_LOG_CONFIG_MISMATCH, from, 0, 0);
		return -1;
	}
	if (m->from != from || from == node->id) {
		bad_packet(node, up, from, -RING_ESPOOF);
		return -1;
	}
	if (m->to != 0 && m->to != node->id) {
		bad_packet(node, up, from, -RING_ENOTFORME);
		return -1;
	}
	if (!epochs_ok(node, m)) {
		bad_packet(node, up, from, -RING_EJUMP);
		/* Forged, or the ring moved on while we were away: the others
		 * will tell which (§5.3). */
		if (!node->query_active && now >= node->query_next)
			query_start(node, up, now, false);
		return -1;
	}
	return idx;
}

/* Every election hop is acked, even one we go on to swallow (§6.1). Even
 * one whose max_epoch is beyond reach below ours: skipping us there would
 * let the others regenerate under what we know, and the low epochs may be
 * a rolled-back disk's (test/test_review_epochs3.c). We carry it, raised to
 * our epoch, and the election dies where nobody can take that: a ring
 * wedged until the operator mends the disk, not fences going back. */
static void on_election(struct ring_node *node, struct ring_update *up, uint16_t from,
			const struct ring_msg_election *e, uint64_t now)
{
	struct ring_msg ack = {.type = RING_MSG_ELECTION_ACK};
	ack.u.election_ack.initiator = e->initiator;
	ack.u.election_ack.round = e->round;
	ack.u.election_ack.hops = e->hops;
	send_msg(node, up, from, &ack);
	election_arrive(node, up, e, now);
}

/* The ack of the election hop we are forwarding, and of no other. */
static void on_election_ack(struct ring_node *node, size_t from_idx,
			    const struct ring_msg_election_ack *a)
{
	if (node->fwd.active && from_idx == node->fwd.to &&
	    a->initiator == node->fwd.msg.initiator && a->round == node->fwd.msg.round &&
	    a->hops == node->fwd.msg.hops)
		node->fwd.active = false;
}

/* "What epoch do you know?" (§5.3): the one we persisted. */
static void on_epoch_query(struct ring_node *node, struct ring_update *up, uint16_t from,
			   const struct ring_msg_epoch_query *q)
{
	struct ring_msg r = {.type = RING_MSG_EPOCH_REPLY};
	r.u.epoch_reply.nonce = q->nonce;
	r.u.epoch_reply.epoch = node->epoch;
	send_msg(node, up, from, &r);
}

static void on_datagram(struct ring_node *node, struct ring_update *up,
			const struct ring_event *ev)
{
	uint64_t now = ev->now_us;
	uint16_t from = ev->u.datagram.from_id;
	struct ring_msg m;
	int idx = admit(node, up, ev, &m);
	if (idx < 0 || node->left)
		return;
	switch (m.type) {
	case RING_MSG_TOKEN:
		on_token(node, up, from, &m.u.token, now);
		break;
	case RING_MSG_TOKEN_ACK:
		on_token_ack(node, up, from, &m.u.token_ack, now);
		break;
	case RING_MSG_HEARTBEAT:
		on_heartbeat(node, up, from, &m.u.heartbeat, now);
		break;
	case RING_MSG_ELECTION:
		on_election(node, up, from, &m.u.election, now);
		break;
	case RING_MSG_ELECTION_ACK:
		on_election_ack(node, (size_t)idx, &m.u.election_ack);
		break;
	case RING_MSG_JOIN:
		on_join(node, up, (size_t)idx, &m.u.join, now);
		break;
	case RING_MSG_LEAVE:
		on_leave(node, up, (size_t)idx, &m.u.leave, now);
		break;
	case RING_MSG_EPOCH_QUERY:
		on_epoch_query(node, up, from, &m.u.epoch_query);
		break;
	case RING_MSG_EPOCH_REPLY:
		on_epoch_reply(node, up, (size_t)idx, &m.u.epoch_reply, now);
		break;
	case RING_MSG_WANT:
		on_want(node, up, (size_t)idx, &m.u.want, now);
		break;
	case RING_MSG_STATUS_REQ:
	case RING_MSG_STATUS_RESP:
		break; /* status is the driver's to answer, from ring_node_status() */
	}
}

/* ---- clients ---- */

static void deny(struct ring_node *node, struct ring_update *up, uint64_t client, int reason)
{
	struct ring_action *a = push(node, up, RING_ACTION_DENY);
	if (a) {
		a->u.deny.client = client;
		a->u.deny.reason = reason;
	}
}

static void on_acquire(struct ring_node *node, struct ring_update *up, uint64_t client,
		       uint64_t now)
{
	if (node->leaving || node->left) {
		deny(node, up, client, -RING_ELEAVING);
		return;
	}
	if (client == 0 || (node->granted && node->grant_client == client) ||
	    queue_has(node, client)) {
		deny(node, up, client, -RING_EBUSY);
		return;
	}
	if (node->q_len == RING_QUEUE_MAX) {
		deny(node, up, client, -RING_EFULL);
		return;
	}
	node->queue[(node->q_head + node->q_len) % RING_QUEUE_MAX] = client;
	node->q_len++;
	serve(node, up, now);
	summon(node, up, now);
}

static void on_release(struct ring_node *node, struct ring_update *up, uint64_t client,
		       uint64_t now)
{
	if (node->granted && node->grant_client == client) {
		log_event(node, up, RING_LOG_CS_EXIT, node->grant_fence, client, 0);
		node->granted = false;
		serve(node, up, now);
		return;
	}
	queue_remove(node, client);
}

static void on_leave_request(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->leaving)
		return;
	node->leaving = true;
	revoke_grant(node, up);
	node->q_len = 0; /* the shell closes the clients of a leaving member */
	/* From here on we accept no new hop (§5.4): the LEAVE names the last
	 * one we did, so a predecessor can tell whether its pass is here. */
	node->leave_accepted = node->accepted;
	/* Hand the token on and tell everyone; if that takes longer than a
	 * full retry budget for every member, leave anyway. */
	const struct ring_layout *l = &node->layout;
	node->leave_started = now;
	node->leave_deadline = now + (uint64_t)l->n * (l->retries + 1) * ms(l->ack_timeout_ms) +
			       ms(1000);
	struct ring_msg m = {.type = RING_MSG_LEAVE};
	m.u.leave.epoch = node->epoch;
	m.u.leave.accepted = node->leave_accepted;
	send_msg(node, up, 0, &m);
	if (node->phase == PHASE_HELD)
		serve(node, up, now);
}

/* ---- time ---- */

/* A deadline that fires far too late means this process was stopped (§5.5):
 * whatever it granted may have been given to someone else meanwhile. */
static void check_pause(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	uint64_t limit = ms(node->layout.loss_timeout_ms) / 2;
	if (node->armed_deadline == NEVER || now <= node->armed_deadline ||
	    now - node->armed_deadline < limit)
		return;
	uint64_t late = now - node->armed_deadline;
	node->counters.pauses++;
	log_event(node, up, RING_LOG_PAUSE_DETECTED, late / 1000, 0, 0);
	revoke_grant(node, up);
	/* Until a fresh heartbeat can reach us, grant nothing: a token waiting
	 * in our socket may be an old one (§5.5). */
	node->quarantine_until = now + 2 * ms(node->layout.heartbeat_ms);
	if (node->phase == PHASE_HELD)
		node->visit_granted = true;
	/* An election we started or carried before the pause saw the ring as
	 * it was then; completing it now could mint below what was granted
	 * meanwhile. */
	node->elect_active = false;
	node->fwd.active = false;
}

static void check_lease(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (!node->granted || now < node->lease_deadline)
		return;
	struct ring_action *a = push(node, up, RING_ACTION_REVOKE);
	if (a) {
		a->u.revoke.client = node->grant_client;
		a->u.revoke.fence = node->grant_fence;
	}
	log_event(node, up, RING_LOG_LEASE_EXPIRED, node->grant_fence, node->grant_client, 0);
	node->granted = false;
}

/* Who speaks for the token (§5.1): its holder, and a member still passing
 * it once a retransmission showed the successor may be gone. A pass that
 * is merely awaiting its ack leaves that to the new holder: two members
 * heartbeating one token doubles the broadcasts for nothing. */
static bool heartbeats(const struct ring_node *node)
{
	return node->phase == PHASE_HELD ||
	       (node->phase == PHASE_PASSING && node->retries_left < node->layout.retries);
}

/* ---- timers: one table for what fires and for the next deadline ---- */

static void pass_ack_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->pass_refused == REFUSED_JOIN) {
		take_back(node, up, now);
	} else if (node->pass_refused == REFUSED_LEAVE) {
		skip_successor(node, up, now);
	} else if (node->retries_left > 0) {
		node->retries_left--;
		node->counters.retransmits++;
		node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
		send_token(node, up, now);
		log_event(node, up, RING_LOG_RETRANSMIT, id_of(node, node->pass_to),
			  node->token.epoch, node->token.seq);
	} else {
		skip_successor(node, up, now);
	}
}

static void election_ack_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->fwd.retries_left > 0) {
		node->fwd.retries_left--;
		node->fwd.deadline = now + ms(node->layout.ack_timeout_ms);
		election_send(node, up);
	} else {
		/* Skip the silent member; the election goes on without it. */
		struct ring_msg_election e = node->fwd.msg;
		e.hops = (uint16_t)(e.hops - 1);
		election_forward(node, up, &e, (node->fwd.to + 1) % node->layout.n, now);
	}
}

static void leave_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* Nobody took the token in time (§5.4): go, as a crash would. */
	log_event(node, up, RING_LOG_LEAVE_TIMEOUT, (now - node->leave_started) / 1000, 0, 0);
	drop_token(node, up, now);
}

static void no_quorum_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* Time to elect, but too few members answered to prove our epoch:
	 * say so, as a failed election would (§5.3). */
	node->no_quorum = true;
	log_event(node, up, RING_LOG_NO_QUORUM, ring_set_count(&node->replied) + 1,
		  query_needed(node) + 1, 0);
	node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
}

static void loss_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (!node->elect_active && now >= node->participated_until)
		log_event(node, up, RING_LOG_LOSS_SUSPECT,
			  node->heard_ever ? (now - node->last_heard) / 1000 : 0, node->epoch, 0);
	start_election(node, up, now);
}

static void heartbeat_due(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	send_heartbeat(node, up, now);
}

static void query_due(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	query_send(node, up, now);
}

/* When the held token's visit has something to do by itself: a rest or a
 * quarantine that ends, a parked token's lap. serve() decides what. */
static uint64_t visit_at(const struct ring_node *node)
{
	uint64_t d = NEVER;
	if (node->phase != PHASE_HELD)
		return d;
	if (node->resting)
		d = min_u64(d, node->rest_deadline);
	if (node->parked && !node->granted)
		d = min_u64(d, lap_at(node));
	if (!node->granted && node->q_len > 0 && node->quarantine_until > 0)
		d = min_u64(d, node->quarantine_until);
	return d;
}

static bool phase_none_waiting(const struct ring_node *node)
{
	return node->phase == PHASE_NONE && !node->leaving && !node->left;
}

static uint64_t timer_lease(const struct ring_node *n)
{
	return n->granted ? n->lease_deadline : NEVER;
}

static uint64_t timer_pass(const struct ring_node *n)
{
	return n->phase == PHASE_PASSING ? n->ack_deadline : NEVER;
}

static uint64_t timer_fwd(const struct ring_node *n)
{
	return n->fwd.active ? n->fwd.deadline : NEVER;
}

static uint64_t timer_hb(const struct ring_node *n)
{
	return heartbeats(n) ? n->hb_deadline : NEVER;
}

static uint64_t timer_query(const struct ring_node *n)
{
	return n->query_active ? n->query_next : NEVER;
}

static uint64_t timer_leave(const struct ring_node *n)
{
	return n->leaving && !n->left ? n->leave_deadline : NEVER;
}
static uint64_t timer_summon(const struct ring_node *n)
{
	return wants_token(n) && n->park_known && n->park_at != n->me ? n->summon_next : NEVER;
}
static uint64_t timer_no_quorum(const struct ring_node *n)
{
	return phase_none_waiting(n) && !n->proven ? n->loss_deadline : NEVER;
}
static uint64_t timer_loss(const struct ring_node *n)
{
	return phase_none_waiting(n) && n->proven ? n->loss_deadline : NEVER;
}

/* Every timer of the core, in the order they fire within a step. AT says
 * when it is due (NEVER: not armed), for next_deadline; FIRE runs once it
 * is, or at every step when EVERY (serve and summon look for themselves).
 * A lease is checked first of all, before the event (ring_node_step). */
static const struct core_timer {
	uint64_t (*at)(const struct ring_node *node);
	void (*fire)(struct ring_node *node, struct ring_update *up, uint64_t now);
	bool every;
} timers[] = {
	{timer_lease, NULL, false},
	{timer_pass, pass_ack_timeout, false},
	{timer_fwd, election_ack_timeout, false},
	{visit_at, serve, true},
	{timer_hb, heartbeat_due, false},
	{timer_query, query_due, false},
	{timer_summon, summon, true},
	{timer_leave, leave_timeout, false},
	{timer_no_quorum, no_quorum_timeout, false},
	{timer_loss, loss_timeout, false},
};

static void run_timers(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	for (size_t k = 0; k < sizeof timers / sizeof timers[0]; k++) {
		const struct core_timer *t = &timers[k];
		if (t->fire && (t->every || now >= t->at(node)))
			t->fire(node, up, now);
	}
}

static uint64_t next_deadline(const struct ring_node *node)
{
	uint64_t d = NEVER;
	if (node->left)
		return d;
	for (size_t k = 0; k < sizeof timers / sizeof timers[0]; k++)
		d = min_u64(d, timers[k].at(node));
	return d;
}

/* ---- the step ---- */

/* What one member can check about itself after every step: one phase at a
 * time, a grant only of a token held here, an epoch never below the one
 * it started from, a token never newer than the epoch it knows. */
static void check_self(const struct ring_node *node)
{
	RING_ASSERT(!node->granted || node->phase == PHASE_HELD);
	RING_ASSERT(!node->parked || node->phase == PHASE_HELD);
	RING_ASSERT(!node->granted || node->grant_fence == node->last_fence);
	RING_ASSERT(node->phase == PHASE_NONE || node->token.epoch <= node->epoch);
	RING_ASSERT(node->epoch >= node->start_epoch);
	RING_ASSERT(node->q_len <= RING_QUEUE_MAX && node->q_head < RING_QUEUE_MAX);
	RING_ASSERT(node->phase != PHASE_PASSING || node->pass_to != node->me);
}

void ring_node_step(struct ring_node *node, const struct ring_event *ev,
		    struct ring_update *up)
{
	uint64_t now = ev->now_us;
	up->n = 0;
	if (node->broken) {
		/* Stays dead: its state no longer matches what it told the world. */
		fatal(node, up, -RING_EOVERFLOW);
		up->deadline_us = NEVER;
		return;
	}
	node->joins_this_step = 0;
	if (node->started) {
		/* Before anything else: a grant that outlived its lease or a
		 * pause ends here (SPEC: pause_detected revokes first). */
		check_pause(node, up, now);
		check_lease(node, up, now);
	}
	switch (ev->type) {
	case RING_EVENT_START:
		if (node->started)
			break;
		node->started = true;
		/* Rounds should differ from a previous life's. The daemon's
		 * clock (CLOCK_BOOTTIME) keeps growing across restarts of the
		 * process, but starts again near 0 when the host reboots, so a
		 * round may repeat then. That costs liveness at most: a round
		 * only tells an election's hops and acks from another's (§6.1);
		 * what a regeneration mints is bounded by epochs and the proof
		 * of §5.3, not by rounds. */
		node->elect_round = (uint32_t)(now / 1000);
		/* Listen for a live ring briefly before calling an election. */
		node->loss_deadline = now + 2 * ms(node->layout.heartbeat_ms);
		/* Whatever the disk says, learn what the others know first: the
		 * disk may have been wiped or restored from a backup (§5.3). */
		if (query_needed(node) == 0) {
			node->proven = true;
			node->first_nonce = node->query_nonce = now + 1;
		} else {
			query_start(node, up, now, true);
		}
		break;
	case RING_EVENT_TICK:
		break;
	case RING_EVENT_DATAGRAM:
		on_datagram(node, up, ev);
		break;
	case RING_EVENT_ACQUIRE:
		on_acquire(node, up, ev->u.client.client, now);
		break;
	case RING_EVENT_RELEASE:
		on_release(node, up, ev->u.client.client, now);
		break;
	case RING_EVENT_LEAVE:
		on_leave_request(node, up, now);
		break;
	case RING_EVENT_DROP_TOKEN:
		/* A fault drill (ringctl inject drop-token): nobody holds the
		 * token any more and the ring must find out by itself. */
		if (node->phase != PHASE_NONE)
			drop_token(node, up, now);
		break;
	}
	if (node->started && !node->broken)
		run_timers(node, up, now);
	/* A leaving member is done once the token is no longer its to pass. */
	if (node->leaving && node->phase == PHASE_NONE && !node->broken)
		finish_leave(node, up);
	up->deadline_us = node->started && !node->broken ? next_deadline(node) : NEVER;
	node->armed_deadline = up->deadline_us;
	if (!node->broken)
		check_self(node);
}

/* ---- life cycle and status ---- */

struct ring_node *ring_node_new(const struct ring_layout *layout, uint16_t id,
				uint32_t stored_epoch, int *err)
{
	int idx = ring_layout_index(layout, id);
	if (idx < 0) {
		*err = -RING_ENOTMEMBER;
		return NULL;
	}
	struct ring_node *node = calloc(1, sizeof *node);
	if (!node) {
		*err = -RING_ENOMEM;
		return NULL;
	}
	node->layout = *layout;
	node->fingerprint = ring_layout_fingerprint(layout);
	node->id = id;
	node->me = (size_t)idx;
	node->quorum = ring_layout_quorum(layout);
	node->epoch = stored_epoch;
	node->start_epoch = stored_epoch;
	node->armed_deadline = NEVER;
	for (size_t i = 0; i < layout->n; i++)
		ring_set_add(&node->alive_view, i);
	*err = 0;
	return node;
}

void ring_node_free(struct ring_node *node)
{
	free(node);
}

void ring_node_status(const struct ring_node *node, uint64_t now_us,
		      struct ring_status *st)
{
	memset(st, 0, sizeof *st);
	st->node = node->id;
	st->epoch = node->epoch;
	st->fence = node->last_fence;
	st->has_token = node->phase != PHASE_NONE;
	st->token_held = node->phase == PHASE_HELD;
	st->parked = st->token_held && node->parked;
	st->token_epoch = st->has_token ? node->token.epoch : 0;
	st->alive = st->has_token ? node->token.alive : node->alive_view;
	st->successor = id_of(node, next_in(node, &st->alive, node->me));
	st->token_seen_ms_ago = node->heard_ever && now_us >= node->last_heard
					? (now_us - node->last_heard) / 1000
					: UINT64_MAX;
	st->granted = node->granted;
	st->grant_client = node->granted ? node->grant_client : 0;
	st->queued = node->q_len;
	st->counters = node->counters;
	/* Holding means here, not yet passed: a member awaiting the ack of its
	 * pass (has_token) is no longer where the token is. */
	if (st->token_held)
		st->state = RING_STATE_HOLDING;
	else if (node->no_quorum)
		st->state = RING_STATE_NO_QUORUM;
	else if (node->elect_active || now_us < node->participated_until)
		st->state = RING_STATE_ELECTING;
	else if (node->q_len > 0)
		st->state = RING_STATE_WAITING;
	else
		st->state = RING_STATE_IDLE;
}

int ring_node_rx_rank(const uint8_t *buf, size_t len)
{
	return ring_wire_peek_type(buf, len) == RING_MSG_TOKEN ? 1 : 0;
}
