/* The daemon's side of the control socket (docs/control.md): accepting
 * clients, their buffers and acquire timeouts, and turning their lines into
 * calls on the daemon. ring/common/control.c parses and formats the lines. */
#ifndef RING_CTL_SERVER_H
#define RING_CTL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "common/control.h"
#include "common/log.h"
#include "daemon/metrics.h"
#include "common/state_dir.h"

struct ring_ctl_server;

/* What the server asks of the daemon. ARG is the daemon. */
struct ring_ctl_handler {
	void *arg;
	/* A client wants (RING_EVENT_ACQUIRE, RING_EVENT_TRY), renews
	 * (RING_EVENT_RENEW) or gives up (RING_EVENT_RELEASE) the critical
	 * region: the daemon steps the core with it. */
	void (*client)(void *arg, enum ring_event_type type, uint64_t handle);
	/* The STATUS line into BUF; returns its length like snprintf. */
	int (*status)(void *arg, char *buf, size_t len);
	/* Plants the fault R asks for. Returns 0, or -1 with the reason for
	 * the client in WHY. */
	int (*inject)(void *arg, const struct ring_ctl_request *r, char *why, size_t whylen);
	/* Whether the daemon is stopping: no further line is read. */
	bool (*stopped)(void *arg);
	/* The METRICS reply (Prometheus text) into BUF; returns its length
	 * like snprintf. */
	int (*metrics)(void *arg, char *buf, size_t len);
	/* The daemon's time, microseconds, as read for the step that runs
	 * or ran last: the clock of the grant histograms, read no more often
	 * than the core's own. */
	uint64_t (*now)(void *arg);
	/* Where the server records grant waits and holds. */
	struct ring_metrics *samples;
};

/* Listens on PATH on BASE, mode 0600, or 0660 owned by GROUP when its
 * name is set (control_group; -RING_EIO when ringd may not chgrp it); DIR is PATH's folder, opened and
 * checked by ring_state_dir_open (the server keeps its own descriptor of
 * it). A socket file that answers belongs to a running member MEMBER and
 * is -RING_EBUSY; a socket of ours left by a crash is replaced; anything
 * else at PATH (a file, a link, another user's socket) is -RING_ECONFIG
 * and left alone. Returns 0, or a negative RING_E* code with the reason in
 * ERR (-RING_EIO when listening fails). Free *OUT even after a failure. */
int ring_ctl_server_new(struct ring_ctl_server **out, struct event_base *base,
			const struct ring_state_dir *dir, const char *path, uint16_t member,
			const struct ring_conf_group *group, const struct ring_ctl_handler *h,
			struct ring_log *log, char *err, size_t errlen);

/* The core's answers to client HANDLE; a client that has gone is skipped. */
void ring_ctl_server_grant(struct ring_ctl_server *s, uint64_t handle, uint64_t fence,
			   uint32_t epoch);
void ring_ctl_server_revoke(struct ring_ctl_server *s, uint64_t handle, uint64_t fence);
void ring_ctl_server_deny(struct ring_ctl_server *s, uint64_t handle, int reason);
/* A RENEW took: the grant now has MS_LEFT milliseconds before its lease ends. */
void ring_ctl_server_renewed(struct ring_ctl_server *s, uint64_t handle, uint64_t fence,
			     uint64_t ms_left);

/* Closes every client and removes the socket file. */
void ring_ctl_server_free(struct ring_ctl_server *s);

#endif
