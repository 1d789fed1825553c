/* CUnit suite: one scripted history per rule of the token's own rules: passing, acks, retransmits, copies, fences and epochs (PROTOCOL.md §3, §4),
 * each one that fails when the rule is removed (its mutant in test/mutants/). */
#include <CUnit/CUnit.h>

#include <string.h>

#include "lib/harness.h"
#include "lib/suites.h"

/* ---- helpers ---- */

/* A datagram of member FROM_ID to TO_ID (0: everyone), encoded into BUF;
 * returns its length. */
static size_t craft(const struct sim *s, struct ring_msg *m, uint16_t from_id, uint16_t to_id,
		    uint8_t *buf)
{
	m->from = from_id;
	m->to = to_id;
	m->fingerprint = ring_layout_fingerprint(&s->layout);
	int n = ring_wire_encode(m, buf, RING_WIRE_MAX);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static size_t craft_token(const struct sim *s, uint16_t from_id, uint16_t to_id,
			  struct ring_msg_token t, uint8_t *buf)
{
	struct ring_msg m;
	memset(&m, 0, sizeof m);
	m.type = RING_MSG_TOKEN;
	m.u.token = t;
	return craft(s, &m, from_id, to_id, buf);
}

static bool is_type(const struct flight *f, enum ring_msg_type type)
{
	struct ring_msg m;
	return ring_wire_decode(f->buf, f->len, &m) == 0 && m.type == type;
}

/* What the drop filter below loses: messages of a type from one member to
 * another (0: any), up to a count each. */
struct loss {
	enum ring_msg_type type;
	uint16_t from, to;
	int left; /* how many more to lose; negative: every one */
};

#define LOSSES_MAX 4
static struct loss losses[LOSSES_MAX];
static size_t n_losses;

static void lose(enum ring_msg_type type, uint16_t from, uint16_t to, int count)
{
	CU_ASSERT_FATAL(n_losses < LOSSES_MAX);
	losses[n_losses++] = (struct loss){type, from, to, count};
}

static bool drop_losses(const struct flight *f, const void *arg)
{
	(void)arg;
	for (size_t k = 0; k < n_losses; k++) {
		struct loss *x = &losses[k];
		if (x->left == 0 || (x->from && f->from != x->from) || (x->to && f->to != x->to) ||
		    !is_type(f, x->type))
			continue;
		if (x->left > 0)
			x->left--;
		return true;
	}
	return false;
}

static void losses_on(struct sim *s)
{
	s->drop = drop_losses;
	s->drop_arg = NULL;
}

static void losses_off(struct sim *s)
{
	s->drop = NULL;
	n_losses = 0;
}

/* The last SEND of a TOKEN to TO_ID in the last update, copied into BUF. */
static size_t copy_last_token(const struct sim *s, uint16_t to_id, uint8_t *buf,
			      struct ring_msg *m)
{
	int k = last_send(s, RING_MSG_TOKEN, to_id, m);
	CU_ASSERT_FATAL(k >= 0);
	const struct ring_action *a = &s->last.action[k];
	memcpy(buf, a->u.send.buf, a->u.send.len);
	return a->u.send.len;
}

/* Runs until member I holds the token (not merely passes it). */
static bool holds(const struct sim *s, const void *arg)
{
	size_t i = *(const size_t *)arg;
	return s->last_node == (int)i && status_of(s, i).token_held;
}

static void run_until_held_by(struct sim *s, size_t i, uint64_t limit_us)
{
	CU_ASSERT_FATAL(sim_run(s, s->now + limit_us, holds, &i));
}

static uint64_t first_grant_fence(const struct sim *s, size_t i, uint64_t since)
{
	for (size_t k = 0; k < s->n_rec[i]; k++) {
		const struct rec *r = &s->rec[i][k];
		if (r->seq > since && r->a.type == RING_ACTION_GRANT)
			return r->a.u.grant.fence;
	}
	return 0;
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
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
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
	sim_acquire(s, r, 5);
	losses_on(s);
	lose(RING_MSG_TOKEN, id_of(h), id_of(r), 1);
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_send(s, (int)h, RING_MSG_TOKEN, id_of(r), 500 * MS));
	struct ring_msg pass;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, id_of(r), &pass) >= 0);
	CU_ASSERT_FATAL(pass.u.token.seq > old.u.token_ack.seq);
	sim_datagram(s, h, id_of(r), ack, ack_len); /* the old ack */
	CU_ASSERT(status_of(s, h).has_token);       /* still passing: not its ack */

	/* The retransmit reaches r, which is served; nobody suspects loss. */
	CU_ASSERT(run_until_action(s, (int)r, RING_ACTION_GRANT, 500 * MS));
	CU_ASSERT_EQUAL(count_logs(s, h, mark, RING_LOG_RETRANSMIT), 1);
	sim_run_for(s, 2 * l.loss_timeout_ms * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_SUCCESSOR_SKIP), 0);
	CU_ASSERT_EQUAL(status_of(s, r).epoch, epoch);
	losses_off(s);
	assert_ring_safe(s);
	sim_free(s);
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
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	size_t y = successor_of(s, x);
	struct ring_status hs = status_of(s, h);
	sim_acquire(s, x, 9);

	struct ring_msg_token t = {hs.epoch + 0x100, 2, 0, 0, 0, hs.alive};
	ring_set_del(&t.alive, x);
	uint8_t buf[RING_WIRE_MAX];
	size_t len = craft_token(s, id_of(y), id_of(x), t, buf);
	struct ring_status before = status_of(s, x);
	sim_datagram(s, x, id_of(y), buf, len);
	struct ring_status st = status_of(s, x);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets + 1);
	CU_ASSERT(last_log(s, RING_LOG_BAD_PACKET) >= 0);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_SEND), -1); /* not even acked */
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_PERSIST), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(!st.has_token);
	CU_ASSERT_EQUAL(st.epoch, before.epoch);
	CU_ASSERT(status_of(s, h).token_held);
	assert_ring_safe(s);
	sim_free(s);
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
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t r = successor_of(s, h);
	size_t y = successor_of(s, r); /* h's predecessor */
	losses_on(s);
	lose(RING_MSG_TOKEN, id_of(h), id_of(r), -1);
	sim_acquire(s, h, 1);
	int g = last_action(s, RING_ACTION_GRANT);
	CU_ASSERT_FATAL(g >= 0);
	uint64_t fence = s->last.action[g].u.grant.fence;
	sim_acquire(s, h, 2); /* waits for the next visit */
	sim_release(s, h, 1);
	struct ring_msg pass;
	uint8_t buf[RING_WIRE_MAX];
	copy_last_token(s, id_of(r), buf, &pass);
	CU_ASSERT_FATAL(pass.u.token.counter == (uint32_t)fence);

	struct ring_msg_token back = pass.u.token;
	back.seq += 2;
	back.counter -= 1;
	size_t len = craft_token(s, id_of(y), id_of(h), back, buf);
	uint64_t mark = s->seq;
	sim_datagram(s, h, id_of(y), buf, len); /* h takes it and serves client 2 */
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);
	uint64_t second = first_grant_fence(s, h, mark);
	CU_ASSERT(second > fence);
	CU_ASSERT_EQUAL(second, fence + 1);
	losses_off(s);
	assert_ring_safe(s);
	sim_free(s);
}

/* §3.2: when the token's seq would overflow, the holder re-epochs. seq 0
 * is no hop (§2: a token of seq 0 is refused by every receiver as a bad
 * packet), so a pass at the top of the seq space without a new epoch would
 * be refused, retransmitted and skipped: a healthy member cut out of the
 * ring. 2^32 hops are out of reach of a run, so the last hop is crafted:
 * h's pass to x is replaced by one of the same epoch with seq 2^32 - 1. */
static void test_the_last_seq_of_an_epoch_is_passed_under_a_new_epoch(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 100; /* the clients below never release */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	size_t y = successor_of(s, x);
	uint32_t epoch = status_of(s, h).token_epoch;
	losses_on(s);
	lose(RING_MSG_TOKEN, id_of(h), id_of(x), 1);
	CU_ASSERT_FATAL(run_until_send(s, (int)h, RING_MSG_TOKEN, id_of(x), 500 * MS));
	struct ring_msg pass;
	uint8_t buf[RING_WIRE_MAX];
	copy_last_token(s, id_of(x), buf, &pass);
	struct ring_msg_token last = pass.u.token;
	last.seq = UINT32_MAX;
	size_t len = craft_token(s, id_of(h), id_of(x), last, buf);
	uint64_t mark = s->seq;
	sim_datagram(s, x, id_of(h), buf, len);
	CU_ASSERT_FATAL(status_of(s, x).token_held);

	/* x passes it on under a new epoch, from seq 1. */
	CU_ASSERT_FATAL(run_until_send(s, (int)x, RING_MSG_TOKEN, id_of(y), 500 * MS));
	struct ring_msg next;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, id_of(y), &next) >= 0);
	CU_ASSERT(next.u.token.epoch > epoch);
	CU_ASSERT_EQUAL(next.u.token.seq, 1);
	losses_off(s);
	for (size_t c = 0; c < 3; c++)
		sim_acquire(s, c, 40 + c);
	sim_run_for(s, 2000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_BAD_PACKET), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_SUCCESSOR_SKIP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	for (size_t c = 0; c < 3; c++)
		CU_ASSERT(count_actions(s, c, mark, RING_ACTION_GRANT) >= 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* ---- §4: fences and epochs ---- */

/* §4.1: when an epoch's counter would overflow, the holder re-epochs, and
 * grants under the new epoch only once it is confirmed (§4.4). Granting at
 * the top of the counter would wrap it to 0: a fence below every fence the
 * epoch has issued. 2^32 grants are out of reach of a run, so h's pass to
 * x is replaced by one of the same hop whose count is 2^32 - 1. */
static void test_the_last_fence_of_an_epoch_is_followed_by_a_new_epoch(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	sim_acquire(s, h, 1); /* a fence of this epoch is granted first */
	CU_ASSERT_FATAL(last_action(s, RING_ACTION_GRANT) >= 0);
	uint32_t epoch = status_of(s, h).token_epoch;
	sim_acquire(s, x, 2);
	losses_on(s);
	lose(RING_MSG_TOKEN, id_of(h), id_of(x), 1);
	sim_release(s, h, 1);
	struct ring_msg pass;
	uint8_t buf[RING_WIRE_MAX];
	copy_last_token(s, id_of(x), buf, &pass);
	struct ring_msg_token full = pass.u.token;
	full.counter = UINT32_MAX;
	size_t len = craft_token(s, id_of(h), id_of(x), full, buf);
	uint64_t mark = s->seq;
	sim_datagram(s, x, id_of(h), buf, len);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	losses_off(s);
	/* x's client is served on a later visit, under the new epoch. */
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 2000 * MS));
	uint64_t fence = first_grant_fence(s, x, mark);
	CU_ASSERT(fence >> 32 > epoch);
	assert_ring_safe(s);
	sim_free(s);
}

/* Whether the last step sent an election back to its own initiator: the
 * last hop of a round, which the initiator completes on arrival. */
static bool election_going_home(const struct sim *s, const void *arg)
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
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	uint32_t epoch = status_of(s, h).token_epoch;
	s->up[h] = false; /* the holder crashes with the token */
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(sim_run(s, s->now + 3000 * MS, election_going_home, NULL));
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
	sim_datagram(s, i, id_of(j), buf, len);
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
	assert_ring_safe(s);
	sim_free(s);
}

/* §4.3 (with §3.2's skip): a member that learns a newer epoch from a
 * heartbeat stores it and drops the older token it holds, revoking its
 * grant. x took h's pass but every ack of it was lost; h skipped x under
 * a new epoch and passed to y, heartbeating the new epoch at once. x's copy
 * and its client must be gone before y grants under the new epoch, or two
 * clients are in the region with only acks lost. */
static void test_a_skipped_members_copy_is_dropped_by_the_new_epochs_heartbeat(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 60000; /* x's client would hold on for a minute */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	size_t y = successor_of(s, x);
	uint32_t epoch = status_of(s, h).token_epoch;
	losses_on(s);
	lose(RING_MSG_TOKEN_ACK, id_of(x), id_of(h), -1);
	sim_acquire(s, x, 7);
	sim_acquire(s, y, 8);
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
	assert_ring_safe(s);
	sim_free(s);
}

/* ---- §5.1, §5.2: heartbeats and loss detection ---- */

/* §5.1: a member still retransmitting its pass heartbeats for the token.
 * With a retry budget longer than half the loss timeout, the third member
 * hears nothing else while the holder waits on a dead successor: without
 * those heartbeats it would suspect loss and call an election while the
 * token is alive and about to skip the dead member. */
static void test_a_member_retransmitting_its_pass_keeps_the_ring_hearing_the_token(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.ack_timeout_ms = 100;
	l.retries = 12; /* 1.3 s of retransmits, above loss_timeout_ms */
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	size_t y = successor_of(s, x);
	s->up[x] = false;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 3000 * MS));
	CU_ASSERT_EQUAL(count_logs(s, h, mark, RING_LOG_RETRANSMIT), l.retries);
	CU_ASSERT(count_sends(s, h, mark, RING_MSG_HEARTBEAT, id_of(y)) >= 10);
	sim_acquire(s, y, 3);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 500 * MS));
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	assert_ring_safe(s);
	sim_free(s);
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
	struct ring_layout l;
	make_resting_layout(&l, 3);
	l.lease_ms = 60000;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t h = sim_settle(s);
	size_t x = successor_of(s, h);
	size_t y = successor_of(s, x);
	uint32_t epoch = status_of(s, h).token_epoch;
	losses_on(s);
	lose(RING_MSG_TOKEN_ACK, id_of(x), id_of(h), -1);
	sim_acquire(s, x, 7);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 500 * MS));
	/* The skip's heartbeat to x and its token to y are lost. */
	lose(RING_MSG_HEARTBEAT, id_of(h), id_of(x), -1);
	lose(RING_MSG_TOKEN, id_of(h), id_of(y), -1);
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	s->up[h] = false;
	uint32_t dead = status_of(s, h).epoch;
	CU_ASSERT_FATAL(dead > epoch);
	sim_deliver_all(s);
	CU_ASSERT_FATAL(status_of(s, y).epoch == dead);
	CU_ASSERT_FATAL(status_of(s, x).epoch == epoch && status_of(s, x).granted);

	uint64_t mark = s->seq;
	sim_acquire(s, y, 8);
	sim_run_for(s, 1500 * MS);
	CU_ASSERT(count_sends(s, y, mark, RING_MSG_JOIN, id_of(x)) >= 1);
	CU_ASSERT_EQUAL(count_logs(s, x, mark, RING_LOG_MEMBER_REJOIN), 1);
	CU_ASSERT(status_of(s, y).epoch > dead);
	sim_release(s, x, 7);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 200 * MS));
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	losses_off(s);
	assert_ring_safe(s);
	sim_free(s);
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
	struct ring_layout l;
	make_layout(&l, 3);
	/* Paced, so that it never parks, and fast: each holder keeps it 1 ms,
	 * a hundredth of heartbeat_ms. */
	l.idle_pass_ms = 1;
	struct sim *s = sim_new(&l);
	sim_boot(s);
	size_t x = 1;
	s->up[x] = false;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_SUCCESSOR_SKIP, 500 * MS));
	sim_run_for(s, 200 * MS);
	s->up[x] = true;
	sim_acquire(s, x, 4);
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 4 * l.heartbeat_ms * MS));
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	assert_ring_safe(s);
	sim_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_rules_token_tests[] = {
	T_(test_an_ack_of_an_earlier_hop_does_not_end_a_lost_pass),
	T_(test_a_token_that_leaves_its_receiver_out_is_refused),
	T_(test_a_pass_that_comes_back_keeps_the_higher_grant_counter),
	T_(test_the_last_seq_of_an_epoch_is_passed_under_a_new_epoch),
	T_(test_the_last_fence_of_an_epoch_is_followed_by_a_new_epoch),
	T_(test_a_regenerated_epoch_is_above_one_learned_during_the_election),
	T_(test_a_skipped_members_copy_is_dropped_by_the_new_epochs_heartbeat),
	T_(test_a_member_retransmitting_its_pass_keeps_the_ring_hearing_the_token),
	T_(test_stale_heartbeats_are_no_live_token_and_their_sender_is_asked_to_join),
	T_(test_a_fast_ring_still_heartbeats_so_a_skipped_member_rejoins),
	CU_TEST_INFO_NULL,
};
#undef T_
