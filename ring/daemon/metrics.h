/* Metrics: the latency histograms ringd keeps, per-type datagram counts, and
 * the Prometheus text exposition (format 0.0.4) of those and the status.
 * No libevent, no clock: the daemon feeds the samples, tests feed their own. */
#ifndef RING_METRICS_H
#define RING_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "common/control.h" /* RING_METRICS_MAX */
#include "core/layout.h"
#include "core/node.h"
#include "daemon/hold_hist.h"

/* Upper bounds of the histogram buckets, in microseconds: 100 us (a grant
 * to a client on the member that holds the token) to 60 s (a long queue
 * behind long leases). The +Inf bucket is the count. */
#define RING_HIST_BOUNDS(X)                                                            \
	X(100, "0.0001") X(250, "0.00025") X(500, "0.0005") X(1000, "0.001")          \
	X(2500, "0.0025") X(5000, "0.005") X(10000, "0.01") X(25000, "0.025")         \
	X(50000, "0.05") X(100000, "0.1") X(250000, "0.25") X(500000, "0.5")          \
	X(1000000, "1") X(2500000, "2.5") X(5000000, "5") X(10000000, "10")           \
	X(30000000, "30") X(60000000, "60")

#define RING_HIST_COUNT_(us, le) +1
enum { RING_HIST_BUCKETS = 0 RING_HIST_BOUNDS(RING_HIST_COUNT_) };
#undef RING_HIST_COUNT_

/* Per bucket, not cumulative: one increment per sample. The exposition
 * adds them up. */
struct ring_histogram {
	uint64_t bucket[RING_HIST_BUCKETS + 1]; /* the last: above every bound */
	uint64_t count;
	uint64_t sum_us;
};

/* Datagram types are 1..RING_MSG_SLOTS - 1 (wire.h); slot 0 counts what is
 * not one of ours (bad magic, version or type). */
#define RING_MSG_SLOTS 18

struct ring_metrics {
	uint64_t rx[RING_MSG_SLOTS]; /* datagrams received, after authentication */
	uint64_t tx[RING_MSG_SLOTS]; /* datagrams handed to the kernel */
	struct ring_histogram grant_wait; /* ACQUIRE to GRANTED */
	struct ring_histogram hold;       /* GRANTED to RELEASE, disconnect or REVOKED */
	struct ring_hold_hist hold_fine;  /* the same holds, fine enough for percentiles */
	uint64_t pause_max_us;            /* the longest pause the core detected */
	uint64_t pauses;                  /* pauses it detected (pause_detected) */
};

/* One sample of US microseconds. No allocation; a few compares. */
void ring_hist_observe(struct ring_histogram *h, uint64_t us);

/* One hold of US microseconds, into both hold histograms. */
void ring_metrics_hold(struct ring_metrics *m, uint64_t us);

/* A pause the core detected (pause_detected, MS as it logged it). */
void ring_metrics_pause(struct ring_metrics *m, uint64_t ms);

/* This member's figures for lease advice: its holds and its pauses. */
void ring_metrics_figures(const struct ring_metrics *m, struct ring_advice_figures *f);

/* One datagram of wire type TYPE (anything unknown lands in slot 0). */
static inline void ring_metrics_count(uint64_t *slots, unsigned type)
{
	slots[type < RING_MSG_SLOTS ? type : 0]++;
}

/* The exposition of ST (the member's status, of LAYOUT) and M into BUF: every
 * metric with # HELP and # TYPE, names ring_*, counters *_total, times in
 * seconds. Returns the length, truncated like snprintf (a return >= LEN
 * means BUF was too small). */
int ring_metrics_format(char *buf, size_t len, const struct ring_layout *layout,
			const struct ring_status *st, const struct ring_metrics *m);

/* The HELP text of the K-th counter of struct ring_counters; NULL when
 * K is out of range or the counter has none (a test keeps that from
 * happening). */
const char *ring_metrics_counter_help(size_t k);

/* Room that is always enough for ring_metrics_format: RING_METRICS_MAX,
 * in control.h, since the control protocol's readers need it too. */

#endif
