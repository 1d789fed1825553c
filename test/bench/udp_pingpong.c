/* The floor for make bench: a UDP ping-pong between two processes on
 * 127.0.0.1, with datagrams the size of a token. Prints one JSON object:
 * one-way latency (round trip / 2) p50/p99 and datagrams per second. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define PAYLOAD 64 /* a TOKEN datagram: 16-byte header, 16 bytes of fields, 32-byte set */
#define WARMUP 1000

static int udp_socket(struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof *addr;
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr->sin_port = 0; /* the kernel picks a free port */
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof *addr) != 0 ||
	    getsockname(fd, (struct sockaddr *)addr, &len) != 0) {
		perror("udp_pingpong: socket");
		exit(1);
	}
	return fd;
}

/* The echo side: sends back whatever comes, until a zero-length datagram. */
static void echo(int fd)
{
	char buf[PAYLOAD];
	for (;;) {
		struct sockaddr_in from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &flen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		(void)sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, flen);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc == 2 ? atol(argv[1]) : 0;
	if (argc != 2 || rounds < 100 || rounds > 10000000) {
		fprintf(stderr, "usage: udp_pingpong ROUNDS   (100..10000000)\n"
				"prints one JSON object: oneway_p50_us, oneway_p99_us, "
				"datagrams_per_s, ...\n");
		return 2;
	}
	struct sockaddr_in a, b;
	int fa = udp_socket(&a), fb = udp_socket(&b);
	pid_t pid = fork();
	if (pid < 0) {
		perror("udp_pingpong: fork");
		return 1;
	}
	if (pid == 0) {
		close(fa);
		echo(fb);
	}
	close(fb);
	/* A reply lost (it should not be, on loopback) must not hang the run. */
	struct timeval tv = {.tv_sec = 1};
	setsockopt(fa, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	uint64_t *rtt = malloc((size_t)rounds * sizeof *rtt);
	char buf[PAYLOAD] = "RG", back[PAYLOAD];
	long n = 0, lost = 0;
	uint64_t start = 0;
	for (long k = -WARMUP; k < rounds; k++) {
		if (k == 0)
			start = ring_clock_ns(CLOCK_MONOTONIC);
		uint64_t t0 = ring_clock_ns(CLOCK_MONOTONIC);
		memcpy(buf + 8, &k, sizeof k);
		if (sendto(fa, buf, sizeof buf, 0, (struct sockaddr *)&b, sizeof b) != PAYLOAD) {
			perror("udp_pingpong: sendto");
			break;
		}
		ssize_t got = recv(fa, back, sizeof back, 0);
		if (got != PAYLOAD) {
			lost++;
			continue;
		}
		if (k >= 0)
			rtt[n++] = ring_clock_ns(CLOCK_MONOTONIC) - t0;
	}
	double took = (double)(ring_clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	(void)sendto(fa, buf, 0, 0, (struct sockaddr *)&b, sizeof b);
	int status;
	struct timespec ts = {0, 1000000};
	for (int k = 0; k < 1000 && waitpid(pid, &status, WNOHANG) == 0; k++)
		nanosleep(&ts, NULL); /* bounded: at most a second */
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (n == 0) {
		fprintf(stderr, "udp_pingpong: no round trip completed\n");
		return 1;
	}
	bench_sort(rtt, (size_t)n);
	double sum = 0;
	for (long k = 0; k < n; k++)
		sum += (double)rtt[k];
	/* One way = half a round trip: each half is a sendto, a wake-up and a
	 * recv, which is what one token hop needs at least. */
	printf("{\"rounds\":%ld,\"lost\":%ld,\"payload_bytes\":%d,\"seconds\":%.3f,"
	       "\"rtt_p50_us\":%.2f,\"rtt_p99_us\":%.2f,"
	       "\"oneway_p50_us\":%.2f,\"oneway_p99_us\":%.2f,\"oneway_mean_us\":%.2f,"
	       "\"datagrams_per_s\":%.0f}\n",
	       n, lost, PAYLOAD, took, (double)rtt[n / 2] / 1e3, (double)rtt[n * 99 / 100] / 1e3,
	       (double)rtt[n / 2] / 2e3, (double)rtt[n * 99 / 100] / 2e3, sum / (double)n / 2e3,
	       2.0 * (double)n / took);
	free(rtt);
	return 0;
}
