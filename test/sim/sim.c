/* The deterministic simulator: virtual time, a seeded network and scheduled
 * faults drive every member's state machine (ring/core/node.c) through whole runs,
 * and the invariants of docs/PROTOCOL.md §8 are checked after every step. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/cluster.h"
#include "lib/driver.h"
#include "core/err.h"
#include "core/layout.h"
#include "core/node.h"
#include "sim/simcheck.h"
#include "lib/simnet.h"
#include "core/wire.h"

#define SIM_CLASSES(X)                  \
	X(HEALTHY, "healthy")           \
	X(LOSSY, "lossy")               \
	X(CRASH, "crash")               \
	X(PAUSE, "pause")               \
	X(PARTITION, "partition")       \
	X(MIXED, "mixed")               \
	X(DISK, "disk")

enum sim_class {
#define SIM_CLASS_ENUM_(name, str) SIM_CLASS_##name,
	SIM_CLASSES(SIM_CLASS_ENUM_)
#undef SIM_CLASS_ENUM_
	SIM_CLASS_COUNT_
};

static const char *const class_names[] = {
#define SIM_CLASS_NAME_(name, str) str,
	SIM_CLASSES(SIM_CLASS_NAME_)
#undef SIM_CLASS_NAME_
};

#define MS ((uint64_t)1000)           /* virtual time is in microseconds */
#define NEVER UINT64_MAX
#define SIM_MAX_N 64                  /* partitions are bit masks of ring indices */
#define SIM_EVENT_CAP 20000000ull     /* events in one run; hitting it fails the run */
#define SIM_SAME_TIME_CAP 200000ull   /* events at one instant: time must move on */
#define SIM_MAX_FAULTS 48
#define SIM_HANDLE_BASE 0x51c0000000000000ull /* client handles: base + index + 1 */
#define SIM_MIN_DELAY_US 50

/* ---- small containers ---- */

struct u32vec {
	uint32_t *v;
	size_t n, cap;
};

static bool vec_push(struct u32vec *vec, uint32_t x)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 16;
		uint32_t *v = realloc(vec->v, cap * sizeof *v);
		if (!v)
			return false;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = x;
	return true;
}

/* ---- the run ---- */

enum sim_kind {
	EV_START = CLUSTER_EV_START,     /* a node's first start */
	EV_TICK = CLUSTER_EV_TICK,       /* a node's deadline (cluster.h) */
	EV_DELIVER = CLUSTER_EV_DELIVER, /* a datagram arrives */
	EV_CLIENT = CLUSTER_EV_DRIVER,   /* a client's next move; stale unless gen is the client's */
	EV_FAULT,   /* the fault schedule */
	EV_CHECK,   /* I4: a request's grant deadline */
	EV_HEAL,    /* T_heal: the faults are over */
	EV_LEAVE,   /* a graceful leave fired by an event; stale unless gen is the node's life */
	EV_RESTART, /* its restart: arg the disk's fate; gen the life that left */
	EV_RESUME,  /* a pause ends; stale unless gen is the node's pause_gen */
	EV_AIMED,   /* an aimed fault (arg) fires; stale unless gen is the node's life */
};

/* What a restarted member finds on its disk. */
enum disk_fate {
	DISK_KEPT,     /* the epoch it last persisted */
	DISK_LOST,     /* nothing: epoch 0, as if it never ran */
	DISK_ROLLBACK, /* an older epoch it persisted earlier (a restored backup, a lying fsync) */
	DISK_WILD,     /* an epoch no ring made, far above what it knew (a bad disk) */
	DISK_DELETED,  /* the operator deleted a wild epoch file (operations.md): as LOST */
};

#define SIM_DISK_HIST 16

enum node_life { NODE_OFF, NODE_UP, NODE_DOWN };

/* What the simulator knows of member I besides its core, its timer and its
 * last status, which are the cluster's (run->cl.m[i]). */
struct sim_node {
	enum node_life life;
	bool paused;
	bool leaving;           /* stepped LEAVE in this life: its queue is dropped (§5.4) */
	uint32_t disk;          /* epoch on its disk, kept across crashes */
	uint32_t hist[SIM_DISK_HIST]; /* the epochs it persisted, newest last */
	uint32_t hist_n;
	uint32_t life_gen;      /* grows at every start and crash */
	uint32_t pause_gen;     /* grows at every pause */
	bool tear;              /* armed: crash between a PERSIST and the SEND after it */
	bool torn;              /* the tear happened in this step */
	bool slow_fsync;        /* armed: the next PERSIST stalls the process */
	uint64_t fsync_us;      /* for this long */
	struct ring_update *deferred; /* actions after a slow PERSIST, carried out on resume */
	size_t deferred_from;
	uint64_t start_at;
	bool left;              /* reported LEFT: stops once its step is done */
	struct u32vec held_clients; /* client events that came during a pause */
	struct u32vec held_events;  /* ticks and datagrams that came during a pause */
	uint32_t first_client, nclients;
	bool damaged;           /* restarted on a lost or rolled-back disk */
	uint32_t wild;          /* the wild epoch on its disk until the operator deletes it */
	bool proven;            /* logged epoch_learned since its last start */
	uint64_t step_at;       /* when its last step began: its status's time */
	/* When it last received a heartbeat from member j: no ack it sent
	 * can vouch for a later time, so no renewal may reach a lease past
	 * what a majority of these allows (§3.3). */
	uint64_t hb_from[RING_MAX_MEMBERS];
	bool was_summoned;      /* its token was summoned as its last step began */
	uint64_t paused_at, resumed_at; /* its last pause */
	uint64_t pause_seen_at; /* when its core last logged pause_detected */
};

enum client_state { CL_DOWN, CL_THINK, CL_WAIT, CL_CS };

struct sim_client {
	uint32_t node;
	enum client_state state;
	uint32_t gen;
	uint64_t fence;  /* while in the CS */
	size_t gid;      /* its grant (simcheck) while in the CS */
	/* A long hold that renews (RENEW) until it ends at cs_end; 0: a
	 * plain CS, ended by its one timer. */
	uint64_t cs_end, granted_at;
	uint64_t renew_cap; /* the latest deadline a renewal could justify so far */
	size_t req;      /* current request (simcheck) */
};

#define FAULT_KINDS(X)                                                           \
	X(CRASH, "crash")             /* a crash, or a leave when graceful */    \
	X(RESTART, "restart")         /* with its disk's fate */                 \
	X(PAUSE, "pause")             /* of a member with a client in the CS */  \
	X(RESUME, "resume")                                                      \
	X(PARTITION, "partition")                                                \
	X(HEAL, "heal")                                                          \
	X(PAUSE_ANY, "pause-any")     /* any member, length chosen when it fires */ \
	X(DCUT, "directed-cut")       /* some members stop hearing others */     \
	X(DHEAL, "directed-heal")                                                \
	X(TEAR, "arm-torn-crash")     /* crash between a PERSIST and its SEND, or two SENDs */ \
	X(SLOW_FSYNC, "arm-slow-fsync") /* stall right after a PERSIST */        \
	X(DISARM, "disarm")                                                      \
	X(NETWORK, "network-faults")  /* loss, dup, delays begin: I2 is checked before */

enum fault_kind {
#define FAULT_ENUM_(name, str) F_##name,
	FAULT_KINDS(FAULT_ENUM_)
#undef FAULT_ENUM_
};

static const char *const fault_names[] = {
#define FAULT_NAME_(name, str) str,
	FAULT_KINDS(FAULT_NAME_)
#undef FAULT_NAME_
};

/* How long a PAUSE_ANY lasts, against the pause detector's threshold
 * (loss_timeout_ms / 2 late, §5.5): the edges are where it can be wrong. */
enum pause_len { PL_SHORT, PL_JUST_BELOW, PL_JUST_ABOVE, PL_LONG };

struct sim_fault {
	enum fault_kind kind;
	uint64_t t;
	int pair;          /* the fault that undoes this one */
	int node;          /* chosen when the fault fires; -1 if it was skipped */
	bool prefer_holder;
	bool graceful;     /* crash: a SIGTERM-style LEAVE instead of a crash */
	uint64_t side;     /* partition: members on side 1 */
	enum disk_fate disk; /* restart: what the disk kept */
	enum pause_len len;  /* PAUSE_ANY */
	uint64_t max_us;     /* PAUSE_ANY, SLOW_FSYNC: the longest it may last */
	int dcut;            /* DCUT: 0 one member deaf to all, 1 all deaf to one, 2 random pairs */
};

/* Faults aimed at protocol moments (issue 28): fired by what a member just
 * sent, so that the rare interleavings (a crash right after a pass, a pause
 * right after an election's ack, a late copy of the WANT just sent) are
 * drawn often. Swarm testing: each run enables a random subset of these and
 * of the message types that trigger them, from its own random stream, so
 * that the rest of the run draws as it would without them. */
#define AIM_KINDS(X)                                                  \
	X(CRASH, "crash")  /* the sender, restarted within 1.5 s */    \
	X(LEAVE, "leave")  /* the sender is told to leave, then back */ \
	X(PAUSE, "pause")  /* the sender, over a random length */      \
	X(DUP, "dup")      /* the datagram just sent, once more */     \
	X(LATE, "late")    /* a copy of it, up to 3 loss timeouts late */ \
	X(HOLD, "hold")    /* its receiver, a token in flight to it, below the pause detector */ \
	X(LEAVE_DST, "leave-receiver") /* its receiver leaves, it in flight */ \
	X(LEAVE_STALL, "leave-stall") /* the sender leaves and stalls around its deadline */ \
	X(SLOW_ACK, "slow-ack")  /* its ack is slow, it dies and is back within the retries */

enum aim_kind {
#define AIM_ENUM_(name, str) AIM_##name,
	AIM_KINDS(AIM_ENUM_)
#undef AIM_ENUM_
	AIM_COUNT_
};

static const char *const aim_names[] = {
#define AIM_NAME_(name, str) str,
	AIM_KINDS(AIM_NAME_)
#undef AIM_NAME_
};

struct sim_aim {
	struct simnet_rng rng;
	uint32_t kinds;   /* bit per enum aim_kind enabled in this run */
	uint32_t types;   /* bit per message type that triggers one */
	double p;         /* chance per triggering send */
	uint32_t left;    /* how many more may fire */
};

struct sim_result {
	uint64_t virtual_us;
	uint64_t grants, overlaps, stale, denies;
	uint64_t renews, long_holds; /* RENEWED answers; grants held past a lease by renewing */
	uint64_t tries, try_refused; /* TRY requests; refused ones (ECONFLICT) */
	uint64_t elections, regenerations;
	uint64_t parks, summons; /* §3.4 in play: how often the token parked, WANTs sent */
	uint64_t aimed, swarm;   /* aimed faults fired; runs that aimed (struct sim_aim) */
	uint64_t worst_us, bound_us, rotation_us;
	uint64_t i2_us; /* virtual time over which I2 was checked */
	size_t n;
	char inv[16];
	char what[640];
	bool failed;
};

struct sim_run {
	enum sim_class cls;
	uint64_t seed;
	bool keep_disks; /* --keep-disks: every restart finds its disk intact */
	/* The cores, their timers, the queue, the network, the random source,
	 * time and the trace (cluster.h); failures go to chk's record. */
	struct cluster cl;
	struct sim_node *nodes;
	struct sim_client *clients;
	uint32_t nclients;

	/* the plan */
	struct sim_fault faults[SIM_MAX_FAULTS];
	int nfaults;
	bool crash_minority;
	bool contention;
	bool sparse;     /* few clients, long thinks: the token parks (§3.4) */
	bool overrun;
	/* Renewal (RENEW): some clients hold for up to long_us, renewing
	 * every renew_us, from a stream of its own so that a run without
	 * renewal draws as it did before renewal existed. */
	bool renew;
	struct simnet_rng renew_rng;
	uint64_t long_us, renew_us;
	/* Try-locks (TRY) among those runs' requests: the last time a client
	 * was in the CS or waited, which a refusal must be explained by. */
	uint64_t last_busy_us;
	/* The last ELECTION sent: a vote that may still count keeps its
	 * carrier from vouching for a holder for an election timeout (§3.3). */
	uint64_t last_vote_us;
	uint64_t cs_cap_us, cs_fixed_us, cs_max_us;
	uint64_t t_heal, t_settle, t_end, bound_us;
	bool healed;
	bool regenerated; /* a token exists since the first regeneration */
	uint64_t heartbeats; /* broadcasts sent */
	/* After T_settle (T_heal plus the wait bound): the datagrams sent, by
	 * type (a broadcast once), and the grants and requests, for the
	 * settled ring's rate check (simcheck_settled). */
	uint64_t settled_sent[16];
	uint64_t settled_grants, settled_requests, settled_parks, settled_renews;
	enum ring_msg_type settled_recovery; /* the first recovery datagram's type, or 0 */
	uint64_t settled_floor_queries, settled_floor_replies, settled_floor_joins; /* §5.3's per-sender asks */
	uint64_t settled_want_forwards; /* WANTs sent on after the token (§3.5) */
	uint64_t settled_want_copies;   /* first summonses' broadcasts (one action each) */
	/* mixed: faults drawn while the run goes */
	double p_hb_loss;     /* heartbeats alone lost, until T_heal */
	double hb_loss_planned; /* from the F_NETWORK fault on */
	double p_leave_recv;  /* a leave fired right after a member accepts the token */
	uint32_t leaves_left; /* how many more of those */
	uint64_t late_us;     /* a copy this late breaks I2's precondition */
	uint64_t in_flight_us; /* the longest delay a copy sent before T_heal may have */
	struct sim_aim aim;

	/* the invariants (simcheck.c) */
	struct simcheck chk;
	struct simcheck_memb memb; /* membership and hand-over (simcheck_members.c) */
	/* the fenced resource: its own rule, on its own numbers */
	uint64_t res_high;
	bool res_any;

	struct sim_result res;
};

/* ---- failures and the trace ---- */

/* Every failure, the simulator's own and the invariants', goes to the one
 * record of simcheck.c: the first is the one to replay. */
static bool failed(const struct sim_run *run)
{
	return run->chk.failed;
}

static void fail(struct sim_run *run, const char *inv, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct sim_run *run, const char *inv, const char *fmt, ...)
{
	if (failed(run))
		return;
	char what[sizeof run->chk.what];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	run->chk.now = run->cl.now;
	simcheck_fail(&run->chk, inv, "%s", what);
}

#define trace(run, ...) cluster_trace(&(run)->cl, __VA_ARGS__)

/* The cluster's own failures (a queue out of memory, a core not made, an
 * event cap) join the checker's record too. */
static void cluster_failed_hook(void *arg, const char *inv, const char *what)
{
	struct sim_run *run = arg;
	fail(run, inv, "%s", what);
}

/* "n3" for the member at ring index 3, from its id. */
static const char *id_name(const struct sim_run *run, uint64_t id, char *buf, size_t cap)
{
	int i = id <= UINT16_MAX ? ring_layout_index(&run->cl.layout, (uint16_t)id) : -1;
	if (id == 0)
		snprintf(buf, cap, "all");
	else if (i < 0)
		snprintf(buf, cap, "id%" PRIu64 "?", id);
	else
		snprintf(buf, cap, "n%d", i);
	return buf;
}

static uint32_t client_index(uint64_t handle)
{
	return (uint32_t)(handle - SIM_HANDLE_BASE - 1);
}

static uint64_t client_handle(uint32_t c)
{
	return SIM_HANDLE_BASE + c + 1;
}

static void set_text(const struct ring_set *s, size_t n, char *buf, size_t cap)
{
	if (n > 16) {
		snprintf(buf, cap, "%zu/%zu", ring_set_count(s), n);
		return;
	}
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && off + 4 < cap; i++)
		if (ring_set_has(s, i))
			off += (size_t)snprintf(buf + off, cap - off, "%s%zu", off ? "," : "{", i);
	snprintf(buf + off, cap - off, off ? "}" : "{}");
}

/* One datagram as "token epoch=.. seq=..", for the trace. */
static void msg_text(const struct sim_run *run, const uint8_t *buf, size_t len, char *out,
		     size_t cap)
{
	struct ring_msg m;
	char set[80];
	int rc = ring_wire_decode(buf, len, &m);
	if (rc < 0) {
		snprintf(out, cap, "%zu bytes, undecodable (%s)", len, ring_strerror(rc));
		return;
	}
	switch (m.type) {
	case RING_MSG_TOKEN: {
		char want[sizeof set], knows[sizeof set];
		set_text(&m.u.token.alive, run->cl.n, set, sizeof set);
		set_text(&m.u.token.want, run->cl.n, want, sizeof want);
		set_text(&m.u.token.knows, run->cl.n, knows, sizeof knows);
		snprintf(out, cap, "token epoch=%" PRIu32 " seq=%" PRIu32 " counter=%" PRIu32
			 " quiet_us=%" PRIu32 " alive=%s want=%s knows=%s walk_us=%" PRIu32
			 " walk_left=%" PRIu32, m.u.token.epoch, m.u.token.seq, m.u.token.counter,
			 m.u.token.quiet_us, set, want, knows, m.u.token.walk_us,
			 m.u.token.walk_left);
		break;
	}
	case RING_MSG_TOKEN_ACK:
		snprintf(out, cap, "token_ack epoch=%" PRIu32 " seq=%" PRIu32
			 " known_epoch=%" PRIu32 "%s", m.u.token_ack.epoch, m.u.token_ack.seq,
			 m.u.token_ack.known_epoch,
			 m.u.token_ack.flags & RING_ACK_STALE ? " STALE" : "");
		break;
	case RING_MSG_HEARTBEAT: {
		char want[sizeof set];
		set_text(&m.u.heartbeat.alive, run->cl.n, set, sizeof set);
		set_text(&m.u.heartbeat.want, run->cl.n, want, sizeof want);
		snprintf(out, cap, "heartbeat epoch=%" PRIu32 " seq=%" PRIu32 " counter=%" PRIu32
			 " beat=%" PRIu32 " alive=%s want=%s%s%s%s", m.u.heartbeat.epoch,
			 m.u.heartbeat.seq, m.u.heartbeat.counter, m.u.heartbeat.beat, set, want,
			 m.u.heartbeat.flags & RING_HB_PARKED ? " parked" : "",
			 m.u.heartbeat.flags & RING_HB_BUSY ? " busy" : "",
			 m.u.heartbeat.flags & RING_HB_GRANTED ? " granted" : "");
		break;
	}
	case RING_MSG_WANT: {
		char who[16];
		snprintf(out, cap, "want wanter=%s epoch=%" PRIu32 " seq=%" PRIu32 " hops=%u",
			 id_name(run, m.u.want.wanter, who, sizeof who), m.u.want.epoch,
			 m.u.want.seq, m.u.want.hops);
		break;
	}
	case RING_MSG_HEARTBEAT_ACK:
		snprintf(out, cap, "heartbeat_ack epoch=%" PRIu32 " seq=%" PRIu32 " beat=%" PRIu32,
			 m.u.heartbeat_ack.epoch, m.u.heartbeat_ack.seq, m.u.heartbeat_ack.beat);
		break;
	case RING_MSG_ELECTION: {
		char who[16];
		set_text(&m.u.election.participants, run->cl.n, set, sizeof set);
		snprintf(out, cap, "election initiator=%s round=%" PRIu32 " hops=%u max_epoch=%"
			 PRIu32 " participants=%s",
			 id_name(run, m.u.election.initiator, who, sizeof who), m.u.election.round,
			 m.u.election.hops, m.u.election.max_epoch, set);
		break;
	}
	case RING_MSG_ELECTION_ACK: {
		char who[16];
		snprintf(out, cap, "election_ack initiator=%s round=%" PRIu32 " hops=%u",
			 id_name(run, m.u.election_ack.initiator, who, sizeof who),
			 m.u.election_ack.round, m.u.election_ack.hops);
		break;
	}
	case RING_MSG_JOIN:
		snprintf(out, cap, "join epoch=%" PRIu32, m.u.join.epoch);
		break;
	case RING_MSG_LEAVE:
		snprintf(out, cap, "leave epoch=%" PRIu32, m.u.leave.epoch);
		break;
	default:
		/* Types this file does not spell out, new ones included. */
		snprintf(out, cap, "%s (type %d, %zu bytes)", ring_msg_name(m.type), (int)m.type,
			 len);
		break;
	}
}

/* ---- the event queue (cluster.c); running out of memory fails the run ---- */

static void nomem_check(struct sim_run *run)
{
	if (run->cl.q.nomem)
		fail(run, "sim", "%s", run->cl.q.nomem);
}

static void heap_push(struct sim_run *run, uint64_t t, uint32_t item)
{
	cluster_push(&run->cl, t, item);
}

static void item_free(struct sim_run *run, uint32_t i)
{
	cluster_item_free(&run->cl, i);
}

static void schedule(struct sim_run *run, uint64_t t, enum sim_kind kind, uint32_t node,
		     uint32_t arg, uint32_t gen)
{
	cluster_schedule(&run->cl, t, (int)kind, node, arg, gen);
}

/* ---- the network (simnet.c) ---- */

static bool link_cut(const struct sim_run *run, uint32_t a, uint32_t b)
{
	return simnet_link_cut(&run->cl.net, a, b);
}

/* I2's precondition (PROTOCOL.md §8) ends here, for the reason given. It holds
 * while the run has had only crash-stop faults (torn steps included: a crash
 * is a crash wherever it cuts) and graceful leaves, and the network has lost
 * nothing and delivered every copy within late_us (plan_network says why that
 * bound). Duplicates and reordering within it keep it: a duplicate hop is
 * refused by its seq (§3.2). Any loss ends it, not only a loss the retries
 * could not cover: which loss a retransmission covers depends on the datagram
 * and the moment, and a precondition drawn too wide excuses nothing, it only
 * checks I2 for less of the run. A pause, a partition, a directed cut, a lost
 * or rolled-back disk end it where they happen. */
static void i2_off(struct sim_run *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void i2_off(struct sim_run *run, const char *fmt, ...)
{
	if (!run->chk.i2)
		return;
	char why[120];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	run->chk.now = run->cl.now;
	simcheck_i2_off(&run->chk, why);
	trace(run, "    (I2 no longer checked: %s)", why);
}

static void net_send(struct sim_run *run, uint32_t src, uint32_t dst, const uint8_t *buf,
		     uint16_t len)
{
	/* Heartbeats alone lost: the token and the acks pass, so only the
	 * members' idea of who is alive can go wrong (§5.1, §6.2). */
	if (run->p_hb_loss > 0 && ring_wire_peek_type(buf, len) == RING_MSG_HEARTBEAT &&
	    simnet_rng_chance(&run->cl.rng, run->p_hb_loss)) {
		trace(run, "    .. n%u->n%u heartbeat lost", src, dst);
		i2_off(run, "a heartbeat n%u->n%u was lost", src, dst);
		return;
	}
	switch (simnet_send(&run->cl.net, &run->cl.rng, &run->cl.q, run->cl.now, EV_DELIVER, src, dst, buf,
			    len)) {
	case SIMNET_CUT:
		trace(run, "    .. n%u->n%u cut by the partition", src, dst);
		i2_off(run, "n%u->n%u cut", src, dst);
		break;
	case SIMNET_LOST:
		trace(run, "    .. n%u->n%u lost", src, dst);
		i2_off(run, "a datagram n%u->n%u was lost", src, dst);
		break;
	case SIMNET_DUPLICATED:
		trace(run, "    .. n%u->n%u duplicated", src, dst);
		break;
	case SIMNET_SENT:
		break;
	}
	if (run->cl.net.last_delay_us >= run->late_us) {
		trace(run, "    .. n%u->n%u delayed %.3f ms", src, dst,
		      (double)run->cl.net.last_delay_us / 1e3);
		i2_off(run, "a datagram n%u->n%u was delayed %.3f ms", src, dst,
		       (double)run->cl.net.last_delay_us / 1e3);
	}
	nomem_check(run);
}

/* ---- the fenced resource and the clients ---- */

/* The resource's own rule, on its own numbers: refuse a fence older than the
 * newest it accepted. simcheck_write judges the same write from the order of
 * the grants, apart from these numbers, so a wrong rule here shows there. */
static void resource_write(struct sim_run *run, uint32_t c, const char *when)
{
	struct sim_client *cl = &run->clients[c];
	uint64_t fence = cl->fence;
	bool ok = !run->res_any || fence >= run->res_high;
	if (ok) {
		run->res_high = fence;
		run->res_any = true;
		trace(run, "c%u@n%u write at %s: fence %" PRIu64 ":%" PRIu64 " accepted", c,
		      cl->node, when, fence >> 32, fence & 0xffffffffu);
	} else {
		run->res.stale++;
		trace(run, "c%u@n%u write at %s: fence %" PRIu64 ":%" PRIu64
		      " refused as stale (newest %" PRIu64 ":%" PRIu64 ")", c, cl->node, when,
		      fence >> 32, fence & 0xffffffffu, run->res_high >> 32,
		      run->res_high & 0xffffffffu);
	}
	run->chk.now = run->cl.now;
	simcheck_write(&run->chk, cl->gid, ok);
}

/* Sparse runs leave the token unwanted for whole rotations, so that it parks
 * and is summoned (§3.4) all the time; some of their clients ask again at
 * once, which a parked token serves without moving. */
static uint64_t think_us(struct sim_run *run)
{
	if (run->contention)
		return 0;
	if (run->sparse) { /* half the thinks outlast a lap (loss_timeout_ms) */
		const struct ring_layout *l = &run->cl.layout;
		if (simnet_rng_chance(&run->cl.rng, 0.3))
			return 0;
		return simnet_rng_chance(&run->cl.rng, 0.5)
			       ? simnet_rng_range(&run->cl.rng, 0, 3 * l->heartbeat_ms * MS)
			       : simnet_rng_range(&run->cl.rng, 0, 3 * l->loss_timeout_ms * MS);
	}
	return simnet_rng_range(&run->cl.rng, 0, 50 * MS);
}

static uint64_t cs_us(struct sim_run *run)
{
	if (run->contention)
		return run->cs_fixed_us;
	if (run->overrun && simnet_rng_chance(&run->cl.rng, 0.05))
		return run->cl.layout.lease_ms * MS + simnet_rng_range(&run->cl.rng, 1 * MS,
							     run->cl.layout.lease_ms * MS);
	return simnet_rng_range(&run->cl.rng, 1 * MS, run->cs_cap_us);
}

static void client_think(struct sim_run *run, uint32_t c)
{
	struct sim_client *cl = &run->clients[c];
	if (cl->state == CL_CS || cl->state == CL_WAIT)
		run->last_busy_us = run->cl.now;
	cl->state = CL_THINK;
	cl->gen++;
	schedule(run, run->cl.now + think_us(run), EV_CLIENT, cl->node, c, cl->gen);
}

static void node_step(struct sim_run *run, uint32_t i, enum ring_event_type type,
		      const struct simnet_item *it, uint64_t client);
static void node_crash(struct sim_run *run, uint32_t i);

static void client_acquire(struct sim_run *run, uint32_t c)
{
	struct sim_client *cl = &run->clients[c];
	size_t r = simcheck_request(&run->chk, c, cl->node);
	if (r == SIZE_MAX)
		return;
	cl->state = CL_WAIT;
	cl->req = r;
	cl->gen++;
	if (run->cl.now >= run->t_settle)
		run->settled_requests++;
	trace(run, "c%u@n%u acquire", c, cl->node);
	/* A few clients give up waiting (a cancel is a RELEASE while waiting). */
	if (!run->contention && simnet_rng_chance(&run->cl.rng, 0.02))
		schedule(run, run->cl.now + simnet_rng_range(&run->cl.rng, 1 * MS, 2 * run->cl.layout.lease_ms * MS),
			 EV_CLIENT, cl->node, c, cl->gen);
	if (run->healed)
		schedule(run, run->cl.now + run->bound_us + 1, EV_CHECK, cl->node, (uint32_t)r, 0);
	bool is_try = run->renew && simnet_rng_chance(&run->renew_rng, 0.15);
	run->res.tries += is_try;
	node_step(run, cl->node, is_try ? RING_EVENT_TRY : RING_EVENT_ACQUIRE, NULL,
		  client_handle(c));
}

/* A TRY refused as taken: some other client must hold or wait now, or have
 * done so recently enough for a heartbeat that said so to be on its way. */
static void check_try_refusal(struct sim_run *run, uint32_t i, uint32_t c)
{
	run->res.try_refused++;
	for (uint32_t k = 0; k < run->nclients; k++)
		if (k != c && (run->clients[k].state == CL_CS || run->clients[k].state == CL_WAIT))
			return;
	const struct ring_layout *L = &run->cl.layout;
	uint64_t window = 2 * L->heartbeat_ms * MS + run->cl.net.slow_delay_us +
			  run->cl.net.max_delay_us + run->in_flight_us;
	/* A member that just woke from a pause too short for it to detect
	 * reads the heartbeats its pause held, as old as the pause; one it
	 * detected ignores them (its quarantine, §5.5). */
	const struct sim_node *nd = &run->nodes[i];
	if (nd->resumed_at && nd->resumed_at + window >= run->cl.now &&
	    nd->pause_seen_at < nd->resumed_at)
		window += nd->resumed_at - nd->paused_at;
	if (run->last_busy_us + window >= run->cl.now)
		return;
	fail(run, "try", "n%u refused c%u's TRY as taken, but no other client has held or waited "
	     "since %.6f s", i, c, (double)run->last_busy_us / 1e6);
}

static void client_fire(struct sim_run *run, uint32_t c)
{
	struct sim_client *cl = &run->clients[c];
	switch (cl->state) {
	case CL_DOWN:
		break;
	case CL_THINK:
		client_acquire(run, c);
		break;
	case CL_WAIT:
		trace(run, "c%u@n%u gives up waiting: release", c, cl->node);
		simcheck_request_end(&run->chk, cl->req, SIMCHECK_CANCELLED);
		client_think(run, c);
		node_step(run, cl->node, RING_EVENT_RELEASE, NULL, client_handle(c));
		break;
	case CL_CS:
		if (cl->cs_end && run->cl.now < cl->cs_end) {
			trace(run, "c%u@n%u renews", c, cl->node);
			uint64_t next = run->cl.now + run->renew_us;
			schedule(run, next < cl->cs_end ? next : cl->cs_end, EV_CLIENT, cl->node, c,
				 cl->gen);
			node_step(run, cl->node, RING_EVENT_RENEW, NULL, client_handle(c));
			break;
		}
		resource_write(run, c, "end");
		simcheck_cs_end(&run->chk, cl->gid);
		trace(run, "c%u@n%u leaves the CS: release", c, cl->node);
		client_think(run, c);
		node_step(run, cl->node, RING_EVENT_RELEASE, NULL, client_handle(c));
		break;
	}
}

/* ---- the checks on a step's actions ---- */

/* A healthy ring, once it has a token, never suspects it lost: heartbeats
 * and the token itself must reach every member in time (PROTOCOL.md §5.1). */
static void check_suspicion(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	if (a->u.log.event == RING_LOG_TOKEN_REGEN)
		run->regenerated = true;
	if (run->cls == SIM_CLASS_HEALTHY && run->regenerated &&
	    a->u.log.event == RING_LOG_LOSS_SUSPECT)
		fail(run, "liveness", "n%u suspected loss on a healthy ring after %" PRIu64
		     " ms of silence", i, a->u.log.field[0]);
}

static void on_grant(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	uint64_t h = a->u.grant.client;
	uint32_t c = client_index(h);
	trace(run, "    -> grant c%u fence %" PRIu64 ":%" PRIu64 " epoch %" PRIu32, c,
	      a->u.grant.fence >> 32, a->u.grant.fence & 0xffffffffu, a->u.grant.epoch);
	if (c >= run->nclients || run->clients[c].node != i) {
		fail(run, "client", "n%u granted handle %" PRIx64 ", not one of its clients", i, h);
		return;
	}
	struct sim_client *cl = &run->clients[c];
	if (cl->state != CL_WAIT) {
		fail(run, "client", "n%u granted c%u which is not waiting", i, c);
		return;
	}
	simcheck_pause_grant(&run->chk, i, a->u.grant.epoch);
	simcheck_memb_grant(&run->chk, &run->memb, i);
	size_t gid = simcheck_grant(&run->chk, i, c, a->u.grant.fence, a->u.grant.epoch,
				    run->cl.m[i].status.epoch);
	if (gid == SIZE_MAX)
		return;
	uint64_t waiting = 0;
	for (uint32_t j = 0; j < run->cl.n && j < 64; j++)
		if (ring_set_has(&run->cl.m[i].status.want, j))
			waiting |= 1ull << j;
	simcheck_fair_grant(&run->chk, i, waiting);
	simcheck_request_end(&run->chk, cl->req, SIMCHECK_GRANTED);
	if (run->healed) {
		uint64_t t_req = run->chk.req[cl->req].t_req;
		uint64_t from = t_req > run->t_heal ? t_req : run->t_heal;
		if (run->cl.now - from > run->res.worst_us)
			run->res.worst_us = run->cl.now - from;
	}
	run->res.grants++;
	if (run->cl.now >= run->t_settle)
		run->settled_grants++;
	cl->state = CL_CS;
	cl->fence = a->u.grant.fence;
	cl->gid = gid;
	cl->gen++;
	resource_write(run, c, "start");
	cl->granted_at = run->cl.now;
	cl->renew_cap = run->cl.now + run->cl.layout.lease_ms * MS;
	cl->cs_end = 0;
	if (run->renew && simnet_rng_chance(&run->renew_rng, 0.15)) {
		cl->cs_end = run->cl.now + simnet_rng_range(&run->renew_rng,
							     run->cl.layout.lease_ms * MS, run->long_us);
		run->res.long_holds++;
		schedule(run, run->cl.now + run->renew_us, EV_CLIENT, i, c, cl->gen);
		return;
	}
	schedule(run, run->cl.now + cs_us(run), EV_CLIENT, i, c, cl->gen);
}

/* The latest time at which a majority of holder I's alive set (and a
 * quorum) can have heard it: the acks that prove contact answer
 * heartbeats, and none was sent after it was received. Now, when I needs
 * nobody's ack. */
static uint64_t contact_bound(const struct sim_run *run, uint32_t i)
{
	const struct ring_status *st = &run->cl.m[i].status;
	size_t need = ring_set_count(&st->alive) / 2 + 1;
	size_t quorum = ring_layout_quorum(&run->cl.layout);
	if (need < quorum)
		need = quorum;
	uint64_t t[RING_MAX_MEMBERS];
	size_t k = 0;
	for (uint32_t j = 0; j < run->cl.n; j++)
		if (j != i && ring_set_has(&st->alive, j))
			t[k++] = run->nodes[j].hb_from[i];
	if (need <= 1)
		return run->cl.now;
	if (k < need - 1)
		return 0;
	/* the (need-1)-th latest: sort descending, small n */
	for (size_t a = 0; a < k; a++)
		for (size_t b = a + 1; b < k; b++)
			if (t[b] > t[a]) {
				uint64_t x = t[a];
				t[a] = t[b];
				t[b] = x;
			}
	return t[need - 2];
}

/* When a renewal now may end the grant at the latest: a lease from now,
 * never past max_hold_ms from the grant, nor a lease past the last time a
 * majority can have heard the holder (a later deadline it had stays). */
static uint64_t renewed_until(struct sim_run *run, uint32_t i, struct sim_client *cl)
{
	const struct ring_layout *L = &run->cl.layout;
	uint64_t contact = contact_bound(run, i);
	if (contact < cl->granted_at)
		contact = cl->granted_at;
	uint64_t end = contact + L->lease_ms * MS;
	if (end > run->cl.now + L->lease_ms * MS)
		end = run->cl.now + L->lease_ms * MS;
	if (L->max_hold_ms && cl->granted_at + L->max_hold_ms * MS < end)
		end = cl->granted_at + L->max_hold_ms * MS;
	if (end > cl->renew_cap)
		cl->renew_cap = end;
	return cl->renew_cap;
}

/* A RENEW answered: only to a client in the CS with that fence, and the
 * lease it gives ends no later than renewed_until allows. */
static void on_renewed(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	uint32_t c = client_index(a->u.renewed.client);
	trace(run, "    -> renewed c%u fence %" PRIu64 ":%" PRIu64 " until %.3f s", c,
	      a->u.renewed.fence >> 32, a->u.renewed.fence & 0xffffffffu,
	      (double)a->u.renewed.deadline_us / 1e6);
	if (c >= run->nclients || run->clients[c].node != i) {
		fail(run, "client", "n%u renewed handle %" PRIx64 ", not one of its clients", i,
		     a->u.renewed.client);
		return;
	}
	struct sim_client *cl = &run->clients[c];
	const struct ring_layout *L = &run->cl.layout;
	if (cl->state != CL_CS || cl->fence != a->u.renewed.fence)
		fail(run, "client", "n%u renewed c%u, which does not hold fence %" PRIu64, i, c,
		     a->u.renewed.fence);
	else if (a->u.renewed.deadline_us <= run->cl.now)
		fail(run, "client", "n%u renewed c%u until a time already past", i, c);
	else if (L->max_hold_ms && a->u.renewed.deadline_us > cl->granted_at + L->max_hold_ms * MS)
		fail(run, "client", "n%u renewed c%u past max_hold_ms (%" PRIu32 " ms)", i, c,
		     L->max_hold_ms);
	else if (a->u.renewed.deadline_us > renewed_until(run, i, cl))
		fail(run, "client", "n%u renewed c%u until %.6f s, past %.6f s (a lease from now, "
		     "from when a majority last heard it%s)", i, c,
		     (double)a->u.renewed.deadline_us / 1e6, (double)cl->renew_cap / 1e6,
		     L->max_hold_ms ? ", within max_hold_ms" : "");
	run->res.renews++;
	if (run->cl.now >= run->t_settle)
		run->settled_renews++;
}

static void on_revoke(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	uint32_t c = client_index(a->u.revoke.client);
	if (c >= run->nclients || run->clients[c].node != i) {
		fail(run, "client", "n%u revoked handle %" PRIx64 ", not one of its clients", i,
		     a->u.revoke.client);
		return;
	}
	struct sim_client *cl = &run->clients[c];
	bool ends = cl->state == CL_CS && cl->fence == a->u.revoke.fence;
	trace(run, "    -> revoke c%u fence %" PRIu64 ":%" PRIu64 "%s", c,
	      a->u.revoke.fence >> 32, a->u.revoke.fence & 0xffffffffu,
	      ends ? ": its CS ends now" : " (not in the CS with it: ignored)");
	if (!ends)
		return;
	/* On a healthy ring a majority always hears the holder: a client that
	 * renews in time keeps its grant until it lets go (§3.3), unless
	 * the members' election votes were out within its lease (they do
	 * not vouch for a holder then: an election timeout after a vote). */
	const struct ring_layout *L = &run->cl.layout;
	uint64_t vote_quiet = (L->loss_timeout_ms + L->n * (L->retries + 1) * L->ack_timeout_ms +
			       L->lease_ms) * MS;
	if (run->cls == SIM_CLASS_HEALTHY && cl->cs_end && run->cl.now < cl->cs_end &&
	    run->cl.now > run->last_vote_us + vote_quiet &&
	    (!L->max_hold_ms || run->cl.now < cl->granted_at + L->max_hold_ms * MS))
		fail(run, "liveness", "n%u revoked c%u's renewed grant on a healthy ring", i, c);
	simcheck_cs_end(&run->chk, cl->gid);
	client_think(run, c);
}

static void on_deny(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	uint32_t c = client_index(a->u.deny.client);
	trace(run, "    -> deny c%u: %s", c, ring_strerror(a->u.deny.reason));
	if (c >= run->nclients || run->clients[c].node != i) {
		fail(run, "client", "n%u denied handle %" PRIx64 ", not one of its clients", i,
		     a->u.deny.client);
		return;
	}
	struct sim_client *cl = &run->clients[c];
	if (cl->state == CL_CS && a->u.deny.reason == -RING_ENOTHOLDING)
		fail(run, "client", "n%u refused c%u's RENEW while it holds fence %" PRIu64, i, c,
		     cl->fence);
	if (cl->state != CL_WAIT)
		return;
	if (a->u.deny.reason == -RING_ECONFLICT)
		check_try_refusal(run, i, c);
	simcheck_request_end(&run->chk, cl->req, SIMCHECK_DENIED);
	run->res.denies++;
	client_think(run, c);
}

static void trace_log(const struct sim_run *run, const struct ring_action *a)
{
	const struct ring_log_info *info = ring_log_info(a->u.log.event);
	char line[256];
	size_t off = (size_t)snprintf(line, sizeof line, "    -> log %s", info->name);
	for (int k = 0; k < 3 && info->field[k] && off < sizeof line; k++) {
		const char *f = info->field[k];
		uint64_t v = a->u.log.field[k];
		char who[16];
		if (!strcmp(f, "fence"))
			off += (size_t)snprintf(line + off, sizeof line - off, " fence=%" PRIu64
						":%" PRIu64, v >> 32, v & 0xffffffffu);
		else if (!strcmp(f, "client"))
			off += (size_t)snprintf(line + off, sizeof line - off, " client=c%u",
						client_index(v));
		else if (!strcmp(f, "from") || !strcmp(f, "to") || !strcmp(f, "dead") ||
			 !strcmp(f, "id"))
			off += (size_t)snprintf(line + off, sizeof line - off, " %s=%s", f,
						id_name(run, v, who, sizeof who));
		else
			off += (size_t)snprintf(line + off, sizeof line - off, " %s=%" PRIu64, f, v);
	}
	trace(run, "%s", line);
}

/* The datagrams a ring sends only while it recovers from a fault: none
 * of them has a reason to travel once it has settled. */
static bool is_recovery(enum ring_msg_type type)
{
	switch (type) {
	case RING_MSG_ELECTION:
	case RING_MSG_ELECTION_ACK:
	case RING_MSG_JOIN:
	case RING_MSG_LEAVE:
	case RING_MSG_EPOCH_QUERY:
	case RING_MSG_EPOCH_REPLY:
		return true;
	case RING_MSG_TOKEN:
	case RING_MSG_TOKEN_ACK:
	case RING_MSG_HEARTBEAT:
	case RING_MSG_STATUS_REQ:
	case RING_MSG_STATUS_RESP:
	case RING_MSG_ADVICE_REQ:
	case RING_MSG_ADVICE_RESP:
	case RING_MSG_HOLD_REQ:
	case RING_MSG_HOLD_RESP:
	case RING_MSG_WANT:
	case RING_MSG_HEARTBEAT_ACK: /* a renewed hold's, healthy or not */
		return false;
	}
	return false;
}

/* ---- faults aimed at what a member just sent (struct sim_aim) ---- */

static uint32_t nodes_down(const struct sim_run *run);
static void node_pause(struct sim_run *run, uint32_t i, uint64_t len, const char *why);

/* One more copy of BUF from SRC to DST, DELAY from now: a duplicate, or a
 * copy late enough to be stale when it lands. */
static void aim_copy(struct sim_run *run, uint32_t src, uint32_t dst, const uint8_t *buf,
		     uint16_t len, uint64_t delay)
{
	if (link_cut(run, src, dst))
		return;
	uint32_t k = simnet_item_new(&run->cl.q, EV_DELIVER);
	if (k == UINT32_MAX) {
		nomem_check(run);
		return;
	}
	struct simnet_item *it = &run->cl.q.items[k];
	it->node = dst;
	it->src = src;
	it->len = len;
	memcpy(it->buf, buf, len);
	if (!simnet_push(&run->cl.q, run->cl.now + delay, k))
		nomem_check(run);
	if (delay >= run->late_us)
		i2_off(run, "an aimed copy n%u->n%u %.3f ms late", src, dst, (double)delay / 1e3);
}

/* Which aimed faults a class may draw: those of its own kind, so that each
 * class keeps what it promises (healthy: none; the network's classes: copies;
 * crash and disk: crashes; pause: pauses; mixed: all). */
static uint32_t aim_kinds_of(enum sim_class cls)
{
	switch (cls) {
	case SIM_CLASS_HEALTHY:
		return 0;
	case SIM_CLASS_LOSSY:
	case SIM_CLASS_PARTITION:
		return 1u << AIM_DUP | 1u << AIM_LATE;
	case SIM_CLASS_CRASH:
		return 1u << AIM_CRASH | 1u << AIM_LEAVE | 1u << AIM_DUP | 1u << AIM_LEAVE_DST;
	case SIM_CLASS_PAUSE:
		return 1u << AIM_PAUSE | 1u << AIM_DUP | 1u << AIM_HOLD | 1u << AIM_LEAVE_STALL;
	case SIM_CLASS_DISK:
		return 1u << AIM_CRASH | 1u << AIM_DUP;
	case SIM_CLASS_MIXED:
		return (1u << AIM_COUNT_) - 1;
	case SIM_CLASS_COUNT_:
		break;
	}
	return 0;
}

/* The swarm: half the runs of a class aim, each at a random subset of its
 * fault kinds and of the message types, with a random rate and budget. */
static void plan_aims(struct sim_run *run)
{
	struct sim_aim *a = &run->aim;
	uint32_t allowed = aim_kinds_of(run->cls);
	if (!allowed)
		return;
	simnet_rng_seed(&a->rng, run->seed, "aim");
	if (!simnet_rng_chance(&a->rng, 0.5))
		return;
	while (!a->kinds)
		for (int k = 0; k < AIM_COUNT_; k++)
			if ((allowed >> k & 1) && simnet_rng_chance(&a->rng, 0.5))
				a->kinds |= 1u << k;
	while (!a->types)
		for (int t = RING_MSG_TOKEN; t <= RING_MSG_HEARTBEAT_ACK; t++)
			if (t != RING_MSG_STATUS_REQ && t != RING_MSG_STATUS_RESP &&
			    simnet_rng_chance(&a->rng, 0.4))
				a->types |= 1u << t;
	run->res.swarm = 1;
	a->p = (double)simnet_rng_range(&a->rng, 5, 50) / 100;
	a->left = (uint32_t)simnet_rng_range(&a->rng, 1, 4);
}

/* The receiver of a token just sent stalls with it in its socket, long
 * enough for the sender to skip it (a new epoch, heartbeat at once) and too
 * short for its pause detector (§5.5): it wakes to an old token with the
 * newer heartbeat behind it, the batch tokens-last is for. */
static bool aim_hold(struct sim_run *run, enum ring_msg_type type, int dst, uint64_t room)
{
	const struct ring_layout *L = &run->cl.layout;
	if (type != RING_MSG_TOKEN || dst < 0 || run->nodes[dst].life != NODE_UP ||
	    run->nodes[dst].paused)
		return false;
	uint64_t skip = ((uint64_t)L->retries + 1) * L->ack_timeout_ms * MS + 1 * MS;
	uint64_t thr = L->loss_timeout_ms * MS / 2;
	if (skip + 2 * MS >= thr || room < thr)
		return false;
	node_pause(run, (uint32_t)dst, simnet_rng_range(&run->aim.rng, skip, thr - 1 * MS),
		   "aimed: a token in flight to it");
	return true;
}

/* Member I is about to send the ack BUF of a pass to DST: maybe it is slow,
 * and I dies right after and is back while DST still resends the pass. Its
 * new life refuses the resend by name, and the old life's ack lands about
 * when the refusal's one ack timeout of waiting ends (§3.2: the past life
 * may have taken the pass, its ack "merely slow"). True: the ack is taken
 * over (its one copy queued here). */
static bool aim_slow_ack(struct sim_run *run, uint32_t i, int dst, const uint8_t *buf,
			 uint16_t len)
{
	struct sim_aim *a = &run->aim;
	struct ring_msg m;
	if (!a->left || run->healed || dst < 0 || !(a->kinds >> AIM_SLOW_ACK & 1) ||
	    !(a->types >> RING_MSG_TOKEN_ACK & 1) || ring_wire_decode(buf, len, &m) < 0 ||
	    m.type != RING_MSG_TOKEN_ACK || (m.u.token_ack.flags & RING_ACK_STALE) ||
	    !simnet_rng_chance(&a->rng, a->p))
		return false;
	uint64_t ack = run->cl.layout.ack_timeout_ms * MS;
	uint64_t budget = run->cl.layout.retries * ack > 2 * MS ? run->cl.layout.retries * ack : 2 * MS;
	uint64_t back = simnet_rng_range(&a->rng, 1 * MS, budget);
	uint64_t late = back + simnet_rng_range(&a->rng, 0, 3 * ack);
	if (run->cl.now + late + 25 * MS >= run->t_heal || (nodes_down(run) + 1) * 2 >= run->cl.n)
		return false;
	a->left--;
	run->res.aimed++;
	trace(run, "    (aimed: slow-ack n%u, its ack %.3f ms late, back in %.3f ms)", i,
	      (double)late / 1e3, (double)back / 1e3);
	aim_copy(run, i, (uint32_t)dst, buf, len, late);
	i2_off(run, "n%u's ack held back %.3f ms (aimed)", i, (double)late / 1e3);
	uint32_t gen = run->nodes[i].life_gen;
	schedule(run, run->cl.now + 1, EV_AIMED, i, AIM_SLOW_ACK, gen);
	schedule(run, run->cl.now + back, EV_RESTART, i, DISK_KEPT, gen + 1);
	return true;
}

/* Member I just sent BUF (to DST, or to all when DST < 0): maybe aim at it. */
static void aim_at(struct sim_run *run, uint32_t i, int dst, const uint8_t *buf, uint16_t len,
		   enum ring_msg_type type)
{
	struct sim_aim *a = &run->aim;
	if (!a->left || run->healed || !(a->types >> type & 1) || !simnet_rng_chance(&a->rng, a->p))
		return;
	int pick = (int)simnet_rng_below(&a->rng, (uint64_t)__builtin_popcount(a->kinds));
	enum aim_kind kind = AIM_CRASH;
	for (int k = 0; k < AIM_COUNT_; k++)
		if ((a->kinds >> k & 1) && pick-- == 0)
			kind = (enum aim_kind)k;
	uint64_t room = run->t_heal > run->cl.now + 2 * MS ? run->t_heal - run->cl.now - 2 * MS : 0;
	uint64_t loss = run->cl.layout.loss_timeout_ms * MS;
	uint32_t j0 = dst < 0 ? 0 : (uint32_t)dst, j1 = dst < 0 ? run->cl.n : (uint32_t)dst + 1;
	switch (kind) {
	case AIM_DUP:
		for (uint32_t j = j0; j < j1; j++)
			if (j != i)
				aim_copy(run, i, j, buf, len,
					 simnet_rng_range(&a->rng, SIM_MIN_DELAY_US, 2 * MS));
		break;
	case AIM_LATE: {
		uint64_t hi = 3 * loss < room ? 3 * loss : room;
		if (hi <= run->cl.layout.ack_timeout_ms * MS)
			return;
		uint64_t d = simnet_rng_range(&a->rng, run->cl.layout.ack_timeout_ms * MS, hi);
		for (uint32_t j = j0; j < j1; j++)
			if (j != i)
				aim_copy(run, i, j, buf, len, d);
		break;
	}
	case AIM_HOLD:
		if (!aim_hold(run, type, dst, room))
			return;
		break;
	case AIM_SLOW_ACK:
		return; /* taken over before it was sent (aim_slow_ack) */
	case AIM_CRASH:
	case AIM_LEAVE:
	case AIM_PAUSE:
	case AIM_LEAVE_STALL:
		/* Right after this step, or a little later; back before T_heal,
		 * with a majority up throughout. */
		if (room < 25 * MS || (nodes_down(run) + 1) * 2 >= run->cl.n)
			return;
		schedule(run, run->cl.now + simnet_rng_range(&a->rng, 1, 1 * MS), EV_AIMED, i,
			 (uint32_t)kind, run->nodes[i].life_gen);
		break;
	case AIM_LEAVE_DST:
		/* The receiver is told to leave while the datagram travels, or
		 * right after it lands: a pass to a leaver, its LEAVE crossing
		 * the pass or naming it (§5.4). */
		if (dst < 0 || room < 25 * MS || (nodes_down(run) + 1) * 2 >= run->cl.n ||
		    run->nodes[dst].life != NODE_UP)
			return;
		schedule(run, run->cl.now + simnet_rng_range(&a->rng, 1, 2 * MS), EV_AIMED,
			 (uint32_t)dst, AIM_LEAVE, run->nodes[dst].life_gen);
		break;
	case AIM_COUNT_:
		return;
	}
	a->left--;
	run->res.aimed++;
	trace(run, "    (aimed: %s n%u, after its %s)", aim_names[kind], i, ring_msg_name(type));
}

/* The leave deadline of §5.4: a leaver that cannot hand the token on goes anyway. */
static uint64_t leave_deadline_us(const struct sim_run *run)
{
	const struct ring_layout *l = &run->cl.layout;
	return (uint64_t)run->cl.n * (l->retries + 1) * l->ack_timeout_ms * MS + 1000 * MS;
}

/* Member I is told to leave and its process stalls at once, for half its
 * leave deadline to twice it (as room allows): it wakes before, or after,
 * the moment it must give up its handover. Restarted after it wakes. */
static void aim_leave_stall(struct sim_run *run, uint32_t i, uint64_t room)
{
	struct sim_aim *a = &run->aim;
	uint64_t d = leave_deadline_us(run);
	uint64_t hi = 2 * d < room - 15 * MS ? 2 * d : room - 15 * MS;
	if (hi <= d / 2)
		return;
	uint64_t len = simnet_rng_range(&a->rng, d / 2, hi);
	trace(run, "FAULT aimed leave n%u (SIGTERM), stalled %.3f ms (deadline %.3f ms)", i,
	      (double)len / 1e3, (double)d / 1e3);
	node_step(run, i, RING_EVENT_LEAVE, NULL, 0);
	uint32_t gen = run->nodes[i].life_gen;
	if (run->nodes[i].life == NODE_UP && !run->nodes[i].paused)
		node_pause(run, i, len, "aimed, leaving");
	schedule(run, run->cl.now + len + simnet_rng_range(&a->rng, 5 * MS, 10 * MS), EV_RESTART,
		 i, DISK_KEPT, gen);
}

/* An aimed crash, leave or pause fires (EV_AIMED). */
static void aim_fire(struct sim_run *run, uint32_t i, enum aim_kind kind)
{
	struct sim_aim *a = &run->aim;
	uint64_t room = run->t_heal > run->cl.now + 2 * MS ? run->t_heal - run->cl.now - 2 * MS : 0;
	if (room < 20 * MS)
		return;
	uint64_t back = run->cl.now + simnet_rng_range(&a->rng, 10 * MS,
						       room < 1500 * MS ? room : 1500 * MS);
	enum disk_fate fate = DISK_KEPT;
	if (run->cls != SIM_CLASS_CRASH && simnet_rng_chance(&a->rng, 0.2))
		fate = simnet_rng_chance(&a->rng, 0.5) ? DISK_LOST : DISK_ROLLBACK;
	switch (kind) {
	case AIM_CRASH:
		trace(run, "FAULT aimed crash n%u", i);
		node_crash(run, i);
		schedule(run, back, EV_RESTART, i, fate, run->nodes[i].life_gen);
		break;
	case AIM_LEAVE:
		trace(run, "FAULT aimed leave n%u (SIGTERM)", i);
		node_step(run, i, RING_EVENT_LEAVE, NULL, 0);
		schedule(run, back, EV_RESTART, i, fate, run->nodes[i].life_gen);
		break;
	case AIM_PAUSE:
		node_pause(run, i, back - run->cl.now, "aimed");
		break;
	case AIM_LEAVE_STALL:
		aim_leave_stall(run, i, room);
		break;
	case AIM_SLOW_ACK:
		trace(run, "FAULT aimed crash n%u, its ack slow", i);
		node_crash(run, i); /* its restart is scheduled already */
		break;
	case AIM_DUP:
	case AIM_LATE:
	case AIM_HOLD:
	case AIM_LEAVE_DST:
	case AIM_COUNT_:
		break;
	}
}

/* ---- what the membership checks are fed (simcheck_members.c) ---- */

static uint64_t alive_mask(const struct ring_set *s, size_t n)
{
	uint64_t m = 0;
	for (size_t i = 0; i < n && i < 64; i++)
		if (ring_set_has(s, i))
			m |= 1ull << i;
	return m;
}

/* Member I is fed IT (a datagram from IT->src), or another event when IT is NULL. */
static void memb_on_recv(struct sim_run *run, uint32_t i, const struct simnet_item *it)
{
	struct simcheck_memb *b = &run->memb;
	struct ring_msg m;
	run->chk.now = run->cl.now;
	if (!it || ring_wire_decode(it->buf, it->len, &m) < 0) {
		simcheck_memb_step(b, i, run->cl.now, -1, false);
		return;
	}
	simcheck_memb_step(b, i, run->cl.now, (int)it->src, m.type == RING_MSG_LEAVE);
	if (m.type == RING_MSG_JOIN)
		simcheck_memb_recv_join(&run->chk, b, i, it->src, m.u.join.epoch,
					m.u.join.refused.epoch, m.u.join.refused.seq);
	else if (m.type == RING_MSG_LEAVE)
		simcheck_memb_recv_leave(&run->chk, b, i, it->src, m.u.leave.epoch,
					 m.u.leave.accepted.epoch, m.u.leave.accepted.seq,
					 m.u.leave.refused.epoch, m.u.leave.refused.seq);
	else if (m.type == RING_MSG_TOKEN_ACK)
		simcheck_memb_recv_ack(&run->chk, b, i, it->src, m.u.token_ack.epoch,
				       m.u.token_ack.seq, m.u.token_ack.known_epoch);
}

/* Member I sent BUF to DST (-1: to all). */
static void memb_on_send(struct sim_run *run, uint32_t i, int dst, const uint8_t *buf,
			 uint16_t len)
{
	struct simcheck_memb *b = &run->memb;
	struct ring_msg m;
	if (ring_wire_decode(buf, len, &m) < 0)
		return;
	run->chk.now = run->cl.now;
	if (m.type == RING_MSG_TOKEN && dst >= 0)
		simcheck_memb_send_token(&run->chk, b, i, (uint32_t)dst, m.u.token.epoch,
					 m.u.token.seq, alive_mask(&m.u.token.alive, run->cl.n));
	else if (m.type == RING_MSG_HEARTBEAT)
		simcheck_memb_send_heartbeat(&run->chk, b, i, m.u.heartbeat.epoch,
					     alive_mask(&m.u.heartbeat.alive, run->cl.n));
	else if (m.type == RING_MSG_JOIN)
		simcheck_memb_send_join(&run->chk, b, i, m.u.join.refused.epoch != 0);
}

/* The step that handled a leave request of member I is over: its clients. */
static void memb_leave_step(struct sim_run *run, uint32_t i)
{
	const struct sim_node *nd = &run->nodes[i];
	uint32_t in_cs = 0;
	for (uint32_t c = nd->first_client; c < nd->first_client + nd->nclients; c++)
		in_cs += run->clients[c].state == CL_CS;
	run->chk.now = run->cl.now;
	simcheck_memb_leave_step(&run->chk, &run->memb, i, in_cs);
}

/* ---- the elections' checks (simcheck_elect.c): what they are fed ---- */

static bool elect_of(const struct sim_run *run, const struct ring_msg_election *e,
		     struct simcheck_election *out)
{
	int ii = ring_layout_index(&run->cl.layout, e->initiator);
	if (ii < 0)
		return false;
	*out = (struct simcheck_election){(uint32_t)ii, e->round, e->max_epoch, e->initiator,
					  alive_mask(&e->participants, run->cl.n),
					  (e->flags & RING_ELECTION_NO_QUORUM) != 0};
	return true;
}

/* Member I sent BUF to DST (-1: to all). */
static void elect_feed_send(struct sim_run *run, uint32_t i, int dst, const uint8_t *buf,
			    uint16_t len)
{
	struct ring_msg m;
	struct simcheck_election e;
	if (ring_wire_decode(buf, len, &m) < 0)
		return;
	run->chk.now = run->cl.now;
	if (m.type == RING_MSG_ELECTION && dst >= 0 && elect_of(run, &m.u.election, &e))
		simcheck_elect_sent(&run->chk, i, (uint32_t)dst, &e);
	else if (m.type == RING_MSG_ELECTION_ACK) {
		int ii = ring_layout_index(&run->cl.layout, m.u.election_ack.initiator);
		if (ii >= 0)
			simcheck_elect_acked(&run->chk, i, (uint32_t)ii, m.u.election_ack.round);
	} else if (m.type == RING_MSG_HEARTBEAT && dst < 0)
		simcheck_elect_heartbeat(&run->chk, i, alive_mask(&m.u.heartbeat.alive, run->cl.n));
	else if (m.type == RING_MSG_TOKEN)
		simcheck_elect_token(&run->chk, i, ring_set_count(&m.u.token.alive));
}

/* Member I logged A. */
static void elect_feed_log(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	const uint64_t *f = a->u.log.field;
	run->chk.now = run->cl.now;
	switch (a->u.log.event) {
	case RING_LOG_ELECTION_START:
		simcheck_elect_log(&run->chk, i, SIMCHECK_ELECTION_START, (uint32_t)f[0], 0, 0);
		break;
	case RING_LOG_ELECTION_WON:
		simcheck_elect_log(&run->chk, i, SIMCHECK_ELECTION_WON, (uint32_t)f[0], (uint32_t)f[1],
				   (uint32_t)f[2]);
		break;
	case RING_LOG_PAUSE_DETECTED:
		simcheck_elect_log(&run->chk, i, SIMCHECK_PAUSE_DETECTED, 0, 0, 0);
		run->nodes[i].pause_seen_at = run->cl.now;
		break;
	case RING_LOG_TOKEN_RECV:
		simcheck_elect_log(&run->chk, i, SIMCHECK_TOKEN_TAKEN, 0, 0, 0);
		break;
	default:
		break;
	}
}

/* Member I is about to step on TYPE (IT its datagram). */
static void elect_feed_event(struct sim_run *run, uint32_t i, enum ring_event_type type,
			     const struct simnet_item *it)
{
	struct ring_msg m;
	struct simcheck_election e;
	run->chk.now = run->cl.now;
	if (type == RING_EVENT_LEAVE)
		simcheck_elect_leaving(&run->chk, i);
	if (type == RING_EVENT_DATAGRAM && it &&
	    ring_wire_peek_type(it->buf, it->len) == RING_MSG_ELECTION &&
	    ring_wire_decode(it->buf, it->len, &m) >= 0 && elect_of(run, &m.u.election, &e))
		simcheck_elect_rx(&run->chk, i, &e);
	if (type == RING_EVENT_DATAGRAM && it &&
	    ring_wire_peek_type(it->buf, it->len) == RING_MSG_ELECTION_ACK &&
	    ring_wire_decode(it->buf, it->len, &m) >= 0) {
		int ii = ring_layout_index(&run->cl.layout, m.u.election_ack.initiator);
		if (ii >= 0)
			simcheck_elect_ack_rx(&run->chk, i, (uint32_t)ii, m.u.election_ack.round);
	}
}

/* Member I's status after its step. */
static void elect_feed_status(struct sim_run *run, uint32_t i)
{
	const struct ring_status *st = &run->cl.m[i].status;
	struct simcheck_elect_status es = {st->epoch, st->has_token, st->token_held,
					   st->state == RING_STATE_NO_QUORUM,
					   st->state == RING_STATE_ELECTING, st->token_epoch,
					   st->token_seen_ms_ago, run->nodes[i].step_at};
	simcheck_elect_step(&run->chk, i, &es);
}

/* A heartbeat says BUSY exactly while a client of its sender is in the CS
 * or waits there, or another member summoned its parked token (§3.3):
 * what a TRY elsewhere is refused on. */
static void check_busy_flag(struct sim_run *run, uint32_t i, const uint8_t *buf, size_t len)
{
	struct ring_msg m;
	if (ring_wire_decode(buf, len, &m) < 0)
		return;
	const struct sim_node *nd = &run->nodes[i];
	if (nd->leaving)
		return; /* the shell closes a leaving member's clients: none waits */
	bool busy = false;
	for (uint32_t c = nd->first_client; c < nd->first_client + nd->nclients; c++)
		busy |= run->clients[c].state == CL_CS || run->clients[c].state == CL_WAIT;
	bool flag = (m.u.heartbeat.flags & RING_HB_BUSY) != 0;
	bool summoned = nd->was_summoned || run->cl.m[i].status.summoned;
	if (busy && !flag)
		fail(run, "try", "n%u heartbeat without BUSY while one of its clients holds or waits", i);
	else if (flag && !busy && !summoned)
		fail(run, "try", "n%u heartbeat with BUSY while none of its clients holds or waits, "
		     "and its token is not summoned", i);
}

static void on_send(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	uint16_t to = a->u.send.to;
	uint16_t len = a->u.send.len;
	if (len == 0 || len > RING_WIRE_MAX) {
		fail(run, "send", "n%u sends %u bytes", i, len);
		return;
	}
	enum ring_msg_type type = ring_wire_peek_type(a->u.send.buf, a->u.send.len);
	if (to == 0 && type == RING_MSG_HEARTBEAT)
		run->heartbeats++;
	if (type == RING_MSG_ELECTION)
		run->last_vote_us = run->cl.now;
	if (run->cl.now >= run->t_settle && (unsigned)type < 16) {
		run->settled_sent[type]++;
		/* A member asks one that sent it a token what it knows before it
		 * takes the first (§5.3); with jumps (§3.5) that first token may
		 * come long after the ring settled. Such a query, and its answer,
		 * are part of a settled ring's life, once a pair. */
		bool floor_query = type == RING_MSG_EPOCH_QUERY && to != 0;
		struct ring_msg wm;
		wm.type = RING_MSG_TOKEN;
		if (type == RING_MSG_WANT && ring_wire_decode(a->u.send.buf, len, &wm) == 0) {
			/* Sent on by another member, or a copy of a wait's first
			 * summons, which goes to all (§3.5). */
			if (wm.u.want.wanter != run->cl.m[i].id)
				run->settled_want_forwards++;
			else if (to == 0)
				run->settled_want_copies++;
		}
		if (floor_query)
			run->settled_floor_queries++;
		if (type == RING_MSG_EPOCH_REPLY && run->settled_floor_replies < run->settled_floor_queries) {
			run->settled_floor_replies++;
			floor_query = true;
		}
		/* The floor it learns is the sender's epoch now, so the token it
		 * held back is refused by name (a JOIN naming it) and taken back
		 * under a new epoch: a re-epoch per pair, the price of §5.3 with
		 * jumps (PROTOCOL.md §5.3). */
		if (type == RING_MSG_JOIN && to != 0 && ring_wire_decode(a->u.send.buf, len, &wm) == 0 &&
		    wm.u.join.refused.epoch != 0 && run->settled_floor_joins < run->settled_floor_queries) {
			run->settled_floor_joins++;
			floor_query = true;
		}
		if (!run->settled_recovery && is_recovery(type) && !floor_query)
			run->settled_recovery = type;
	}
	int dst = to ? ring_layout_index(&run->cl.layout, to) : -1;
	if (to && (dst < 0 || (uint32_t)dst == i)) {
		fail(run, "send", "n%u sends to id %u, %s", i, to,
		     dst < 0 ? "not a member" : "itself");
		return;
	}
	if (run->cl.trace) {
		char text[512], who[16];
		msg_text(run, a->u.send.buf, len, text, sizeof text);
		int name = (int)strcspn(text, " ");
		trace(run, "    -> send %.*s to %s:%s", name, text, id_name(run, to, who, sizeof who),
		      text + name);
	}
	memb_on_send(run, i, to ? dst : -1, a->u.send.buf, len);
	if (type == RING_MSG_HEARTBEAT)
		check_busy_flag(run, i, a->u.send.buf, len);
	if (type == RING_MSG_TOKEN_ACK && aim_slow_ack(run, i, to ? dst : -1, a->u.send.buf, len))
		return;
	for (uint32_t j = 0; j < run->cl.n; j++)
		if (to ? j == (uint32_t)dst : j != i)
			net_send(run, i, j, a->u.send.buf, len);
	elect_feed_send(run, i, to ? dst : -1, a->u.send.buf, len);
	aim_at(run, i, to ? dst : -1, a->u.send.buf, len, type);
}

static void node_pause(struct sim_run *run, uint32_t i, uint64_t len, const char *why);

/* The disk keeps the epochs it was given, newest last, so that a rollback can
 * restore one the member really persisted. */
static void disk_write(struct sim_node *nd, uint32_t epoch)
{
	nd->disk = epoch;
	if (nd->hist_n > 0 && nd->hist[nd->hist_n - 1] == epoch)
		return;
	if (nd->hist_n == SIM_DISK_HIST) {
		memmove(nd->hist, nd->hist + 1, (SIM_DISK_HIST - 1) * sizeof nd->hist[0]);
		nd->hist_n--;
	}
	nd->hist[nd->hist_n++] = epoch;
}

/* A member that accepted the token may be told to leave right then, its ack
 * in flight or lost: the handover of §5.4 under the worst timing. */
static void maybe_leave_after_token(struct sim_run *run, uint32_t i)
{
	if (run->leaves_left == 0 || run->healed || !simnet_rng_chance(&run->cl.rng, run->p_leave_recv))
		return;
	uint64_t at = run->cl.now + (simnet_rng_chance(&run->cl.rng, 0.5)
					  ? simnet_rng_range(&run->cl.rng, 1, 1 * MS)
					  : simnet_rng_range(&run->cl.rng, 1 * MS, 5 * MS));
	uint64_t back = at + simnet_rng_range(&run->cl.rng, 20 * MS, 1500 * MS);
	if (back + 1 * MS >= run->t_heal)
		return; /* it must be back before T_heal */
	run->leaves_left--;
	uint32_t fate = simnet_rng_chance(&run->cl.rng, 0.8) ? DISK_KEPT
			: simnet_rng_chance(&run->cl.rng, 0.5) ? DISK_LOST
							    : DISK_ROLLBACK;
	trace(run, "    (n%u will be told to leave at %.6f s, back at %.6f s)", i,
	      (double)at / 1e6, (double)back / 1e6);
	schedule(run, at, EV_LEAVE, i, 0, run->nodes[i].life_gen);
	schedule(run, back, EV_RESTART, i, fate, run->nodes[i].life_gen);
}

/* Where an armed tear cuts UP (from FROM on), or UP->n for nowhere: the
 * process dies having carried out actions FROM..cut-1, with a SEND still
 * to come and a PERSIST or a SEND already done (it stored an epoch and sent
 * nothing of it, or sent a pass but not the ack after it, say). Every such
 * cut is as likely as any other. */
static size_t tear_point(struct sim_run *run, const struct ring_update *up, size_t from)
{
	size_t cuts[RING_UPDATE_MAX], n = 0;
	bool done = false; /* a PERSIST or SEND before the cut */
	for (size_t k = from; k < up->n; k++) {
		enum ring_action_type t = up->action[k].type;
		if (t == RING_ACTION_SEND && done)
			for (size_t c = k; c > from && n < RING_UPDATE_MAX; c--) {
				/* every cut between the last PERSIST/SEND and this SEND */
				cuts[n++] = c;
				enum ring_action_type p = up->action[c - 1].type;
				if (p == RING_ACTION_SEND || p == RING_ACTION_PERSIST)
					break;
			}
		if (t == RING_ACTION_SEND || t == RING_ACTION_PERSIST)
			done = true;
	}
	return n ? cuts[simnet_rng_below(&run->cl.rng, n)] : up->n;
}

/* Carries out UP's actions from FROM on, in order, as the shell would. Two
 * disk faults cut in: a torn step (tear_point) and a slow fsync (the process
 * stalls in the PERSIST; the actions after it wait for the resume). */
static void apply_actions(struct sim_run *run, uint32_t i, const struct ring_update *up,
			  size_t from)
{
	struct sim_node *nd = &run->nodes[i];
	size_t end = up->n;
	if (nd->tear) {
		end = tear_point(run, up, from);
		if (end < up->n) {
			nd->tear = false;
			nd->torn = true;
			trace(run, "    (torn: n%u dies after action %zu of %zu, before a send)", i,
			      end, up->n);
		}
	}
	run->chk.now = run->cl.now;
	for (size_t k = from; k < end && !failed(run); k++) {
		const struct ring_action *a = &up->action[k];
		switch (a->type) {
		case RING_ACTION_PERSIST:
			trace(run, "    -> persist epoch %" PRIu32, a->u.persist.epoch);
			simcheck_persist(&run->chk, i, a->u.persist.epoch);
			for (uint32_t j = 0; j < run->cl.n; j++)
				if (j != i && run->nodes[j].wild && a->u.persist.epoch >= run->nodes[j].wild)
					fail(run, "wild", "n%u persisted epoch %" PRIu32 ", n%u's wild one", i,
					     a->u.persist.epoch, j);
			disk_write(nd, a->u.persist.epoch);
			if (nd->slow_fsync && !nd->torn) {
				nd->slow_fsync = false;
				if (k + 1 < end) {
					nd->deferred = malloc(sizeof *nd->deferred);
					if (!nd->deferred) {
						fail(run, "sim", "out of memory (deferred actions)");
						return;
					}
					memcpy(nd->deferred, up, sizeof *up);
					nd->deferred_from = k + 1;
				}
				node_pause(run, i, nd->fsync_us, "slow fsync");
				return;
			}
			break;
		case RING_ACTION_SEND:
			on_send(run, i, a);
			break;
		case RING_ACTION_GRANT:
			on_grant(run, i, a);
			break;
		case RING_ACTION_REVOKE:
			on_revoke(run, i, a);
			break;
		case RING_ACTION_DENY:
			on_deny(run, i, a);
			break;
		case RING_ACTION_RENEWED:
			on_renewed(run, i, a);
			break;
		case RING_ACTION_LOG:
			if ((unsigned)a->u.log.event >= RING_LOG_COUNT_) {
				fail(run, "action", "n%u logged unknown event %d", i,
				     (int)a->u.log.event);
				break;
			}
			if (run->cl.trace)
				trace_log(run, a);
			check_suspicion(run, i, a);
			elect_feed_log(run, i, a);
			if (a->u.log.event == RING_LOG_TOKEN_RECV)
				maybe_leave_after_token(run, i);
			if (a->u.log.event == RING_LOG_EPOCH_LEARNED && a->u.log.field[2]) {
				nd->proven = true;
				simcheck_memb_proven(&run->memb, i);
			}
			if (a->u.log.event == RING_LOG_TOKEN_PARK && run->cl.now >= run->t_settle)
				run->settled_parks++;
			break;
		case RING_ACTION_LEFT:
			trace(run, "    -> left");
			nd->left = true;
			break;
		case RING_ACTION_FATAL:
			/* Out of room for a step's actions (the simulator gives
			 * half of RING_UPDATE_MAX: node_step), or out of epochs. */
			trace(run, "    -> fatal: %s", ring_strerror(a->u.fatal.reason));
			fail(run, "action", "n%u stopped: %s", i, ring_strerror(a->u.fatal.reason));
			break;
		default:
			fail(run, "action", "n%u returned action type %d", i, (int)a->type);
			break;
		}
	}
}

/* The hops the member accepted and passed in this step, read from its log
 * events: its state changed in the step, whatever happens to the actions
 * (a slow fsync delays them, a torn step loses some), so the token checks
 * learn them before any action is carried out. */
static void note_hops(struct sim_run *run, uint32_t i, const struct ring_update *up)
{
	run->chk.now = run->cl.now;
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		if (a->type != RING_ACTION_LOG)
			continue;
		if (a->u.log.event == RING_LOG_TOKEN_REGEN)
			simcheck_fair_regen(&run->chk);
		/* A member skipped, or taken back in, waits anew: the token
		 * dropped its place in the want set (I5). */
		if (a->u.log.event == RING_LOG_SUCCESSOR_SKIP || a->u.log.event == RING_LOG_MEMBER_REJOIN) {
			int m = ring_layout_index(&run->cl.layout, (uint16_t)a->u.log.field[0]);
			if (m >= 0)
				simcheck_fair_visit(&run->chk, (uint32_t)m);
		}
		if (a->u.log.event == RING_LOG_TOKEN_RECV) {
			simcheck_fair_visit(&run->chk, i);
			simcheck_token_recv(&run->chk, i, (uint32_t)a->u.log.field[1],
					    (uint32_t)a->u.log.field[2]);
			simcheck_memb_token_recv(&run->chk, &run->memb, i);
		}
		else if (a->u.log.event == RING_LOG_TOKEN_PASS)
			simcheck_token_pass(&run->chk, i, (uint32_t)a->u.log.field[1],
					    (uint32_t)a->u.log.field[2]);
	}
}

/* The datagram a step of member I handles, for the summons and hop rules
 * (simcheck_park.c, simcheck_visit.c): a LEAVE, a heartbeat, an ack. */
static void note_event(struct sim_run *run, uint32_t i, const struct simnet_item *it)
{
	struct simcheck *c = &run->chk;
	struct ring_msg m;
	simcheck_visit_step(c, i);
	if (!it || ring_wire_decode(it->buf, it->len, &m) != 0)
		return;
	if (m.type == RING_MSG_LEAVE)
		simcheck_park_heard_leave(c, i, it->src);
	else if (m.type == RING_MSG_HEARTBEAT)
		simcheck_park_heard_heartbeat(c, i, it->src, m.u.heartbeat.epoch, m.u.heartbeat.seq,
					      (m.u.heartbeat.flags & RING_HB_PARKED) &&
						      !ring_set_has(&m.u.heartbeat.want, i));
	else if (m.type == RING_MSG_TOKEN_ACK)
		simcheck_visit_heard_ack(c, i, m.u.token_ack.epoch, m.u.token_ack.seq,
					 m.u.token_ack.flags & RING_ACK_STALE);
	else if (m.type == RING_MSG_TOKEN) {
		simcheck_pause_token(c, i);
		simcheck_park_token_walk(c, i, m.u.token.walk_us);
	}
}

/* A datagram the step sends, for the same rules. */
static void note_send(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	struct simcheck *c = &run->chk;
	struct ring_msg m;
	if (ring_wire_decode(a->u.send.buf, a->u.send.len, &m) != 0)
		return;
	int to = a->u.send.to ? ring_layout_index(&run->cl.layout, a->u.send.to) : -1;
	if (m.type == RING_MSG_HEARTBEAT && to < 0) {
		uint64_t alive = 0, want = 0;
		for (uint32_t j = 0; j < run->cl.n && j < 64; j++) {
			if (ring_set_has(&m.u.heartbeat.alive, j))
				alive |= 1ull << j;
			if (ring_set_has(&m.u.heartbeat.want, j))
				want |= 1ull << j;
		}
		simcheck_park_heartbeat(c, i, m.u.heartbeat.epoch, m.u.heartbeat.seq,
					m.u.heartbeat.flags & RING_HB_PARKED, alive, want);
	} else if (m.type == RING_MSG_WANT && to >= 0 &&
		   ring_layout_index(&run->cl.layout, m.u.want.wanter) == (int)i) {
		/* Its own summons; a WANT it forwards is the wanter's. */
		simcheck_park_want(c, i, (uint32_t)to, m.u.want.epoch, m.u.want.seq);
	} else if (m.type == RING_MSG_TOKEN || m.type == RING_MSG_TOKEN_ACK) {
		simcheck_visit_sent(c, i, m.type == RING_MSG_TOKEN);
	} else if ((m.type == RING_MSG_JOIN && m.u.join.refused.epoch) ||
		   (m.type == RING_MSG_LEAVE && m.u.leave.refused.epoch)) {
		/* A pass refused by name (a restart, a leave) ends the wait
		 * like a visit: the token was here, and was not taken (I5). */
		simcheck_fair_visit(c, i);
	}
}

/* The step's parks, summons, grants and passes, in the order it made them,
 * for the rules of §3.2 and §3.4 (simcheck_park.c, simcheck_visit.c): like
 * note_hops, from what the core decided, whatever a torn step or a slow
 * fsync does to carrying it out. Returns whether the step gave its pass up
 * without an ack (a skip, or a leave that ended). */
static bool note_step_actions(struct sim_run *run, uint32_t i, const struct ring_update *up)
{
	struct simcheck *c = &run->chk;
	bool gave_up = false;
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		const uint64_t *f = a->u.log.field;
		if (a->type == RING_ACTION_GRANT)
			simcheck_park_grant(c, i);
		else if (a->type == RING_ACTION_SEND)
			note_send(run, i, a);
		if (a->type != RING_ACTION_LOG)
			continue;
		int from = ring_layout_index(&run->cl.layout, (uint16_t)f[0]);
		switch (a->u.log.event) {
		case RING_LOG_TOKEN_RECV:
		case RING_LOG_TOKEN_REGEN:
			simcheck_park_arrive(c, i, a->u.log.event == RING_LOG_TOKEN_REGEN);
			break;
		case RING_LOG_TOKEN_PARK:
			simcheck_park_logged(c, i);
			break;
		case RING_LOG_TOKEN_PASS:
			simcheck_park_pass(c, i, from < 0 ? UINT32_MAX : (uint32_t)from,
					   (uint32_t)f[1], (uint32_t)f[2]);
			simcheck_visit_pass(c, i, (uint32_t)f[1], (uint32_t)f[2]);
			break;
		case RING_LOG_TOKEN_UNPARK:
			simcheck_park_unpark(c, i, from < 0 ? UINT32_MAX : (uint32_t)from,
					     (uint32_t)f[1], (uint32_t)f[2]);
			break;
		case RING_LOG_MEMBER_REJOIN:
			simcheck_visit_rejoin(c, i);
			break;
		case RING_LOG_SUCCESSOR_SKIP:
		case RING_LOG_LEAVE_DONE:
			/* A skip gives the pass up; a leave whose deadline
			 * passed ends it with the member (pause seed 1037185:
			 * an unrelated ack came in the same step). */
			gave_up = true;
			break;
		default:
			break;
		}
	}
	return gave_up;
}

static void note_parks(struct sim_run *run, uint32_t i, const struct ring_update *up)
{
	struct simcheck *c = &run->chk;
	simcheck_park_step(c, i, c->pause.m[i].detecting);
	bool gave_up = note_step_actions(run, i, up);
	const struct ring_status *st = &run->cl.m[i].status;
	simcheck_park_end(c, i, st->parked, st->queued, st->has_token);
	simcheck_park_summons_end(c, i, st->queued, st->has_token, st->epoch);
	simcheck_visit_end(c, i, st->has_token && !st->token_held, gave_up);
}

/* I3 on the node just stepped; the others' statuses are as of their own
 * last step, which is all that can have changed them. */
static void check_status(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	const struct ring_status *st = &run->cl.m[i].status;
	if (st->node != run->cl.m[i].id)
		fail(run, "status", "n%u reports id %u", i, st->node);
	struct simcheck_status s = {st->epoch, st->has_token, st->token_held, st->token_epoch,
				    nd->deferred != NULL};
	run->chk.now = run->cl.now;
	simcheck_status(&run->chk, i, &s, run->healed && run->cl.now >= run->t_settle);
	simcheck_memb_status(&run->chk, &run->memb, i, st->has_token, st->token_held,
			     st->epoch);
	elect_feed_status(run, i);
}

/* What a step leaves to do once its actions are carried out: a torn step
 * and a finished leave both end the process. Returns true when it ended. */
static bool after_actions(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	if (nd->torn) {
		nd->torn = false;
		nd->left = false;
		node_crash(run, i);
		return true;
	}
	if (nd->left && !nd->paused) {
		/* A leaving member's process exits once the core says so. */
		nd->left = false;
		node_crash(run, i);
		return true;
	}
	return false;
}

static bool update_logged(const struct ring_update *up, enum ring_log_event log, int field,
			  uint64_t f, bool check);

/* Whether update UP sends a datagram of TYPE (to all members, when ALL). */
static bool update_sent(const struct ring_update *up, enum ring_msg_type type, bool all)
{
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		if (a->type == RING_ACTION_SEND && (!all || a->u.send.to == 0) &&
		    ring_wire_peek_type(a->u.send.buf, a->u.send.len) == type)
			return true;
	}
	return false;
}

/* Heartbeats owed and the quiet a token carries (simcheck_epochs.c) in one
 * step of member I fed datagram IT, if any (BEFORE: its status before the
 * step), in the order of its actions: an ack of its pass, which measures the
 * hop's round trip; a token taken, heartbeats sent, passes (its ack timeout
 * may resend one). */
static void judge_heartbeats(struct sim_run *run, uint32_t i, const struct simnet_item *it,
			     const struct ring_status *before)
{
	const struct ring_update *up = &run->cl.upd;
	uint64_t hb = run->cl.layout.heartbeat_ms * MS;
	bool beat = update_sent(up, RING_MSG_HEARTBEAT, true);
	struct ring_msg in, m;
	bool got = it && ring_wire_decode(it->buf, it->len, &in) >= 0;
	simcheck_hb_paused(&run->chk, i, run->nodes[i].pause_gen);
	if (got && before && in.type == RING_MSG_TOKEN_ACK && !(in.u.token_ack.flags & RING_ACK_STALE) &&
	    before->has_token && !before->token_held)
		simcheck_pass_acked(&run->chk, i, it->src, in.u.token_ack.epoch, in.u.token_ack.seq);
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		if (a->type == RING_ACTION_LOG && got && in.type == RING_MSG_TOKEN &&
		    a->u.log.event == RING_LOG_TOKEN_RECV)
			simcheck_hb_took(&run->chk, i, in.u.token.quiet_us, hb);
		int d = a->type == RING_ACTION_SEND ? ring_layout_index(&run->cl.layout, a->u.send.to)
						    : -1;
		if (a->type != RING_ACTION_SEND ||
		    ring_wire_decode(a->u.send.buf, a->u.send.len, &m) < 0)
			continue;
		if (m.type == RING_MSG_HEARTBEAT && a->u.send.to == 0)
			simcheck_hb_sent(&run->chk, i, hb);
		if (m.type != RING_MSG_TOKEN || d < 0)
			continue;
		/* Every step runs the member's timers: a pass resent is its ack
		 * timeout's, but where a LEAVE crossed it (§5.4: resent at once). */
		bool timer = !(got && in.type == RING_MSG_LEAVE);
		if (simcheck_pass_sent(&run->chk, i, (uint32_t)d, m.u.token.epoch, m.u.token.seq,
				       timer) && timer)
			simcheck_hb_retransmit(&run->chk, i, beat);
		simcheck_quiet_sent(&run->chk, i, m.u.token.quiet_us, hb);
	}
}

static bool update_logged(const struct ring_update *up, enum ring_log_event log, int field,
			  uint64_t f, bool check);

/* What a step was told and answered (simcheck_epochs.c): the newer epoch a
 * heartbeat, or a STALE ack of the pass it awaits, told it; the ack of a
 * stale token; the pace of its EPOCH_QUERYs. BEFORE is
 * its status before the step (NULL: none, or it has left), IT the datagram
 * the step was fed, if any. The core's decisions are judged, whatever a torn
 * step or a slow fsync does to carrying them out. */
static void judge_epochs(struct sim_run *run, uint32_t i, const struct simnet_item *it,
			 const struct ring_status *before)
{
	const struct ring_update *up = &run->cl.upd;
	uint32_t after = run->cl.m[i].status.epoch;
	struct ring_msg in, m;
	bool got = it && before && ring_wire_decode(it->buf, it->len, &in) >= 0;
	struct simcheck_ack ack = {false, false, 0};
	run->chk.now = run->cl.now;
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		if (a->type != RING_ACTION_SEND ||
		    ring_wire_decode(a->u.send.buf, a->u.send.len, &m) < 0)
			continue;
		int d = ring_layout_index(&run->cl.layout, a->u.send.to);
		if (m.type == RING_MSG_EPOCH_QUERY && a->u.send.to == 0)
			simcheck_query_sent(&run->chk, i, m.u.epoch_query.nonce,
					    run->cl.layout.heartbeat_ms * MS,
					    run->cl.layout.loss_timeout_ms * MS);
		else if (got && in.type == RING_MSG_TOKEN && m.type == RING_MSG_TOKEN_ACK &&
			 d == (int)it->src && m.u.token_ack.epoch == in.u.token.epoch &&
			 m.u.token_ack.seq == in.u.token.seq && !ack.sent)
			ack = (struct simcheck_ack){true, m.u.token_ack.flags & RING_ACK_STALE,
						    m.u.token_ack.known_epoch};
	}
	if (got && in.type == RING_MSG_HEARTBEAT)
		simcheck_told(&run->chk, i, "a heartbeat", before->epoch, in.u.heartbeat.epoch, after);
	else if (got && in.type == RING_MSG_TOKEN_ACK && (in.u.token_ack.flags & RING_ACK_STALE) &&
		 before->has_token && !before->token_held &&
		 simcheck_passing_to(&run->chk, i, it->src)) {
		simcheck_told(&run->chk, i, "a STALE ack of its pass", before->epoch,
			      in.u.token_ack.known_epoch, after);
		/* Kept, passed on, or dropped for a reason of its own: the
		 * step's timers skipped the successor below a quorum (a pause
		 * just ended, its ack timeout long past: mixed 1074720). */
		simcheck_stale_ack_old(&run->chk, i, before->token_epoch, in.u.token_ack.epoch,
				       in.u.token_ack.known_epoch,
				       run->cl.m[i].status.has_token ||
					       update_sent(up, RING_MSG_TOKEN, false) ||
					       update_logged(up, RING_LOG_NO_QUORUM, 0, 0, false));
	} else if (got && in.type == RING_MSG_TOKEN)
		simcheck_stale_token(&run->chk, i, before->epoch, in.u.token.epoch, in.u.token.seq,
				     &ack);
}

/* Whether update UP logged LOG with FIELD equal to F (any F when CHECK is false). */
static bool update_logged(const struct ring_update *up, enum ring_log_event log, int field,
			  uint64_t f, bool check)
{
	for (size_t k = 0; k < up->n; k++)
		if (up->action[k].type == RING_ACTION_LOG && up->action[k].u.log.event == log &&
		    (!check || (uint64_t)up->action[k].u.log.field[field] == f))
			return true;
	return false;
}

/* Whether datagram M carries epoch E in any of its fields: an epoch a step
 * persists that its datagram does not carry is one the member minted. */
static bool msg_carries(const struct ring_msg *m, uint32_t e)
{
	switch (m->type) {
	case RING_MSG_TOKEN:
		return m->u.token.epoch == e;
	case RING_MSG_TOKEN_ACK:
		return m->u.token_ack.epoch == e || m->u.token_ack.known_epoch == e;
	case RING_MSG_HEARTBEAT:
		return m->u.heartbeat.epoch == e;
	case RING_MSG_ELECTION:
		return m->u.election.max_epoch == e;
	case RING_MSG_JOIN:
		return m->u.join.epoch == e || m->u.join.refused.epoch == e;
	case RING_MSG_LEAVE:
		return m->u.leave.epoch == e || m->u.leave.accepted.epoch == e ||
		       m->u.leave.refused.epoch == e;
	case RING_MSG_EPOCH_REPLY:
		return m->u.epoch_reply.epoch == e;
	case RING_MSG_WANT:
		return m->u.want.epoch == e;
	default:
		return false;
	}
}

/* The restart proof's model (simcheck_restart.c) fed one step of member I:
 * its queries and elections, and what it did with the answer or the token
 * IT brought (BEFORE: its status before the step, NULL if none). */
static void judge_restart(struct sim_run *run, uint32_t i, const struct simnet_item *it,
			  const struct ring_status *before)
{
	const struct ring_update *up = &run->cl.upd;
	struct ring_msg in, m;
	bool got = it && before && ring_wire_decode(it->buf, it->len, &in) >= 0;
	struct simcheck_answer ans = {false, false, 0};
	/* The answer first: the epoch a proof adopts is no mint. */
	if (got && in.type == RING_MSG_EPOCH_REPLY)
		simcheck_restart_reply(&run->chk, i, it->src, in.u.epoch_reply.nonce,
				       in.u.epoch_reply.epoch, before->epoch,
				       update_logged(up, RING_LOG_EPOCH_LEARNED, 2, 1, true));
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		if (a->type == RING_ACTION_PERSIST && before)
			simcheck_restart_persist(&run->chk, i, a->u.persist.epoch, before->epoch,
						 got && msg_carries(&in, a->u.persist.epoch));
		if (a->type != RING_ACTION_SEND ||
		    ring_wire_decode(a->u.send.buf, a->u.send.len, &m) < 0)
			continue;
		int d = ring_layout_index(&run->cl.layout, a->u.send.to);
		if (m.type == RING_MSG_EPOCH_QUERY)
			simcheck_restart_query(&run->chk, i, m.u.epoch_query.nonce);
		else if (m.type == RING_MSG_ELECTION) /* SELF: it added itself */
			simcheck_restart_election(
				&run->chk, i, m.u.election.initiator == run->cl.m[i].id,
				m.u.election.round,
				ring_set_has(&m.u.election.participants, i) && got &&
					in.type == RING_MSG_ELECTION &&
					!ring_set_has(&in.u.election.participants, i));
		else if (got && in.type == RING_MSG_TOKEN && m.type == RING_MSG_JOIN &&
			 d == (int)it->src && m.u.join.refused.epoch == in.u.token.epoch &&
			 m.u.join.refused.seq == in.u.token.seq)
			ans = (struct simcheck_answer){false, true, m.u.join.epoch};
	}
	if (got && in.type == RING_MSG_TOKEN) {
		ans.taken = update_logged(up, RING_LOG_TOKEN_RECV, 2, in.u.token.seq, true) &&
			    update_logged(up, RING_LOG_TOKEN_RECV, 1, in.u.token.epoch, true);
		simcheck_restart_token(&run->chk, i, it->src, in.u.token.epoch, in.u.token.seq,
				       before->epoch, &ans);
	}
}

/* A live token heard, a JOIN of its own sent, and a stale heartbeat answered
 * (simcheck_epochs.c), in one step of member I fed datagram IT (BEFORE: its
 * status before the step). A non-STALE ack counts as heard whatever it names:
 * the check errs towards asking less. */
static void judge_heard(struct sim_run *run, uint32_t i, const struct simnet_item *it,
			const struct ring_status *before)
{
	const struct ring_update *up = &run->cl.upd;
	struct ring_msg in, m;
	bool got = it && before && ring_wire_decode(it->buf, it->len, &in) >= 0;
	bool joined = false, own_join = false;
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		if (a->type != RING_ACTION_SEND ||
		    ring_wire_decode(a->u.send.buf, a->u.send.len, &m) < 0 ||
		    m.type != RING_MSG_JOIN || m.u.join.refused.epoch != 0)
			continue;
		own_join = true;
		joined |= got && ring_layout_index(&run->cl.layout, a->u.send.to) == (int)it->src;
	}
	if (got && in.type == RING_MSG_HEARTBEAT && in.u.heartbeat.epoch < before->epoch)
		simcheck_stale_heartbeat(&run->chk, i, before->has_token,
					 run->cl.layout.loss_timeout_ms * MS,
					 run->cl.layout.heartbeat_ms * MS, joined);
	bool heard = update_logged(up, RING_LOG_TOKEN_RECV, 0, 0, false) ||
		     update_logged(up, RING_LOG_TOKEN_REGEN, 0, 0, false) ||
		     (got && in.type == RING_MSG_HEARTBEAT && in.u.heartbeat.epoch >= before->epoch) ||
		     (got && in.type == RING_MSG_TOKEN_ACK && !(in.u.token_ack.flags & RING_ACK_STALE));
	if (heard)
		simcheck_heard(&run->chk, i);
	if (own_join)
		simcheck_join_sent(&run->chk, i);
}

/* Steps node I with one event and carries out what it asks. IT is the
 * datagram for DATAGRAM, CLIENT the handle for ACQUIRE and RELEASE. */
static void node_step(struct sim_run *run, uint32_t i, enum ring_event_type type,
		      const struct simnet_item *it, uint64_t client)
{
	struct sim_node *nd = &run->nodes[i];
	struct ring_event ev = cluster_event(&run->cl, type, it, client);
	run->chk.now = run->cl.now;
	simcheck_pause_step(&run->chk, i);
	if (type == RING_EVENT_LEAVE) {
		simcheck_park_leave(&run->chk, i);
		run->nodes[i].leaving = true;
	}
	note_event(run, i, type == RING_EVENT_DATAGRAM ? it : NULL);
	if (type == RING_EVENT_DATAGRAM && it && it->src < run->cl.n &&
	    ring_wire_peek_type(it->buf, it->len) == RING_MSG_HEARTBEAT)
		nd->hb_from[it->src] = run->cl.now;
	struct ring_status before = run->cl.m[i].status;
	bool had = run->cl.m[i].have_status && !nd->left;
	nd->was_summoned = had && before.summoned;
	memb_on_recv(run, i, type == RING_EVENT_DATAGRAM ? it : NULL);
	if (type == RING_EVENT_LEAVE)
		simcheck_memb_leave(&run->chk, &run->memb, i);
	elect_feed_event(run, i, type, it);
	nd->step_at = run->cl.now;
	cluster_step(&run->cl, i, &ev);
	judge_epochs(run, i, type == RING_EVENT_DATAGRAM ? it : NULL, had ? &before : NULL);
	judge_restart(run, i, type == RING_EVENT_DATAGRAM ? it : NULL, had ? &before : NULL);
	judge_heartbeats(run, i, type == RING_EVENT_DATAGRAM ? it : NULL, had ? &before : NULL);
	judge_heard(run, i, type == RING_EVENT_DATAGRAM ? it : NULL, had ? &before : NULL);
	if (type == RING_EVENT_LEAVE)
		simcheck_restart_leaving(&run->chk, i);
	note_hops(run, i, &run->cl.upd);
	note_parks(run, i, &run->cl.upd);
	apply_actions(run, i, &run->cl.upd, 0);
	simcheck_pause_end(&run->chk, i, run->cl.m[i].status.granted, run->cl.upd.deadline_us);
	if (nd->torn) {
		after_actions(run, i);
		return;
	}
	cluster_arm(&run->cl, i);
	/* A step stalled in its fsync is not over: its disk is checked again
	 * when its last actions are carried out (node_resume). */
	check_status(run, i);
	if (type == RING_EVENT_LEAVE)
		memb_leave_step(run, i);
	if (!nd->deferred)
		simcheck_memb_leave_due(&run->chk, &run->memb, i, nd->left);
	after_actions(run, i);
}

/* ---- node life: start, crash, restart, pause ---- */

/* The answers a start needs (PROTOCOL.md §5.3): n - n/2 others with an
 * empty disk, n/2 with a stored epoch; under quorum = none one and none. */
static size_t restart_needed(const struct ring_layout *L, uint32_t disk)
{
	if (L->quorum == RING_QUORUM_MAJORITY)
		return disk ? L->n / 2 : L->n - L->n / 2;
	return disk ? 0 : 1;
}

static void node_start(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	if (!cluster_start(&run->cl, i, nd->disk))
		return;
	nd->life = NODE_UP;
	nd->life_gen++;
	run->chk.now = run->cl.now;
	simcheck_start(&run->chk, i, nd->disk);
	simcheck_pause_start(&run->chk, i);
	simcheck_park_start(&run->chk, i);
	simcheck_fair_visit(&run->chk, i); /* a new life waits anew (I5) */
	simcheck_visit_start(&run->chk, i);
	simcheck_restart_start(&run->chk, i, nd->disk, restart_needed(&run->cl.layout, nd->disk),
			       2 * run->cl.layout.heartbeat_ms * MS);
	simcheck_memb_start(&run->memb, i);
	trace(run, "n%u start (epoch %" PRIu32 " on disk)", i, nd->disk);
	nd->leaving = false;
	node_step(run, i, RING_EVENT_START, NULL, 0);
	for (uint32_t c = nd->first_client; c < nd->first_client + nd->nclients; c++)
		client_think(run, c);
}

static void add_counters(struct sim_run *run, const struct ring_counters *k)
{
	run->res.elections += k->elections;
	run->res.regenerations += k->regenerations;
	run->res.parks += k->parks;
	run->res.summons += k->summons;
}

static void node_stop(struct sim_run *run, uint32_t i)
{
	if (!run->cl.m[i].rn)
		return;
	struct ring_status st;
	cluster_stop(&run->cl, i, &st);
	add_counters(run, &st.counters);
}

static void node_crash(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	trace(run, "FAULT crash n%u", i);
	node_stop(run, i);
	nd->life = NODE_DOWN;
	nd->life_gen++;
	cluster_stop(&run->cl, i, NULL); /* its timer, even if it had no core */
	nd->tear = nd->slow_fsync = false;
	run->chk.now = run->cl.now;
	simcheck_stop(&run->chk, i);
	simcheck_memb_stop(&run->memb, i);
	for (uint32_t c = nd->first_client; c < nd->first_client + nd->nclients; c++) {
		struct sim_client *cl = &run->clients[c];
		if (cl->state == CL_CS)
			simcheck_cs_end(&run->chk, cl->gid); /* the CS dies with its process */
		else if (cl->state == CL_WAIT)
			simcheck_request_end(&run->chk, cl->req, SIMCHECK_DROPPED);
		if (cl->state == CL_CS || cl->state == CL_WAIT)
			run->last_busy_us = run->cl.now; /* its heartbeats may still be on the way */
		cl->state = CL_DOWN;
		cl->gen++;
	}
	/* A paused member can be crashed too: what it had not seen is gone. */
	for (size_t k = 0; k < nd->held_clients.n; k++)
		item_free(run, nd->held_clients.v[k]);
	for (size_t k = 0; k < nd->held_events.n; k++)
		item_free(run, nd->held_events.v[k]);
	nd->held_clients.n = nd->held_events.n = 0;
	free(nd->deferred);
	nd->deferred = NULL;
	nd->paused = false;
}

/* What PROTOCOL.md §5.3 promises to survive: a member that comes back with
 * a lost or rolled-back disk, under a majority quorum, while every other
 * member is up with what it knows (none of them itself damaged and not yet
 * told by the others). A second member losing its state before the first
 * has relearned it can take the last copy of an epoch with it; under
 * quorum = none nothing but the disk remembers a member's epochs. */
static bool disk_fault_covered(const struct sim_run *run, uint32_t i, enum disk_fate fate)
{
	if (run->cl.layout.quorum != RING_QUORUM_MAJORITY)
		return false;
	/* A rolled-back disk is caught by the answers of members that know a
	 * newer epoch; §5.3 promises it only while they can answer, on a
	 * clean network: the disk class, not mixed. */
	if (fate == DISK_ROLLBACK && run->cls != SIM_CLASS_DISK)
		return false;
	for (uint32_t j = 0; j < run->cl.n; j++) {
		const struct sim_node *o = &run->nodes[j];
		if (j != i && (o->life != NODE_UP || o->paused || (o->damaged && !o->proven) || o->wild))
			return false;
	}
	return true;
}

/* Restarts a member that is down with what its disk kept (FATE). */
static void node_restart(struct sim_run *run, uint32_t i, enum disk_fate fate)
{
	struct sim_node *nd = &run->nodes[i];
	uint32_t was = nd->disk;
	if (run->keep_disks)
		fate = DISK_KEPT;
	/* A member whose disk went wild stays out of the ring (§5.3) until the
	 * operator deletes its epoch file; whatever restarts it next, that is
	 * done first. Its damage is the only one the sim drew meanwhile. */
	if (nd->wild)
		fate = DISK_DELETED;
	if (fate != DISK_KEPT && fate != DISK_DELETED && !disk_fault_covered(run, i, fate)) {
		trace(run, "    (n%u's disk fault is not drawn: outside what PROTOCOL.md §5.3"
		      " promises to survive)", i);
		fate = DISK_KEPT;
	}
	/* Damage lasts until the member has been told the others' epochs: a
	 * restart on a kept disk that never learned them is still damaged. */
	/* A third of the rolled-back disks are wild instead: they hold an
	 * epoch more than a jump above anything the ring made, the last
	 * generation half the time (§4.2, §5.3: never spread; the member
	 * stays out until the operator deletes the file, wild_out later). */
	uint64_t wild_out = 3 * run->cl.layout.loss_timeout_ms * MS;
	if (fate == DISK_ROLLBACK && simnet_rng_chance(&run->cl.rng, 1.0 / 3) &&
	    run->cl.now + 2 * wild_out < run->t_heal)
		fate = DISK_WILD;
	if (fate == DISK_DELETED) {
		trace(run, "    (the operator deletes n%u's wild epoch file)", i);
		nd->wild = 0;
		fate = DISK_LOST;
	}
	nd->damaged = fate != DISK_KEPT || (nd->damaged && !nd->proven);
	nd->proven = false;
	if (fate == DISK_WILD) {
		uint32_t gen = (was >> 8) + 0x10001u + simnet_rng_below(&run->cl.rng, 0x10000u);
		if (gen > 0xffffffu || simnet_rng_chance(&run->cl.rng, 0.5))
			gen = 0xffffffu;
		nd->disk = gen << 8 | i;
		nd->wild = nd->disk;
	} else if (fate == DISK_LOST) {
		nd->disk = 0;
		nd->hist_n = 0;
	} else if (fate == DISK_ROLLBACK) {
		uint32_t older = 0;
		while (nd->hist_n > 0 && nd->hist[nd->hist_n - 1] >= was)
			nd->hist_n--;
		if (nd->hist_n > 0)
			older = nd->hist[simnet_rng_below(&run->cl.rng, nd->hist_n)];
		while (nd->hist_n > 0 && nd->hist[nd->hist_n - 1] > older)
			nd->hist_n--;
		nd->disk = older;
	}
	if (nd->disk != was)
		simcheck_memb_disk_damaged(&run->memb);
	if (nd->disk != was)
		i2_off(run, "n%u restarted with its disk %s (epoch %" PRIu32 " -> %" PRIu32 ")", i,
		       fate == DISK_LOST ? "lost" : fate == DISK_WILD ? "gone wild" : "rolled back",
		       was, nd->disk);
	trace(run, "FAULT restart n%u%s", i,
	      nd->disk == was ? "" : fate == DISK_LOST ? " (its disk lost its state)"
			       : fate == DISK_WILD ? " (its disk went wild)"
						     : " (its disk rolled back)");
	node_start(run, i);
	if (fate == DISK_WILD)
		schedule(run, run->cl.now + wild_out, EV_RESTART, i, DISK_DELETED, nd->life_gen);
}

/* The newest epoch a heartbeat among the datagrams a paused member missed
 * carries, 0 for none (simcheck_pause_woken). Only those it will be given:
 * one whose link a partition cut meanwhile is dropped at delivery (mixed
 * seed 1028103), so the member never learns its epoch. */
static uint32_t held_newest_heartbeat(const struct sim_run *run, const struct sim_node *nd)
{
	uint32_t e = 0;
	for (size_t k = 0; k < nd->held_events.n; k++) {
		const struct simnet_item *it = &run->cl.q.items[nd->held_events.v[k]];
		struct ring_msg m;
		if (it->kind == EV_DELIVER && !link_cut(run, it->src, it->node) &&
		    ring_wire_decode(it->buf, it->len, &m) == 0 &&
		    m.type == RING_MSG_HEARTBEAT && m.u.heartbeat.epoch > e)
			e = m.u.heartbeat.epoch;
	}
	return e;
}

static void node_resume(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	trace(run, "FAULT resume n%u (%zu client moves, %zu events held%s)", i,
	      nd->held_clients.n, nd->held_events.n,
	      nd->deferred ? ", a step to finish" : "");
	nd->paused = false;
	nd->resumed_at = run->cl.now;
	/* A process stalled in fsync first finishes the step it was in. */
	if (nd->deferred) {
		struct ring_update *up = nd->deferred;
		nd->deferred = NULL;
		apply_actions(run, i, up, nd->deferred_from);
		free(up);
		if (failed(run) || after_actions(run, i))
			return;
		check_status(run, i);
	} else if (nd->left) {
		after_actions(run, i);
		return;
	}
	/* The clients first: a process that wakes up acts on what it believed
	 * before its member can tell it otherwise (§5.5). Then the member's own
	 * events, as the daemon takes a batch from its socket: in the order
	 * the core asks for (ring_node_rx_rank: tokens last), in the order they
	 * came within a rank. */
	for (size_t k = 0; k < nd->held_clients.n; k++)
		heap_push(run, run->cl.now, nd->held_clients.v[k]);
	run->chk.now = run->cl.now;
	simcheck_pause_woken(&run->chk, i, held_newest_heartbeat(run, nd));
	for (int rank = 0; rank < 2; rank++)
		for (size_t k = 0; k < nd->held_events.n; k++) {
			const struct simnet_item *it = &run->cl.q.items[nd->held_events.v[k]];
			int r = it->kind == EV_DELIVER ? ring_node_rx_rank(it->buf, it->len) : 0;
			if (r == rank)
				heap_push(run, run->cl.now, nd->held_events.v[k]);
		}
	nd->held_clients.n = nd->held_events.n = 0;
}

static void node_pause(struct sim_run *run, uint32_t i, uint64_t len, const char *why)
{
	struct sim_node *nd = &run->nodes[i];
	nd->paused = true;
	nd->paused_at = run->cl.now;
	nd->pause_gen++;
	trace(run, "FAULT pause n%u (%s) for %.3f ms", i, why, (double)len / 1e3);
	i2_off(run, "n%u paused (%s)", i, why);
	schedule(run, run->cl.now + len, EV_RESUME, i, 0, nd->pause_gen);
}

static uint32_t nodes_down(const struct sim_run *run)
{
	uint32_t d = 0;
	for (uint32_t i = 0; i < run->cl.n; i++)
		d += run->nodes[i].life != NODE_UP;
	return d;
}

/* A random member that is up and not paused, preferring one whose status
 * matches WANT (0: none, 1: holds the token, 2: has a client in the CS). */
static int pick_node(struct sim_run *run, int want)
{
	uint32_t cand[SIM_MAX_N], nc = 0;
	for (int pass = want ? 0 : 1; pass < 2 && nc == 0; pass++)
		for (uint32_t i = 0; i < run->cl.n; i++) {
			const struct sim_node *nd = &run->nodes[i];
			if (nd->life != NODE_UP || nd->paused)
				continue;
			if (pass == 0 && !(want == 1 ? run->cl.m[i].status.has_token : run->cl.m[i].status.granted))
				continue;
			cand[nc++] = i;
		}
	return nc ? (int)cand[simnet_rng_below(&run->cl.rng, nc)] : -1;
}

/* How long a pause of LEN's kind lasts, for a member whose next deadline
 * is at TICK: the detector measures how late a deadline fires (§5.5), so the
 * edges are placed around the deadline plus loss_timeout_ms / 2. */
static uint64_t pause_us(struct sim_run *run, enum pause_len len, uint64_t tick)
{
	uint64_t thr = run->cl.layout.loss_timeout_ms * MS / 2;
	uint64_t base = tick != NEVER && tick > run->cl.now ? tick - run->cl.now : 0;
	switch (len) {
	case PL_SHORT:
		return simnet_rng_range(&run->cl.rng, 1, thr / 2);
	case PL_JUST_BELOW:
		return base + thr - simnet_rng_range(&run->cl.rng, 1, 1 * MS);
	case PL_JUST_ABOVE:
		return base + thr + simnet_rng_range(&run->cl.rng, 0, 1 * MS);
	case PL_LONG:
		break;
	}
	return simnet_rng_range(&run->cl.rng, 2 * thr, 6 * thr);
}

static void fault_fire(struct sim_run *run, uint32_t k)
{
	struct sim_fault *f = &run->faults[k];
	switch (f->kind) {
	case F_CRASH:
		if (run->crash_minority && (nodes_down(run) + 1) * 2 >= run->cl.n) {
			trace(run, "FAULT crash skipped: a majority must stay up");
			f->node = run->faults[f->pair].node = -1;
			break;
		}
		f->node = run->faults[f->pair].node = pick_node(run, f->prefer_holder ? 1 : 0);
		if (f->node >= 0 && f->graceful) {
			trace(run, "FAULT leave n%d (SIGTERM)", f->node);
			node_step(run, (uint32_t)f->node, RING_EVENT_LEAVE, NULL, 0);
		} else if (f->node >= 0) {
			node_crash(run, (uint32_t)f->node);
		}
		break;
	case F_RESTART:
		if (f->node < 0)
			break;
		/* An armed tear that never found its step is over. */
		run->nodes[f->node].tear = false;
		if (run->nodes[f->node].life == NODE_UP && run->faults[f->pair].graceful) {
			/* Its leave never finished (no one to hand the token to):
			 * the supervisor kills it before starting it again. */
			node_crash(run, (uint32_t)f->node);
		}
		if (run->nodes[f->node].life == NODE_DOWN)
			node_restart(run, (uint32_t)f->node, f->disk);
		break;
	case F_PAUSE:
		f->node = run->faults[f->pair].node = pick_node(run, 2);
		if (f->node >= 0) {
			trace(run, "FAULT pause n%d until %" PRIu64 ".%06" PRIu64, f->node,
			      run->faults[f->pair].t / 1000000, run->faults[f->pair].t % 1000000);
			run->nodes[f->node].paused = true;
			i2_off(run, "n%d paused", f->node);
		}
		break;
	case F_RESUME:
		if (f->node >= 0 && run->nodes[f->node].paused)
			node_resume(run, (uint32_t)f->node);
		break;
	case F_PAUSE_ANY: {
		f->node = pick_node(run, simnet_rng_chance(&run->cl.rng, 0.3) ? 2 : 0);
		if (f->node < 0)
			break;
		uint64_t len = pause_us(run, f->len, run->cl.m[f->node].tick_at);
		if (len > f->max_us)
			len = f->max_us;
		static const char *const kinds[] = {"short", "just below detection",
						    "just above detection", "long"};
		node_pause(run, (uint32_t)f->node, len ? len : 1, kinds[f->len]);
		break;
	}
	case F_PARTITION:
		run->cl.net.cut = true;
		run->cl.net.side = f->side;
		i2_off(run, "a partition");
		if (run->cl.trace) {
			char a[200] = "", b[200] = "";
			size_t la = 0, lb = 0;
			for (uint32_t i = 0; i < run->cl.n; i++) {
				if ((f->side >> i) & 1)
					lb += (size_t)snprintf(b + lb, lb < sizeof b ? sizeof b - lb : 0,
							       " n%u", i);
				else
					la += (size_t)snprintf(a + la, la < sizeof a ? sizeof a - la : 0,
							       " n%u", i);
				if (la >= sizeof a || lb >= sizeof b)
					break;
			}
			trace(run, "FAULT partition {%s } | {%s }", a, b);
		}
		break;
	case F_HEAL:
		trace(run, "FAULT heal the partition");
		run->cl.net.cut = false;
		break;
	case F_DCUT: {
		/* One member deaf to all, all deaf to one, or random one-way
		 * pairs: A hears B while B does not hear A. */
		uint32_t x = (uint32_t)simnet_rng_below(&run->cl.rng, run->cl.n);
		memset(run->cl.net.deaf, 0, sizeof run->cl.net.deaf);
		for (uint32_t a = 0; a < run->cl.n; a++)
			for (uint32_t b = 0; b < run->cl.n; b++) {
				bool drop = a != b && (f->dcut == 0 ? b == x
						       : f->dcut == 1 ? a == x
						       : simnet_rng_chance(&run->cl.rng, 0.3));
				if (drop)
					run->cl.net.deaf[b] |= 1ull << a;
			}
		run->cl.net.dcut = true;
		i2_off(run, "a directed cut");
		trace(run, "FAULT directed cut: %s n%u", f->dcut == 0 ? "deaf to all:"
			   : f->dcut == 1 ? "nobody hears" : "random one-way pairs, e.g. around", x);
		break;
	}
	case F_DHEAL:
		trace(run, "FAULT heal the directed cut");
		run->cl.net.dcut = false;
		memset(run->cl.net.deaf, 0, sizeof run->cl.net.deaf);
		break;
	case F_TEAR:
		f->node = run->faults[f->pair].node = pick_node(run, 0);
		if (f->node >= 0) {
			trace(run, "FAULT arm a torn crash at n%d", f->node);
			run->nodes[f->node].tear = true;
		}
		break;
	case F_SLOW_FSYNC:
		f->node = run->faults[f->pair].node = pick_node(run, 0);
		if (f->node >= 0) {
			struct sim_node *nd = &run->nodes[f->node];
			nd->slow_fsync = true;
			nd->fsync_us = pause_us(run, f->len, run->cl.m[f->node].tick_at);
			if (nd->fsync_us > f->max_us)
				nd->fsync_us = f->max_us;
			if (nd->fsync_us == 0)
				nd->fsync_us = 1;
			trace(run, "FAULT arm a slow fsync of %.3f ms at n%d",
			      (double)nd->fsync_us / 1e3, f->node);
		}
		break;
	case F_DISARM:
		if (f->node >= 0)
			run->nodes[f->node].slow_fsync = false;
		break;
	case F_NETWORK:
		/* Drawn in the first 2 s, which may be after a short run's
		 * T_heal: the network stays clean then, as T_heal promises. */
		if (run->healed) {
			trace(run, "    (the network's faults would begin after T_heal: none)");
			break;
		}
		trace(run, "FAULT the network starts losing, duplicating and delaying");
		run->cl.net.loss_on = true;
		run->p_hb_loss = run->hb_loss_planned;
		break;
	}
}

/* T_heal: from here on the network is clean and every member is up, and
 * every request waiting now or made later must be granted within B (I4). */
static void heal_point(struct sim_run *run)
{
	trace(run, "HEAL: faults over; every request must now be granted within %" PRIu64
	      " ms", run->bound_us / MS);
	run->cl.net.loss_on = false;
	run->p_hb_loss = 0;
	if (run->cl.net.max_delay_us > 2 * MS)
		run->cl.net.max_delay_us = 2 * MS;
	/* A clean network answers within the ack timeout, however short. */
	if (run->cls == SIM_CLASS_MIXED && run->cl.net.max_delay_us > run->cl.layout.ack_timeout_ms * MS / 3)
		run->cl.net.max_delay_us = run->cl.layout.ack_timeout_ms * MS / 3;
	run->healed = true;
	for (uint32_t i = 0; i < run->cl.n; i++) {
		run->nodes[i].tear = run->nodes[i].slow_fsync = false;
		if (run->nodes[i].life == NODE_DOWN || run->nodes[i].paused)
			fail(run, "sim", "n%u is still down or paused at T_heal", i);
	}
	if (run->cl.net.cut || run->cl.net.dcut)
		fail(run, "sim", "a partition is still in place at T_heal");
	for (uint32_t c = 0; c < run->nclients; c++)
		if (run->clients[c].state == CL_WAIT)
			schedule(run, run->t_heal + run->bound_us + 1, EV_CHECK,
				 run->clients[c].node, (uint32_t)run->clients[c].req, 0);
}

/* ---- the plan of a run ---- */

static void add_fault_pair(struct sim_run *run, enum fault_kind kind, uint64_t t,
			   enum fault_kind undo, uint64_t t_undo)
{
	if (run->nfaults + 2 > SIM_MAX_FAULTS)
		return;
	int a = run->nfaults++, b = run->nfaults++;
	run->faults[a] = (struct sim_fault){.kind = kind, .t = t, .pair = b, .node = -1};
	run->faults[b] = (struct sim_fault){.kind = undo, .t = t_undo, .pair = a, .node = -1};
}

static enum disk_fate draw_fate(struct sim_run *run, double p_kept)
{
	if (simnet_rng_chance(&run->cl.rng, p_kept))
		return DISK_KEPT;
	return simnet_rng_chance(&run->cl.rng, 0.5) ? DISK_LOST : DISK_ROLLBACK;
}

/* A crash (or a leave) and its restart between FROM and TO ms. */
static uint64_t plan_crash(struct sim_run *run, uint64_t from, uint64_t to, double p_kept,
			   bool tear)
{
	struct simnet_rng *r = &run->cl.rng;
	uint64_t t = simnet_rng_range(r, from, to) * MS;
	uint64_t back = t + simnet_rng_range(r, 50, 3000) * MS;
	add_fault_pair(run, tear ? F_TEAR : F_CRASH, t, F_RESTART, back);
	run->faults[run->nfaults - 2].prefer_holder = simnet_rng_chance(r, 0.5);
	run->faults[run->nfaults - 2].graceful = !tear && simnet_rng_chance(r, 0.25);
	run->faults[run->nfaults - 1].disk = draw_fate(run, p_kept);
	return back;
}

/* A stall of a kind drawn across the pause detector's edges (§5.5): a
 * pause of any member, or a slow fsync armed from T to T_UNDO. The longest
 * it may last is fixed now, so that it ends before T_heal. */
static uint64_t plan_stall(struct sim_run *run, bool fsync, uint64_t from, uint64_t to)
{
	struct simnet_rng *r = &run->cl.rng;
	uint64_t t = simnet_rng_range(r, from, to) * MS;
	uint64_t t_undo = fsync ? t + simnet_rng_range(r, 100, 2000) * MS : t + 1;
	add_fault_pair(run, fsync ? F_SLOW_FSYNC : F_PAUSE_ANY, t, F_DISARM, t_undo);
	struct sim_fault *f = &run->faults[run->nfaults - 2];
	f->len = (enum pause_len)simnet_rng_below(r, 4);
	/* The edges sit past the member's next deadline, at most a lease or a
	 * loss timeout away; a long pause is up to 3 loss timeouts. */
	uint64_t lt = run->cl.layout.loss_timeout_ms * MS;
	uint64_t lease = run->cl.layout.lease_ms * MS;
	f->max_us = (lease > lt ? lease : lt) + 3 * lt + 2 * MS;
	return t_undo + f->max_us;
}

/* mixed: every fault at once, drawn while the run goes (§8). */
static uint64_t plan_mixed(struct sim_run *run)
{
	struct simnet_rng *r = &run->cl.rng;
	uint64_t last = 0, e;
	run->crash_minority = simnet_rng_chance(r, 0.5);
	if (run->nfaults < SIM_MAX_FAULTS) {
		struct sim_fault *f = &run->faults[run->nfaults++];
		*f = (struct sim_fault){.kind = F_NETWORK, .t = simnet_rng_range(r, 0, 2000) * MS,
					.pair = -1, .node = -1};
	}
	uint64_t k = simnet_rng_range(r, 2, 6);
	bool cut = false, dcut = false;
	for (uint64_t j = 0; j < k; j++) {
		switch (simnet_rng_below(r, 6)) {
		case 0:
			e = plan_crash(run, 300, 5000, 0.8, false);
			break;
		case 1:
			e = plan_stall(run, false, 300, 5000);
			break;
		case 2:
			e = plan_stall(run, true, 300, 5000);
			break;
		case 3:
			e = plan_crash(run, 300, 5000, 0.8, true);
			break;
		default: {
			/* One partition and one directed cut at most: each heals
			 * what it made. */
			bool directed = simnet_rng_chance(r, 0.5) ? !dcut : cut;
			if (directed ? dcut : cut) {
				e = plan_stall(run, false, 300, 5000);
				break;
			}
			uint64_t t = simnet_rng_range(r, 300, 4000) * MS;
			uint64_t len = simnet_rng_range(r, 200, 3000) * MS;
			add_fault_pair(run, directed ? F_DCUT : F_PARTITION, t,
				       directed ? F_DHEAL : F_HEAL, t + len);
			struct sim_fault *f = &run->faults[run->nfaults - 2];
			f->dcut = (int)simnet_rng_below(r, 3);
			uint64_t all = run->cl.n == 64 ? UINT64_MAX : (1ull << run->cl.n) - 1;
			f->side = simnet_rng_chance(r, 0.5) ? 1ull << simnet_rng_below(r, run->cl.n)
							    : (simnet_rng_next(r) & all);
			if (f->side == 0 || f->side == all)
				f->side = 1;
			if (directed)
				dcut = true;
			else
				cut = true;
			e = t + len;
			break;
		}
		}
		if (e > last)
			last = e;
	}
	return last;
}

/* disk: crashes whose disk kept, lost or rolled back its state, torn steps
 * and slow fsyncs, on a clean network. */
static uint64_t plan_disk(struct sim_run *run)
{
	struct simnet_rng *r = &run->cl.rng;
	uint64_t last = 0, e;
	run->crash_minority = simnet_rng_chance(r, 0.5);
	uint64_t k = simnet_rng_range(r, 1, 4);
	for (uint64_t j = 0; j < k; j++) {
		switch (simnet_rng_below(r, 3)) {
		case 0:
			e = plan_crash(run, 300, 5000, 0.4, false);
			break;
		case 1:
			e = plan_crash(run, 300, 5000, 0.4, true);
			break;
		default:
			e = plan_stall(run, true, 300, 5000);
			break;
		}
		if (e > last)
			last = e;
	}
	return last;
}

static uint64_t plan_faults(struct sim_run *run)
{
	struct simnet_rng *r = &run->cl.rng;
	uint64_t last = 0;
	switch (run->cls) {
	case SIM_CLASS_HEALTHY:
		return 0;
	case SIM_CLASS_LOSSY:
		run->cl.net.loss_on = true;
		run->cl.net.p_loss = (double)simnet_rng_range(r, 1, 10) / 100.0;
		run->cl.net.p_dup = (double)simnet_rng_range(r, 0, 5) / 100.0;
		run->cl.net.p_slow = 0.02;
		run->cl.net.max_delay_us = 5 * MS;
		run->cl.net.slow_delay_us = 30 * MS;
		return simnet_rng_range(r, 3000, 8000) * MS;
	case SIM_CLASS_CRASH: {
		run->crash_minority = simnet_rng_chance(r, 0.5);
		uint64_t k = simnet_rng_range(r, 1, 4);
		for (uint64_t j = 0; j < k; j++) {
			uint64_t t = simnet_rng_range(r, 300, 6000) * MS;
			uint64_t back = t + simnet_rng_range(r, 50, 3000) * MS;
			add_fault_pair(run, F_CRASH, t, F_RESTART, back);
			run->faults[run->nfaults - 2].prefer_holder = simnet_rng_chance(r, 0.5);
			run->faults[run->nfaults - 2].graceful = simnet_rng_chance(r, 0.25);
			if (back > last)
				last = back;
		}
		break;
	}
	case SIM_CLASS_PAUSE: {
		uint64_t k = simnet_rng_range(r, 1, 3);
		for (uint64_t j = 0; j < k; j++) {
			uint64_t t = simnet_rng_range(r, 500, 5000) * MS;
			uint64_t len = run->cl.layout.loss_timeout_ms * simnet_rng_range(r, 500, 3000);
			add_fault_pair(run, F_PAUSE, t, F_RESUME, t + len);
			if (t + len > last)
				last = t + len;
		}
		break;
	}
	case SIM_CLASS_PARTITION: {
		uint64_t k = simnet_rng_range(r, 1, 3);
		uint64_t t = simnet_rng_range(r, 300, 1500) * MS;
		uint64_t all = run->cl.n == 64 ? UINT64_MAX : (1ull << run->cl.n) - 1;
		for (uint64_t j = 0; j < k; j++) {
			uint64_t len = simnet_rng_range(r, 1000, 5000) * MS;
			uint64_t side = 0;
			if (simnet_rng_chance(r, 0.5)) {
				side = 1ull << simnet_rng_below(r, run->cl.n);
			} else {
				for (int tries = 0; tries < 100 && (side == 0 || side == all); tries++)
					side = simnet_rng_next(r) & all;
				if (side == 0 || side == all)
					side = 1;
			}
			add_fault_pair(run, F_PARTITION, t, F_HEAL, t + len);
			run->faults[run->nfaults - 2].side = side;
			t += len;
			last = t;
			t += simnet_rng_range(r, 200, 1500) * MS;
		}
		break;
	}
	case SIM_CLASS_MIXED:
		last = plan_mixed(run);
		break;
	case SIM_CLASS_DISK:
		last = plan_disk(run);
		break;
	default:
		break;
	}
	return last + simnet_rng_range(r, 100, 1000) * MS;
}

/* mixed: timings drawn across what ring_layout_check allows, the heartbeat
 * down to loss_timeout / 4, retries 0..5, short and long acks and leases,
 * both idle passes and both quorum rules. */
static void plan_timings(struct sim_run *run)
{
	struct simnet_rng *r = &run->cl.rng;
	struct ring_layout *L = &run->cl.layout; /* cluster_set_layout below takes it */
	L->loss_timeout_ms = (uint32_t)simnet_rng_range(r, 200, 1000);
	L->heartbeat_ms = L->loss_timeout_ms / (uint32_t)simnet_rng_range(r, 4, 12);
	L->retries = (uint32_t)simnet_rng_range(r, 0, 5);
	L->ack_timeout_ms = simnet_rng_chance(r, 0.3) ? 2 : (uint32_t)simnet_rng_range(r, 5, 60);
	L->lease_ms = simnet_rng_chance(r, 0.5) ? (uint32_t)simnet_rng_range(r, 20, 100)
						: (uint32_t)simnet_rng_range(r, 300, 2000);
	L->idle_pass_ms = simnet_rng_chance(r, 0.5) ? 0 : (uint32_t)simnet_rng_range(r, 1, 30);
	L->quorum = simnet_rng_chance(r, 0.5) ? RING_QUORUM_NONE : RING_QUORUM_MAJORITY;
}

/* mixed: loss, duplication and reordering until T_heal, heartbeats lost
 * alone, and a few copies delayed by several loss timeouts, long enough to
 * land in a later epoch. The usual delays stay within a third of the ack
 * timeout, or a 2 ms ack could never be met. */
static void plan_network(struct sim_run *run)
{
	struct simnet_rng *r = &run->cl.rng;
	const struct ring_layout *L = &run->cl.layout;
	/* The network's faults begin at F_NETWORK, so every run has a fault-free
	 * start where I2 is checked. */
	run->cl.net.loss_on = false;
	run->cl.net.p_loss = (double)simnet_rng_range(r, 0, 8) / 100.0;
	run->cl.net.p_dup = (double)simnet_rng_range(r, 0, 5) / 100.0;
	run->cl.net.p_slow = (double)simnet_rng_range(r, 0, 20) / 1000.0;
	uint64_t third = L->ack_timeout_ms * MS / 3;
	run->cl.net.max_delay_us = third < 2 * MS ? third : 2 * MS;
	run->cl.net.slow_delay_us = L->loss_timeout_ms * MS * simnet_rng_range(r, 1, 4);
	run->in_flight_us = run->cl.net.slow_delay_us;
	run->hb_loss_planned = simnet_rng_chance(r, 0.5) ? (double)simnet_rng_range(r, 5, 40) / 100.0 : 0;
	run->leaves_left = (uint32_t)simnet_rng_range(r, 0, 3);
	run->p_leave_recv = 0.01;
}

/* Chooses the ring, its timings, its clients and its faults from the seed. */
/* An old ring (issue 28): a quarter of the runs of the classes that lose
 * disks begin with every member's disk holding an epoch of one generation
 * more than a jump (§4.2) above 0, as if the ring had minted 2^16
 * generations before. A member restarting on a lost disk then hears only
 * epochs beyond its reach, and must climb to the ring's on two answers that
 * vouch for it (one on a keyed ring of two, §5.3), then catch up. From a
 * stream of its own, so that the rest of the run draws as it would. */
static void plan_old_ring(struct sim_run *run)
{
	if (run->cls != SIM_CLASS_DISK && run->cls != SIM_CLASS_MIXED)
		return;
	struct simnet_rng rng;
	simnet_rng_seed(&rng, run->seed, "old-ring");
	if (!simnet_rng_chance(&rng, 0.25))
		return;
	uint32_t gen = 0x10001u + (uint32_t)simnet_rng_below(&rng, 0x10000u);
	for (uint32_t i = 0; i < run->cl.n; i++)
		disk_write(&run->nodes[i], gen << 8 | i);
	trace(run, "  an old ring: every disk starts at generation %" PRIu32, gen);
}

/* Renewal in a third of the runs of every class but the biggest rings:
 * long holds of up to three leases, renewed every third of a lease, and in
 * half of those a max_hold_ms that cuts some of them short (a REVOKE). */
static bool sim_no_renew; /* --no-renew: the runs as drawn before renewal */

static void plan_renewal(struct sim_run *run, bool big)
{
	struct ring_layout *L = &run->cl.layout;
	simnet_rng_seed(&run->renew_rng, run->seed, "renew");
	run->renew = !sim_no_renew && !big && simnet_rng_chance(&run->renew_rng, 0.35);
	if (!run->renew)
		return;
	run->long_us = 3 * (uint64_t)L->lease_ms * MS;
	run->renew_us = (uint64_t)L->lease_ms * MS / 3;
	if (simnet_rng_chance(&run->renew_rng, 0.5))
		L->max_hold_ms = (uint32_t)simnet_rng_range(&run->renew_rng, L->lease_ms,
							    3 * L->lease_ms);
}

static void plan(struct sim_run *run)
{
	struct simnet_rng *r = &run->cl.rng;
	struct ring_layout *L = &run->cl.layout;
	uint64_t pick = simnet_rng_below(r, 100);
	size_t n = pick < 1 ? 64 : pick < 4 ? 16 : (size_t)simnet_rng_range(r, 2, 9);
	bool big = n >= 16;
	run->cl.n = n;
	simcheck_init(&run->chk, &(struct simcheck_config){.n = n});

	ring_layout_defaults(L);
	snprintf(L->name, sizeof L->name, "sim");
	L->ack_timeout_ms = 20;
	L->retries = 3;
	L->heartbeat_ms = simnet_rng_chance(r, 0.5) ? 50 : 100;
	L->loss_timeout_ms = simnet_rng_chance(r, 0.5) ? 600 : 1000;
	L->lease_ms = (uint32_t)simnet_rng_range(r, 100, 400);
	static const uint32_t idle[] = {0, 0, 2, 10};
	L->idle_pass_ms = idle[simnet_rng_below(r, 4)];
	L->quorum = run->cls == SIM_CLASS_PARTITION && simnet_rng_chance(r, 0.5) ? RING_QUORUM_NONE
									: RING_QUORUM_MAJORITY;
	if (run->cls == SIM_CLASS_MIXED)
		plan_timings(run);
	plan_renewal(run, big);
	L->n = n;
	for (size_t i = 0; i < n; i++) {
		uint16_t id = 0;
		for (int tries = 0; tries < 1000 && id == 0; tries++) {
			id = (uint16_t)simnet_rng_range(r, 1, 65535);
			for (size_t j = 0; j < i; j++)
				if (L->members[j].id == id)
					id = 0;
		}
		L->members[i].id = id;
		snprintf(L->members[i].host, sizeof L->members[i].host, "sim");
		L->members[i].port = (uint16_t)(7000 + i);
	}
	char err[256];
	if (ring_layout_check(L, err, sizeof err) < 0) {
		fail(run, "setup", "ring_layout_check: %s", err);
		return;
	}

	/* The simulated network forges nothing: it is a keyed ring's. */
	L->keyed = true;
	run->contention = run->cls == SIM_CLASS_HEALTHY && simnet_rng_chance(r, 0.5);
	run->sparse = !run->contention && simnet_rng_chance(r, 0.4);
	run->chk.cfg.floor = L->quorum == RING_QUORUM_MAJORITY;
	run->chk.cfg.ring_order = run->contention;
	simcheck_elect_config(&run->chk, &(struct simcheck_elect_config){
		L->loss_timeout_ms * MS, L->ack_timeout_ms * MS, L->retries,
		L->quorum == RING_QUORUM_MAJORITY ? n / 2 + 1 : 0});
	run->overrun = run->cls != SIM_CLASS_HEALTHY && !big;
	uint64_t cap_ms = big ? 20 : 60;
	if (cap_ms > L->lease_ms)
		cap_ms = L->lease_ms;
	run->cs_cap_us = cap_ms * MS;
	run->cs_fixed_us = simnet_rng_range(r, 1 * MS, run->cs_cap_us);
	/* cs_max = min(lease, the longest CS a client of this run may want). */
	run->cs_max_us = run->contention ? run->cs_fixed_us
			 : run->overrun  ? L->lease_ms * MS
					 : run->cs_cap_us;
	/* A renewed hold keeps the token up to long_us, or max_hold_ms. */
	run->renew = run->renew && !run->contention;
	if (run->renew) {
		uint64_t held = run->long_us;
		if (L->max_hold_ms && L->max_hold_ms * MS < held)
			held = L->max_hold_ms * MS;
		if (held > run->cs_max_us)
			run->cs_max_us = held;
	}
	run->cl.net.min_delay_us = SIM_MIN_DELAY_US;
	run->cl.net.max_delay_us = 2 * MS;
	run->cl.net.slow_delay_us = 2 * MS;
	/* Some healthy rings run at loopback speed, hops of a few microseconds:
	 * whatever the token measures of time must still add up there. */
	if ((run->cls == SIM_CLASS_HEALTHY || run->cls == SIM_CLASS_CRASH) && simnet_rng_chance(r, 0.3)) {
		run->cl.net.min_delay_us = 5;
		run->cl.net.max_delay_us = run->cl.net.slow_delay_us = 30;
	}
	/* I2 holds while no copy is later than half of the smaller of the
	 * retry budget and the heartbeat: a pass and its ack, there and back,
	 * then fit in the budget, so no copy of the token is made without a
	 * lost ack (§3.2); and no member's silence grows by more than half a
	 * heartbeat, far below loss_timeout >= 4 heartbeats, so nobody
	 * regenerates a live token (§6.2). */
	uint64_t budget = (uint64_t)L->ack_timeout_ms * (L->retries + 1);
	run->late_us = (budget < L->heartbeat_ms ? budget : L->heartbeat_ms) * MS / 2;
	if (run->cls == SIM_CLASS_MIXED)
		plan_network(run);

	if (!cluster_set_layout(&run->cl, L))
		return;
	run->nodes = calloc(n, sizeof *run->nodes);
	/* 1..3 clients per member; big rings get fewer: one per member at 16,
	 * one on each of up to 16 random members at 64. */
	uint32_t per[SIM_MAX_N] = {0};
	for (size_t i = 0; i < n; i++)
		per[i] = run->contention || n == 16 ? 1 : big ? 0 : (uint32_t)simnet_rng_range(r, 1, 3);
	if (run->sparse && !big) { /* 1 or 2 clients on some members, at least one */
		for (size_t i = 0; i < n; i++)
			per[i] = simnet_rng_chance(r, 0.4) ? (uint32_t)simnet_rng_range(r, 1, 2) : 0;
		per[simnet_rng_below(r, n)] = 1;
	}
	if (n == 64)
		for (int k = 0; k < 16; k++)
			per[simnet_rng_below(r, n)] = 1;
	uint32_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += per[i];
	run->clients = calloc(total ? total : 1, sizeof *run->clients);
	if (!run->nodes || !run->clients) {
		fail(run, "sim", "out of memory (nodes)");
		return;
	}
	run->nclients = total;
	uint32_t c = 0;
	for (size_t i = 0; i < n; i++) {
		struct sim_node *nd = &run->nodes[i];
		nd->first_client = c;
		nd->nclients = per[i];
		for (uint32_t k = 0; k < per[i]; k++, c++)
			run->clients[c].node = (uint32_t)i;
		nd->start_at = run->contention ? 0 : simnet_rng_range(r, 0, 20 * MS);
	}

	plan_old_ring(run);

	/* B = 3*loss + 2*n*ack*(retries+1) + 3*n*(cs_max + ack), in µs. */
	uint64_t ack = L->ack_timeout_ms * MS;
	run->bound_us = 3 * (L->loss_timeout_ms * MS) + 2 * n * ack * (L->retries + 1) +
			3 * n * (run->cs_max_us + ack);
	/* mixed: a copy sent before T_heal may still land after it, as late as
	 * in_flight_us, and disturb the ring once more (a stale token dropped, an
	 * old election): B waits for it to land, then one more detection. */
	if (run->in_flight_us)
		run->bound_us += run->in_flight_us + L->loss_timeout_ms * MS;
	run->t_heal = plan_faults(run);
	run->t_settle = run->t_heal + run->bound_us;
	run->t_end = run->t_heal + run->bound_us * 3 / 2;
	if (run->t_end < run->t_heal * 5 / 3)
		run->t_end = run->t_heal * 5 / 3;

	plan_aims(run);

	for (uint32_t i = 0; i < n; i++)
		schedule(run, run->nodes[i].start_at, EV_START, i, 0, 0);
	for (int k = 0; k < run->nfaults; k++)
		schedule(run, run->faults[k].t, EV_FAULT, 0, (uint32_t)k, 0);
	schedule(run, run->t_heal, EV_HEAL, 0, 0, 0);
}

static void trace_plan(const struct sim_run *run)
{
	const struct ring_layout *L = &run->cl.layout;
	printf("sim %s seed %" PRIu64 ": n=%zu quorum=%s lease=%" PRIu32 "ms ack=%" PRIu32
	       "ms retries=%" PRIu32 " heartbeat=%" PRIu32 "ms loss_timeout=%" PRIu32
	       "ms idle_pass=%" PRIu32 "ms\n", class_names[run->cls], run->seed, run->cl.n,
	       L->quorum == RING_QUORUM_NONE ? "none" : "majority", L->lease_ms,
	       L->ack_timeout_ms, L->retries, L->heartbeat_ms, L->loss_timeout_ms,
	       L->idle_pass_ms);
	printf("  members:");
	for (size_t i = 0; i < run->cl.n; i++)
		printf(" n%zu=id%u(%u client%s)", i, L->members[i].id, run->nodes[i].nclients,
		       run->nodes[i].nclients == 1 ? "" : "s");
	printf("\n  clients: %s, cs up to %" PRIu64 " ms%s; cs_max %" PRIu64 " ms\n",
	       run->contention ? "contention (think 0, fixed CS)"
	       : run->sparse   ? "sparse (think 0 or up to 3 heartbeats)"
			       : "think 0..50 ms",
	       run->contention ? run->cs_fixed_us / MS : run->cs_cap_us / MS,
	       run->overrun ? ", 5% overrun the lease" : "", run->cs_max_us / MS);
	if (run->renew)
		printf("  renewal: 15%% of holds last up to %" PRIu64 " ms, renewing every %" PRIu64
		       " ms; max_hold_ms %" PRIu32 "\n", run->long_us / MS, run->renew_us / MS,
		       L->max_hold_ms);
	if (run->cls == SIM_CLASS_LOSSY || run->cls == SIM_CLASS_MIXED)
		printf("  network: loss %.0f%% dup %.0f%% delay up to %.3f ms (%.1f%% up to %" PRIu64
		       " ms), heartbeats lost alone %.0f%%, %u leave(s) after a token at %.0f%%"
		       " until T_heal; I2 needs copies below %.3f ms\n", run->cl.net.p_loss * 100,
		       run->cl.net.p_dup * 100, (double)run->cl.net.max_delay_us / 1e3,
		       run->cl.net.p_slow * 100, run->cl.net.slow_delay_us / MS, run->p_hb_loss * 100,
		       run->leaves_left, run->p_leave_recv * 100, (double)run->late_us / 1e3);
	if (run->cls == SIM_CLASS_MIXED)
		printf("  (heartbeats: %.0f%% lost alone once the network's faults begin)\n",
		       run->hb_loss_planned * 100);
	for (int k = 0; k < run->nfaults; k++) {
		static const char *const fates[] = {"", " (disk lost)", " (disk rolled back)"};
		static const char *const lens[] = {" (short)", " (just below detection)",
						   " (just above detection)", " (long)"};
		const struct sim_fault *f = &run->faults[k];
		printf("  fault %d: %s at %.3f s%s%s\n", k, fault_names[f->kind], (double)f->t / 1e6,
		       f->kind == F_RESTART ? fates[f->disk] : "",
		       f->kind == F_PAUSE_ANY || f->kind == F_SLOW_FSYNC ? lens[f->len] : "");
	}
	if (run->cls == SIM_CLASS_CRASH || run->cls == SIM_CLASS_MIXED || run->cls == SIM_CLASS_DISK)
		printf("  crashes: %s\n", run->crash_minority ? "a majority stays up"
							     : "unconstrained");
	printf("  T_heal %.3f s, bound B %.3f s, settle %.3f s, end %.3f s\n",
	       (double)run->t_heal / 1e6, (double)run->bound_us / 1e6,
	       (double)run->t_settle / 1e6, (double)run->t_end / 1e6);
}

/* ---- one event ---- */

static void hold(struct sim_run *run, struct u32vec *vec, uint32_t item)
{
	if (!vec_push(vec, item))
		fail(run, "sim", "out of memory (paused events)");
}

/* Returns true when the item was kept (held for a paused member). */
static bool dispatch(struct sim_run *run, uint32_t idx)
{
	struct simnet_item *it = &run->cl.q.items[idx];
	struct sim_node *nd = &run->nodes[it->node];
	switch ((enum sim_kind)it->kind) {
	case EV_START:
		node_start(run, it->node);
		return false;
	case EV_TICK:
		if (nd->life != NODE_UP || !cluster_tick_current(&run->cl, it))
			return false;
		if (nd->paused) {
			hold(run, &nd->held_events, idx);
			return true;
		}
		trace(run, "n%u tick", it->node);
		node_step(run, it->node, RING_EVENT_TICK, NULL, 0);
		return false;
	case EV_DELIVER: {
		bool up = nd->life == NODE_UP;
		if (run->cl.trace) {
			char text[512];
			msg_text(run, it->buf, it->len, text, sizeof text);
			int name = (int)strcspn(text, " ");
			trace(run, "n%u %s %.*s from n%u:%s", it->node,
			      !up ? "(down) drops"
			      : link_cut(run, it->src, it->node) ? "(cut off) drops"
			      : nd->paused ? "(paused) holds"
					   : "recv",
			      name, text, it->src, text + name);
		}
		if (!up || link_cut(run, it->src, it->node))
			return false;
		if (nd->paused) {
			hold(run, &nd->held_events, idx);
			return true;
		}
		node_step(run, it->node, RING_EVENT_DATAGRAM, it, 0);
		return false;
	}
	case EV_CLIENT:
		if (it->gen != run->clients[it->arg].gen)
			return false;
		if (nd->paused) {
			hold(run, &nd->held_clients, idx);
			return true;
		}
		client_fire(run, it->arg);
		return false;
	case EV_FAULT:
		fault_fire(run, it->arg);
		return false;
	case EV_HEAL:
		heal_point(run);
		return false;
	case EV_CHECK: {
		uint64_t t_req = it->arg < run->chk.req_n ? run->chk.req[it->arg].t_req : 0;
		simcheck_request_due(&run->chk, it->arg, t_req > run->t_heal ? t_req : run->t_heal,
				     run->bound_us);
		return false;
	}
	case EV_LEAVE:
		if (nd->life == NODE_UP && it->gen == nd->life_gen && !nd->paused) {
			trace(run, "FAULT leave n%u (SIGTERM, right after it took the token)", it->node);
			node_step(run, it->node, RING_EVENT_LEAVE, NULL, 0);
		}
		return false;
	case EV_RESTART:
		if (nd->life == NODE_UP && it->gen == nd->life_gen) {
			/* Its leave never finished, or never began (it was
			 * paused): the supervisor kills it and starts it again. */
			node_crash(run, it->node);
		}
		if (nd->life == NODE_DOWN)
			node_restart(run, it->node, (enum disk_fate)it->arg);
		return false;
	case EV_RESUME:
		if (nd->life == NODE_UP && nd->paused && it->gen == nd->pause_gen)
			node_resume(run, it->node);
		return false;
	case EV_AIMED:
		if (nd->life == NODE_UP && it->gen == nd->life_gen && !nd->paused)
			aim_fire(run, it->node, (enum aim_kind)it->arg);
		return false;
	}
	return false;
}

static void run_free(struct sim_run *run)
{
	for (uint32_t i = 0; run->nodes && i < run->cl.n; i++) {
		node_stop(run, i);
		free(run->nodes[i].held_clients.v);
		free(run->nodes[i].held_events.v);
		free(run->nodes[i].deferred);
	}
	free(run->nodes);
	free(run->clients);
	cluster_free(&run->cl);
	simcheck_free(&run->chk);
	simcheck_memb_free(&run->memb);
}

/* One seed of one class, start to end. */
/* Liveness once the ring has settled (simcheck_settled): what it sent from
 * T_settle to the end against the configuration's rates, and one token. */
static void check_settled(struct sim_run *run)
{
	const struct ring_layout *l = &run->cl.layout;
	const uint64_t *k = run->settled_sent;
	struct simcheck_rates r = {
		.window_us = run->t_end - run->t_settle,
		.n = run->cl.n,
		.idle_pass_us = l->idle_pass_ms * MS,
		.loss_us = l->loss_timeout_ms * MS,
		.heartbeat_us = l->heartbeat_ms * MS,
		.lease_us = l->lease_ms * MS,
		.grants = run->settled_grants,
		.requests = run->settled_requests,
		.parks = run->settled_parks,
		.renews = run->settled_renews,
		.beat_acks = k[RING_MSG_HEARTBEAT_ACK],
		.hops = k[RING_MSG_TOKEN],
		.acks = k[RING_MSG_TOKEN_ACK],
		.heartbeats = k[RING_MSG_HEARTBEAT],
		.wants = k[RING_MSG_WANT] - run->settled_want_forwards - run->settled_want_copies,
		.want_forwards = run->settled_want_forwards,
		.want_copies = run->settled_want_copies,
		.recovery = k[RING_MSG_ELECTION] + k[RING_MSG_ELECTION_ACK] + k[RING_MSG_JOIN] +
			    k[RING_MSG_LEAVE] + k[RING_MSG_EPOCH_QUERY] + k[RING_MSG_EPOCH_REPLY] -
			    run->settled_floor_queries - run->settled_floor_replies -
			    run->settled_floor_joins +
			    (run->settled_floor_queries > (uint64_t)run->cl.n * (run->cl.n - 1)
				     ? run->settled_floor_queries - (uint64_t)run->cl.n * (run->cl.n - 1)
				     : 0),
		.recovery_kind = run->settled_recovery ? ring_msg_name(run->settled_recovery) : NULL,
	};
	simcheck_settled(&run->chk, &r);
	if (!failed(run))
		simcheck_one_token(&run->chk);
}

static void run_one(enum sim_class cls, uint64_t seed, bool trace_on, bool keep_disks,
		    struct sim_result *out)
{
	struct sim_run *run = calloc(1, sizeof *run);
	if (!run) {
		DRIVER_RESULT_OOM(out);
		return;
	}
	run->cls = cls;
	run->seed = seed;
	run->keep_disks = keep_disks;
	cluster_init(&run->cl, seed, class_names[cls], trace_on, SIM_EVENT_CAP, SIM_SAME_TIME_CAP);
	run->cl.on_fail = cluster_failed_hook;
	run->cl.fail_arg = run;
	plan(run);
	simcheck_pause_setup(&run->chk, run->cl.layout.loss_timeout_ms * MS,
			     run->cl.layout.heartbeat_ms * MS);
	simcheck_park_setup(&run->chk, run->cl.layout.loss_timeout_ms * MS);
	simcheck_memb_init(&run->memb, run->cl.n, run->cl.layout.heartbeat_ms * MS,
			   run->cl.layout.loss_timeout_ms * MS, run->cl.layout.ack_timeout_ms * MS,
			   run->cl.layout.retries);
	run->memb.leave_us = leave_deadline_us(run);
	if (trace_on && !failed(run))
		trace_plan(run);
	uint32_t item;
	while (!failed(run) && cluster_next(&run->cl, run->t_end, &item)) {
		run->chk.now = run->cl.now;
		if (!dispatch(run, item))
			item_free(run, item);
		if (failed(run) && run->cl.trace)
			printf("FAILED here: %s: %s\n", run->chk.inv, run->chk.what);
	}
	if (!failed(run))
		run->cl.now = run->t_end;
	run->res.overlaps = run->chk.overlaps;
	run->res.i2_us = run->chk.i2 ? run->cl.now : run->chk.i2_off_at;
	trace(run, "end: %" PRIu64 " events, %" PRIu64 " grants, %" PRIu64 " overlaps, %" PRIu64
	      " stale refused, %" PRIu64 " denied; I2 checked %s%s", run->cl.events, run->res.grants,
	      run->res.overlaps, run->res.stale, run->res.denies,
	      run->chk.i2 ? "throughout" : "until ", run->chk.i2 ? "" : run->chk.i2_off);
	/* One token heartbeats about once per heartbeat_ms, whoever holds it,
	 * plus one per renewal that asks for acks at once (§3.3); a healthy
	 * ring that sends far more has a storm (PROTOCOL.md §5.1). */
	uint64_t hb_budget = 2 * run->cl.now / (run->cl.layout.heartbeat_ms * MS) + run->res.renews +
			     4 * run->cl.n + 10;
	if (run->cls == SIM_CLASS_HEALTHY && !failed(run) && run->heartbeats > hb_budget)
		fail(run, "liveness", "%" PRIu64 " heartbeats in %.1f s, budget %" PRIu64,
		     run->heartbeats, (double)run->cl.now / 1e6, hb_budget);
	if (!failed(run) && run->t_end > run->t_settle)
		check_settled(run);
	run->res.virtual_us = run->cl.now;
	run->res.bound_us = run->bound_us;
	run->res.rotation_us = run->cl.n * (run->cs_max_us + run->cl.layout.ack_timeout_ms * MS);
	run->res.n = run->cl.n;
	if (run->chk.failed) {
		run->res.failed = true;
		snprintf(run->res.inv, sizeof run->res.inv, "%s", run->chk.inv);
		snprintf(run->res.what, sizeof run->res.what, "%s", run->chk.what);
	}
	run_free(run);
	*out = run->res;
	free(run);
}

/* ---- main ---- */

#ifndef SIM_NO_MAIN
static void usage(FILE *f)
{
	fprintf(f,
		"usage: sim --class CLASS [--seeds N] [--first S] [--trace] [--keep-disks] [--no-renew]\n"
		"       sim --class CLASS --seed S [--trace] [--keep-disks]\n"
		"Runs the ring's protocol core on a simulated network for N seeds (default 1)\n"
		"starting at S (default 1), checking its invariants after every step.\n"
		"CLASS: healthy | lossy | crash | pause | partition | mixed | disk.\n"
		"--trace prints every event and action of the run(s).\n"
		"--keep-disks: every restart finds its disk as it was left (the same seeds\n"
		"without lost or rolled-back state, to tell those failures from others).\n"
		"--no-renew: no client renews and max_hold_ms is unset (a third of the runs\n"
		"renew otherwise): the seeds as they ran before renewal existed.\n"
		"Exit: 0 all seeds passed, 1 an invariant failed, 2 usage.\n");
}

int main(int argc, char **argv)
{
	int cls = -1;
	struct driver_seeds sd = {.seeds = 1, .first = 1};
	bool trace_on = false, keep_disks = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--trace")) {
			trace_on = true;
		} else if (!strcmp(a, "--keep-disks")) {
			keep_disks = true;
		} else if (!strcmp(a, "--no-renew")) {
			sim_no_renew = true;
		} else if (!strcmp(a, "--class") && v) {
			cls = driver_lookup(v, class_names, SIM_CLASS_COUNT_);
			if (cls < 0) {
				return driver_usage_error(usage, "sim: unknown class '%s'\n", v);
			}
			i++;
		} else if (driver_seed_arg(&sd, a, v, 0)) {
			i++;
		} else {
			return driver_usage_error(usage, "sim: bad argument '%s'\n", a);
		}
	}
	if (cls < 0 || (sd.have_seed && sd.have_seeds)) {
		usage(stderr);
		return 2;
	}
	uint64_t seeds = driver_seed_count(&sd, 1), first = sd.first;

	double t0 = driver_wall_s();
	struct sim_result total = {0};
	double worst_frac = -1;
	struct sim_result worst = {0};
	for (uint64_t k = 0; k < seeds; k++) {
		uint64_t seed = first + k;
		struct sim_result r;
		run_one((enum sim_class)cls, seed, trace_on, keep_disks, &r);
		if (r.failed) {
			printf("FAIL class=%s seed=%" PRIu64 ": %s: %s\n", class_names[cls], seed,
			       r.inv, r.what);
			if (keep_disks)
				printf("replay: build/sim --class %s --seed %" PRIu64 " --trace --keep-disks\n",
				       class_names[cls], seed);
			else
				printf("replay: make sim SEED=%" PRIu64 " CLASS=%s\n", seed,
				       class_names[cls]);
			fflush(stdout);
			return 1;
		}
		total.virtual_us += r.virtual_us;
		total.i2_us += r.i2_us;
		total.grants += r.grants;
		total.overlaps += r.overlaps;
		total.stale += r.stale;
		total.elections += r.elections;
		total.regenerations += r.regenerations;
		total.parks += r.parks;
		total.summons += r.summons;
		total.aimed += r.aimed;
		total.renews += r.renews;
		total.tries += r.tries;
		total.try_refused += r.try_refused;
		total.long_holds += r.long_holds;
		total.swarm += r.swarm;
		double frac = r.bound_us ? (double)r.worst_us / (double)r.bound_us : 0;
		if (frac > worst_frac) {
			worst_frac = frac;
			worst = r;
		}
	}
	printf("sim %s: %" PRIu64 " seeds ok, %.1f virtual s in %.2f s; grants %" PRIu64
	       ", overlaps %" PRIu64 ", stale refused %" PRIu64 ", elections %" PRIu64
	       ", regenerations %" PRIu64 ", parks %" PRIu64 ", summons %" PRIu64
	       ", aimed faults %" PRIu64 " in %" PRIu64 " swarm runs"
	       ", renewed holds %" PRIu64 " (%" PRIu64 " renewals), tries %" PRIu64 " (%" PRIu64
	       " refused)"
	       "; worst post-heal grant delay %.1f ms = %.2f of bound"
	       " (%.1f rotations); I2 checked over %.0f%% of virtual time\n",
	       class_names[cls], seeds, (double)total.virtual_us / 1e6, driver_wall_s() - t0,
	       total.grants, total.overlaps, total.stale, total.elections, total.regenerations,
	       total.parks, total.summons, total.aimed, total.swarm, total.long_holds, total.renews,
	       total.tries, total.try_refused,
	       (double)worst.worst_us / 1e3, worst_frac < 0 ? 0 : worst_frac,
	       worst.rotation_us ? (double)worst.worst_us / (double)worst.rotation_us : 0,
	       total.virtual_us ? 100.0 * (double)total.i2_us / (double)total.virtual_us : 0);
	return 0;
}
#endif /* SIM_NO_MAIN */
