/* CUnit suite: a hostile review of token parking and summons (PROTOCOL.md
 * §3.4, commit bdf922a). Each test is a scripted history that the change
 * got wrong: each failed there, and passes since the finding it is named
 * after was fixed (PROTOCOL.md §3.4, "What the review of this section
 * found"). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "lib/harness.h"
#include "lib/suites.h"

/* Finding 1 (liveness). quorum = none: the token is parked at P when every
 * other member leaves gracefully. P applies the LEAVEs in place (on_leave ->
 * apply_membership), so it is now alone, and still `parked`. Nothing ever
 * clears the flag again (only pass_token, on_token, regenerate, drop_token
 * do, and an alone holder does none of them), and `arrived` never moves.
 * Once loss_timeout_ms/2 has gone by, park_fresh() is false for ever, and an
 * alone holder neither grants nor passes: serve() returns at `if (alone)`.
 * P's own client waits for ever, on the only member of a working ring. */
static void test_alone_parked_holder_never_grants_after_the_others_leave(void)
{
	size_t p;
	struct sim *s = sim_parked(3, RING_QUORUM_NONE, &p);
	for (size_t k = 1; k < 3; k++) {
		size_t o = (p + k) % 3;
		sim_leave(s, o);
		sim_run_for(s, 5 * MS);
		s->up[o] = false; /* gone: its process exited */
	}
	CU_ASSERT_FATAL(status_of(s, p).token_held);
	CU_ASSERT_EQUAL(status_of(s, p).successor, id_of(p)); /* alone */
	CU_ASSERT(!status_of(s, p).parked); /* a park is for a ring */

	/* While the park is fresh, it grants; once stale, never again. */
	sim_run_for(s, s->layout.loss_timeout_ms * MS);
	uint64_t mark = s->seq;
	sim_acquire(s, p, 1);
	sim_run_for(s, 10 * s->layout.loss_timeout_ms * MS);
	CU_ASSERT_EQUAL(count_actions(s, p, mark, RING_ACTION_GRANT), 1); /* FAILS: 0 */
	CU_ASSERT_EQUAL(status_of(s, p).queued, 0);                      /* FAILS: 1 */
	assert_ring_safe(s);
	sim_free(s);
}

/* Finding 2 (cost; misleads summoners). pass_token() sends a due heartbeat
 * *before* it clears `parked`: a summons (or a stale local request) that
 * arrives at the instant the parked holder's heartbeat falls due makes it
 * broadcast "PARKED at (E, s)" in the very step in which the token leaves
 * as (E, s+1). Every member that hears it believes the token parks at P,
 * summons P with a hop P no longer has, and keeps doing so (ack_timeout,
 * doubling to heartbeat_ms) until some later heartbeat corrects it. */
static void test_a_passing_holder_never_heartbeats_parked(void)
{
	size_t p;
	struct sim *s = sim_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 2) % 4, y = (p + 3) % 4;
	/* P's next heartbeat is due heartbeat_ms after this one. */
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	uint64_t due = s->now + s->layout.heartbeat_ms * MS;
	sim_run(s, due - LATENCY, NULL, NULL);
	CU_ASSERT_EQUAL(s->now, due - LATENCY);
	sim_acquire(s, x, 7); /* its WANT lands exactly when P's heartbeat is due */
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0); /* the token moves on */
	struct ring_msg hb;
	if (last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0)
		CU_ASSERT_EQUAL(hb.u.heartbeat.flags & RING_HB_PARKED, 0); /* FAILS */

	/* Y, whose client asks now, summons a park that no longer exists. */
	uint64_t mark = s->seq;
	sim_run_for(s, 2 * MS);
	sim_acquire(s, y, 8);
	CU_ASSERT_EQUAL(count_sends(s, y, mark, RING_MSG_WANT, id_of(p)), 0); /* FAILS: 1 */
	CU_ASSERT_FATAL(status_of(s, x).granted); /* X was served on the way */
	sim_release(s, x, 7);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 50 * MS));
	assert_ring_safe(s);
	sim_free(s);
}

/* Finding 3 (safety: I2 with its precondition on). on_token now sends the
 * ack of a receipt *after* serve(), i.e. after the TOKEN it passes on at
 * once. A member that crashes (SIGKILL, OOM, power) between those two
 * sendto()s - a crash-stop fault, which keeps I2's precondition - has handed
 * the token on but never acked it. Its predecessor retries, skips it, and
 * re-epochs: a second token, while the first one, never lost, goes on under
 * the old epoch. Before bdf922a the ack went first, and the same cut lost
 * the token (an election) instead of copying it. (The simulator's torn
 * steps cut only between a PERSIST and the next SEND, so they never cut
 * between these two sends.)
 *
 * History (default layout, 5 members, majority 3; A parked, B..F after it;
 * every datagram 1 ms, nothing lost): F's client summons A; A passes (E,s+1)
 * to B; B passes (E,s+2) to C and dies before its ack to A leaves; C, D pass
 * on; F's client enters under E and stays (lease 5 s). D's client asks
 * after the token went by. A retries three times, skips B at +80 ms,
 * heartbeats E' and passes (E',1) to C, which passes (E',2) to D: confirmed
 * (seq + 1 = 3), so D grants under E'. A's heartbeat to F arrives 2 ms later
 * than the one to C (a delay far below late_us = 40 ms, so I2 is still
 * checked): F's client is still inside under E when D's enters. */
struct crash_cut {
	uint16_t b, a;      /* the crasher and its predecessor */
	bool b_passed;      /* B sent its TOKEN: it dies right after */
	uint16_t holder, f; /* hold the skipper's heartbeat to F */
	bool hold_armed;
	struct flight held;
	bool have_held;
};

static bool crash_cut_drop(const struct flight *fl, const void *arg)
{
	struct crash_cut *c = (struct crash_cut *)arg;
	enum ring_msg_type t = ring_wire_peek_type(fl->buf, fl->len);
	if (fl->from == c->b && c->b_passed)
		return true; /* never sent: B died right after its TOKEN */
	if (fl->from == c->b && t == RING_MSG_TOKEN)
		c->b_passed = true;
	if (c->hold_armed && !c->have_held && fl->from == c->holder && fl->to == c->f &&
	    t == RING_MSG_HEARTBEAT) {
		c->held = *fl; /* delivered a moment later, by hand */
		c->have_held = true;
		return true;
	}
	return false;
}

static void test_a_crash_between_pass_and_ack_copies_the_token(void)
{
	size_t a;
	struct sim *s = sim_parked(5, RING_QUORUM_MAJORITY, &a);
	size_t b = (a + 1) % 5, d = (a + 3) % 5, f = (a + 4) % 5;
	struct crash_cut cut = {.b = id_of(b), .a = id_of(a), .holder = id_of(a), .f = id_of(f)};
	s->drop = crash_cut_drop;
	s->drop_arg = &cut;

	sim_acquire(s, f, 41); /* summons A */
	/* B takes the token and passes it on in one step: then it dies. */
	struct want w = {(int)b, RING_ACTION_LOG, RING_LOG_TOKEN_PASS, -1};
	CU_ASSERT_FATAL(sim_run(s, s->now + 20 * MS, want_met, &w));
	s->up[b] = false;
	CU_ASSERT_FATAL(run_until_action(s, (int)f, RING_ACTION_GRANT, 10 * MS));
	uint32_t old_epoch = status_of(s, f).token_epoch;
	sim_acquire(s, d, 42); /* after the token went by */

	/* Acked before it was passed on (the fix), the hop is A's no more:
	 * no skip copies it, and D waits for F's client. With the ack after
	 * the pass, A skipped B at +80 ms and D granted under a new epoch
	 * while F's client was still inside under the old one. */
	cut.hold_armed = true;
	sim_run_for(s, 200 * MS);
	CU_ASSERT(!(status_of(s, f).granted && status_of(s, d).granted));
	CU_ASSERT(s->max_granted <= 1);
	CU_ASSERT_EQUAL(status_of(s, d).counters.cs_entries, 0);
	(void)old_epoch;
	if (cut.have_held)
		sim_datagram(s, f, cut.held.from, cut.held.buf, cut.held.len);
	s->drop = NULL;
	CU_ASSERT_EQUAL(s->bad_grants, 0);
	CU_ASSERT_EQUAL(s->fence_regressions, 0); /* I1 holds: E' fences are higher */
	sim_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_review_park_tests[] = {
	T_(test_alone_parked_holder_never_grants_after_the_others_leave),
	T_(test_a_passing_holder_never_heartbeats_parked),
	T_(test_a_crash_between_pass_and_ack_copies_the_token),
	CU_TEST_INFO_NULL,
};
