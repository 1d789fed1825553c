/* The atomic commit protocols on the simulator's network (compare_tx.h): one transaction per
 * run, a coordinator (site 0) and n-1 participants, each a tx_proto state machine, with its
 * log, its timer and the one fault of the run's row; for fenced 2PC, the lock service that
 * grants the coordinator role; the checker (tx_check.c) sees every vote and decision as it
 * is made. */
#include "compare/compare_tx.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cluster.h"
#include "lib/driver.h"
#include "lib/simnet.h"
#include "compare/tx.h"
#include "compare/tx_2pc.h"
#include "compare/tx_3pc.h"
#include "compare/tx_check.h"
#include "compare/tx_fenced.h"
#include "compare/tx_nested.h"

#define MS ((uint64_t)1000) /* virtual time is in microseconds */
#define NEVER UINT64_MAX
#define TX_EVENT_CAP 2000000ull
#define TX_ID 1
#define ENV_LEN (TX_MSG_LEN + 2) /* the message, then the driver's causal depth */

static const struct tx_proto *const protos[] = {&tx_2pc, &tx_2pc_coop, &tx_3pc, &tx_2pc_fenced,
						&tx_nested_2pc, &tx_nested_3pc};
#define NPROTOS (sizeof protos / sizeof protos[0])

/* The one fault of a run: whom it takes, and when, as the point in the
 * victim's actions at which it strikes (see fault_point). */
#define TX_FAULTS(X)                                                                    \
	X(NONE, "none", "no failure")                                                     \
	X(COORD_BEFORE, "coord-before-votes", "coordinator crash before the votes")       \
	X(COORD_AFTER, "coord-after-votes", "coordinator crash after the votes")           \
	X(COORD_MID, "coord-mid-decision", "coordinator crash, decision reached some")    \
	X(PART_BEFORE, "part-before-vote", "participant crash before voting")             \
	X(PART_AFTER, "part-after-vote", "participant crash after voting yes")            \
	X(PARTITION, "partition", "partition, decision reached one side")                \
	X(COORD_PAUSE, "coord-pause", "coordinator pauses after the votes")              \
	X(SUB_ABORT, "sub-abort", "a subtransaction aborts (nested)")

enum tx_fault {
#define TX_FAULT_ENUM_(name, arg, title) TX_FAULT_##name,
	TX_FAULTS(TX_FAULT_ENUM_)
#undef TX_FAULT_ENUM_
	TX_FAULT_COUNT_
};

static const char *const fault_arg[] = {
	TX_FAULTS(DRIVER_ARG_)
};

static const char *const fault_title[] = {
	TX_FAULTS(DRIVER_TITLE_)
};

/* One run's setting; the rest comes from the seed. */
struct tx_cfg {
	const struct tx_proto *proto;
	size_t n;
	enum tx_fault fault;
	uint64_t no_votes;    /* participants (bit = index) that vote no */
	uint64_t min_delay_us, max_delay_us;
	double p_dup;
	uint64_t t_us;        /* the protocols' timeout unit */
	uint64_t down_us;     /* the victim restarts, or the partition heals, this long after */
	uint64_t pause_min_us, pause_max_us; /* a paused coordinator sleeps uniformly this long */
	uint64_t t_end;
};

/* The lock service's lease on the coordinator role, in T. Site 0 decides within a few
 * round trips (each below T) and gives the role back; a holder that stops (a crash, a
 * pause) keeps it until the lease runs out, and then it moves on with a higher fence. */
#define LEASE_T 4

enum tx_kind {
	EV_DELIVER = CLUSTER_EV_DELIVER,
	EV_BEGIN = CLUSTER_EV_DRIVER,
	EV_TIMER,   /* stale unless gen is the site's timer_gen */
	EV_RESTART, /* the victim's process comes back */
	EV_HEAL,    /* the partition ends */
	EV_WAKE,    /* the paused coordinator goes on */
	EV_GRANT,   /* the lock service grants node the role, with fence arg */
	EV_LEASE,   /* the holder's lease runs out; stale unless gen is lock.gen */
};

struct tx_site {
	bool up;
	void *m;
	enum tx_state disk;   /* its log: the last state persisted */
	uint32_t disk_fence;  /* and, for fenced 2PC, the highest fence */
	bool paused;          /* its process is stopped: what arrives waits for it */
	uint32_t timer_gen;
	uint32_t depth;       /* the longest chain of messages behind its state */
	bool decided;
	uint64_t t_decide;
	uint32_t decide_depth;
};

/* What one run measured; a row adds them up. */
struct tx_result {
	uint64_t runs, sends, commits, aborts;
	uint64_t all_decided, depth_sum, t_all_sum_us, t_all_max_us; /* runs where all decided */
	uint64_t faults, alone, blocked, undecided; /* fault runs: survivors */
	uint64_t wait_runs, wait_sum_us, wait_max_us;
	uint64_t violations;
	uint64_t blocked_seed, violation_seed; /* the first of each, 0 none */
	uint64_t copies, copy_delay_sum_us;
	bool failed;
	char inv[16];
	char what[640];
};

struct tx_run {
	const struct tx_cfg *cfg;
	uint64_t seed;
	struct cluster cl;
	struct tx_site s[TX_MAX_N];
	struct tx_update up;
	struct tx_check chk;
	uint64_t members;     /* the sites that must decide: all, or a nested commit's */
	uint64_t no_votes;
	bool record_only;     /* table: count violations instead of failing the run */
	bool violated;
	/* the fault: site TRIG_SITE strikes after its TRIG_K-th send of
	 * TRIG_MSG (0: at the start of the step that would send the first) */
	int trig_site;
	enum tx_msg_type trig_msg;
	uint32_t trig_k, trig_sent;
	bool fired;
	int victim;           /* the crashed (or paused) site, -1 none */
	uint64_t t_fault, t_back;
	uint64_t pause_us;
	struct tx_update held; /* the step the paused site was in, carried out when it wakes */
	/* The lock service (fenced 2PC): ring's critical region, abstractly. A grant goes to
	 * the first live requester once the role is free, with a fence one above the last;
	 * grants and releases are instant, their messages not counted. */
	struct {
		int holder;        /* -1: free */
		uint32_t fence;    /* the last fence granted */
		uint32_t gen;      /* of the holder's lease */
		uint16_t queue[TX_MAX_N * 4];
		size_t queued;
		uint64_t grants;
	} lock;
	struct tx_result res;
};

#define trace(run, ...) cluster_trace(&(run)->cl, __VA_ARGS__)

/* A failure of the run: the cluster records the first one. */
#define fail(run, ...) cluster_fail(&(run)->cl, __VA_ARGS__)

static const char *site_name(uint32_t i, char buf[8])
{
	snprintf(buf, 8, i == TX_COORD ? "c%u" : "p%u", i);
	return buf;
}

static bool coord_fault(enum tx_fault f)
{
	return f == TX_FAULT_COORD_BEFORE || f == TX_FAULT_COORD_AFTER || f == TX_FAULT_COORD_MID ||
	       f == TX_FAULT_COORD_PAUSE;
}

static bool nested(const struct tx_proto *p)
{
	return p == &tx_nested_2pc || p == &tx_nested_3pc;
}

/* ---- faults ---- */

/* Where FAULT strikes: the site, the message and how many of it it sends
 * first. Coordinator faults count its canCommit?s or the message that first
 * carries the commit decision (doCommit; preCommit for 3PC); participant
 * faults its vote: before it (the vote is not logged) or just after. */
static void fault_point(struct tx_run *run)
{
	const struct tx_cfg *c = run->cfg;
	struct simnet_rng *r = &run->cl.rng;
	run->trig_site = TX_COORD;
	run->trig_msg = c->proto->decision_msg;
	switch (c->fault) {
	case TX_FAULT_NONE:
		run->trig_site = -1;
		break;
	case TX_FAULT_COORD_BEFORE:
		run->trig_msg = TX_MSG_CAN_COMMIT;
		run->trig_k = (uint32_t)simnet_rng_below(r, c->n - 1); /* 0..n-2 asked */
		break;
	case TX_FAULT_COORD_AFTER:
		run->trig_k = 0;
		break;
	case TX_FAULT_COORD_MID:
		run->trig_k = (uint32_t)simnet_rng_range(r, 1, c->n > 2 ? c->n - 2 : 1);
		break;
	case TX_FAULT_COORD_PAUSE:
		run->trig_k = 0;
		run->pause_us = simnet_rng_range(r, c->pause_min_us, c->pause_max_us);
		break;
	case TX_FAULT_PART_BEFORE:
	case TX_FAULT_PART_AFTER:
		run->trig_site = (int)simnet_rng_range(r, 1, c->n - 1);
		run->trig_msg = TX_MSG_VOTE;
		run->trig_k = c->fault == TX_FAULT_PART_AFTER;
		break;
	case TX_FAULT_PARTITION:
		run->trig_k = 1;
		break;
	case TX_FAULT_SUB_ABORT: /* no crash: a site's work fails (see run_one) */
		run->trig_site = -1;
		break;
	case TX_FAULT_COUNT_:
		break;
	}
}

/* ---- the lock service (fenced 2PC) ---- */

/* The role is free: the first live requester gets it, with the next fence and a lease. */
static void lock_grant_next(struct tx_run *run)
{
	while (run->lock.holder < 0 && run->lock.queued) {
		uint16_t i = run->lock.queue[0];
		memmove(run->lock.queue, run->lock.queue + 1,
			--run->lock.queued * sizeof run->lock.queue[0]);
		if (!run->s[i].m)
			continue;
		char a[8];
		run->lock.holder = i;
		run->lock.fence++;
		run->lock.gen++;
		run->lock.grants++;
		trace(run, "LOCK grants %s the coordinator role, fence %u, lease %" PRIu64 " ms",
		      site_name(i, a), run->lock.fence, LEASE_T * run->cfg->t_us / MS);
		cluster_schedule(&run->cl, run->cl.now, EV_GRANT, i, run->lock.fence, 0);
		cluster_schedule(&run->cl, run->cl.now + LEASE_T * run->cfg->t_us, EV_LEASE, i, 0,
				 run->lock.gen);
	}
}

static void lock_acquire(struct tx_run *run, uint32_t i)
{
	if (run->lock.queued < sizeof run->lock.queue / sizeof run->lock.queue[0])
		run->lock.queue[run->lock.queued++] = (uint16_t)i;
	lock_grant_next(run);
}

static void lock_release(struct tx_run *run, uint32_t i)
{
	if (run->lock.holder != (int)i)
		return; /* its lease ran out before it gave the role back */
	run->lock.holder = -1;
	run->lock.gen++;
	lock_grant_next(run);
}

/* A crashed process's requests die with it; a role it holds stays until the lease ends. */
static void lock_forget(struct tx_run *run, uint32_t i)
{
	size_t k = 0;
	for (size_t j = 0; j < run->lock.queued; j++)
		if (run->lock.queue[j] != i)
			run->lock.queue[k++] = run->lock.queue[j];
	run->lock.queued = k;
}

static void fault_fire(struct tx_run *run, uint32_t i, uint32_t to)
{
	run->fired = true;
	run->t_fault = run->cl.now;
	run->t_back = run->cfg->down_us == NEVER ? NEVER : run->cl.now + run->cfg->down_us;
	char a[8], b[8];
	if (run->cfg->fault == TX_FAULT_PARTITION) {
		run->cl.net.cut = true;
		run->cl.net.side = (uint64_t)1 << i | (uint64_t)1 << to;
		trace(run, "PARTITION {%s, %s} | the rest", site_name(i, a), site_name(to, b));
		if (run->t_back != NEVER)
			cluster_schedule(&run->cl, run->t_back, EV_HEAL, 0, 0, 0);
		return;
	}
	struct tx_site *s = &run->s[i];
	if (run->cfg->fault == TX_FAULT_COORD_PAUSE) {
		/* A GC pause: the process stops in the middle of the step, keeps its
		 * memory, and later carries the step out as if no time had passed. */
		run->held = run->up;
		s->paused = true;
		run->victim = (int)i;
		run->t_back = run->cl.now + run->pause_us;
		trace(run, "PAUSE %s for %.1f ms, in the step that would send %s", site_name(i, a),
		      (double)run->pause_us / 1e3, tx_msg_name(run->trig_msg));
		cluster_schedule(&run->cl, run->t_back, EV_WAKE, i, 0, 0);
		return;
	}
	trace(run, "CRASH %s (%s); its log says %s", site_name(i, a), fault_title[run->cfg->fault],
	      tx_state_name(s->disk));
	run->cfg->proto->release(s->m);
	s->m = NULL;
	s->up = false;
	s->timer_gen++;
	run->victim = (int)i;
	lock_forget(run, i);
	if (run->t_back != NEVER)
		cluster_schedule(&run->cl, run->t_back, EV_RESTART, i, 0, 0);
}

/* ---- one step ---- */

static void check_result(struct tx_run *run, const char *inv, const char *what)
{
	if (!inv)
		return;
	if (!run->violated && run->cl.trace)
		printf("VIOLATION: %s: %s\n", inv, what);
	run->violated = true;
	if (!run->record_only)
		fail(run, inv, "%s", what);
}

static void send_one(struct tx_run *run, uint32_t i, const struct tx_action *a)
{
	uint8_t env[ENV_LEN];
	memcpy(env, a->buf, TX_MSG_LEN);
	uint32_t depth = run->s[i].depth + 1;
	env[TX_MSG_LEN] = (uint8_t)(depth >> 8);
	env[TX_MSG_LEN + 1] = (uint8_t)depth;
	run->res.sends++;
	struct tx_msg m = {0};
	if (tx_msg_decode(a->buf, TX_MSG_LEN, &m) < 0) {
		fail(run, "send", "site %u sends a malformed message", i);
		return;
	}
	char x[8], y[8];
	enum simnet_fate f = simnet_send(&run->cl.net, &run->cl.rng, &run->cl.q, run->cl.now,
					 EV_DELIVER, i, a->to, env, ENV_LEN);
	trace(run, "    %s -> send %s%s %s %u to %s%s", site_name(i, x), tx_msg_name(m.type),
	      m.type == TX_MSG_VOTE || m.type == TX_MSG_DECISION ? (m.arg ? " yes" : " no")
	      : m.type == TX_MSG_STATE ? (m.arg == TX_ST_PRECOMMITTED ? " precommitted"
					  : m.arg == TX_ST_UNCERTAIN ? " uncertain"
					  : m.arg == TX_ST_COMMITTED ? " committed"
					  : m.arg == TX_ST_ABORTED ? " aborted" : " init") : "",
	      run->cfg->proto->fenced ? "fence" : "epoch", m.epoch, site_name(a->to, y),
	      f == SIMNET_CUT ? " (cut)" : f == SIMNET_DUPLICATED ? " (duplicated)" : "");
	if (run->cl.q.nomem)
		fail(run, "sim", "%s", run->cl.q.nomem);
}

static bool update_sends(const struct tx_update *up, enum tx_msg_type type)
{
	for (size_t k = 0; k < up->n; k++)
		if (up->action[k].type == TX_ACTION_SEND && up->action[k].buf[0] == (uint8_t)type)
			return true;
	return false;
}

/* Carries out site I's update in order, the fault striking at its point. */
static void apply(struct tx_run *run, uint32_t i)
{
	const struct tx_update *up = &run->up;
	struct tx_site *s = &run->s[i];
	bool armed = !run->fired && run->trig_site == (int)i;
	if (armed && run->trig_k == 0 && update_sends(up, run->trig_msg)) {
		fault_fire(run, i, 0); /* before the step: none of it happened */
		return;
	}
	char name[8], what[200];
	for (size_t k = 0; k < up->n && !cluster_failed(&run->cl); k++) {
		const struct tx_action *a = &up->action[k];
		switch (a->type) {
		case TX_ACTION_PERSIST:
			s->disk = a->state;
			s->disk_fence = a->fence;
			if (run->cfg->proto->fenced)
				trace(run, "    %s -> log %s, fence %u", site_name(i, name),
				      tx_state_name(a->state), a->fence);
			else
				trace(run, "    %s -> log %s", site_name(i, name),
				      tx_state_name(a->state));
			break;
		case TX_ACTION_ACQUIRE:
			trace(run, "    %s -> asks for the coordinator role", site_name(i, name));
			lock_acquire(run, i);
			break;
		case TX_ACTION_RELEASE:
			trace(run, "    %s -> gives the role back", site_name(i, name));
			lock_release(run, i);
			break;
		case TX_ACTION_SEND:
			if (a->to >= run->cfg->n || a->to == i) {
				fail(run, "send", "%s sends to site %u", site_name(i, name), a->to);
				break;
			}
			send_one(run, i, a);
			if (armed && a->buf[0] == (uint8_t)run->trig_msg &&
			    ++run->trig_sent == run->trig_k) {
				fault_fire(run, i, a->to);
				if (!s->up)
					return; /* the rest of the step dies with it */
				armed = false;
			}
			break;
		case TX_ACTION_TIMER:
			s->timer_gen++;
			if (a->after_us != TX_NO_TIMER)
				cluster_schedule(&run->cl, run->cl.now + a->after_us, EV_TIMER, i, 0,
						 s->timer_gen);
			break;
		case TX_ACTION_VOTE:
			trace(run, "    %s -> votes %s", site_name(i, name), a->yes ? "yes" : "no");
			check_result(run, tx_check_vote(&run->chk, i, a->yes, what, sizeof what), what);
			break;
		case TX_ACTION_DECIDE:
			trace(run, "    %s -> DECIDES %s", site_name(i, name), a->yes ? "COMMIT" : "ABORT");
			if (!s->decided) {
				s->decided = true;
				s->t_decide = run->cl.now;
				s->decide_depth = s->depth;
			}
			check_result(run, tx_check_decide(&run->chk, i, a->yes, what, sizeof what),
				     what);
			break;
		}
	}
}

static void step(struct tx_run *run, uint32_t i, enum tx_event_type type,
		 const struct simnet_item *it, uint32_t fence)
{
	struct tx_event ev = {.type = type, .fence = fence};
	if (it) {
		ev.buf = it->buf;
		ev.len = TX_MSG_LEN;
		ev.from = (uint16_t)it->src;
	}
	run->cfg->proto->step(run->s[i].m, &ev, &run->up);
	apply(run, i);
}

static bool site_new(struct tx_run *run, uint32_t i)
{
	const struct tx_cfg *c = run->cfg;
	struct tx_config tc = {
		.n = c->n, .me = i, .tx = TX_ID, .vote_yes = !(run->no_votes >> i & 1),
		.cooperative = c->proto->cooperative, .t_us = c->t_us, .fence = run->s[i].disk_fence,
	};
	run->s[i].m = c->proto->make(&tc, run->s[i].disk);
	if (!run->s[i].m) {
		fail(run, "setup", "site %u of %zu cannot be made", i, c->n);
		return false;
	}
	run->s[i].up = true;
	return true;
}

/* Carries out queue item ITEM. Returns true when it keeps the item: what reaches a paused
 * process (datagrams in its socket, its timer, a grant) waits for it to wake, in order. */
static bool dispatch(struct tx_run *run, uint32_t item)
{
	const struct simnet_item *it = &run->cl.q.items[item];
	struct tx_site *s = &run->s[it->node];
	char a[8], b[8];
	if (s->paused && (it->kind == EV_DELIVER || it->kind == EV_TIMER || it->kind == EV_GRANT)) {
		cluster_push(&run->cl, run->t_back, item);
		return true;
	}
	switch ((enum tx_kind)it->kind) {
	case EV_BEGIN:
		trace(run, "%s begin", site_name(it->node, a));
		step(run, it->node, TX_EVENT_BEGIN, NULL, 0);
		break;
	case EV_DELIVER: {
		struct tx_msg m;
		if (it->len != ENV_LEN || tx_msg_decode(it->buf, TX_MSG_LEN, &m) < 0) {
			fail(run, "sim", "a datagram that is no message");
			break;
		}
		trace(run, "%s %s %s from %s", site_name(it->node, a), s->up ? "recv" : "(down) drops",
		      tx_msg_name(m.type), site_name(it->src, b));
		if (!s->up)
			break;
		uint32_t d = (uint32_t)it->buf[TX_MSG_LEN] << 8 | it->buf[TX_MSG_LEN + 1];
		if (d > s->depth)
			s->depth = d;
		step(run, it->node, TX_EVENT_MESSAGE, it, 0);
		break;
	}
	case EV_TIMER:
		if (s->up && it->gen == s->timer_gen) {
			trace(run, "%s timeout", site_name(it->node, a));
			step(run, it->node, TX_EVENT_TIMEOUT, NULL, 0);
		}
		break;
	case EV_RESTART:
		trace(run, "RESTART %s from its log: %s", site_name(it->node, a),
		      tx_state_name(s->disk));
		if (site_new(run, it->node))
			step(run, it->node, TX_EVENT_RECOVER, NULL, 0);
		break;
	case EV_HEAL:
		trace(run, "HEAL the partition");
		run->cl.net.cut = false;
		break;
	case EV_WAKE:
		trace(run, "WAKE %s: it carries out the step it was in, then what waited for it",
		      site_name(it->node, a));
		s->paused = false;
		run->up = run->held;
		apply(run, it->node);
		break;
	case EV_GRANT:
		if (!s->m) {
			trace(run, "%s (down) misses its grant, fence %u", site_name(it->node, a),
			      it->arg);
			break;
		}
		trace(run, "%s granted the role, fence %u", site_name(it->node, a), it->arg);
		step(run, it->node, TX_EVENT_GRANTED, NULL, it->arg);
		break;
	case EV_LEASE:
		if (it->gen != run->lock.gen || run->lock.holder != (int)it->node)
			break;
		trace(run, "LEASE of %s (fence %u) runs out", site_name(it->node, a), run->lock.fence);
		run->lock.holder = -1;
		run->lock.gen++;
		lock_grant_next(run);
		break;
	}
	return false;
}

/* ---- one run ---- */

static void run_finish(struct tx_run *run)
{
	const struct tx_cfg *c = run->cfg;
	struct tx_result *r = &run->res;
	r->runs = 1;
	r->copies = run->cl.net.copies;
	r->copy_delay_sum_us = run->cl.net.delay_sum_us;
	r->commits = run->chk.commit_by >= 0;
	r->aborts = run->chk.abort_by >= 0;
	r->violations = run->violated;
	if (run->violated)
		r->violation_seed = run->seed;
	bool all = true;
	uint64_t t_all = 0, depth = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		const struct tx_site *s = &run->s[i];
		if (!(run->members >> i & 1))
			continue;
		all &= s->decided;
		if (s->decided && s->t_decide > t_all)
			t_all = s->t_decide;
		if (s->decided && s->decide_depth > depth)
			depth = s->decide_depth;
	}
	if (all) {
		r->all_decided = 1;
		r->depth_sum = depth;
		r->t_all_sum_us = r->t_all_max_us = t_all;
	}
	if (run->fired) {
		/* The survivors: every site but the crashed one (all of them
		 * under a partition). Alone: all decided before the victim came
		 * back or the partition healed; blocked: some did only after,
		 * or never. */
		r->faults = 1;
		bool alone = true, undecided = false;
		uint64_t wait = 0;
		for (uint32_t i = 0; i < c->n; i++) {
			const struct tx_site *s = &run->s[i];
			if ((int)i == run->victim)
				continue;
			if (!s->decided) {
				alone = false;
				undecided = true;
				continue;
			}
			if (run->t_back != NEVER && s->t_decide >= run->t_back)
				alone = false;
			uint64_t w = s->t_decide > run->t_fault ? s->t_decide - run->t_fault : 0;
			if (w > wait)
				wait = w;
		}
		r->alone = alone;
		r->blocked = !alone;
		r->undecided = undecided;
		if (!alone)
			r->blocked_seed = run->seed;
		if (!undecided) {
			r->wait_runs = 1;
			r->wait_sum_us = r->wait_max_us = wait;
		}
	}
	for (uint32_t i = 0; i < c->n; i++)
		c->proto->release(run->s[i].m);
	r->failed = run->cl.failed;
	snprintf(r->inv, sizeof r->inv, "%s", run->cl.inv);
	snprintf(r->what, sizeof r->what, "%s", run->cl.what);
	cluster_free(&run->cl);
}

static void run_one(const struct tx_cfg *c, uint64_t seed, const char *salt, bool trace_on,
		    bool record_only, struct tx_result *out)
{
	struct tx_run *run = calloc(1, sizeof *run);
	if (!run) {
		DRIVER_RESULT_OOM(out);
		return;
	}
	run->cfg = c;
	run->seed = seed;
	run->record_only = record_only;
	run->victim = -1;
	run->t_back = NEVER;
	run->lock.holder = -1;
	cluster_init(&run->cl, seed, salt, trace_on, TX_EVENT_CAP, 0);
	run->cl.net.min_delay_us = c->min_delay_us;
	run->cl.net.max_delay_us = run->cl.net.slow_delay_us = c->max_delay_us;
	run->cl.net.loss_on = c->p_dup > 0; /* duplication only: no loss, reliable links */
	run->cl.net.p_dup = c->p_dup;
	tx_check_init(&run->chk, c->n);
	if (c->n < 2 || c->n > TX_MAX_N)
		fail(run, "setup", "n=%zu is outside 2..%d", c->n, TX_MAX_N);
	fault_point(run);
	run->no_votes = c->no_votes;
	if (c->fault == TX_FAULT_SUB_ABORT)
		run->no_votes |= (uint64_t)1 << simnet_rng_range(&run->cl.rng, 1, c->n - 1);
	run->members = ((uint64_t)1 << c->n) - 1;
	if (nested(c->proto)) {
		/* The oracle: who must take part, from the tree and whose work
		 * fails, not from what the protocol says. */
		run->members = tx_nested_members(c->n, run->no_votes);
		tx_check_members(&run->chk, run->members);
	}
	trace(run, "%s n=%zu: %s (site %d after %u %s); no votes 0x%" PRIx64 "; timeout unit %"
	      PRIu64 " us; back after %s", c->proto->title, c->n, fault_title[c->fault],
	      run->trig_site, run->trig_k, tx_msg_name(run->trig_msg), c->no_votes, c->t_us,
	      c->down_us == NEVER ? "never" : "the down time");
	for (uint32_t i = 0; i < c->n && !cluster_failed(&run->cl); i++)
		if (site_new(run, i))
			cluster_schedule(&run->cl, 0, EV_BEGIN, c->n - 1 - i, 0, 0);
	uint32_t item;
	while (cluster_next(&run->cl, c->t_end, &item)) {
		if (!dispatch(run, item))
			cluster_item_free(&run->cl, item);
	}
	if (!cluster_failed(&run->cl))
		run->cl.now = c->t_end;
	run_finish(run);
	*out = run->res;
	free(run);
}

static void add(struct tx_result *t, const struct tx_result *r)
{
	t->runs += r->runs;
	t->sends += r->sends;
	t->commits += r->commits;
	t->aborts += r->aborts;
	t->all_decided += r->all_decided;
	t->depth_sum += r->depth_sum;
	t->t_all_sum_us += r->t_all_sum_us;
	if (r->t_all_max_us > t->t_all_max_us)
		t->t_all_max_us = r->t_all_max_us;
	t->faults += r->faults;
	t->alone += r->alone;
	t->blocked += r->blocked;
	t->undecided += r->undecided;
	t->wait_runs += r->wait_runs;
	t->wait_sum_us += r->wait_sum_us;
	if (r->wait_max_us > t->wait_max_us)
		t->wait_max_us = r->wait_max_us;
	t->violations += r->violations;
	if (!t->blocked_seed)
		t->blocked_seed = r->blocked_seed;
	if (!t->violation_seed)
		t->violation_seed = r->violation_seed;
	t->copies += r->copies;
	t->copy_delay_sum_us += r->copy_delay_sum_us;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* ---- the table ---- */

static const size_t table_n[] = {3, 5, 10};
#define TABLE_FAULT_N 5

struct tx_row {
	const struct tx_proto *proto;
	size_t n;
	enum tx_fault fault;
	char name[48]; /* proto/fault/n, for --tx-replay */
};

/* The measured network (the lock table's) and timings. */
static struct tx_cfg table_config(const struct tx_row *row)
{
	return (struct tx_cfg){
		.proto = row->proto,
		.n = row->n,
		.fault = row->fault,
		.min_delay_us = 50,
		.max_delay_us = 2 * MS,
		.t_us = 10 * MS,    /* above a round trip (4 ms) with room to spare */
		.down_us = 500 * MS,
		.pause_min_us = 5 * MS, /* from before the successor asks to long after it decided */
		.pause_max_us = 100 * MS,
		.t_end = 1500 * MS,
	};
}

static size_t table_rows(struct tx_row *rows, size_t cap)
{
	size_t k = 0;
	for (size_t p = 0; p < NPROTOS; p++) {
		for (size_t j = 0; j < sizeof table_n / sizeof table_n[0] && k < cap; j++)
			rows[k++] = (struct tx_row){protos[p], table_n[j], TX_FAULT_NONE, ""};
		for (int f = 1; f < TX_FAULT_COUNT_ && k < cap; f++)
			if ((f == TX_FAULT_SUB_ABORT) == nested(protos[p]))
				rows[k++] = (struct tx_row){protos[p], TABLE_FAULT_N,
							    (enum tx_fault)f, ""};
	}
	for (size_t i = 0; i < k; i++)
		snprintf(rows[i].name, sizeof rows[i].name, "%s/%s/%zu", rows[i].proto->arg,
			 fault_arg[rows[i].fault], rows[i].n);
	return k;
}

static void salt_of(char *buf, size_t cap, const struct tx_row *row)
{
	snprintf(buf, cap, "compare-tx/%s", row->name);
}

/* Whether a row's runs may break atomicity: only 3PC under a partition,
 * the limit the table shows. Everywhere else a violation fails the table. */
static bool may_violate(const struct tx_row *row)
{
	return row->fault == TX_FAULT_PARTITION && row->proto == &tx_3pc;
}

static void format_row(char *out, size_t cap, const struct tx_row *row,
		       const struct tx_result *t, double msg_time_us)
{
	char msgs[32], depth[32] = "-", time[48] = "-", alone[48] = "-", wait[48] = "-",
	     blocked[24] = "-", atomic[32], seed[24] = "-";
	if (row->fault == TX_FAULT_NONE || row->fault == TX_FAULT_SUB_ABORT) {
		snprintf(msgs, sizeof msgs, "%.2f", ratio((double)t->sends, (double)t->commits));
		snprintf(depth, sizeof depth, "%.2f", ratio((double)t->depth_sum,
							    (double)t->all_decided));
		snprintf(time, sizeof time, "%.2f / %.2f",
			 ratio(ratio((double)t->t_all_sum_us, (double)t->all_decided), msg_time_us),
			 ratio((double)t->t_all_max_us, msg_time_us));
		snprintf(seed, sizeof seed, "1");
	} else {
		snprintf(msgs, sizeof msgs, "%.1f", ratio((double)t->sends, (double)t->runs));
		snprintf(alone, sizeof alone, "%" PRIu64 "/%" PRIu64, t->alone, t->faults);
		if (t->wait_runs)
			snprintf(wait, sizeof wait, "%.0f / %.0f",
				 ratio((double)t->wait_sum_us, (double)t->wait_runs) / 1000.0,
				 (double)t->wait_max_us / 1000.0);
		if (t->undecided)
			snprintf(wait, sizeof wait, "never in %" PRIu64, t->undecided);
		snprintf(blocked, sizeof blocked, "%" PRIu64, t->blocked);
		uint64_t s = t->violation_seed ? t->violation_seed : t->blocked_seed ? t->blocked_seed : 1;
		snprintf(seed, sizeof seed, "%" PRIu64, s);
	}
	if (t->violations)
		snprintf(atomic, sizeof atomic, "NO in %" PRIu64, t->violations);
	else
		snprintf(atomic, sizeof atomic, "yes");
	char label[48];
	snprintf(label, sizeof label, "%s", fault_title[row->fault]);
	snprintf(out, cap, "%-16s %2zu  %-41s %4" PRIu64 " %4" PRIu64 " %5" PRIu64 " %8s %6s %13s"
		 "  %7s %11s %7s  %-9s %s", row->proto->title, row->n, label, t->runs, t->commits,
		 t->aborts, msgs, depth, time, alone, wait, blocked, atomic, seed);
}

int tx_table(uint64_t seeds, FILE *out)
{
	static struct tx_row rows[64];
	size_t nrows = table_rows(rows, sizeof rows / sizeof rows[0]);
	static struct tx_result sums[64];
	struct tx_result all = {0};
	double t0 = driver_wall_s();
	for (size_t k = 0; k < nrows; k++) {
		struct tx_cfg c = table_config(&rows[k]);
		char salt[96];
		salt_of(salt, sizeof salt, &rows[k]);
		struct tx_result sum = {0};
		for (uint64_t s = 1; s <= seeds; s++) {
			struct tx_result r;
			run_one(&c, s, salt, false, may_violate(&rows[k]), &r);
			if (r.failed) {
				printf("FAIL %s seed=%" PRIu64 ": %s: %s\n", rows[k].name, s, r.inv,
				       r.what);
				printf("replay: build/compare --tx-replay %s --seed %" PRIu64 "\n",
				       rows[k].name, s);
				return 1;
			}
			if (c.fault != TX_FAULT_NONE && c.fault != TX_FAULT_SUB_ABORT && !r.faults) {
				printf("FAIL %s seed=%" PRIu64 ": the fault never struck\n",
				       rows[k].name, s);
				return 1;
			}
			add(&sum, &r);
		}
		sums[k] = sum;
		add(&all, &sum);
	}
	double msg_time = ratio((double)all.copy_delay_sum_us, (double)all.copies);
	const struct tx_cfg c0 = table_config(&rows[0]);
	for (int pass = 0; pass < 2; pass++) {
		FILE *f = pass == 0 ? stdout : out;
		if (!f)
			continue;
		fprintf(f,
			"\nAtomic commit, one transaction per run: generated by `make compare` "
			"(test/compare_tx.c), not typed in.\n"
			"network: as above, one-way delay uniform %.2f..%.2f ms, no loss; 1 message time"
			" = the mean one-way delay, measured: %.3f ms.\n"
			"a coordinator and n-1 participants, all voting yes; timeout unit T = %.0f ms "
			"(timers are 1 to 4 T); %" PRIu64 " seeds per row.\n"
			"failure rows: n = %d; a crashed site restarts from its log, and a partition "
			"heals, %.0f ms after; the run ends at %.1f s.\n\n",
			(double)c0.min_delay_us / 1e3, (double)c0.max_delay_us / 1e3, msg_time / 1e3,
			(double)c0.t_us / 1e3, seeds, TABLE_FAULT_N, (double)c0.down_us / 1e3,
			(double)c0.t_end / 1e6);
		fprintf(f, "%-16s %2s  %-41s %4s %4s %5s %8s %6s %13s  %7s %11s %7s  %-9s %s\n", "",
			"", "", "", "", "", "messages", "delays", "all decided", "alone", "wait ms", "",
			"", "");
		fprintf(f, "%-16s %2s  %-41s %4s %4s %5s %8s %6s %13s  %7s %11s %7s  %-9s %s\n",
			"protocol", "n", "failure", "runs", "commit", "abort", "per tx", "chain",
			"msg times", "decide", "mean / max", "blocked", "atomic", "seed");
		for (size_t k = 0; k < nrows; k++) {
			char line[512];
			format_row(line, sizeof line, &rows[k], &sums[k], msg_time);
			fprintf(f, "%s\n", line);
		}
		fprintf(f,
			"\nmessages per tx: all messages sent / committed transactions (failure rows: per"
			" run, with every retry and question).\n"
			"chain: the longest chain of messages (each sent after receiving the one before)"
			" that ends in a site's decision,\n"
			"  mean over runs; msg times: from the coordinator's first message until the "
			"last site decided, mean / max.\n"
			"alone decide: runs in which every survivor decided before the crashed site "
			"restarted (the partition healed);\n"
			"  wait: from the fault until the last survivor decided (mean / max over runs); "
			"blocked: runs in which some survivor\n"
			"  waited for the restart or the heal. atomic: no site committed while another "
			"aborted, checked on every step.\n"
			"seed: replays with its trace: build/compare --tx-replay PROTOCOL/FAILURE/N "
			"--seed S (the first blocked or broken run).\n");
	}
	fprintf(stderr, "compare: %zu transaction rows x %" PRIu64 " seeds in %.1f s\n", nrows,
		seeds, driver_wall_s() - t0);
	return 0;
}

int tx_replay(const char *name, uint64_t seed)
{
	static struct tx_row rows[64];
	size_t nrows = table_rows(rows, sizeof rows / sizeof rows[0]);
	for (size_t k = 0; k < nrows; k++) {
		if (strcmp(rows[k].name, name))
			continue;
		struct tx_cfg c = table_config(&rows[k]);
		char salt[96];
		salt_of(salt, sizeof salt, &rows[k]);
		struct tx_result r;
		run_one(&c, seed, salt, true, true, &r);
		printf("%s seed %" PRIu64 ": %s; %" PRIu64 " messages; %s\n", name, seed,
		       r.violations ? "ATOMICITY BROKEN" : "atomic", r.sends,
		       r.faults ? (r.blocked ? "a survivor was blocked" : "the survivors decided alone")
				: "no fault");
		return r.failed ? 1 : 0;
	}
	fprintf(stderr, "compare: no transaction row '%s'; rows:", name);
	for (size_t k = 0; k < nrows; k++)
		fprintf(stderr, " %s", rows[k].name);
	fprintf(stderr, "\n");
	return 2;
}

int tx_proto_lookup(const char *arg)
{
	for (size_t p = 0; p < NPROTOS; p++)
		if (!strcmp(arg, protos[p]->arg))
			return (int)p;
	return -1;
}

/* ---- the check: random settings per protocol ---- */

/* A random setting: the size, who votes no, the network's speed and
 * duplication, and in most runs one fault (partitions only for 2PC, which
 * must stay atomic under them; 3PC is not meant to). */
static struct tx_cfg check_config(const struct tx_proto *p, struct simnet_rng *r)
{
	struct tx_cfg c = {.proto = p};
	c.n = (size_t)(simnet_rng_chance(r, 0.1) ? simnet_rng_range(r, 11, TX_MAX_N)
						 : simnet_rng_range(r, 2, 10));
	if (simnet_rng_chance(r, 0.25))
		c.no_votes = (uint64_t)1 << simnet_rng_range(r, 1, c.n - 1);
	uint64_t speed = simnet_rng_below(r, 3);
	c.min_delay_us = speed == 0 ? 5 : 50;
	c.max_delay_us = speed == 0 ? 30 : speed == 1 ? 2 * MS : 10 * MS;
	c.p_dup = simnet_rng_chance(r, 0.5) ? (double)simnet_rng_range(r, 1, 5) / 100.0 : 0;
	c.t_us = c.max_delay_us * simnet_rng_range(r, 3, 6);
	int last = p == &tx_3pc ? TX_FAULT_PART_AFTER : TX_FAULT_PARTITION;
	c.fault = simnet_rng_chance(r, 0.2) ? TX_FAULT_NONE
					    : (enum tx_fault)simnet_rng_range(r, 1, (uint64_t)last);
	if (nested(p)) {
		/* No crashes (a provisional commit is not logged): any sites'
		 * work may fail instead. */
		c.fault = TX_FAULT_NONE;
		c.no_votes = simnet_rng_chance(r, 0.5) ? simnet_rng_next(r) & (((uint64_t)1 << c.n) - 2)
						       : 0;
	}
	c.down_us = simnet_rng_chance(r, 0.3) ? NEVER : c.t_us * simnet_rng_range(r, 1, 60);
	c.t_end = 100 * c.t_us + (c.down_us == NEVER ? 0 : c.down_us);
	/* A coordinator pause in an eighth of the fault runs, drawn last so that the other
	 * runs stay what they were (the seeds docs/comparison.md names still replay). Half
	 * the pauses end within a round trip of the first lease's end (LEASE_T after the
	 * start; the pause starts within a round trip of it), where a woken coordinator
	 * meets its successor at work; the rest anywhere from T/2 to 20 T. */
	if (c.fault != TX_FAULT_NONE && simnet_rng_chance(r, 1.0 / 8)) {
		c.fault = TX_FAULT_COORD_PAUSE;
		bool near_lease = simnet_rng_chance(r, 0.5);
		c.pause_min_us = near_lease ? LEASE_T * c.t_us - 2 * c.max_delay_us : c.t_us / 2;
		c.pause_max_us = near_lease ? LEASE_T * c.t_us + 2 * c.max_delay_us : 20 * c.t_us;
	}
	return c;
}

int tx_check(int only, uint64_t first, uint64_t seeds, bool trace_on)
{
	char why[200];
	if (!tx_check_selftest(why, sizeof why)) {
		printf("FAIL compare-check: the atomic commit checker misses a bad history: %s\n", why);
		return 1;
	}
	double t0 = driver_wall_s();
	printf("compare-check transactions:");
	for (size_t p = 0; p < NPROTOS; p++) {
		if (only >= 0 && (size_t)only != p)
			continue;
		struct tx_result sum = {0};
		for (uint64_t s = first; s < first + seeds; s++) {
			char salt[64];
			snprintf(salt, sizeof salt, "compare-check/%s", protos[p]->arg);
			struct simnet_rng plan;
			simnet_rng_seed(&plan, s, salt);
			struct tx_cfg c = check_config(protos[p], &plan);
			if (trace_on)
				printf("\ncheck %s seed %" PRIu64 ": n=%zu %s, no votes 0x%" PRIx64
				       ", delay %" PRIu64 "..%" PRIu64 " us, dup %.0f%%, T %" PRIu64
				       " us, down %s, end %.3f s\n", protos[p]->arg, s, c.n,
				       fault_title[c.fault], c.no_votes, c.min_delay_us, c.max_delay_us,
				       c.p_dup * 100, c.t_us, c.down_us == NEVER ? "forever" : "for a while",
				       (double)c.t_end / 1e6);
			struct tx_result r;
			run_one(&c, s, salt, trace_on, false, &r);
			/* Termination: with no fault everyone decides, and commits
			 * when everyone voted yes; 3PC's survivors decide after a
			 * crash whether or not the victim comes back; and once the
			 * victim is back (or the partition healed), everyone does. */
			const char *stuck = NULL;
			if (!r.failed && !r.faults && !r.all_decided)
				stuck = "with no fault, a site never decided";
			else if (!r.failed && !r.faults && (!c.no_votes || nested(protos[p])) &&
				 !r.commits)
				stuck = nested(protos[p]) ? "a nested transaction with no fault aborted"
					: "with no fault and every vote yes, the transaction aborted";
			else if (!r.failed && protos[p] == &tx_3pc && r.faults && r.undecided)
				stuck = "3PC: a survivor of a crash never decided";
			else if (!r.failed && protos[p]->fenced && r.faults && r.undecided &&
				 coord_fault(c.fault))
				stuck = "2PC fenced: with every participant up, a survivor never decided";
			else if (!r.failed && r.faults && !r.all_decided &&
				 (c.down_us != NEVER || c.fault == TX_FAULT_COORD_PAUSE))
				stuck = "a site never decided, though the fault was over";
			if (r.failed || stuck) {
				printf("\nFAIL compare-check alg=%s seed=%" PRIu64 ": %s: %s\n",
				       protos[p]->arg, s, r.failed ? r.inv : "termination",
				       r.failed ? r.what : stuck);
				printf("replay: build/compare --check --alg %s --seed %" PRIu64
				       " --trace\n", protos[p]->arg, s);
				return 1;
			}
			add(&sum, &r);
		}
		printf(" %s %" PRIu64 " seeds ok (%" PRIu64 " commits, %" PRIu64 " aborts; %" PRIu64
		       " faults: the survivors all decided before the fault was over in %" PRIu64
		       ");", protos[p]->arg, seeds, sum.commits, sum.aborts, sum.faults, sum.alone);
	}
	printf(" atomic and valid on every step; %.2f s\n", driver_wall_s() - t0);
	return 0;
}
