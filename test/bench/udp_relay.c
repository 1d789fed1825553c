/* A second floor for make bench: N processes on 127.0.0.1 pass one
 * datagram around a ring, as the token goes, optionally acking each hop to
 * its sender and optionally waiting in epoll as an event loop does. It is
 * the least a hop can cost with ring's message pattern, with no protocol
 * work at all. Prints one JSON object. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define PAYLOAD 64 /* a TOKEN datagram */
#define MAX_N 64
#define WARMUP 200

static bool use_epoll, use_ack;

/* The next datagram that is not an ack ('A'); acks are read and dropped,
 * as a member reads its successor's ack. With epoll: wait for readiness,
 * then read until the socket is empty, as ringd's udp_cb does. */
static ssize_t next_token(int ep, int fd, char *buf, struct sockaddr_in *from)
{
	for (;;) {
		if (!use_epoll) {
			socklen_t fl = sizeof *from;
			ssize_t n = recvfrom(fd, buf, PAYLOAD, 0, (struct sockaddr *)from, &fl);
			if (n <= 0 || buf[0] != 'A')
				return n;
			continue;
		}
		struct epoll_event e;
		if (epoll_wait(ep, &e, 1, 2000) <= 0)
			return -1;
		ssize_t got = 0;
		for (;;) {
			char tmp[PAYLOAD];
			struct sockaddr_in f;
			socklen_t fl = sizeof f;
			ssize_t n = recvfrom(fd, tmp, sizeof tmp, MSG_DONTWAIT, (struct sockaddr *)&f, &fl);
			if (n < 0)
				break;
			if (n > 0 && tmp[0] != 'A') {
				memcpy(buf, tmp, (size_t)n);
				*from = f;
				got = n;
			}
		}
		if (got)
			return got;
	}
}

static int make_epoll(int fd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = {.events = EPOLLIN};
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0) {
		perror("udp_relay: epoll");
		exit(1);
	}
	return ep;
}

static void relay(int fd, const struct sockaddr_in *next)
{
	int ep = use_epoll ? make_epoll(fd) : -1;
	char buf[PAYLOAD];
	struct sockaddr_in from;
	for (;;) {
		ssize_t n = next_token(ep, fd, buf, &from);
		if (n <= 0)
			_exit(0);
		if (use_ack)
			(void)sendto(fd, "A", 1, 0, (struct sockaddr *)&from, sizeof from);
		(void)sendto(fd, buf, (size_t)n, 0, (const struct sockaddr *)next, sizeof *next);
		if (buf[0] == 'Q')
			_exit(0);
	}
}

int main(int argc, char **argv)
{
	int n = argc >= 3 ? atoi(argv[1]) : 0;
	long laps = argc >= 3 ? atol(argv[2]) : 0;
	for (int k = 3; k < argc; k++) {
		if (strcmp(argv[k], "--ack") == 0)
			use_ack = true;
		else if (strcmp(argv[k], "--epoll") == 0)
			use_epoll = true;
		else
			n = 0;
	}
	if (n < 2 || n > MAX_N || laps < 10) {
		fprintf(stderr, "usage: udp_relay N LAPS [--ack] [--epoll]   (N 2..%d)\n", MAX_N);
		return 2;
	}
	int fd[MAX_N];
	struct sockaddr_in addr[MAX_N];
	for (int i = 0; i < n; i++) {
		socklen_t len = sizeof addr[i];
		addr[i] = (struct sockaddr_in){.sin_family = AF_INET,
					       .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&addr[i], sizeof addr[i]) != 0 ||
		    getsockname(fd[i], (struct sockaddr *)&addr[i], &len) != 0) {
			perror("udp_relay: socket");
			return 1;
		}
	}
	pid_t kids[MAX_N];
	for (int i = 1; i < n; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("udp_relay: fork");
			return 1;
		}
		if (kids[i] == 0)
			relay(fd[i], &addr[(i + 1) % n]);
	}
	int ep = use_epoll ? make_epoll(fd[0]) : -1;
	struct timeval tv = {.tv_sec = 2};
	setsockopt(fd[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	uint64_t *lap = malloc((size_t)laps * sizeof *lap);
	char buf[PAYLOAD] = "T";
	long done = 0;
	uint64_t start = 0;
	for (long k = -WARMUP; k < laps; k++) {
		if (k == 0)
			start = ring_clock_ns(CLOCK_MONOTONIC);
		uint64_t t0 = ring_clock_ns(CLOCK_MONOTONIC);
		buf[0] = 'T';
		struct sockaddr_in from;
		if (sendto(fd[0], buf, sizeof buf, 0, (struct sockaddr *)&addr[1], sizeof addr[1]) < 0 ||
		    next_token(ep, fd[0], buf, &from) <= 0)
			break; /* lost on loopback: end the run rather than hang */
		if (use_ack)
			(void)sendto(fd[0], "A", 1, 0, (struct sockaddr *)&from, sizeof from);
		if (k >= 0)
			lap[done++] = ring_clock_ns(CLOCK_MONOTONIC) - t0;
	}
	double took = (double)(ring_clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	buf[0] = 'Q';
	(void)sendto(fd[0], buf, sizeof buf, 0, (struct sockaddr *)&addr[1], sizeof addr[1]);
	for (int i = 1; i < n; i++) {
		int st;
		struct timespec ms = {0, 1000000};
		for (int w = 0; w < 2000 && waitpid(kids[i], &st, WNOHANG) == 0; w++)
			nanosleep(&ms, NULL); /* bounded */
		if (waitpid(kids[i], &st, WNOHANG) == 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], &st, 0);
		}
	}
	if (done == 0) {
		fprintf(stderr, "udp_relay: no lap completed\n");
		return 1;
	}
	bench_sort(lap, (size_t)done);
	/* Per hop: a lap's time over its N hops (the median lap, the mean). */
	printf("{\"members\":%d,\"ack\":%s,\"epoll\":%s,\"laps\":%ld,\"seconds\":%.3f,"
	       "\"hop_p50_us\":%.2f,\"hop_mean_us\":%.2f,\"lap_p99_us\":%.2f}\n",
	       n, use_ack ? "true" : "false", use_epoll ? "true" : "false", done, took,
	       (double)lap[done / 2] / 1e3 / n, took * 1e6 / (double)done / n,
	       (double)lap[done * 99 / 100] / 1e3);
	free(lap);
	return 0;
}
