/* `ringctl watch`'s view, pure: fed the status poll's rounds with their
 * times, it keeps each member's last answer, the rates between answers,
 * who is down and who restarted, and renders the lines (a screen for a
 * terminal, or one line per round). No I/O and no clock: watch_loop.c
 * reads the clock and the terminal and feeds it. */
#ifndef RING_WATCH_H
#define RING_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/advice.h"
#include "core/layout.h"
#include "core/wire.h"

/* How long a restarted member is marked so, instead of rates. */
#define RING_WATCH_RESTART_US 5000000u

struct ring_watch_member {
	bool up;                           /* answered the last round */
	bool ever;                         /* has answered once: LAST is valid */
	struct ring_msg_status_resp last;  /* its newest answer */
	uint64_t last_us;                  /* when it came */
	bool rated;                        /* GRANTS_S and HOPS_S are valid */
	double grants_s, hops_s;           /* cs_entries and tokens_passed per second */
	uint64_t restarted_until_us;       /* counters went down: "restarted" until then */
	uint64_t down_since_us;            /* first silent round of this silence */
	uint64_t restarts;                 /* restarts seen since the watch began */
	bool hold_known;                   /* gave a hold answer this round: HOLD is valid */
	struct ring_msg_hold_resp hold;    /* who holds the lock there (fence 0: nobody) */
};

struct ring_watch {
	const struct ring_layout *l;
	uint64_t rounds;
	uint64_t now_us;  /* the last round's time */
	bool authenticated;   /* the ring's datagrams carry a MAC (shown; the caller sets it) */
	bool advised;         /* ADVICE holds the ring's lease advice: a footer shows it */
	struct ring_advice advice;
	struct ring_watch_member m[RING_MAX_MEMBERS]; /* by ring index */
};

/* Starts a view of L's members (L must outlive it), none seen yet. */
void ring_watch_init(struct ring_watch *w, const struct ring_layout *l);

/* Feeds one round that ended at NOW_US (any monotonic clock, never going
 * back): ANSWERS[i] is the answer of the member at ring index i, NULL when
 * it was silent. A member whose counters went down since its last answer
 * has restarted: it gets no rates from that answer and is marked for
 * RING_WATCH_RESTART_US. */
void ring_watch_update(struct ring_watch *w, const struct ring_msg_status_resp *const *answers,
		       uint64_t now_us);

/* Takes the members' advice answers (ANSWERS[i] NULL: none from the
 * member at ring index i); with at least one, the view shows the ring's
 * lease advice from then on, until the next call with answers. */
void ring_watch_advice(struct ring_watch *w, const struct ring_msg_advice_resp *const *answers);

/* Takes the last round's hold answers (call it after ring_watch_update of
 * the same round): ANSWERS[i] NULL when the member at ring index i gave
 * none, as a member older than HOLD_REQ never does. */
void ring_watch_holds(struct ring_watch *w, const struct ring_msg_hold_resp *const *answers);

/* Who holds the lock, per the members that answered the last round: the
 * members whose client is in the critical region, and how many members
 * that are up did not say. */
struct ring_watch_lock {
	size_t holders;   /* 0, 1, or more (two clients in the region: a fault) */
	size_t index;     /* ring index of the first of them */
	uint64_t fence;   /* its grant */
	uint32_t held_ms; /* how long that grant has lasted */
	size_t unknown;   /* members up this round without a hold answer */
};
void ring_watch_lock(const struct ring_watch *w, struct ring_watch_lock *lk);

/* Where the token is, per the members that answered the last round. */
struct ring_watch_token {
	size_t holders;  /* members that say they have it: 0, 1, or more (a fault) */
	size_t index;    /* ring index of the first of them */
	bool parked;     /* the first of them says it is parked there */
};
void ring_watch_token(const struct ring_watch *w, struct ring_watch_token *t);

/* Members up in the last round; the ring's grants/s and hops/s (sums
 * over the members that have rates). */
size_t ring_watch_up(const struct ring_watch *w);
void ring_watch_rates(const struct ring_watch *w, double *grants_s, double *hops_s);

enum ring_watch_form {
	RING_WATCH_SCREEN, /* a title line, the lock and token line, a header, a line per member */
	RING_WATCH_LINE,   /* one line for the whole round, for pipes and logs */
};

/* Renders the last round into BUF (LEN bytes, always terminated when LEN
 * > 0), lines ended by '\n'. STAMP is the caller's time label. SCREEN
 * lines are cut to COLS characters (the title shortens the ring's name
 * first, so that its figures stay) and at most ROWS lines are written
 * (members past them are summed up in the last line); 0 means no limit.
 * With advice, SCREEN ends with a footer line that gives it (when a row is
 * left for it) and LINE with " | advice ...".
 * Returns the length the whole text needs, as snprintf does. */
int ring_watch_render(const struct ring_watch *w, enum ring_watch_form form, unsigned cols,
		      unsigned rows, const char *stamp, char *buf, size_t len);

#endif
