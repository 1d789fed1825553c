/* Where the token was seen alive, for `ringctl trace`'s "no token seen"
 * stretches: its hops and grants, and the stretches it sat parked, which a
 * default log (no -v, heartbeats never logged) shows only by their ends.
 * Internal to trace.c. */
#ifndef RING_TRACE_GAPS_H
#define RING_TRACE_GAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/trace_faults.h"

struct ring_trace_gaps;

/* NULL when out of memory. */
struct ring_trace_gaps *ring_trace_gaps_new(void);
void ring_trace_gaps_free(struct ring_trace_gaps *g);

/* What the logs show, in any order across members, each member's in its
 * own order. Each returns 0 or -RING_ENOMEM. */
/* Which token a line shows, in the order tokens follow one another:
 * its epoch, then its hop; 0 when the line does not say. */
static inline uint64_t ring_trace_hop(uint32_t epoch, uint64_t seq)
{
	return epoch ? (uint64_t)epoch << 32 | (seq & 0xffffffffu) : 0;
}
/* The token showed itself at NODE at T (a hop, a grant, a regeneration);
 * TO: a token_pass's destination, else 0; HOP: ring_trace_hop of it. */
int ring_trace_gaps_seen(struct ring_trace_gaps *g, uint32_t node, uint64_t t, uint32_t to,
			 uint64_t hop);
/* NODE holds the token, HOP, from T (token_recv, token_regen, token_park):
 * a parked token heartbeats, alive, unlogged, until it leaves
 * (ring_trace_gaps_unpark), or NODE's life ends. A sighting elsewhere of
 * an older hop does not end it. */
int ring_trace_gaps_park(struct ring_trace_gaps *g, uint32_t node, uint64_t t, uint64_t hop);
/* The token parked at NODE left it at T (unpark, pass, stop, no quorum). */
int ring_trace_gaps_unpark(struct ring_trace_gaps *g, uint32_t node, uint64_t t);
/* NODE suspected a loss at T: it last heard the token at HEARD. */
int ring_trace_gaps_silence(struct ring_trace_gaps *g, uint32_t node, uint64_t heard);
/* NODE's life ended at T (a restart, or the end of its file), parked or not. */
int ring_trace_gaps_life_end(struct ring_trace_gaps *g, uint32_t node, uint64_t t);

/* A critical region, from its grant to its end: the token was at its
 * holder throughout, heartbeats or not. */
struct ring_trace_span {
	uint64_t a, b;
};

/* Called once per stretch longer than LIMIT_US with no token seen. */
typedef void (*ring_trace_gap_fn)(void *arg, uint64_t from, uint64_t len);

/* After every line and once the faults are resolved (FS tells when a
 * parked holder crashed; LAST is the logs' last line, until which a
 * running holder's park lasts): the stretches over LIMIT_US with no token
 * seen, neither held in one of HELD (N of them) nor parked. Returns how
 * many, and the longest in *LONGEST, or -RING_ENOMEM. */
long ring_trace_gaps_check(struct ring_trace_gaps *g, const struct ring_trace_faults *fs,
			   uint64_t last, const struct ring_trace_span *held, size_t n,
			   uint64_t limit_us, uint64_t *longest, ring_trace_gap_fn fn, void *arg);

/* After check: the end of the park NODE began at T, into *END. */
bool ring_trace_gaps_park_end(const struct ring_trace_gaps *g, uint32_t node, uint64_t t,
			      uint64_t *end);

#endif
