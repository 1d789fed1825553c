/* ringd's libevent shell around the protocol core: sockets, timers,
 * signals, the durable epoch, the control socket and fault injection. It
 * turns callbacks into core events and carries out the core's actions. */
#ifndef RING_DAEMON_H
#define RING_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "log.h"

struct ring_daemon;

/* Sets up member ID of CONF: loads its epoch from state_dir, binds its UDP
 * address and control socket. CONF and LOG must outlive the daemon.
 * Returns 0, or a negative RING_E* / -errno code with a message in ERR. */
int ring_daemon_new(struct ring_daemon **out, const struct ring_conf *conf, uint16_t id,
		    struct ring_log *log, char *err, size_t errlen);

/* Runs until a graceful leave completes (SIGTERM/SIGINT) or a fatal error.
 * Returns 0, or 1 after a fatal error, with the message in ERR. */
int ring_daemon_run(struct ring_daemon *d, char *err, size_t errlen);

void ring_daemon_free(struct ring_daemon *d);

#endif
