/* The invariants of atomic commit, checked on every vote and decision as it happens
 * (compare_tx.c calls these from the step that makes them): atomicity, no site decides
 * commit while another decides abort and no site changes its decision; validity, a commit
 * only once every participant has voted yes; and no participant changes its vote. */
#ifndef TX_CHECK_H
#define TX_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compare/tx.h"

struct tx_check {
	size_t n;
	unsigned char vote[TX_MAX_N];    /* 0 none, 1 yes, 2 no */
	unsigned char decided[TX_MAX_N]; /* 0 none, 1 commit, 2 abort */
	int commit_by, abort_by;         /* the first site to decide each, -1 none */
	uint64_t members;                /* the sites in the commit (bit = index) */
};

/* Sites 0..N-1, where 0 is the coordinator and 1..N-1 the participants. */
void tx_check_init(struct tx_check *k, size_t n);
/* Only MEMBERS (bit = index; the coordinator among them) take part: a commit
 * needs their yes votes, and a site outside must neither vote nor decide.
 * Nested transactions leave out the subtransactions that aborted. */
void tx_check_members(struct tx_check *k, uint64_t members);

/* Each returns NULL when the history is still fine, or the invariant it
 * breaks ("atomicity", "validity", "vote") with WHAT saying how. */
const char *tx_check_vote(struct tx_check *k, size_t site, bool yes, char *what, size_t cap);
const char *tx_check_decide(struct tx_check *k, size_t site, bool commit, char *what,
			    size_t cap);

/* Feeds the checker bad histories (commit and abort; a commit on a missing or
 * a no vote; a changed decision) and good ones: false, with WHY, when it
 * misses one, so that a checker that cannot fail is noticed. */
bool tx_check_selftest(char *why, size_t cap);

#endif
