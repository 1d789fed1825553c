/* ringd's side of systemd's service notification protocol (sd_notify(3)):
 * the NOTIFY_SOCKET address and its datagrams, the watchdog's environment,
 * and what "joined the ring" and the STATUS= line mean for a member. */
#ifndef RING_SD_NOTIFY_H
#define RING_SD_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "core/node.h"

struct ring_sd_notify {
	int fd; /* -1: not under systemd (or not asked to notify) */
	struct sockaddr_un addr;
	socklen_t addr_len;
};

/* Reads NOTIFY_SOCKET's value S into SA and LEN: an absolute path, or an
 * abstract name written with a leading '@'. Returns 0, or -RING_EFIELD
 * for anything else (empty, relative, too long). */
int ring_sd_addr_parse(const char *s, struct sockaddr_un *sa, socklen_t *len);

/* The watchdog interval from WATCHDOG_USEC and WATCHDOG_PID (either may be
 * NULL, unset): *USEC is the interval when it is meant for process SELF
 * (WATCHDOG_PID unset or SELF), else 0. Returns 0, or -RING_EFIELD for a
 * value that is not a number (then *USEC is 0). */
int ring_sd_watchdog_parse(const char *usec, const char *pid, long self, uint64_t *usec_out);

/* Opens the socket NOTIFY_SOCKET names (NOTIFY, may be NULL or empty: then
 * N->fd is -1 and nothing is ever sent). Returns 0, -RING_EFIELD for an
 * address ring_sd_addr_parse refuses, -RING_EIO when no socket could be
 * made, with the message in ERR. */
int ring_sd_notify_open(struct ring_sd_notify *n, const char *notify, char *err, size_t errlen);

/* Sends MSG ("READY=1\nSTATUS=...", newline-separated assignments) in one
 * datagram, never blocking. Returns 0 (also when N is closed), or -RING_EIO
 * when it did not go (systemd gone, its queue full): the caller may retry. */
int ring_sd_notify_send(const struct ring_sd_notify *n, const char *msg);

void ring_sd_notify_close(struct ring_sd_notify *n);

/* Whether member ME (ring index) has joined the ring, for READY=1: it has
 * heard a live token (a token, heartbeat or ack of its epoch, or won an
 * election) and the alive set it last heard counts it in. A member alone
 * without quorum, or one still waiting to be readmitted, has not. */
bool ring_sd_joined(const struct ring_status *st, size_t me);

/* The STATUS= text for ST of member ME of a ring of N members (without
 * the "STATUS=" prefix), in BUF: changes only when the member's standing
 * does (not at every hop), so that it can be sent on change.
 * LEAVING after SIGTERM. Returns its length, or -RING_ENOSPACE. */
int ring_sd_status_text(char *buf, size_t len, const struct ring_status *st, size_t me, size_t n,
			bool leaving);

#endif
