/* The trace checker behind `ringctl trace`: merges the JSON logs of every
 * member (and a fault lab's faults.log) into one timeline and says whether
 * mutual exclusion and fencing held. docs/testing.md explains its output. */
#ifndef RING_TRACE_H
#define RING_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ring_trace_opts {
	bool allow_overlap; /* overlapping regions are reported, not violations */
	bool json;          /* one JSON object instead of the text summary */
	uint64_t gap_ms;    /* report stretches longer than this with no token seen */
};

struct ring_trace_result {
	size_t files, events, members, unparsed;
	size_t grants, epochs, regenerations, skips, rejoins, pauses, stale_drops;
	size_t dup_fences, backwards, stale_grants, overlaps, gaps;
	size_t incidents;           /* faults.log's lines (each a fault) */
	uint64_t worst_overlap_us, longest_gap_us;
	uint64_t worst_recovery_us; /* over faults.log's faults alone */
	/* Every fault once, whether faults.log lists it or the logs show it
	 * (docs/testing.md, "Faults and recovery"). */
	size_t faults, faults_listed, faults_inferred, faults_unrecovered;
	uint64_t slowest_recovery_us; /* over every fault a grant followed */
	bool violation;
};

/* Reads FILES (JSON lines as ringd --log-format json writes them), checks
 * them and prints the report to OUT. Returns 0 when nothing was violated, 1
 * on a violation, or -RING_EIO with ERR set when a file cannot be read. */
int ring_trace_check(const char *const *files, size_t n, const struct ring_trace_opts *opts,
		     FILE *out, struct ring_trace_result *res, char *err, size_t errlen);

/* What `ringctl timeline` draws by trace's reading of the logs: when a
 * member crashed (trace_faults.c) and how long a parked token stayed
 * parked (trace_gaps.c). */
struct ring_trace_view;

/* Reads FILES as ring_trace_check does, printing nothing. NULL with ERR
 * set when a file cannot be read or memory runs out. */
struct ring_trace_view *ring_trace_view_read(const char *const *files, size_t n, char *err,
					     size_t errlen);
void ring_trace_view_free(struct ring_trace_view *v);

/* Whether NODE's life that T falls in ended in a crash the logs confirm,
 * and when (*AT). */
bool ring_trace_view_crashed(const struct ring_trace_view *v, uint32_t node, uint64_t t,
			     uint64_t *at);

/* The end of the park NODE began at T (its token_park), into *END; false
 * if there is none. */
bool ring_trace_view_park_end(const struct ring_trace_view *v, uint32_t node, uint64_t t,
			      uint64_t *end);

#endif
