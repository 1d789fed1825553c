/* systemd's notification protocol, the documented way (sd_notify(3), "the
 * NOTIFY_SOCKET protocol"): one AF_UNIX datagram of newline-separated
 * assignments, no libsystemd. Also what READY and STATUS mean for a member. */
#include "daemon/sd_notify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/set.h"

int ring_sd_addr_parse(const char *s, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = s ? strlen(s) : 0;
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	/* An abstract name has no terminating NUL: its length is the
	 * address's; a path keeps its NUL inside sun_path. */
	if (n >= 2 && s[0] == '@' && n <= sizeof sa->sun_path) {
		memcpy(sa->sun_path + 1, s + 1, n - 1);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
		return 0;
	}
	if (n >= 2 && s[0] == '/' && n < sizeof sa->sun_path) {
		memcpy(sa->sun_path, s, n);
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
		return 0;
	}
	return -RING_EFIELD;
}

/* A decimal number that fits in 64 bits, nothing else. */
static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

int ring_sd_watchdog_parse(const char *usec, const char *pid, long self, uint64_t *usec_out)
{
	uint64_t u, p;
	*usec_out = 0;
	if (!usec)
		return 0;
	if (!parse_u64(usec, &u))
		return -RING_EFIELD;
	/* WATCHDOG_PID names the process systemd watches: a child that
	 * inherited the variables must not ping for its parent. */
	if (pid) {
		if (!parse_u64(pid, &p))
			return -RING_EFIELD;
		if (p != (uint64_t)self)
			return 0;
	}
	*usec_out = u;
	return 0;
}

int ring_sd_notify_open(struct ring_sd_notify *n, const char *notify, char *err, size_t errlen)
{
	n->fd = -1;
	if (!notify || !*notify)
		return 0;
	if (ring_sd_addr_parse(notify, &n->addr, &n->addr_len) < 0) {
		snprintf(err, errlen, "NOTIFY_SOCKET=%s: not an absolute path or an @abstract name",
			 notify);
		return -RING_EFIELD;
	}
	/* Not connected: a datagram socket connected to a path would keep
	 * talking to that inode even after systemd rebinds the name. */
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->fd < 0) {
		snprintf(err, errlen, "NOTIFY_SOCKET: socket: %s", strerror(errno));
		return -RING_EIO;
	}
	return 0;
}

int ring_sd_notify_send(const struct ring_sd_notify *n, const char *msg)
{
	if (n->fd < 0)
		return 0;
	/* Never blocks the loop: a full queue loses this one, and the caller
	 * decides whether it matters (READY=1 is tried again). */
	ssize_t r = sendto(n->fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL,
			   (const struct sockaddr *)&n->addr, n->addr_len);
	return r < 0 ? -RING_EIO : 0;
}

void ring_sd_notify_close(struct ring_sd_notify *n)
{
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

bool ring_sd_joined(const struct ring_status *st, size_t me)
{
	return st->token_seen_ms_ago != UINT64_MAX && ring_set_has(&st->alive, me);
}

int ring_sd_status_text(char *buf, size_t len, const struct ring_status *st, size_t me, size_t n,
			bool leaving)
{
	size_t alive = ring_set_count(&st->alive);
	int w;
	if (leaving)
		w = snprintf(buf, len, "leaving the ring");
	else if (!ring_sd_joined(st, me))
		w = st->state == RING_STATE_NO_QUORUM
			    ? snprintf(buf, len, "no quorum: waiting for more members to start (epoch %u)",
				       st->epoch)
			    : snprintf(buf, len, "waiting for the ring (epoch %u)", st->epoch);
	else if (st->state == RING_STATE_NO_QUORUM)
		w = snprintf(buf, len, "no quorum: %zu of %zu members alive (epoch %u)", alive, n,
			     st->epoch);
	else if (st->state == RING_STATE_ELECTING)
		w = snprintf(buf, len, "token lost: electing (epoch %u)", st->epoch);
	else
		w = snprintf(buf, len, "in the ring: epoch %u, %zu of %zu members alive", st->epoch,
			     alive, n);
	return w < 0 || (size_t)w >= len ? -RING_ENOSPACE : w;
}
