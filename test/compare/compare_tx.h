/* Atomic commit beside the lock (docs/comparison.md, "Transactions"): two-phase commit, its
 * cooperative variant and three-phase commit (tx_2pc.c, tx_3pc.c) on the simulator's network,
 * measured in a table, checked on random seeds, and any table run replayed with its trace.
 * compare.c's --table, --check and --tx-replay call these. */
#ifndef COMPARE_TX_H
#define COMPARE_TX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The index of protocol ARG ("2pc", "2pc-coop", "3pc", "2pc-fenced", "nested-2pc",
 * "nested-3pc"), or -1. */
int tx_proto_lookup(const char *arg);

/* Runs every row over seeds 1..SEEDS and prints the table to stdout and, when
 * not NULL, to OUT. Returns 0, or 1 when a run broke an invariant it must keep. */
int tx_table(uint64_t seeds, FILE *out);

/* Runs SEEDS random settings from FIRST per protocol (ONLY: its index, or
 * -1 for all), checking atomicity and validity on every step and that every
 * site decides when it must. Returns 0, or 1 with the seed and its replay line. */
int tx_check(int only, uint64_t first, uint64_t seeds, bool trace_on);

/* Replays seed SEED of table row ROW ("3pc/partition/5") with its trace. */
int tx_replay(const char *row, uint64_t seed);

#endif
