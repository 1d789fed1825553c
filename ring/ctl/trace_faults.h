/* The faults half of `ringctl trace`: what went wrong, from faults.log and
 * from the members' logs themselves (crashes, losses, pauses, skips), one
 * fault per incident, each timed to the next grant. Internal to trace.c. */
#ifndef RING_TRACE_FAULTS_H
#define RING_TRACE_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* One parsed log line, as the fault inference needs it. */
struct ring_trace_line {
	uint64_t t;        /* microseconds since 1970, UTC */
	uint32_t node;     /* 0 in faults.log */
	int core;          /* an enum ring_log_event, or -1 for the events below */
	enum { RING_TRACE_SHELL_NONE, RING_TRACE_SHELL_START, RING_TRACE_SHELL_STOP,
	       RING_TRACE_SHELL_FAULT } shell;
	uint64_t field[3]; /* the core event's fields, in RING_LOG_EVENTS order */
	const char *what;  /* a fault's text (faults.log) */
	uint64_t hb_ms;    /* node_start: the member's heartbeat_ms; 0 if not logged */
};

/* The totals trace.c reports. */
struct ring_trace_fault_totals {
	size_t faults, listed, inferred, unrecovered;
	uint64_t slowest_us;                 /* over every recovered fault */
	size_t listed_count;                 /* faults.log lines, each its own fault */
	uint64_t listed_slowest_us;          /* over those alone (the lab's bound) */
};

struct ring_trace_faults;

/* Room for element N of the array *P of *CAP elements of SIZE bytes,
 * doubling it when full; false when memory (or size_t) runs out. trace.c
 * and trace_gaps.c grow their arrays with it too. */
bool ring_trace_grow(void **p, size_t *cap, size_t n, size_t size);

/* NULL when out of memory. */
struct ring_trace_faults *ring_trace_faults_new(void);
void ring_trace_faults_free(struct ring_trace_faults *fs);

/* Feed every line of one file in its order, then end_file. Returns 0 or
 * -RING_ENOMEM. */
int ring_trace_faults_line(struct ring_trace_faults *fs, const struct ring_trace_line *l);
void ring_trace_faults_end_file(struct ring_trace_faults *fs);

/* After every file: infers the faults, merges each incident's signals into
 * one fault, times each to the next grant. Returns 0 or -RING_ENOMEM. */
int ring_trace_faults_resolve(struct ring_trace_faults *fs, struct ring_trace_fault_totals *tot);

/* After resolve: whether NODE's life that T falls in (from its first line
 * to its last) ended in a crash the logs confirm; then *AT is when the
 * crash happened, as closely as the logs tell (docs/testing.md, "Faults
 * and recovery"): timeline draws it there, trace ends the dead member's
 * critical region and parked token there. */
bool ring_trace_faults_crashed(const struct ring_trace_faults *fs, uint32_t node, uint64_t t,
			       uint64_t *at);

/* The faults, one line each (times in seconds after BASE; at most LIST_MAX
 * inferred ones printed in full, faults.log's all), to OUT. */
void ring_trace_faults_print(const struct ring_trace_faults *fs, uint64_t base, size_t list_max,
			     FILE *out);

/* The faults as a JSON array (at most MAX of them), or NULL. */
json_t *ring_trace_faults_json(const struct ring_trace_faults *fs, uint64_t base, size_t max);

#endif
