/* One recovery trial for make bench: a client enters the critical region at
 * the holder, every other member gets a waiting client, then the holder's
 * ringd is killed with SIGKILL; prints the time from the kill to the first
 * GRANTED at another member, as one JSON object. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_OTHERS 64

static int say(struct bench_conn *c, const char *s)
{
	size_t n = strlen(s);
	return write(c->fd, s, n) == (ssize_t)n ? 0 : -1;
}

/* Waits at most MS for a line on C. */
static int line_within(struct bench_conn *c, char *line, size_t len, int ms)
{
	uint64_t until = ring_mono_us() + (uint64_t)ms * 1000u;
	int got;
	while ((got = bench_line(c, line, len)) == 0) {
		uint64_t now = ring_mono_us();
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		if (now >= until || poll(&p, 1, (int)((until - now) / 1000u) + 1) <= 0 ||
		    bench_fill(c) < 0)
			return -1;
	}
	return got > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc - 4 > MAX_OTHERS) {
		fprintf(stderr, "usage: recovery TIMEOUT_MS HOLDER_PID HOLDER_SOCKET OTHER_SOCKET...\n");
		return 2;
	}
	int timeout_ms = atoi(argv[1]);
	pid_t holder = (pid_t)atol(argv[2]);
	if (holder <= 1 || timeout_ms <= 0) { /* kill(0) would kill our own process group */
		fprintf(stderr, "recovery: bad HOLDER_PID %s or TIMEOUT_MS %s\n", argv[2], argv[1]);
		return 2;
	}
	char line[4096];
	struct bench_conn h, o[MAX_OTHERS];
	int no = argc - 4;
	if (bench_dial(&h, argv[3], "recovery") < 0 || say(&h, "ACQUIRE\n") < 0 ||
	    line_within(&h, line, sizeof line, timeout_ms) < 0 || strncmp(line, "GRANTED", 7) != 0) {
		fprintf(stderr, "recovery: no grant at the holder\n");
		return 1;
	}
	/* Every other member queues a client; its STATUS reply, which comes
	 * after the ACQUIRE was read, says the request is in. */
	for (int k = 0; k < no; k++) {
		if (bench_dial(&o[k], argv[4 + k], "recovery") < 0 || say(&o[k], "ACQUIRE\nSTATUS\n") < 0 ||
		    line_within(&o[k], line, sizeof line, timeout_ms) < 0 || line[0] != '{') {
			fprintf(stderr, "recovery: member %d did not queue the request\n", k);
			return 1;
		}
	}
	uint64_t t0 = ring_mono_us();
	if (kill(holder, SIGKILL) != 0) {
		perror("recovery: kill");
		return 1;
	}
	struct pollfd p[MAX_OTHERS];
	int gone[MAX_OTHERS] = {0};
	uint64_t until = t0 + (uint64_t)timeout_ms * 1000u;
	for (;;) {
		for (int k = 0; k < no; k++) {
			while (bench_line(&o[k], line, sizeof line) > 0)
				if (strncmp(line, "GRANTED", 7) == 0) {
					uint64_t t1 = ring_mono_us();
					printf("{\"kill_to_grant_ms\":%.3f,\"granted_at\":%d}\n",
					       (double)(t1 - t0) / 1e3, k);
					return 0;
				}
			p[k] = (struct pollfd){.fd = gone[k] ? -1 : o[k].fd, .events = POLLIN};
		}
		uint64_t now = ring_mono_us();
		if (now >= until || poll(p, (nfds_t)no, (int)((until - now) / 1000u) + 1) < 0)
			break;
		for (int k = 0; k < no; k++)
			if ((p[k].revents & (POLLIN | POLLHUP)) && bench_fill(&o[k]) < 0)
				gone[k] = 1;
	}
	fprintf(stderr, "recovery: no grant within %d ms of the kill\n", timeout_ms);
	return 1;
}
