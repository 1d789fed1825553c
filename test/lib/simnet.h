/* The simulated world that sim.c and compare.c share: a seeded random source, an event queue
 * on virtual time, and datagrams with loss, duplication, delay (hence reordering) and
 * partitions. Nothing here knows a protocol. */
#ifndef SIMNET_H
#define SIMNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wire.h"

#define SIMNET_MSG_MAX RING_WIRE_MAX /* the longest datagram an item carries */
#define SIMNET_MAX_N 64              /* cuts are bit masks of member indices */

/* ---- randomness: xoshiro256** seeded through splitmix64 ---- */

struct simnet_rng {
	uint64_t s[4];
};

/* Seeds R from SEED and SALT (a class or algorithm name), so that seed S of
 * two salts differ. */
void simnet_rng_seed(struct simnet_rng *r, uint64_t seed, const char *salt);
uint64_t simnet_rng_next(struct simnet_rng *r);
/* 0..n-1; n > 0. The modulo bias is far below what a test can notice. */
uint64_t simnet_rng_below(struct simnet_rng *r, uint64_t n);
/* lo..hi inclusive; lo when hi <= lo. */
uint64_t simnet_rng_range(struct simnet_rng *r, uint64_t lo, uint64_t hi);
/* True with probability p. */
bool simnet_rng_chance(struct simnet_rng *r, double p);
/* Coverage-guided runs (test/fuzz/fuzz_sim.c): until BYTES (LEN long) run
 * out, every draw of every generator is their next 8 bytes, big-endian, so
 * that a fuzzer's edits of the input are the run's choices; then each
 * generator goes on from its own state, which the tape's draws still
 * advanced. NULL ends it. Off unless set. */
void simnet_tape(const uint8_t *bytes, size_t len);

/* ---- the event queue ---- */

/* What happens at one instant. KIND and the numbers are the driver's; a
 * delivery fills node (receiver), src (sender), len and buf. */
struct simnet_item {
	int kind;
	uint32_t node;
	uint32_t src;
	uint32_t gen;
	uint32_t arg;
	uint32_t next_free;
	uint16_t len;
	uint8_t buf[SIMNET_MSG_MAX];
};

/* Heap entries stay small; payloads live in the item pool. Ties in time
 * are broken by insertion order, so every run is a pure function of its seed. */
struct simnet_slot {
	uint64_t t;
	uint64_t seq;
	uint32_t item;
};

struct simnet_queue {
	struct simnet_slot *heap;
	size_t heap_n, heap_cap;
	struct simnet_item *items;
	uint32_t items_n, items_cap, free_item;
	uint64_t seq;
	const char *nomem; /* what ran out of memory first, NULL while all is well */
};

void simnet_queue_init(struct simnet_queue *q);
void simnet_queue_free(struct simnet_queue *q);

/* A fresh item of KIND with its numbers zeroed, or UINT32_MAX (and nomem
 * set) when memory runs out. */
uint32_t simnet_item_new(struct simnet_queue *q, int kind);
void simnet_item_free(struct simnet_queue *q, uint32_t i);

/* Queues ITEM at time T. Returns false (and sets nomem) when memory runs out. */
bool simnet_push(struct simnet_queue *q, uint64_t t, uint32_t item);
/* Takes the earliest entry; the queue must not be empty. */
struct simnet_slot simnet_pop(struct simnet_queue *q);

/* ---- the network ---- */

struct simnet_link {
	bool loss_on;          /* p_loss, p_dup and p_slow apply */
	double p_loss, p_dup, p_slow;
	uint64_t min_delay_us, max_delay_us; /* each copy's delay is uniform in this */
	uint64_t slow_delay_us;              /* with p_slow, up to this instead */
	bool cut;              /* a partition is in place: */
	uint64_t side;         /* members (bit = index) on side 1 */
	/* A directed cut, on top of the partition: bit A of deaf[B] drops what A
	 * sends to B, so that B stops hearing A while A may still hear B. */
	bool dcut;
	uint64_t deaf[SIMNET_MAX_N];
	/* The longest delay among the copies the last simnet_send queued (0 when
	 * none was): a driver that reasons about late datagrams reads it. */
	uint64_t last_delay_us;
	/* What the network carried: copies queued and the sum of their delays. */
	uint64_t copies, delay_sum_us;
};

/* True when what A sends to B is dropped: the partition separates them, or
 * a directed cut makes B deaf to A. */
bool simnet_link_cut(const struct simnet_link *link, uint32_t a, uint32_t b);

enum simnet_fate {
	SIMNET_CUT,        /* dropped by the partition */
	SIMNET_LOST,       /* dropped by loss */
	SIMNET_SENT,       /* one copy queued */
	SIMNET_DUPLICATED, /* two copies queued */
};

/* Sends BUF from SRC to DST at NOW: decides its fate with RNG and queues a
 * delivery item of KIND for each copy. Memory running out sets q->nomem. */
enum simnet_fate simnet_send(struct simnet_link *link, struct simnet_rng *rng,
			     struct simnet_queue *q, uint64_t now, int kind, uint32_t src,
			     uint32_t dst, const uint8_t *buf, uint16_t len);

#endif
