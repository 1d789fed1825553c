/* ringd's libevent shell around the protocol core: it turns socket, timer
 * and signal callbacks into core events and carries out the core's actions
 * (with epoch_store.c, net.c, ctl_server.c and inject.c). */
#ifndef RING_DAEMON_H
#define RING_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "common/log.h"

struct ring_daemon;

/* Sets up member ID of CONF: loads its epoch from state_dir, binds its UDP
 * address and control socket. CONF and LOG must outlive the daemon.
 * Returns 0, or a negative RING_E* code with a message in ERR: -RING_ECONFIG
 * for what the configuration or the state file got wrong (ringd exits 78),
 * -RING_EBUSY when the member already runs, -RING_EIO for a failed system
 * call. Free *OUT even after a failure. */
int ring_daemon_new(struct ring_daemon **out, const struct ring_conf *conf, uint16_t id,
		    struct ring_log *log, char *err, size_t errlen);

/* Under systemd: NOTIFY_SOCKET's value (NULL or empty: not under systemd,
 * and nothing below happens) gets READY=1 once the member has joined the
 * ring, STATUS= lines on change, STOPPING=1 at SIGTERM, RELOADING=1 and
 * READY=1 around a SIGHUP key reload; with WATCHDOG_USEC nonzero, a timer
 * of the loop sends WATCHDOG=1 every half of it. Call before
 * ring_daemon_run. Returns 0, or -RING_EFIELD (a bad address), -RING_EIO
 * or -RING_ENOMEM with a message in ERR. */
int ring_daemon_notify(struct ring_daemon *d, const char *notify_socket, uint64_t watchdog_usec,
		       char *err, size_t errlen);

/* Runs until a graceful leave completes (SIGTERM/SIGINT) or a fatal error.
 * Returns 0, or 1 after a fatal error, with the message in ERR. */
int ring_daemon_run(struct ring_daemon *d, char *err, size_t errlen);

void ring_daemon_free(struct ring_daemon *d);

/* Which key the member uses, for the auth_key log line: "secret_file",
 * "auto" (the ring's own key in state_dir) or "auto-made" (made by this
 * start); NULL without a key. */
const char *ring_daemon_key_source(const struct ring_daemon *d);

#endif
