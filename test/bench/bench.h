/* What the benchmark programs share: the clocks, read through ring/common/clock.h,
 * sorting a sample of times to read its percentiles, and what the lock
 * clients share, so that ring and Redis are measured alike: the critical
 * section and the report. */
#ifndef RING_BENCH_H
#define RING_BENCH_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v[0..n-1] ascending, so that v[n / 2] is the median. */
static inline void bench_sort(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, bench_cmp_u64);
}

/* What a lock client reports when its loop ends: every latency of LAT[0..N-1]
 * in microseconds, one a line, into PATH (when not NULL), then on stdout
 * "entries N seconds S p50_us P p99_us Q". Sorts LAT. Returns 0, or -1 with
 * a message on stderr (naming WHO) when PATH cannot be written. */
static inline int bench_report(const char *who, uint64_t *lat, size_t n, double seconds,
			       const char *path)
{
	if (path) {
		FILE *f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
			return -1;
		}
		for (size_t k = 0; k < n; k++)
			fprintf(f, "%llu\n", (unsigned long long)lat[k]);
		fclose(f);
	}
	bench_sort(lat, n);
	printf("entries %zu seconds %.3f p50_us %llu p99_us %llu\n", n, seconds,
	       n ? (unsigned long long)lat[n / 2] : 0ULL,
	       n ? (unsigned long long)lat[n * 99 / 100] : 0ULL);
	return 0;
}

/* A control connection to a member (docs/control.md), buffered: one read
 * serves every reply it brought, so that a client's own system calls weigh
 * as little as they can on the ring it measures. */
struct bench_conn {
	int fd;
	char in[4096];
	size_t len;
};

/* Connects C to the control socket at PATH; says why on stderr as WHO. */
static inline int bench_dial(struct bench_conn *c, const char *path, const char *who)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	c->len = 0;
	c->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Takes one complete line already read into LINE: 1; 0 when there is none
 * yet; -1 when it does not fit LEN. */
static inline int bench_line(struct bench_conn *c, char *line, size_t len)
{
	char *nl = memchr(c->in, '\n', c->len);
	if (!nl)
		return 0;
	size_t n = (size_t)(nl - c->in);
	if (n >= len)
		return -1;
	memcpy(line, c->in, n);
	line[n] = 0;
	c->len -= n + 1;
	memmove(c->in, nl + 1, c->len);
	return 1;
}

/* Reads what has come: 0, or -1 on EOF, an error (errno: EINTR for a
 * signal) or a full buffer without a line. */
static inline int bench_fill(struct bench_conn *c)
{
	if (c->len == sizeof c->in) {
		errno = EMSGSIZE;
		return -1;
	}
	ssize_t r = read(c->fd, c->in + c->len, sizeof c->in - c->len);
	if (r == 0)
		errno = ECONNRESET;
	if (r <= 0)
		return -1;
	c->len += (size_t)r;
	return 0;
}

/* Sleeps MS milliseconds between two entries of a rare-request run (a
 * signal cuts it short: the caller's loop then sees its stop flag). */
static inline void bench_pause_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* PAUSE_MS of a -p option: 0..60000, or -1. */
static inline long bench_parse_pause(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return *s && !*end && v >= 0 && v <= 60000 ? v : -1;
}

/* The clients' options: -p PAUSE_MS (a rare requester) into *PAUSE, -P
 * (pipelined: the release and the next acquire in one write) into
 * *PIPELINED; then ARGV is shifted so that ARGV[1] is the first operand.
 * Returns 0, or -1 (the caller prints its usage) on a bad option, both
 * together (a pause between the release and the next acquire is what -P
 * leaves out), or fewer than MIN_OPERANDS or more than MAX_OPERANDS. */
static inline int bench_options(int *argc, char ***argv, long *pause, int *pipelined,
				int min_operands, int max_operands)
{
	int opt;
	*pause = 0;
	*pipelined = 0;
	while ((opt = getopt(*argc, *argv, "p:P")) != -1) {
		if (opt == 'P')
			*pipelined = 1;
		else if (opt != 'p' || (*pause = bench_parse_pause(optarg)) < 0)
			return -1;
	}
	if (*pipelined && *pause > 0)
		return -1;
	*argc -= optind - 1;
	*argv += optind - 1;
	return *argc - 1 >= min_operands && *argc - 1 <= max_operands ? 0 : -1;
}

/* The critical section: add one to the 8-byte counter at the start of the
 * shared file FD (pread, pwrite). Under a lock that works, the counter ends
 * equal to the sum of every client's entries; a lost update shows an overlap.
 * Returns 0, or -1 when the file cannot be read or written. */
static inline int bench_cs(int fd)
{
	uint64_t v = 0;
	if (pread(fd, &v, sizeof v, 0) < 0)
		return -1;
	v++;
	return pwrite(fd, &v, sizeof v, 0) == (ssize_t)sizeof v ? 0 : -1;
}

#endif
