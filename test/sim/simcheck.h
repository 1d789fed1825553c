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

/* Open addressing, key 0 reserved for "empty": fences, epochs and hops are never 0. */
struct simcheck_map {
	uint64_t *key;
	uint64_t *val;
	size_t cap, n;
};

struct simcheck_config {
	size_t n;        /* members, ring indices 0..n-1 */
	bool floor;      /* I1's floor: with a majority quorum only (§4.4) */
	bool ring_order; /* I5: continuous contention on a healthy ring */
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

struct simcheck_member {
	bool up;
	bool have_status;
	struct simcheck_status st;
	uint32_t persisted;  /* its disk this life: the epoch it loaded, then each PERSIST */
	uint32_t last_epoch; /* the highest epoch its status showed this life */
	uint32_t pass_epoch, pass_seq; /* the hop its last pass carried */
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

	/* I5 */
	int last_grant_node;

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
 * I1, I2, I3, I5, and the grant is recorded for fencing. Returns the grant's id. */
size_t simcheck_grant(struct simcheck *c, uint32_t node, uint32_t client, uint64_t fence,
		      uint32_t epoch, uint32_t node_epoch);
/* The fencing record alone: the grant's place in the order of grants. */
size_t simcheck_fence_record(struct simcheck *c, uint32_t node, uint32_t client,
			     uint64_t fence);
/* Grant GID's critical region ended (release, revoke, crash). */
void simcheck_cs_end(struct simcheck *c, size_t gid);

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
	uint64_t idle_pass_us, loss_us, heartbeat_us; /* the layout's; idle_pass_us 0: parking */
	uint64_t grants, requests, parks;
	uint64_t hops, acks, heartbeats, wants;
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
