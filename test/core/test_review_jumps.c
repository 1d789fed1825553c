/* CUnit suite of the hostile review of jumps (wire version 6, §3.5): the
 * token's want and knows sets, walks and their freshness, WANT forwarding,
 * the relaxed floor of token_refused. A test that FAILS shows a break (its
 * comment tells the history); one that passes shows an attack defended. */
#include <CUnit/CUnit.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/node.h"
#include "core/set.h"
#include "core/wire.h"
#include "lib/harness.h"
#include "lib/suites.h"

/* ---- a partition by ring index, with one TOKEN held back by hand ---- */

struct cuts {
	bool cut[HRING_MAX][HRING_MAX]; /* [from][to], ring indices */
	int hold_from, hold_to;         /* TOKENs on that link are held, not delivered */
	struct flight held;
	bool have_held;
};

static size_t idx_of_id(uint16_t id)
{
	return (size_t)(id / 10 - 1);
}

static bool drop_cuts(const struct flight *f, const void *arg)
{
	struct cuts *c = (struct cuts *)(uintptr_t)arg;
	size_t fi = idx_of_id(f->from), ti = idx_of_id(f->to);
	if ((int)fi == c->hold_from && (int)ti == c->hold_to &&
	    ring_wire_peek_type(f->buf, f->len) == RING_MSG_TOKEN) {
		c->held = *f;
		c->have_held = true;
		return true;
	}
	return c->cut[fi][ti];
}

static void cut_sides(struct cuts *c, const size_t *a, size_t na, const size_t *b, size_t nb)
{
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			c->cut[a[i]][b[j]] = c->cut[b[j]][a[i]] = true;
}

/* ---- 1. knows counts a member whose disk forgot the epoch ----
 *
 * BREAKS I1's floor (majority: a new epoch's fences exceed every fence
 * granted before it was minted). Not new with jumps: the same history
 * fails the same way on wire version 5 (seq + 1 counted the same member),
 * and the knows set inherits the hole: §5.3's claim holds only for epochs
 * confirmed before the wiped member's query settled. Kept as a pinned known
 * gap (PROTOCOL.md §5.3, "What this promises"): the test asserts the break
 * it shows, so that whoever closes it sees this fail and turns the
 * assertion round; no fence repeats, and the resource's check orders the
 * two (the later grant's fence is the lower, and is refused there).
 *
 * Five members, ids 10..50; A = index 4, X = 0, Y = 1, B = 2, C = 3.
 * 1. The token is at A under E0 (generation g). A JOIN from B makes A
 *    re-epoch: e = (g+1, 4). A passes (e,1) to X, X accepts: knows {A,X}.
 *    Nothing of e reaches B or C (A, X, Y -> B, C cut).
 * 2. X passes (e,2) to Y; that datagram is delayed (held here). X crashes
 *    and comes back with its state_dir lost. Its EPOCH_QUERY is answered by
 *    Y, B and C (A's answer lost): all say E0, the n - n/2 = 3 it needs. X
 *    is proven with start_epoch E0: it has forgotten e.
 * 3. The delayed (e,2) reaches Y: knows {A, X, Y} = 3 = quorum, Y grants
 *    fence e|1. Then {A, Y} | {X, B, C}.
 * 4. X, B, C hear nothing, elect among themselves (3 = quorum, all proven,
 *    max_epoch E0) and the winner (index 0, 2 or 3) mints (g+1, w) < e.
 *    Confirmed by {w, ...} (3 members, none of whom knows e), it grants
 *    (g+1, w)|1 < e|1: a fence below one granted before its epoch existed.
 *
 * Fix: the proof of §5.3 must also cover epochs that get confirmed later
 * with the wiped member's forgotten bit. Minimal: a member that started
 * (any start; it cannot tell a wiped disk) counts as an election
 * participant and is accepted into knows only once all n - 1 others have
 * answered its query or it has accepted a hop in this life after being
 * proven -- the minter of any epoch it may have forgotten then answered
 * >= e (the minter persisted e before X could accept a hop of it). */
static void test_known_gap_a_wiped_members_forgotten_bit_confirms_an_epoch(void)
{
	struct ring_layout l = resting_layout(5);
	struct hring *s = hring_settled(&l, NULL);
	const size_t X = 0, Y = 1, B = 2, C = 3, A = 4;
	run_until_held(s, A);
	uint32_t e0 = status_of(s, A).token_epoch;

	static struct cuts cu;
	memset(&cu, 0, sizeof cu);
	cu.hold_from = (int)X;
	cu.hold_to = (int)Y;
	const size_t axy[] = {A, X, Y}, bc[] = {B, C};
	cut_sides(&cu, axy, 3, bc, 2);
	s->drop = drop_cuts;
	s->drop_arg = &cu;

	/* 1. A re-epochs for a JOIN of B's (B is in the ring: a restart). */
	struct ring_msg j = {.type = RING_MSG_JOIN};
	j.u.join.epoch = e0;
	hring_inject(s, A, B, j);
	uint32_t e = status_of(s, A).token_epoch;
	CU_ASSERT_FATAL(e > e0 && (e & 0xff) == A);
	CU_ASSERT_FATAL(run_until_send(s, (int)X, RING_MSG_TOKEN, id_of(Y), 500 * MS));
	CU_ASSERT_EQUAL(status_of(s, X).epoch, e);

	/* 2. X crashes with its pass in flight and comes back wiped. */
	s->up[X] = false;
	hring_run_for(s, LATENCY);
	CU_ASSERT_FATAL(cu.have_held);
	const size_t x_only[] = {X};
	memset(cu.cut, 0, sizeof cu.cut);
	/* A's answer to X is lost; Y still knows nothing of e and answers. */
	cut_sides(&cu, axy + 0, 1, x_only, 1); /* A <-> X */
	cut_sides(&cu, axy + 0, 1, bc, 2);     /* A <-> B, C */
	cu.cut[Y][B] = cu.cut[Y][C] = cu.cut[B][Y] = cu.cut[C][Y] = true;
	cu.hold_from = cu.hold_to = -1;
	hring_come_back(s, X, 0);
	CU_ASSERT_FATAL(run_until_log(s, (int)X, RING_LOG_EPOCH_LEARNED, 50 * MS));
	CU_ASSERT_FATAL(status_of(s, X).epoch < e); /* forgotten */

	/* 3. Full cut {A, Y} | {X, B, C}; the delayed hop reaches Y, whose
	 * client is granted under e. */
	memset(cu.cut, 0, sizeof cu.cut);
	const size_t ay[] = {A, Y}, xbc[] = {X, B, C};
	cut_sides(&cu, ay, 2, xbc, 3);
	hring_acquire(s, Y, 1);
	uint64_t mark = s->seq;
	hring_datagram(s, Y, cu.held.from, cu.held.buf, cu.held.len);
	uint64_t f_e = first_grant_fence(s, Y, mark);
	CU_ASSERT_FATAL(f_e >> 32 == e); /* confirmed by {A, X, Y}: X forgot */
	hring_release(s, Y, 1);

	/* 4. The other side elects and grants. */
	hring_acquire(s, X, 2);
	hring_acquire(s, B, 3);
	hring_acquire(s, C, 4);
	mark = s->seq;
	hring_run_for(s, 4000 * MS);
	CU_ASSERT(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN) >= 1);
	uint64_t lowest = UINT64_MAX;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t f = first_grant_fence(s, i, mark);
		if (f && f < lowest)
			lowest = f;
	}
	/* I1's floor would have every grant of an epoch minted after f_e was
	 * granted above it. The gap, pinned: a lower one is granted. */
	CU_ASSERT(lowest != UINT64_MAX && lowest < f_e);
	CU_ASSERT(lowest != f_e); /* no fence repeats */
	CU_ASSERT_EQUAL(s->bad_grants, 0);
	s->drop = NULL;
	hring_free(s);
}

/* ---- 2. WANT forwarding: no loop, no storm ----
 *
 * Defended. Two members each believe, from forged heartbeats (a keyless
 * ring), that the other holds the token; a WANT naming an old hop enters
 * there, and forged WANTs claim many forwards already. Forwarding goes
 * only towards a newer hop and never back to its sender, at most n - 1
 * times: the WANT dies after at most one forward between the two, and one
 * with hops >= n - 1 is not forwarded at all. */
static void test_want_between_two_stale_beliefs_is_forwarded_at_most_once(void)
{
	struct ring_layout l = default_layout(6);
	size_t p;
	struct hring *s = hring_parked(6, RING_QUORUM_MAJORITY, &p);
	size_t m1 = (p + 2) % 6, m2 = (p + 3) % 6, w = (p + 4) % 6;
	(void)l;
	struct ring_status st = status_of(s, p);
	uint32_t e = st.token_epoch;
	/* Forged: m2 "holds" at (e, 1000) as m1 hears it, m1 at (e, 2000)
	 * as m2 hears it. */
	struct ring_msg hb = {.type = RING_MSG_HEARTBEAT};
	hb.u.heartbeat.epoch = e;
	hb.u.heartbeat.seq = 1000;
	hb.u.heartbeat.beat = 1;
	hb.u.heartbeat.alive = st.alive;
	hring_inject(s, m1, m2, hb);
	hb.u.heartbeat.seq = 2000;
	hring_inject(s, m2, m1, hb);
	hring_deliver_all(s);
	uint64_t mark = s->seq;
	struct ring_msg want = {.type = RING_MSG_WANT};
	want.u.want.epoch = e;
	want.u.want.seq = 1;
	want.u.want.wanter = id_of(w);
	hring_inject(s, m1, w, want);
	hring_run_for(s, 20 * MS);
	size_t fwd = 0;
	for (size_t i = 0; i < s->n; i++)
		if (i != w)
			fwd += count_sends(s, i, mark, RING_MSG_WANT, 0) +
			       count_sends(s, i, mark, RING_MSG_WANT, id_of(m1)) +
			       count_sends(s, i, mark, RING_MSG_WANT, id_of(m2)) +
			       count_sends(s, i, mark, RING_MSG_WANT, id_of(p));
	CU_ASSERT(fwd <= 2);

	/* A WANT that claims n - 1 forwards goes nowhere. */
	mark = s->seq;
	want.u.want.hops = 5;
	hring_inject(s, m2, w, want);
	CU_ASSERT_EQUAL(count_actions(s, m2, mark, RING_ACTION_SEND), 0);
	want.u.want.hops = 0xffff;
	hring_inject(s, m2, w, want);
	CU_ASSERT_EQUAL(count_actions(s, m2, mark, RING_ACTION_SEND), 0);
	assert_safe_and_free(s);
}

/* ---- 3. a stale park's own client waits for a round ----
 *
 * Defended. A parked token grants only within loss_timeout_ms / 2 of its
 * last walk. A client asking later at the parked holder P: P's pass is
 * "from the park" and so starts no walk before a whole loss timeout, and
 * nobody else wants, so it goes to P's successor S alone -- but S's pass is
 * not from a park, the walk is due there, and the token goes round in ring
 * order before it reaches P again. So P grants only after every member
 * acked the token since the client asked. */
static void test_a_stale_parks_own_client_is_granted_only_after_a_round(void)
{
	size_t p;
	struct hring *s = hring_parked(5, RING_QUORUM_MAJORITY, &p);
	struct ring_layout l = default_layout(5);
	hring_run_for(s, (l.loss_timeout_ms * 6 / 10) * MS); /* past loss/2, before the lap */
	CU_ASSERT_FATAL(status_of(s, p).parked);
	uint64_t mark = s->seq;
	hring_acquire(s, p, 1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT_FATAL(run_until_action(s, (int)p, RING_ACTION_GRANT, 200 * MS));
	for (size_t i = 0; i < s->n; i++)
		if (i != p)
			CU_ASSERT(count_logs(s, i, mark, RING_LOG_TOKEN_RECV) >= 1);
	hring_release(s, p, 1);
	assert_safe_and_free(s);
}

/* ---- 4. a replayed WANT moves a park once ----
 *
 * Defended (a cost only). A keyless ring: W's genuine WANT is captured
 * and replayed again and again after W was served and the token parked at
 * W. A WANT has no hop check at a holder any more (it names its wanter),
 * but a replay to the old holder, now without the token, names an old
 * hop and is forwarded only towards news: to W, which is its own wanter.
 * Nothing moves. */
static struct flight want_seen_flight;
static bool capture_want(const struct flight *f, const void *arg)
{
	(void)arg;
	if (ring_wire_peek_type(f->buf, f->len) == RING_MSG_WANT && want_seen_flight.len == 0)
		want_seen_flight = *f;
	return false;
}

static void test_a_replayed_want_moves_nothing_once_served(void)
{
	size_t p;
	struct hring *s = hring_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t w = (p + 2) % 4;
	memset(&want_seen_flight, 0, sizeof want_seen_flight);
	s->drop = capture_want;
	hring_acquire(s, w, 7);
	CU_ASSERT_FATAL(run_until_action(s, (int)w, RING_ACTION_GRANT, 50 * MS));
	hring_release(s, w, 7);
	s->drop = NULL;
	CU_ASSERT_FATAL(want_seen_flight.len > 0);
	hring_run_for(s, 30 * MS);
	size_t holder = s->n;
	for (size_t i = 0; i < s->n; i++)
		if (status_of(s, i).token_held)
			holder = i;
	CU_ASSERT_FATAL(holder < s->n);
	uint64_t mark = s->seq;
	for (int k = 0; k < 5; k++) {
		size_t to = idx_of_id(want_seen_flight.to);
		hring_datagram(s, to, want_seen_flight.from, want_seen_flight.buf,
			       want_seen_flight.len);
		hring_run_for(s, 10 * MS);
	}
	CU_ASSERT(count_logs_all(s, mark, RING_LOG_TOKEN_PASS) <= 1);
	assert_safe_and_free(s);
}

CU_TestInfo ring_test_review_jumps_tests[] = {
	{"test_known_gap_a_wiped_members_forgotten_bit_confirms_an_epoch",
	 test_known_gap_a_wiped_members_forgotten_bit_confirms_an_epoch},
	{"test_want_between_two_stale_beliefs_is_forwarded_at_most_once",
	 test_want_between_two_stale_beliefs_is_forwarded_at_most_once},
	{"test_a_stale_parks_own_client_is_granted_only_after_a_round",
	 test_a_stale_parks_own_client_is_granted_only_after_a_round},
	{"test_a_replayed_want_moves_nothing_once_served",
	 test_a_replayed_want_moves_nothing_once_served},
	CU_TEST_INFO_NULL,
};
