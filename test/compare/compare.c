/* The three mutual exclusion algorithms side by side (docs/comparison.md): centralized
 * (alg_central.c), Ricart-Agrawala (alg_ra.c) and the ring's core (ring/core/node.c) on the
 * simulator's network (simnet.c), with the same workloads and checks; --table, --check. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare/alg.h"
#include "compare/alg_central.h"
#include "compare/alg_ra.h"
#include "lib/cluster.h"
#include "compare/compare_tx.h"
#include "lib/driver.h"
#include "core/err.h"
#include "core/layout.h"
#include "core/node.h"
#include "lib/simnet.h"
#include "core/wire.h"

#define MS ((uint64_t)1000) /* virtual time is in microseconds */
#define SEC (1000 * MS)
#define NEVER UINT64_MAX
#define CMP_MAX_N ALG_MAX_N
#define CMP_EVENT_CAP 50000000ull /* events in one run; hitting it fails the run */
#define CMP_HANDLE_BASE 0xc0de000000000000ull /* ring client handles: base + member + 1 */
#define CMP_COORD 0 /* the centralized coordinator's member index */

#define CMP_ALGS(X)                                   \
	X(CENTRAL, "central", "centralized")          \
	X(RA, "ra", "ricart-agrawala")                \
	X(RING, "ring", "token ring")

enum cmp_alg {
#define CMP_ALG_ENUM_(name, arg, title) CMP_ALG_##name,
	CMP_ALGS(CMP_ALG_ENUM_)
#undef CMP_ALG_ENUM_
	CMP_ALG_COUNT_
};

static const char *const alg_arg[] = {
	CMP_ALGS(DRIVER_ARG_)
};

static const char *const alg_title[] = {
	CMP_ALGS(DRIVER_TITLE_)
};

/* Whom a crash takes, by role at the moment of the crash. */
#define CMP_VICTIMS(X)                                 \
	X(NONE, "none")                                \
	X(COORDINATOR, "coordinator")                  \
	X(IN_CS, "member in CS")                       \
	X(NOT_IN_CS, "member not in CS")               \
	X(HOLDER, "holder")                            \
	X(NON_HOLDER, "non-holder")

enum cmp_victim {
#define CMP_VICTIM_ENUM_(name, str) CMP_VICTIM_##name,
	CMP_VICTIMS(CMP_VICTIM_ENUM_)
#undef CMP_VICTIM_ENUM_
};

static const char *const victim_names[] = {
#define CMP_VICTIM_NAME_(name, str) str,
	CMP_VICTIMS(CMP_VICTIM_NAME_)
#undef CMP_VICTIM_NAME_
};

/* The crashes the issue asks about, per algorithm. */
static const enum cmp_victim alg_victims[CMP_ALG_COUNT_][2] = {
	[CMP_ALG_CENTRAL] = {CMP_VICTIM_COORDINATOR, CMP_VICTIM_IN_CS},
	[CMP_ALG_RA] = {CMP_VICTIM_IN_CS, CMP_VICTIM_NOT_IN_CS},
	[CMP_ALG_RING] = {CMP_VICTIM_HOLDER, CMP_VICTIM_NON_HOLDER},
};

/* One run's setting; everything else comes from the seed. */
struct cmp_config {
	enum cmp_alg alg;
	size_t n;
	bool heavy;              /* a client asks again as soon as it leaves */
	uint64_t think_max_us;   /* light: think time uniform 0..this */
	uint64_t cs_min_us, cs_max_us;
	uint64_t min_delay_us, max_delay_us; /* one-way delay, uniform */
	double p_dup;
	uint32_t idle_pass_ms;   /* ring */
	enum cmp_victim victim;  /* crash-stop one member at t_crash */
	uint64_t t_warm;         /* measurements start */
	uint64_t t_crash;        /* the crash looks for its victim from here */
	uint64_t t_end;
	uint64_t grace_us;       /* crash: a request this old at the end is stuck */
	bool check_wait;         /* fail a request not granted within the bound */
};

/* ---- the run ---- */

enum cmp_kind {
	EV_START = CLUSTER_EV_START,     /* ring: a member starts */
	EV_TICK = CLUSTER_EV_TICK,       /* ring: a member's deadline (cluster.h) */
	EV_DELIVER = CLUSTER_EV_DELIVER, /* a datagram arrives */
	EV_CLIENT = CLUSTER_EV_DRIVER,   /* a client's next move; stale unless gen is the client's */
	EV_CRASH,   /* the crash looks for its victim */
	EV_CHECK,   /* a request's grant deadline */
};

enum client_state { CL_DOWN, CL_THINK, CL_WAIT, CL_CS };

struct cmp_request {
	uint32_t member;
	uint64_t t_req, t_grant; /* t_grant NEVER while waiting */
	bool pending_at_crash;
};

struct cmp_member {
	bool up;
	struct alg_central *central; /* the ring's core is the cluster's: run->cl.m[i] */
	struct alg_ra *ra;
	/* its one client */
	enum client_state cl;
	uint32_t cl_gen;
	size_t req;
	uint64_t owned; /* messages serving the current request */
};

/* What a run measured; cells of the table add these up over seeds. */
struct cmp_result {
	uint64_t window_us;
	uint64_t entries, sends, hops; /* in the window */
	uint64_t ring_sent[4];   /* ring: token, ack, heartbeat, other copies sent in the window */
	uint64_t hb_broadcasts;  /* ring: heartbeats sent to all, in the window */
	uint64_t per_entry_max;
	uint64_t delays, delay_sum_us, delay_max_us;
	uint64_t copies, copy_delay_sum_us; /* the network's, whole run */
	uint64_t crashes, recovered, recover_us, recover_max_us, lost, blocked;
	uint64_t grants;
	bool failed;
	char inv[16];
	char what[640]; /* as cluster.h keeps it */
};

struct cmp_run {
	const struct cmp_config *cfg;
	size_t n;
	/* The cores, queue, network, random source, time, trace and first
	 * failure (cluster.h); the textbook algorithms use all but the cores. */
	struct cluster cl;
	struct cmp_member m[CMP_MAX_N];
	struct alg_update aup;
	uint64_t bound_us;
	uint32_t in_cs;
	struct cmp_request *req;
	size_t req_n, req_cap;
	uint64_t since_entry; /* messages since the last entry anywhere */
	/* the crash */
	int victim;
	uint64_t t_crash;     /* when it happened, NEVER before */
	uint64_t survivors, served;
	uint64_t t_all_served;
	struct cmp_result res;
};

static bool failed(const struct cmp_run *run)
{
	return cluster_failed(&run->cl);
}

/* A failure of the run: the cluster records the first one. */
#define fail(run, ...) cluster_fail(&(run)->cl, __VA_ARGS__)

#define trace(run, ...) cluster_trace(&(run)->cl, __VA_ARGS__)

static const char *msg_name(const struct cmp_run *run, const uint8_t *buf, size_t len)
{
	if (run->cfg->alg == CMP_ALG_RING) {
		struct ring_msg m;
		return ring_wire_decode(buf, len, &m) < 0 ? "undecodable" : ring_msg_name(m.type);
	}
	struct alg_msg m;
	return alg_msg_decode(buf, len, &m) < 0 ? "undecodable" : alg_msg_name(m.type);
}

static bool in_window(const struct cmp_run *run)
{
	return run->cl.now >= run->cfg->t_warm && run->cl.now < run->cfg->t_end;
}

/* ---- the event queue and the network (cluster.c, simnet.c) ---- */

static void schedule(struct cmp_run *run, uint64_t t, enum cmp_kind kind, uint32_t node,
		     uint32_t arg, uint32_t gen)
{
	cluster_schedule(&run->cl, t, (int)kind, node, arg, gen);
}

/* One datagram from SRC to DST, serving member OWNER's entry (-1: none). */
static void send_one(struct cmp_run *run, uint32_t src, uint32_t dst, const uint8_t *buf,
		     uint16_t len, int owner)
{
	if (in_window(run))
		run->res.sends++;
	run->since_entry++;
	if (owner >= 0 && (size_t)owner < run->n)
		run->m[owner].owned++;
	trace(run, "    n%u -> send %s to n%u", src, msg_name(run, buf, len), dst);
	if (simnet_send(&run->cl.net, &run->cl.rng, &run->cl.q, run->cl.now, EV_DELIVER, src, dst, buf, len) ==
	    SIMNET_DUPLICATED)
		trace(run, "    .. n%u->n%u duplicated", src, dst);
	if (run->cl.q.nomem)
		fail(run, "sim", "%s", run->cl.q.nomem);
}

/* ---- clients ---- */

static void member_step(struct cmp_run *run, uint32_t i, int type, const struct simnet_item *it);

static uint64_t think_us(struct cmp_run *run)
{
	return run->cfg->heavy ? 0 : simnet_rng_range(&run->cl.rng, 0, run->cfg->think_max_us);
}

static void client_think(struct cmp_run *run, uint32_t i)
{
	struct cmp_member *mb = &run->m[i];
	mb->cl = CL_THINK;
	mb->cl_gen++;
	schedule(run, run->cl.now + think_us(run), EV_CLIENT, i, 0, mb->cl_gen);
}

/* A request's grant deadline: the bound from when it asked, or from the
 * crash for one waiting across it. */
static uint64_t request_deadline(const struct cmp_run *run, const struct cmp_request *rq)
{
	uint64_t from = rq->t_req;
	if (run->t_crash != NEVER && run->t_crash > from)
		from = run->t_crash;
	return from + run->bound_us;
}

static void client_acquire(struct cmp_run *run, uint32_t i)
{
	struct cmp_member *mb = &run->m[i];
	if (run->req_n == run->req_cap) {
		size_t cap = run->req_cap ? run->req_cap * 2 : 1024;
		struct cmp_request *r = realloc(run->req, cap * sizeof *r);
		if (!r) {
			fail(run, "sim", "out of memory (requests)");
			return;
		}
		run->req = r;
		run->req_cap = cap;
	}
	size_t r = run->req_n++;
	run->req[r] = (struct cmp_request){i, run->cl.now, NEVER, false};
	mb->cl = CL_WAIT;
	mb->cl_gen++;
	mb->req = r;
	mb->owned = 0;
	trace(run, "c%u acquire", i);
	if (run->cfg->check_wait)
		schedule(run, request_deadline(run, &run->req[r]) + 1, EV_CHECK, i, (uint32_t)r, 0);
	member_step(run, i, ALG_EVENT_ACQUIRE, NULL);
}

static void client_release(struct cmp_run *run, uint32_t i)
{
	struct cmp_member *mb = &run->m[i];
	run->in_cs--;
	trace(run, "c%u leaves the CS: release", i);
	client_think(run, i);
	member_step(run, i, ALG_EVENT_RELEASE, NULL);
	/* Centralized: the release is the entry's third message. The ring's
	 * messages are not any one entry's; they are counted between entries. */
	const struct cmp_request *rq = &run->req[mb->req];
	if (run->cfg->alg != CMP_ALG_RING && rq->t_req >= run->cfg->t_warm &&
	    mb->owned > run->res.per_entry_max)
		run->res.per_entry_max = mb->owned;
}

static void on_grant(struct cmp_run *run, uint32_t i)
{
	struct cmp_member *mb = &run->m[i];
	trace(run, "    -> grant c%u", i);
	if (mb->cl != CL_WAIT) {
		fail(run, "client", "n%u granted its client, which is not waiting", i);
		return;
	}
	if (run->in_cs > 0)
		fail(run, "mutex", "n%u granted while %u other client(s) are in the CS", i,
		     run->in_cs);
	run->in_cs++;
	struct cmp_request *rq = &run->req[mb->req];
	rq->t_grant = run->cl.now;
	run->res.grants++;
	if (in_window(run)) {
		run->res.entries++;
		if (run->cfg->alg == CMP_ALG_RING && run->since_entry > run->res.per_entry_max)
			run->res.per_entry_max = run->since_entry;
	}
	run->since_entry = 0;
	if (rq->t_req >= run->cfg->t_warm && rq->t_req < run->cfg->t_end) {
		uint64_t d = run->cl.now - rq->t_req;
		run->res.delays++;
		run->res.delay_sum_us += d;
		if (d > run->res.delay_max_us)
			run->res.delay_max_us = d;
	}
	if (run->t_crash != NEVER) {
		run->served |= (uint64_t)1 << i;
		if (run->served == run->survivors && run->t_all_served == NEVER)
			run->t_all_served = run->cl.now;
	}
	mb->cl = CL_CS;
	mb->cl_gen++;
	uint64_t cs = simnet_rng_range(&run->cl.rng, run->cfg->cs_min_us, run->cfg->cs_max_us);
	schedule(run, run->cl.now + cs, EV_CLIENT, i, 0, mb->cl_gen);
}

static void client_fire(struct cmp_run *run, uint32_t i)
{
	switch (run->m[i].cl) {
	case CL_DOWN:
	case CL_WAIT:
		break;
	case CL_THINK:
		client_acquire(run, i);
		break;
	case CL_CS:
		client_release(run, i);
		break;
	}
}

/* ---- the members: one step of the algorithm under test ---- */

static void ring_apply(struct cmp_run *run, uint32_t i)
{
	const struct ring_update *up = &run->cl.upd;
	for (size_t k = 0; k < up->n && !failed(run); k++) {
		const struct ring_action *a = &up->action[k];
		switch (a->type) {
		case RING_ACTION_SEND: {
			uint16_t to = a->u.send.to;
			uint8_t type = (uint8_t)ring_wire_peek_type(a->u.send.buf, a->u.send.len);
			int kind = type == RING_MSG_TOKEN ? 0 : type == RING_MSG_TOKEN_ACK ? 1
				   : type == RING_MSG_HEARTBEAT ? 2 : 3;
			if (in_window(run)) {
				run->res.ring_sent[kind] += to ? 1 : run->n - 1;
				run->res.hb_broadcasts += kind == 2 && to == 0;
			}
			for (uint32_t j = 0; j < run->n; j++)
				if (to ? j + 1 == to : j != i)
					send_one(run, i, j, a->u.send.buf, a->u.send.len, -1);
			break;
		}
		case RING_ACTION_GRANT:
			if (a->u.grant.client != CMP_HANDLE_BASE + i + 1)
				fail(run, "client", "n%u granted a handle not its own", i);
			else
				on_grant(run, i);
			break;
		case RING_ACTION_REVOKE:
			/* The lease (SPEC default, 5 s) is far above any CS here. */
			fail(run, "client", "n%u revoked its client's grant", i);
			break;
		case RING_ACTION_DENY:
			fail(run, "client", "n%u denied its client: %s", i,
			     ring_strerror(a->u.deny.reason));
			break;
		case RING_ACTION_RENEWED:
			/* These clients never renew. */
			fail(run, "client", "n%u renewed a grant nobody asked to renew", i);
			break;
		case RING_ACTION_LOG:
			if (run->cl.trace && (unsigned)a->u.log.event < RING_LOG_COUNT_) {
				const struct ring_log_info *info = ring_log_info(a->u.log.event);
				trace(run, "    -> log %s %s=%" PRIu64 " %s=%" PRIu64, info->name,
				      info->field[0] ? info->field[0] : "-", a->u.log.field[0],
				      info->field[1] ? info->field[1] : "-", a->u.log.field[1]);
			}
			if (a->u.log.event == RING_LOG_TOKEN_PASS && in_window(run))
				run->res.hops++;
			break;
		case RING_ACTION_PERSIST:
		case RING_ACTION_LEFT:
			break;
		case RING_ACTION_FATAL:
			fail(run, "fatal", "n%u stopped: %s", i, ring_strerror(a->u.fatal.reason));
			break;
		}
	}
}

static void ring_step(struct cmp_run *run, uint32_t i, enum ring_event_type type,
		      const struct simnet_item *it)
{
	struct ring_event ev = cluster_event(&run->cl, type, it, CMP_HANDLE_BASE + i + 1);
	cluster_step(&run->cl, i, &ev);
	ring_apply(run, i);
	cluster_arm(&run->cl, i);
}

/* Steps member I with an alg_event type (ACQUIRE, RELEASE, MESSAGE with IT)
 * or, for the ring, the matching ring event. */
static void member_step(struct cmp_run *run, uint32_t i, int type, const struct simnet_item *it)
{
	if (run->cfg->alg == CMP_ALG_RING) {
		ring_step(run, i, type == ALG_EVENT_ACQUIRE   ? RING_EVENT_ACQUIRE
				  : type == ALG_EVENT_RELEASE ? RING_EVENT_RELEASE
							      : RING_EVENT_DATAGRAM, it);
		return;
	}
	struct alg_event ev = {.type = (enum alg_event_type)type};
	if (it) {
		ev.buf = it->buf;
		ev.len = it->len;
		ev.from = (uint16_t)it->src;
	}
	if (run->cfg->alg == CMP_ALG_CENTRAL)
		alg_central_step(run->m[i].central, &ev, &run->aup);
	else
		alg_ra_step(run->m[i].ra, &ev, &run->aup);
	const struct alg_update *up = &run->aup;
	for (size_t k = 0; k < up->n && !failed(run); k++) {
		const struct alg_action *a = &up->action[k];
		if (a->type == ALG_ACTION_GRANT) {
			on_grant(run, i);
		} else if (a->to >= run->n || a->to == i) {
			fail(run, "send", "n%u sends to n%u", i, a->to);
		} else {
			send_one(run, i, a->to, a->buf, ALG_MSG_LEN, a->owner);
		}
	}
}

/* ---- the crash ---- */

static bool fits(const struct cmp_run *run, uint32_t i, enum cmp_victim v, bool strict)
{
	const struct cmp_member *mb = &run->m[i];
	switch (v) {
	case CMP_VICTIM_COORDINATOR:
		return i == CMP_COORD;
	case CMP_VICTIM_IN_CS:
		return mb->cl == CL_CS && !(run->cfg->alg == CMP_ALG_CENTRAL && i == CMP_COORD);
	case CMP_VICTIM_NOT_IN_CS:
		return mb->cl != CL_CS;
	case CMP_VICTIM_HOLDER: /* holds it, preferably with its client inside */
		return run->cl.m[i].status.token_held && (!strict || run->cl.m[i].status.granted);
	case CMP_VICTIM_NON_HOLDER:
		return !run->cl.m[i].status.has_token;
	case CMP_VICTIM_NONE:
		break;
	}
	return false;
}

static void crash(struct cmp_run *run, uint32_t i)
{
	struct cmp_member *mb = &run->m[i];
	trace(run, "CRASH n%u (%s)", i, victim_names[run->cfg->victim]);
	mb->up = false;
	cluster_stop(&run->cl, i, NULL);
	alg_central_free(mb->central);
	alg_ra_free(mb->ra);
	mb->central = NULL;
	mb->ra = NULL;
	if (mb->cl == CL_CS)
		run->in_cs--; /* the CS dies with its process */
	mb->cl = CL_DOWN;
	mb->cl_gen++;
	run->victim = (int)i;
	run->t_crash = run->cl.now;
	run->res.crashes++;
	run->survivors = 0;
	for (uint32_t j = 0; j < run->n; j++)
		if (j != i)
			run->survivors |= (uint64_t)1 << j;
	for (size_t r = 0; r < run->req_n; r++)
		if (run->req[r].t_grant == NEVER && run->req[r].member != i)
			run->req[r].pending_at_crash = true;
	/* A request waiting across the crash gets the bound again from now. */
	if (run->cfg->check_wait)
		for (size_t r = 0; r < run->req_n; r++)
			if (run->req[r].pending_at_crash)
				schedule(run, request_deadline(run, &run->req[r]) + 1, EV_CHECK,
					 run->req[r].member, (uint32_t)r, 0);
}

/* Looks for a member in the victim's role; tries again shortly if there is
 * none at this instant (nobody in the CS while a grant is in flight). */
static void crash_fire(struct cmp_run *run, uint32_t attempt)
{
	uint32_t cand[CMP_MAX_N], nc = 0;
	for (int strict = 1; strict >= 0 && nc == 0; strict--)
		for (uint32_t i = 0; i < run->n; i++)
			if (fits(run, i, run->cfg->victim, strict && attempt < 100))
				cand[nc++] = i;
	if (nc == 0) {
		if (attempt < 100000)
			schedule(run, run->cl.now + 50, EV_CRASH, 0, attempt + 1, 0);
		else
			fail(run, "sim", "no member is ever a %s", victim_names[run->cfg->victim]);
		return;
	}
	crash(run, cand[simnet_rng_below(&run->cl.rng, nc)]);
}

/* ---- one run ---- */

/* The ring of configuration C: SPEC's default timings, the product as
 * shipped, with C's members and idle pacing. Returns 0 or -RING_ECONFIG. */
static int ring_layout_for(const struct cmp_config *c, struct ring_layout *L, char *err,
			   size_t errlen)
{
	ring_layout_defaults(L);
	snprintf(L->name, sizeof L->name, "compare");
	L->idle_pass_ms = c->idle_pass_ms;
	L->n = c->n;
	for (size_t i = 0; i < c->n && i < RING_MAX_MEMBERS; i++) {
		L->members[i].id = (uint16_t)(i + 1);
		snprintf(L->members[i].host, sizeof L->members[i].host, "sim");
		L->members[i].port = (uint16_t)(7000 + i);
	}
	return ring_layout_check(L, err, errlen);
}

/* The bound within which every request must be granted (no starvation),
 * from the configuration, for the algorithm under test (L: the ring's
 * layout). d: the longest one-way delay. */
static uint64_t bound_us(const struct cmp_config *c, const struct ring_layout *L)
{
	uint64_t n = c->n, d = c->max_delay_us, cs = c->cs_max_us;
	switch (c->alg) {
	case CMP_ALG_CENTRAL:
		/* Its request and grant, behind at most n-1 queued requests,
		 * each a grant, a CS and a release. */
		return 2 * d + (n - 1) * (cs + 2 * d);
	case CMP_ALG_RA:
		/* A member not yet reached by our request may go before us
		 * twice: at most 2(n-1) entries first, each a CS and a reply
		 * that lets the next in, who may still await one round trip. */
		return 2 * d + 2 * (n - 1) * (cs + 3 * d);
	case CMP_ALG_RING: {
		/* sim.c's I4: detection, an election with skips, a retry of
		 * both, and every other member's visit. */
		uint64_t ack = L->ack_timeout_ms * MS;
		uint64_t visit = cs + ack > L->idle_pass_ms * MS + d ? cs + ack : L->idle_pass_ms * MS + d;
		return 3 * (L->loss_timeout_ms * MS) + 2 * n * ack * (L->retries + 1) + 3 * n * visit;
	}
	case CMP_ALG_COUNT_:
		break;
	}
	return 0;
}

static void setup(struct cmp_run *run)
{
	const struct cmp_config *c = run->cfg;
	run->n = c->n;
	run->victim = -1;
	run->t_crash = NEVER;
	run->t_all_served = NEVER;
	run->cl.net.min_delay_us = c->min_delay_us;
	run->cl.net.max_delay_us = run->cl.net.slow_delay_us = c->max_delay_us;
	run->cl.net.loss_on = c->p_dup > 0; /* duplication only: p_loss and p_slow stay 0 */
	run->cl.net.p_dup = c->p_dup;
	if (c->n < 2 || c->n > CMP_MAX_N) {
		fail(run, "setup", "n=%zu is outside 2..%d", c->n, CMP_MAX_N);
		return;
	}
	char why[256];
	struct ring_layout layout;
	if (ring_layout_for(c, &layout, why, sizeof why) < 0) {
		fail(run, "setup", "ring_layout_check: %s", why);
		return;
	}
	if (!cluster_set_layout(&run->cl, &layout))
		return;
	run->bound_us = bound_us(c, &run->cl.layout);
	for (uint32_t i = 0; i < c->n; i++) {
		struct cmp_member *mb = &run->m[i];
		mb->up = true;
		int err = 0;
		switch (c->alg) {
		case CMP_ALG_CENTRAL:
			mb->central = alg_central_new(c->n, i, CMP_COORD);
			err = mb->central ? 0 : -RING_ENOMEM;
			break;
		case CMP_ALG_RA:
			mb->ra = alg_ra_new(c->n, i);
			err = mb->ra ? 0 : -RING_ENOMEM;
			break;
		case CMP_ALG_RING:
			if (!cluster_start(&run->cl, i, 0))
				return;
			break;
		case CMP_ALG_COUNT_:
			break;
		}
		if (err < 0) {
			fail(run, "setup", "n%u: %s", i, ring_strerror(err));
			return;
		}
		if (c->alg == CMP_ALG_RING)
			schedule(run, 0, EV_START, i, 0, 0);
		client_think(run, i);
	}
	if (c->victim != CMP_VICTIM_NONE)
		schedule(run, c->t_crash, EV_CRASH, 0, 0, 0);
}

static void dispatch(struct cmp_run *run, const struct simnet_item *it)
{
	struct cmp_member *mb = &run->m[it->node];
	switch ((enum cmp_kind)it->kind) {
	case EV_START:
		if (mb->up) {
			trace(run, "n%u start", it->node);
			ring_step(run, it->node, RING_EVENT_START, NULL);
		}
		break;
	case EV_TICK:
		if (!mb->up || !cluster_tick_current(&run->cl, it))
			break;
		ring_step(run, it->node, RING_EVENT_TICK, NULL);
		break;
	case EV_DELIVER:
		trace(run, "n%u %s %s from n%u", it->node, mb->up ? "recv" : "(down) drops",
		      msg_name(run, it->buf, it->len), it->src);
		if (mb->up)
			member_step(run, it->node, ALG_EVENT_MESSAGE, it);
		break;
	case EV_CLIENT:
		if (mb->up && it->gen == mb->cl_gen)
			client_fire(run, it->node);
		break;
	case EV_CRASH:
		crash_fire(run, it->arg);
		break;
	case EV_CHECK: {
		const struct cmp_request *rq = &run->req[it->arg];
		/* The textbook algorithms stop at a crash; the ring goes on
		 * while a majority is up (PROTOCOL.md §6.3). */
		bool blocked_by_design = run->t_crash != NEVER &&
			(run->cfg->alg != CMP_ALG_RING ||
			 run->n - 1 < ring_layout_quorum(&run->cl.layout));
		if (rq->t_grant == NEVER && run->m[rq->member].up && !blocked_by_design &&
		    run->cl.now > request_deadline(run, rq))
			fail(run, "starvation", "c%u asked at %.6f s and is still waiting %.3f s"
			     " later (bound %.3f s)", rq->member, (double)rq->t_req / 1e6,
			     (double)(run->cl.now - rq->t_req) / 1e6, (double)run->bound_us / 1e6);
		break;
	}
	}
}

static void run_finish(struct cmp_run *run)
{
	struct cmp_result *r = &run->res;
	const struct cmp_config *c = run->cfg;
	r->window_us = c->t_end > c->t_warm ? c->t_end - c->t_warm : 0;
	r->copies = run->cl.net.copies;
	r->copy_delay_sum_us = run->cl.net.delay_sum_us;
	if (run->t_crash != NEVER) {
		for (size_t k = 0; k < run->req_n; k++) {
			const struct cmp_request *rq = &run->req[k];
			if (rq->t_grant != NEVER || (int)rq->member == run->victim)
				continue;
			if (rq->pending_at_crash)
				r->lost++;
			else if (rq->t_req + c->grace_us <= c->t_end)
				r->blocked++;
		}
		/* Recovered: every survivor entered again after the crash, and
		 * no request of theirs was lost or is stuck. */
		if (run->t_all_served != NEVER && r->lost == 0 && r->blocked == 0) {
			r->recovered = 1;
			r->recover_us = run->t_all_served - run->t_crash;
			r->recover_max_us = r->recover_us;
		}
	}
	for (uint32_t i = 0; i < run->n; i++) {
		alg_central_free(run->m[i].central);
		alg_ra_free(run->m[i].ra);
	}
	r->failed = run->cl.failed;
	snprintf(r->inv, sizeof r->inv, "%s", run->cl.inv);
	snprintf(r->what, sizeof r->what, "%s", run->cl.what);
	cluster_free(&run->cl);
	free(run->req);
}

static void run_one(const struct cmp_config *cfg, uint64_t seed, const char *salt,
		    bool trace_on, struct cmp_result *out)
{
	struct cmp_run *run = calloc(1, sizeof *run);
	if (!run) {
		DRIVER_RESULT_OOM(out);
		return;
	}
	run->cfg = cfg;
	cluster_init(&run->cl, seed, salt, trace_on, CMP_EVENT_CAP, 0);
	setup(run);
	uint32_t item;
	while (cluster_next(&run->cl, cfg->t_end, &item)) {
		dispatch(run, &run->cl.q.items[item]);
		cluster_item_free(&run->cl, item);
	}
	if (!failed(run))
		run->cl.now = cfg->t_end;
	if (!failed(run) && cfg->victim != CMP_VICTIM_NONE && run->t_crash == NEVER)
		fail(run, "sim", "the crash never happened");
	run_finish(run);
	*out = run->res;
	free(run);
}

/* ---- the table ---- */

static const size_t table_n[] = {3, 5, 10, 20};

/* The measured network and workload (docs/comparison.md). */
static struct cmp_config table_config(enum cmp_alg alg, size_t n, bool heavy,
				      uint32_t idle_pass_ms, enum cmp_victim victim)
{
	struct cmp_config c = {
		.alg = alg,
		.n = n,
		.heavy = heavy,
		.think_max_us = 100 * n * MS, /* mean 50n ms: about 20 requests a second in all */
		.cs_min_us = 500,
		.cs_max_us = 1500,
		.min_delay_us = 50,
		.max_delay_us = 2 * MS,
		.idle_pass_ms = idle_pass_ms,
		.victim = victim,
		.t_warm = 1500 * MS, /* the ring's first token takes an election */
		.grace_us = 2 * SEC,
		.check_wait = true,
	};
	if (victim == CMP_VICTIM_NONE) {
		c.t_end = c.t_warm + 5 * SEC;
	} else {
		c.t_crash = c.t_warm + 500 * MS;
		c.t_end = c.t_crash + 6 * SEC;
	}
	return c;
}

struct table_row {
	enum cmp_alg alg;
	size_t n;
	const char *label;
	struct cmp_config cfg;
};

static void add(struct cmp_result *t, const struct cmp_result *r)
{
	t->window_us += r->window_us;
	t->entries += r->entries;
	t->sends += r->sends;
	t->hops += r->hops;
	for (int k = 0; k < 4; k++)
		t->ring_sent[k] += r->ring_sent[k];
	t->hb_broadcasts += r->hb_broadcasts;
	if (r->per_entry_max > t->per_entry_max)
		t->per_entry_max = r->per_entry_max;
	t->delays += r->delays;
	t->delay_sum_us += r->delay_sum_us;
	if (r->delay_max_us > t->delay_max_us)
		t->delay_max_us = r->delay_max_us;
	t->copies += r->copies;
	t->copy_delay_sum_us += r->copy_delay_sum_us;
	t->crashes += r->crashes;
	t->recovered += r->recovered;
	t->recover_us += r->recover_us;
	if (r->recover_max_us > t->recover_max_us)
		t->recover_max_us = r->recover_max_us;
	t->lost += r->lost;
	t->blocked += r->blocked;
	t->grants += r->grants;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* The table's columns: width, left-aligned, spaces before. */
#define TABLE_COLS 14
static const struct {
	int width;
	bool left;
	int gap;
} table_col[TABLE_COLS] = {
	{15, true, 0},  {3, false, 1},  {22, true, 2}, {7, false, 1}, {8, false, 1},
	{5, false, 1},  {25, true, 2},  {8, false, 1}, {7, false, 1}, {5, false, 1},
	{8, true, 2},   {19, true, 1},  {5, false, 1}, {7, false, 1},
};

/* One line of cells in the table's columns. */
static void table_line(char *out, size_t cap, const char *const cell[TABLE_COLS])
{
	size_t off = 0;
	out[0] = 0;
	for (int k = 0; k < TABLE_COLS && off < cap; k++)
		off += (size_t)snprintf(out + off, cap - off, table_col[k].left ? "%*s%-*s" : "%*s%*s",
					table_col[k].gap, "", table_col[k].width, cell[k]);
	while (off > 0 && out[off - 1] == ' ')
		out[--off] = 0;
}

/* A heading over a span of columns: LABEL starts at column FIRST. */
struct table_heading {
	int first;
	const char *label;
};

static void table_headings(char *out, size_t cap, const struct table_heading *h, size_t nh)
{
	size_t pos[TABLE_COLS], at = 0;
	for (int k = 0; k < TABLE_COLS; k++) {
		at += (size_t)table_col[k].gap;
		pos[k] = at;
		at += (size_t)table_col[k].width;
	}
	if (cap == 0)
		return;
	size_t len = at < cap - 1 ? at : cap - 1;
	memset(out, ' ', len);
	out[len] = 0;
	for (size_t i = 0; i < nh; i++) {
		size_t p = pos[h[i].first];
		for (const char *c = h[i].label; *c && p < len; c++, p++)
			out[p] = *c;
	}
	while (len > 0 && out[len - 1] == ' ')
		out[--len] = 0;
}


/* One line of the table from the sum of a row's runs. */
static void format_row(char *out, size_t cap, const struct table_row *row,
		       const struct cmp_result *t, uint64_t seeds)
{
	char n[8], entries[24] = "-", mean[24] = "-", max[24] = "-", split[48] = "-",
	     dmean[24] = "-", dmax[24] = "-", rot[24] = "-", recovers[16] = "-", after[48] = "-",
	     lost[24] = "-", blocked[24] = "-";
	snprintf(n, sizeof n, "%zu", row->n);
	double msg_time = ratio((double)t->copy_delay_sum_us, (double)t->copies);
	if (row->cfg.victim == CMP_VICTIM_NONE) {
		double e = (double)t->entries;
		double mean_delay = ratio((double)t->delay_sum_us, (double)t->delays);
		snprintf(entries, sizeof entries, "%" PRIu64, t->entries);
		snprintf(mean, sizeof mean, "%.2f", ratio((double)t->sends, e));
		snprintf(max, sizeof max, "%" PRIu64, t->per_entry_max);
		snprintf(dmean, sizeof dmean, "%.2f", ratio(mean_delay, msg_time));
		snprintf(dmax, sizeof dmax, "%.2f", ratio((double)t->delay_max_us, msg_time));
		if (row->alg == CMP_ALG_RING) {
			snprintf(split, sizeof split, "%.1f/%.1f/%.2f/%.2f",
				 ratio((double)t->ring_sent[0], e), ratio((double)t->ring_sent[1], e),
				 ratio((double)t->ring_sent[2], e), ratio((double)t->ring_sent[3], e));
			/* A rotation is n hops; its mean length from the hops made. */
			double rotation = ratio((double)t->window_us * (double)row->n, (double)t->hops);
			snprintf(rot, sizeof rot, "%.2f", ratio(mean_delay, rotation));
		} else {
			snprintf(split, sizeof split, "n/a");
			snprintf(rot, sizeof rot, "n/a");
		}
	} else {
		bool all = t->recovered == t->crashes;
		snprintf(recovers, sizeof recovers, "%s", all ? "yes" : t->recovered ? "partly" : "no");
		if (all)
			snprintf(after, sizeof after, "%.0f ms (max %.0f)",
				 ratio((double)t->recover_us, (double)t->recovered) / 1000.0,
				 (double)t->recover_max_us / 1000.0);
		else if (t->recovered)
			snprintf(after, sizeof after, "%" PRIu64 " of %" PRIu64 " runs", t->recovered,
				 t->crashes);
		else
			snprintf(after, sizeof after, "never");
		snprintf(lost, sizeof lost, "%.1f", ratio((double)t->lost, (double)seeds));
		snprintf(blocked, sizeof blocked, "%.1f", ratio((double)t->blocked, (double)seeds));
	}
	const char *const cell[TABLE_COLS] = {alg_title[row->alg], n, row->label, entries, mean,
					       max, split, dmean, dmax, rot, recovers, after, lost,
					       blocked};
	table_line(out, cap, cell);
}

static void salt_of(char *buf, size_t cap, const struct table_row *row)
{
	snprintf(buf, cap, "compare/%s/%zu/%s", alg_arg[row->alg], row->n, row->label);
}

static int table(uint64_t seeds, uint64_t tx_seeds, const char *out_path)
{
	static struct table_row rows[128];
	static char labels[CMP_ALG_COUNT_][2][40];
	size_t nrows = 0;
	for (int a = 0; a < CMP_ALG_COUNT_; a++)
		for (size_t k = 0; k < sizeof table_n / sizeof table_n[0]; k++) {
			size_t n = table_n[k];
			enum cmp_alg alg = (enum cmp_alg)a;
			rows[nrows++] = (struct table_row){alg, n, "light",
				table_config(alg, n, false, 0, CMP_VICTIM_NONE)};
			if (alg == CMP_ALG_RING)
				rows[nrows++] = (struct table_row){alg, n, "light, idle_pass 10 ms",
					table_config(alg, n, false, 10, CMP_VICTIM_NONE)};
			rows[nrows++] = (struct table_row){alg, n, "heavy",
				table_config(alg, n, true, 0, CMP_VICTIM_NONE)};
			for (int v = 0; v < 2; v++) {
				enum cmp_victim victim = alg_victims[alg][v];
				snprintf(labels[a][v], sizeof labels[a][v], "crash %s",
					 victim_names[victim]);
				rows[nrows++] = (struct table_row){alg, n, labels[a][v],
					table_config(alg, n, true, 0, victim)};
			}
		}

	double t0 = driver_wall_s();
	static char lines[128][256];
	static struct cmp_result sums[128];
	struct cmp_result all = {0};
	for (size_t k = 0; k < nrows; k++) {
		struct cmp_result sum = {0};
		char salt[96];
		salt_of(salt, sizeof salt, &rows[k]);
		for (uint64_t s = 1; s <= seeds; s++) {
			struct cmp_result r;
			run_one(&rows[k].cfg, s, salt, false, &r);
			if (r.failed) {
				printf("FAIL %s n=%zu %s seed=%" PRIu64 ": %s: %s\n",
				       alg_title[rows[k].alg], rows[k].n, rows[k].label, s, r.inv,
				       r.what);
				return 1;
			}
			add(&sum, &r);
		}
		add(&all, &sum);
		sums[k] = sum;
		format_row(lines[k], sizeof lines[k], &rows[k], &sum, seeds);
	}

	/* The ring's heartbeat broadcasts per heartbeat_ms, over its rows. */
	double hb_lo = -1, hb_hi = 0;
	for (size_t k = 0; k < nrows; k++) {
		if (rows[k].alg != CMP_ALG_RING || rows[k].cfg.victim != CMP_VICTIM_NONE)
			continue;
		struct ring_layout L;
		char why[256];
		ring_layout_for(&rows[k].cfg, &L, why, sizeof why);
		double periods = (double)sums[k].window_us / (double)(L.heartbeat_ms * MS);
		double rate = ratio((double)sums[k].hb_broadcasts, periods);
		if (hb_lo < 0 || rate < hb_lo)
			hb_lo = rate;
		if (rate > hb_hi)
			hb_hi = rate;
	}
	struct ring_layout defaults;
	ring_layout_defaults(&defaults);
	const struct cmp_config crash_cfg = table_config(CMP_ALG_RING, 3, true, 0,
							 CMP_VICTIM_HOLDER);

	FILE *out = out_path ? fopen(out_path, "w") : NULL;
	if (out_path && !out) {
		fprintf(stderr, "compare: %s: %s\n", out_path, strerror(errno));
		return 1;
	}
	for (int pass = 0; pass < 2; pass++) {
		FILE *f = pass == 0 ? stdout : out;
		if (!f)
			continue;
		fprintf(f,
			"Mutual exclusion, three algorithms on one simulated network: generated by "
			"`make compare` (test/compare.c), not typed in.\n"
			"network: one-way delay uniform %.2f..%.2f ms, so messages reorder; no loss; "
			"1 message time = the mean one-way delay, measured: %.3f ms.\n"
			"clients: one per member; CS %.1f..%.1f ms; light: think uniform 0..%" PRIu64
			"n ms; heavy: ask again at once.\n"
			"%" PRIu64 " seeds per row; %.1f s measured per seed after %.1f s of warm-up. "
			"Crash rows: heavy load, the victim crash-stops %.1f s in\n"
			"and stays down; the run goes on %.1f s. Token ring: ring/core/node.c, SPEC's timings"
			" (heartbeat %u ms, loss timeout %u ms, ack %u ms x %u retries).\n\n",
			(double)rows[0].cfg.min_delay_us / 1e3, (double)rows[0].cfg.max_delay_us / 1e3,
			ratio((double)all.copy_delay_sum_us, (double)all.copies) / 1000.0,
			(double)rows[0].cfg.cs_min_us / 1e3, (double)rows[0].cfg.cs_max_us / 1e3,
			rows[0].cfg.think_max_us / rows[0].n / MS, seeds,
			(double)(rows[0].cfg.t_end - rows[0].cfg.t_warm) / 1e6,
			(double)rows[0].cfg.t_warm / 1e6, (double)crash_cfg.t_crash / 1e6,
			(double)(crash_cfg.t_end - crash_cfg.t_crash) / 1e6, defaults.heartbeat_ms,
			defaults.loss_timeout_ms, defaults.ack_timeout_ms, defaults.retries);
		char line[256];
		static const struct table_heading heading[] = {
			{4, "messages/entry"}, {6, "ring's messages/entry:"},
			{7, "delay: msg times, rot."}, {10, "after a crash:"},
		};
		table_headings(line, sizeof line, heading, sizeof heading / sizeof heading[0]);
		fprintf(f, "%s\n", line);
		static const char *const names[TABLE_COLS] = {
			"algorithm", "n", "load", "entries", "mean", "max",
			"token/ack/heartbeat/other", "mean", "max", "rot.", "recovers", "after",
			"lost", "blocked"};
		table_line(line, sizeof line, names);
		fprintf(f, "%s\n", line);
		for (size_t k = 0; k < nrows; k++)
			fprintf(f, "%s\n", lines[k]);
		fprintf(f,
			"\nmessages per entry: mean = all messages sent / entries; max: per entry for "
			"centralized and Ricart-Agrawala\n"
			"  (its request, grant or replies, release), for the ring all messages between"
			" two consecutive entries.\n"
			"delay: from a client's request to its entry; rot. = mean delay / mean rotation"
			" (n token hops).\n"
			"token ring heartbeats: %.2f..%.2f broadcasts per heartbeat_ms in the rows "
			"above (one is the design, PROTOCOL.md §5.1).\n"
			"crash: after = until every survivor has entered again (mean, and max of the "
			"runs); lost = survivors' requests waiting\n"
			"  at the crash never granted; blocked = survivors' requests made after it "
			"(%.0f s or more before the end) never granted;\n"
			"  both per run. recovers = every run had every survivor enter again with "
			"nothing lost or blocked.\n",
			hb_lo, hb_hi, (double)crash_cfg.grace_us / 1e6);
	}
	fprintf(stderr, "compare: %zu rows x %" PRIu64 " seeds in %.1f s%s%s\n", nrows, seeds,
		driver_wall_s() - t0, out_path ? "; table in " : "", out_path ? out_path : "");
	/* Atomic commit on the same network (compare_tx.c), below it. */
	int rc = tx_seeds ? tx_table(tx_seeds, out) : 0;
	if (out)
		fclose(out);
	return rc;
}

/* ---- the check: many random runs per algorithm ---- */

/* A random setting for seed SEED of ALG: the ring's size, the load, the
 * network's speed and duplication, and in a third of the runs a crash. */
static struct cmp_config check_config(enum cmp_alg alg, struct simnet_rng *r)
{
	struct cmp_config c = {.alg = alg};
	uint64_t pick = simnet_rng_below(r, 100);
	c.n = pick < 5 ? 32 : pick < 15 ? 20 : (size_t)simnet_rng_range(r, 2, 10);
	c.heavy = simnet_rng_chance(r, 0.5);
	c.think_max_us = simnet_rng_range(r, 1, 100) * c.n * MS;
	c.cs_min_us = simnet_rng_range(r, 10, 1000);
	c.cs_max_us = c.cs_min_us + simnet_rng_range(r, 0, 5 * MS);
	uint64_t speed = simnet_rng_below(r, 3);
	c.min_delay_us = speed == 0 ? 5 : 50;
	c.max_delay_us = speed == 0 ? 30 : speed == 1 ? 2 * MS : 10 * MS;
	c.p_dup = simnet_rng_chance(r, 0.5) ? (double)simnet_rng_range(r, 1, 5) / 100.0 : 0;
	static const uint32_t idle[] = {0, 0, 2, 10};
	c.idle_pass_ms = idle[simnet_rng_below(r, 4)];
	c.t_warm = 0;
	c.grace_us = SEC;
	c.check_wait = true;
	if (simnet_rng_chance(r, 1.0 / 3)) {
		static const enum cmp_victim any[] = {CMP_VICTIM_IN_CS, CMP_VICTIM_NOT_IN_CS};
		c.victim = alg == CMP_ALG_RA ? any[simnet_rng_below(r, 2)]
					     : alg_victims[alg][simnet_rng_below(r, 2)];
		c.t_crash = simnet_rng_range(r, 300, 2000) * MS;
	}
	return c;
}

static int check(int only, uint64_t first, uint64_t seeds, bool trace_on)
{
	double t0 = driver_wall_s();
	char summary[CMP_ALG_COUNT_][200];
	struct cmp_result all = {0};
	int nalg = 0;
	for (int a = 0; a < CMP_ALG_COUNT_; a++) {
		if (only >= 0 && a != only)
			continue;
		enum cmp_alg alg = (enum cmp_alg)a;
		struct cmp_result sum = {0};
		uint64_t no_majority = 0; /* ring crash runs that leave too few members */
		for (uint64_t s = first; s < first + seeds; s++) {
			char salt[64];
			snprintf(salt, sizeof salt, "compare-check/%s", alg_arg[alg]);
			struct simnet_rng plan;
			simnet_rng_seed(&plan, s, salt);
			struct cmp_config c = check_config(alg, &plan);
			/* The ring's bound runs from the crash; give it its time. */
			static struct ring_layout layout;
			char err[256];
			ring_layout_for(&c, &layout, err, sizeof err);
			uint64_t b = bound_us(&c, &layout);
			c.t_end = c.victim == CMP_VICTIM_NONE ? 3 * SEC
				  : alg == CMP_ALG_RING     ? c.t_crash + b + SEC
							    : c.t_crash + 2 * SEC;
			if (trace_on)
				printf("check %s seed %" PRIu64 ": n=%zu %s cs %" PRIu64 "..%" PRIu64
				       " us delay %" PRIu64 "..%" PRIu64 " us dup %.0f%% idle_pass %u ms"
				       " crash %s at %.3f s, end %.3f s, bound %.3f s\n",
				       alg_arg[alg], s, c.n, c.heavy ? "heavy" : "light", c.cs_min_us,
				       c.cs_max_us, c.min_delay_us, c.max_delay_us, c.p_dup * 100,
				       c.idle_pass_ms, victim_names[c.victim], (double)c.t_crash / 1e6,
				       (double)c.t_end / 1e6, (double)b / 1e6);
			struct cmp_result r;
			run_one(&c, s, salt, trace_on, &r);
			if (r.failed) {
				printf("FAIL compare-check alg=%s seed=%" PRIu64 ": %s: %s\n",
				       alg_arg[alg], s, r.inv, r.what);
				printf("replay: build/compare --check --alg %s --seed %" PRIu64
				       " --trace\n", alg_arg[alg], s);
				return 1;
			}
			/* The ring's recovery: a crash that leaves a majority up
			 * loses no request and serves every survivor again. */
			bool majority = c.n - 1 >= ring_layout_quorum(&layout);
			if (alg == CMP_ALG_RING && r.crashes && majority && !r.recovered) {
				printf("FAIL compare-check alg=%s seed=%" PRIu64 ": recovery: after"
				       " the crash of a %s, %" PRIu64 " requests lost, %" PRIu64
				       " blocked, or a survivor never entered again\n", alg_arg[alg],
				       s, victim_names[c.victim], r.lost, r.blocked);
				printf("replay: build/compare --check --alg %s --seed %" PRIu64
				       " --trace\n", alg_arg[alg], s);
				return 1;
			}
			add(&sum, &r);
			no_majority += alg == CMP_ALG_RING && r.crashes && !majority;
		}
		add(&all, &sum);
		if (alg == CMP_ALG_RING)
			snprintf(summary[nalg++], sizeof summary[0],
				 "%s %" PRIu64 " seeds ok (%" PRIu64 " crashes: %" PRIu64
				 " recovered; %" PRIu64 " left no majority and stopped)",
				 alg_arg[alg], seeds, sum.crashes, sum.recovered, no_majority);
		else
			snprintf(summary[nalg++], sizeof summary[0],
				 "%s %" PRIu64 " seeds ok (%" PRIu64 " crashes: %" PRIu64
				 " recovered, %" PRIu64 " requests lost, %" PRIu64 " blocked)",
				 alg_arg[alg], seeds, sum.crashes, sum.recovered, sum.lost,
				 sum.blocked);
	}
	printf("compare-check: ");
	for (int k = 0; k < nalg; k++)
		printf("%s%s", k ? ", " : "", summary[k]);
	printf("; %" PRIu64 " grants, never two in the CS, no request waited past its bound;"
	       " %.2f s\n", all.grants, driver_wall_s() - t0);
	return 0;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: compare --table [--seeds N] [--tx-seeds M] [--out FILE]\n"
		"       compare --check [--alg central|ra|ring|2pc|2pc-coop|3pc|2pc-fenced|nested-2pc|nested-3pc] [--seeds N] [--first S]\n"
		"       compare --check --alg ALG --seed S [--trace]\n"
		"       compare --tx-replay PROTOCOL/FAILURE/N --seed S\n"
		"--table runs the centralized algorithm, Ricart-Agrawala and the token ring\n"
		"(ring/core/node.c) for n = 3, 5, 10, 20 under light and heavy load and with\n"
		"crashes, N seeds per row (default 40), and prints the table (also to FILE);\n"
		"then two-phase commit, its cooperative variant, three-phase commit, 2PC with\n"
		"a fenced coordinator role and nested transactions, with and without failures,\n"
		"M seeds per row (default 200; 0 leaves them out).\n"
		"--check runs N random seeds per algorithm (default 200) and checks that\n"
		"never two clients are in the CS and that every request is granted in time,\n"
		"and for the commit protocols atomicity and validity on every step.\n"
		"--tx-replay prints the trace of one run of the transactions table.\n"
		"Exit: 0 ok, 1 a check failed, 2 usage.\n");
}

int main(int argc, char **argv)
{
	bool do_table = false, do_check = false, trace_on = false;
	struct driver_seeds sd = {.seeds = 0, .first = 1};
	int only = -1, only_tx = -1;
	uint64_t tx_seeds = 200;
	const char *out = NULL, *replay = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--table")) {
			do_table = true;
		} else if (!strcmp(a, "--check")) {
			do_check = true;
		} else if (!strcmp(a, "--trace")) {
			trace_on = true;
		} else if (!strcmp(a, "--out") && v) {
			out = v;
			i++;
		} else if (!strcmp(a, "--tx-replay") && v) {
			replay = v;
			i++;
		} else if (!strcmp(a, "--tx-seeds") && driver_parse_u64(v, &tx_seeds)) {
			i++;
		} else if (!strcmp(a, "--alg") && v) {
			only = driver_lookup(v, alg_arg, CMP_ALG_COUNT_);
			only_tx = only < 0 ? tx_proto_lookup(v) : -1;
			if (only < 0 && only_tx < 0) {
				return driver_usage_error(usage, "compare: unknown algorithm '%s'\n", v);
			}
			i++;
		} else if (driver_seed_arg(&sd, a, v, 1)) {
			i++;
		} else {
			return driver_usage_error(usage, "compare: bad argument '%s'\n", a);
		}
	}
	if (replay) {
		if (do_table || do_check || !sd.have_seed) {
			usage(stderr);
			return 2;
		}
		return tx_replay(replay, sd.first);
	}
	if (do_table == do_check || (sd.have_seed && sd.have_seeds) ||
	    (do_table && (sd.have_seed || trace_on))) {
		usage(stderr);
		return 2;
	}
	if (do_table)
		return table(driver_seed_count(&sd, 40), tx_seeds, out);
	uint64_t seeds = driver_seed_count(&sd, 200);
	int rc = only_tx < 0 ? check(only, sd.first, seeds, trace_on) : 0;
	if (rc == 0 && only < 0)
		rc = tx_check(only_tx, sd.first, seeds, trace_on);
	return rc;
}
