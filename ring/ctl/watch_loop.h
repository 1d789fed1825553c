/* `ringctl watch`'s terminal side: the loop that polls the ring every
 * interval, feeds watch.c's view and draws it (an alternate screen on a
 * terminal, one line per round otherwise), and its signals: SIGINT,
 * SIGTERM and SIGHUP end it, SIGWINCH redraws, SIGTSTP gives the terminal
 * back before stopping and SIGCONT takes it again. */
#ifndef RING_WATCH_LOOP_H
#define RING_WATCH_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/conf.h"
#include "ctl/status_poll.h"

#define RING_WATCH_INTERVAL_MIN 50u
#define RING_WATCH_INTERVAL_MAX 60000u
#define RING_WATCH_INTERVAL_DEFAULT 500u

struct ring_watch_opts {
	unsigned interval_ms; /* one round every this, RING_WATCH_INTERVAL_MIN..MAX */
	uint64_t count;       /* stop after this many rounds; 0: at a signal only */
	bool plain;           /* one line per round even on a terminal */
};

/* What a watch did: its rounds, and its datagrams on the wire. */
struct ring_watch_result {
	uint64_t rounds;
	uint64_t elapsed_us;
	struct ring_status_poll_traffic traffic;
};

/* Watches CONF's ring, drawing on OUT_FD, until a signal ends it or COUNT
 * rounds have been drawn (a reader that goes away ends it too). The
 * terminal is given back as it was found. Returns 0; -RING_ECONFIG (a host
 * does not resolve, the key cannot be read) or -RING_EIO (a socket, the
 * signal pipe, a failed write), with ERR saying why. RES may be NULL. */
int ring_watch_loop(const struct ring_conf *conf, const struct ring_watch_opts *o, int out_fd,
		    struct ring_watch_result *res, char *err, size_t errlen);

#endif
