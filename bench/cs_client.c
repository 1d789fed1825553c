/* A load client for measurements: enters and leaves the critical region in
 * a loop through a member's control socket (ACQUIRE, GRANTED, RELEASE, OK),
 * with an empty critical region, and reports entries and grant latency. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One reply line; returns 0 on success. */
static int reply(int fd, char *buf, size_t len)
{
	size_t off = 0;
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, 1);
		if (n <= 0)
			return -1;
		if (buf[off] == '\n') {
			buf[off] = 0;
			return 0;
		}
		off++;
	}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cs_client SOCKET SECONDS\n"
				"prints: entries N seconds S p50_us P p99_us Q\n");
		return 2;
	}
	double secs = atof(argv[2]);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", argv[1]);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "cs_client: %s: %s\n", argv[1], strerror(errno));
		return 69;
	}
	size_t cap = 1 << 20, n = 0;
	uint64_t *lat = malloc(cap * sizeof *lat);
	char line[256];
	uint64_t start = now_us(), end = start + (uint64_t)(secs * 1e6);
	while (now_us() < end && n < cap) {
		uint64_t t0 = now_us();
		if (write(fd, "ACQUIRE\n", 8) != 8 || reply(fd, line, sizeof line) != 0)
			break;
		if (strncmp(line, "GRANTED", 7) != 0)
			break;
		lat[n++] = now_us() - t0;
		if (write(fd, "RELEASE\n", 8) != 8 || reply(fd, line, sizeof line) != 0)
			break;
		while (strncmp(line, "REVOKED", 7) == 0)
			if (reply(fd, line, sizeof line) != 0)
				break;
	}
	double took = (double)(now_us() - start) / 1e6;
	qsort(lat, n, sizeof *lat, cmp_u64);
	printf("entries %zu seconds %.3f p50_us %llu p99_us %llu\n", n, took,
	       n ? (unsigned long long)lat[n / 2] : 0ULL,
	       n ? (unsigned long long)lat[n * 99 / 100] : 0ULL);
	free(lat);
	close(fd);
	return 0;
}
