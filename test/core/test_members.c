/* CUnit suite: one scripted history per rule of membership: joining, restarting, proving an epoch after a start, leaving (PROTOCOL.md §5.3, §5.4),
 * each one that fails when the rule is removed (its mutant in test/mutants/). */
#include <CUnit/CUnit.h>

#include <string.h>

#include "lib/harness.h"
#include "lib/suites.h"

/* ---- helpers ---- */

/* What the network loses: datagrams of TYPE from member id FROM to member id
 * TO (0 for any of the three). Up to four rules at once. */
struct loss {
	struct {
		int type;
		uint16_t from, to;
	} rule[4];
	size_t n;
};

static bool lose(const struct flight *f, const void *arg)
{
	const struct loss *l = arg;
	struct ring_msg m;
	if (ring_wire_decode(f->buf, f->len, &m) != 0)
		return false;
	for (size_t k = 0; k < l->n; k++)
		if ((l->rule[k].type == 0 || l->rule[k].type == (int)m.type) &&
		    (l->rule[k].from == 0 || l->rule[k].from == f->from) &&
		    (l->rule[k].to == 0 || l->rule[k].to == f->to))
			return true;
	return false;
}

static void lose_add(struct sim *s, struct loss *l, enum ring_msg_type type, uint16_t from,
		     uint16_t to)
{
	CU_ASSERT_FATAL(l->n < 4);
	l->rule[l->n].type = (int)type;
	l->rule[l->n].from = from;
	l->rule[l->n].to = to;
	l->n++;
	s->drop = lose;
	s->drop_arg = l;
}

static void lose_none(struct sim *s, struct loss *l)
{
	l->n = 0;
	s->drop = NULL;
	s->drop_arg = NULL;
}

/* Drops the TOKEN_ACKs from member id *arg, keeping a copy of the last. */
static struct flight held_ack;
static bool hold_acks_from(const struct flight *f, const void *arg)
{
	struct ring_msg m;
	if (f->from != *(const uint16_t *)arg || ring_wire_decode(f->buf, f->len, &m) != 0 ||
	    m.type != RING_MSG_TOKEN_ACK)
		return false;
	held_ack = *f;
	return true;
}

/* Every GRANT of member I since SINCE, with a fence at most FENCE. */
static size_t grants_at_or_below(const struct sim *s, size_t i, uint64_t since, uint64_t fence)
{
	size_t c = 0;
	for (size_t k = 0; k < s->n_rec[i]; k++) {
		const struct rec *r = &s->rec[i][k];
		c += r->seq > since && r->a.type == RING_ACTION_GRANT && r->a.u.grant.fence <= fence;
	}
	return c;
}

/* Runs until member I holds the token (it accepted a hop, or minted). */
static void run_until_held_by(struct sim *s, size_t i)
{
	for (int k = 0; k < 100 && !status_of(s, i).token_held; k++)
		CU_ASSERT_FATAL(run_until_log(s, (int)i, RING_LOG_TOKEN_RECV, 2000 * MS));
	CU_ASSERT_FATAL(status_of(s, i).token_held);
}

/* ---- §5.3: restarting ---- */

/* §5.3, a restart refuses every token of an epoch <= the one it loaded.
 * R accepted hop (e, s) from P and granted fence f under it; a copy of that
 * hop is still in the network. Then P loses its disk and R crashes, both
 * restart, and P answers R's EPOCH_QUERY with 0: P's floor cannot refuse
 * the copy, only R's own stored epoch can. Without the rule R takes the
 * hop a second time and grants f again: one fence, two clients. */
static void test_restarted_member_refuses_a_late_copy_whatever_its_sender_lost(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t p = sim_settle(s);
	size_t r = successor_of(s, p);
	uint16_t r_id = id_of(r);
	memset(&captured, 0, sizeof captured);
	s->drop = capture_token_to;
	s->drop_arg = &r_id;
	sim_acquire(s, r, 3);
	CU_ASSERT_FATAL(run_until_action(s, (int)r, RING_ACTION_GRANT, 500 * MS));
	uint64_t fence = s->last.action[last_action(s, RING_ACTION_GRANT)].u.grant.fence;
	s->drop = NULL;
	CU_ASSERT_FATAL(captured.len > 0 && captured.from == id_of(p));
	sim_release(s, r, 3);
	sim_run_for(s, 200 * MS);
	uint32_t stored = status_of(s, r).epoch;
	CU_ASSERT_FATAL(stored == (uint32_t)(fence >> 32)); /* no new epoch since */

	sim_restart(s, p, 0);      /* P's state_dir is lost */
	sim_restart(s, r, stored); /* R crashed, its disk intact */
	uint64_t mark = s->seq;
	sim_start(s, p);
	sim_start(s, r);
	CU_ASSERT_FATAL(run_until_log(s, (int)r, RING_LOG_EPOCH_LEARNED, 100 * MS));
	sim_acquire(s, r, 4);
	sim_datagram(s, r, captured.from, captured.buf, captured.len);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN_ACK, -1, NULL), -1);
	CU_ASSERT(last_send(s, RING_MSG_JOIN, id_of(p), NULL) >= 0);
	sim_run_for(s, 3000 * MS);
	CU_ASSERT_EQUAL(grants_at_or_below(s, r, mark, fence), 0);
	CU_ASSERT(count_actions(s, r, mark, RING_ACTION_GRANT) >= 1); /* served, later */
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3, the start's floor: a starting member refuses tokens of every epoch
 * up to the highest a majority told it at its start, not only up to what
 * their sender answered. A wiped R hears A answer an old epoch and B the
 * current one; then a token of the current epoch comes from A (A caught up
 * after answering). Only the start floor refuses it: R cannot tell it from
 * a late copy of a hop its lost past accepted if A's own answer understated
 * what A had sent (A's disk was rolled back too), and takes it in under a
 * new epoch instead. (With every other disk right, the per-sender floors
 * alone already refuse every copy: this rule is the second line.) */
static void test_wiped_member_refuses_tokens_up_to_the_floor_a_majority_gave(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	size_t a = 0, r = 1, b = 2;
	s->up[a] = s->up[b] = false; /* A and B are scripted by hand */
	sim_start(s, r);
	struct ring_msg q;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_EPOCH_QUERY, 0, &q) >= 0);
	uint32_t old = 0x300, cur = 0x702;
	struct ring_msg m = {.type = RING_MSG_EPOCH_REPLY};
	m.u.epoch_reply.nonce = q.u.epoch_query.nonce;
	m.u.epoch_reply.epoch = old;
	sim_inject(s, r, a, m);
	m.u.epoch_reply.epoch = cur;
	sim_inject(s, r, b, m);
	CU_ASSERT_FATAL(last_log(s, RING_LOG_EPOCH_LEARNED) >= 0);
	CU_ASSERT_EQUAL(status_of(s, r).epoch, cur);

	struct ring_msg t = {.type = RING_MSG_TOKEN};
	t.u.token.epoch = cur;
	t.u.token.seq = 4;
	for (size_t i = 0; i < 3; i++)
		ring_set_add(&t.u.token.alive, i);
	sim_acquire(s, r, 1);
	sim_inject(s, r, a, t);
	struct ring_msg j;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_JOIN, id_of(a), &j) >= 0);
	CU_ASSERT_EQUAL(j.u.join.refused.epoch, cur);
	CU_ASSERT_EQUAL(j.u.join.refused.seq, 4);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN_ACK, -1, NULL), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(!status_of(s, r).has_token);
	sim_free(s);
}

/* ---- §5.3: proving an epoch ---- */

/* §5.3, an unproven member takes part in no election but as a carrier. A
 * (index 0) is down at epoch e; R skips it and mints X above e, and B
 * grants under X. Then B goes down and R loses its disk. A comes back
 * with e and R with nothing: neither knows X, and B, who does, is away.
 * A's election meets only R. Were R a participant, A would regenerate at
 * (gen(e) + 1, index 0), below X, and grant under it: a fence below one
 * granted before that epoch was minted (I1). Counted as no participant,
 * R leaves A without a quorum, and nothing is granted until B is back. */
static void test_unproven_member_is_no_participant_so_no_epoch_below_a_granted_one(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	size_t a = 0, b = 1, r = 2;
	sim_boot(s);
	sim_settle(s);
	run_until_held_by(s, r);
	uint32_t e = status_of(s, r).token_epoch;
	CU_ASSERT_FATAL(status_of(s, a).epoch == e);
	s->up[a] = false;
	sim_acquire(s, b, 1);
	CU_ASSERT_FATAL(run_until_log(s, (int)r, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	CU_ASSERT_FATAL(run_until_action(s, (int)b, RING_ACTION_GRANT, 500 * MS));
	uint64_t x_fence = s->last.action[last_action(s, RING_ACTION_GRANT)].u.grant.fence;
	CU_ASSERT_FATAL((x_fence >> 32 & 0xff) == r);
	sim_release(s, b, 1);
	sim_run_for(s, 20 * MS);

	s->up[b] = false;
	sim_restart(s, r, 0);
	sim_restart(s, a, e);
	s->up[a] = true;
	uint64_t mark = s->seq;
	sim_start(s, a);
	sim_start(s, r);
	sim_acquire(s, a, 2);
	sim_acquire(s, r, 3);
	sim_run_for(s, 6000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	CU_ASSERT_EQUAL(count_grants_all(s, mark), 0);
	CU_ASSERT(count_logs(s, a, mark, RING_LOG_NO_QUORUM) >= 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3, an unproven member mints nothing: a skip that needs a new epoch
 * drops the token instead. A wiped R has one answer of the two it needs
 * (B's are lost), takes a token A readmitted it with, and finds B silent.
 * Its disk may have forgotten epochs its past minted, so the skip's epoch
 * (gen + 1, R's index) may be one that was granted under before: it must
 * not mint it. Only the mechanism is visible here: no epoch of R's making
 * is stored while R is unproven, and the token goes. */
static void test_unproven_holder_drops_the_token_rather_than_mint_for_a_skip(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	size_t a = 0, r = 1, b = 2;
	sim_boot(s);
	sim_settle(s);
	struct loss loss = {0};
	lose_add(s, &loss, RING_MSG_EPOCH_REPLY, id_of(b), id_of(r));
	sim_restart(s, r, 0);
	uint64_t mark = s->seq;
	sim_start(s, r);
	run_until_held_by(s, r);
	CU_ASSERT_EQUAL_FATAL(count_logs(s, r, mark, RING_LOG_EPOCH_LEARNED), 0);
	s->up[b] = false;
	uint64_t held = s->seq;
	/* A pass, its retransmits, and the give-up (which, dropping the
	 * token, logs no skip) take (retries + 1) ack timeouts. */
	sim_run_for(s, l.idle_pass_ms * MS + (l.retries + 2) * l.ack_timeout_ms * MS);
	CU_ASSERT(count_logs(s, r, held, RING_LOG_RETRANSMIT) == l.retries);
	CU_ASSERT(!status_of(s, r).has_token);
	CU_ASSERT_EQUAL(count_sends(s, r, held, RING_MSG_TOKEN, id_of(a)), 0);
	for (size_t k = 0; k < s->n_rec[r]; k++) {
		const struct rec *rc = &s->rec[r][k];
		if (rc->seq > mark && rc->a.type == RING_ACTION_PERSIST)
			CU_ASSERT_NOT_EQUAL(rc->a.u.persist.epoch & 0xff, r);
	}
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3 and §3.2, a refusal is acted on only one ack timeout after it came,
 * and not at all if the pass's ack comes meanwhile. J takes P's pass,
 * serves and passes on to Q, whose client enters; J's ack to P is slow.
 * J crashes and restarts at once and refuses P's retransmission by name
 * (it cannot know its past took that hop). The old life's ack then arrives
 * within the ack timeout: the token is not P's to take back. Taken back at
 * once, it would be minted anew beside the one Q holds, and Q's client
 * cut off by a copy made with no datagram lost, only delayed. */
static void test_refused_pass_waits_an_ack_timeout_for_an_ack_of_the_past_life(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t p = sim_settle(s);
	size_t j = successor_of(s, p);
	size_t q = successor_of(s, j);
	uint16_t j_id = id_of(j);
	memset(&held_ack, 0, sizeof held_ack);
	s->drop = hold_acks_from;
	s->drop_arg = &j_id;
	sim_acquire(s, j, 1);
	sim_acquire(s, q, 2);
	CU_ASSERT_FATAL(run_until_action(s, (int)j, RING_ACTION_GRANT, 500 * MS));
	sim_release(s, j, 1);
	CU_ASSERT_FATAL(run_until_action(s, (int)q, RING_ACTION_GRANT, 10 * MS));
	CU_ASSERT_FATAL(held_ack.len > 0);
	struct flight ack = held_ack;
	uint32_t e = status_of(s, j).epoch;

	sim_restart(s, j, e);
	uint64_t mark = s->seq;
	sim_start(s, j);
	CU_ASSERT_FATAL(run_until_send(s, (int)j, RING_MSG_JOIN, id_of(p), 100 * MS));
	struct ring_msg refusal;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_JOIN, id_of(p), &refusal) >= 0);
	CU_ASSERT_EQUAL(refusal.u.join.refused.epoch, e);
	sim_run_for(s, LATENCY); /* the refusal reaches P */
	CU_ASSERT_FATAL(status_of(s, p).has_token);
	sim_datagram(s, p, ack.from, ack.buf, ack.len); /* the past life's ack */
	CU_ASSERT(!status_of(s, p).has_token);
	s->drop = NULL;
	sim_run_for(s, 300 * MS);
	CU_ASSERT_EQUAL(count_logs(s, p, mark, RING_LOG_MEMBER_REJOIN), 0);
	CU_ASSERT_EQUAL(count_actions(s, q, mark, RING_ACTION_REVOKE), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT(status_of(s, q).granted);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3, a sender's floor is its first answer of this life. A wiped R waits
 * for its proof (B's answers are lost) and resends its query; A answers
 * each. Meanwhile A readmitted R, and passes it hops of the new epoch.
 * Were every answer a new floor, each would refuse the hops A sent after
 * R started, and every resend of the query would cost a take-back and an
 * epoch. */
static void test_waiting_for_proof_costs_no_epoch_per_query_resend(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	size_t a = 0, r = 1, b = 2;
	sim_boot(s);
	sim_settle(s);
	struct loss loss = {0};
	lose_add(s, &loss, RING_MSG_EPOCH_REPLY, id_of(b), id_of(r));
	sim_restart(s, r, 0);
	uint64_t mark = s->seq;
	sim_start(s, r);
	sim_run_for(s, 2000 * MS);
	CU_ASSERT_EQUAL_FATAL(count_logs(s, r, mark, RING_LOG_EPOCH_LEARNED), 0);
	CU_ASSERT(count_sends(s, r, mark, RING_MSG_EPOCH_QUERY, id_of(a)) >= 4);
	CU_ASSERT(count_logs(s, r, mark, RING_LOG_TOKEN_RECV) >= 4);
	CU_ASSERT_EQUAL(count_logs(s, a, mark, RING_LOG_MEMBER_REJOIN), 1);
	CU_ASSERT_EQUAL(count_sends(s, r, mark, RING_MSG_JOIN, id_of(a)), 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* ---- §5.3: joining ---- */

/* §5.3, a member that a heartbeat's alive set leaves out sends JOIN. J
 * was skipped while it was away for a moment; it comes back with its
 * state, hears heartbeats of the new epoch without itself in them, and
 * must ask in: nothing else would ever readmit it (the heartbeats keep
 * its loss timer quiet), and its client would wait for ever. */
static void test_member_left_out_of_the_alive_set_asks_in_and_is_served(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t j = successor_of(s, h);
	s->up[j] = false;
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	s->up[j] = true;
	uint64_t mark = s->seq;
	sim_acquire(s, j, 7);
	sim_run_for(s, 3000 * MS);
	CU_ASSERT(count_sends(s, j, mark, RING_MSG_JOIN, id_of(h)) +
			  count_sends(s, j, mark, RING_MSG_JOIN, id_of(successor_of(s, j))) >=
		  1);
	CU_ASSERT_EQUAL(count_actions(s, j, mark, RING_ACTION_GRANT), 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* J was skipped, and comes back knowing an epoch newer than the ring's: it
 * learned it from the heartbeat of a token that died before anyone else
 * heard of it (its minter crashed, its heartbeats to the others lost). */
static size_t skip_then_restart_ahead(struct sim *s, uint32_t *ahead)
{
	size_t h = sim_settle(s);
	size_t j = successor_of(s, h);
	s->up[j] = false;
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	uint32_t e = status_of(s, h).epoch;
	*ahead = ((e >> 8) + 3) << 8 | (uint32_t)h;
	sim_restart(s, j, *ahead);
	s->up[j] = true;
	return j;
}

/* §5.3, a readmission re-epochs above the joiner's epoch too. J, out of
 * the ring and ahead of it, asks in with its epoch. Were the new epoch
 * minted above the token's only, J would drop the token as stale when it
 * arrives, the STALE ack would kill it at its sender, and the ring would
 * stop until an election: a token lost to a join. */
static void test_readmission_mints_above_the_joiners_epoch(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 100; /* the clients below never release */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	uint32_t ahead;
	size_t j = skip_then_restart_ahead(s, &ahead);
	uint64_t mark = s->seq;
	sim_start(s, j);
	for (size_t i = 0; i < 3; i++)
		sim_acquire(s, i, 10 + i);
	sim_run_for(s, 3000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(count_actions(s, i, mark, RING_ACTION_GRANT), 1);
	CU_ASSERT(status_of(s, j).epoch > ahead);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3, a member hearing only stale heartbeats, and no live token, asks
 * their sender to take it in. J, out of the ring and ahead of it, hears
 * the live token's heartbeats as stale: they prove nothing to it, so only
 * a JOIN brings it in "within about one heartbeat and one rotation".
 * Without it J waits for its loss timer and calls an election instead. */
static void test_member_ahead_of_the_ring_joins_within_a_heartbeat_and_a_rotation(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 100; /* the clients below never release */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	uint32_t ahead;
	size_t j = skip_then_restart_ahead(s, &ahead);
	uint64_t mark = s->seq, start = s->now;
	sim_start(s, j);
	CU_ASSERT_FATAL(run_until_send(s, (int)j, RING_MSG_JOIN, -1, 2000 * MS));
	CU_ASSERT(s->now - start <= l.heartbeat_ms * MS + 2 * LATENCY);
	CU_ASSERT_FATAL(run_until_log(s, (int)j, RING_LOG_TOKEN_RECV, 2000 * MS));
	CU_ASSERT(s->now - start <= 2 * l.heartbeat_ms * MS);
	CU_ASSERT_EQUAL(count_logs(s, j, mark, RING_LOG_ELECTION_START), 0);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3, a joiner already in the alive set still gets a new epoch, above
 * its own. J restarts fast, still in the set, ahead of the ring; the
 * holder keeps the token a while (its client is in the region) and J's
 * JOIN reaches it. Were an in-set joiner ignored, the next pass would
 * reach J under the old epoch, J would drop it as stale and the ring
 * would lose its token. */
static void test_restarted_member_still_in_the_set_is_readmitted_above_its_epoch(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 500; /* the clients below never release */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t j = successor_of(s, h);
	sim_acquire(s, h, 5);
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);
	uint32_t e = status_of(s, h).token_epoch;
	uint32_t ahead = ((e >> 8) + 3) << 8 | (uint32_t)successor_of(s, j);
	sim_restart(s, j, ahead);
	uint64_t mark = s->seq;
	sim_start(s, j);
	CU_ASSERT_FATAL(run_until_send(s, (int)j, RING_MSG_JOIN, id_of(h), 500 * MS));
	sim_run_for(s, 50 * MS);
	sim_release(s, h, 5);
	for (size_t i = 0; i < 3; i++)
		sim_acquire(s, i, 10 + i);
	sim_run_for(s, 3000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(count_actions(s, i, mark, RING_ACTION_GRANT), 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3 and §3.2, only a JOIN refusing this very pass makes its sender take
 * the token back. P passes to R; R's ack is lost; R grants, and passes on
 * to X, whose client enters. A stale JOIN of R (an old life's, duplicated)
 * then reaches P. Taking the pass back would mint a new epoch and hand it
 * to R, whose next client enters while X's is still in the region (X has
 * not heard the new epoch: its heartbeats are lost). The real refusal
 * names a hop; this one names none, and P just retransmits. */
static void test_stale_join_takes_no_pass_back_so_no_second_region(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t p = sim_settle(s);
	size_t r = successor_of(s, p);
	size_t x = successor_of(s, r);
	uint32_t e = status_of(s, p).token_epoch;
	struct loss loss = {0};
	lose_add(s, &loss, RING_MSG_TOKEN_ACK, id_of(r), id_of(p));
	sim_acquire(s, r, 1);
	sim_acquire(s, x, 2);
	CU_ASSERT_FATAL(run_until_action(s, (int)r, RING_ACTION_GRANT, 500 * MS));
	sim_release(s, r, 1);
	sim_acquire(s, r, 3);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 50 * MS));
	CU_ASSERT_FATAL(status_of(s, p).has_token); /* still passing: no ack came */

	lose_none(s, &loss);
	lose_add(s, &loss, RING_MSG_HEARTBEAT, 0, id_of(x));
	uint64_t mark = s->seq;
	struct ring_msg j = {.type = RING_MSG_JOIN};
	j.u.join.epoch = e - 1;
	sim_inject(s, p, r, j);
	sim_inject(s, p, r, j);
	sim_run_for(s, 300 * MS);
	CU_ASSERT_EQUAL(count_logs(s, p, mark, RING_LOG_MEMBER_REJOIN), 0);
	CU_ASSERT_EQUAL(count_actions(s, r, mark, RING_ACTION_GRANT), 0);
	assert_ring_safe(s);
	sim_free(s);
}

/* ---- §5.4: leaving ---- */

/* §5.4, a leaving member revokes its grant first. The holder is told to
 * leave with its client in the region: the client goes at once, and the
 * token with it. Kept, the grant would hold the token (and the leave) for
 * the rest of its lease while the others' clients wait. */
static void test_leaving_holder_revokes_its_client_and_hands_the_token_on_at_once(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	sim_acquire(s, h, 5);
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);
	sim_acquire(s, x, 6);
	sim_leave(s, h);
	int rv = last_action(s, RING_ACTION_REVOKE);
	CU_ASSERT_FATAL(rv >= 0);
	CU_ASSERT_EQUAL(s->last.action[rv].u.revoke.client, 5);
	CU_ASSERT(rv < last_send(s, RING_MSG_LEAVE, 0, NULL));
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0);
	CU_ASSERT(!status_of(s, h).granted);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 100 * MS));
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.4, the next holder removes a member that announced LEAVE from the
 * alive set. L, not holding, leaves (and is gone at once); the holder
 * drops it from the token under a new epoch, so no pass is ever sent to
 * a member that is not there, nor the retry budget spent on it. */
static void test_holder_removes_a_leaver_so_no_pass_is_wasted_on_it(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t lv = successor_of(s, h);
	uint64_t mark = s->seq;
	sim_leave(s, lv);
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_LEFT) >= 0);
	s->up[lv] = false;
	sim_run_for(s, 1000 * MS);
	for (size_t i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(count_sends(s, i, mark, RING_MSG_TOKEN, id_of(lv)), 0);
		CU_ASSERT_EQUAL(count_logs(s, i, mark, RING_LOG_RETRANSMIT), 0);
		CU_ASSERT_EQUAL(count_logs(s, i, mark, RING_LOG_SUCCESSOR_SKIP), 0);
		struct ring_status st = status_of(s, i);
		if (i != lv)
			CU_ASSERT(!ring_set_has(&st.alive, lv));
	}
	assert_ring_safe(s);
	sim_free(s);
}

/* ---- §6.3: the token's quorum ---- */

/* Five members, clients waiting at every one. */
static struct sim *five_with_clients(size_t *h)
{
	struct ring_layout l;
	make_resting_layout(&l, 5);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	*h = sim_settle(s);
	return s;
}

/* §6.3, a leave that would leave fewer than a quorum in the alive set
 * drops the token. Three of five leave at once: two are left, a minority,
 * which must grant nothing (the other side of a partition could be a
 * majority). Kept, the token would circle the two, and its seq, counting
 * each of them twice, would call its epoch confirmed by a majority
 * (§4.4) and grant. */
static void test_leaves_down_to_a_minority_drop_the_token(void)
{
	size_t h;
	struct sim *s = five_with_clients(&h);
	size_t k = h;
	uint64_t mark = s->seq;
	for (int n = 0; n < 3; n++) {
		k = (k + 1) % 5;
		sim_leave(s, k);
		CU_ASSERT_FATAL(last_action(s, RING_ACTION_LEFT) >= 0);
	}
	for (int n = 0; n < 3; n++)
		s->up[(h + 1 + (size_t)n) % 5] = false;
	sim_run_for(s, 500 * MS);
	sim_acquire(s, h, 1);
	sim_acquire(s, (h + 4) % 5, 2);
	sim_run_for(s, 6000 * MS);
	CU_ASSERT_EQUAL(count_grants_all(s, mark), 0);
	CU_ASSERT(count_logs(s, h, mark, RING_LOG_NO_QUORUM) >= 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* §6.3, a skip that would leave fewer than a quorum in the alive set drops
 * the token. Three of five fall silent; the holder skips them one by one,
 * and at the third only two are left: a minority, which must grant
 * nothing, for the reason above. */
static void test_skips_down_to_a_minority_drop_the_token(void)
{
	size_t h;
	struct sim *s = five_with_clients(&h);
	uint64_t mark = s->seq;
	for (int n = 0; n < 3; n++)
		s->up[(h + 1 + (size_t)n) % 5] = false;
	sim_run_for(s, 500 * MS);
	sim_acquire(s, h, 1);
	sim_acquire(s, (h + 4) % 5, 2);
	sim_run_for(s, 6000 * MS);
	CU_ASSERT(count_logs(s, h, mark, RING_LOG_SUCCESSOR_SKIP) >= 3);
	CU_ASSERT_EQUAL(count_grants_all(s, mark), 0);
	CU_ASSERT(count_logs(s, h, mark, RING_LOG_NO_QUORUM) >= 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3: a member that cannot be proven asks again with growing intervals,
 * from heartbeat_ms doubling up to loss_timeout_ms: one left alone (the
 * others down, or cut off) must not cost the network a broadcast every
 * heartbeat for ever, and must still be heard from once the others are
 * back. Member 0 starts alone and asks at 0, 100, 300, 700 and 1500 ms,
 * then once a second. Kills query-no-backoff. */
static void test_unproven_member_asks_again_with_doubling_intervals(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	struct sim *s = sim_new(&l);
	s->up[1] = s->up[2] = false;
	uint64_t t0 = s->now;
	sim_start(s, 0);
	sim_run_for(s, 3600 * MS);
	uint64_t want[] = {0, 100, 300, 700, 1500, 2500, 3500};
	size_t got = 0;
	struct ring_msg m;
	for (size_t k = 0; k < s->n_rec[0]; k++) {
		const struct rec *r = &s->rec[0][k];
		if (!decode_send(&r->a, &m) || m.type != RING_MSG_EPOCH_QUERY)
			continue;
		if (got < sizeof want / sizeof want[0])
			CU_ASSERT_EQUAL(r->at - t0, want[got] * MS);
		got++;
	}
	CU_ASSERT_EQUAL(got, sizeof want / sizeof want[0]);
	CU_ASSERT(!status_of(s, 0).has_token);
	sim_free(s);
}

/* ---- §7: joins per step ---- */

/* The MEMBER_REJOIN logs in member I's last update. */
static size_t rejoins_in_last(const struct sim *s)
{
	size_t c = 0;
	for (size_t k = 0; k < s->last.n; k++)
		c += s->last.action[k].type == RING_ACTION_LOG &&
		     s->last.action[k].u.log.event == RING_LOG_MEMBER_REJOIN;
	return c;
}

/* §7: a holder admits at most eight joiners in one step; the rest wait for
 * a later step. A step's actions must stay bounded whatever the ring's
 * size: a member_rejoin log per joiner grew with the ring, and 255 of them
 * would not fit RING_UPDATE_MAX. Member M of twelve hears JOINs from ten
 * others (they restarted and claim epochs ahead of the token, so each is a
 * readmission) before the token comes: the step that takes the token
 * readmits eight and no more, and the two others are readmitted in a later
 * step. Kills joins-uncapped. */
static void test_holder_readmits_at_most_eight_joiners_in_one_step(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 12);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t m = successor_of(s, successor_of(s, h));
	uint32_t e = status_of(s, m).epoch;
	uint64_t mark = s->seq;
	size_t joiners = 0;
	for (size_t i = 0; i < s->n && joiners < 10; i++) {
		if (i == m || i == h)
			continue;
		struct ring_msg j = {.type = RING_MSG_JOIN};
		/* The last two claim an epoch above what the first eight's
		 * readmission mints, so that they are still due after it. */
		j.u.join.epoch = e + ((joiners < 8 ? 16u : 32u) << 8);
		sim_inject(s, m, i, j);
		joiners++;
	}
	CU_ASSERT_FATAL(joiners == 10);
	CU_ASSERT_EQUAL(count_logs(s, m, mark, RING_LOG_MEMBER_REJOIN), 0);
	CU_ASSERT_FATAL(run_until_log(s, (int)m, RING_LOG_TOKEN_RECV, 2000 * MS));
	CU_ASSERT_EQUAL(rejoins_in_last(s), 8);
	sim_run_for(s, 500 * MS);
	CU_ASSERT_EQUAL(count_logs(s, m, mark, RING_LOG_MEMBER_REJOIN), 10);
	assert_ring_safe(s);
	sim_free(s);
}

/* §5.3: a member left out of the alive set asks in at most once a
 * heartbeat_ms, however many heartbeats tell it it is out: every JOIN costs
 * the holder a readmission's work, and a storm of them a datagram each for
 * nothing. Member J hears a heartbeat without itself five times in 50 ms.
 * Kills join-every-heartbeat. */
static void test_member_left_out_asks_in_once_a_heartbeat(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t j = successor_of(s, h);
	struct ring_status st = status_of(s, h);
	struct ring_msg hb = {.type = RING_MSG_HEARTBEAT};
	hb.u.heartbeat.epoch = st.token_epoch;
	hb.u.heartbeat.alive = st.alive;
	ring_set_del(&hb.u.heartbeat.alive, j);
	uint64_t mark = s->seq;
	for (int k = 0; k < 5; k++) {
		sim_inject(s, j, h, hb);
		s->now += 10 * MS;
	}
	CU_ASSERT_EQUAL(count_sends(s, j, mark, RING_MSG_JOIN, id_of(h)), 1);
	s->now += (uint64_t)l.heartbeat_ms * MS;
	sim_inject(s, j, h, hb);
	CU_ASSERT_EQUAL(count_sends(s, j, mark, RING_MSG_JOIN, id_of(h)), 2);
	sim_free(s);
}

/* §5.4: a leaving member that cannot hand the token on in time goes
 * anyway. Here it stalls (a slow fsync, a stop) right after it passed the
 * token, past its whole leave deadline: the first step after the stall
 * ends the leave (leave_timeout, LEFT) instead of spending its retries,
 * and arms no deadline in the past. The simulator found this only on one
 * seed in thousands once parking changed its draws. */
static void test_a_leave_stalled_past_its_deadline_ends_at_once(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	l.quorum = RING_QUORUM_NONE;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	sim_leave(s, h);
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0); /* passed, ack awaited */
	s->up[h] = false; /* stalled: gets nothing, does nothing */
	uint64_t stall = (uint64_t)l.n * (l.retries + 1) * l.ack_timeout_ms * MS + 1100 * MS;
	sim_run_for(s, stall);
	s->up[h] = true;
	uint64_t mark = s->seq;
	sim_tick(s, h);
	CU_ASSERT_EQUAL(count_logs(s, h, mark, RING_LOG_LEAVE_TIMEOUT), 1);
	CU_ASSERT_EQUAL(count_actions(s, h, mark, RING_ACTION_LEFT), 1);
	CU_ASSERT_EQUAL(s->last.deadline_us, NEVER);
	sim_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_rules_members_tests[] = {
	T_(test_restarted_member_refuses_a_late_copy_whatever_its_sender_lost),
	T_(test_wiped_member_refuses_tokens_up_to_the_floor_a_majority_gave),
	T_(test_unproven_member_is_no_participant_so_no_epoch_below_a_granted_one),
	T_(test_unproven_holder_drops_the_token_rather_than_mint_for_a_skip),
	T_(test_refused_pass_waits_an_ack_timeout_for_an_ack_of_the_past_life),
	T_(test_waiting_for_proof_costs_no_epoch_per_query_resend),
	T_(test_member_left_out_of_the_alive_set_asks_in_and_is_served),
	T_(test_readmission_mints_above_the_joiners_epoch),
	T_(test_member_ahead_of_the_ring_joins_within_a_heartbeat_and_a_rotation),
	T_(test_restarted_member_still_in_the_set_is_readmitted_above_its_epoch),
	T_(test_stale_join_takes_no_pass_back_so_no_second_region),
	T_(test_leaving_holder_revokes_its_client_and_hands_the_token_on_at_once),
	T_(test_holder_removes_a_leaver_so_no_pass_is_wasted_on_it),
	T_(test_leaves_down_to_a_minority_drop_the_token),
	T_(test_skips_down_to_a_minority_drop_the_token),
	T_(test_holder_readmits_at_most_eight_joiners_in_one_step),
	T_(test_member_left_out_asks_in_once_a_heartbeat),
	T_(test_a_leave_stalled_past_its_deadline_ends_at_once),
	T_(test_unproven_member_asks_again_with_doubling_intervals),
	CU_TEST_INFO_NULL,
};
#undef T_
