/* A load client for measurements: enters and leaves the critical region in
 * a loop through a member's control socket (ACQUIRE, GRANTED, RELEASE, OK),
 * with an empty critical region or, given CS_FILE, bench_cs() on that shared
 * file, and reports entries and grant latency. With -p it is a rare
 * requester instead: a pause after every entry, and the entries taken at
 * several members in turn. With -P it pipelines: its RELEASE and its next
 * ACQUIRE go in one write, one round trip per entry (docs/control.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
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

/* One reply line into BUF; returns 0 on success. A signal that is not a
 * stop lets the wait go on. */
static int reply(struct bench_conn *c, char *buf, size_t len)
{
	for (;;) {
		int got = bench_line(c, buf, len);
		if (got)
			return got > 0 ? 0 : -1;
		if (bench_fill(c) < 0 && !(errno == EINTR && !stopping))
			return -1;
	}
}

/* The reply to a RELEASE: 0 for OK, or for "ERR not holding" when a
 * REVOKED (skipped) had ended the grant already; -1 otherwise. */
static int released(struct bench_conn *c, char *buf, size_t len)
{
	do
		if (reply(c, buf, len) != 0)
			return -1;
	while (strncmp(buf, "REVOKED", 7) == 0);
	return strcmp(buf, "OK") == 0 || strcmp(buf, "ERR not holding") == 0 ? 0 : -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: cs_client [-p PAUSE_MS | -P] SOCKET[,SOCKET...] SECONDS [LATENCY_FILE [CS_FILE]]\n"
		"prints: entries N seconds S p50_us P p99_us Q\n"
		"LATENCY_FILE gets every grant latency in microseconds, one a line;\n"
		"with CS_FILE each entry adds one to the counter in that file;\n"
		"-p PAUSE_MS sleeps that long after each entry (a rare requester);\n"
		"with several sockets (members), entry i is taken at socket i mod their number;\n"
		"-P pipelines, one socket only: RELEASE and the next ACQUIRE in one write,\n"
		"the latency then from that write to GRANTED;\n"
		"SIGTERM ends the run early and still reports\n");
}

int main(int argc, char **argv)
{
	long pause;
	int pipelined;
	if (bench_options(&argc, &argv, &pause, &pipelined, 2, 4) < 0) {
		usage();
		return 2;
	}
	int cs = -1;
	if (argc == 5 && (cs = open(argv[4], O_RDWR)) < 0) {
		fprintf(stderr, "cs_client: %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	double secs = atof(argv[2]);
	static struct bench_conn conns[MAX_SOCKETS];
	size_t nconn = 0;
	char *paths = argv[1], *save = NULL;
	for (char *p = strtok_r(paths, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (nconn == MAX_SOCKETS) {
			fprintf(stderr, "cs_client: at most %d sockets\n", MAX_SOCKETS);
			return 2;
		}
		if (bench_dial(&conns[nconn++], p, "cs_client") != 0)
			return 69;
	}
	if (nconn == 0 || (pipelined && nconn > 1)) {
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
	bool held = false; /* pipelined: the grant is released with the next ACQUIRE */
	uint64_t start = ring_mono_us(), end = start + (uint64_t)(secs * 1e6);
	while (!stopping && ring_mono_us() < end && n < cap) {
		struct bench_conn *c = &conns[n % nconn];
		uint64_t t0 = ring_mono_us();
		static const char both[] = "RELEASE\nACQUIRE\n";
		if (held) {
			held = false;
			if (write(c->fd, both, sizeof both - 1) != (ssize_t)sizeof both - 1 ||
			    released(c, line, sizeof line) != 0)
				break;
		} else if (write(c->fd, "ACQUIRE\n", 8) != 8) {
			break;
		}
		if (reply(c, line, sizeof line) != 0 || strncmp(line, "GRANTED", 7) != 0)
			break;
		lat[n++] = ring_mono_us() - t0;
		if (cs >= 0 && bench_cs(cs) != 0) {
			fprintf(stderr, "cs_client: %s: %s\n", argv[4], strerror(errno));
			return 1;
		}
		if (pipelined) {
			held = true;
			continue;
		}
		if (write(c->fd, "RELEASE\n", 8) != 8 || released(c, line, sizeof line) != 0)
			break;
		if (pause > 0 && !stopping)
			bench_pause_ms((unsigned)pause);
	}
	if (held && write(conns[0].fd, "RELEASE\n", 8) == 8)
		(void)released(&conns[0], line, sizeof line);
	double took = (double)(ring_mono_us() - start) / 1e6;
	if (bench_report("cs_client", lat, n, took, argc >= 4 ? argv[3] : NULL) != 0)
		return 1;
	free(lat);
	for (size_t k = 0; k < nconn; k++)
		close(conns[k].fd);
	return 0;
}
