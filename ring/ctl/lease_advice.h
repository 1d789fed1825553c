/* `ringctl lease-advice`'s view, pure: every member's ADVICE_RESP combined
 * into the ring's figures and advice (common/advice.c), written as a table
 * with the reasoning lines, or as one JSON object. status_poll.c asks the
 * members; watch.c shows the same advice in its footer. */
#ifndef RING_LEASE_ADVICE_H
#define RING_LEASE_ADVICE_H

#include <stdbool.h>
#include <stdio.h>

#include "common/advice.h"
#include "core/layout.h"
#include "core/wire.h"

/* One member's answer as figures for common/advice.c. */
void ring_lease_advice_figures(const struct ring_msg_advice_resp *r,
			       struct ring_advice_figures *f);

/* The ring's figures and advice from ANS[i], the answer of L's member at
 * ring index i (NULL: down, left out). */
void ring_lease_advice_collect(const struct ring_layout *l,
			       const struct ring_msg_advice_resp *const *ans, struct ring_advice *a);

/* Writes the report of L's members' answers ANS to OUT: a table (a row per
 * member, "down" for a NULL answer), the ring's figures and one line of
 * reasoning per key; or, with JSON, one object on one line. The advice is
 * compared with L's lease_ms and max_hold_ms. Returns 0, or -RING_ENOMEM
 * (JSON only) / -RING_EIO when writing failed. */
int ring_lease_advice_print(FILE *out, const struct ring_layout *l,
			    const struct ring_msg_advice_resp *const *ans, bool json);

#endif
