/* CUnit suite: a hostile review of laps, freshness and the other parking
 * changes made after the first review (PROTOCOL.md §3.4: laps, park_fresh,
 * may_park's refusal, uncount_pass, a park re-epoched in place, summons
 * from outsiders). Each test is a scripted history the change got wrong:
 * it failed on the commit it was written against (b54c96d) and passes since
 * the fix; the comment above it says what it showed. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "lib/harness.h"
#include "lib/suites.h"

/* Every HEARTBEAT member I sent after MARK that says PARKED. */
static size_t parked_heartbeats(const struct sim *s, size_t i, uint64_t since)
{
	size_t k = 0;
	for (size_t r = 0; r < s->n_rec[i]; r++) {
		struct ring_msg m;
		if (s->rec[i][r].seq > since && decode_send(&s->rec[i][r].a, &m) &&
		    m.type == RING_MSG_HEARTBEAT && (m.u.heartbeat.flags & RING_HB_PARKED))
			k++;
	}
	return k;
}

/* Finding L1 (cost; the same class as review_park's finding 2, by another
 * path). A parked holder that leaves (SIGTERM) runs serve -> pass_token ->
 * apply_membership, which removes it, re-epochs the token and - since
 * `parked` is still set (pass_token clears it only after apply_membership)
 * - broadcasts "PARKED at (E', 0)" in the very step in which the token
 * leaves as (E', 1). Every member with a waiting client (or one that asks
 * before the next holder heartbeats) summons the leaver, which can never
 * honour it, and keeps doing so until some later heartbeat says otherwise.
 * Fix: in apply_membership, heartbeat the re-epoched park only when the
 * token stays (e.g. clear `parked` before apply_membership in pass_token,
 * or announce from serve once the park is known to stay). */
static void test_a_leaving_parked_holder_does_not_announce_a_park_it_hands_on(void)
{
	size_t p;
	struct sim *s = sim_parked(4, RING_QUORUM_MAJORITY, &p);
	uint64_t mark = s->seq;
	sim_leave(s, p);
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0); /* handed on */
	CU_ASSERT_EQUAL(parked_heartbeats(s, p, mark), 0); /* was 1 */

	/* A member whose client asks now believes the leaver holds a park. */
	size_t x = (p + 2) % 4;
	sim_run_for(s, LATENCY);
	uint64_t mark2 = s->seq;
	sim_acquire(s, x, 9);
	CU_ASSERT_EQUAL(count_sends(s, x, mark2, RING_MSG_WANT, id_of(p)), 0); /* was 1 */
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 100 * MS));
	assert_ring_safe(s);
	sim_free(s);
}

/* Finding L2 (cost). A summoned park keeps heartbeating PARKED while the
 * local grant in progress runs out (up to lease_ms, 5 s by default): on_want
 * sets `summoned`, but send_heartbeat flags by `parked` alone. A second
 * waiter Y hears "PARKED at (E, s)" every heartbeat_ms and summons again
 * each time (summon() resends on every parked heartbeat); on_want drops
 * every one (`node->summoned`). The token is coming to Y anyway: it leaves
 * with idle = 0 and serves everyone on its way. Here: ~10 useless WANTs a
 * second per waiting member for the length of the lease.
 * Fix: flag PARKED only when `parked && !summoned` (the park is ending). */
static void test_a_summoned_park_stops_drawing_summons(void)
{
	size_t p;
	struct sim *s = sim_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 4, y = (p + 2) % 4;
	sim_acquire(s, p, 1); /* granted at once, holds its lease */
	CU_ASSERT_FATAL(status_of(s, p).granted);
	sim_acquire(s, x, 2); /* summons P: the park ends with P's grant */
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	uint64_t mark = s->seq;
	sim_acquire(s, y, 3);
	sim_run_for(s, 1000 * MS);
	CU_ASSERT(status_of(s, p).granted); /* still P's client's visit */
	size_t wants = count_sends(s, y, mark, RING_MSG_WANT, id_of(p));
	/* Y's first summons, and its resends until the next heartbeat (no
	 * longer flagged PARKED) says the park is over: at most 1 + 3 within
	 * heartbeat_ms, not one a heartbeat for the whole lease. */
	CU_ASSERT(wants <= 4); /* was 12 */
	CU_ASSERT_EQUAL(parked_heartbeats(s, p, mark), 0);
	sim_release(s, p, 1);
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 50 * MS));
	sim_release(s, x, 2);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 50 * MS));
	assert_ring_safe(s);
	sim_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_review_laps_tests[] = {
	T_(test_a_leaving_parked_holder_does_not_announce_a_park_it_hands_on),
	T_(test_a_summoned_park_stops_drawing_summons),
	CU_TEST_INFO_NULL,
};
