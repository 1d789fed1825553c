/* A load client for measurements: enters and leaves the critical region in
 * a loop through a member's control socket (ACQUIRE, GRANTED, RELEASE, OK),
 * with an empty critical region or, given CS_FILE, bench_cs() on that shared
 * file, and reports entries and grant latency. */
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

/* SIGTERM or SIGINT ends the loop early; the report is still written. */
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Buffered: one read per reply, not one per byte, so that the client's own
 * system calls weigh as little as they can on the ring it measures. */
static char inbuf[4096];
static size_t inlen;

/* One reply line into BUF; returns 0 on success. */
static int reply(int fd, char *buf, size_t len)
{
	for (;;) {
		char *nl = memchr(inbuf, '\n', inlen);
		if (nl) {
			size_t n = (size_t)(nl - inbuf);
			if (n >= len)
				return -1;
			memcpy(buf, inbuf, n);
			buf[n] = 0;
			inlen -= n + 1;
			memmove(inbuf, nl + 1, inlen);
			return 0;
		}
		if (inlen == sizeof inbuf)
			return -1;
		ssize_t r = read(fd, inbuf + inlen, sizeof inbuf - inlen);
		if (r < 0 && errno == EINTR && !stopping)
			continue;
		if (r <= 0)
			return -1;
		inlen += (size_t)r;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: cs_client SOCKET SECONDS [LATENCY_FILE [CS_FILE]]\n"
				"prints: entries N seconds S p50_us P p99_us Q\n"
				"LATENCY_FILE gets every grant latency in microseconds, one a line;\n"
				"with CS_FILE each entry adds one to the counter in that file;\n"
				"SIGTERM ends the run early and still reports\n");
		return 2;
	}
	int cs = -1;
	if (argc == 5 && (cs = open(argv[4], O_RDWR)) < 0) {
		fprintf(stderr, "cs_client: %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	double secs = atof(argv[2]);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", argv[1]);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "cs_client: %s: %s\n", argv[1], strerror(errno));
		return 69;
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
		uint64_t t0 = ring_mono_us();
		if (write(fd, "ACQUIRE\n", 8) != 8 || reply(fd, line, sizeof line) != 0)
			break;
		if (strncmp(line, "GRANTED", 7) != 0)
			break;
		lat[n++] = ring_mono_us() - t0;
		if (cs >= 0 && bench_cs(cs) != 0) {
			fprintf(stderr, "cs_client: %s: %s\n", argv[4], strerror(errno));
			return 1;
		}
		if (write(fd, "RELEASE\n", 8) != 8 || reply(fd, line, sizeof line) != 0)
			break;
		while (strncmp(line, "REVOKED", 7) == 0)
			if (reply(fd, line, sizeof line) != 0)
				break;
	}
	double took = (double)(ring_mono_us() - start) / 1e6;
	if (bench_report("cs_client", lat, n, took, argc >= 4 ? argv[3] : NULL) != 0)
		return 1;
	free(lat);
	close(fd);
	return 0;
}
