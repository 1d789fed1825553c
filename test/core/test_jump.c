/* CUnit suite of jumps (PROTOCOL.md §3.5; ring/core/jump.c, want.c): the
 * token goes to the first member after its holder that waits for it, in
 * ring order; what it knows of its epoch is the set of members that took
 * it; walks still find the members it goes past; summons follow the token;
 * and a floor learned late does not refuse the live token. One scripted
 * history per rule, each a mutant's killer (test/mutants/). */
#include <CUnit/CUnit.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/layout.h"
#include "core/node.h"
#include "core/set.h"
#include "core/wire.h"
#include "common/fingerprint.h"
#include "lib/harness.h"
#include "lib/suites.h"

/* Parked at P with every member knowing where (P heartbeat since). */
static struct hring *parked_and_heard(size_t n, size_t *p)
{
	struct hring *s = hring_parked(n, RING_QUORUM_MAJORITY, p);
	CU_ASSERT_FATAL(run_until_send(s, (int)*p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	hring_run_for(s, 2 * MS);
	return s;
}

/* Two members wait, further round and nearer; the token goes to the nearer
 * first, then the further, straight there: the members in between, which
 * wait for nothing, never see it. Kills jump-last-waiter. */
static void test_the_token_goes_to_the_first_waiter_after_its_holder(void)
{
	size_t p;
	struct hring *s = parked_and_heard(6, &p);
	size_t near = (p + 2) % 6, far = (p + 4) % 6;
	/* P's own client holds, so that both summons are in the token when
	 * it decides. */
	hring_acquire(s, p, 9);
	CU_ASSERT_FATAL(status_of(s, p).granted);
	uint64_t mark = s->seq;
	hring_acquire(s, far, 1);
	hring_acquire(s, near, 2);
	hring_run_for(s, 3 * MS);
	hring_release(s, p, 9);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(near), NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 20 * MS));
	CU_ASSERT_EQUAL((size_t)s->last_node, near);
	hring_release(s, near, 2);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(far), NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 20 * MS));
	CU_ASSERT_EQUAL((size_t)s->last_node, far);
	hring_release(s, far, 1);
	for (size_t k = 1; k < 6; k++) {
		size_t i = (p + k) % 6;
		if (i != near && i != far)
			CU_ASSERT_EQUAL(count_logs(s, i, mark, RING_LOG_TOKEN_RECV), 0);
	}
	/* Then back round the members served, each of which kept its place
	 * in case it asks again (§3.5), one visit for nothing each, and it
	 * parks; the members in between never see it. */
	hring_run_for(s, 10 * MS);
	size_t parked = 0;
	for (size_t i = 0; i < 6; i++)
		parked += status_of(s, i).parked;
	CU_ASSERT_EQUAL(parked, 1);
	assert_safe_and_free(s);
}

/* Ring order, one entry per visit: a holder whose second client waits
 * goes behind the members waiting after it, and a waiter is never passed
 * over twice by the same member. Kills jump-own-bit-lost (the holder's
 * second client would wait for a lap) and jump-visited-bit-kept (the token
 * would come back to a member served already). */
static void test_a_holder_with_another_client_waits_behind_the_others(void)
{
	size_t p;
	struct hring *s = parked_and_heard(4, &p);
	size_t a = (p + 1) % 4, b = (p + 2) % 4;
	hring_acquire(s, a, 1);
	hring_acquire(s, a, 2);
	hring_acquire(s, b, 3);
	hring_run_for(s, 3 * MS); /* a has the token and b's summons */
	CU_ASSERT_FATAL(status_of(s, a).granted);
	hring_release(s, a, 1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1); /* not 2: b first */
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(b), NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, (int)b, RING_ACTION_GRANT, 20 * MS));
	hring_release(s, b, 3);
	/* Back to a, straight: its bit was in the token. */
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(a), NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, (int)a, RING_ACTION_GRANT, 20 * MS));
	CU_ASSERT_EQUAL(s->last.action[last_action(s, RING_ACTION_GRANT)].u.grant.client, 2);
	hring_release(s, a, 2);
	/* Nobody waits now: it stays at a. */
	hring_run_for(s, 5 * MS);
	CU_ASSERT(status_of(s, a).parked);
	assert_safe_and_free(s);
}

/* §4.4 with jumps: a token is granted under only once its knows set, the
 * members that took a hop of its epoch, holds a quorum; its seq says
 * nothing any more (jumps revisit members). A newer epoch whose hop is
 * seq 9 but that only its minter knows is not granted under where it
 * lands; it goes on in ring order, to members that do not know it, until
 * a majority does. Kills confirm-by-seq. */
static void test_an_epoch_is_granted_under_only_once_a_majority_took_it(void)
{
	struct ring_layout l = resting_layout(5);
	size_t h, r, y;
	struct hring *s = hring_settled_order(&l, &h, &r, &y);
	hring_run_for(s, 100 * MS);
	run_until_held(s, h);
	hring_run_for(s, 1 * MS);
	struct ring_status hs = status_of(s, h);
	size_t m = successor_of(s, h); /* m gets the forged pass, from h */
	struct ring_msg_token t = {.epoch = hs.epoch + 0x100, .seq = 9, .counter = 0,
				   .alive = hs.alive};
	ring_set_add(&t.knows, h); /* its minter alone */
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft_token(s, id_of(h), id_of(m), t, buf);
	hring_acquire(s, m, 1);
	uint64_t mark = s->seq;
	hring_datagram(s, m, id_of(h), buf, len);
	/* Two members of five know it: no grant, on to the successor. */
	CU_ASSERT_EQUAL(count_actions(s, m, mark, RING_ACTION_GRANT), 0);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(successor_of(s, m)), NULL) >= 0);
	hring_free(s);
}

/* Freshness (§3.5): a token that jumped here, past a member, grants only
 * within loss_timeout_ms of its last walk; older, it walks first. One from
 * the member's predecessor grants as on a ring without jumps. Kills
 * jump-stays-fresh. */
static void test_a_token_that_jumped_long_after_its_walk_walks_first(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h, r, y;
	struct hring *s = hring_settled_order(&l, &h, &r, &y);
	hring_run_for(s, 100 * MS);
	run_until_held(s, h);
	hring_run_for(s, 1 * MS);
	struct ring_status hs = status_of(s, h);
	CU_ASSERT_FATAL(successor_of(s, h) == r && successor_of(s, r) == y);
	uint64_t loss = s->layout.loss_timeout_ms * MS;
	struct ring_msg_token t = {.epoch = hs.epoch + 0x100, .seq = 1, .alive = hs.alive,
				   .knows = hs.alive};
	t.walk_us = (uint32_t)(loss + 1 * MS); /* past a loss timeout */
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft_token(s, id_of(h), id_of(y), t, buf); /* h to y, past r */
	hring_acquire(s, y, 1);
	uint64_t mark = s->seq;
	hring_datagram(s, y, id_of(h), buf, len);
	CU_ASSERT_EQUAL(count_actions(s, y, mark, RING_ACTION_GRANT), 0);
	struct ring_msg m;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, id_of(successor_of(s, y)), &m) >= 0);
	CU_ASSERT(m.u.token.walk_left > 0); /* a walk */
	hring_free(s);

	/* The same from the predecessor, or fresh: granted at once. */
	s = hring_settled_order(&l, &h, &r, &y);
	hring_run_for(s, 100 * MS);
	run_until_held(s, h);
	hring_run_for(s, 1 * MS);
	hs = status_of(s, h);
	t.epoch = hs.epoch + 0x100;
	t.alive = t.knows = hs.alive;
	t.walk_us = 1000;
	len = craft_token(s, id_of(h), id_of(y), t, buf);
	hring_acquire(s, y, 1);
	mark = s->seq;
	hring_datagram(s, y, id_of(h), buf, len);
	CU_ASSERT_EQUAL(count_actions(s, y, mark, RING_ACTION_GRANT), 1);
	hring_free(s);
}

/* Walks (§3.5): two members take turns with the token, which jumps
 * between them past the rest; a member it goes past dies. The next walk,
 * loss_timeout_ms / 2 after the last, goes round in ring order, skips the
 * dead member and drops it from the alive set, as a moving token would;
 * nobody suspects a loss. Kills walk-never. */
static void test_a_walk_finds_a_member_that_the_jumps_go_past(void)
{
	size_t p;
	struct hring *s = parked_and_heard(5, &p);
	size_t a = (p + 1) % 5, b = (p + 3) % 5, dead = (p + 2) % 5;
	s->up[dead] = false;
	uint64_t mark = s->seq;
	uint64_t until = s->now + 2 * s->layout.loss_timeout_ms * MS;
	uint64_t c = 10;
	bool skipped = false;
	while (s->now < until && !skipped) {
		size_t i = c % 2 ? a : b;
		hring_acquire(s, i, c);
		if (!run_until_action(s, (int)i, RING_ACTION_GRANT, 200 * MS))
			break;
		hring_run_for(s, 5 * MS);
		hring_release(s, i, c);
		c++;
		skipped = count_logs_all(s, mark, RING_LOG_SUCCESSOR_SKIP) > 0;
	}
	CU_ASSERT_FATAL(skipped);
	hring_run_for(s, 50 * MS);
	for (size_t i = 0; i < 5; i++) {
		struct ring_status st = status_of(s, i);
		if (i != dead)
			CU_ASSERT_FALSE(ring_set_has(&st.alive, dead));
	}
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	assert_safe_and_free(s);
}

/* A WANT that reaches a member the token has left goes on after the token,
 * and only towards news: to a hop after the one it names. One naming a
 * hop newer than anything the member knows stays there, remembered, and
 * joins the token if it comes. Kills want-forward-stale (which sent it back
 * to where the member last heard of the token, a loop between two members
 * whose beliefs are old). */
static void test_a_summons_goes_on_only_towards_news(void)
{
	size_t p;
	struct hring *s = parked_and_heard(4, &p);
	size_t x = (p + 2) % 4, w = (p + 1) % 4;
	struct ring_status st = status_of(s, p);
	struct ring_msg hb;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0 ||
			run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0);
	uint32_t seq = hb.u.heartbeat.seq;
	uint8_t buf[RING_WIRE_MAX];
	/* x knows the token at P as of seq: a WANT for an older hop goes on,
	 * naming P's. */
	size_t len = want_datagram(s, w, x, st.token_epoch, seq - 1, buf);
	hring_datagram(s, x, id_of(w), buf, len);
	struct ring_msg fw;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_WANT, id_of(p), &fw) >= 0);
	CU_ASSERT_EQUAL(fw.u.want.wanter, id_of(w));
	CU_ASSERT_EQUAL(fw.u.want.seq, seq);
	CU_ASSERT_EQUAL(fw.u.want.hops, 1);
	/* One for a newer hop than x knows: it stays. */
	len = want_datagram(s, w, x, st.token_epoch, seq + 5, buf);
	hring_datagram(s, x, id_of(w), buf, len);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_WANT, -1, NULL), -1);
	hring_free(s);
}

/* A copy of a wait's first summons, kept where the token was not, lives
 * only as long as a pass can be on its way (an ack timeout, §3.5): every
 * member had a copy, so the holder heard of the wait. Here
 * W's copy, kept at X, was never a wait at all; Y is served and parks, and
 * the token that comes to X later goes nowhere near W. Kills
 * heard-copy-kept (X kept the copy for a loss timeout, as a WANT it could
 * not send on, and sent the token to W after its own grant). */
static void test_a_kept_summons_copy_expires(void)
{
	size_t p;
	struct hring *s = parked_and_heard(5, &p);
	size_t y = (p + 1) % 5, x = (p + 2) % 5, w = (p + 3) % 5;
	struct ring_status st = status_of(s, p);
	struct ring_msg hb;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0 ||
			run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0);
	struct ring_msg m = {.type = RING_MSG_WANT, .from = id_of(w), .to = id_of(x)};
	m.fingerprint = ring_layout_fingerprint(&s->layout);
	m.u.want.epoch = st.token_epoch;
	m.u.want.seq = hb.u.heartbeat.seq;
	m.u.want.wanter = id_of(w);
	m.u.want.hops = 4; /* n - 1: a copy */
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&m, buf, sizeof buf);
	CU_ASSERT_FATAL(len > 0);
	hring_datagram(s, x, id_of(w), buf, (size_t)len);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_WANT, -1, NULL), -1); /* kept at x */
	uint64_t kept = s->now;
	hring_acquire(s, y, 7);
	CU_ASSERT_FATAL(run_until_action(s, (int)y, RING_ACTION_GRANT, 50 * MS));
	hring_release(s, y, 7);
	uint64_t life = s->layout.ack_timeout_ms * MS;
	hring_run_for(s, kept + life + MS - s->now);
	/* X is served; then the token has no reason to visit W. */
	uint64_t mark = s->seq;
	hring_acquire(s, x, 8);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 50 * MS));
	hring_release(s, x, 8);
	hring_run_for(s, 50 * MS);
	CU_ASSERT_EQUAL(count_sends(s, x, mark, RING_MSG_TOKEN, id_of(w)), 0);
	assert_safe_and_free(s);
}

/* Drop hook: loses EPOCH_REPLYs from *arg's first member to its second
 * while its third is true. */
struct hold_reply {
	uint16_t from, to;
	bool on;
};

static bool drop_reply(const struct flight *f, const void *arg)
{
	const struct hold_reply *h = arg;
	return h->on && f->from == h->from && f->to == h->to &&
	       ring_wire_peek_type(f->buf, f->len) == RING_MSG_EPOCH_REPLY;
}

/* §5.3 with jumps: a restarted member learns P's floor late, when the
 * ring's epoch is the one it answers; this life already took a hop of that
 * epoch from another member, so P's token of it is new, and taken, not
 * refused by name (a take-back and a re-epoch per floor learned late, and
 * with retries = 0 a skip). Kills floor-late-refuses. */
static void test_a_floor_learned_late_does_not_refuse_the_live_token(void)
{
	struct ring_layout l = default_layout(3);
	struct hring *s = hring_new(&l);
	hring_boot(s);
	size_t p0 = hring_settle(s);
	size_t m = (p0 + 1) % 3, pp = (p0 + 2) % 3; /* m restarts; pp answers it late */
	struct hold_reply hold = {id_of(pp), id_of(m), true};
	s->drop = drop_reply;
	s->drop_arg = &hold;
	hring_restart(s, m, status_of(s, m).epoch);
	hring_start(s, m);
	/* Proven by p0's answer (a stored epoch needs one of two), rejoined
	 * under a new epoch, which it takes a hop of. */
	hring_acquire(s, m, 1);
	CU_ASSERT_FATAL(run_until_action(s, (int)m, RING_ACTION_GRANT, 3000 * MS));
	hring_release(s, m, 1);
	uint32_t e = status_of(s, m).epoch;
	hring_run_for(s, 20 * MS);
	/* Now pp's answer comes: its floor is e, the live epoch. */
	hold.on = false;
	hring_run_for(s, 300 * MS);
	CU_ASSERT_FATAL(status_of(s, m).epoch == e);
	/* pp takes the token, and passes it to m, which wants it. */
	hring_acquire(s, pp, 2);
	CU_ASSERT_FATAL(run_until_action(s, (int)pp, RING_ACTION_GRANT, 500 * MS));
	CU_ASSERT_FATAL(status_of(s, pp).token_epoch == e);
	hring_acquire(s, m, 3);
	hring_run_for(s, 5 * MS);
	uint64_t mark = s->seq;
	hring_release(s, pp, 2);
	CU_ASSERT_FATAL(run_until_action(s, (int)m, RING_ACTION_GRANT, 100 * MS));
	CU_ASSERT_EQUAL(count_sends(s, m, mark, RING_MSG_JOIN, id_of(pp)), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_MEMBER_REJOIN), 0);
	CU_ASSERT_EQUAL(status_of(s, m).token_epoch, e);
	s->drop = NULL;
	assert_safe_and_free(s);
}

CU_TestInfo ring_test_jump_tests[] = {
	{"the token goes to the first waiter after its holder",
	 test_the_token_goes_to_the_first_waiter_after_its_holder},
	{"a holder with another client waits behind the others",
	 test_a_holder_with_another_client_waits_behind_the_others},
	{"an epoch is granted under only once a majority took it",
	 test_an_epoch_is_granted_under_only_once_a_majority_took_it},
	{"a token that jumped long after its walk walks first",
	 test_a_token_that_jumped_long_after_its_walk_walks_first},
	{"a walk finds a member that the jumps go past",
	 test_a_walk_finds_a_member_that_the_jumps_go_past},
	{"a summons goes on only towards news", test_a_summons_goes_on_only_towards_news},
	{"a kept copy of a first summons expires", test_a_kept_summons_copy_expires},
	{"a floor learned late does not refuse the live token",
	 test_a_floor_learned_late_does_not_refuse_the_live_token},
	CU_TEST_INFO_NULL,
};
