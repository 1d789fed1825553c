/* The centralized algorithm: a member asks the coordinator (REQUEST), waits for its GRANT
 * and tells it when done (RELEASE); the coordinator queues requests in FIFO order. Three
 * messages per entry, none when the coordinator itself enters. */
#ifndef ALG_CENTRAL_H
#define ALG_CENTRAL_H

#include <stddef.h>

#include "compare/alg.h"

struct alg_central;

/* Member ME (0..N-1) of N (1..ALG_MAX_N), where member COORD is the
 * coordinator. NULL when the numbers are out of range or memory runs out. */
struct alg_central *alg_central_new(size_t n, size_t me, size_t coord);
void alg_central_free(struct alg_central *c);

/* Feeds one event; UP is filled with the actions to carry out in order. An
 * ACQUIRE while a request is outstanding, a RELEASE outside the region and
 * malformed or duplicated messages are ignored. */
void alg_central_step(struct alg_central *c, const struct alg_event *ev, struct alg_update *up);

#endif
