/* Lease advice: from the hold times and pauses the members recorded, the
 * lease_ms and max_hold_ms they imply, and one line of reasoning each.
 * Pure arithmetic, shared by ringctl (lease-advice, watch) and ringd (its
 * own figures in the metrics). The rule is docs/operations.md's "Choosing
 * a lease". */
#ifndef RING_ADVICE_H
#define RING_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fewer holds than this in all, and the tail percentiles are noise. */
#define RING_ADVICE_MIN_HOLDS 20u
/* The bounds of the two keys (common/conf.c): advice never exceeds them. */
#define RING_ADVICE_LEASE_MAX_MS 3600000u
#define RING_ADVICE_MAX_HOLD_MAX_MS 86400000u

/* One member's record since it started (ADVICE_RESP's body). */
struct ring_advice_figures {
	uint64_t holds;                        /* grants that ended */
	uint64_t p50_us, p99_us, p999_us;      /* hold time percentiles, upper bounds */
	uint64_t max_us;                       /* the longest hold */
	uint64_t pause_max_us;                 /* the longest pause detected; 0: none */
	uint64_t pauses;                       /* pauses detected */
};

/* The ring's figures (ring_advice_add per member) and, after
 * ring_advice_decide, the advice. A lease is one number for the whole
 * ring, so each figure is the worst of any member, and who had it. */
struct ring_advice {
	size_t members;          /* members whose figures were added */
	uint64_t holds, pauses;  /* in all */
	uint64_t p999_us;        /* the highest p99.9 of any member */
	uint64_t max_us;         /* the longest hold */
	uint64_t pause_us;       /* the longest pause */
	uint16_t p999_at, max_at, pause_at; /* member ids; 0 when the figure is 0 */

	bool enough;             /* holds >= RING_ADVICE_MIN_HOLDS: the rest is set */
	uint64_t by_pause_ms;    /* 3 x pause_us, in ms, rounded up */
	uint64_t by_hold_ms;     /* 1.5 x p999_us, in ms, rounded up */
	uint64_t by_max_ms;      /* 2 x max_us, in ms, rounded up */
	uint32_t lease_ms;       /* the larger of by_pause and by_hold, 1-2-5 up, capped */
	uint32_t max_hold_ms;    /* by_max 1-2-5 up, at least lease_ms, capped */
	bool max_hold_optional;  /* every hold fitted in one such lease: 0 (none) is fine */
	bool capped;             /* a figure was above its key's bound */
};

void ring_advice_init(struct ring_advice *a);

/* Adds member ID's figures to A. */
void ring_advice_add(struct ring_advice *a, uint16_t id, const struct ring_advice_figures *f);

/* Applies the rule to the figures added. */
void ring_advice_decide(struct ring_advice *a);

/* The smallest of 1, 2, 5, 10, 20, 50, ... that is >= MS (1 for 0);
 * UINT64_MAX when there is none. */
uint64_t ring_advice_step_up(uint64_t ms);

/* The reasoning, one line per key ("lease_ms >= 2000: ..."), each ended by
 * '\n', comparing with the ring's LEASE_NOW and MAX_HOLD_NOW. Returns the
 * length the whole text needs, as snprintf does. */
int ring_advice_explain(const struct ring_advice *a, uint32_t lease_now, uint32_t max_hold_now,
			char *buf, size_t len);

#endif
