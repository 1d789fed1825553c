/* A client of ring's control socket in plain C (POSIX sockets, no ring
 * library): takes the lock at one member, prints the fence, renews the
 * grant once, releases. Every line it sends and reads is in
 * docs/control.md; build it with `cc -std=c11 -o client client.c`.
 *
 *   ./client "$(ringctl -c /etc/ring/ring.conf -n 1 socket)" [TIMEOUT_MS]
 *
 * Exit status as ringctl's: 0 done, 75 not granted within TIMEOUT_MS,
 * 70 the grant ended before it was released, 69 no member at SOCKET,
 * 1 anything else (permission denied: see docs/operations.md, "Let user X
 * take the lock"). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* What was read and not yet handed out as a line. */
struct reader {
	int fd;
	char buf[1024];
	size_t len;
};

/* The next reply line into OUT, without its "\n". 0, or -1 when the member
 * closed the connection or sent a line longer than any reply. */
static int read_line(struct reader *r, char *out, size_t outlen)
{
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		if (nl) {
			size_t n = (size_t)(nl - r->buf);
			if (n >= outlen)
				return -1;
			memcpy(out, r->buf, n);
			out[n] = '\0';
			r->len -= n + 1;
			memmove(r->buf, nl + 1, r->len);
			return 0;
		}
		if (r->len == sizeof r->buf)
			return -1;
		ssize_t got = read(r->fd, r->buf + r->len, sizeof r->buf - r->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		r->len += (size_t)got;
	}
}

/* Sends one command line and reads its reply into REPLY. 0, or -1. */
static int ask(struct reader *r, const char *line, char *reply, size_t len)
{
	size_t n = strlen(line), off = 0;
	while (off < n) {
		ssize_t w = send(r->fd, line + off, n - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return read_line(r, reply, len);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "client: %s: longer than a Unix socket path may be\n", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0)
		return fd;
	fprintf(stderr, "client: %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Says what went wrong (WHAT, and the member's REPLY when there is one)
 * and returns CODE, the exit status. */
static int fail(int code, const char *what, const char *reply)
{
	fprintf(stderr, "client: %s%s%s\n", what, reply ? ": " : "", reply ? reply : "");
	return code;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: client SOCKET [TIMEOUT_MS]\n");
		return 2;
	}
	int fd = connect_to(argv[1]);
	if (fd < 0)
		return errno == EACCES ? 1 : 69;
	struct reader r = {.fd = fd, .len = 0};
	char cmd[64], reply[512];
	unsigned long long fence, renewed, epoch, ms;
	snprintf(cmd, sizeof cmd, "ACQUIRE%s%.20s\n", argc == 3 ? " " : "", argc == 3 ? argv[2] : "");
	/* The wait may be long: GRANTED comes when the token does. */
	if (ask(&r, cmd, reply, sizeof reply) != 0)
		return fail(69, "the member closed the connection", NULL);
	if (strcmp(reply, "TIMEOUT") == 0)
		return fail(75, "not granted in time", reply);
	if (sscanf(reply, "GRANTED %llu %llu", &fence, &epoch) != 2)
		return fail(1, "ACQUIRE", reply);
	printf("granted fence=%llu epoch=%llu\n", fence, epoch);
	fflush(stdout);

	/* Here the work would be done, handing FENCE to the resource. A job
	 * longer than lease_ms renews, well before the lease ends. */
	if (ask(&r, "RENEW\n", reply, sizeof reply) != 0)
		return fail(70, "the member closed the connection", NULL);
	if (strncmp(reply, "REVOKED ", 8) == 0)
		return fail(70, "the grant ended first", reply);
	if (sscanf(reply, "RENEWED %llu %llu", &renewed, &ms) != 2 || renewed != fence)
		return fail(1, "RENEW", reply);
	printf("renewed fence=%llu ms=%llu\n", renewed, ms);

	if (ask(&r, "RELEASE\n", reply, sizeof reply) != 0)
		return fail(70, "the member closed the connection", NULL);
	if (strncmp(reply, "REVOKED ", 8) == 0)
		return fail(70, "the grant ended first", reply);
	if (strcmp(reply, "OK") != 0)
		return fail(1, "RELEASE", reply);
	printf("released fence=%llu\n", fence);
	close(fd);
	return 0;
}
