/* The invariants of docs/PROTOCOL.md §8 as checkers of a history: the simulator feeds them
 * what happened (grants, ends of critical regions, statuses, persists, token hops, resource
 * writes, requests) and a unit test feeds them made-up histories. Nothing here knows the
 * network, the clients or the protocol core: only the events. */
#ifndef SIMCHECK_H
#define SIMCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIMCHECK_MAX_N 64
#define SIMCHECK_NEVER UINT64_MAX

/* Open addressing, key 0 reserved for "empty": fences, epochs and hops are never 0. */
struct simcheck_map {
	uint64_t *key;
	uint64_t *val;
	size_t cap, n;
};

struct simcheck_config {
	size_t n;        /* members, ring indices 0..n-1 */
	bool floor;      /* I1's floor: with a majority quorum only (§4.4) */
	bool ring_order; /* continuous contention on a healthy ring (I5 was exact ring order then; it is fairness now, in every run) */
};

/* A member's status, the part the checks read. */
struct simcheck_status {
	uint32_t epoch;       /* newest epoch it knows */
	bool has_token;       /* holds the token, or passes it and awaits the ack */
	bool token_held;      /* holds it (not passing) */
	uint32_t token_epoch; /* of the token held or passed */
	/* The step is not over: a PERSIST it asked for is still to be carried
	 * out (a slow fsync), so the disk check waits for the step's end. */
	bool persist_pending;
};

/* What simcheck_epochs.c keeps of a member's life. */
struct simcheck_ep_member {
	uint32_t pass_to;     /* ring index + 1 its last TOKEN went to, 0 none */
	bool query_any;       /* broadcast an EPOCH_QUERY this life */
	uint64_t query_nonce; /* the last one's nonce */
	uint64_t query_first, query_last; /* when it was first and last sent */
	uint32_t query_resends;
	uint32_t pass_epoch, pass_seq; /* the hop its last TOKEN carried */
	uint64_t pass_first_at; /* when that pass was first sent */
	bool pass_resent;     /* an ack timeout sent it again */
	uint64_t rtt_us;      /* the last hop round trip it could measure */
	uint64_t hb_due;      /* when it owes the next heartbeat of a token it took, 0 none */
	uint32_t pause_gen;   /* the caller's count of its pauses, at its last step */
	bool heard_any, joined_any;
	uint64_t heard_at;    /* it last heard a live token */
	uint64_t joined_at;   /* it last sent a JOIN of its own */
};

/* simcheck_restart.c's model of a member's life: the restart proof (§5.3). */
struct simcheck_rs_member {
	bool lost;       /* an answer beyond reach: the model stops following */
	bool proven, leaving, elected;
	size_t needed;   /* answers its start query needs */
	uint32_t start_epoch, round;
	uint64_t first_nonce, start_nonce, last_nonce;
	uint64_t answered, floor_known; /* bit per ring index */
	uint32_t floor[SIMCHECK_MAX_N];  /* each member's first answer of this life */
	uint32_t answer[SIMCHECK_MAX_N]; /* its newest answer to the start query */
	uint64_t started_at, proven_at, listen_us;
	uint32_t took_epoch; /* the epoch of the last hop it took in this life */
};

struct simcheck_member {
	bool up;
	bool have_status;
	struct simcheck_status st;
	uint32_t persisted;  /* its disk this life: the epoch it loaded, then each PERSIST */
	uint32_t last_epoch; /* the highest epoch its status showed this life */
	uint32_t pass_epoch, pass_seq; /* the hop its last pass carried */
	struct simcheck_ep_member ep;  /* simcheck_epochs.c */
	struct simcheck_rs_member rs;  /* simcheck_restart.c */
};

struct simcheck_grant {
	uint64_t fence;
	uint32_t node, client;
	bool in_cs;
};

enum simcheck_req_state {
	SIMCHECK_WAIT,
	SIMCHECK_GRANTED,
	SIMCHECK_CANCELLED,
	SIMCHECK_DENIED,
	SIMCHECK_DROPPED,
};

struct simcheck_request {
	uint32_t client, node;
	enum simcheck_req_state state;
	uint64_t t_req, t_grant;
};

/* §5.5, per member (simcheck_pause.c): the deadline it last asked for, and
 * the quarantine of its last detected pause. */
struct simcheck_pause_member {
	uint64_t armed;      /* SIMCHECK_NEVER when none */
	bool detecting;      /* this step's event came a pause late */
	uint64_t quiet_until; /* no grant before this */
	/* Woken at WOKE_AT with a batch whose newest heartbeat is of
	 * WOKE_EPOCH; TOKEN_STEP: this step handles a token. */
	uint64_t woke_at;
	uint32_t woke_epoch;
	bool token_step;
};

struct simcheck_pauses {
	uint64_t limit_us;     /* loss_timeout / 2: later than this is a pause */
	uint64_t quarantine_us; /* 2 x heartbeat */
	struct simcheck_pause_member m[SIMCHECK_MAX_N];
};

/* §3.4, per member (simcheck_park.c): what its park looked like from
 * outside, as of its last step. */
struct simcheck_park_member {
	uint64_t arrived;      /* its last token accepted or regenerated */
	uint64_t walked;       /* when that token's last walk ended (§3.5) */
	uint64_t walk_seen;    /* the walk age of the TOKEN the step handles */
	bool parked;           /* its status said so at the end of its last step */
	size_t queued;         /* clients waiting then */
	bool summoned;         /* logged token_unpark since the token came */
	bool leaving;          /* told to leave in this life */
	bool visit_granted;    /* granted since the token came */
	bool alone;            /* its last heartbeat counted only itself (§3.3) */
	bool hb_parked;        /* its last PARKED heartbeat, the park waiters see */
	uint32_t hb_epoch, hb_seq;
	uint64_t hb_alive;     /* ring indices, bit per member */
	/* Summons: members whose LEAVE it heard since their last PARKED
	 * heartbeat; the last park it summoned; the park the step's event
	 * announced, and whether the step summoned it. */
	uint64_t left_since;
	bool want_any, heard, heard_summoned;
	uint32_t want_epoch, want_seq, heard_epoch, heard_seq, heard_from;
	/* within the step being fed */
	bool in_step, was_parked, was_summoned, passed, granted, park_logged, pausing;
	bool announce;         /* parked, and no heartbeat sent since */
	bool unannounced;      /* this step's heartbeat after a park was not PARKED */
	uint32_t known_epoch, known_seq; /* the newest hop it passed or heard of */
};

struct simcheck_parks {
	uint64_t loss_us;
	struct simcheck_park_member m[SIMCHECK_MAX_N];
};

/* §3.2 and §7, per member (simcheck_visit.c): its pass, and the step. */
struct simcheck_visit_member {
	bool passing;          /* its status at the end of its last step */
	uint32_t pass_epoch, pass_seq; /* the hop it last passed */
	/* within the step being fed */
	bool in_step, token_sent, ack_heard, ack_stale;
	uint32_t ack_epoch, ack_seq, rejoins;
};

/* An election datagram, its fields in ring indices; PARTICIPANTS a mask. */
struct simcheck_election {
	uint32_t initiator, round, max_epoch;
	uint32_t initiator_id; /* its member id: Chang-Roberts orders by id */
	uint64_t participants;
	bool no_quorum;
};

/* The elections' record (simcheck_elect.c), per member: what it started,
 * carried and took in, and its status after its last step. */
struct simcheck_elect_rec { /* member M's view of initiator I's elections */
	uint32_t round;       /* the last round of I that M took in */
	uint64_t handled_at;  /* when M took it in (a copy after is acked only) */
};

struct simcheck_elect_ack {
	uint32_t init, round;
	bool anew;    /* taken in, not a retransmission of one taken in */
	bool carried; /* sent on in the same step */
};

struct simcheck_elect_member {
	bool leaving;
	bool started;             /* its own elections this life */
	uint32_t start_round;
	uint64_t start_at;
	bool paused_since_start;  /* a pause detected since its last start */
	bool fwd_any;             /* the election it last started or carried */
	uint32_t fwd_init, fwd_round;
	bool fwd_dead;            /* a pause ended that one */
	bool last_any;            /* the last election it sent */
	struct simcheck_election last;
	bool have_st;             /* its status after its last step */
	uint64_t st_at, st_seen_ms;
	uint32_t st_epoch;
	bool st_has_token, st_idle; /* idle: not holding, electing or without quorum */
	bool win_any;             /* the window of the elections it carried */
	uint64_t win_until;       /* its last carry plus an election's duration */
	uint32_t win_best;        /* the highest initiator (by id) carried in it */
	uint32_t win_best_idx;
	bool took_token;          /* accepted a token in the step being fed */
	bool pend;                /* its last carry, not yet acked: resends are no carry */
	uint32_t pend_init, pend_round;
	/* The step being fed: the election it is stepping on, its acks, its
	 * carries, and the heartbeat a regeneration owes. */
	bool rx;
	uint32_t rx_init, rx_max;
	uint64_t rx_parts;
	uint32_t acks_n, carry_n;
	struct simcheck_elect_ack acks[4];
	struct simcheck_election carry[4];
	bool regen_hb;
	uint64_t regen_parts;
	struct simcheck_elect_rec rec[SIMCHECK_MAX_N];
};

struct simcheck_elect {
	bool on;
	uint64_t loss_us, ack_us, timeout_us; /* timeout: an election's duration */
	uint32_t retries;
	size_t quorum; /* 0: quorum = none */
	struct simcheck_elect_member m[SIMCHECK_MAX_N];
};

struct simcheck {
	struct simcheck_config cfg;
	uint64_t now; /* the caller's clock (µs), set before each event: for the messages */
	bool failed;  /* the first failure is kept: it is the one to replay */
	char inv[16];
	char what[640];

	/* I1 */
	struct simcheck_map fences;      /* fence -> grant id + 1 */
	struct simcheck_map epoch_last;  /* epoch -> its last granted fence */
	struct simcheck_map epoch_floor; /* epoch -> fence_max when it was first persisted */
	uint64_t fence_max;

	/* I2 */
	bool i2;            /* its precondition still holds */
	char i2_off[120];   /* the first fault that broke it */
	uint64_t i2_off_at;
	uint32_t in_cs;
	uint64_t overlaps;  /* grants made while another client was in the CS */

	/* I3 */
	struct simcheck_member m[SIMCHECK_MAX_N];
	struct simcheck_map hops; /* epoch << 32 | seq of every hop a member accepted */

	/* Fencing */
	struct simcheck_grant *grant;
	size_t grant_n, grant_cap;
	bool acc_any;
	size_t acc;         /* the newest grant whose write the resource accepted */
	uint64_t accepted, refused;

	/* I4 */
	struct simcheck_request *req;
	size_t req_n, req_cap;

	/* I5: grants of member x while member m waited (overtaken[m][x]) */
	uint8_t overtaken[SIMCHECK_MAX_N][SIMCHECK_MAX_N];

	/* §5.5 (simcheck_pause.c) */
	struct simcheck_pauses pause;

	/* §3.4 (simcheck_park.c) */
	struct simcheck_parks park;

	/* §3.2, §7 (simcheck_visit.c) */
	struct simcheck_visit_member visit[SIMCHECK_MAX_N];
	struct simcheck_elect el; /* simcheck_elect.c */
};

void simcheck_init(struct simcheck *c, const struct simcheck_config *cfg);
void simcheck_free(struct simcheck *c);

/* Records a failure of invariant INV (the first one only) and returns false. */
bool simcheck_fail(struct simcheck *c, const char *inv, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* I2's precondition is broken from now on, by WHY (kept for the trace). */
void simcheck_i2_off(struct simcheck *c, const char *why);

/* Member NODE starts (or restarts) with DISK_EPOCH on its disk; stops (a crash, a
 * leave): its token, if any, is gone. */
void simcheck_start(struct simcheck *c, uint32_t node, uint32_t disk_epoch);
void simcheck_stop(struct simcheck *c, uint32_t node);

/* NODE persisted EPOCH: never below its disk this life (I3); the first persist of
 * an epoch anywhere is its minting, which fixes its floor (I1). */
void simcheck_persist(struct simcheck *c, uint32_t node, uint32_t epoch);

/* NODE accepted the hop EPOCH/SEQ of a token; passed the token as hop EPOCH/SEQ. */
void simcheck_token_recv(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq);
void simcheck_token_pass(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq);

/* NODE's status after a step (I3). SETTLED: the network has healed and settled,
 * so all live tokens must share one epoch. */
void simcheck_status(struct simcheck *c, uint32_t node, const struct simcheck_status *st,
		     bool settled);

/* NODE granted FENCE under EPOCH to CLIENT while its own epoch is NODE_EPOCH:
 * I1, I2, I3, and the grant is recorded for fencing (I5: simcheck_fair_grant). Returns the grant's id. */
size_t simcheck_grant(struct simcheck *c, uint32_t node, uint32_t client, uint64_t fence,
		      uint32_t epoch, uint32_t node_epoch);
/* The fencing record alone: the grant's place in the order of grants. */
size_t simcheck_fence_record(struct simcheck *c, uint32_t node, uint32_t client,
			     uint64_t fence);
/* Grant GID's critical region ended (release, revoke, crash). */
void simcheck_cs_end(struct simcheck *c, size_t gid);
/* I5 (§3.5): NODE granted with WAITING (bit per ring index) in its token's
 * want set; NODE took a hop; a token was regenerated. */
void simcheck_fair_grant(struct simcheck *c, uint32_t node, uint64_t waiting);
void simcheck_fair_visit(struct simcheck *c, uint32_t node);
void simcheck_fair_regen(struct simcheck *c);

/* The resource ACCEPTED (or refused) a write of grant GID, by its own rule. The
 * checker's verdict, from the order of grants, must agree. */
void simcheck_write(struct simcheck *c, size_t gid, bool accepted);

/* I4: a request of CLIENT at NODE is made now; it ends in STATE; DUE says its
 * bound has passed (counted from FROM): still waiting fails. */
size_t simcheck_request(struct simcheck *c, uint32_t client, uint32_t node);
void simcheck_request_end(struct simcheck *c, size_t r, enum simcheck_req_state state);
void simcheck_request_due(struct simcheck *c, size_t r, uint64_t from, uint64_t bound_us);

/* What a settled ring sent: from T_settle (the faults over, every member up
 * and connected, the wait bound passed) to the end of the run. The counts
 * are of datagrams sent (a broadcast once), by what they are for. */
struct simcheck_rates {
	uint64_t window_us;
	size_t n;
	uint64_t idle_pass_us, loss_us, heartbeat_us, lease_us; /* the layout's; idle_pass_us 0: parking */
	uint64_t grants, requests, parks, renews;
	uint64_t hops, acks, heartbeats, wants, want_forwards, want_copies, beat_acks; /* wants: a wanter's own to one member */
	/* Elections and their acks, JOINs, LEAVEs, EPOCH_QUERYs and replies:
	 * the datagrams of recovery, and the name of the first kind counted. */
	uint64_t recovery;
	const char *recovery_kind;
};

/* Liveness of a settled ring (issue 28): its datagrams fall back to the
 * rate the configuration implies. No recovery datagram at all; token hops
 * within n per grant (a summons walks at most the ring) plus the idle pace
 * and a lap per loss timeout; one ack per hop, so no retransmission storm;
 * about one heartbeat per heartbeat interval, and one per park (a park is
 * announced at once, §3.4); a WANT or two per request.
 * A livelock of elections, take-backs, joins or summons fails as "liveness",
 * naming the kind and its budget. */
void simcheck_settled(struct simcheck *c, const struct simcheck_rates *r);

/* At the end of a settled run the ring holds exactly one token: at least
 * one member that is up has it (I3, with simcheck_status's SETTLED, already
 * refuses a second one). */
void simcheck_one_token(struct simcheck *c);

/* Pauses (PROTOCOL.md §5.5, simcheck_pause.c): a member whose event comes
 * more than loss_timeout_ms / 2 after the deadline it last asked for was
 * stopped; before anything else in that step it revokes its grant, and for
 * 2 x heartbeat_ms it grants nothing. Judged from the deadlines each step
 * returned, the steps' times, the grants and the status after each step. */
void simcheck_pause_setup(struct simcheck *c, uint64_t loss_us, uint64_t heartbeat_us);
/* NODE (re)starts: it has asked for no deadline yet. */
void simcheck_pause_start(struct simcheck *c, uint32_t node);
/* NODE is stepped now (c->now); call before its actions are carried out. */
void simcheck_pause_step(struct simcheck *c, uint32_t node);
/* NODE granted now under EPOCH: neither in a step that found a pause nor in
 * the quarantine, nor under a token of its wake-up batch older than a
 * heartbeat in that batch. */
void simcheck_pause_grant(struct simcheck *c, uint32_t node, uint32_t epoch);
/* NODE wakes from a pause now, the events it missed in its socket; the
 * newest heartbeat among them is of EPOCH (0: none). A driver feeds such a
 * batch tokens last (§5.5), so a token older than that heartbeat is
 * dropped, never granted under. */
void simcheck_pause_woken(struct simcheck *c, uint32_t node, uint32_t epoch);
/* The step of NODE about to be fed handles a token. */
void simcheck_pause_token(struct simcheck *c, uint32_t node);
/* NODE's step ended with GRANTED (a client in the region) and asked for
 * DEADLINE (SIMCHECK_NEVER for none). */
void simcheck_pause_end(struct simcheck *c, uint32_t node, bool granted, uint64_t deadline);

/* Parks and summons (PROTOCOL.md §3.4, simcheck_park.c), from the log lines
 * and datagrams of each step of a member, in the order the step made them:
 * a park is announced at once by a PARKED heartbeat, and only after a whole
 * rotation unwanted; a parked token grants only within loss_timeout_ms / 2
 * of its arrival; it ends only when summoned by a WANT naming that park from
 * a member the park counts, when its lap is due, when a client here waits,
 * or when the member leaves; once summoned, it grants nothing more here.
 * The rotation rule is kept while I2's precondition holds (one token). */
void simcheck_park_setup(struct simcheck *c, uint64_t loss_us);
void simcheck_park_start(struct simcheck *c, uint32_t node);
/* NODE is told to leave (a graceful leave: its park may be handed on). */
void simcheck_park_leave(struct simcheck *c, uint32_t node);
/* A step of NODE begins (c->now); PAUSING: it came a pause late (§5.5). */
void simcheck_park_step(struct simcheck *c, uint32_t node, bool pausing);
/* What the step did, in order: accepted a hop (or regenerated the token),
 * logged a park, sent a heartbeat (its hop, flag and alive set), logged an
 * unpark (the WANT's sender and park), granted, passed the token. */
void simcheck_park_arrive(struct simcheck *c, uint32_t node, bool regenerated);
void simcheck_park_logged(struct simcheck *c, uint32_t node);
void simcheck_park_heartbeat(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq,
			     bool parked, uint64_t alive, uint64_t want);
/* NODE's step handles a TOKEN whose last walk ended WALK_US ago (§3.5):
 * if the step takes it, that is when a parked token's lap falls due. */
void simcheck_park_token_walk(struct simcheck *c, uint32_t node, uint32_t walk_us);
void simcheck_park_unpark(struct simcheck *c, uint32_t node, uint32_t from, uint32_t epoch,
			  uint32_t seq);
void simcheck_park_grant(struct simcheck *c, uint32_t node);
void simcheck_park_pass(struct simcheck *c, uint32_t node, uint32_t to, uint32_t epoch,
			uint32_t seq);
/* Summons (§3.4): NODE's event is a LEAVE, or a heartbeat (PARKED or not)
 * from FROM; NODE sends a WANT for EPOCH/SEQ to TO. A member whose client
 * waits summons a park it has not summoned yet in the step that hears of
 * it; it summons no member whose LEAVE it heard since that member's last
 * PARKED heartbeat (a leaver hands its park on). */
void simcheck_park_heard_leave(struct simcheck *c, uint32_t node, uint32_t from);
void simcheck_park_heard_heartbeat(struct simcheck *c, uint32_t node, uint32_t from,
				   uint32_t epoch, uint32_t seq, bool parked);
void simcheck_park_want(struct simcheck *c, uint32_t node, uint32_t to, uint32_t epoch,
			uint32_t seq);
/* After simcheck_park_end: whether a park heard in the step had to be
 * summoned at once (QUEUED waiting, no token, EPOCH the member's now). */
void simcheck_park_summons_end(struct simcheck *c, uint32_t node, size_t queued,
			       bool has_token, uint32_t epoch);
/* The step ended: NODE parked or not, QUEUED clients waiting, HAS_TOKEN. */
void simcheck_park_end(struct simcheck *c, uint32_t node, bool parked, size_t queued,
		       bool has_token);

/* The hop of a visit (PROTOCOL.md §3.2, simcheck_visit.c), from the
 * datagrams of each step in order: a receipt is acked before the token
 * moves on (no TOKEN before a TOKEN_ACK in a step); a pass ends only on an
 * ack naming its hop (or one saying the token is stale); and a step
 * readmits at most 8 joiners (§7: the rest wait for a later step). */
void simcheck_visit_start(struct simcheck *c, uint32_t node);
/* A step of NODE begins; its event is an ack of EPOCH/SEQ (STALE: the
 * receiver knows a newer epoch) when ACK. */
void simcheck_visit_step(struct simcheck *c, uint32_t node);
void simcheck_visit_heard_ack(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq,
			      bool stale);
/* In the step, in order: a TOKEN or a TOKEN_ACK sent, a pass of hop
 * EPOCH/SEQ, a joiner readmitted. */
void simcheck_visit_sent(struct simcheck *c, uint32_t node, bool token);
void simcheck_visit_pass(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq);
void simcheck_visit_rejoin(struct simcheck *c, uint32_t node);
/* The step ended: PASSING (the token passed, its ack awaited) or not;
 * GAVE_UP: it skipped its successor (§3.2). */
void simcheck_visit_end(struct simcheck *c, uint32_t node, bool passing, bool gave_up);
/* ---- epochs told and answered, the restart query's pace (simcheck_epochs.c) ---- */

/* Whether epoch E is within §4.2's jump bound above BASE. */
bool simcheck_within_reach(uint32_t base, uint32_t e);

/* NODE knew epoch BEFORE, was told TOLD by BY (a heartbeat, a STALE ack of
 * its pass) and knows AFTER once that step is over: a newer epoch within
 * reach is adopted at once (§4.3). */
void simcheck_told(struct simcheck *c, uint32_t node, const char *by, uint32_t before,
		   uint32_t told, uint32_t after);

/* The ack a member sent back in the step that got a token. */
struct simcheck_ack {
	bool sent, stale;
	uint32_t known_epoch;
};

/* NODE, knowing epoch KNOWN, got the hop EPOCH/SEQ of a token and answered
 * its sender with ACK: a stale hop is acked STALE with the newer epoch. */
void simcheck_stale_token(struct simcheck *c, uint32_t node, uint32_t known, uint32_t epoch,
			  uint32_t seq, const struct simcheck_ack *ack);

/* NODE sent a TOKEN of hop EPOCH/SEQ to TO (TIMER: in a timer's step): true
 * when its last one was the same (a retransmission). Whether its last one
 * went to TO. */
bool simcheck_pass_sent(struct simcheck *c, uint32_t node, uint32_t to, uint32_t epoch,
			uint32_t seq, bool timer);
/* NODE got a plain ack of hop EPOCH/SEQ from FROM: if it is of the pass it
 * awaits, sent once (no TIMER resend), the hop's round trip is measured. */
void simcheck_pass_acked(struct simcheck *c, uint32_t node, uint32_t from, uint32_t epoch,
			 uint32_t seq);
/* NODE passed a token carrying QUIET_US (§5.1): at most the time since its
 * token's last heartbeat plus half its last measured round trip. */
void simcheck_quiet_sent(struct simcheck *c, uint32_t node, uint64_t quiet_us,
			 uint64_t heartbeat_us);
bool simcheck_passing_to(const struct simcheck *c, uint32_t node, uint32_t to);

/* NODE, passing a token of TOKEN_EPOCH, got a STALE ack of its older pass in
 * ACK_EPOCH naming KNOWN_EPOCH: KEPT, it still has a token or passed it on. */
void simcheck_stale_ack_old(struct simcheck *c, uint32_t node, uint32_t token_epoch,
			    uint32_t ack_epoch, uint32_t known_epoch, bool kept);

/* Heartbeats (§5.1): NODE took a token with QUIET_US of quiet, sent a
 * heartbeat, or retransmitted its pass in a timer's step (HEARTBEAT: with
 * one in that step; one is owed once HEARTBEAT_US have passed). */
void simcheck_hb_took(struct simcheck *c, uint32_t node, uint64_t quiet_us,
		      uint64_t heartbeat_us);
void simcheck_hb_sent(struct simcheck *c, uint32_t node, uint64_t heartbeat_us);
void simcheck_hb_retransmit(struct simcheck *c, uint32_t node, bool heartbeat);
/* NODE's pauses, counted by the caller, are GEN: a new one ends what was owed. */
void simcheck_hb_paused(struct simcheck *c, uint32_t node, uint32_t gen);

/* NODE heard a live token now; sent a JOIN of its own (not a refusal). */
void simcheck_heard(struct simcheck *c, uint32_t node);
void simcheck_join_sent(struct simcheck *c, uint32_t node);
/* NODE got a heartbeat older than its epoch; HOLDS: it has a token; JOINED:
 * it sent the heartbeat's sender a JOIN in that step. */
void simcheck_stale_heartbeat(struct simcheck *c, uint32_t node, bool holds, uint64_t loss_us,
			      uint64_t heartbeat_us, bool joined);

/* NODE broadcast an EPOCH_QUERY with NONCE (now): resends back off from
 * HEARTBEAT_US to LOSS_US, and queries of one life begin LOSS_US apart. */
void simcheck_query_sent(struct simcheck *c, uint32_t node, uint64_t nonce,
			 uint64_t heartbeat_us, uint64_t loss_us);

/* ---- the restart proof as a model of each life (simcheck_restart.c) ---- */

/* NODE starts with DISK_EPOCH; its start query needs NEEDED answers; it
 * listens LISTEN_US (2 x heartbeat_ms) before any election. After
 * simcheck_start. */
void simcheck_restart_start(struct simcheck *c, uint32_t node, uint32_t disk_epoch,
			    size_t needed, uint64_t listen_us);
/* NODE sent an EPOCH_QUERY with NONCE (broadcast or to one member). */
void simcheck_restart_query(struct simcheck *c, uint32_t node, uint64_t nonce);
/* NODE, knowing BEFORE, got FROM's EPOCH_REPLY; PROVEN_NOW: that step
 * settled its start query (it logged epoch_learned at start). */
void simcheck_restart_reply(struct simcheck *c, uint32_t node, uint32_t from, uint64_t nonce,
			    uint32_t epoch, uint32_t before, bool proven_now);

/* What a member did with a token hop in the step that got it. */
struct simcheck_answer {
	bool taken;             /* accepted it (token_recv) */
	bool refused;           /* refused it by name: a JOIN naming the hop */
	uint32_t refusal_epoch; /* that JOIN's epoch */
};
void simcheck_restart_token(struct simcheck *c, uint32_t node, uint32_t from, uint32_t epoch,
			    uint32_t seq, uint32_t before, const struct simcheck_answer *ans);
/* NODE, knowing BEFORE, persisted EPOCH; CARRIED: the step's datagram
 * carried it (an epoch learned, not minted). */
void simcheck_restart_persist(struct simcheck *c, uint32_t node, uint32_t epoch,
			      uint32_t before, bool carried);
/* NODE was told to leave. */
void simcheck_restart_leaving(struct simcheck *c, uint32_t node);
/* NODE sent an ELECTION: its own of round ROUND (INITIATED) or another's;
 * SELF: naming itself a participant. */
void simcheck_restart_election(struct simcheck *c, uint32_t node, bool initiated,
			       uint32_t round, bool self);
/* ---- Membership and hand-over (§3.2, §5.3, §5.4): simcheck_members.c ----
 * Fed what members sent and received (decoded by the simulator), their
 * leaves, hops accepted and statuses; it judges the rules a pass, a JOIN and
 * a LEAVE obey at all times, not only on a settled ring. Alive sets are bit
 * masks of ring indices (n <= 64). */

/* The pass a member made last: the hop, to whom, and what it heard of it. */
struct simcheck_memb_pass {
	uint32_t epoch, seq, to; /* epoch 0: none */
	uint32_t sends;          /* the first send and the resends at ack timeouts */
	uint64_t sent_at;        /* its first send */
	bool answered;           /* an ack of it from TO, or a LEAVE that accepted it */
	bool heard;              /* a heartbeat of a newer epoch since its first send */
	uint64_t refused_at;     /* the first refusal naming it from TO, 0: none */
	bool refused_join;       /* that refusal was a JOIN (a restart), not a LEAVE */
	uint32_t refused_epoch;  /* the JOIN's epoch: a take-back mints above it */
	bool left_since;         /* a LEAVE from TO came after the refusal */
};

struct simcheck_memb_node {
	bool up, has_token, proven, leaving;
	bool took;               /* accepted a hop in this step */
	uint64_t leave_at;
	uint64_t join_last;      /* its last own JOIN this life, + 1; 0: none */
	int step_leave_from;     /* this step's event is a LEAVE from it, or -1 */
	uint64_t step_at;        /* when its step began: what it sends, it decided then */
	struct simcheck_memb_pass pass;
	/* JOINs and LEAVEs it heard and has not yet applied to a pass of its
	 * own: when (0: none), and the lowest JOIN epoch since. */
	uint64_t join_at[SIMCHECK_MAX_N], leave_heard_at[SIMCHECK_MAX_N];
	uint64_t join_any[SIMCHECK_MAX_N]; /* every JOIN heard: how many may be pending */
	uint32_t join_epoch[SIMCHECK_MAX_N];
};

struct simcheck_memb {
	size_t n;
	uint64_t heartbeat_us, loss_us, ack_us;
	uint32_t retries;
	uint64_t leave_us;        /* the leave deadline, n x (retries + 1) x ack + 1 s */
	bool epoch_sets;          /* one alive set per epoch: off once a disk was damaged */
	uint64_t *set_key, *set_val; /* epoch -> the alive set its hops carry */
	size_t set_cap, set_n;
	struct simcheck_memb_node m[SIMCHECK_MAX_N];
};

void simcheck_memb_init(struct simcheck_memb *b, size_t n, uint64_t heartbeat_us,
			uint64_t loss_us, uint64_t ack_us, uint32_t retries);
void simcheck_memb_free(struct simcheck_memb *b);
void simcheck_memb_start(struct simcheck_memb *b, uint32_t node);
void simcheck_memb_stop(struct simcheck_memb *b, uint32_t node);
/* NODE proved its epoch this life (§5.3): it may mint, so it applies joins and leaves. */
void simcheck_memb_proven(struct simcheck_memb *b, uint32_t node);
/* A disk lost or rolled back its state: two mints of one epoch are possible (§5.3). */
void simcheck_memb_disk_damaged(struct simcheck_memb *b);
/* NODE's status after a step: it has a token, held (not passing it) when
 * HELD; EPOCH, the newest it knows. */
void simcheck_memb_status(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			  bool has_token, bool held, uint32_t epoch);
/* NODE begins a step at NOW whose event is a datagram from FROM (-1: another
 * event), a LEAVE when LEAVE. */
void simcheck_memb_step(struct simcheck_memb *b, uint32_t node, uint64_t now, int from,
			bool leave);
/* NODE is told to leave (SIGTERM); the step that handled it left CLIENTS_IN_CS
 * of its clients in the critical region. */
void simcheck_memb_leave(struct simcheck *c, struct simcheck_memb *b, uint32_t node);
void simcheck_memb_leave_step(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			      uint32_t clients_in_cs);
/* A step of NODE is over; LEFT: it reported LEFT in it. Past its leave
 * deadline a leaving member goes (§5.4). */
void simcheck_memb_leave_due(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			     bool left);
void simcheck_memb_grant(struct simcheck *c, struct simcheck_memb *b, uint32_t node);
void simcheck_memb_token_recv(struct simcheck *c, struct simcheck_memb *b, uint32_t node);
/* What NODE received (a datagram its core was fed). A hop is epoch/seq, 0/0 none. */
void simcheck_memb_recv_join(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			     uint32_t from, uint32_t epoch, uint32_t ref_e, uint32_t ref_s);
void simcheck_memb_recv_leave(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			      uint32_t from, uint32_t epoch, uint32_t acc_e, uint32_t acc_s,
			      uint32_t ref_e, uint32_t ref_s);
void simcheck_memb_recv_ack(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			    uint32_t from, uint32_t epoch, uint32_t seq, uint32_t known);
/* What NODE sent. */
void simcheck_memb_send_token(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			      uint32_t to, uint32_t epoch, uint32_t seq, uint64_t alive);
void simcheck_memb_send_heartbeat(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
				  uint32_t epoch, uint64_t alive);
void simcheck_memb_send_join(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			     bool refusal);
/* ---- elections and quorum (§6), simcheck_elect.c ---- */

struct simcheck_elect_config {
	uint64_t loss_us, ack_us;
	uint32_t retries;
	size_t quorum; /* members a regeneration and a token need; 0: quorum = none */
};

/* A member's status after a step, the part the election checks read. */
struct simcheck_elect_status {
	uint32_t epoch;
	bool has_token, token_held, no_quorum;
	bool electing; /* its state: in an election, or in the window of one it carried */
	uint32_t token_epoch;
	uint64_t seen_ms; /* since it last heard a live token; UINT64_MAX: never */
	uint64_t at_us;   /* when the status was taken: its step's time */
};

enum simcheck_elog { SIMCHECK_ELECTION_START, SIMCHECK_ELECTION_WON, SIMCHECK_TOKEN_REGEN,
		     SIMCHECK_PAUSE_DETECTED, SIMCHECK_TOKEN_TAKEN };

/* The configuration the bounds come from; off until it is given. */
void simcheck_elect_config(struct simcheck *c, const struct simcheck_elect_config *cfg);
/* NODE (re)starts: a fresh life, rounds and records forgotten. */
void simcheck_elect_life(struct simcheck *c, uint32_t node);
/* NODE is told to leave (a leaver swallows elections, §5.4). */
void simcheck_elect_leaving(struct simcheck *c, uint32_t node);
/* NODE is about to step on election E. */
void simcheck_elect_rx(struct simcheck *c, uint32_t node, const struct simcheck_election *e);
/* NODE received an election_ack for INITIATOR's ROUND (its forward's). */
void simcheck_elect_ack_rx(struct simcheck *c, uint32_t node, uint32_t initiator, uint32_t round);
/* NODE acked (so took in) an election of INITIATOR's ROUND. */
void simcheck_elect_acked(struct simcheck *c, uint32_t node, uint32_t initiator, uint32_t round);
/* NODE sent election E to member TO. */
void simcheck_elect_sent(struct simcheck *c, uint32_t node, uint32_t to,
			 const struct simcheck_election *e);
/* NODE logged KIND: START (A the round), WON (A the epoch, B the round, HAVE
 * participants), TOKEN_REGEN, PAUSE_DETECTED. */
void simcheck_elect_log(struct simcheck *c, uint32_t node, enum simcheck_elog kind, uint32_t a,
			uint32_t b, uint32_t have);
/* NODE broadcast a heartbeat naming ALIVE (a mask); sent a token naming
 * ALIVE_N members alive. */
void simcheck_elect_heartbeat(struct simcheck *c, uint32_t node, uint64_t alive);
void simcheck_elect_token(struct simcheck *c, uint32_t node, size_t alive_n);
/* NODE's step is over: its status after it. */
void simcheck_elect_step(struct simcheck *c, uint32_t node, const struct simcheck_elect_status *st);

#endif
