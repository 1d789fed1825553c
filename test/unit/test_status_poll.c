/* CUnit suite for the UDP status poll (ring/ctl/status_poll.c) on loopback:
 * a forked fake member answers each request late for the round before
 * first, then for this round; the poll keeps only this round's answer, a
 * wake fd ends a round early, and a silent member is asked at every try. */
#include <CUnit/CUnit.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/fingerprint.h"
#include "core/err.h"
#include "ctl/status_poll.h"
#include "lib/suites.h"
#include "lib/tmpdir.h"

static struct ring_layout layout;

static int bound_socket(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* Member 1 at FD, in a child: for every request, an answer to the round
 * before (epoch 1), one of another ring (epoch 3), then this round's
 * (epoch 2); each carries the request's nonce in its fence, so the test
 * sees which nonces were asked. Ends after ROUNDS requests or 10 s. */
static void fake_member(int fd, int rounds)
{
	uint64_t fp = ring_layout_fingerprint(&layout), prev = 0;
	bool have_prev = false;
	uint64_t end = ring_mono_us() + 10000000u;
	for (int r = 0; r < rounds && ring_mono_us() < end;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		uint8_t in[RING_WIRE_MAX];
		struct sockaddr_storage from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&from, &flen);
		struct ring_msg req;
		if (n <= 0 || ring_wire_decode(in, (size_t)n, &req) < 0 ||
		    req.type != RING_MSG_STATUS_REQ)
			continue;
		r++;
		uint64_t nonce = req.u.status_req.nonce;
		struct ring_msg m = {.type = RING_MSG_STATUS_RESP, .from = 1, .to = 0, .fingerprint = fp};
		uint8_t out[RING_WIRE_MAX];
		for (int k = 0; k < 3; k++) {
			if (k == 0 && !have_prev)
				continue;
			m.fingerprint = k == 1 ? fp ^ 1 : fp;
			m.u.status_resp.nonce = k == 0 ? prev : nonce;
			m.u.status_resp.fence = nonce;
			m.u.status_resp.epoch = k == 0 ? 1 : k == 1 ? 3 : 2;
			int len = ring_wire_encode(&m, out, sizeof out);
			if (len > 0)
				(void)sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, flen);
		}
		prev = nonce;
		have_prev = true;
	}
}

static size_t drain(int fd)
{
	size_t n = 0;
	uint8_t b[RING_WIRE_MAX];
	while (n < 100 && recv(fd, b, sizeof b, MSG_DONTWAIT) > 0)
		n++;
	return n;
}

/* The layout of two members on loopback, each on a socket bound here (its
 * descriptor in *FD1, *FD2): what a test makes answer or stay silent. */
static void two_members_on_loopback(int *fd1, int *fd2)
{
	uint16_t p1, p2;
	*fd1 = bound_socket(&p1);
	*fd2 = bound_socket(&p2);
	CU_ASSERT_FATAL(*fd1 >= 0 && *fd2 >= 0);
	ring_layout_defaults(&layout);
	snprintf(layout.name, sizeof layout.name, "sp");
	layout.n = 2;
	layout.members[0] = (struct ring_member){.id = 1, .host = "127.0.0.1", .port = p1};
	layout.members[1] = (struct ring_member){.id = 2, .host = "127.0.0.1", .port = p2};
}

/* Member 1 at FD, in a child, for one ADVICE_REQ: a status answer with its
 * nonce (not asked for: not kept), an advice answer with another nonce,
 * then the right one (holds = 42). */
static void fake_advice_member(int fd)
{
	uint64_t fp = ring_layout_fingerprint(&layout);
	uint64_t end = ring_mono_us() + 10000000u;
	while (ring_mono_us() < end) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		uint8_t in[RING_WIRE_MAX], out[RING_WIRE_MAX];
		struct sockaddr_storage from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&from, &flen);
		struct ring_msg req;
		if (n <= 0 || ring_wire_decode(in, (size_t)n, &req) < 0 ||
		    req.type != RING_MSG_ADVICE_REQ)
			continue;
		uint64_t nonce = req.u.advice_req.nonce;
		struct ring_msg m[3] = {
			{.type = RING_MSG_STATUS_RESP, .from = 1, .fingerprint = fp},
			{.type = RING_MSG_ADVICE_RESP, .from = 1, .fingerprint = fp},
			{.type = RING_MSG_ADVICE_RESP, .from = 1, .fingerprint = fp},
		};
		m[0].u.status_resp.nonce = nonce;
		m[1].u.advice_resp = (struct ring_msg_advice_resp){.nonce = nonce + 1, .holds = 7};
		m[2].u.advice_resp = (struct ring_msg_advice_resp){
			.nonce = nonce, .holds = 42, .p50_us = 50000, .p99_us = 51000,
			.p999_us = 52000, .max_us = 53000, .pause_max_us = 499000, .pauses = 1};
		for (int k = 0; k < 3; k++) {
			int len = ring_wire_encode(&m[k], out, sizeof out);
			if (len > 0)
				(void)sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, flen);
		}
		return;
	}
}

/* An advice round asks ADVICE_REQ only, keeps this round's answer and no
 * status, and counts what answered it. */
static void test_an_advice_round_keeps_only_this_rounds_advice(void)
{
	int fd1, fd2; /* fd2: member 2, silent */
	two_members_on_loopback(&fd1, &fd2);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		fake_advice_member(fd1);
		_exit(0);
	}
	close(fd1);
	struct ring_status_poll *p;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, "", err, sizeof err), 0);
	ring_status_poll_ask(p, RING_POLL_ADVICE);
	CU_ASSERT_EQUAL(ring_status_poll_round(p, 1, 1000, -1, NULL), 1);
	CU_ASSERT_EQUAL(ring_status_poll_advised(p), 1);
	CU_ASSERT_EQUAL(ring_status_poll_answered(p), 0);
	CU_ASSERT_PTR_NULL(ring_status_poll_answer(p, 0));
	const struct ring_msg_advice_resp *a = ring_status_poll_advice(p, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->holds, 42);
	CU_ASSERT_EQUAL(a->pause_max_us, 499000);
	CU_ASSERT_PTR_NULL(ring_status_poll_advice(p, 1));
	uint8_t b[RING_WIRE_MAX];
	struct ring_msg req;
	ssize_t n = recv(fd2, b, sizeof b, MSG_DONTWAIT);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(ring_wire_decode(b, (size_t)n, &req), 0);
	CU_ASSERT_EQUAL(req.type, RING_MSG_ADVICE_REQ);
	CU_ASSERT_EQUAL(req.from, 0);
	CU_ASSERT_EQUAL(drain(fd2), 0); /* and no status request */
	int st;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	ring_status_poll_close(p);
	close(fd2);
}

/* Member 1 at FD, in a child: a status answer to its STATUS_REQ, and to
 * its HOLD_REQ a hold answer with another nonce, then the right one (a
 * client in the region under fence 7:12 for 2400 ms). */
static void fake_hold_member(int fd)
{
	uint64_t fp = ring_layout_fingerprint(&layout);
	uint64_t end = ring_mono_us() + 10000000u;
	for (int answered = 0; answered < 2 && ring_mono_us() < end;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		uint8_t in[RING_WIRE_MAX], out[RING_WIRE_MAX];
		struct sockaddr_storage from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&from, &flen);
		struct ring_msg req;
		if (n <= 0 || ring_wire_decode(in, (size_t)n, &req) < 0)
			continue;
		struct ring_msg m[2] = {{.from = 1, .fingerprint = fp}, {.from = 1, .fingerprint = fp}};
		int k = 0;
		if (req.type == RING_MSG_STATUS_REQ) {
			m[k].type = RING_MSG_STATUS_RESP;
			m[k++].u.status_resp = (struct ring_msg_status_resp){
				.nonce = req.u.status_req.nonce, .state = 2, .epoch = 7,
				.flags = RING_STATUS_HAS_TOKEN};
		} else if (req.type == RING_MSG_HOLD_REQ) {
			uint64_t nonce = req.u.hold_req.nonce;
			for (int j = 0; j < 2; j++) {
				m[k].type = RING_MSG_HOLD_RESP;
				m[k++].u.hold_resp = (struct ring_msg_hold_resp){
					.nonce = j ? nonce : nonce + 1, .fence = (uint64_t)7 << 32 | 12,
					.held_ms = j ? 2400 : 99};
			}
		} else {
			continue;
		}
		answered++;
		for (int j = 0; j < k; j++) {
			int len = ring_wire_encode(&m[j], out, sizeof out);
			if (len > 0)
				(void)sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, flen);
		}
	}
}

/* A round that asks status and hold asks both of every member and keeps
 * this round's hold answer beside the status. */
static void test_a_hold_round_keeps_this_rounds_lock_beside_the_status(void)
{
	int fd1, fd2; /* fd2: member 2, silent */
	two_members_on_loopback(&fd1, &fd2);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		fake_hold_member(fd1);
		_exit(0);
	}
	close(fd1);
	struct ring_status_poll *p;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, "", err, sizeof err), 0);
	ring_status_poll_ask(p, RING_POLL_STATUS | RING_POLL_HOLD);
	CU_ASSERT_EQUAL(ring_status_poll_round(p, 1, 1000, -1, NULL), 1);
	CU_ASSERT_PTR_NOT_NULL(ring_status_poll_answer(p, 0));
	const struct ring_msg_hold_resp *h = ring_status_poll_hold(p, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL(h->fence, (uint64_t)7 << 32 | 12);
	CU_ASSERT_EQUAL(h->held_ms, 2400); /* not the other nonce's 99 */
	CU_ASSERT_PTR_NULL(ring_status_poll_hold(p, 1));
	/* The silent member was asked both. */
	bool asked[RING_MSG_HOLD_RESP + 1] = {false};
	uint8_t b[RING_WIRE_MAX];
	ssize_t n;
	struct ring_msg req;
	while ((n = recv(fd2, b, sizeof b, MSG_DONTWAIT)) > 0)
		if (ring_wire_decode(b, (size_t)n, &req) == 0)
			asked[req.type] = true;
	CU_ASSERT_TRUE(asked[RING_MSG_STATUS_REQ]);
	CU_ASSERT_TRUE(asked[RING_MSG_HOLD_REQ]);
	/* A status round alone forgets the lock. */
	ring_status_poll_ask(p, RING_POLL_STATUS);
	(void)ring_status_poll_round(p, 1, 50, -1, NULL);
	CU_ASSERT_PTR_NULL(ring_status_poll_hold(p, 0));
	int st;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	ring_status_poll_close(p);
	close(fd2);
}

static void test_only_this_rounds_answers_count(void)
{
	int fd1, fd2; /* fd2: member 2, silent */
	two_members_on_loopback(&fd1, &fd2);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		fake_member(fd1, 2);
		_exit(0);
	}
	close(fd1);
	struct ring_status_poll *p;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, "", err, sizeof err), 0);
	uint64_t fence[2] = {0, 0};
	for (int round = 0; round < 2; round++) {
		bool woken = true;
		/* One try of 1 s (member 2 never answers, so the round lasts
		 * it all): ample for the child's answers on a loaded machine. */
		CU_ASSERT_EQUAL(ring_status_poll_round(p, 1, 1000, -1, &woken), 1);
		CU_ASSERT_FALSE(woken);
		CU_ASSERT_EQUAL(ring_status_poll_answered(p), 1);
		const struct ring_msg_status_resp *a = ring_status_poll_answer(p, 0);
		CU_ASSERT_PTR_NOT_NULL_FATAL(a);
		/* Not the late answer to the round before (epoch 1), not the
		 * other ring's (3): this round's. */
		CU_ASSERT_EQUAL(a->epoch, 2);
		fence[round] = a->fence;
		CU_ASSERT_PTR_NULL(ring_status_poll_answer(p, 1));
		CU_ASSERT_EQUAL(drain(fd2), 1);
	}
	CU_ASSERT_NOT_EQUAL(fence[0], fence[1]); /* a fresh nonce each round */
	struct ring_status_poll_traffic t;
	ring_status_poll_traffic(p, &t);
	CU_ASSERT_EQUAL(t.sent, 2 * 2);
	CU_ASSERT_EQUAL(t.received, 2 + 3); /* 2 in round one, 3 in round two */
	CU_ASSERT_EQUAL(t.kept, 2);
	CU_ASSERT_EQUAL(t.sent_bytes, 4 * ring_wire_size(RING_MSG_STATUS_REQ));
	CU_ASSERT_EQUAL(t.received_bytes, 5 * ring_wire_size(RING_MSG_STATUS_RESP));
	int st;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	ring_status_poll_close(p);
	close(fd2);
}

static void test_a_wake_fd_ends_a_round_early_and_the_silent_are_asked_again(void)
{
	int fd1, fd2;
	two_members_on_loopback(&fd1, &fd2);
	struct ring_status_poll *p;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, NULL, err, sizeof err), 0);
	int wake[2];
	CU_ASSERT_EQUAL_FATAL(pipe(wake), 0);
	CU_ASSERT_EQUAL(write(wake[1], "x", 1), 1);
	bool woken = false;
	uint64_t t0 = ring_mono_us();
	CU_ASSERT_EQUAL(ring_status_poll_round(p, 3, 2000, wake[0], &woken), 0);
	CU_ASSERT_TRUE(woken);
	CU_ASSERT(ring_mono_us() - t0 < 1000000u); /* not 3 x 2 s */
	/* Nobody answers, nothing wakes it: every try, in full, and the
	 * silent asked again at each (a lost datagram is not a down member). */
	char c;
	CU_ASSERT_EQUAL(read(wake[0], &c, 1), 1);
	t0 = ring_mono_us();
	CU_ASSERT_EQUAL(ring_status_poll_round(p, 2, 100, wake[0], &woken), 0);
	CU_ASSERT_FALSE(woken);
	CU_ASSERT(ring_mono_us() - t0 >= 200000u);
	CU_ASSERT_EQUAL(drain(fd1), 1 + 2);
	ring_status_poll_close(p);
	close(wake[0]);
	close(wake[1]);
	close(fd1);
	close(fd2);
}

/* Three members that answer oddly, in a child, each request once: member
 * 1 refuses it (UNAUTHENTICATED), member 2's address answers as member 3,
 * and member 3 answers from STRAY, an address of no member. */
static void fake_odd_members(const int fd[3], int stray)
{
	uint64_t fp = ring_layout_fingerprint(&layout);
	uint64_t end = ring_mono_us() + 10000000u;
	bool done[3] = {false, false, false};
	while (ring_mono_us() < end && !(done[0] && done[1] && done[2])) {
		struct pollfd pfd[3];
		for (int i = 0; i < 3; i++)
			pfd[i] = (struct pollfd){.fd = fd[i], .events = POLLIN};
		if (poll(pfd, 3, 100) <= 0)
			continue;
		for (int i = 0; i < 3; i++) {
			uint8_t in[RING_WIRE_MAX], out[RING_WIRE_MAX];
			struct sockaddr_storage from;
			socklen_t flen = sizeof from;
			struct ring_msg req;
			ssize_t n = recvfrom(fd[i], in, sizeof in, MSG_DONTWAIT,
					     (struct sockaddr *)&from, &flen);
			if (n <= 0 || ring_wire_decode(in, (size_t)n, &req) < 0)
				continue;
			struct ring_msg m = {.type = RING_MSG_STATUS_RESP, .from = (uint16_t)(i + 1),
					     .fingerprint = fp};
			m.u.status_resp.nonce = req.u.status_req.nonce;
			if (i == 0)
				m.u.status_resp.flags = RING_STATUS_UNAUTHENTICATED;
			if (i == 1)
				m.from = 3;
			int len = ring_wire_encode(&m, out, sizeof out);
			if (len > 0)
				(void)sendto(i == 2 ? stray : fd[i], out, (size_t)len, 0,
					     (struct sockaddr *)&from, flen);
			done[i] = true;
		}
	}
}

/* What ringctl ring shows instead of "down": a member that refuses our
 * request, an address that answers as another member, a member that
 * answers from an address not its own. None is kept as an answer. */
static void test_odd_answers_are_noted_not_kept(void)
{
	uint16_t port[4];
	int fd[3], stray;
	for (int i = 0; i < 3; i++)
		fd[i] = bound_socket(&port[i]);
	stray = bound_socket(&port[3]);
	CU_ASSERT_FATAL(fd[0] >= 0 && fd[1] >= 0 && fd[2] >= 0 && stray >= 0);
	ring_layout_defaults(&layout);
	snprintf(layout.name, sizeof layout.name, "odd");
	layout.n = 3;
	for (int i = 0; i < 3; i++)
		layout.members[i] = (struct ring_member){.id = (uint16_t)(i + 1), .host = "127.0.0.1",
							 .port = port[i]};
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		fake_odd_members(fd, stray);
		_exit(0);
	}
	struct ring_status_poll *p;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, NULL, err, sizeof err), 0);
	CU_ASSERT_EQUAL(ring_status_poll_round(p, 1, 1000, -1, NULL), 0);
	static const enum ring_poll_problem want[3] = {RING_POLL_AUTH_REFUSED, RING_POLL_WRONG_ID,
						       RING_POLL_WRONG_ADDRESS};
	for (size_t i = 0; i < 3; i++) {
		CU_ASSERT_PTR_NULL(ring_status_poll_answer(p, i));
		const struct ring_poll_note *n = ring_status_poll_note(p, i);
		CU_ASSERT_PTR_NOT_NULL_FATAL(n);
		CU_ASSERT_EQUAL(n->problem, want[i]);
	}
	const struct ring_poll_note *n = ring_status_poll_note(p, 1);
	CU_ASSERT_EQUAL(n->as_id, 3);
	n = ring_status_poll_note(p, 2);
	CU_ASSERT_EQUAL(ntohs(((const struct sockaddr_in *)&n->from.sa)->sin_port), port[3]);
	int st;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	ring_status_poll_close(p);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	close(stray);
}

/* Member 1 at FD, in a child, once: it answers its STATUS_REQ itself,
 * while STRAY, an address of no member, answers the HOLD_REQ and the
 * ADVICE_REQ first in member 1's name (as anyone on the host who guessed
 * the nonce could, on a keyless ring); then member 1 answers those too. */
static void fake_stray_holder(int fd, int stray)
{
	uint64_t fp = ring_layout_fingerprint(&layout);
	uint64_t end = ring_mono_us() + 10000000u;
	for (int answered = 0; answered < 3 && ring_mono_us() < end;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		uint8_t in[RING_WIRE_MAX], out[RING_WIRE_MAX];
		struct sockaddr_storage from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&from, &flen);
		struct ring_msg req, m = {.from = 1, .fingerprint = fp};
		if (n <= 0 || ring_wire_decode(in, (size_t)n, &req) < 0)
			continue;
		answered++;
		if (req.type == RING_MSG_STATUS_REQ) {
			m.type = RING_MSG_STATUS_RESP;
			m.u.status_resp = (struct ring_msg_status_resp){.nonce = req.u.status_req.nonce,
									.state = 2, .epoch = 7};
			int len = ring_wire_encode(&m, out, sizeof out);
			if (len > 0)
				(void)sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, flen);
			continue;
		}
		for (int j = 0; j < 2; j++) { /* j = 0: the stray's forgery, 1: the member's */
			if (req.type == RING_MSG_HOLD_REQ) {
				m.type = RING_MSG_HOLD_RESP;
				m.u.hold_resp = (struct ring_msg_hold_resp){
					.nonce = req.u.hold_req.nonce,
					.fence = j ? 0 : (uint64_t)9 << 32 | 99, .held_ms = j ? 0 : 60000};
			} else {
				m.type = RING_MSG_ADVICE_RESP;
				m.u.advice_resp = (struct ring_msg_advice_resp){
					.nonce = req.u.advice_req.nonce, .holds = j ? 5 : 666};
			}
			int len = ring_wire_encode(&m, out, sizeof out);
			if (len > 0)
				(void)sendto(j ? fd : stray, out, (size_t)len, 0,
					     (struct sockaddr *)&from, flen);
		}
	}
}

/* A hold or advice answer is kept only from the member's own address, as
 * a status answer is: one in member 1's name from an address of no
 * member would otherwise make watch show a client of member 1 in the
 * region (fence 9:99, a minute) that is not there. */
static void test_hold_and_advice_answers_from_a_stray_address_are_not_kept(void)
{
	int fd1, fd2, stray;
	uint16_t sport;
	two_members_on_loopback(&fd1, &fd2);
	stray = bound_socket(&sport);
	CU_ASSERT_FATAL(stray >= 0);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		fake_stray_holder(fd1, stray);
		_exit(0);
	}
	struct ring_status_poll *p;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, NULL, err, sizeof err), 0);
	ring_status_poll_ask(p, RING_POLL_STATUS | RING_POLL_HOLD | RING_POLL_ADVICE);
	CU_ASSERT_EQUAL(ring_status_poll_round(p, 1, 500, -1, NULL), 1);
	const struct ring_msg_hold_resp *h = ring_status_poll_hold(p, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_EQUAL(h->fence, 0);
	CU_ASSERT_EQUAL(h->held_ms, 0);
	const struct ring_msg_advice_resp *a = ring_status_poll_advice(p, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->holds, 5);
	int st;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	ring_status_poll_close(p);
	close(fd1);
	close(fd2);
	close(stray);
}

/* The nonce of the round member 1 (FD) was just asked in: its request. */
static uint64_t asked_nonce(int fd)
{
	uint8_t in[RING_WIRE_MAX];
	struct ring_msg req;
	ssize_t n = recv(fd, in, sizeof in, MSG_DONTWAIT);
	if (n <= 0 || ring_wire_decode(in, (size_t)n, &req) < 0)
		return 0;
	return req.u.status_req.nonce;
}

/* A round's nonce is what keeps an answer from anyone else out, on a
 * keyless ring all of it: it must not follow from what another user of
 * the host can see (ringctl's pid, when it started, the ring's
 * fingerprint). Two polls of one process a moment apart once differed in
 * the low bits of the clock alone. */
static void test_two_polls_opened_together_have_unrelated_nonces(void)
{
	int fd1, fd2;
	two_members_on_loopback(&fd1, &fd2);
	uint64_t nonce[2];
	for (int k = 0; k < 2; k++) {
		struct ring_status_poll *p;
		char err[256];
		CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, NULL, err, sizeof err), 0);
		CU_ASSERT_EQUAL(ring_status_poll_round(p, 1, 1, -1, NULL), 0);
		ring_status_poll_close(p);
		nonce[k] = asked_nonce(fd1);
		drain(fd2);
	}
	CU_ASSERT_NOT_EQUAL(nonce[0], 0);
	/* Random nonces agree in their high 32 bits once in 2^32. */
	CU_ASSERT_NOT_EQUAL((nonce[0] ^ nonce[1]) >> 32, 0);
	close(fd1);
	close(fd2);
}

/* Member 1 at FD, in a child, keyed with KEY whose clock is 40 s ahead:
 * it answers one STATUS_REQ (its trailer unchecked), sealed at its time. */
static void fake_fast_member(int fd, const char *key)
{
	struct ring_auth *a;
	char err[256];
	if (ring_auth_load(&a, key, 2, err, sizeof err) < 0)
		return;
	uint64_t fp = ring_layout_fingerprint(&layout);
	uint64_t end = ring_mono_us() + 10000000u;
	while (ring_mono_us() < end) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		uint8_t in[RING_WIRE_MAX + RING_AUTH_TRAILER], out[RING_WIRE_MAX + RING_AUTH_TRAILER];
		struct sockaddr_storage from;
		socklen_t flen = sizeof from;
		ssize_t n = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&from, &flen);
		struct ring_msg req;
		if (n <= RING_AUTH_TRAILER ||
		    ring_wire_decode(in, (size_t)n - RING_AUTH_TRAILER, &req) < 0)
			continue;
		struct ring_msg m = {.type = RING_MSG_STATUS_RESP, .from = 1, .fingerprint = fp};
		m.u.status_resp = (struct ring_msg_status_resp){.nonce = req.u.status_req.nonce,
								.flags = RING_STATUS_UNAUTHENTICATED};
		int len = ring_wire_encode(&m, out, RING_WIRE_MAX);
		if (len > 0)
			len = ring_auth_seal(a, out, (size_t)len, sizeof out,
					     ring_wall_us() + 40 * 1000000ull);
		if (len > 0)
			(void)sendto(fd, out, (size_t)len, 0, (struct sockaddr *)&from, flen);
		break;
	}
	ring_auth_free(a);
}

/* Clocks more than 30 s apart: the member refuses our request, and its
 * refusal is too far from our clock to authenticate here. That is noted
 * as such, not left as "down" (nor said to be another key). */
static void test_a_member_whose_clock_is_far_off_is_noted_so(void)
{
	char dir[] = "/tmp/ring-unit-poll-XXXXXX", key[64], err[256];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(key, sizeof key, "%s/k", dir);
	CU_ASSERT_EQUAL_FATAL(ring_auth_keygen(key, err, sizeof err), 0);
	int fd1, fd2;
	two_members_on_loopback(&fd1, &fd2);
	pid_t child = fork();
	CU_ASSERT_FATAL(child >= 0);
	if (child == 0) {
		fake_fast_member(fd1, key);
		_exit(0);
	}
	struct ring_status_poll *p;
	CU_ASSERT_EQUAL_FATAL(ring_status_poll_open(&p, &layout, key, err, sizeof err), 0);
	CU_ASSERT_EQUAL(ring_status_poll_round(p, 1, 500, -1, NULL), 0);
	const struct ring_poll_note *n = ring_status_poll_note(p, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	CU_ASSERT_EQUAL(n->problem, RING_POLL_CLOCK_APART);
	CU_ASSERT_PTR_NULL(ring_status_poll_note(p, 1));
	int st;
	CU_ASSERT_EQUAL(waitpid(child, &st, 0), child);
	ring_status_poll_close(p);
	close(fd1);
	close(fd2);
	tmpdir_remove(dir);
}

static void test_a_member_address_that_does_not_resolve_is_a_config_error(void)
{
	ring_layout_defaults(&layout);
	layout.n = 2;
	layout.members[0] = (struct ring_member){.id = 1, .host = "127.0.0.1", .port = 1};
	/* An IPv6 literal in a ring whose first member is IPv4: no answer
	 * in the poll's one address family, and no DNS asked. */
	layout.members[1] = (struct ring_member){.id = 2, .host = "::1", .port = 2};
	struct ring_status_poll *p = (void *)&layout;
	char err[256] = "";
	CU_ASSERT_EQUAL(ring_status_poll_open(&p, &layout, NULL, err, sizeof err), -RING_ECONFIG);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "::1"));
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_status_poll_tests[] = {
	T_(test_an_advice_round_keeps_only_this_rounds_advice),
	T_(test_a_hold_round_keeps_this_rounds_lock_beside_the_status),
	T_(test_only_this_rounds_answers_count),
	T_(test_a_wake_fd_ends_a_round_early_and_the_silent_are_asked_again),
	T_(test_a_member_address_that_does_not_resolve_is_a_config_error),
	T_(test_odd_answers_are_noted_not_kept),
	T_(test_hold_and_advice_answers_from_a_stray_address_are_not_kept),
	T_(test_two_polls_opened_together_have_unrelated_nonces),
	T_(test_a_member_whose_clock_is_far_off_is_noted_so),
	CU_TEST_INFO_NULL,
};
#undef T_
