/* The lock a user would pick instead of ring, measured like cs_client: a
 * Redis lock on hiredis. Acquire is SET key token NX PX lease, retried after
 * a short random backoff while another client holds it; release is the
 * usual Lua compare-and-delete, so that a client never frees a lock that
 * expired and went to another. Each entry runs bench_cs() on the shared
 * file; reports entries and acquire latency the way cs_client does. With
 * -p, a pause after every entry: a rare requester. With -P, pipelined as
 * cs_client -P is: the release and the next SET NX go in one write, and
 * their replies come back together (hiredis redisAppendCommand). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis.h>

#include "bench.h"

#define LOCK_KEY "ring-bench-lock"
#define LEASE_MS 5000 /* ring's default lease_ms */
#define RELEASE_LUA                                                                        \
	"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) " \
	"else return 0 end"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* xorshift64 for the backoff's jitter; no quality needed. */
static uint64_t jitter_state;

static uint64_t jitter(uint64_t below)
{
	jitter_state ^= jitter_state << 13;
	jitter_state ^= jitter_state >> 7;
	jitter_state ^= jitter_state << 17;
	return jitter_state % below;
}

/* 50..150 us between tries: short enough not to idle a free lock for long,
 * long enough not to spin the server. Redis clients commonly wait longer. */
static void backoff(void)
{
	uint64_t us = 50 + jitter(101);
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(us * 1000)};
	nanosleep(&ts, NULL);
}

/* 1 when the lock is ours, 0 when someone else holds it, -1 on error. */
static int try_acquire(redisContext *c, const char *token)
{
	redisReply *r = redisCommand(c, "SET %s %s NX PX %d", LOCK_KEY, token, LEASE_MS);
	if (!r)
		return -1;
	int got = r->type == REDIS_REPLY_STATUS ? 1 : r->type == REDIS_REPLY_NIL ? 0 : -1;
	freeReplyObject(r);
	return got;
}

/* 0 when our token was there and is gone, -1 otherwise. */
static int release(redisContext *c, const char *token)
{
	redisReply *r = redisCommand(c, "EVAL %s 1 %s %s", RELEASE_LUA, LOCK_KEY, token);
	if (!r)
		return -1;
	int ok = r->type == REDIS_REPLY_INTEGER && r->integer == 1 ? 0 : -1;
	freeReplyObject(r);
	return ok;
}

/* Pipelined: releases OLD and tries to take the lock for TOKEN with one
 * write and one read; as try_acquire, with -1 also when OLD was not ours. */
static int release_and_try(redisContext *c, const char *old, const char *token)
{
	if (redisAppendCommand(c, "EVAL %s 1 %s %s", RELEASE_LUA, LOCK_KEY, old) != REDIS_OK ||
	    redisAppendCommand(c, "SET %s %s NX PX %d", LOCK_KEY, token, LEASE_MS) != REDIS_OK)
		return -1;
	redisReply *r;
	if (redisGetReply(c, (void **)&r) != REDIS_OK)
		return -1;
	int ok = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
	freeReplyObject(r);
	if (redisGetReply(c, (void **)&r) != REDIS_OK)
		return -1;
	int got = r->type == REDIS_REPLY_STATUS ? 1 : r->type == REDIS_REPLY_NIL ? 0 : -1;
	freeReplyObject(r);
	return ok ? got : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: redis_lock [-p PAUSE_MS | -P] PORT SECONDS LATENCY_FILE CS_FILE\n"
			"prints: entries N seconds S p50_us P p99_us Q\n"
			"a Redis lock on 127.0.0.1:PORT (SET NX PX, Lua compare-and-delete);\n"
			"each entry adds one to the counter in CS_FILE;\n"
			"-p PAUSE_MS sleeps that long after each entry (a rare requester);\n"
			"-P pipelines the release and the next SET NX in one write;\n"
			"SIGTERM ends the run early and still reports\n");
}

int main(int argc, char **argv)
{
	long pause;
	int pipelined;
	if (bench_options(&argc, &argv, &pause, &pipelined, 4, 4) < 0) {
		usage();
		return 2;
	}
	int port = atoi(argv[1]);
	double secs = atof(argv[2]);
	int cs = open(argv[4], O_RDWR);
	if (cs < 0) {
		fprintf(stderr, "redis_lock: %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	redisContext *c = redisConnect("127.0.0.1", port);
	if (!c || c->err) {
		fprintf(stderr, "redis_lock: 127.0.0.1:%d: %s\n", port, c ? c->errstr : "no memory");
		return 69;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	jitter_state = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull | 1;
	size_t cap = 1 << 20, n = 0;
	uint64_t *lat = malloc(cap * sizeof *lat);
	if (!lat)
		return 1;
	char token[64], held[64] = "";
	int rc = 0;
	uint64_t start = ring_mono_us(), end = start + (uint64_t)(secs * 1e6);
	while (!stopping && ring_mono_us() < end && n < cap) {
		snprintf(token, sizeof token, "%d:%zu", (int)getpid(), n);
		uint64_t t0 = ring_mono_us();
		int got = 0;
		if (held[0]) { /* pipelined: release the last entry with this try */
			got = release_and_try(c, held, token);
			held[0] = 0;
			if (got < 0) {
				fprintf(stderr, "redis_lock: entry %zu: %s\n", n,
					c->err ? c->errstr : "lock lost before release");
				rc = 1;
				break;
			}
		}
		while (got == 0 && (got = try_acquire(c, token)) == 0 && !stopping)
			backoff();
		if (got != 1)
			break; /* stopped while waiting, or an error: reported below */
		lat[n++] = ring_mono_us() - t0;
		if (bench_cs(cs) != 0) {
			fprintf(stderr, "redis_lock: entry %zu: %s\n", n, strerror(errno));
			rc = 1;
			break;
		}
		if (pipelined) {
			memcpy(held, token, sizeof held);
			continue;
		}
		if (release(c, token) != 0) {
			fprintf(stderr, "redis_lock: entry %zu: %s\n", n,
				c->err ? c->errstr : "lock lost before release");
			rc = 1;
			break;
		}
		if (pause > 0 && !stopping)
			bench_pause_ms((unsigned)pause);
	}
	if (held[0] && release(c, held) != 0 && rc == 0) {
		fprintf(stderr, "redis_lock: last entry: %s\n",
			c->err ? c->errstr : "lock lost before release");
		rc = 1;
	}
	if (c->err) {
		fprintf(stderr, "redis_lock: %s\n", c->errstr);
		rc = 1;
	}
	double took = (double)(ring_mono_us() - start) / 1e6;
	if (bench_report("redis_lock", lat, n, took, argv[3]) != 0)
		return 1;
	free(lat);
	redisFree(c);
	close(cs);
	return rc;
}
