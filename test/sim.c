/* The deterministic simulator: virtual time, a seeded network and scheduled
 * faults drive every member's state machine (ring/node.c) through whole runs,
 * and the invariants of docs/PROTOCOL.md §8 are checked after every step. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "layout.h"
#include "node.h"
#include "simnet.h"
#include "wire.h"

#define SIM_CLASSES(X)                  \
	X(HEALTHY, "healthy")           \
	X(LOSSY, "lossy")               \
	X(CRASH, "crash")               \
	X(PAUSE, "pause")               \
	X(PARTITION, "partition")

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
#define SIM_MAX_FAULTS 16
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

/* Open addressing, key 0 reserved for "empty": fences and epochs are never 0. */
struct u64map {
	uint64_t *key;
	uint64_t *val;
	size_t cap, n;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint64_t *map_find(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->key[i] == key)
			return &m->val[i];
		if (m->key[i] == 0)
			return NULL;
	}
}

static bool map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
		if (!k || !v) {
			free(k);
			free(v);
			return false;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->key[i])
				continue;
			size_t j = mix64(m->key[i]) & (cap - 1);
			while (k[j])
				j = (j + 1) & (cap - 1);
			k[j] = m->key[i];
			v[j] = m->val[i];
		}
		free(m->key);
		free(m->val);
		m->key = k;
		m->val = v;
		m->cap = cap;
	}
	size_t i = mix64(key) & (m->cap - 1);
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->key[i])
		m->n++;
	m->key[i] = key;
	m->val[i] = val;
	return true;
}

static void map_free(struct u64map *m)
{
	free(m->key);
	free(m->val);
}

/* ---- the run ---- */

enum sim_kind {
	EV_START,   /* a node's first start */
	EV_TICK,    /* a node's deadline; stale unless gen is the node's tick_gen */
	EV_DELIVER, /* a datagram arrives */
	EV_CLIENT,  /* a client's next move; stale unless gen is the client's */
	EV_FAULT,   /* the fault schedule */
	EV_CHECK,   /* I4: a request's grant deadline */
	EV_HEAL,    /* T_heal: the faults are over */
};

enum node_life { NODE_OFF, NODE_UP, NODE_DOWN };

struct sim_node {
	uint16_t id;
	enum node_life life;
	bool paused;
	struct ring_node *rn;
	uint32_t tick_gen;
	uint64_t tick_at;       /* the pending tick, NEVER if none */
	uint32_t disk;          /* epoch of the last PERSIST, kept across crashes */
	uint32_t last_epoch;    /* highest status.epoch seen, kept across crashes */
	uint64_t start_at;
	bool have_status;
	bool left;              /* reported LEFT: stops once its step is done */
	struct ring_status status; /* as of the node's last step */
	struct u32vec held_clients; /* client events that came during a pause */
	struct u32vec held_events;  /* ticks and datagrams that came during a pause */
	uint32_t first_client, nclients;
};

enum client_state { CL_DOWN, CL_THINK, CL_WAIT, CL_CS };

struct sim_client {
	uint32_t node;
	enum client_state state;
	uint32_t gen;
	uint64_t fence;  /* while in the CS */
	size_t req;      /* current request */
};

enum request_state { RQ_WAIT, RQ_GRANTED, RQ_CANCELLED, RQ_DENIED, RQ_DROPPED };

struct sim_request {
	uint32_t client;
	enum request_state state;
	uint64_t t_req, t_grant;
};

enum fault_kind { F_CRASH, F_RESTART, F_PAUSE, F_RESUME, F_PARTITION, F_HEAL };

struct sim_fault {
	enum fault_kind kind;
	uint64_t t;
	int pair;          /* the fault that undoes this one */
	int node;          /* chosen when the fault fires; -1 if it was skipped */
	bool prefer_holder;
	bool graceful;     /* crash: a SIGTERM-style LEAVE instead of a crash */
	uint64_t side;     /* partition: members on side 1 */
};

struct sim_result {
	uint64_t virtual_us;
	uint64_t grants, overlaps, stale, denies;
	uint64_t elections, regenerations;
	uint64_t worst_us, bound_us, rotation_us;
	size_t n;
	char inv[16];
	char what[640];
	bool failed;
};

struct sim_run {
	enum sim_class cls;
	uint64_t seed;
	bool trace;
	struct simnet_rng rng;
	struct ring_layout layout;
	size_t n;
	struct sim_node *nodes;
	struct sim_client *clients;
	uint32_t nclients;

	/* event queue (simnet.h) */
	struct simnet_queue q;
	uint64_t now;
	uint64_t events, same_time, same_time_at;

	/* network (simnet.h) */
	struct simnet_link net;

	/* the plan */
	struct sim_fault faults[SIM_MAX_FAULTS];
	int nfaults;
	bool crash_minority;
	bool contention;
	bool overrun;
	bool i2;
	uint64_t cs_cap_us, cs_fixed_us, cs_max_us;
	uint64_t t_heal, t_settle, t_end, bound_us;
	bool healed;
	bool regenerated; /* a token exists since the first regeneration */
	uint64_t heartbeats; /* broadcasts sent */

	/* what the checks remember */
	struct u64map fences;       /* every granted fence */
	struct u64map epoch_last;   /* epoch -> its last granted fence */
	uint64_t fence_max;         /* the highest fence granted so far */
	struct u64map epoch_floor;  /* epoch -> fence_max when it was minted */
	uint32_t in_cs;
	int last_grant_node;
	uint64_t res_high;     /* the resource's newest fence */
	bool res_any;
	uint64_t accepted_max; /* the highest fence it accepted, kept apart */
	struct sim_request *req;
	size_t req_n, req_cap;

	struct ring_update upd;
	struct sim_result res;
};

/* ---- failures and the trace ---- */

static bool failed(const struct sim_run *run)
{
	return run->res.failed;
}

static void fail(struct sim_run *run, const char *inv, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct sim_run *run, const char *inv, const char *fmt, ...)
{
	if (run->res.failed)
		return; /* the first failure is the one to replay */
	run->res.failed = true;
	snprintf(run->res.inv, sizeof run->res.inv, "%s", inv);
	int off = snprintf(run->res.what, sizeof run->res.what, "t=%" PRIu64 ".%06" PRIu64 " ",
			   run->now / 1000000, run->now % 1000000);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(run->res.what + off, sizeof run->res.what - (size_t)off, fmt, ap);
	va_end(ap);
	if (run->trace)
		printf("FAILED here: %s: %s\n", inv, run->res.what);
}

static void trace(const struct sim_run *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void trace(const struct sim_run *run, const char *fmt, ...)
{
	if (!run->trace)
		return;
	printf("t=%4" PRIu64 ".%06" PRIu64 " ", run->now / 1000000, run->now % 1000000);
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* "n3" for the member at ring index 3, from its id. */
static const char *id_name(const struct sim_run *run, uint64_t id, char *buf, size_t cap)
{
	int i = id <= UINT16_MAX ? ring_layout_index(&run->layout, (uint16_t)id) : -1;
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
	case RING_MSG_TOKEN:
		set_text(&m.u.token.alive, run->n, set, sizeof set);
		snprintf(out, cap, "token epoch=%" PRIu32 " seq=%" PRIu32 " counter=%" PRIu32
			 " quiet_us=%" PRIu32 " alive=%s", m.u.token.epoch, m.u.token.seq,
			 m.u.token.counter, m.u.token.quiet_us, set);
		break;
	case RING_MSG_TOKEN_ACK:
		snprintf(out, cap, "token_ack epoch=%" PRIu32 " seq=%" PRIu32
			 " known_epoch=%" PRIu32 "%s", m.u.token_ack.epoch, m.u.token_ack.seq,
			 m.u.token_ack.known_epoch,
			 m.u.token_ack.flags & RING_ACK_STALE ? " STALE" : "");
		break;
	case RING_MSG_HEARTBEAT:
		set_text(&m.u.heartbeat.alive, run->n, set, sizeof set);
		snprintf(out, cap, "heartbeat epoch=%" PRIu32 " seq=%" PRIu32 " counter=%" PRIu32
			 " alive=%s", m.u.heartbeat.epoch, m.u.heartbeat.seq,
			 m.u.heartbeat.counter, set);
		break;
	case RING_MSG_ELECTION: {
		char who[16];
		set_text(&m.u.election.participants, run->n, set, sizeof set);
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
		snprintf(out, cap, "%s", ring_msg_name(m.type));
		break;
	}
}

/* ---- the event queue (simnet.c); running out of memory fails the run ---- */

static void nomem_check(struct sim_run *run)
{
	if (run->q.nomem)
		fail(run, "sim", "%s", run->q.nomem);
}

static void heap_push(struct sim_run *run, uint64_t t, uint32_t item)
{
	if (!simnet_push(&run->q, t, item))
		nomem_check(run);
}

/* A fresh item, or UINT32_MAX (the run has failed) when memory runs out. */
static uint32_t item_new(struct sim_run *run, enum sim_kind kind)
{
	uint32_t i = simnet_item_new(&run->q, (int)kind);
	if (i == UINT32_MAX)
		nomem_check(run);
	return i;
}

static void item_free(struct sim_run *run, uint32_t i)
{
	simnet_item_free(&run->q, i);
}

static void schedule(struct sim_run *run, uint64_t t, enum sim_kind kind, uint32_t node,
		     uint32_t arg, uint32_t gen)
{
	uint32_t i = item_new(run, kind);
	if (i == UINT32_MAX)
		return;
	run->q.items[i].node = node;
	run->q.items[i].arg = arg;
	run->q.items[i].gen = gen;
	heap_push(run, t, i);
}

/* ---- the network (simnet.c) ---- */

static bool link_cut(const struct sim_run *run, uint32_t a, uint32_t b)
{
	return simnet_link_cut(&run->net, a, b);
}

static void net_send(struct sim_run *run, uint32_t src, uint32_t dst, const uint8_t *buf,
		     uint16_t len)
{
	switch (simnet_send(&run->net, &run->rng, &run->q, run->now, EV_DELIVER, src, dst, buf,
			    len)) {
	case SIMNET_CUT:
		trace(run, "    .. n%u->n%u cut by the partition", src, dst);
		break;
	case SIMNET_LOST:
		trace(run, "    .. n%u->n%u lost", src, dst);
		break;
	case SIMNET_DUPLICATED:
		trace(run, "    .. n%u->n%u duplicated", src, dst);
		break;
	case SIMNET_SENT:
		break;
	}
	nomem_check(run);
}

/* ---- the fenced resource and the clients ---- */

static void resource_write(struct sim_run *run, uint32_t c, uint64_t fence, const char *when)
{
	if (run->res_any && fence < run->res_high) {
		run->res.stale++;
		trace(run, "c%u@n%u write at %s: fence %" PRIu64 ":%" PRIu64
		      " refused as stale (newest %" PRIu64 ":%" PRIu64 ")", c,
		      run->clients[c].node, when, fence >> 32, fence & 0xffffffffu,
		      run->res_high >> 32, run->res_high & 0xffffffffu);
		return;
	}
	/* The resource is the last line of defence: check what it accepted
	 * against its own record anyway. */
	if (fence < run->accepted_max)
		fail(run, "fencing", "accepted fence %" PRIx64 " below the accepted %" PRIx64,
		     fence, run->accepted_max);
	run->accepted_max = fence;
	run->res_high = fence;
	run->res_any = true;
	trace(run, "c%u@n%u write at %s: fence %" PRIu64 ":%" PRIu64 " accepted", c,
	      run->clients[c].node, when, fence >> 32, fence & 0xffffffffu);
}

static uint64_t think_us(struct sim_run *run)
{
	return run->contention ? 0 : simnet_rng_range(&run->rng, 0, 50 * MS);
}

static uint64_t cs_us(struct sim_run *run)
{
	if (run->contention)
		return run->cs_fixed_us;
	if (run->overrun && simnet_rng_chance(&run->rng, 0.05))
		return run->layout.lease_ms * MS + simnet_rng_range(&run->rng, 1 * MS,
							     run->layout.lease_ms * MS);
	return simnet_rng_range(&run->rng, 1 * MS, run->cs_cap_us);
}

static void client_think(struct sim_run *run, uint32_t c)
{
	struct sim_client *cl = &run->clients[c];
	cl->state = CL_THINK;
	cl->gen++;
	schedule(run, run->now + think_us(run), EV_CLIENT, cl->node, c, cl->gen);
}

static void node_step(struct sim_run *run, uint32_t i, enum ring_event_type type,
		      const struct simnet_item *it, uint64_t client);
static void node_crash(struct sim_run *run, uint32_t i);

static void client_acquire(struct sim_run *run, uint32_t c)
{
	struct sim_client *cl = &run->clients[c];
	if (run->req_n == run->req_cap) {
		size_t cap = run->req_cap ? run->req_cap * 2 : 1024;
		struct sim_request *r = realloc(run->req, cap * sizeof *r);
		if (!r) {
			fail(run, "sim", "out of memory (requests)");
			return;
		}
		run->req = r;
		run->req_cap = cap;
	}
	size_t r = run->req_n++;
	run->req[r] = (struct sim_request){c, RQ_WAIT, run->now, 0};
	cl->state = CL_WAIT;
	cl->req = r;
	cl->gen++;
	trace(run, "c%u@n%u acquire", c, cl->node);
	/* A few clients give up waiting (a cancel is a RELEASE while waiting). */
	if (!run->contention && simnet_rng_chance(&run->rng, 0.02))
		schedule(run, run->now + simnet_rng_range(&run->rng, 1 * MS, 2 * run->layout.lease_ms * MS),
			 EV_CLIENT, cl->node, c, cl->gen);
	if (run->healed)
		schedule(run, run->now + run->bound_us + 1, EV_CHECK, cl->node, (uint32_t)r, 0);
	node_step(run, cl->node, RING_EVENT_ACQUIRE, NULL, client_handle(c));
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
		run->req[cl->req].state = RQ_CANCELLED;
		client_think(run, c);
		node_step(run, cl->node, RING_EVENT_RELEASE, NULL, client_handle(c));
		break;
	case CL_CS:
		resource_write(run, c, cl->fence, "end");
		run->in_cs--;
		trace(run, "c%u@n%u leaves the CS: release", c, cl->node);
		client_think(run, c);
		node_step(run, cl->node, RING_EVENT_RELEASE, NULL, client_handle(c));
		break;
	}
}

/* ---- the checks on a step's actions ---- */

/* A PERSIST of an epoch nobody persisted before is its minting: remember
 * the highest fence granted until then. */
static void note_epoch(struct sim_run *run, uint32_t epoch)
{
	if (map_find(&run->epoch_floor, epoch))
		return;
	if (!map_put(&run->epoch_floor, epoch, run->fence_max))
		fail(run, "sim", "out of memory (epochs)");
}

/* SPEC: a regenerated token's fences are higher than every fence issued
 * before. With a majority quorum this holds in every run, for every new
 * epoch (PROTOCOL.md §4.4); with quorum = none the two sides of a partition
 * cannot know each other's fences. */
static void check_floor(struct sim_run *run, uint32_t i, uint64_t fence, uint32_t epoch)
{
	if (run->layout.quorum != RING_QUORUM_MAJORITY)
		return;
	uint64_t *floor = map_find(&run->epoch_floor, epoch);
	if (floor && fence <= *floor)
		fail(run, "I1", "n%u granted fence %" PRIu64 ":%" PRIu64 " but %" PRIu64
		     ":%" PRIu64 " was granted before epoch %" PRIu32 " was minted", i,
		     fence >> 32, fence & 0xffffffffu, *floor >> 32, *floor & 0xffffffffu,
		     epoch);
}

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

/* What a GRANT must satisfy before the client acts on it. */
static void check_grant(struct sim_run *run, uint32_t i, uint32_t c, uint64_t fence,
			uint32_t epoch)
{
	const struct sim_node *nd = &run->nodes[i];
	if (fence == 0 || (uint32_t)(fence >> 32) != epoch || epoch == 0)
		fail(run, "I1", "n%u granted fence %" PRIx64 " with epoch %" PRIu32
		     ": the fence is epoch << 32 | counter, never 0", i, fence, epoch);
	if (map_find(&run->fences, fence))
		fail(run, "I1", "n%u granted fence %" PRIu64 ":%" PRIu64 " to c%u a second time",
		     i, fence >> 32, fence & 0xffffffffu, c);
	uint64_t *last = map_find(&run->epoch_last, epoch);
	if (last && *last >= fence)
		fail(run, "I1", "n%u granted fence %" PRIu64 ":%" PRIu64 " after %" PRIu64
		     ":%" PRIu64 " in the same epoch", i, fence >> 32, fence & 0xffffffffu,
		     *last >> 32, *last & 0xffffffffu);
	check_floor(run, i, fence, epoch);
	if (!map_put(&run->fences, fence, 1) || !map_put(&run->epoch_last, epoch, fence))
		fail(run, "sim", "out of memory (fences)");
	if (fence > run->fence_max)
		run->fence_max = fence;
	if (nd->status.epoch != epoch)
		fail(run, "I3", "n%u granted under epoch %" PRIu32 " but its epoch is %" PRIu32,
		     i, epoch, nd->status.epoch);
	if (run->in_cs > 0) {
		run->res.overlaps++;
		if (run->i2)
			fail(run, "I2", "n%u granted c%u (fence %" PRIu64 ":%" PRIu64
			     ") while %u other client(s) are in the CS", i, c, fence >> 32,
			     fence & 0xffffffffu, run->in_cs);
	}
	if (run->contention) {
		if (run->last_grant_node >= 0 && i != ((uint32_t)run->last_grant_node + 1) % run->n)
			fail(run, "I5", "n%u granted after n%d: ring order wants n%u next", i,
			     run->last_grant_node, ((uint32_t)run->last_grant_node + 1) % (uint32_t)run->n);
		run->last_grant_node = (int)i;
	}
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
	check_grant(run, i, c, a->u.grant.fence, a->u.grant.epoch);
	struct sim_request *rq = &run->req[cl->req];
	rq->state = RQ_GRANTED;
	rq->t_grant = run->now;
	if (run->healed) {
		uint64_t from = rq->t_req > run->t_heal ? rq->t_req : run->t_heal;
		if (run->now - from > run->res.worst_us)
			run->res.worst_us = run->now - from;
	}
	run->res.grants++;
	cl->state = CL_CS;
	cl->fence = a->u.grant.fence;
	cl->gen++;
	run->in_cs++;
	resource_write(run, c, cl->fence, "start");
	schedule(run, run->now + cs_us(run), EV_CLIENT, i, c, cl->gen);
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
	run->in_cs--;
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
	if (cl->state != CL_WAIT)
		return;
	run->req[cl->req].state = RQ_DENIED;
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

static void on_send(struct sim_run *run, uint32_t i, const struct ring_action *a)
{
	uint16_t to = a->u.send.to;
	uint16_t len = a->u.send.len;
	if (len == 0 || len > RING_WIRE_MAX) {
		fail(run, "send", "n%u sends %u bytes", i, len);
		return;
	}
	if (to == 0 && a->u.send.buf[3] == RING_MSG_HEARTBEAT)
		run->heartbeats++;
	int dst = to ? ring_layout_index(&run->layout, to) : -1;
	if (to && (dst < 0 || (uint32_t)dst == i)) {
		fail(run, "send", "n%u sends to id %u, %s", i, to,
		     dst < 0 ? "not a member" : "itself");
		return;
	}
	if (run->trace) {
		char text[256], who[16];
		msg_text(run, a->u.send.buf, len, text, sizeof text);
		int name = (int)strcspn(text, " ");
		trace(run, "    -> send %.*s to %s:%s", name, text, id_name(run, to, who, sizeof who),
		      text + name);
	}
	for (uint32_t j = 0; j < run->n; j++)
		if (to ? j == (uint32_t)dst : j != i)
			net_send(run, i, j, a->u.send.buf, len);
}

static void apply_actions(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	const struct ring_update *up = &run->upd;
	if (up->n > RING_UPDATE_MAX) {
		fail(run, "action", "n%u returned %zu actions", i, up->n);
		return;
	}
	for (size_t k = 0; k < up->n && !failed(run); k++) {
		const struct ring_action *a = &up->action[k];
		switch (a->type) {
		case RING_ACTION_PERSIST:
			trace(run, "    -> persist epoch %" PRIu32, a->u.persist.epoch);
			if (a->u.persist.epoch < nd->disk)
				fail(run, "persist", "n%u persisted epoch %" PRIu32
				     " over %" PRIu32, i, a->u.persist.epoch, nd->disk);
			nd->disk = a->u.persist.epoch;
			note_epoch(run, a->u.persist.epoch);
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
		case RING_ACTION_LOG:
			if ((unsigned)a->u.log.event >= RING_LOG_COUNT_)
				fail(run, "action", "n%u logged unknown event %d", i,
				     (int)a->u.log.event);
			else if (run->trace)
				trace_log(run, a);
			check_suspicion(run, i, a);
			break;
		case RING_ACTION_LEFT:
			trace(run, "    -> left");
			nd->left = true;
			break;
		default:
			fail(run, "action", "n%u returned action type %d", i, (int)a->type);
			break;
		}
	}
}

/* I3 on the node just stepped; the others' statuses are as of their own
 * last step, which is all that can have changed them. */
static void check_status(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	const struct ring_status *st = &nd->status;
	if (st->node != nd->id)
		fail(run, "status", "n%u reports id %u", i, st->node);
	if (st->epoch < nd->last_epoch)
		fail(run, "I3", "n%u epoch went back from %" PRIu32 " to %" PRIu32, i,
		     nd->last_epoch, st->epoch);
	nd->last_epoch = st->epoch;
	/* PROTOCOL.md §4.2: an epoch is persisted before it is acted on, so a
	 * crash at any moment restarts a member at least where it was. */
	if (st->epoch > nd->disk)
		fail(run, "I3", "n%u knows epoch %" PRIu32 " but persisted only %" PRIu32
		     ": a crash now would take its epoch back", i, st->epoch, nd->disk);
	if (st->token_held)
		for (uint32_t j = 0; j < run->n; j++)
			if (j != i && run->nodes[j].have_status &&
			    run->nodes[j].status.token_held &&
			    run->nodes[j].status.token_epoch == st->token_epoch)
				fail(run, "I3", "n%u and n%u both hold a token of epoch %" PRIu32,
				     i, j, st->token_epoch);
	if (run->healed && run->now >= run->t_settle) {
		uint32_t seen = 0;
		int who = -1;
		for (uint32_t j = 0; j < run->n; j++) {
			const struct sim_node *o = &run->nodes[j];
			if (!o->have_status || !o->status.has_token)
				continue;
			if (who < 0) {
				who = (int)j;
				seen = o->status.token_epoch;
			} else if (o->status.token_epoch != seen) {
				fail(run, "I3", "after settling n%d has a token of epoch %" PRIu32
				     " and n%u one of epoch %" PRIu32, who, seen, j,
				     o->status.token_epoch);
			}
		}
	}
}

/* Steps node I with one event and carries out what it asks. IT is the
 * datagram for DATAGRAM, CLIENT the handle for ACQUIRE and RELEASE. */
static void node_step(struct sim_run *run, uint32_t i, enum ring_event_type type,
		      const struct simnet_item *it, uint64_t client)
{
	struct sim_node *nd = &run->nodes[i];
	struct ring_event ev = {.type = type, .now_us = run->now};
	if (type == RING_EVENT_DATAGRAM) {
		ev.u.datagram.buf = it->buf;
		ev.u.datagram.len = it->len;
		ev.u.datagram.from_id = run->nodes[it->src].id;
	} else if (type == RING_EVENT_ACQUIRE || type == RING_EVENT_RELEASE) {
		ev.u.client.client = client;
	}
	ring_node_step(nd->rn, &ev, &run->upd);
	ring_node_status(nd->rn, run->now, &nd->status);
	nd->have_status = true;
	apply_actions(run, i);
	uint64_t d = run->upd.deadline_us;
	if (d == NEVER) {
		nd->tick_gen++;
		nd->tick_at = NEVER;
	} else {
		if (d < run->now)
			d = run->now;
		if (d != nd->tick_at) {
			nd->tick_gen++;
			nd->tick_at = d;
			schedule(run, d, EV_TICK, i, 0, nd->tick_gen);
		}
	}
	check_status(run, i);
	if (nd->left) {
		/* A leaving member's process exits once the core says so. */
		nd->left = false;
		node_crash(run, i);
	}
}

/* ---- node life: start, crash, restart, pause ---- */

static void node_start(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	int err = 0;
	nd->rn = ring_node_new(&run->layout, nd->id, nd->disk, &err);
	if (!nd->rn) {
		fail(run, "setup", "ring_node_new(n%u, epoch %" PRIu32 "): %s", i, nd->disk,
		     ring_strerror(err));
		return;
	}
	nd->life = NODE_UP;
	nd->tick_gen++;
	nd->tick_at = NEVER;
	trace(run, "n%u start (epoch %" PRIu32 " on disk)", i, nd->disk);
	node_step(run, i, RING_EVENT_START, NULL, 0);
	for (uint32_t c = nd->first_client; c < nd->first_client + nd->nclients; c++)
		client_think(run, c);
}

static void add_counters(struct sim_run *run, const struct ring_counters *k)
{
	run->res.elections += k->elections;
	run->res.regenerations += k->regenerations;
}

static void node_stop(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	if (!nd->rn)
		return;
	struct ring_status st;
	ring_node_status(nd->rn, run->now, &st);
	add_counters(run, &st.counters);
	ring_node_free(nd->rn);
	nd->rn = NULL;
}

static void node_crash(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	trace(run, "FAULT crash n%u", i);
	node_stop(run, i);
	nd->life = NODE_DOWN;
	nd->have_status = false;
	nd->tick_gen++;
	nd->tick_at = NEVER;
	for (uint32_t c = nd->first_client; c < nd->first_client + nd->nclients; c++) {
		struct sim_client *cl = &run->clients[c];
		if (cl->state == CL_CS)
			run->in_cs--; /* the CS dies with its process */
		else if (cl->state == CL_WAIT)
			run->req[cl->req].state = RQ_DROPPED;
		cl->state = CL_DOWN;
		cl->gen++;
	}
	/* A paused member can be crashed too: what it had not seen is gone. */
	for (size_t k = 0; k < nd->held_clients.n; k++)
		item_free(run, nd->held_clients.v[k]);
	for (size_t k = 0; k < nd->held_events.n; k++)
		item_free(run, nd->held_events.v[k]);
	nd->held_clients.n = nd->held_events.n = 0;
	nd->paused = false;
}

static void node_resume(struct sim_run *run, uint32_t i)
{
	struct sim_node *nd = &run->nodes[i];
	trace(run, "FAULT resume n%u (%zu client moves, %zu events held)", i,
	      nd->held_clients.n, nd->held_events.n);
	nd->paused = false;
	/* The clients first: a process that wakes up acts on what it believed
	 * before its member can tell it otherwise (§5.5). Then the member's own
	 * events, in the order they came. */
	for (size_t k = 0; k < nd->held_clients.n; k++)
		heap_push(run, run->now, nd->held_clients.v[k]);
	for (size_t k = 0; k < nd->held_events.n; k++)
		heap_push(run, run->now, nd->held_events.v[k]);
	nd->held_clients.n = nd->held_events.n = 0;
}

static uint32_t nodes_down(const struct sim_run *run)
{
	uint32_t d = 0;
	for (uint32_t i = 0; i < run->n; i++)
		d += run->nodes[i].life != NODE_UP;
	return d;
}

/* A random member that is up and not paused, preferring one whose status
 * matches WANT (0: none, 1: holds the token, 2: has a client in the CS). */
static int pick_node(struct sim_run *run, int want)
{
	uint32_t cand[SIM_MAX_N], nc = 0;
	for (int pass = want ? 0 : 1; pass < 2 && nc == 0; pass++)
		for (uint32_t i = 0; i < run->n; i++) {
			const struct sim_node *nd = &run->nodes[i];
			if (nd->life != NODE_UP || nd->paused)
				continue;
			if (pass == 0 && !(want == 1 ? nd->status.has_token : nd->status.granted))
				continue;
			cand[nc++] = i;
		}
	return nc ? (int)cand[simnet_rng_below(&run->rng, nc)] : -1;
}

static void fault_fire(struct sim_run *run, uint32_t k)
{
	struct sim_fault *f = &run->faults[k];
	switch (f->kind) {
	case F_CRASH:
		if (run->crash_minority && (nodes_down(run) + 1) * 2 >= run->n) {
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
		if (f->node >= 0 && run->nodes[f->node].life == NODE_UP &&
		    run->faults[f->pair].graceful) {
			/* Its leave never finished (no one to hand the token to):
			 * the supervisor kills it before starting it again. */
			node_crash(run, (uint32_t)f->node);
		}
		if (f->node >= 0 && run->nodes[f->node].life == NODE_DOWN) {
			trace(run, "FAULT restart n%d", f->node);
			node_start(run, (uint32_t)f->node);
		}
		break;
	case F_PAUSE:
		f->node = run->faults[f->pair].node = pick_node(run, 2);
		if (f->node >= 0) {
			trace(run, "FAULT pause n%d until %" PRIu64 ".%06" PRIu64, f->node,
			      run->faults[f->pair].t / 1000000, run->faults[f->pair].t % 1000000);
			run->nodes[f->node].paused = true;
		}
		break;
	case F_RESUME:
		if (f->node >= 0 && run->nodes[f->node].paused)
			node_resume(run, (uint32_t)f->node);
		break;
	case F_PARTITION:
		run->net.cut = true;
		run->net.side = f->side;
		if (run->trace) {
			char a[200] = "", b[200] = "";
			size_t la = 0, lb = 0;
			for (uint32_t i = 0; i < run->n; i++) {
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
		run->net.cut = false;
		break;
	}
}

/* T_heal: from here on the network is clean and every member is up, and
 * every request waiting now or made later must be granted within B (I4). */
static void heal_point(struct sim_run *run)
{
	trace(run, "HEAL: faults over; every request must now be granted within %" PRIu64
	      " ms", run->bound_us / MS);
	run->net.loss_on = false;
	if (run->net.max_delay_us > 2 * MS)
		run->net.max_delay_us = 2 * MS;
	run->healed = true;
	for (uint32_t i = 0; i < run->n; i++)
		if (run->nodes[i].life == NODE_DOWN || run->nodes[i].paused)
			fail(run, "sim", "n%u is still down or paused at T_heal", i);
	if (run->net.cut)
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

static uint64_t plan_faults(struct sim_run *run)
{
	struct simnet_rng *r = &run->rng;
	uint64_t last = 0;
	switch (run->cls) {
	case SIM_CLASS_HEALTHY:
		return 0;
	case SIM_CLASS_LOSSY:
		run->net.loss_on = true;
		run->net.p_loss = (double)simnet_rng_range(r, 1, 10) / 100.0;
		run->net.p_dup = (double)simnet_rng_range(r, 0, 5) / 100.0;
		run->net.p_slow = 0.02;
		run->net.max_delay_us = 5 * MS;
		run->net.slow_delay_us = 30 * MS;
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
			uint64_t len = run->layout.loss_timeout_ms * simnet_rng_range(r, 500, 3000);
			add_fault_pair(run, F_PAUSE, t, F_RESUME, t + len);
			if (t + len > last)
				last = t + len;
		}
		break;
	}
	case SIM_CLASS_PARTITION: {
		uint64_t k = simnet_rng_range(r, 1, 3);
		uint64_t t = simnet_rng_range(r, 300, 1500) * MS;
		uint64_t all = run->n == 64 ? UINT64_MAX : (1ull << run->n) - 1;
		for (uint64_t j = 0; j < k; j++) {
			uint64_t len = simnet_rng_range(r, 1000, 5000) * MS;
			uint64_t side = 0;
			if (simnet_rng_chance(r, 0.5)) {
				side = 1ull << simnet_rng_below(r, run->n);
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
	default:
		break;
	}
	return last + simnet_rng_range(r, 100, 1000) * MS;
}

/* Chooses the ring, its timings, its clients and its faults from the seed. */
static void plan(struct sim_run *run)
{
	struct simnet_rng *r = &run->rng;
	struct ring_layout *L = &run->layout;
	uint64_t pick = simnet_rng_below(r, 100);
	size_t n = pick < 1 ? 64 : pick < 4 ? 16 : (size_t)simnet_rng_range(r, 2, 9);
	bool big = n >= 16;
	run->n = n;

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

	run->contention = run->cls == SIM_CLASS_HEALTHY && simnet_rng_chance(r, 0.5);
	run->overrun = run->cls != SIM_CLASS_HEALTHY && !big;
	run->i2 = run->cls == SIM_CLASS_HEALTHY || run->cls == SIM_CLASS_CRASH;
	uint64_t cap_ms = big ? 20 : 60;
	if (cap_ms > L->lease_ms)
		cap_ms = L->lease_ms;
	run->cs_cap_us = cap_ms * MS;
	run->cs_fixed_us = simnet_rng_range(r, 1 * MS, run->cs_cap_us);
	/* cs_max = min(lease, the longest CS a client of this run may want). */
	run->cs_max_us = run->contention ? run->cs_fixed_us
			 : run->overrun  ? L->lease_ms * MS
					 : run->cs_cap_us;
	run->net.min_delay_us = SIM_MIN_DELAY_US;
	run->net.max_delay_us = 2 * MS;
	run->net.slow_delay_us = 2 * MS;
	/* Some healthy rings run at loopback speed, hops of a few microseconds:
	 * whatever the token measures of time must still add up there. */
	if ((run->cls == SIM_CLASS_HEALTHY || run->cls == SIM_CLASS_CRASH) && simnet_rng_chance(r, 0.3)) {
		run->net.min_delay_us = 5;
		run->net.max_delay_us = run->net.slow_delay_us = 30;
	}

	run->nodes = calloc(n, sizeof *run->nodes);
	/* 1..3 clients per member; big rings get fewer: one per member at 16,
	 * one on each of up to 16 random members at 64. */
	uint32_t per[SIM_MAX_N] = {0};
	for (size_t i = 0; i < n; i++)
		per[i] = run->contention || n == 16 ? 1 : big ? 0 : (uint32_t)simnet_rng_range(r, 1, 3);
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
		nd->id = L->members[i].id;
		nd->tick_at = NEVER;
		nd->first_client = c;
		nd->nclients = per[i];
		for (uint32_t k = 0; k < per[i]; k++, c++)
			run->clients[c].node = (uint32_t)i;
		nd->start_at = run->contention ? 0 : simnet_rng_range(r, 0, 20 * MS);
	}

	/* B = 3*loss + 2*n*ack*(retries+1) + 3*n*(cs_max + ack), in µs. */
	uint64_t ack = L->ack_timeout_ms * MS;
	run->bound_us = 3 * (L->loss_timeout_ms * MS) + 2 * n * ack * (L->retries + 1) +
			3 * n * (run->cs_max_us + ack);
	run->t_heal = plan_faults(run);
	run->t_settle = run->t_heal + run->bound_us;
	run->t_end = run->t_heal + run->bound_us * 3 / 2;
	if (run->t_end < run->t_heal * 5 / 3)
		run->t_end = run->t_heal * 5 / 3;
	run->last_grant_node = -1;

	for (uint32_t i = 0; i < n; i++)
		schedule(run, run->nodes[i].start_at, EV_START, i, 0, 0);
	for (int k = 0; k < run->nfaults; k++)
		schedule(run, run->faults[k].t, EV_FAULT, 0, (uint32_t)k, 0);
	schedule(run, run->t_heal, EV_HEAL, 0, 0, 0);
}

static void trace_plan(const struct sim_run *run)
{
	const struct ring_layout *L = &run->layout;
	printf("sim %s seed %" PRIu64 ": n=%zu quorum=%s lease=%" PRIu32 "ms ack=%" PRIu32
	       "ms retries=%" PRIu32 " heartbeat=%" PRIu32 "ms loss_timeout=%" PRIu32
	       "ms idle_pass=%" PRIu32 "ms\n", class_names[run->cls], run->seed, run->n,
	       L->quorum == RING_QUORUM_NONE ? "none" : "majority", L->lease_ms,
	       L->ack_timeout_ms, L->retries, L->heartbeat_ms, L->loss_timeout_ms,
	       L->idle_pass_ms);
	printf("  members:");
	for (size_t i = 0; i < run->n; i++)
		printf(" n%zu=id%u(%u client%s)", i, L->members[i].id, run->nodes[i].nclients,
		       run->nodes[i].nclients == 1 ? "" : "s");
	printf("\n  clients: %s, cs up to %" PRIu64 " ms%s; cs_max %" PRIu64 " ms\n",
	       run->contention ? "contention (think 0, fixed CS)" : "think 0..50 ms",
	       run->contention ? run->cs_fixed_us / MS : run->cs_cap_us / MS,
	       run->overrun ? ", 5% overrun the lease" : "", run->cs_max_us / MS);
	if (run->cls == SIM_CLASS_LOSSY)
		printf("  network: loss %.0f%% dup %.0f%% delay up to %" PRIu64
		       " ms (2%% up to %" PRIu64 " ms) until T_heal\n", run->net.p_loss * 100,
		       run->net.p_dup * 100, run->net.max_delay_us / MS, run->net.slow_delay_us / MS);
	for (int k = 0; k < run->nfaults; k++) {
		static const char *const names[] = {"crash", "restart", "pause", "resume",
						    "partition", "heal"};
		printf("  fault %d: %s at %.3f s\n", k, names[run->faults[k].kind],
		       (double)run->faults[k].t / 1e6);
	}
	if (run->cls == SIM_CLASS_CRASH)
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
	struct simnet_item *it = &run->q.items[idx];
	struct sim_node *nd = &run->nodes[it->node];
	switch ((enum sim_kind)it->kind) {
	case EV_START:
		node_start(run, it->node);
		return false;
	case EV_TICK:
		if (nd->life != NODE_UP || it->gen != nd->tick_gen)
			return false;
		if (nd->paused) {
			hold(run, &nd->held_events, idx);
			return true;
		}
		nd->tick_at = NEVER;
		trace(run, "n%u tick", it->node);
		node_step(run, it->node, RING_EVENT_TICK, NULL, 0);
		return false;
	case EV_DELIVER: {
		bool up = nd->life == NODE_UP;
		if (run->trace) {
			char text[256];
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
		const struct sim_request *rq = &run->req[it->arg];
		if (rq->state == RQ_WAIT) {
			uint64_t from = rq->t_req > run->t_heal ? rq->t_req : run->t_heal;
			fail(run, "I4", "c%u at n%u asked at %.6f s and is still waiting %.3f s"
			     " after %.3f s (bound %" PRIu64 " ms)", rq->client,
			     run->clients[rq->client].node, (double)rq->t_req / 1e6,
			     (double)(run->now - from) / 1e6, (double)from / 1e6,
			     run->bound_us / MS);
		}
		return false;
	}
	}
	return false;
}

static void run_free(struct sim_run *run)
{
	for (uint32_t i = 0; run->nodes && i < run->n; i++) {
		node_stop(run, i);
		free(run->nodes[i].held_clients.v);
		free(run->nodes[i].held_events.v);
	}
	free(run->nodes);
	free(run->clients);
	simnet_queue_free(&run->q);
	free(run->req);
	map_free(&run->fences);
	map_free(&run->epoch_last);
	map_free(&run->epoch_floor);
}

/* One seed of one class, start to end. */
static void run_one(enum sim_class cls, uint64_t seed, bool trace_on, struct sim_result *out)
{
	struct sim_run *run = calloc(1, sizeof *run);
	if (!run) {
		memset(out, 0, sizeof *out);
		out->failed = true;
		snprintf(out->inv, sizeof out->inv, "sim");
		snprintf(out->what, sizeof out->what, "out of memory");
		return;
	}
	run->cls = cls;
	run->seed = seed;
	run->trace = trace_on;
	simnet_queue_init(&run->q);
	simnet_rng_seed(&run->rng, seed, class_names[cls]);
	plan(run);
	if (trace_on && !failed(run))
		trace_plan(run);
	while (!failed(run) && run->q.heap_n > 0 && run->q.heap[0].t <= run->t_end) {
		struct simnet_slot s = simnet_pop(&run->q);
		if (s.t != run->same_time_at) {
			run->same_time_at = s.t;
			run->same_time = 0;
		}
		run->now = s.t;
		if (++run->events > SIM_EVENT_CAP) {
			fail(run, "progress", "more than %llu events in one run",
			     (unsigned long long)SIM_EVENT_CAP);
			break;
		}
		if (++run->same_time > SIM_SAME_TIME_CAP) {
			fail(run, "progress", "more than %llu events at one instant: time stands still",
			     (unsigned long long)SIM_SAME_TIME_CAP);
			break;
		}
		if (!dispatch(run, s.item))
			item_free(run, s.item);
	}
	if (!failed(run))
		run->now = run->t_end;
	trace(run, "end: %" PRIu64 " events, %" PRIu64 " grants, %" PRIu64 " overlaps, %" PRIu64
	      " stale refused, %" PRIu64 " denied", run->events, run->res.grants,
	      run->res.overlaps, run->res.stale, run->res.denies);
	/* One token heartbeats about once per heartbeat_ms, whoever holds it;
	 * a healthy ring that sends far more has a storm (PROTOCOL.md §5.1). */
	uint64_t hb_budget = 2 * run->now / (run->layout.heartbeat_ms * MS) + 4 * run->n + 10;
	if (run->cls == SIM_CLASS_HEALTHY && !failed(run) && run->heartbeats > hb_budget)
		fail(run, "liveness", "%" PRIu64 " heartbeats in %.1f s, budget %" PRIu64,
		     run->heartbeats, (double)run->now / 1e6, hb_budget);
	run->res.virtual_us = run->now;
	run->res.bound_us = run->bound_us;
	run->res.rotation_us = run->n * (run->cs_max_us + run->layout.ack_timeout_ms * MS);
	run->res.n = run->n;
	run_free(run);
	*out = run->res;
	free(run);
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sim --class CLASS [--seeds N] [--first S] [--trace]\n"
		"       sim --class CLASS --seed S [--trace]\n"
		"Runs the ring's protocol core on a simulated network for N seeds (default 1)\n"
		"starting at S (default 1), checking its invariants after every step.\n"
		"CLASS: healthy | lossy | crash | pause | partition.\n"
		"--trace prints every event and action of the run(s).\n"
		"Exit: 0 all seeds passed, 1 an invariant failed, 2 usage.\n");
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int cls = -1;
	uint64_t seeds = 1, first = 1;
	bool trace_on = false, have_seeds = false, have_seed = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--trace")) {
			trace_on = true;
		} else if (!strcmp(a, "--class") && v) {
			for (int k = 0; k < SIM_CLASS_COUNT_; k++)
				if (!strcmp(v, class_names[k]))
					cls = k;
			if (cls < 0) {
				fprintf(stderr, "sim: unknown class '%s'\n", v);
				usage(stderr);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--seeds") && parse_u64(v, &seeds) && seeds > 0) {
			have_seeds = true;
			i++;
		} else if ((!strcmp(a, "--first") || !strcmp(a, "--seed")) && parse_u64(v, &first)) {
			have_seed |= !strcmp(a, "--seed");
			i++;
		} else {
			fprintf(stderr, "sim: bad argument '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	if (cls < 0 || (have_seed && have_seeds)) {
		usage(stderr);
		return 2;
	}
	if (have_seed)
		seeds = 1;

	double t0 = wall_s();
	struct sim_result total = {0};
	double worst_frac = -1;
	struct sim_result worst = {0};
	for (uint64_t k = 0; k < seeds; k++) {
		uint64_t seed = first + k;
		struct sim_result r;
		run_one((enum sim_class)cls, seed, trace_on, &r);
		if (r.failed) {
			printf("FAIL class=%s seed=%" PRIu64 ": %s: %s\n", class_names[cls], seed,
			       r.inv, r.what);
			printf("replay: make sim SEED=%" PRIu64 " CLASS=%s\n", seed, class_names[cls]);
			fflush(stdout);
			return 1;
		}
		total.virtual_us += r.virtual_us;
		total.grants += r.grants;
		total.overlaps += r.overlaps;
		total.stale += r.stale;
		total.elections += r.elections;
		total.regenerations += r.regenerations;
		double frac = r.bound_us ? (double)r.worst_us / (double)r.bound_us : 0;
		if (frac > worst_frac) {
			worst_frac = frac;
			worst = r;
		}
	}
	printf("sim %s: %" PRIu64 " seeds ok, %.1f virtual s in %.2f s; grants %" PRIu64
	       ", overlaps %" PRIu64 ", stale refused %" PRIu64 ", elections %" PRIu64
	       ", regenerations %" PRIu64 "; worst post-heal grant delay %.1f ms = %.2f of bound"
	       " (%.1f rotations)\n",
	       class_names[cls], seeds, (double)total.virtual_us / 1e6, wall_s() - t0,
	       total.grants, total.overlaps, total.stale, total.elections, total.regenerations,
	       (double)worst.worst_us / 1e3, worst_frac < 0 ? 0 : worst_frac,
	       worst.rotation_us ? (double)worst.worst_us / (double)worst.rotation_us : 0);
	return 0;
}
