/* What the two simulator drivers (test/sim/sim.c, test/compare/compare.c) share on
 * their command lines: a number argument, a word from a name table, and the
 * wall clock their summary lines report. None of it touches a run, so a
 * seed still gives the same run. */
#ifndef RING_TEST_DRIVER_H
#define RING_TEST_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Parses s as a decimal uint64_t into *v; false for NULL, empty, a sign,
 * trailing characters or overflow (*v then unchanged). */
bool driver_parse_u64(const char *s, uint64_t *v);

/* The index of s in names[0..n-1], or -1 when it is not there. */
int driver_lookup(const char *s, const char *const names[], int n);

/* The seeds a driver runs: --seeds N (N > 0) of them from --first S, or
 * the one --seed S. */
struct driver_seeds {
	uint64_t seeds, first;
	bool have_seeds, have_seed;
};

/* Takes option a with its value v into *s when a is --seeds, --first or
 * --seed and v is a valid number for it (S >= min_first); true when it
 * did, and the caller then skips v. */
bool driver_seed_arg(struct driver_seeds *s, const char *a, const char *v, uint64_t min_first);

/* How many seeds to run: 1 for --seed, N for --seeds, else dflt. */
uint64_t driver_seed_count(const struct driver_seeds *s, uint64_t dflt);

/* Prints the message FMT to stderr, then the driver's USAGE; returns 2, the
 * exit code of a usage error. */
int driver_usage_error(void (*usage)(FILE *f), const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The name tables of an X-macro list X(NAME, ARG, TITLE): LIST(DRIVER_ARG_)
 * gives the ARGs, LIST(DRIVER_TITLE_) the TITLEs, each followed by a comma,
 * for an array initializer. */
#define DRIVER_ARG_(name, arg, title) arg,
#define DRIVER_TITLE_(name, arg, title) title,

/* A run that could not start (its calloc failed): OUT, a driver's result
 * with failed, inv[] and what[], says so as the run's failure. */
#define DRIVER_RESULT_OOM(out)                                          \
	do {                                                            \
		memset((out), 0, sizeof *(out));                        \
		(out)->failed = true;                                   \
		snprintf((out)->inv, sizeof (out)->inv, "sim");         \
		snprintf((out)->what, sizeof (out)->what, "out of memory"); \
	} while (0)

/* Seconds on CLOCK_MONOTONIC, for "took N s" in the summary lines. */
double driver_wall_s(void);

#endif
