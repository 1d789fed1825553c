/* Every member's status over UDP (STATUS_REQ / STATUS_RESP): the one poll
 * that `ringctl ring` runs once and `ringctl watch` runs in a loop; and
 * their lease-advice figures (ADVICE_REQ / ADVICE_RESP) for `lease-advice`
 * and watch's footer; and who holds the lock at each (HOLD_REQ /
 * HOLD_RESP) for watch. Each round has a fresh nonce, so a late answer to
 * the round before is not taken for a current one. No libevent; the
 * caller owns the clock's use. */
#ifndef RING_STATUS_POLL_H
#define RING_STATUS_POLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/net.h"
#include "core/layout.h"
#include "core/wire.h"

struct ring_status_poll;

/* Resolves every member of L (the first one's address family for all),
 * opens a UDP socket and, when SECRET_FILE is not empty, loads the key
 * (requests are sealed, answers must be). L must outlive the poll.
 * Returns 0; -RING_ECONFIG (a host does not resolve, the key cannot be
 * read); -RING_EIO (no socket); -RING_ENOMEM. ERR says why. */
int ring_status_poll_open(struct ring_status_poll **out, const struct ring_layout *l,
			  const char *secret_file, char *err, size_t errlen);

void ring_status_poll_close(struct ring_status_poll *p);

/* What a round asks each member for: its status, its advice figures, who
 * holds the lock there, or several (in one round, the same nonce). A new
 * poll asks for status. */
enum {
	RING_POLL_STATUS = 1u,
	RING_POLL_ADVICE = 2u,
	RING_POLL_HOLD = 4u,
};
void ring_status_poll_ask(struct ring_status_poll *p, unsigned kinds);

/* One round: forgets the last round's answers, takes a new nonce, asks
 * every member what ring_status_poll_ask set, waits at most TRY_MS for
 * answers, asks the silent ones again, TRIES times in all (a lost datagram
 * is not a down member). Ends early once all have given every answer, or
 * when WAKE_FD (-1: none) becomes readable. Returns the number of members
 * that answered the status request (the advice request, when the round
 * asks only that), or -RING_EIO when waiting failed. *WOKEN (may be NULL)
 * says whether WAKE_FD ended it. */
int ring_status_poll_round(struct ring_status_poll *p, unsigned tries, unsigned try_ms,
			   int wake_fd, bool *woken);

/* This round's answer of the member at ring index I, or NULL when it has
 * not answered (yet). */
const struct ring_msg_status_resp *ring_status_poll_answer(const struct ring_status_poll *p,
							   size_t i);

/* Members that answered this round's status request. */
size_t ring_status_poll_answered(const struct ring_status_poll *p);

/* This round's advice answer of the member at ring index I, or NULL; and
 * how many members gave one. */
const struct ring_msg_advice_resp *ring_status_poll_advice(const struct ring_status_poll *p,
							   size_t i);
size_t ring_status_poll_advised(const struct ring_status_poll *p);

/* What this round saw of a member that gave no answer it could keep: */
enum ring_poll_problem {
	RING_POLL_OK,
	RING_POLL_AUTH_FAILS,    /* its answer did not authenticate here */
	RING_POLL_AUTH_REFUSED,  /* it answered that our request did not authenticate there */
	RING_POLL_WRONG_ADDRESS, /* it answered (as_id) from FROM, not its address in the file */
	RING_POLL_WRONG_ID,      /* its address in the file answered as member as_id */
	RING_POLL_OTHER_CONFIG,  /* it answered that its file is another (its fingerprint) */
	RING_POLL_CLOCK_APART,   /* its answer's timestamp is more than 30 s from our clock */
};
struct ring_poll_note {
	enum ring_poll_problem problem;
	struct ring_addr from; /* where the answer came from */
	uint16_t as_id;        /* the member id the answer claimed */
	uint64_t fingerprint;  /* the answer's */
};

/* The note of the member at ring index I this round, or NULL when it
 * answered or nothing at all was heard of it. */
const struct ring_poll_note *ring_status_poll_note(const struct ring_status_poll *p, size_t i);

/* This round's hold answer of the member at ring index I, or NULL (a
 * member older than HOLD_REQ never gives one: the round then waits all
 * its tries for it). */
const struct ring_msg_hold_resp *ring_status_poll_hold(const struct ring_status_poll *p, size_t i);

/* The ring's fingerprint the poll uses, for messages about a ring where
 * nobody answers (a member with another file ignores us). */
uint64_t ring_status_poll_fingerprint(const struct ring_status_poll *p);

/* Datagrams sent and received, all rounds, and their bytes: what the poll
 * costs the ring. Received counts every datagram read, kept or not. */
struct ring_status_poll_traffic {
	uint64_t sent, sent_bytes, received, received_bytes, kept;
};
void ring_status_poll_traffic(const struct ring_status_poll *p,
			      struct ring_status_poll_traffic *out);

#endif
