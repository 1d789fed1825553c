/* ringd's libevent shell around the protocol core: it turns socket, timer
 * and signal callbacks into core events and carries out the core's actions
 * (with epoch_store.c, net.c, ctl_server.c and inject.c). */
#ifndef RING_DAEMON_H
#define RING_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "log.h"

struct ring_daemon;

/* Sets up member ID of CONF: loads its epoch from state_dir, binds its UDP
 * address and control socket. CONF and LOG must outlive the daemon.
 * Returns 0, or a negative RING_E* code with a message in ERR: -RING_ECONFIG
 * for what the configuration or the state file got wrong (ringd exits 78),
 * -RING_EBUSY when the member already runs, -RING_EIO for a failed system
 * call. Free *OUT even after a failure. */
int ring_daemon_new(struct ring_daemon **out, const struct ring_conf *conf, uint16_t id,
		    struct ring_log *log, char *err, size_t errlen);

/* Runs until a graceful leave completes (SIGTERM/SIGINT) or a fatal error.
 * Returns 0, or 1 after a fatal error, with the message in ERR. */
int ring_daemon_run(struct ring_daemon *d, char *err, size_t errlen);

void ring_daemon_free(struct ring_daemon *d);

#endif
