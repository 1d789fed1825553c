/* Fault injection in ringd (`ringctl inject`, allowed by allow_inject): the
 * faults now planted, and the questions the send and receive paths ask of
 * them. Faults only ever drop or delay, never forge. */
#ifndef RING_INJECT_H
#define RING_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "common/control.h"
#include "common/log.h"
#include "core/set.h"

struct ring_faults {
	bool drop_token;       /* lose the next token sent */
	uint32_t loss_pct;     /* of all datagrams sent */
	struct ring_set blocked; /* member indexes cut off both ways */
	uint64_t rng;          /* xorshift64 state for loss, never 0 */
};

/* No faults; SEED picks the loss pattern. */
void ring_faults_init(struct ring_faults *f, uint64_t seed);

/* Plants the fault R names on member ME of CONF's ring and logs it as
 * "inject". A pause plants nothing: the caller stalls after replying.
 * Returns 0, or -RING_EFIELD (not allowed, or no such peer) with the
 * reason for the client in WHY. */
int ring_faults_apply(struct ring_faults *f, const struct ring_conf *conf, size_t me,
		      const struct ring_ctl_request *r, struct ring_log *log, char *why,
		      size_t whylen);

/* Whether a datagram to member index IDX is lost (blocked, or by loss). */
bool ring_faults_lose(struct ring_faults *f, size_t idx);

/* Whether the datagram BUF is a token that drop-token swallows; once. */
bool ring_faults_swallow_token(struct ring_faults *f, const uint8_t *buf, size_t len);

/* Whether datagrams from member index IDX are cut off. */
bool ring_faults_blocked(const struct ring_faults *f, size_t idx);

#endif
