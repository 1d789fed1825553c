/* The test ring of the core's unit suites: real members (ring/core/node.c) on a
 * virtual clock and a FIFO network that every test can drop from, with a
 * record of every action and the safety the whole ring must keep: a
 * struct hring, driven by hring_* calls (named apart from the simulator's
 * struct sim in test/sim/sim.c, which is another program).
 * HARNESS_TRACE=1 build/unit SUITE TEST prints every action as it is made. */
#ifndef RING_TEST_HARNESS_H
#define RING_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/cluster.h"
#include "core/layout.h"
#include "core/node.h"
#include "core/set.h"
#include "core/wire.h"

#define NEVER UINT64_MAX
#define MS 1000ULL          /* microseconds per millisecond */
#define T0 (1000 * MS)      /* the clock starts at 1 s: time 0 is not special */
#define LATENCY (1 * MS)    /* every datagram takes one millisecond */
#define HRING_MAX 12
#define FLIGHT_MAX 4096
#define RUN_STEPS_MAX 500000 /* a run that takes more steps is stuck */

/* Offset of quiet_us in an encoded TOKEN: after epoch, seq and counter. */
#define OFF_QUIET (RING_WIRE_HEADER + 12)
#define OFF_WALK_US (RING_WIRE_HEADER + 20) /* after idle: both ages grow on a retransmit */

/* ---- the harness's ring ---- */

struct flight {
	uint64_t at;       /* when it arrives */
	uint16_t from, to; /* member ids */
	uint16_t len;
	uint8_t buf[RING_WIRE_MAX];
};

struct rec {
	uint64_t seq; /* order across all members */
	uint64_t at;
	struct ring_action a;
};

struct hring {
	struct ring_layout layout;
	size_t n;
	/* The members' cores: booted, stepped, stopped and restarted by the
	 * one test cluster (cluster.h). The network and the timers below are
	 * the harness's own: one FIFO, every datagram 1 ms, and a delivery
	 * before a deadline at the same instant, which the unit tests'
	 * timings are written against. */
	struct cluster cl;
	bool up[HRING_MAX]; /* gets events; datagrams to a member that is not up are lost */
	uint64_t deadline[HRING_MAX];
	bool broken[HRING_MAX]; /* returned a FATAL: every later step returns one too */
	uint64_t now;

	/* The network: one FIFO, since every hop takes the same time. */
	struct flight *flight;
	size_t f_head, f_len;
	bool (*drop)(const struct flight *f, const void *arg); /* when set, what it matches is lost */
	const void *drop_arg;

	/* The last step, for assertions on it. */
	int last_node; /* -1 when the last thing done was not a step */
	enum ring_event_type last_event;
	struct ring_update last;

	/* Every action of every member, in order. */
	struct rec *rec[HRING_MAX];
	size_t n_rec[HRING_MAX], cap_rec[HRING_MAX];
	uint64_t seq;

	/* Safety watched on every step. */
	size_t max_held;    /* most members holding (not passing) a token at once */
	size_t max_granted; /* most members with a client in the region at once */
	size_t bad_grants;  /* GRANTs from a member not holding, or with a fence not of its token */
	size_t fence_regressions; /* GRANTs whose fence was not above every earlier one */
	uint64_t max_fence;
};

/* What a run waits for: an action in a step of one member (or any). */
struct want {
	int node;                   /* -1: any member */
	enum ring_action_type type;
	int what;                   /* LOG: the event; SEND: the message type; -1: any */
	int to;                     /* SEND: the receiver's id; -1: any */
};

uint16_t id_of(size_t i);
void make_layout(struct ring_layout *l, size_t n);
void make_resting_layout(struct ring_layout *l, size_t n);
/* The same layouts as values, for a test's first line:
 * struct ring_layout l = resting_layout(3); */
struct ring_layout default_layout(size_t n);
struct ring_layout resting_layout(size_t n);
struct hring *hring_new(const struct ring_layout *l);
void hring_free(struct hring *s);
void hring_restart(struct hring *s, size_t i, uint32_t stored_epoch);
struct ring_status status_of(const struct hring *s, size_t i);
size_t index_of(const struct hring *s, uint16_t id);
size_t successor_of(const struct hring *s, size_t i);
bool decode_send(const struct ring_action *a, struct ring_msg *m);
void hring_step(struct hring *s, size_t i, struct ring_event ev);
struct ring_event event(enum ring_event_type type);
void hring_start(struct hring *s, size_t i);
/* Starts every member that is up, at the same instant. */
void hring_start_all(struct hring *s);
/* A ring on layout L whose members all start at the same instant, nothing
 * run yet: the opening of the histories that watch the boot itself. */
struct hring *hring_started(const struct ring_layout *l);
/* Member I, down, comes back with the epoch it had stored: restarted, up
 * and started. */
void hring_come_back(struct hring *s, size_t i, uint32_t stored_epoch);
void hring_tick(struct hring *s, size_t i);
void hring_leave(struct hring *s, size_t i);
void hring_acquire(struct hring *s, size_t i, uint64_t client);
void hring_release(struct hring *s, size_t i, uint64_t client);
void hring_datagram(struct hring *s, size_t i, uint16_t from_id, const uint8_t *buf, size_t len);
size_t hring_deliver_all(struct hring *s);
bool hring_tick_earliest(struct hring *s);
bool hring_next(struct hring *s, uint64_t until);
bool hring_run(struct hring *s, uint64_t until,
		    bool (*stop)(const struct hring *s, const void *arg), const void *arg);
void hring_run_for(struct hring *s, uint64_t dur_us);
int last_action(const struct hring *s, enum ring_action_type type);
int last_log(const struct hring *s, enum ring_log_event ev);
int last_send(const struct hring *s, enum ring_msg_type type, int to, struct ring_msg *m);
bool want_met(const struct hring *s, const void *arg);
bool run_until_log(struct hring *s, int node, enum ring_log_event ev, uint64_t limit_us);
bool run_until_send(struct hring *s, int node, enum ring_msg_type type, int to,
			   uint64_t limit_us);
bool run_until_action(struct hring *s, int node, enum ring_action_type type,
			     uint64_t limit_us);
/* Runs until member I holds the token (it accepted a hop, or minted);
 * fails the test if it does not within 100 receipts. */
void run_until_held(struct hring *s, size_t i);
size_t count_logs(const struct hring *s, size_t i, uint64_t since, enum ring_log_event ev);
size_t count_logs_all(const struct hring *s, uint64_t since, enum ring_log_event ev);
size_t count_actions(const struct hring *s, size_t i, uint64_t since, enum ring_action_type type);
size_t count_sends(const struct hring *s, size_t i, uint64_t since, enum ring_msg_type type,
			  uint16_t to);
uint64_t longest_gap(const struct hring *s, uint64_t since, enum ring_log_event ev,
			    size_t skip, uint64_t from_us);
bool ring_settled(const struct hring *s, const void *arg);
size_t hring_settle(struct hring *s);
void hring_boot(struct hring *s);
/* The opening of most scripted histories: a ring on layout L, booted and
 * settled (hring_new, hring_boot, hring_settle); its holder in *H unless H
 * is NULL. */
struct hring *hring_settled(const struct ring_layout *l, size_t *h);
/* hring_settled, naming the holder *H and the two members after it in
 * ring order, *X then *Y (on a ring of three: everyone). */
struct hring *hring_settled_order(const struct ring_layout *l, size_t *h, size_t *x, size_t *y);
/* The ground of the histories of a pass acked in vain: a resting ring of
 * three on one-minute leases, settled and named as hring_settled_order
 * does, where every TOKEN_ACK X sends H is lost from now on (counted
 * losses, on): X will take H's pass and H never hear of it. */
struct hring *hring_losing_acks(size_t *h, size_t *x, size_t *y);
/* A ring of N on defaults but quorum Q, booted, its token parked at *P and
 * just back from a lap: fresh enough to grant under for loss_timeout_ms / 2,
 * the next lap a loss timeout away (PROTOCOL.md §3.4), the parked heartbeat
 * landed. */
struct hring *hring_parked(size_t n, enum ring_quorum q, size_t *p);
/* Encodes into BUF a WANT from member FROM to member TO (ring indices)
 * naming the park EPOCH/SEQ; returns its length. */
size_t want_datagram(const struct hring *s, size_t from, size_t to, uint32_t epoch, uint32_t seq,
		     uint8_t buf[RING_WIRE_MAX]);
void assert_ring_safe(const struct hring *s);
/* The end of most histories: assert_ring_safe, then hring_free. */
void assert_safe_and_free(struct hring *s);
/* Member I receives M as if member FROM (an index) sent it now: a forged
 * or replayed datagram, encoded with the ring's fingerprint. */
void hring_inject(struct hring *s, size_t i, size_t from, struct ring_msg m);
/* Grants at every member since SINCE. */
size_t count_grants_all(const struct hring *s, uint64_t since);
/* A client at every member up asks (client ids CLIENT + i). */
void hring_acquire_everywhere(struct hring *s, uint64_t client);
/* hring_acquire_everywhere, then the ring runs for DUR_US; returns the mark
 * (s->seq before they asked) to count what they were granted from. */
uint64_t hring_ask_everywhere_and_run(struct hring *s, uint64_t client, uint64_t dur_us);
/* A client of member I, which holds the token, asks and is granted in that
 * very step (asserted); returns the grant's fence. */
uint64_t grant_at(struct hring *s, size_t i, uint64_t client);
/* make_resting_layout with 200 ms leases: histories that grant often. */
void make_short_lease_layout(struct ring_layout *l, size_t n);

/* A drop hook (s->drop) that drops nothing and keeps in `captured` a copy
 * of the last TOKEN to member id *arg (a uint16_t): the late copy a test
 * delivers again. Zero `captured` before the run it watches. */
extern struct flight captured;
bool capture_token_to(const struct flight *f, const void *arg);

/* ---- losing and crafting datagrams, for the scripted histories ---- */

/* Encodes M as a datagram of member id FROM_ID to TO_ID (0: everyone) with
 * the ring's fingerprint into BUF (RING_WIRE_MAX); returns its length. */
size_t craft(const struct hring *s, struct ring_msg *m, uint16_t from_id, uint16_t to_id,
	     uint8_t *buf);
/* The same for a TOKEN carrying T. */
size_t craft_token(const struct hring *s, uint16_t from_id, uint16_t to_id,
		   struct ring_msg_token t, uint8_t *buf);
/* The last SEND of a TOKEN to TO_ID in the last update, copied into BUF and
 * decoded into M; returns its length. */
size_t copy_last_token(const struct hring *s, uint16_t to_id, uint8_t *buf, struct ring_msg *m);
/* The fence of member I's first GRANT since SINCE, 0 if none. */
uint64_t first_grant_fence(const struct hring *s, size_t i, uint64_t since);

/* Counted losses: up to four at once, datagrams of TYPE from member id FROM
 * to TO (0: any), COUNT of them (negative: every one). lose_count adds one,
 * losses_on makes them the ring's drop filter, losses_off clears them. */
void lose_count(enum ring_msg_type type, uint16_t from, uint16_t to, int count);
void losses_on(struct hring *s);
void losses_off(struct hring *s);

/* A set of loss rules a test owns: every datagram of TYPE (0: any) from
 * member id FROM to TO (0: any) is lost, up to four rules. lose_add adds
 * one to L and makes L the ring's drop filter; lose_none clears both. */
struct loss {
	struct {
		int type;
		uint16_t from, to;
	} rule[4];
	size_t n;
};
void lose_add(struct hring *s, struct loss *l, enum ring_msg_type type, uint16_t from,
	      uint16_t to);
void lose_none(struct hring *s, struct loss *l);

/* ---- a seeded generator, for the soaks ----
 * xorshift64: a soak is the same run every time, so a failure can be
 * replayed. STATE is the caller's seed, never 0. */
uint64_t xorshift_next(uint64_t *state);

/* ---- golden traces ----
 * The last step's actions in order, one phrase each, without the numbers
 * that vary from run to run: "persist", "send token>30" (the receiver's
 * id; ">*" for everyone), "grant", "revoke", "deny", a log event by its
 * name ("token_pass"), "left", "fatal"; joined by ", ". */
const char *step_trace(const struct hring *s);
/* Fails, showing both, when the last step's trace is not WANT. */
void assert_step_trace(const struct hring *s, const char *want, const char *file, int line);
#define ASSERT_STEP_TRACE(s, want) assert_step_trace((s), (want), __FILE__, __LINE__)

#endif
