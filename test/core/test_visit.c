/* CUnit suite of the token's visit (PROTOCOL.md §3.1-§3.3; ring/core/visit.c:
 * accept, serve, pass, ack, skip) and of the heartbeats it carries (§5.1,
 * §5.2): a visit's first scenarios, then one scripted history per
 * rule, each failing when the rule is removed (its mutant in test/mutants/). */
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

/* ---- §3.3: a visit grants, with growing fences ---- */

static void test_grants_only_while_holding_with_growing_fences_one_per_visit(void)
{
	struct ring_layout l;
	make_layout(&l, 3); /* idle_pass_ms = 0: an unwanted token parks */
	struct hring *s = hring_new(&l);
	hring_boot(s);

	/* Clients at the two members the token is not parked at: neither
	 * holds it, so both summon it and wait their turn in ring order. */
	size_t p = hring_settle(s);
	CU_ASSERT(status_of(s, p).parked);
	size_t x = (p + 1) % 3, y = (p + 2) % 3;
	hring_acquire(s, x, 1);
	hring_acquire(s, y, 2);
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

	/* On release the token leaves at once, carrying the grant's counter,
	 * once y's summons, which the parked holder forwarded after the token
	 * (§3.5), has reached it. */
	hring_run_for(s, 2 * MS);
	CU_ASSERT(status_of(s, a).granted);
	hring_release(s, a, client_a);
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
	hring_release(s, b, g->u.grant.client);

	/* Two clients at one member while nobody else waits: the token
	 * stays, and the second is granted at the first's release, with no
	 * datagram (a park's grants, §3.4, §3.5). */
	hring_acquire(s, 2, 3);
	hring_acquire(s, 2, 4);
	CU_ASSERT_FATAL(run_until_action(s, 2, RING_ACTION_GRANT, 1000 * MS));
	g = &s->last.action[last_action(s, RING_ACTION_GRANT)];
	CU_ASSERT_EQUAL(g->u.grant.client, 3);
	uint64_t fence_3 = g->u.grant.fence;
	CU_ASSERT(fence_3 > fence_b);
	hring_release(s, 2, 3);
	int g4 = last_action(s, RING_ACTION_GRANT);
	CU_ASSERT_FATAL(g4 >= 0);
	CU_ASSERT_EQUAL(s->last.action[g4].u.grant.client, 4);
	uint64_t fence_4 = s->last.action[g4].u.grant.fence;
	CU_ASSERT(fence_4 > fence_3);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN, -1, NULL), -1);

	/* With a client waiting elsewhere, the next one here waits for the
	 * token to come back: one entry per visit, in ring order. */
	hring_acquire(s, 2, 5);
	hring_acquire(s, 0, 6);
	hring_run_for(s, 2 * MS); /* n0's summons reaches the holder */
	uint64_t granted_4 = s->seq;
	hring_release(s, 2, 4);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(0), NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, 0, RING_ACTION_GRANT, 1000 * MS));
	g = &s->last.action[last_action(s, RING_ACTION_GRANT)];
	CU_ASSERT_EQUAL(g->u.grant.client, 6);
	CU_ASSERT(g->u.grant.fence > fence_4);
	hring_release(s, 0, 6);
	CU_ASSERT_FATAL(run_until_action(s, 2, RING_ACTION_GRANT, 1000 * MS));
	g = &s->last.action[last_action(s, RING_ACTION_GRANT)];
	CU_ASSERT_EQUAL(g->u.grant.client, 5);
	CU_ASSERT_EQUAL(count_actions(s, 2, granted_4, RING_ACTION_GRANT), 1);
	CU_ASSERT_EQUAL(count_logs(s, 1, granted_4, RING_LOG_TOKEN_RECV), 0); /* n1 jumped over */
	hring_release(s, 2, 5);

	assert_safe_and_free(s);
}

static void test_duplicate_token_is_reacked_not_accepted(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h;
	struct hring *s = hring_settled(&l, &h);
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
	hring_datagram(s, r, id_of(h), dup, dup_len);
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN_ACK, id_of(h), &ack) >= 0);
	CU_ASSERT_EQUAL(ack.u.token_ack.epoch, tok.u.token.epoch);
	CU_ASSERT_EQUAL(ack.u.token_ack.seq, tok.u.token.seq);
	CU_ASSERT_EQUAL(ack.u.token_ack.flags, 0);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_TOKEN_RECV), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_PERSIST), -1);
	CU_ASSERT(status_of(s, r).token_held);

	/* Replayed after the token moved on, with a client waiting there. */
	CU_ASSERT_FATAL(run_until_send(s, (int)r, RING_MSG_TOKEN, -1, 500 * MS));
	size_t next = hring_settle(s);
	CU_ASSERT_NOT_EQUAL(next, r);
	uint64_t entries = status_of(s, r).counters.cs_entries;
	hring_acquire(s, r, 9);
	CU_ASSERT_EQUAL(status_of(s, r).state, RING_STATE_WAITING);
	hring_datagram(s, r, id_of(h), dup, dup_len);
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
	assert_safe_and_free(s);
}

/* Golden traces (PROTOCOL.md §7: the order of a step's actions is the
 * order the driver carries them out in): an epoch is persisted before
 * anything that carries it leaves, a receipt is acked before the token can
 * move on (a crash between the two must not leave a pass unacked), and the
 * token's pass after its heartbeat. Each step of the
 * token's first round, action by action. */
static void test_golden_traces_of_a_regeneration_a_receipt_a_grant_and_a_pass(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = hring_started(&l);
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_TOKEN_REGEN, 2000 * MS));
	size_t m = (size_t)s->last_node;
	CU_ASSERT_FATAL(m == 2); /* the highest id wins the boot's elections */
	/* The election's last hop acked, the epoch stored before the
	 * heartbeat that tells it; nobody waits, so the token rests. */
	ASSERT_STEP_TRACE(s, "send election_ack>20, election_won, persist, token_regen, "
			     "send heartbeat>*");
	size_t next = successor_of(s, m);
	hring_acquire(s, next, 7);
	ASSERT_STEP_TRACE(s, ""); /* queued: the token is not here */
	CU_ASSERT_FATAL(run_until_log(s, (int)m, RING_LOG_TOKEN_PASS, 500 * MS));
	ASSERT_STEP_TRACE(s, "send token>10, token_pass"); /* the rest is over */
	CU_ASSERT_FATAL(run_until_log(s, (int)next, RING_LOG_TOKEN_RECV, 500 * MS));
	/* Acked before anything else, then granted: a client is waiting. */
	ASSERT_STEP_TRACE(s, "send token_ack>30, token_recv, grant, cs_enter");
	hring_release(s, next, 7);
	/* One grant per visit: the release moves the token on at once. */
	ASSERT_STEP_TRACE(s, "cs_exit, send token>20, token_pass");
	assert_safe_and_free(s);
}

/* Whether two encoded tokens are the same but for the ages they carry,
 * quiet_us and walk_us. */
static bool same_token_but_quiet(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && alen > OFF_WALK_US + 4 && memcmp(a, b, OFF_QUIET) == 0 &&
	       memcmp(a + OFF_QUIET + 4, b + OFF_QUIET + 4, OFF_WALK_US - OFF_QUIET - 4) == 0 &&
	       memcmp(a + OFF_WALK_US + 4, b + OFF_WALK_US + 4, alen - OFF_WALK_US - 4) == 0;
}

static void test_silent_successor_gets_retransmits_then_is_skipped_under_a_new_epoch(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h, dead, after;
	struct hring *s = hring_settled_order(&l, &h, &dead, &after);
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
	hring_free(s);
}

/* Runs until member I holds the token (not merely passes it). */
static bool holds(const struct hring *s, const void *arg)
{
	size_t i = *(const size_t *)arg;
	return s->last_node == (int)i && status_of(s, i).token_held;
}

static void run_until_held_by(struct hring *s, size_t i, uint64_t limit_us)
{
	CU_ASSERT_FATAL(hring_run(s, s->now + limit_us, holds, &i));
}

/* ---- §3.2: passing, acks, retransmits ---- */

/* §3.2: a pass ends only on the ack that names its epoch and seq. Here the
 * pass itself is lost and an ack r sent for an earlier hop of the same epoch
 * (a late network duplicate) reaches the sender meanwhile. Taking that for
 * the ack would leave nobody with the token: the ring would have to notice
 * the loss and regenerate, on a ring where only one datagram was lost and
 * the retransmit budget would have covered it. */
static void test_an_ack_of_an_earlier_hop_does_not_end_a_lost_pass(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	size_t r = successor_of(s, h);

	/* r's ack of h's pass, kept as the network might keep a duplicate. */
	CU_ASSERT_FATAL(run_until_send(s, (int)r, RING_MSG_TOKEN_ACK, id_of(h), 500 * MS));
	struct ring_msg old;
	int k = last_send(s, RING_MSG_TOKEN_ACK, id_of(h), &old);
	uint8_t ack[RING_WIRE_MAX];
	size_t ack_len = s->last.action[k].u.send.len;
	memcpy(ack, s->last.action[k].u.send.buf, ack_len);

	/* One rotation later h passes to r again; this pass is lost. */
	run_until_held_by(s, h, 1000 * MS);
	uint32_t epoch = status_of(s, h).token_epoch;
	CU_ASSERT_EQUAL_FATAL(old.u.token_ack.epoch, epoch);
	hring_acquire(s, r, 5);
	losses_on(s);
	lose_count(RING_MSG_TOKEN, id_of(h), id_of(r), 1);
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_send(s, (int)h, RING_MSG_TOKEN, id_of(r), 500 * MS));
	struct ring_msg pass;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, id_of(r), &pass) >= 0);
	CU_ASSERT_FATAL(pass.u.token.seq > old.u.token_ack.seq);
	hring_datagram(s, h, id_of(r), ack, ack_len); /* the old ack */
	CU_ASSERT(status_of(s, h).has_token);       /* still passing: not its ack */

	/* The retransmit reaches r, which is served; nobody suspects loss. */
	CU_ASSERT(run_until_action(s, (int)r, RING_ACTION_GRANT, 500 * MS));
	CU_ASSERT_EQUAL(count_logs(s, h, mark, RING_LOG_RETRANSMIT), 1);
	hring_run_for(s, 2 * l.loss_timeout_ms * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_SUCCESSOR_SKIP), 0);
	CU_ASSERT_EQUAL(status_of(s, r).epoch, epoch);
	losses_off(s);
	assert_safe_and_free(s);
}

/* §3.2: a token goes only to members its alive set counts, and a member it
 * leaves out refuses it as a bad packet. No honest member sends one (every
 * pass goes to next_in(alive), after the skip or membership change that
 * edits the set), so only the mechanism can be seen: a token that does not
 * count its receiver is broken or forged, and taking it would let it
 * grant and pass on a token whose "seq + 1 members know the epoch" count
 * (§4.4) and whose heartbeats ("you are out: join") speak of a ring the
 * receiver is not in. */
static void test_a_token_that_leaves_its_receiver_out_is_refused(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h, x, y;
	struct hring *s = hring_settled_order(&l, &h, &x, &y);
	struct ring_status hs = status_of(s, h);
	hring_acquire(s, x, 9);

	struct ring_msg_token t = {.epoch = hs.epoch + 0x100, .seq = 2, .counter = 0, .alive = hs.alive};
	ring_set_del(&t.alive, x);
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft_token(s, id_of(y), id_of(x), t, buf);
	struct ring_status before = status_of(s, x);
	hring_datagram(s, x, id_of(y), buf, len);
	struct ring_status st = status_of(s, x);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets + 1);
	CU_ASSERT(last_log(s, RING_LOG_BAD_PACKET) >= 0);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_SEND), -1); /* not even acked */
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_PERSIST), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(!st.has_token);
	CU_ASSERT_EQUAL(st.epoch, before.epoch);
	CU_ASSERT(status_of(s, h).token_held);
	assert_safe_and_free(s);
}

/* §3.2: when a pass comes back to its sender around the ring before the
 * ack, the sender keeps the higher grant counter of the two, so that no
 * fence of the epoch is issued twice. Along the one token's path the count
 * only grows, so a token that comes back with a lower one is a second copy
 * of the epoch (§5.3's exception, or a broken datagram): it is crafted
 * here. h granted fence c, and its pass is lost; the token that comes back
 * says c - 1. Taking its count, h would grant fence c a second time. */
static void test_a_pass_that_comes_back_keeps_the_higher_grant_counter(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h, r, y; /* y: h's predecessor */
	struct hring *s = hring_settled_order(&l, &h, &r, &y);
	losses_on(s);
	lose_count(RING_MSG_TOKEN, id_of(h), id_of(r), -1);
	uint64_t fence = grant_at(s, h, 1);
	hring_acquire(s, h, 2); /* waits for the next visit */
	hring_release(s, h, 1);
	struct ring_msg pass;
	uint8_t buf[RING_WIRE_MAX];
	copy_last_token(s, id_of(r), buf, &pass);
	CU_ASSERT_FATAL(pass.u.token.counter == (uint32_t)fence);

	struct ring_msg_token back = pass.u.token;
	back.seq += 2;
	back.counter -= 1;
	size_t len = craft_token(s, id_of(y), id_of(h), back, buf);
	uint64_t mark = s->seq;
	hring_datagram(s, h, id_of(y), buf, len); /* h takes it and serves client 2 */
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);
	uint64_t second = first_grant_fence(s, h, mark);
	CU_ASSERT(second > fence);
	CU_ASSERT_EQUAL(second, fence + 1);
	losses_off(s);
	assert_safe_and_free(s);
}

/* §3.2, I1 at the edge: the pass above was acked, so h holds nothing when
 * a token of the same epoch comes with a later hop and a lower count. In a
 * keyless ring anyone can send it (the fuzzer did: CI's fuzz-short hit the
 * core's assertion that fences grow). h takes the hop, but never a count
 * below the fences it granted itself. */
static void test_a_later_hop_with_a_lower_count_does_not_lower_the_fences(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h, r, y;
	struct hring *s = hring_settled_order(&l, &h, &r, &y);
	uint64_t fence = grant_at(s, h, 1);
	hring_release(s, h, 1);
	CU_ASSERT_FATAL(run_until_log(s, (int)r, RING_LOG_TOKEN_RECV, 500 * MS));
	hring_run_for(s, 1 * MS); /* r's ack reaches h */
	struct ring_status hs = status_of(s, h);
	CU_ASSERT_FATAL(!hs.has_token);

	/* It claims everyone knows the epoch: a forger can (§4.4's count is
	 * the token's word, as seq was). */
	struct ring_msg_token t = {.epoch = hs.epoch, .seq = 1000, .counter = 0, .alive = hs.alive,
				   .knows = hs.alive};
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft_token(s, id_of(y), id_of(h), t, buf);
	hring_acquire(s, h, 2);
	uint64_t mark = s->seq;
	hring_datagram(s, h, id_of(y), buf, len);
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);
	CU_ASSERT(first_grant_fence(s, h, mark) > fence);
	/* r still holds the real token: a forged one is a second token, which
	 * only keys prevent (docs/security.md). The fences still grow. */
	hring_free(s);
}

/* ---- §5.1, §5.2: heartbeats and loss detection ---- */

/* §5.1: a member still retransmitting its pass heartbeats for the token.
 * With a retry budget longer than half the loss timeout, the third member
 * hears nothing else while the holder waits on a dead successor: without
 * those heartbeats it would suspect loss and call an election while the
 * token is alive and about to skip the dead member. */
static void test_a_member_retransmitting_its_pass_keeps_the_ring_hearing_the_token(void)
{
	struct ring_layout l = resting_layout(3);
	l.ack_timeout_ms = 100;
	l.retries = 12; /* 1.3 s of retransmits, above loss_timeout_ms */
	size_t h, x, y;
	struct hring *s = hring_settled_order(&l, &h, &x, &y);
	s->up[x] = false;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 3000 * MS));
	CU_ASSERT_EQUAL(count_logs(s, h, mark, RING_LOG_RETRANSMIT), l.retries);
	CU_ASSERT(count_sends(s, h, mark, RING_MSG_HEARTBEAT, id_of(y)) >= 10);
	hring_acquire(s, y, 3);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 500 * MS));
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	assert_safe_and_free(s);
}

/* §5.2 (and §5.3's "hears only stale heartbeats"): only a heartbeat of our
 * epoch or newer counts as a live token. x took h's pass, its acks lost; h
 * skipped x under a new epoch that only y heard of (the heartbeat to x and
 * the token to y lost) and crashed. The new epoch's token is dead; x's
 * stale copy, with a client in the region, heartbeats on. y must not take
 * those heartbeats for a live token: it asks x to take it in, x re-epochs
 * above what y knows, and when x's client is done the token goes to y and
 * is taken. Counted as live, they would keep y silent, and x's token would
 * die at y as stale the moment x passed it: a loss and a regeneration. */
static void test_stale_heartbeats_are_no_live_token_and_their_sender_is_asked_to_join(void)
{
	size_t h, x, y;
	struct hring *s = hring_losing_acks(&h, &x, &y);
	uint32_t epoch = status_of(s, h).token_epoch;
	hring_acquire(s, x, 7);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 500 * MS));
	/* The skip's heartbeat to x and its token to y are lost. */
	lose_count(RING_MSG_HEARTBEAT, id_of(h), id_of(x), -1);
	lose_count(RING_MSG_TOKEN, id_of(h), id_of(y), -1);
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	s->up[h] = false;
	uint32_t dead = status_of(s, h).epoch;
	CU_ASSERT_FATAL(dead > epoch);
	hring_deliver_all(s);
	CU_ASSERT_FATAL(status_of(s, y).epoch == dead);
	CU_ASSERT_FATAL(status_of(s, x).epoch == epoch && status_of(s, x).granted);

	uint64_t mark = s->seq;
	hring_acquire(s, y, 8);
	hring_run_for(s, 1500 * MS);
	CU_ASSERT(count_sends(s, y, mark, RING_MSG_JOIN, id_of(x)) >= 1);
	CU_ASSERT_EQUAL(count_logs(s, x, mark, RING_LOG_MEMBER_REJOIN), 1);
	CU_ASSERT(status_of(s, y).epoch > dead);
	hring_release(s, x, 7);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 200 * MS));
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	losses_off(s);
	assert_safe_and_free(s);
}

/* §5.1: the token carries its quiet time, so the heartbeat clock does not
 * restart at each hop. On a ring that passes the token on at once, every
 * holder keeps it far less than heartbeat_ms; restarted at each hop, the
 * clock would never come due and nobody outside the token's path would
 * hear of it. x, down long enough to be skipped, comes back and must learn
 * from a heartbeat that it is out, and join, within a few heartbeats:
 * not by suspecting a loss that did not happen. */
static void test_a_fast_ring_still_heartbeats_so_a_skipped_member_rejoins(void)
{
	struct ring_layout l = default_layout(3);
	/* Paced, so that it never parks, and fast: each holder keeps it 1 ms,
	 * a hundredth of heartbeat_ms. */
	l.idle_pass_ms = 1;
	struct hring *s = hring_new(&l);
	hring_boot(s);
	size_t x = 1;
	s->up[x] = false;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	hring_run_for(s, 200 * MS);
	s->up[x] = true;
	hring_acquire(s, x, 4);
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 4 * l.heartbeat_ms * MS));
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	assert_safe_and_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_visit_tests[] = {
	T_(test_grants_only_while_holding_with_growing_fences_one_per_visit),
	T_(test_duplicate_token_is_reacked_not_accepted),
	T_(test_golden_traces_of_a_regeneration_a_receipt_a_grant_and_a_pass),
	T_(test_silent_successor_gets_retransmits_then_is_skipped_under_a_new_epoch),
	T_(test_an_ack_of_an_earlier_hop_does_not_end_a_lost_pass),
	T_(test_a_token_that_leaves_its_receiver_out_is_refused),
	T_(test_a_pass_that_comes_back_keeps_the_higher_grant_counter),
	T_(test_a_later_hop_with_a_lower_count_does_not_lower_the_fences),
	T_(test_a_member_retransmitting_its_pass_keeps_the_ring_hearing_the_token),
	T_(test_stale_heartbeats_are_no_live_token_and_their_sender_is_asked_to_join),
	T_(test_a_fast_ring_still_heartbeats_so_a_skipped_member_rejoins),
	CU_TEST_INFO_NULL,
};
#undef T_
