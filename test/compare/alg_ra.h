/* Ricart-Agrawala: a request stamped with the Lamport clock goes to every other member, and
 * its sender enters once all have replied. A member replies at once unless it is in the region
 * or wants it with an earlier (stamp, index), then when it leaves. 2(n-1) messages per entry. */
#ifndef ALG_RA_H
#define ALG_RA_H

#include <stddef.h>

#include "compare/alg.h"

struct alg_ra;

/* Member ME (0..N-1) of N (1..ALG_MAX_N). NULL when the numbers are out of
 * range or memory runs out. */
struct alg_ra *alg_ra_new(size_t n, size_t me);
void alg_ra_free(struct alg_ra *r);

/* Feeds one event; UP is filled with the actions to carry out in order. An
 * ACQUIRE while a request is outstanding, a RELEASE outside the region and
 * malformed messages are ignored; so is a reply to any but the current request. */
void alg_ra_step(struct alg_ra *r, const struct alg_event *ev, struct alg_update *up);

#endif
