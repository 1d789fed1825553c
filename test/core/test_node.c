/* CUnit suite for the protocol core (ring/core/node.c): a small simulated ring
 * (virtual clock, FIFO network, real nodes) drives members through bootstrap,
 * grants, loss, restarts, pauses, leaves and hostile input. */
#include <CUnit/CUnit.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/layout.h"
#include "core/node.h"
#include "core/set.h"
#include "lib/suites.h"
#include "core/wire.h"

#include "lib/harness.h"

/* ---- tests ---- */

static void test_node_new_refuses_an_id_outside_the_ring(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	int err = 0;
	CU_ASSERT_PTR_NULL(ring_node_new(&l, 99, 0, &err));
	CU_ASSERT_EQUAL(err, -RING_ENOTMEMBER);
	err = 0;
	CU_ASSERT_PTR_NULL(ring_node_new(&l, 0, 0, &err));
	CU_ASSERT_EQUAL(err, -RING_ENOTMEMBER);
}

static void test_fresh_member_elects_after_listening_two_heartbeats(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	struct sim *s = sim_new(&l);
	uint64_t listen = 2 * l.heartbeat_ms * MS;

	sim_start(s, 0);
	/* First it asks what epoch the others know (§5.3), and takes no
	 * token and calls no election before a majority has answered. */
	CU_ASSERT_EQUAL(s->last.n, 1);
	CU_ASSERT(last_send(s, RING_MSG_EPOCH_QUERY, 0, NULL) == 0);
	CU_ASSERT_EQUAL(s->last.deadline_us, T0 + l.heartbeat_ms * MS);
	sim_deliver_all(s); /* the query; 1 and 2 answer */
	sim_deliver_all(s); /* their answers */
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_EPOCH_LEARNED), 0);
	CU_ASSERT_EQUAL(s->last.deadline_us, T0 + listen);
	CU_ASSERT_EQUAL(status_of(s, 0).state, RING_STATE_IDLE);

	/* A tick before the listening ends does nothing and keeps the deadline. */
	s->now = T0 + listen - 1;
	sim_tick(s, 0);
	CU_ASSERT_EQUAL(s->last.n, 0);
	CU_ASSERT_EQUAL(s->last.deadline_us, T0 + listen);

	CU_ASSERT_FATAL(sim_tick_earliest(s));
	CU_ASSERT_EQUAL(s->now, T0 + listen);
	int start = last_log(s, RING_LOG_ELECTION_START);
	struct ring_msg m;
	int sent = last_send(s, RING_MSG_ELECTION, id_of(1), &m);
	CU_ASSERT_FATAL(start >= 0 && sent >= 0);
	CU_ASSERT(start < sent);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_ELECTION, id_of(2), NULL), -1);
	CU_ASSERT_EQUAL(m.from, id_of(0));
	CU_ASSERT_EQUAL(m.to, id_of(1));
	CU_ASSERT_EQUAL(m.u.election.initiator, id_of(0));
	CU_ASSERT_EQUAL(m.u.election.round, s->last.action[start].u.log.field[0]);
	CU_ASSERT(ring_set_has(&m.u.election.participants, 0));
	CU_ASSERT_EQUAL(ring_set_count(&m.u.election.participants), 1);
	/* The election hop is acked like a token hop: the member retransmits. */
	CU_ASSERT_EQUAL(s->last.deadline_us, s->now + l.ack_timeout_ms * MS);
	CU_ASSERT_EQUAL(status_of(s, 0).state, RING_STATE_ELECTING);
	CU_ASSERT_EQUAL(status_of(s, 0).counters.elections, 1);
	sim_free(s);
}

static void test_three_members_bootstrap_to_exactly_one_token(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	for (size_t i = 0; i < 3; i++)
		sim_start(s, i);
	sim_run_for(s, 2000 * MS);
	size_t holder = sim_settle(s);

	size_t with_token = 0;
	for (size_t i = 0; i < 3; i++)
		with_token += status_of(s, i).has_token;
	CU_ASSERT_EQUAL(with_token, 1);
	CU_ASSERT_EQUAL_FATAL(count_logs_all(s, 0, RING_LOG_TOKEN_REGEN), 1);

	size_t minter = 3;
	uint32_t epoch = 0;
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < s->n_rec[i]; k++) {
			const struct ring_action *a = &s->rec[i][k].a;
			if (a->type == RING_ACTION_LOG && a->u.log.event == RING_LOG_TOKEN_REGEN) {
				minter = i;
				epoch = (uint32_t)a->u.log.field[0];
			}
		}
	CU_ASSERT_FATAL(minter < 3);
	CU_ASSERT_EQUAL(epoch & 0xff, minter);
	CU_ASSERT(epoch >> 8 >= 1);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(status_of(s, i).epoch, epoch);
	CU_ASSERT_EQUAL(status_of(s, holder).token_epoch, epoch);

	/* The epoch is stored before the token that carries it leaves. */
	bool persisted = false, sent = false;
	for (size_t k = 0; k < s->n_rec[minter] && !sent; k++) {
		const struct ring_action *a = &s->rec[minter][k].a;
		struct ring_msg m;
		if (a->type == RING_ACTION_PERSIST && a->u.persist.epoch == epoch)
			persisted = true;
		if (decode_send(a, &m) && m.type == RING_MSG_TOKEN && m.u.token.epoch == epoch) {
			sent = true;
			CU_ASSERT(persisted);
		}
	}
	CU_ASSERT(sent);
	assert_ring_safe(s);
	sim_free(s);
}

static void test_grants_only_while_holding_with_growing_fences_one_per_visit(void)
{
	struct ring_layout l;
	make_layout(&l, 3); /* idle_pass_ms = 0: an unwanted token parks */
	struct sim *s = sim_new(&l);
	sim_boot(s);

	/* Clients at the two members the token is not parked at: neither
	 * holds it, so both summon it and wait their turn in ring order. */
	size_t p = sim_settle(s);
	CU_ASSERT(status_of(s, p).parked);
	size_t x = (p + 1) % 3, y = (p + 2) % 3;
	sim_acquire(s, x, 1);
	sim_acquire(s, y, 2);
	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 1000 * MS));
	size_t a = (size_t)s->last_node;
	const struct ring_action *g = &s->last.action[last_action(s, RING_ACTION_GRANT)];
	uint64_t client_a = a == x ? 1 : 2;
	uint64_t fence_a = g->u.grant.fence;
	CU_ASSERT_FATAL(a == x);
	CU_ASSERT_EQUAL(g->u.grant.client, client_a);
	CU_ASSERT_EQUAL(status_of(s, a).state, RING_STATE_HOLDING);
	CU_ASSERT(status_of(s, a).token_held);
	CU_ASSERT_EQUAL(status_of(s, a).fence, fence_a);

	/* On release the token leaves at once, carrying the grant's counter. */
	sim_release(s, a, client_a);
	struct ring_msg tok;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, -1, &tok) >= 0);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT_EQUAL(fence_a, ring_fence(tok.u.token.epoch, tok.u.token.counter));

	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 1000 * MS));
	size_t b = (size_t)s->last_node;
	g = &s->last.action[last_action(s, RING_ACTION_GRANT)];
	uint64_t fence_b = g->u.grant.fence;
	CU_ASSERT_EQUAL(b, y);
	CU_ASSERT_EQUAL(g->u.grant.client, 2u);
	CU_ASSERT(fence_b > fence_a);
	sim_release(s, b, g->u.grant.client);

	/* Two clients at one member: the second waits for the next visit. */
	sim_acquire(s, 2, 3);
	sim_acquire(s, 2, 4);
	CU_ASSERT_FATAL(run_until_action(s, 2, RING_ACTION_GRANT, 1000 * MS));
	g = &s->last.action[last_action(s, RING_ACTION_GRANT)];
	CU_ASSERT_EQUAL(g->u.grant.client, 3);
	uint64_t fence_3 = g->u.grant.fence;
	CU_ASSERT(fence_3 > fence_b);
	uint64_t granted_3 = s->seq;
	sim_release(s, 2, 3);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, 2, RING_ACTION_GRANT, 1000 * MS));
	g = &s->last.action[last_action(s, RING_ACTION_GRANT)];
	CU_ASSERT_EQUAL(g->u.grant.client, 4);
	CU_ASSERT(g->u.grant.fence > fence_3);
	CU_ASSERT(count_logs(s, 0, granted_3, RING_LOG_TOKEN_RECV) >= 1);
	CU_ASSERT(count_logs(s, 1, granted_3, RING_LOG_TOKEN_RECV) >= 1);
	CU_ASSERT_EQUAL(count_actions(s, 2, granted_3, RING_ACTION_GRANT), 1);
	sim_release(s, 2, 4);

	assert_ring_safe(s);
	sim_free(s);
}

static void test_duplicate_token_is_reacked_not_accepted(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t r = successor_of(s, h);

	CU_ASSERT_FATAL(run_until_send(s, (int)h, RING_MSG_TOKEN, id_of(r), 500 * MS));
	const struct ring_action *a = &s->last.action[last_send(s, RING_MSG_TOKEN, id_of(r), NULL)];
	uint8_t dup[RING_WIRE_MAX];
	size_t dup_len = a->u.send.len;
	memcpy(dup, a->u.send.buf, dup_len);
	struct ring_msg tok;
	CU_ASSERT_FATAL(ring_wire_decode(dup, dup_len, &tok) == 0);
	CU_ASSERT_FATAL(run_until_log(s, (int)r, RING_LOG_TOKEN_RECV, 100 * MS));
	uint64_t accepted = s->seq;

	/* Replayed while the receiver still holds it. */
	struct ring_msg ack;
	sim_datagram(s, r, id_of(h), dup, dup_len);
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN_ACK, id_of(h), &ack) >= 0);
	CU_ASSERT_EQUAL(ack.u.token_ack.epoch, tok.u.token.epoch);
	CU_ASSERT_EQUAL(ack.u.token_ack.seq, tok.u.token.seq);
	CU_ASSERT_EQUAL(ack.u.token_ack.flags, 0);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_TOKEN_RECV), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_PERSIST), -1);
	CU_ASSERT(status_of(s, r).token_held);

	/* Replayed after the token moved on, with a client waiting there. */
	CU_ASSERT_FATAL(run_until_send(s, (int)r, RING_MSG_TOKEN, -1, 500 * MS));
	size_t next = sim_settle(s);
	CU_ASSERT_NOT_EQUAL(next, r);
	uint64_t entries = status_of(s, r).counters.cs_entries;
	sim_acquire(s, r, 9);
	CU_ASSERT_EQUAL(status_of(s, r).state, RING_STATE_WAITING);
	sim_datagram(s, r, id_of(h), dup, dup_len);
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN_ACK, id_of(h), &ack) >= 0);
	CU_ASSERT_EQUAL(ack.u.token_ack.seq, tok.u.token.seq);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_TOKEN_RECV), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN, -1, NULL), -1);
	struct ring_status st = status_of(s, r);
	CU_ASSERT(!st.has_token);
	CU_ASSERT_EQUAL(st.queued, 1);
	CU_ASSERT_EQUAL(st.counters.cs_entries, entries);
	CU_ASSERT_EQUAL(count_logs(s, r, accepted, RING_LOG_TOKEN_RECV), 0);
	assert_ring_safe(s);
	sim_free(s);
}

/* Golden traces (PROTOCOL.md §7: the order of a step's actions is the
 * order the driver carries them out in): an epoch is persisted before
 * anything that carries it leaves, a receipt is acked before the token can
 * move on (a crash between the two must not leave a pass unacked), and the
 * token's pass after its heartbeat. Each step of the
 * token's first round, action by action. */
static void test_golden_traces_of_a_regeneration_a_receipt_a_grant_and_a_pass(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	for (size_t i = 0; i < 3; i++)
		sim_start(s, i);
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_TOKEN_REGEN, 2000 * MS));
	size_t m = (size_t)s->last_node;
	CU_ASSERT_FATAL(m == 2); /* the highest id wins the boot's elections */
	/* The election's last hop acked, the epoch stored before the
	 * heartbeat that tells it; nobody waits, so the token rests. */
	ASSERT_STEP_TRACE(s, "send election_ack>20, election_won, persist, token_regen, "
			     "send heartbeat>*");
	size_t next = successor_of(s, m);
	sim_acquire(s, next, 7);
	ASSERT_STEP_TRACE(s, ""); /* queued: the token is not here */
	CU_ASSERT_FATAL(run_until_log(s, (int)m, RING_LOG_TOKEN_PASS, 500 * MS));
	ASSERT_STEP_TRACE(s, "send token>10, token_pass"); /* the rest is over */
	CU_ASSERT_FATAL(run_until_log(s, (int)next, RING_LOG_TOKEN_RECV, 500 * MS));
	/* Acked before anything else, then granted: a client is waiting. */
	ASSERT_STEP_TRACE(s, "send token_ack>30, token_recv, grant, cs_enter");
	sim_release(s, next, 7);
	/* One grant per visit: the release moves the token on at once. */
	ASSERT_STEP_TRACE(s, "cs_exit, send token>20, token_pass");
	assert_ring_safe(s);
	sim_free(s);
}

/* Whether two encoded tokens are the same but for quiet_us. */
static bool same_token_but_quiet(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && alen > OFF_QUIET + 4 && memcmp(a, b, OFF_QUIET) == 0 &&
	       memcmp(a + OFF_QUIET + 4, b + OFF_QUIET + 4, alen - OFF_QUIET - 4) == 0;
}

static void test_silent_successor_gets_retransmits_then_is_skipped_under_a_new_epoch(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t dead = successor_of(s, h);
	size_t after = successor_of(s, dead);
	CU_ASSERT_FATAL(after != h && after != dead);
	uint32_t old_epoch = status_of(s, h).token_epoch;
	s->up[dead] = false;

	CU_ASSERT_FATAL(run_until_send(s, (int)h, RING_MSG_TOKEN, id_of(dead), 500 * MS));
	const struct ring_action *a = &s->last.action[last_send(s, RING_MSG_TOKEN, id_of(dead), NULL)];
	uint8_t first[RING_WIRE_MAX];
	size_t first_len = a->u.send.len;
	memcpy(first, a->u.send.buf, first_len);
	uint64_t at = s->now;

	for (uint32_t k = 0; k < l.retries; k++) {
		CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_RETRANSMIT, 500 * MS));
		CU_ASSERT_EQUAL(s->now, at + l.ack_timeout_ms * MS);
		at = s->now;
		int rt = last_log(s, RING_LOG_RETRANSMIT);
		CU_ASSERT_EQUAL(s->last.action[rt].u.log.field[0], id_of(dead));
		int again = last_send(s, RING_MSG_TOKEN, id_of(dead), NULL);
		CU_ASSERT_FATAL(again >= 0);
		a = &s->last.action[again];
		CU_ASSERT(same_token_but_quiet(first, first_len, a->u.send.buf, a->u.send.len));
		CU_ASSERT_EQUAL(last_log(s, RING_LOG_SUCCESSOR_SKIP), -1);
	}

	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	/* The new epoch is stored before its heartbeat and the token leave. */
	ASSERT_STEP_TRACE(s, "persist, successor_skip, send heartbeat>*, send token>30, token_pass");
	CU_ASSERT_EQUAL(s->now, at + l.ack_timeout_ms * MS);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_RETRANSMIT), -1);
	int skip = last_log(s, RING_LOG_SUCCESSOR_SKIP);
	CU_ASSERT_EQUAL(s->last.action[skip].u.log.field[0], id_of(dead));
	int p = last_action(s, RING_ACTION_PERSIST);
	struct ring_msg tok;
	int t = last_send(s, RING_MSG_TOKEN, id_of(after), &tok);
	CU_ASSERT_FATAL(p >= 0 && t >= 0);
	CU_ASSERT(p < t);
	uint32_t new_epoch = s->last.action[p].u.persist.epoch;
	CU_ASSERT(new_epoch > old_epoch);
	CU_ASSERT_EQUAL(new_epoch & 0xff, h);
	CU_ASSERT_EQUAL(tok.u.token.epoch, new_epoch);
	CU_ASSERT(!ring_set_has(&tok.u.token.alive, dead));
	CU_ASSERT(ring_set_has(&tok.u.token.alive, h));
	CU_ASSERT(ring_set_has(&tok.u.token.alive, after));
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN, id_of(dead), NULL), -1);
	struct ring_status st = status_of(s, h);
	CU_ASSERT_EQUAL(st.counters.retransmits, l.retries);
	CU_ASSERT_EQUAL(st.counters.skips, 1);

	CU_ASSERT_FATAL(run_until_log(s, (int)after, RING_LOG_TOKEN_RECV, 100 * MS));
	CU_ASSERT_EQUAL(s->last.action[last_log(s, RING_LOG_TOKEN_RECV)].u.log.field[1], new_epoch);
	CU_ASSERT_EQUAL(status_of(s, after).epoch, new_epoch);
	sim_free(s);
}

static bool drop_heartbeats_to(const struct flight *f, const void *arg)
{
	const uint16_t *to = arg;
	struct ring_msg m;
	return f->to == *to && ring_wire_decode(f->buf, f->len, &m) == 0 &&
	       m.type == RING_MSG_HEARTBEAT;
}

static void test_stale_token_is_dropped_and_its_sender_drops_its_copy(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t old = sim_settle(s);
	uint32_t old_epoch = status_of(s, old).token_epoch;

	/* The holder stalls; the other two regenerate without it. */
	s->up[old] = false;
	uint64_t mark = s->seq;
	sim_run_for(s, 4000 * MS);
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
	CU_ASSERT(sim_deliver_all(s) >= 1);
	CU_ASSERT(count_logs(s, old, acked, RING_LOG_TOKEN_STALE_DROP) >= 1);
	CU_ASSERT_EQUAL(count_sends(s, old, acked, RING_MSG_TOKEN, id_of(succ)), 0);
	struct ring_status st = status_of(s, old);
	CU_ASSERT(!st.has_token);
	CU_ASSERT(st.epoch >= new_epoch);
	CU_ASSERT(st.counters.stale_dropped >= 1);
	sim_free(s);
}

static void test_lease_expiry_revokes_and_moves_the_token_on(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 300;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);

	sim_acquire(s, h, 5);
	int gi = last_action(s, RING_ACTION_GRANT);
	CU_ASSERT_FATAL(gi >= 0);
	uint64_t fence = s->last.action[gi].u.grant.fence;
	uint64_t granted_at = s->now;

	CU_ASSERT_FATAL(run_until_action(s, (int)h, RING_ACTION_REVOKE, 1000 * MS));
	CU_ASSERT_EQUAL(s->now, granted_at + l.lease_ms * MS);
	const struct ring_action *r = &s->last.action[last_action(s, RING_ACTION_REVOKE)];
	CU_ASSERT_EQUAL(r->u.revoke.client, 5);
	CU_ASSERT_EQUAL(r->u.revoke.fence, fence);
	int le = last_log(s, RING_LOG_LEASE_EXPIRED);
	CU_ASSERT_FATAL(le >= 0);
	CU_ASSERT_EQUAL(s->last.action[le].u.log.field[0], fence);
	CU_ASSERT_EQUAL(s->last.action[le].u.log.field[1], 5);
	int t = last_send(s, RING_MSG_TOKEN, -1, NULL);
	CU_ASSERT(t > last_action(s, RING_ACTION_REVOKE));
	CU_ASSERT(!status_of(s, h).granted);
	CU_ASSERT_EQUAL(count_actions(s, h, 0, RING_ACTION_GRANT), 1);
	assert_ring_safe(s);
	sim_free(s);
}

static void test_pause_past_half_the_loss_timeout_revokes_before_anything_else(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 60000;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	sim_acquire(s, h, 6);
	int gi = last_action(s, RING_ACTION_GRANT);
	CU_ASSERT_FATAL(gi >= 0);
	uint64_t fence = s->last.action[gi].u.grant.fence;

	uint64_t late = l.loss_timeout_ms * MS / 2 + 100 * MS;
	CU_ASSERT_FATAL(s->deadline[h] != NEVER);
	s->now = s->deadline[h] + late;
	sim_tick(s, h);
	CU_ASSERT_FATAL(s->last.n >= 2);
	CU_ASSERT_EQUAL(s->last.action[0].type, RING_ACTION_LOG);
	CU_ASSERT_EQUAL(s->last.action[0].u.log.event, RING_LOG_PAUSE_DETECTED);
	CU_ASSERT_EQUAL(s->last.action[0].u.log.field[0], late / MS);
	CU_ASSERT_EQUAL(s->last.action[1].type, RING_ACTION_REVOKE);
	CU_ASSERT_EQUAL(s->last.action[1].u.revoke.client, 6);
	CU_ASSERT_EQUAL(s->last.action[1].u.revoke.fence, fence);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	struct ring_status st = status_of(s, h);
	CU_ASSERT(!st.granted);
	CU_ASSERT_EQUAL(st.counters.pauses, 1);
	sim_free(s);
}

static void test_late_tick_within_half_the_loss_timeout_is_no_pause(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 60000;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	sim_acquire(s, h, 6);
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);

	s->now = s->deadline[h] + l.loss_timeout_ms * MS / 2 - 100 * MS;
	sim_tick(s, h);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_PAUSE_DETECTED), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_REVOKE), -1);
	CU_ASSERT(status_of(s, h).granted);
	CU_ASSERT_EQUAL(status_of(s, h).counters.pauses, 0);
	sim_free(s);
}

static void test_restarted_member_refuses_its_stored_epoch_and_joins_under_a_new_one(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t r = successor_of(s, h);
	uint32_t stored = status_of(s, r).epoch;
	CU_ASSERT_EQUAL_FATAL(stored, status_of(s, h).token_epoch);

	sim_restart(s, r, stored);
	uint64_t restarted = s->seq;
	sim_start(s, r);
	CU_ASSERT_FATAL(run_until_send(s, (int)r, RING_MSG_JOIN, id_of(h), 500 * MS));
	struct ring_msg join;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_JOIN, id_of(h), &join) >= 0);
	CU_ASSERT_EQUAL(join.u.join.epoch, stored);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_TOKEN_RECV), -1);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN_ACK, -1, NULL), -1);
	CU_ASSERT(!status_of(s, r).has_token);
	CU_ASSERT_EQUAL(count_logs(s, r, restarted, RING_LOG_TOKEN_RECV), 0);

	/* The holder takes it back and resends it under a new epoch. */
	struct ring_msg tok;
	CU_ASSERT_FATAL(run_until_send(s, (int)h, RING_MSG_TOKEN, id_of(r), 100 * MS));
	int t = last_send(s, RING_MSG_TOKEN, id_of(r), &tok);
	int p = last_action(s, RING_ACTION_PERSIST);
	CU_ASSERT_FATAL(p >= 0);
	CU_ASSERT(p < t);
	uint32_t new_epoch = tok.u.token.epoch;
	CU_ASSERT(new_epoch > stored);
	CU_ASSERT_EQUAL(s->last.action[p].u.persist.epoch, new_epoch);
	CU_ASSERT_EQUAL(new_epoch & 0xff, h);
	CU_ASSERT(ring_set_has(&tok.u.token.alive, r));
	CU_ASSERT_EQUAL(count_logs(s, h, restarted, RING_LOG_MEMBER_REJOIN), 1);

	CU_ASSERT_FATAL(run_until_log(s, (int)r, RING_LOG_TOKEN_RECV, 100 * MS));
	CU_ASSERT_EQUAL(s->last.action[last_log(s, RING_LOG_TOKEN_RECV)].u.log.field[1], new_epoch);
	/* r stored the new epoch before it acked the token: in this step, or
	 * earlier, from the heartbeat the holder sends ahead of it (§3.2). */
	int ra = last_send(s, RING_MSG_TOKEN_ACK, id_of(h), NULL);
	CU_ASSERT_FATAL(ra >= 0);
	bool persisted = false;
	for (size_t k = 0; k < s->n_rec[r]; k++) {
		const struct rec *rc = &s->rec[r][k];
		if (rc->a.type == RING_ACTION_PERSIST && rc->a.u.persist.epoch == new_epoch)
			persisted = true;
		if (rc->a.type == RING_ACTION_SEND && rc->seq == s->seq - (s->last.n - 1 - (size_t)ra))
			break;
	}
	CU_ASSERT(persisted);
	CU_ASSERT_EQUAL(status_of(s, r).epoch, new_epoch);
	CU_ASSERT(status_of(s, r).has_token);
	sim_free(s);
}

/* A datagram that must be counted and otherwise ignored: nothing sent,
 * stored or granted, the token and the epoch as they were. */
static void assert_ignored(struct sim *s, size_t i, const struct ring_status *before)
{
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_SEND), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_PERSIST), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	struct ring_status st = status_of(s, i);
	CU_ASSERT_EQUAL(st.has_token, before->has_token);
	CU_ASSERT_EQUAL(st.epoch, before->epoch);
}

static void assert_bad_packet(struct sim *s, size_t i, uint16_t from_id, const uint8_t *buf,
			      size_t len)
{
	struct ring_status before = status_of(s, i);
	sim_datagram(s, i, from_id, buf, len);
	struct ring_status st = status_of(s, i);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets + 1);
	CU_ASSERT_EQUAL(st.counters.config_mismatches, before.counters.config_mismatches);
	int bp = last_log(s, RING_LOG_BAD_PACKET);
	CU_ASSERT(bp >= 0);
	if (bp >= 0)
		CU_ASSERT_EQUAL(s->last.action[bp].u.log.field[0], from_id);
	assert_ignored(s, i, &before);
}

static size_t encode(const struct ring_msg *m, uint8_t *buf)
{
	int n = ring_wire_encode(m, buf, RING_WIRE_MAX);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static void test_hostile_datagrams_are_counted_never_acted_on(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);  /* the target: it has no token */
	size_t y = successor_of(s, x);  /* a member the datagrams claim to be from */
	CU_ASSERT_FATAL(x != h && y != x);
	uint32_t epoch = status_of(s, x).epoch;

	/* A token that would move x to a far newer epoch, were it believed. */
	struct ring_msg bait;
	memset(&bait, 0, sizeof bait);
	bait.type = RING_MSG_TOKEN;
	bait.from = id_of(y);
	bait.to = id_of(x);
	bait.fingerprint = ring_layout_fingerprint(&l);
	bait.u.token.epoch = epoch + 0x1000;
	bait.u.token.seq = 1;
	for (size_t i = 0; i < l.n; i++)
		ring_set_add(&bait.u.token.alive, i);
	uint8_t buf[RING_WIRE_MAX + 8];
	size_t len;

	uint64_t seed = 0x2545f4914f6cdd1dULL;
	for (int k = 0; k < 200; k++) {
		len = (size_t)(rng_next(&seed) % (sizeof buf + 1));
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)rng_next(&seed);
		assert_bad_packet(s, x, id_of(y), buf, len);
	}

	len = encode(&bait, buf);
	assert_bad_packet(s, x, 0, buf, len);      /* not from a member's address */
	assert_bad_packet(s, x, 99, buf, len);     /* an id outside the ring */
	assert_bad_packet(s, x, id_of(h), buf, len); /* header and address disagree */

	struct ring_msg m = bait;
	m.to = id_of(h); /* addressed to someone else */
	len = encode(&m, buf);
	assert_bad_packet(s, x, id_of(y), buf, len);
	m = bait;
	m.from = id_of(x); /* claims to come from the receiver itself */
	len = encode(&m, buf);
	assert_bad_packet(s, x, id_of(x), buf, len);

	/* Another ring's layout: a mismatch, not a bad packet. */
	m = bait;
	m.fingerprint ^= 1;
	len = encode(&m, buf);
	struct ring_status before = status_of(s, x);
	sim_datagram(s, x, id_of(y), buf, len);
	struct ring_status st = status_of(s, x);
	CU_ASSERT_EQUAL(st.counters.config_mismatches, before.counters.config_mismatches + 1);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets);
	int cm = last_log(s, RING_LOG_CONFIG_MISMATCH);
	CU_ASSERT_FATAL(cm >= 0);
	CU_ASSERT_EQUAL(s->last.action[cm].u.log.field[0], id_of(y));
	assert_ignored(s, x, &before);

	/* Another wire version (a member mid-upgrade): its own counter and
	 * event naming both versions, neither a bad packet nor a mismatch,
	 * and nothing else happens. */
	len = encode(&bait, buf);
	buf[2] = RING_WIRE_VERSION + 1;
	before = status_of(s, x);
	sim_datagram(s, x, id_of(y), buf, len);
	st = status_of(s, x);
	CU_ASSERT_EQUAL(st.counters.version_mismatches, before.counters.version_mismatches + 1);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets);
	CU_ASSERT_EQUAL(st.counters.config_mismatches, before.counters.config_mismatches);
	int vm = last_log(s, RING_LOG_VERSION_MISMATCH);
	CU_ASSERT_FATAL(vm >= 0);
	CU_ASSERT_EQUAL(s->last.action[vm].u.log.field[0], id_of(y));
	CU_ASSERT_EQUAL(s->last.action[vm].u.log.field[1], RING_WIRE_VERSION + 1);
	CU_ASSERT_EQUAL(s->last.action[vm].u.log.field[2], RING_WIRE_VERSION);
	assert_ignored(s, x, &before);

	CU_ASSERT_EQUAL(status_of(s, x).epoch, epoch);
	CU_ASSERT(!status_of(s, x).has_token);
	CU_ASSERT(status_of(s, h).token_held);

	/* The bait itself, sent properly, is taken: the refusals above were
	 * for what was wrong with each copy, not for the token. */
	len = encode(&bait, buf);
	sim_datagram(s, x, id_of(y), buf, len);
	CU_ASSERT(status_of(s, x).has_token);
	CU_ASSERT_EQUAL(status_of(s, x).epoch, epoch + 0x1000);
	sim_free(s);
}

static void run_two_of_five(struct sim *s)
{
	for (size_t i = 2; i < 5; i++)
		s->up[i] = false;
	sim_start(s, 0);
	sim_start(s, 1);
	sim_acquire(s, 0, 1);
	sim_acquire(s, 1, 2);
	sim_run_for(s, 6000 * MS);
}

static void test_majority_ring_without_quorum_never_regenerates_or_grants(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 5);
	struct sim *s = sim_new(&l);
	run_two_of_five(s);
	CU_ASSERT(count_logs_all(s, 0, RING_LOG_NO_QUORUM) >= 1);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_REGEN), 0);
	/* Both say why nothing is granted, the member whose elections fail
	 * and the one that only takes part in them: status is what an
	 * operator asks either of them. */
	CU_ASSERT_EQUAL(status_of(s, 1).state, RING_STATE_NO_QUORUM);
	CU_ASSERT_EQUAL(status_of(s, 0).state, RING_STATE_NO_QUORUM);
	for (size_t i = 0; i < 2; i++) {
		struct ring_status st = status_of(s, i);
		CU_ASSERT(!st.has_token);
		CU_ASSERT_EQUAL(st.counters.regenerations, 0);
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_GRANT), 0);
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_PERSIST), 0);
	}
	sim_free(s);
}

static void test_ring_without_quorum_rule_regenerates_with_two_of_five(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 5);
	l.quorum = RING_QUORUM_NONE;
	struct sim *s = sim_new(&l);
	run_two_of_five(s);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_REGEN), 1);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_NO_QUORUM), 0);
	for (size_t i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_GRANT), 1);
	size_t h = sim_settle(s);
	struct ring_status st = status_of(s, h);
	CU_ASSERT_EQUAL(ring_set_count(&st.alive), 2);
	CU_ASSERT(ring_set_has(&st.alive, 0) && ring_set_has(&st.alive, 1));
	assert_ring_safe(s);
	sim_free(s);
}

static void test_leaving_holder_passes_the_token_and_the_ring_goes_on_without_it(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	uint32_t old_epoch = status_of(s, h).token_epoch;

	sim_leave(s, h);
	struct ring_msg leave, tok;
	int lv = last_send(s, RING_MSG_LEAVE, 0, &leave);
	int t = last_send(s, RING_MSG_TOKEN, -1, &tok);
	int p = last_action(s, RING_ACTION_PERSIST);
	CU_ASSERT_FATAL(lv >= 0 && t >= 0 && p >= 0);
	CU_ASSERT(p < t);
	uint16_t to = s->last.action[t].u.send.to;
	CU_ASSERT(to != 0 && to != id_of(h));
	CU_ASSERT(tok.u.token.epoch > old_epoch);
	CU_ASSERT_EQUAL(s->last.action[p].u.persist.epoch, tok.u.token.epoch);
	CU_ASSERT(!ring_set_has(&tok.u.token.alive, h));
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_LEFT), -1);

	CU_ASSERT_FATAL(run_until_action(s, (int)h, RING_ACTION_LEFT, 100 * MS));
	CU_ASSERT_EQUAL(s->last_event, RING_EVENT_DATAGRAM);
	CU_ASSERT(!status_of(s, h).has_token);
	CU_ASSERT_EQUAL(count_actions(s, h, 0, RING_ACTION_LEFT), 1);

	uint64_t mark = s->seq, left_at = s->now;
	sim_run_for(s, 3000 * MS);
	/* The token never stopped long enough for anyone to suspect it. */
	CU_ASSERT(longest_gap(s, mark, RING_LOG_TOKEN_RECV, h, left_at) <
		  l.loss_timeout_ms * MS / 2);
	for (size_t i = 0; i < 3; i++) {
		if (i == h)
			continue;
		CU_ASSERT(count_logs(s, i, mark, RING_LOG_TOKEN_RECV) >= 10);
		CU_ASSERT_EQUAL(count_sends(s, i, mark, RING_MSG_TOKEN, id_of(h)), 0);
		CU_ASSERT_EQUAL(count_logs(s, i, mark, RING_LOG_RETRANSMIT), 0);
		CU_ASSERT_EQUAL(count_logs(s, i, mark, RING_LOG_SUCCESSOR_SKIP), 0);
		CU_ASSERT_EQUAL(count_logs(s, i, mark, RING_LOG_LOSS_SUSPECT), 0);
		CU_ASSERT_EQUAL(count_logs(s, i, mark, RING_LOG_ELECTION_START), 0);
		struct ring_status st = status_of(s, i);
		CU_ASSERT(!ring_set_has(&st.alive, h));
	}
	CU_ASSERT_EQUAL(count_actions(s, h, mark, RING_ACTION_SEND), 0);
	CU_ASSERT_EQUAL(count_actions(s, h, 0, RING_ACTION_LEFT), 1);
	assert_ring_safe(s);
	sim_free(s);
}

static void test_acquire_twice_is_busy_and_release_cancels_a_waiting_client(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t w = successor_of(s, h);

	sim_acquire(s, w, 7);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_DENY), -1);
	CU_ASSERT_EQUAL(status_of(s, w).state, RING_STATE_WAITING);
	sim_acquire(s, w, 7);
	int d = last_action(s, RING_ACTION_DENY);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.client, 7);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.reason, -RING_EBUSY);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 1);

	sim_release(s, w, 7);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 0);
	CU_ASSERT_EQUAL(status_of(s, w).state, RING_STATE_IDLE);
	sim_run_for(s, 1000 * MS);
	CU_ASSERT(count_logs(s, w, 0, RING_LOG_TOKEN_RECV) >= 2);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_GRANT), 0);

	/* A client in the region is busy too. */
	size_t g = sim_settle(s);
	sim_acquire(s, g, 8);
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);
	sim_acquire(s, g, 8);
	d = last_action(s, RING_ACTION_DENY);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.reason, -RING_EBUSY);
	CU_ASSERT(status_of(s, g).granted);
	sim_free(s);
}

static void test_state_and_log_names_are_those_of_the_spec(void)
{
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_IDLE), "idle");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_WAITING), "waiting");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_HOLDING), "holding");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_ELECTING), "electing");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_NO_QUORUM), "no-quorum");
	CU_ASSERT_STRING_EQUAL(ring_state_name((enum ring_state)99), "unknown");

	static const struct {
		enum ring_log_event ev;
		const char *name;
		const char *field; /* the one SPEC.md names, or NULL */
	} spec[] = {
		{RING_LOG_TOKEN_RECV, "token_recv", NULL},
		{RING_LOG_TOKEN_PASS, "token_pass", NULL},
		{RING_LOG_CS_ENTER, "cs_enter", "fence"},
		{RING_LOG_CS_EXIT, "cs_exit", "fence"},
		{RING_LOG_LEASE_EXPIRED, "lease_expired", "fence"},
		{RING_LOG_RETRANSMIT, "retransmit", "to"},
		{RING_LOG_SUCCESSOR_SKIP, "successor_skip", "dead"},
		{RING_LOG_MEMBER_REJOIN, "member_rejoin", "id"},
		{RING_LOG_LOSS_SUSPECT, "loss_suspect", NULL},
		{RING_LOG_ELECTION_START, "election_start", "round"},
		{RING_LOG_ELECTION_WON, "election_won", "epoch"},
		{RING_LOG_TOKEN_REGEN, "token_regen", "epoch"},
		{RING_LOG_TOKEN_STALE_DROP, "token_stale_drop", "epoch"},
		{RING_LOG_NO_QUORUM, "no_quorum", NULL},
		{RING_LOG_BAD_PACKET, "bad_packet", "from"},
		{RING_LOG_CONFIG_MISMATCH, "config_mismatch", "from"},
		{RING_LOG_VERSION_MISMATCH, "version_mismatch", "from"},
		{RING_LOG_PAUSE_DETECTED, "pause_detected", "ms"},
		{RING_LOG_MEMBER_LEAVE, "member_leave", "id"},
	};
	for (size_t k = 0; k < sizeof spec / sizeof spec[0]; k++) {
		const struct ring_log_info *info = ring_log_info(spec[k].ev);
		CU_ASSERT_PTR_NOT_NULL_FATAL(info);
		CU_ASSERT_STRING_EQUAL(info->name, spec[k].name);
		if (spec[k].field)
			CU_ASSERT_STRING_EQUAL(info->field[0], spec[k].field);
		/* Token hops are logged only with -v; everything else always. */
		bool hop = spec[k].ev == RING_LOG_TOKEN_RECV || spec[k].ev == RING_LOG_TOKEN_PASS;
		CU_ASSERT_EQUAL(info->verbose, hop);
	}
	CU_ASSERT_STRING_EQUAL(ring_log_info(RING_LOG_CS_ENTER)->field[1], "epoch");
	CU_ASSERT_STRING_EQUAL(ring_log_info(RING_LOG_BAD_PACKET)->field[1], "reason");
	CU_ASSERT_STRING_EQUAL(ring_log_info(RING_LOG_COUNT_)->name, "unknown");
	CU_ASSERT_STRING_EQUAL(ring_log_info((enum ring_log_event)1000)->name, "unknown");

	/* Every event has a name, and no two share one. */
	for (int a = 0; a < RING_LOG_COUNT_; a++) {
		const char *na = ring_log_info((enum ring_log_event)a)->name;
		CU_ASSERT_PTR_NOT_NULL_FATAL(na);
		CU_ASSERT_STRING_NOT_EQUAL(na, "unknown");
		for (int b = a + 1; b < RING_LOG_COUNT_; b++)
			CU_ASSERT_STRING_NOT_EQUAL(na, ring_log_info((enum ring_log_event)b)->name);
	}
}

/* ---- the holes of issue 10: each scenario broke safety before its fix ---- */

/* Drops the TOKEN_ACKs from member id FROM (the drop filter's argument). */
static bool drop_acks_from(const struct flight *f, const void *arg)
{
	struct ring_msg m;
	return f->from == *(const uint16_t *)arg && ring_wire_decode(f->buf, f->len, &m) == 0 &&
	       m.type == RING_MSG_TOKEN_ACK;
}

/* Hole 1: member L accepts the token from P and is told to leave before
 * its ack reaches P. P must take L's LEAVE as the ack it is (L accepted
 * the pass and hands the token on itself), not skip L and mint a second
 * token beside the one L passes on. */
static void test_leave_racing_its_ack_makes_no_second_token(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 4);
	l.lease_ms = 100; /* the clients below never release */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t p = sim_settle(s);
	size_t lv = successor_of(s, p);
	uint16_t lv_id = id_of(lv);
	s->drop = drop_acks_from;
	s->drop_arg = &lv_id;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, (int)lv, RING_LOG_TOKEN_RECV, 200 * MS));
	CU_ASSERT_FATAL(status_of(s, p).has_token); /* still passing: no ack came */
	sim_leave(s, lv);
	struct ring_msg leave;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_LEAVE, 0, &leave) >= 0);
	CU_ASSERT_EQUAL(leave.u.leave.accepted.epoch, status_of(s, p).token_epoch);
	sim_deliver_all(s); /* the ack is lost, the LEAVE and L's pass arrive */
	CU_ASSERT_EQUAL(count_logs(s, p, mark, RING_LOG_MEMBER_LEAVE), 1);
	s->drop = NULL;
	for (size_t c = 0; c < 4; c++)
		if (c != lv)
			sim_acquire(s, c, 100 + c);
	sim_run_for(s, 2000 * MS);
	/* P never skipped L, and the one new epoch is the one L minted. */
	CU_ASSERT_EQUAL(count_logs(s, p, mark, RING_LOG_SUCCESSOR_SKIP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	for (size_t c = 0; c < 4; c++)
		if (c != lv) {
			CU_ASSERT_EQUAL(count_actions(s, c, mark, RING_ACTION_GRANT), 1);
		}
	assert_ring_safe(s);
	sim_free(s);
}

/* Hole 1 again, found by the mixed soak (seed 1183293): the leaver had
 * re-epoched the token it took (a JOIN was pending) before it left, and
 * its LEAVE named the new epoch's hop 0, that is none, instead of the hop
 * it accepted; with retries = 0 the predecessor's "resend now" was a skip,
 * and the skip a second token. The LEAVE names the last hop accepted, and
 * resending spends no retry. */
static void test_leave_after_a_reepoch_still_names_the_hop_it_took(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 4);
	l.retries = 0;
	l.lease_ms = 100;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t p = sim_settle(s);
	size_t lv = successor_of(s, p);
	size_t x = successor_of(s, lv);
	/* A JOIN from x waits at lv: lv will re-epoch the token it takes. */
	struct ring_msg j;
	memset(&j, 0, sizeof j);
	j.type = RING_MSG_JOIN;
	j.from = id_of(x);
	j.to = id_of(lv);
	j.fingerprint = ring_layout_fingerprint(&l);
	j.u.join.epoch = status_of(s, x).epoch;
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&j, buf, sizeof buf);
	sim_datagram(s, lv, id_of(x), buf, (size_t)len);
	uint16_t lv_id = id_of(lv);
	s->drop = drop_acks_from;
	s->drop_arg = &lv_id;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, (int)lv, RING_LOG_TOKEN_RECV, 200 * MS));
	CU_ASSERT_EQUAL_FATAL(count_logs(s, lv, mark, RING_LOG_MEMBER_REJOIN), 1);
	sim_leave(s, lv);
	sim_deliver_all(s);
	s->drop = NULL;
	for (size_t c = 0; c < 4; c++)
		if (c != lv)
			sim_acquire(s, c, 200 + c);
	sim_run_for(s, 2000 * MS);
	CU_ASSERT_EQUAL(count_logs(s, p, mark, RING_LOG_SUCCESSOR_SKIP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	for (size_t c = 0; c < 4; c++)
		if (c != lv)
			CU_ASSERT_EQUAL(count_actions(s, c, mark, RING_ACTION_GRANT), 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* Hole 1, the other side: a pass that reaches a leaving member is refused
 * by name, and only that makes its sender skip at once. */
static void test_leaving_member_refuses_a_new_pass_by_name(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	size_t y = successor_of(s, x);
	struct ring_status hs = status_of(s, h);
	/* x is leaving while it still passes a token (its pass to y unacked);
	 * then a pass of a newer hop reaches it from h. */
	uint16_t y_id = id_of(y);
	s->drop = drop_acks_from;
	s->drop_arg = &y_id;
	CU_ASSERT_FATAL(run_until_log(s, (int)y, RING_LOG_TOKEN_RECV, 200 * MS));
	sim_leave(s, x);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_LEFT), -1);
	struct ring_msg t;
	memset(&t, 0, sizeof t);
	t.type = RING_MSG_TOKEN;
	t.from = id_of(h);
	t.to = id_of(x);
	t.fingerprint = ring_layout_fingerprint(&l);
	t.u.token = (struct ring_msg_token){hs.epoch + 0x100, 1, 0, 0, 0, hs.alive};
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&t, buf, sizeof buf);
	CU_ASSERT_FATAL(len > 0);
	sim_datagram(s, x, id_of(h), buf, (size_t)len);
	struct ring_msg r;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_LEAVE, id_of(h), &r) >= 0);
	CU_ASSERT_EQUAL(r.u.leave.refused.epoch, t.u.token.epoch);
	CU_ASSERT_EQUAL(r.u.leave.refused.seq, 1);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_TOKEN_RECV), -1);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN_ACK, -1, NULL), -1);
	sim_free(s);
}

/* Hole 2: a JOIN that does not refuse the pass in flight (a duplicate, an
 * old one) must not make the sender take the token back and pass it again:
 * the successor may hold it already, and the second pass would be a copy
 * under the same epoch, over-counting the members that know it (§4.4). */
static void test_stale_join_does_not_take_a_pass_back(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t r = successor_of(s, h);
	uint32_t old_epoch = status_of(s, r).epoch - 1; /* what it knew before */
	uint16_t r_id = id_of(r);
	s->drop = drop_acks_from;
	s->drop_arg = &r_id;
	sim_acquire(s, r, 7);
	CU_ASSERT_FATAL(run_until_action(s, (int)r, RING_ACTION_GRANT, 200 * MS));
	s->drop = NULL;
	CU_ASSERT_FATAL(status_of(s, h).has_token);
	struct ring_msg j;
	memset(&j, 0, sizeof j);
	j.type = RING_MSG_JOIN;
	j.from = id_of(r);
	j.to = id_of(h);
	j.fingerprint = ring_layout_fingerprint(&l);
	j.u.join.epoch = old_epoch;
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&j, buf, sizeof buf);
	CU_ASSERT_FATAL(len > 0);
	uint64_t mark = s->seq;
	sim_datagram(s, h, id_of(r), buf, (size_t)len);
	sim_datagram(s, h, id_of(r), buf, (size_t)len); /* and its duplicate */
	CU_ASSERT_EQUAL(count_sends(s, h, mark, RING_MSG_TOKEN, id_of(r)), 0);
	CU_ASSERT(status_of(s, r).granted); /* nobody revoked the client */
	sim_run_for(s, 1000 * MS);
	CU_ASSERT_EQUAL(count_logs(s, r, mark, RING_LOG_LEASE_EXPIRED), 0);
	assert_ring_safe(s);
	sim_free(s);
}

/* Hole 3: an epoch far above ours is refused, whoever claims it; one
 * within reach costs the regeneration it forces and no more. */
static void test_far_epoch_is_refused_and_a_near_one_costs_one_regeneration(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 100; /* the clients below never release */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	size_t y = successor_of(s, x);
	uint32_t e = status_of(s, x).epoch;
	struct ring_msg hb;
	memset(&hb, 0, sizeof hb);
	hb.type = RING_MSG_HEARTBEAT;
	hb.from = id_of(y);
	hb.fingerprint = ring_layout_fingerprint(&l);
	hb.u.heartbeat.epoch = 0xfffeff00u; /* the one that wedged three ringd */
	hb.u.heartbeat.seq = 1;
	hb.u.heartbeat.alive = status_of(s, h).alive;
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&hb, buf, sizeof buf);
	for (size_t i = 0; i < 3; i++)
		if (i != y)
			sim_datagram(s, i, id_of(y), buf, (size_t)len);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT(status_of(s, i).epoch < 0x01000000u);
	CU_ASSERT_EQUAL(status_of(s, x).counters.bad_packets, 1);

	/* Within reach: adopted, the live token becomes stale, the ring
	 * regenerates above it and grants again. */
	hb.u.heartbeat.epoch = e + (100u << 8);
	len = ring_wire_encode(&hb, buf, sizeof buf);
	uint64_t mark = s->seq;
	for (size_t i = 0; i < 3; i++)
		if (i != y)
			sim_datagram(s, i, id_of(y), buf, (size_t)len);
	for (size_t c = 0; c < 3; c++)
		sim_acquire(s, c, 50 + c);
	sim_run_for(s, 3 * l.loss_timeout_ms * MS + 2000 * MS);
	CU_ASSERT(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN) <= 1);
	for (size_t c = 0; c < 3; c++) {
		CU_ASSERT_EQUAL(count_actions(s, c, mark, RING_ACTION_GRANT), 1);
		CU_ASSERT(status_of(s, c).epoch > e + (100u << 8));
	}
	assert_ring_safe(s);
	sim_free(s);
}

/* Hole 3, the top of the space: when no generation is left to mint, the
 * member stops with a FATAL instead of minting an epoch again. */
static void test_exhausted_epochs_are_fatal_not_repeated(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	for (size_t i = 0; i < 3; i++)
		sim_restart(s, i, 0xfffffe00u | (uint32_t)i);
	sim_boot(s); /* regenerates at the last generation, 0xffffff */
	size_t h = sim_settle(s);
	CU_ASSERT_EQUAL(status_of(s, h).token_epoch >> 8, 0xffffffu);
	size_t x = successor_of(s, h);
	s->up[x] = false; /* h will skip x: a new epoch it cannot make */
	sim_acquire(s, h, 1);
	sim_release(s, h, 1);
	struct want w = {(int)h, RING_ACTION_FATAL, -1, -1};
	CU_ASSERT_FATAL(sim_run(s, s->now + 2000 * MS, want_met, &w));
	CU_ASSERT_EQUAL(s->last.n, 1);
	CU_ASSERT_EQUAL(s->last.action[0].u.fatal.reason, -RING_EEXHAUSTED);
	/* and it stays dead */
	sim_tick(s, h);
	CU_ASSERT_EQUAL(s->last.n, 1);
	CU_ASSERT_EQUAL(s->last.action[0].type, RING_ACTION_FATAL);
	CU_ASSERT_EQUAL(s->last.deadline_us, NEVER);
	assert_ring_safe(s);
	sim_free(s);
}

/* Hole 3, the counter: at 2^32-1 grants the holder re-epochs, and a new
 * epoch is granted under only once confirmed (§4.4), never at once. */
static void test_counter_exhaustion_reepochs_without_granting_unconfirmed(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	struct ring_status hs = status_of(s, h);
	sim_acquire(s, x, 9);
	struct ring_msg t;
	memset(&t, 0, sizeof t);
	t.type = RING_MSG_TOKEN;
	t.from = id_of(h);
	t.to = id_of(x);
	t.fingerprint = ring_layout_fingerprint(&l);
	t.u.token = (struct ring_msg_token){hs.epoch + 0x100, 2, UINT32_MAX, 0, 0, hs.alive};
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&t, buf, sizeof buf);
	sim_datagram(s, x, id_of(h), buf, (size_t)len);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	struct ring_msg pass;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, -1, &pass) >= 0);
	CU_ASSERT(pass.u.token.epoch > t.u.token.epoch);
	CU_ASSERT_EQUAL(pass.u.token.counter, 0);
	sim_free(s);
}

/* Hole 4: a member whose state_dir was wiped comes back at epoch 0. A
 * late copy of a hop it accepted before must not be granted under again:
 * it learns from a majority what epochs exist before it takes any token,
 * and refuses those like a restart's own. */
static void test_wiped_member_never_grants_an_old_fence_again(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t r = successor_of(s, h);
	uint16_t r_id = id_of(r);
	memset(&captured, 0, sizeof captured);
	s->drop = capture_token_to;
	s->drop_arg = &r_id;
	sim_acquire(s, r, 3);
	CU_ASSERT_FATAL(run_until_action(s, (int)r, RING_ACTION_GRANT, 200 * MS));
	uint64_t fence = s->last.action[last_action(s, RING_ACTION_GRANT)].u.grant.fence;
	s->drop = NULL;
	CU_ASSERT_FATAL(captured.len > 0);
	sim_release(s, r, 3);
	sim_run_for(s, 200 * MS);

	/* r loses its disk and restarts; its client asks again. */
	sim_restart(s, r, 0);
	uint64_t mark = s->seq;
	sim_start(s, r);
	sim_acquire(s, r, 4);
	/* The old hop arrives before anyone answered r, and again after. */
	sim_datagram(s, r, captured.from, captured.buf, captured.len);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT_FATAL(run_until_log(s, (int)r, RING_LOG_EPOCH_LEARNED, 100 * MS));
	CU_ASSERT(status_of(s, r).epoch >= (uint32_t)(fence >> 32));
	sim_datagram(s, r, captured.from, captured.buf, captured.len);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(last_send(s, RING_MSG_JOIN, captured.from, NULL) >= 0);
	/* And it is readmitted under a new epoch and served. */
	sim_run_for(s, 2000 * MS);
	CU_ASSERT_EQUAL(count_actions(s, r, mark, RING_ACTION_GRANT), 1);
	for (size_t k = 0; k < s->n_rec[r]; k++) {
		const struct rec *rc = &s->rec[r][k];
		if (rc->seq > mark && rc->a.type == RING_ACTION_GRANT)
			CU_ASSERT(rc->a.u.grant.fence > fence);
	}
	assert_ring_safe(s);
	sim_free(s);
}

/* A step that needs more room than the driver gave ends in one FATAL, and
 * so does every later one: no PERSIST is ever silently lost (§7). */
static void test_update_overflow_is_fatal_and_final(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	int err;
	struct ring_node *n = ring_node_new(&l, id_of(0), 0, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	struct ring_update *up = calloc(1, sizeof *up);
	CU_ASSERT_PTR_NOT_NULL_FATAL(up);
	struct ring_event ev = event(RING_EVENT_START);
	ev.now_us = T0;
	up->cap = 1;
	ring_node_step(n, &ev, up); /* one SEND: fits */
	CU_ASSERT_EQUAL(up->n, 1);
	CU_ASSERT_EQUAL(up->action[0].type, RING_ACTION_SEND);
	ev = event(RING_EVENT_ACQUIRE);
	ev.now_us = T0 + 1;
	ev.u.client.client = 5;
	ring_node_step(n, &ev, up); /* queued: nothing to do */
	ev = event(RING_EVENT_LEAVE);
	ev.now_us = T0 + 2;
	ring_node_step(n, &ev, up); /* LEAVE, leave_done, LEFT: too many */
	CU_ASSERT_EQUAL(up->n, 1);
	CU_ASSERT_EQUAL(up->action[0].type, RING_ACTION_FATAL);
	CU_ASSERT_EQUAL(up->action[0].u.fatal.reason, -RING_EOVERFLOW);
	up->cap = 0;
	ev = event(RING_EVENT_TICK);
	ev.now_us = T0 + 3;
	ring_node_step(n, &ev, up);
	CU_ASSERT_EQUAL(up->n, 1);
	CU_ASSERT_EQUAL(up->action[0].type, RING_ACTION_FATAL);
	CU_ASSERT_EQUAL(up->deadline_us, NEVER);
	free(up);
	ring_node_free(n);
}

/* Found by the mixed class's soak (seed 1001514): a member resting the
 * token (idle_pass_ms) that is left alone by a leave kept the rest's
 * deadline, already past, and was woken at the same instant for ever. */
static void test_member_left_alone_while_resting_does_not_spin(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 2);
	l.quorum = RING_QUORUM_NONE;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s); /* resting: idle_pass_ms 50 */
	size_t o = 1 - h;
	sim_leave(s, o);
	sim_run_for(s, 1000 * MS); /* fails the step bound if it spins */
	CU_ASSERT(status_of(s, h).token_held);
	CU_ASSERT(s->deadline[h] > s->now - 1000 * MS);
	sim_acquire(s, h, 1);
	CU_ASSERT(last_action(s, RING_ACTION_GRANT) >= 0);
	sim_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_node_tests[] = {
	T_(test_node_new_refuses_an_id_outside_the_ring),
	T_(test_fresh_member_elects_after_listening_two_heartbeats),
	T_(test_three_members_bootstrap_to_exactly_one_token),
	T_(test_grants_only_while_holding_with_growing_fences_one_per_visit),
	T_(test_duplicate_token_is_reacked_not_accepted),
	T_(test_silent_successor_gets_retransmits_then_is_skipped_under_a_new_epoch),
	T_(test_golden_traces_of_a_regeneration_a_receipt_a_grant_and_a_pass),
	T_(test_stale_token_is_dropped_and_its_sender_drops_its_copy),
	T_(test_lease_expiry_revokes_and_moves_the_token_on),
	T_(test_pause_past_half_the_loss_timeout_revokes_before_anything_else),
	T_(test_late_tick_within_half_the_loss_timeout_is_no_pause),
	T_(test_restarted_member_refuses_its_stored_epoch_and_joins_under_a_new_one),
	T_(test_hostile_datagrams_are_counted_never_acted_on),
	T_(test_majority_ring_without_quorum_never_regenerates_or_grants),
	T_(test_ring_without_quorum_rule_regenerates_with_two_of_five),
	T_(test_leaving_holder_passes_the_token_and_the_ring_goes_on_without_it),
	T_(test_acquire_twice_is_busy_and_release_cancels_a_waiting_client),
	T_(test_state_and_log_names_are_those_of_the_spec),
	T_(test_leave_racing_its_ack_makes_no_second_token),
	T_(test_leave_after_a_reepoch_still_names_the_hop_it_took),
	T_(test_leaving_member_refuses_a_new_pass_by_name),
	T_(test_stale_join_does_not_take_a_pass_back),
	T_(test_far_epoch_is_refused_and_a_near_one_costs_one_regeneration),
	T_(test_exhausted_epochs_are_fatal_not_repeated),
	T_(test_counter_exhaustion_reepochs_without_granting_unconfirmed),
	T_(test_wiped_member_never_grants_an_old_fence_again),
	T_(test_update_overflow_is_fatal_and_final),
	T_(test_member_left_alone_while_resting_does_not_spin),
	CU_TEST_INFO_NULL,
};
#undef T_
