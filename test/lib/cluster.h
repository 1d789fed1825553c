/* A simulated cluster of protocol cores (ring/core/node.c) on simnet: the members'
 * cores and their timers, the event queue, the network, the seeded random
 * source, virtual time, the first failure and the trace. The drivers
 * (test/sim/sim.c, test/compare/compare.c) add their clients, faults and checks on top.
 *
 * Time moves by cluster_next, which always fires the earliest of every
 * member's next timeout and every delivery: a member's deadline is one
 * CLUSTER_EV_TICK item in the queue, replaced when the deadline moves, and
 * ties go by insertion order, so that a run is a pure function of its seed.
 * Randomness comes only from the caller-seeded c->rng. */
#ifndef RING_TEST_CLUSTER_H
#define RING_TEST_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/layout.h"
#include "core/node.h"
#include "lib/simnet.h"

#define CLUSTER_NEVER UINT64_MAX

/* The queue items the cluster knows; a driver numbers its own kinds from
 * CLUSTER_EV_DRIVER on. */
enum cluster_kind {
	CLUSTER_EV_START,   /* a member's first start */
	CLUSTER_EV_TICK,    /* a member's deadline; stale unless gen is its tick_gen */
	CLUSTER_EV_DELIVER, /* a datagram arrives: node receives from src */
	CLUSTER_EV_DRIVER,
};

struct cluster_member {
	uint16_t id;
	struct ring_node *rn;      /* NULL while the member has no process */
	uint32_t tick_gen;         /* a TICK item of another gen is stale */
	uint64_t tick_at;          /* the pending tick, CLUSTER_NEVER if none */
	struct ring_status status; /* as of its last step */
	bool have_status;          /* a step since its last start */
};

/* What a failure does besides being recorded: the simulator hands its
 * failures to its checker's record (simcheck.c), whose first one wins. */
typedef void (*cluster_fail_fn)(void *arg, const char *inv, const char *what);

struct cluster {
	struct ring_layout layout;
	size_t n;
	struct cluster_member *m;
	struct simnet_rng rng;
	struct simnet_queue q;
	struct simnet_link net;
	uint64_t now;
	uint64_t events, event_cap;      /* items fired; more than the cap fails the run */
	uint64_t same_time, same_time_at, same_time_cap; /* items at one instant */
	bool trace;
	struct ring_update upd;          /* the last step's */
	struct ring_update *step_into;   /* where steps write instead, when set */
	/* The first failure, the one to replay: "t=S.US what". */
	bool failed;
	char inv[16];
	char what[640];
	uint32_t stepping;               /* the member whose step runs (a failed RING_ASSERT's) */
	cluster_fail_fn on_fail;         /* when set, failures are recorded there instead */
	void *fail_arg;
};

/* Seeds the random source from SEED and SALT and empties the queue. Caps:
 * EVENT_CAP items in a run, SAME_TIME_CAP at one instant (0: no cap). */
void cluster_init(struct cluster *c, uint64_t seed, const char *salt, bool trace,
		  uint64_t event_cap, uint64_t same_time_cap);
/* The members of LAYOUT, none of them started. False (the run failed) when
 * memory runs out. */
bool cluster_set_layout(struct cluster *c, const struct ring_layout *layout);
/* Frees every core, the members and the queue. */
void cluster_free(struct cluster *c);

/* ---- failures and the trace ---- */

/* The run failed: INV names what broke ("I1", "progress", "sim", ...), the
 * rest says how. Only the first failure is kept, as "t=S.US what", and
 * printed as "FAILED here: ..." when tracing; with on_fail set it goes
 * there instead. */
void cluster_fail(struct cluster *c, const char *inv, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with WHAT already formatted. */
void cluster_fail_record(struct cluster *c, const char *inv, const char *what);
bool cluster_failed(const struct cluster *c);
/* One line "t=   S.US ..." when tracing. */
void cluster_trace(const struct cluster *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- the queue ---- */

/* A fresh item of KIND, or UINT32_MAX (the run failed) when memory runs out. */
uint32_t cluster_item_new(struct cluster *c, int kind);
void cluster_item_free(struct cluster *c, uint32_t item);
/* Queues ITEM at T; a failure when memory runs out. */
void cluster_push(struct cluster *c, uint64_t t, uint32_t item);
void cluster_schedule(struct cluster *c, uint64_t t, int kind, uint32_t node, uint32_t arg,
		      uint32_t gen);
/* Takes the earliest item at or before UNTIL into *ITEM and makes its time
 * now. False when there is none, the run failed, or a cap was passed (which
 * fails the run; the item is not handed out). */
bool cluster_next(struct cluster *c, uint64_t until, uint32_t *item);

/* ---- members ---- */

/* Gives member I a fresh core that starts from STORED_EPOCH (what its disk
 * kept); a pending tick of its last life is stale. False (the run failed)
 * when the core cannot be made. The START event is the driver's to step. */
bool cluster_start(struct cluster *c, uint32_t i, uint32_t stored_epoch);
/* Member I's process is gone: its core is freed (its status first, into
 * *LAST when given) and its pending tick is stale. */
void cluster_stop(struct cluster *c, uint32_t i, struct ring_status *last);
/* Whether ITEM (a CLUSTER_EV_TICK) is its member's current tick, not one
 * replaced since or left from an earlier life. */
bool cluster_tick_current(const struct cluster *c, const struct simnet_item *item);

/* An event of TYPE at now: a DATAGRAM carries IT from the member at
 * it->src, ACQUIRE and RELEASE the client handle CLIENT. */
struct ring_event cluster_event(const struct cluster *c, enum ring_event_type type,
				const struct simnet_item *it, uint64_t client);
/* Steps member I's core with EV, giving it half of RING_UPDATE_MAX: a step
 * that outgrew PROTOCOL.md §7's estimate (about forty actions) ends in one
 * FATAL that the driver reports. The update is c->upd (or *c->step_into);
 * the member's status is taken after the step. Its actions are the
 * driver's to carry out, and then cluster_arm. */
const struct ring_update *cluster_step(struct cluster *c, uint32_t i,
				       const struct ring_event *ev);
/* Schedules member I's next tick at the deadline of its last update (now,
 * if that is past), replacing the pending one when it moved. */
void cluster_arm(struct cluster *c, uint32_t i);

#endif
