/* The client side of METRICS: one request, a multi-line reply read up to
 * its end marker (control.h, RING_CTL_METRICS_END), bounded in size and
 * time so that a stuck member cannot hang a scraper. */
#include "ctl/metrics_fetch.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/control.h"
#include "core/err.h"

/* Where the marker ends the reply: its offset, or -1 while it has not come. */
static long end_at(const char *buf, size_t len)
{
	static const char end[] = RING_CTL_METRICS_END "\n";
	size_t n = sizeof end - 1;
	if (len >= n && memcmp(buf + len - n, end, n) == 0 &&
	    (len == n || buf[len - n - 1] == '\n'))
		return (long)(len - n);
	return -1;
}

static int read_reply(int fd, char *buf, size_t cap, size_t *len, int timeout_ms, char *err,
		      size_t errlen)
{
	uint64_t until = ring_mono_us() + (uint64_t)timeout_ms * 1000u;
	*len = 0;
	for (;;) {
		if (*len >= 4 && memcmp(buf, "ERR ", 4) == 0 && memchr(buf, '\n', *len)) {
			snprintf(err, errlen, "%.*s", (int)strcspn(buf, "\n"), buf);
			return -RING_EFIELD;
		}
		if (end_at(buf, *len) >= 0)
			return 0;
		if (*len == cap) {
			snprintf(err, errlen, "the reply is longer than %zu bytes", cap);
			return -RING_EFIELD;
		}
		uint64_t now = ring_mono_us();
		if (now >= until) {
			snprintf(err, errlen, "no whole reply within %d ms", timeout_ms);
			return -RING_EIO;
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ready = poll(&p, 1, (int)((until - now) / 1000u) + 1);
		if (ready < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return -RING_EIO;
		}
		if (ready <= 0)
			continue;
		ssize_t got = recv(fd, buf + *len, cap - *len, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			snprintf(err, errlen, "the member closed the control socket mid-reply");
			return -RING_EIO;
		}
		*len += (size_t)got;
	}
}

int ring_metrics_fetch(int fd, const char *path, FILE *out, int timeout_ms, char *err,
		       size_t errlen)
{
	static const char req[] = "METRICS\n";
	if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof req - 1)) {
		snprintf(err, errlen, "cannot send to %s: %s", path, strerror(errno));
		close(fd);
		return -RING_EIO;
	}
	size_t cap = 2 * RING_METRICS_MAX, len;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	int rc = read_reply(fd, buf, cap, &len, timeout_ms, err, errlen);
	close(fd);
	if (rc == 0) {
		fwrite(buf, 1, (size_t)end_at(buf, len), out);
		fflush(out);
	}
	free(buf);
	return rc;
}
