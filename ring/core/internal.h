/* What the core's files share and nothing outside the core sees: one member's
 * state (struct ring_node), the small helpers, and the functions one section
 * calls in another. The public face is core/node.h. Section numbers (§)
 * refer to docs/PROTOCOL.md, which argues each rule. */
#ifndef RING_CORE_INTERNAL_H
#define RING_CORE_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "core/assert.h"
#include "core/err.h"
#include "core/node.h"

#define RING_QUEUE_MAX 1024
/* Beats whose send time a holder keeps (contact.c): an ack up to this many
 * heartbeats late still proves when its beat went out. */
#define RING_BEAT_HISTORY 8
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
	bool visit_served;    /* a client of ours was granted in this visit (§3.5) */
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

	/* Walks (§3.5): when the token's last walk ended, on our clock (the
	 * token carries its age); whether it came from our predecessor in its
	 * alive set, as on a ring without jumps. */
	uint64_t walk_base;
	bool walk_ending;     /* the pass under way ends a walk, once acked */
	bool arrived_plain;

	/* Summoning (§3.5): where we last knew the token to be, from a
	 * heartbeat or our own pass, and at which hop. */
	bool holder_known;
	size_t holder_at;
	struct ring_hop holder_hop;
	bool want_seen;             /* the newest heartbeat's want set has us */
	struct ring_hop summon_hop; /* the hop our last WANT was sent for */
	size_t summon_to;
	uint64_t summon_next;       /* resend the WANT then while still waiting */
	uint64_t summon_every;
	bool summoned_all;          /* this wait's first WANT went to every member */
	/* WANTs that passed through here while the token was elsewhere: added
	 * to the token's want set if it comes here before they expire. */
	struct ring_set wants_heard;
	uint64_t wants_heard_until;
	struct ring_set copies_heard; /* copies of first summonses: an ack timeout's life */
	uint64_t copies_heard_until;

	/* The critical region. */
	bool granted;
	uint64_t grant_client;
	uint64_t grant_fence;
	uint64_t lease_deadline;
	uint64_t grant_started; /* max_hold_ms counts from here, renewals or not */
	uint64_t last_fence;
	uint64_t queue[RING_QUEUE_MAX];
	bool queue_try[RING_QUEUE_MAX]; /* the request is a TRY: it yields to a busy holder */
	size_t q_head, q_len;
	/* A heartbeat said a client holds the region at another member, or
	 * waits for it there: a TRY here is refused until then. BUSY is read
	 * only from the newest heartbeat heard (hop, then the sender's beat),
	 * so a late one cannot say it; busy_sent: our last heartbeat said it. */
	uint64_t busy_elsewhere_until;
	struct ring_hop busy_hop;
	size_t busy_from;
	uint32_t busy_beat;
	bool busy_sent;
	/* Renewal's proof of contact (contact.c, §3.3): the beats our
	 * heartbeats carry and when the last RING_BEAT_HISTORY went out; for
	 * each member, when the newest beat it acked went out. */
	uint32_t beat;
	uint64_t beat_sent_at[RING_BEAT_HISTORY];
	uint64_t ack_at[RING_MAX_MEMBERS];

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
	/* Our votes, carried on in elections, may still count until then
	 * whatever we hear meanwhile: no HEARTBEAT_ACK of ours (contact.c) but
	 * for a token the highest of their initiators (vote_initiator) minted
	 * above every epoch they knew at our hop (vote_epoch). */
	uint64_t vote_out_until;
	uint32_t vote_epoch;
	uint16_t vote_initiator;
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
	/* Asking the members that did not answer yet, after the query settled:
	 * with jumps (§3.5) a member's first token may come from anyone, long
	 * after the start, when its floor would be the epoch of that token. */
	uint64_t floor_next, floor_every;
	uint32_t floor_asks;
	size_t floor_cursor;
	uint64_t floor_asked[RING_MAX_MEMBERS]; /* when we last asked it alone */

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

static inline uint64_t ms(uint32_t v)
{
	return (uint64_t)v * 1000;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static inline uint16_t id_of(const struct ring_node *node, size_t idx)
{
	return node->layout.members[idx].id;
}

/* The member after IDX in ring order that is in SET, or IDX's own index when
 * no other member is. */
static inline size_t next_in(const struct ring_node *node, const struct ring_set *set, size_t idx)
{
	size_t n = node->layout.n;
	for (size_t k = 1; k < n; k++) {
		size_t j = (idx + k) % n;
		if (ring_set_has(set, j))
			return j;
	}
	return node->me;
}

/* actions.c */
void act_fatal(struct ring_node *node, struct ring_update *up, int reason);
struct ring_action *act_push(struct ring_node *node, struct ring_update *up,
			     enum ring_action_type type);
void act_log(struct ring_node *node, struct ring_update *up,
	     enum ring_log_event ev, uint64_t a, uint64_t b, uint64_t c);
void act_bad_packet(struct ring_node *node, struct ring_update *up, uint16_t from, int err);
void act_version_mismatch(struct ring_node *node, struct ring_update *up, uint16_t from,
			  int theirs);
void act_send(struct ring_node *node, struct ring_update *up, uint16_t to,
	      struct ring_msg *msg);
bool act_persist(struct ring_node *node, struct ring_update *up, uint32_t epoch);
void act_send_ack(struct ring_node *node, struct ring_update *up, uint16_t to,
		  uint32_t epoch, uint32_t seq, uint32_t flags);
void act_send_join(struct ring_node *node, struct ring_update *up, uint16_t to,
		   uint64_t now);
void act_send_refusal(struct ring_node *node, struct ring_update *up, uint16_t to,
		      const struct ring_msg_token *t);
void act_send_heartbeat(struct ring_node *node, struct ring_update *up, uint64_t now);

/* epoch.c (§4) */
uint32_t epoch_mint(struct ring_node *node, struct ring_update *up, uint32_t base);
bool epoch_within_reach(uint32_t base, uint32_t e);
bool epoch_ok(const struct ring_node *node, uint32_t e);
bool epoch_msg_ok(const struct ring_node *node, const struct ring_msg *m);
void epoch_drop_token(struct ring_node *node, struct ring_update *up, uint64_t now);
void epoch_adopt(struct ring_node *node, struct ring_update *up, uint32_t e,
		 uint16_t from, uint64_t now);
bool epoch_reepoch(struct ring_node *node, struct ring_update *up, uint32_t base,
		   uint64_t now);
bool epoch_confirmed(const struct ring_node *node);

/* visit.c (§3.1-3.3) */
void visit_begin(struct ring_node *node, uint64_t now);
void visit_send_token(struct ring_node *node, struct ring_update *up, uint64_t now);
void visit_uncount_pass(struct ring_node *node);
void visit_serve(struct ring_node *node, struct ring_update *up, uint64_t now);
void visit_pass(struct ring_node *node, struct ring_update *up, uint64_t now);
void visit_on_token(struct ring_node *node, struct ring_update *up, uint16_t from,
		    const struct ring_msg_token *t, uint64_t now);
void visit_on_ack(struct ring_node *node, struct ring_update *up, uint16_t from,
		  const struct ring_msg_token_ack *a, uint64_t now);
void visit_on_heartbeat(struct ring_node *node, struct ring_update *up, uint16_t from,
			const struct ring_msg_heartbeat *h, uint64_t now);
bool visit_heartbeats(const struct ring_node *node);

/* contact.c */
uint32_t contact_beat(struct ring_node *node, uint64_t now);
void contact_answer(struct ring_node *node, struct ring_update *up, uint16_t from,
		    const struct ring_msg_heartbeat *h, uint64_t now);
void contact_on_ack(struct ring_node *node, size_t idx, const struct ring_msg_heartbeat_ack *a);
uint64_t contact_time(const struct ring_node *node, uint64_t now);
void visit_ack_timeout(struct ring_node *node, struct ring_update *up, uint64_t now);
void visit_heartbeat_due(struct ring_node *node, struct ring_update *up, uint64_t now);

/* park.c (§3.4) */
bool park_allowed(const struct ring_node *node, uint64_t now);
bool park_fresh(const struct ring_node *node, uint64_t now);
uint64_t park_lap_at(const struct ring_node *node);
bool park_lap_due(const struct ring_node *node, uint64_t now);
void park_token(struct ring_node *node, struct ring_update *up);

/* jump.c (§3.5) */
bool jump_others_want(const struct ring_node *node);
bool jump_walk_due(const struct ring_node *node, uint64_t now, bool from_park);
void jump_walk_start(struct ring_node *node);
size_t jump_next(struct ring_node *node, uint64_t now, bool from_park);
uint32_t jump_walk_age(const struct ring_node *node, uint64_t now);

/* want.c (§3.5) */
bool want_waiting(const struct ring_node *node);
void want_summon(struct ring_node *node, struct ring_update *up, uint64_t now);
void want_on_msg(struct ring_node *node, struct ring_update *up, size_t from_idx,
		 const struct ring_msg_want *w, uint64_t now);
void want_on_heartbeat(struct ring_node *node, struct ring_update *up, size_t from_idx,
		       const struct ring_msg_heartbeat *h, uint64_t now);
void want_holder_is(struct ring_node *node, size_t idx, struct ring_hop hop);
void want_merge_heard(struct ring_node *node, uint64_t now);

/* clients.c */
void clients_revoke(struct ring_node *node, struct ring_update *up);
void clients_grant(struct ring_node *node, struct ring_update *up, uint64_t now);
void clients_on_acquire(struct ring_node *node, struct ring_update *up, uint64_t client,
			uint64_t now);
void clients_on_release(struct ring_node *node, struct ring_update *up, uint64_t client,
			uint64_t now);
void clients_check_lease(struct ring_node *node, struct ring_update *up, uint64_t now);
void clients_on_renew(struct ring_node *node, struct ring_update *up, uint64_t client,
		      uint64_t now);
void clients_on_try(struct ring_node *node, struct ring_update *up, uint64_t client,
		    uint64_t now);
void clients_busy_elsewhere(struct ring_node *node, struct ring_update *up, uint64_t now);
void clients_busy_cleared(struct ring_node *node, struct ring_update *up, uint64_t now);

/* members.c (§5.3-5.4) */
bool members_apply(struct ring_node *node, struct ring_update *up, uint64_t now);
void members_finish_leave(struct ring_node *node, struct ring_update *up);
void members_on_join(struct ring_node *node, struct ring_update *up, size_t from_idx,
		     const struct ring_msg_join *j, uint64_t now);
void members_take_back(struct ring_node *node, struct ring_update *up, uint64_t now);
void members_on_leave(struct ring_node *node, struct ring_update *up, size_t from_idx,
		      const struct ring_msg_leave *l, uint64_t now);
void members_on_leave_request(struct ring_node *node, struct ring_update *up, uint64_t now);
void members_leave_timeout(struct ring_node *node, struct ring_update *up, uint64_t now);

/* restart.c (§5.3) */
size_t restart_query_needed(const struct ring_node *node);
void restart_query_start(struct ring_node *node, struct ring_update *up, uint64_t now,
			 bool at_start);
void restart_on_reply(struct ring_node *node, struct ring_update *up, size_t from_idx,
		      const struct ring_msg_epoch_reply *r, uint64_t now);
void restart_on_query(struct ring_node *node, struct ring_update *up, uint16_t from,
		      const struct ring_msg_epoch_query *q);
void restart_query_due(struct ring_node *node, struct ring_update *up, uint64_t now);
bool restart_floors_missing(const struct ring_node *node);
void restart_ask_floor(struct ring_node *node, struct ring_update *up, size_t idx, uint64_t now);
void restart_floor_due(struct ring_node *node, struct ring_update *up, uint64_t now);

/* election.c (§6) */
bool election_recently_heard(const struct ring_node *node, uint64_t now);
void election_on_msg(struct ring_node *node, struct ring_update *up, uint16_t from,
		     const struct ring_msg_election *e, uint64_t now);
void election_on_ack(struct ring_node *node, size_t from_idx,
		     const struct ring_msg_election_ack *a);
void election_ack_timeout(struct ring_node *node, struct ring_update *up, uint64_t now);
void election_no_quorum_timeout(struct ring_node *node, struct ring_update *up, uint64_t now);
void election_loss_timeout(struct ring_node *node, struct ring_update *up, uint64_t now);

/* timers.c */
void timers_check_pause(struct ring_node *node, struct ring_update *up, uint64_t now);
void timers_run(struct ring_node *node, struct ring_update *up, uint64_t now);
uint64_t timers_next_deadline(const struct ring_node *node);

#endif
