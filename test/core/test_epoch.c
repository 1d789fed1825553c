/* CUnit suite of epochs and fences (PROTOCOL.md §4; ring/core/epoch.c: mint,
 * adopt, reach): the space running out, epochs beyond reach, stale tokens,
 * and one scripted history per rule, each failing when the rule is removed
 * (its mutant in test/mutants/). */
#include <CUnit/CUnit.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/layout.h"
#include "core/node.h"
#include "core/set.h"
#include "core/wire.h"
#include "lib/harness.h"
#include "lib/suites.h"

/* ---- §4.3: stale tokens ---- */

static bool drop_heartbeats_to(const struct flight *f, const void *arg)
{
	const uint16_t *to = arg;
	struct ring_msg m;
	return f->to == *to && ring_wire_decode(f->buf, f->len, &m) == 0 &&
	       m.type == RING_MSG_HEARTBEAT;
}

static void test_stale_token_is_dropped_and_its_sender_drops_its_copy(void)
{
	struct ring_layout l = resting_layout(3);
	size_t old;
	struct hring *s = hring_settled(&l, &old);
	uint32_t old_epoch = status_of(s, old).token_epoch;

	/* The holder stalls; the other two regenerate without it. */
	s->up[old] = false;
	uint64_t mark = s->seq;
	hring_run_for(s, 4000 * MS);
	CU_ASSERT_EQUAL_FATAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 1);
	size_t succ = successor_of(s, old); /* in the stale token's view: all alive */
	uint32_t new_epoch = status_of(s, succ).epoch;
	CU_ASSERT_FATAL(new_epoch > old_epoch);

	/* It wakes up and passes its token on. Heartbeats of the new epoch
	 * are held back so that only the successor's ack can tell it. */
	uint16_t old_id = id_of(old);
	s->drop = drop_heartbeats_to;
	s->drop_arg = &old_id;
	s->up[old] = true;
	struct ring_msg tok;
	CU_ASSERT_FATAL(run_until_send(s, (int)old, RING_MSG_TOKEN, id_of(succ), 100 * MS));
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, id_of(succ), &tok) >= 0);
	CU_ASSERT_EQUAL(tok.u.token.epoch, old_epoch);

	CU_ASSERT_FATAL(run_until_log(s, (int)succ, RING_LOG_TOKEN_STALE_DROP, 100 * MS));
	CU_ASSERT_EQUAL(s->last_event, RING_EVENT_DATAGRAM);
	const struct ring_action *drop = &s->last.action[last_log(s, RING_LOG_TOKEN_STALE_DROP)];
	CU_ASSERT_EQUAL(drop->u.log.field[0], old_epoch);
	CU_ASSERT_EQUAL(drop->u.log.field[1], old_id);
	CU_ASSERT_EQUAL(drop->u.log.field[2], new_epoch);
	struct ring_msg ack;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN_ACK, old_id, &ack) >= 0);
	CU_ASSERT_EQUAL(ack.u.token_ack.flags, RING_ACK_STALE);
	CU_ASSERT_EQUAL(ack.u.token_ack.epoch, old_epoch);
	CU_ASSERT_EQUAL(ack.u.token_ack.known_epoch, new_epoch);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_TOKEN_RECV), -1);
	CU_ASSERT(status_of(s, old).has_token);

	/* The stale ack reaches the old holder, which drops its copy. */
	uint64_t acked = s->seq;
	CU_ASSERT(hring_deliver_all(s) >= 1);
	CU_ASSERT(count_logs(s, old, acked, RING_LOG_TOKEN_STALE_DROP) >= 1);
	CU_ASSERT_EQUAL(count_sends(s, old, acked, RING_MSG_TOKEN, id_of(succ)), 0);
	struct ring_status st = status_of(s, old);
	CU_ASSERT(!st.has_token);
	CU_ASSERT(st.epoch >= new_epoch);
	CU_ASSERT(st.counters.stale_dropped >= 1);
	hring_free(s);
}

/* ---- the holes of issue 10: each scenario broke safety before its fix ---- */

/* Hole 3: an epoch far above ours is refused, whoever claims it; one
 * within reach costs the regeneration it forces and no more. */
static void test_far_epoch_is_refused_and_a_near_one_costs_one_regeneration(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 100; /* the clients below never release */
	size_t h, x, y;
	struct hring *s = hring_settled_order(&l, &h, &x, &y);
	uint32_t e = status_of(s, x).epoch;
	struct ring_msg hb = {.type = RING_MSG_HEARTBEAT};
	hb.u.heartbeat.epoch = 0xfffeff00u; /* the one that wedged three ringd */
	hb.u.heartbeat.seq = 1;
	hb.u.heartbeat.alive = status_of(s, h).alive;
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft(s, &hb, id_of(y), 0, buf);
	for (size_t i = 0; i < 3; i++)
		if (i != y)
			hring_datagram(s, i, id_of(y), buf, len);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT(status_of(s, i).epoch < 0x01000000u);
	CU_ASSERT_EQUAL(status_of(s, x).counters.bad_packets, 1);

	/* Within reach: adopted, the live token becomes stale, the ring
	 * regenerates above it and grants again. */
	hb.u.heartbeat.epoch = e + (100u << 8);
	len = craft(s, &hb, id_of(y), 0, buf);
	uint64_t mark = s->seq;
	for (size_t i = 0; i < 3; i++)
		if (i != y)
			hring_datagram(s, i, id_of(y), buf, len);
	for (size_t c = 0; c < 3; c++)
		hring_acquire(s, c, 50 + c);
	hring_run_for(s, 3 * l.loss_timeout_ms * MS + 2000 * MS);
	CU_ASSERT(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN) <= 1);
	for (size_t c = 0; c < 3; c++) {
		CU_ASSERT_EQUAL(count_actions(s, c, mark, RING_ACTION_GRANT), 1);
		CU_ASSERT(status_of(s, c).epoch > e + (100u << 8));
	}
	assert_safe_and_free(s);
}

/* Hole 3, the top of the space: when no generation is left to mint, the
 * member stops with a FATAL instead of minting an epoch again. */
static void test_exhausted_epochs_are_fatal_not_repeated(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = hring_new(&l);
	for (size_t i = 0; i < 3; i++)
		hring_restart(s, i, 0xfffffe00u | (uint32_t)i);
	hring_boot(s); /* regenerates at the last generation, 0xffffff */
	size_t h = hring_settle(s);
	CU_ASSERT_EQUAL(status_of(s, h).token_epoch >> 8, 0xffffffu);
	size_t x = successor_of(s, h);
	s->up[x] = false; /* h will skip x: a new epoch it cannot make */
	hring_acquire(s, h, 1);
	hring_release(s, h, 1);
	struct want w = {(int)h, RING_ACTION_FATAL, -1, -1};
	CU_ASSERT_FATAL(hring_run(s, s->now + 2000 * MS, want_met, &w));
	CU_ASSERT_EQUAL(s->last.n, 1);
	CU_ASSERT_EQUAL(s->last.action[0].u.fatal.reason, -RING_EEXHAUSTED);
	/* and it stays dead */
	hring_tick(s, h);
	CU_ASSERT_EQUAL(s->last.n, 1);
	CU_ASSERT_EQUAL(s->last.action[0].type, RING_ACTION_FATAL);
	CU_ASSERT_EQUAL(s->last.deadline_us, NEVER);
	assert_safe_and_free(s);
}

/* Hole 3, the counter: at 2^32-1 grants the holder re-epochs, and a new
 * epoch is granted under only once confirmed (§4.4), never at once. */
static void test_counter_exhaustion_reepochs_without_granting_unconfirmed(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	size_t x = successor_of(s, h);
	struct ring_status hs = status_of(s, h);
	hring_acquire(s, x, 9);
	struct ring_msg_token t = {.epoch = hs.epoch + 0x100, .seq = 2, .counter = UINT32_MAX, .alive = hs.alive};
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft_token(s, id_of(h), id_of(x), t, buf);
	hring_datagram(s, x, id_of(h), buf, len);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	struct ring_msg pass;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, -1, &pass) >= 0);
	CU_ASSERT(pass.u.token.epoch > t.epoch);
	CU_ASSERT_EQUAL(pass.u.token.counter, 0);
	hring_free(s);
}

/* ---- §4: the last seq and fence of an epoch ---- */

/* §3.2: when the token's seq would overflow, the holder re-epochs. seq 0
 * is no hop (§2: a token of seq 0 is refused by every receiver as a bad
 * packet), so a pass at the top of the seq space without a new epoch would
 * be refused, retransmitted and skipped: a healthy member cut out of the
 * ring. 2^32 hops are out of reach of a run, so the last hop is crafted:
 * h's pass to x is replaced by one of the same epoch with seq 2^32 - 1. */
static void test_the_last_seq_of_an_epoch_is_passed_under_a_new_epoch(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 100; /* the clients below never release */
	size_t h, x, y;
	struct hring *s = hring_settled_order(&l, &h, &x, &y);
	uint32_t epoch = status_of(s, h).token_epoch;
	losses_on(s);
	lose_count(RING_MSG_TOKEN, id_of(h), id_of(x), 1);
	CU_ASSERT_FATAL(run_until_send(s, (int)h, RING_MSG_TOKEN, id_of(x), 500 * MS));
	struct ring_msg pass;
	uint8_t buf[RING_WIRE_MAX];
	copy_last_token(s, id_of(x), buf, &pass);
	struct ring_msg_token last = pass.u.token;
	last.seq = UINT32_MAX;
	size_t len = craft_token(s, id_of(h), id_of(x), last, buf);
	uint64_t mark = s->seq;
	hring_datagram(s, x, id_of(h), buf, len);
	CU_ASSERT_FATAL(status_of(s, x).token_held);

	/* x passes it on under a new epoch, from seq 1. */
	CU_ASSERT_FATAL(run_until_send(s, (int)x, RING_MSG_TOKEN, id_of(y), 500 * MS));
	struct ring_msg next;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, id_of(y), &next) >= 0);
	CU_ASSERT(next.u.token.epoch > epoch);
	CU_ASSERT_EQUAL(next.u.token.seq, 1);
	losses_off(s);
	for (size_t c = 0; c < 3; c++)
		hring_acquire(s, c, 40 + c);
	hring_run_for(s, 2000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_BAD_PACKET), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_SUCCESSOR_SKIP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	for (size_t c = 0; c < 3; c++)
		CU_ASSERT(count_actions(s, c, mark, RING_ACTION_GRANT) >= 1);
	assert_safe_and_free(s);
}

/* ---- §4: fences and epochs ---- */

/* §4.1: when an epoch's counter would overflow, the holder re-epochs, and
 * grants under the new epoch only once it is confirmed (§4.4). Granting at
 * the top of the counter would wrap it to 0: a fence below every fence the
 * epoch has issued. 2^32 grants are out of reach of a run, so h's pass to
 * x is replaced by one of the same hop whose count is 2^32 - 1. */
static void test_the_last_fence_of_an_epoch_is_followed_by_a_new_epoch(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	size_t x = successor_of(s, h);
	grant_at(s, h, 1); /* a fence of this epoch is granted first */
	uint32_t epoch = status_of(s, h).token_epoch;
	hring_acquire(s, x, 2);
	losses_on(s);
	lose_count(RING_MSG_TOKEN, id_of(h), id_of(x), 1);
	hring_release(s, h, 1);
	struct ring_msg pass;
	uint8_t buf[RING_WIRE_MAX];
	copy_last_token(s, id_of(x), buf, &pass);
	struct ring_msg_token full = pass.u.token;
	full.counter = UINT32_MAX;
	size_t len = craft_token(s, id_of(h), id_of(x), full, buf);
	uint64_t mark = s->seq;
	hring_datagram(s, x, id_of(h), buf, len);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	losses_off(s);
	/* x's client is served on a later visit, under the new epoch. */
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 2000 * MS));
	uint64_t fence = first_grant_fence(s, x, mark);
	CU_ASSERT(fence >> 32 > epoch);
	assert_safe_and_free(s);
}

/* Whether the last step sent an election back to its own initiator: the
 * last hop of a round, which the initiator completes on arrival. */
static bool election_going_home(const struct hring *s, const void *arg)
{
	(void)arg;
	struct ring_msg m;
	int k = last_send(s, RING_MSG_ELECTION, -1, &m);
	return k >= 0 && m.to == m.u.election.initiator;
}

/* §4.2: a minted epoch is above everything the minter knows, its own
 * epoch included, and not only above what its election saw. Here the
 * initiator of an election learns, while its last hop is on the way home,
 * of an epoch the others never told it (a late EPOCH_REPLY to its start
 * query: "answers arriving later are adopted too", §5.3), and it is
 * exactly the epoch the initiator would mint next from what the election
 * saw. Minting from the election alone would make that epoch a second
 * time, the one thing §4.2 promises never happens: two tokens of an epoch. */
static void test_a_regenerated_epoch_is_above_one_learned_during_the_election(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	uint32_t epoch = status_of(s, h).token_epoch;
	s->up[h] = false; /* the holder crashes with the token */
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(hring_run(s, s->now + 3000 * MS, election_going_home, NULL));
	struct ring_msg e;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_ELECTION, -1, &e) >= 0);
	CU_ASSERT_EQUAL_FATAL(e.u.election.max_epoch, epoch);
	size_t i = index_of(s, e.to);
	size_t j = (size_t)s->last_node;
	CU_ASSERT_FATAL(i != h && j != h && i != j);

	/* j's late answer names the epoch i would mint from the election. */
	uint32_t known = ((epoch >> 8) + 1) << 8 | (uint32_t)i;
	struct ring_msg m;
	memset(&m, 0, sizeof m);
	m.type = RING_MSG_EPOCH_REPLY;
	m.u.epoch_reply.nonce = T0 + 1; /* every member's start query: started at T0 */
	m.u.epoch_reply.epoch = known;
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft(s, &m, id_of(j), id_of(i), buf);
	hring_datagram(s, i, id_of(j), buf, len);
	CU_ASSERT_EQUAL_FATAL(status_of(s, i).epoch, known);

	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_TOKEN_REGEN, 100 * MS));
	CU_ASSERT_EQUAL(s->last_node, (int)i);
	const struct ring_action *a = &s->last.action[last_log(s, RING_LOG_TOKEN_REGEN)];
	CU_ASSERT(a->u.log.field[0] > known);
	/* and no member ever stores an epoch below one it stored before */
	for (size_t n = 0; n < 3; n++) {
		uint32_t prev = 0;
		for (size_t k = 0; k < s->n_rec[n]; k++) {
			const struct rec *r = &s->rec[n][k];
			if (r->seq <= mark || r->a.type != RING_ACTION_PERSIST)
				continue;
			CU_ASSERT(r->a.u.persist.epoch > prev);
			prev = r->a.u.persist.epoch;
		}
	}
	assert_safe_and_free(s);
}

/* §4.3 (with §3.2's skip): a member that learns a newer epoch from a
 * heartbeat stores it and drops the older token it holds, revoking its
 * grant. x took h's pass but every ack of it was lost; h skipped x under
 * a new epoch and passed to y, heartbeating the new epoch at once. x's copy
 * and its client must be gone before y grants under the new epoch, or two
 * clients are in the region with only acks lost. */
static void test_a_skipped_members_copy_is_dropped_by_the_new_epochs_heartbeat(void)
{
	size_t h, x, y;
	struct hring *s = hring_losing_acks(&h, &x, &y); /* x's client would hold on for a minute */
	uint32_t epoch = status_of(s, h).token_epoch;
	hring_acquire(s, x, 7);
	hring_acquire(s, y, 8);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 500 * MS));
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 100 * MS));
	CU_ASSERT(status_of(s, y).token_epoch > epoch);
	CU_ASSERT(!status_of(s, x).granted);
	CU_ASSERT(!status_of(s, x).has_token);
	CU_ASSERT_EQUAL(count_actions(s, x, mark, RING_ACTION_REVOKE), 1);
	CU_ASSERT_EQUAL(count_logs(s, x, mark, RING_LOG_TOKEN_STALE_DROP), 1);
	CU_ASSERT_EQUAL(status_of(s, x).epoch, status_of(s, y).token_epoch);
	losses_off(s);
	assert_safe_and_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_epoch_tests[] = {
	T_(test_stale_token_is_dropped_and_its_sender_drops_its_copy),
	T_(test_far_epoch_is_refused_and_a_near_one_costs_one_regeneration),
	T_(test_exhausted_epochs_are_fatal_not_repeated),
	T_(test_counter_exhaustion_reepochs_without_granting_unconfirmed),
	T_(test_the_last_seq_of_an_epoch_is_passed_under_a_new_epoch),
	T_(test_the_last_fence_of_an_epoch_is_followed_by_a_new_epoch),
	T_(test_a_regenerated_epoch_is_above_one_learned_during_the_election),
	T_(test_a_skipped_members_copy_is_dropped_by_the_new_epochs_heartbeat),
	CU_TEST_INFO_NULL,
};
#undef T_
