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

#endif
