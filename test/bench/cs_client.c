/* A load client for measurements: enters and leaves the critical region in
 * a loop through a member's control socket (ACQUIRE, GRANTED, RELEASE, OK),
 * with an empty critical region or, given CS_FILE, bench_cs() on that shared
 * file, and reports entries and grant latency. With -p it is a rare
 * requester instead: a pause after every entry, and the entries taken at
 * several members in turn. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_SOCKETS 16

/* SIGTERM or SIGINT ends the loop early; the report is still written. */
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* One control connection. Buffered: one read per reply, not one per byte,
 * so that the client's own system calls weigh as little as they can on the
 * ring it measures. */
struct conn {
	int fd;
	char in[4096];
	size_t len;
};

/* One reply line into BUF; returns 0 on success. */
static int reply(struct conn *c, char *buf, size_t len)
{
	for (;;) {
		char *nl = memchr(c->in, '\n', c->len);
		if (nl) {
			size_t n = (size_t)(nl - c->in);
			if (n >= len)
				return -1;
			memcpy(buf, c->in, n);
			buf[n] = 0;
			c->len -= n + 1;
			memmove(c->in, nl + 1, c->len);
			return 0;
		}
		if (c->len == sizeof c->in)
			return -1;
		ssize_t r = read(c->fd, c->in + c->len, sizeof c->in - c->len);
		if (r < 0 && errno == EINTR && !stopping)
			continue;
		if (r <= 0)
			return -1;
		c->len += (size_t)r;
	}
}

static int dial(struct conn *c, const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	c->len = 0;
	c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "cs_client: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: cs_client [-p PAUSE_MS] SOCKET[,SOCKET...] SECONDS [LATENCY_FILE [CS_FILE]]\n"
		"prints: entries N seconds S p50_us P p99_us Q\n"
		"LATENCY_FILE gets every grant latency in microseconds, one a line;\n"
		"with CS_FILE each entry adds one to the counter in that file;\n"
		"-p PAUSE_MS sleeps that long after each entry (a rare requester);\n"
		"with several sockets (members), entry i is taken at socket i mod their number;\n"
		"SIGTERM ends the run early and still reports\n");
}

int main(int argc, char **argv)
{
	long pause = 0;
	int opt;
	while ((opt = getopt(argc, argv, "p:")) != -1) {
		if (opt != 'p' || (pause = bench_parse_pause(optarg)) < 0) {
			usage();
			return 2;
		}
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc < 3 || argc > 5) {
		usage();
		return 2;
	}
	int cs = -1;
	if (argc == 5 && (cs = open(argv[4], O_RDWR)) < 0) {
		fprintf(stderr, "cs_client: %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	double secs = atof(argv[2]);
	static struct conn conns[MAX_SOCKETS];
	size_t nconn = 0;
	char *paths = argv[1], *save = NULL;
	for (char *p = strtok_r(paths, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (nconn == MAX_SOCKETS) {
			fprintf(stderr, "cs_client: at most %d sockets\n", MAX_SOCKETS);
			return 2;
		}
		if (dial(&conns[nconn++], p) != 0)
			return 69;
	}
	if (nconn == 0) {
		usage();
		return 2;
	}
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: a wait ends */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	size_t cap = 1 << 20, n = 0;
	uint64_t *lat = malloc(cap * sizeof *lat);
	if (!lat)
		return 1;
	char line[256];
	uint64_t start = ring_mono_us(), end = start + (uint64_t)(secs * 1e6);
	while (!stopping && ring_mono_us() < end && n < cap) {
		struct conn *c = &conns[n % nconn];
		uint64_t t0 = ring_mono_us();
		if (write(c->fd, "ACQUIRE\n", 8) != 8 || reply(c, line, sizeof line) != 0)
			break;
		if (strncmp(line, "GRANTED", 7) != 0)
			break;
		lat[n++] = ring_mono_us() - t0;
		if (cs >= 0 && bench_cs(cs) != 0) {
			fprintf(stderr, "cs_client: %s: %s\n", argv[4], strerror(errno));
			return 1;
		}
		if (write(c->fd, "RELEASE\n", 8) != 8 || reply(c, line, sizeof line) != 0)
			break;
		while (strncmp(line, "REVOKED", 7) == 0)
			if (reply(c, line, sizeof line) != 0)
				break;
		if (pause > 0 && !stopping)
			bench_pause_ms((unsigned)pause);
	}
	double took = (double)(ring_mono_us() - start) / 1e6;
	if (bench_report("cs_client", lat, n, took, argc >= 4 ? argv[3] : NULL) != 0)
		return 1;
	free(lat);
	for (size_t k = 0; k < nconn; k++)
		close(conns[k].fd);
	return 0;
}
