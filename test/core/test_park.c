/* CUnit suite: one scripted history per rule of the parked token and its
 * summons (PROTOCOL.md §3.4), on the default layout (idle_pass_ms = 0). */
#include <CUnit/CUnit.h>
#include <string.h>

#include "lib/harness.h"
#include "lib/suites.h"

static size_t parked_count(const struct sim *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		k += s->up[i] && status_of(s, i).parked;
	return k;
}

static size_t token_sends(const struct sim *s, uint64_t since)
{
	return count_logs_all(s, since, RING_LOG_TOKEN_PASS) +
	       count_logs_all(s, since, RING_LOG_RETRANSMIT);
}

/* Drop hook: loses every WANT while *arg (a bool) is true. */
static bool drop_wants(const struct flight *f, const void *arg)
{
	return *(const bool *)arg && ring_wire_peek_type(f->buf, f->len) == RING_MSG_WANT;
}

/* A whole rotation that finds nobody waiting parks the token; it then
 * heartbeats, with the parked flag, and moves only for a lap once a loss
 * timeout, which is the same park: logged once. */
static void test_an_unwanted_rotation_parks_the_token_which_then_only_heartbeats(void)
{
	struct ring_layout l;
	make_layout(&l, 4);
	struct sim *s = sim_new(&l);
	for (size_t i = 0; i < 4; i++)
		sim_start(s, i);
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_TOKEN_PARK, 2000 * MS));
	size_t p = (size_t)s->last_node;
	/* Every member passed it on unwanted, the one that made it first. */
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_PASS), 3);
	/* Parked on a receipt: acked, then said at once. */
	char want[96];
	snprintf(want, sizeof want, "send token_ack>%u, token_recv, token_park, send heartbeat>*",
		 id_of((p + 3) % 4));
	ASSERT_STEP_TRACE(s, want);
	struct ring_msg hb;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0);
	CU_ASSERT_EQUAL(hb.u.heartbeat.flags, RING_HB_PARKED);
	CU_ASSERT_EQUAL(parked_count(s), 1);

	uint64_t mark = s->seq;
	sim_run_for(s, 10 * l.loss_timeout_ms * MS);
	size_t hops = token_sends(s, mark); /* a lap of four hops a loss timeout */
	CU_ASSERT(hops >= 9 * 4 && hops <= 10 * 4);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_PARK), 0);
	CU_ASSERT(status_of(s, p).parked);
	size_t hbs = count_sends(s, p, mark, RING_MSG_HEARTBEAT, 0);
	CU_ASSERT(hbs >= 95 && hbs <= 111); /* one a heartbeat_ms, and one per lap */
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	assert_ring_safe(s);
	sim_free(s);
}

/* A paced ring (idle_pass_ms > 0) keeps its token moving. */
static void test_a_paced_token_never_parks(void)
{
	struct ring_layout l;
	make_resting_layout(&l, 3);
	struct sim *s = sim_new(&l);
	sim_boot(s);
	uint64_t mark = s->seq;
	sim_run_for(s, 2000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_PARK), 0);
	CU_ASSERT(token_sends(s, mark) >= 30);
	sim_free(s);
}

/* A client at the member where the token parks is granted at once, and
 * again and again while nobody else asks: no datagram at all. */
static void test_parked_holder_grants_its_own_clients_without_a_datagram(void)
{
	size_t p;
	struct sim *s = sim_parked(3, RING_QUORUM_MAJORITY, &p);
	uint64_t fence = 0;
	for (uint64_t c = 1; c <= 5; c++) {
		sim_acquire(s, p, c);
		ASSERT_STEP_TRACE(s, "grant, cs_enter");
		struct ring_status st = status_of(s, p);
		CU_ASSERT(st.fence > fence);
		fence = st.fence;
		sim_release(s, p, c);
		ASSERT_STEP_TRACE(s, "cs_exit");
		CU_ASSERT(status_of(s, p).parked);
	}
	assert_ring_safe(s);
	sim_free(s);
}

/* A client elsewhere summons the token: one WANT to where it parks, which
 * sends it on at once, and it comes in ring order. */
static void test_a_client_elsewhere_summons_the_token_and_is_served(void)
{
	size_t p;
	struct sim *s = sim_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 2) % 4;
	sim_acquire(s, x, 7);
	char want[64];
	snprintf(want, sizeof want, "send want>%u, token_summon", id_of(p));
	ASSERT_STEP_TRACE(s, want);
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	snprintf(want, sizeof want, "token_unpark, send token>%u, token_pass",
		 id_of(successor_of(s, p)));
	ASSERT_STEP_TRACE(s, want);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 10 * MS));
	sim_release(s, x, 7);
	/* Nobody else waits: after one rotation it parks where it was used. */
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_TOKEN_PARK, 50 * MS));
	CU_ASSERT_EQUAL((size_t)s->last_node, x);
	CU_ASSERT_EQUAL(status_of(s, x).counters.summons, 1);
	assert_ring_safe(s);
	sim_free(s);
}

/* Fairness: a summons during a local grant ends the visit with that grant;
 * the parked holder's other clients, queued or asking again, wait for the
 * token's return. */
static void test_a_summons_ends_the_parked_visit_after_the_grant_in_progress(void)
{
	size_t p;
	struct sim *s = sim_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 3;
	sim_acquire(s, p, 1);
	sim_acquire(s, p, 4); /* queued behind 1 */
	sim_acquire(s, x, 2);
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN, -1, NULL), -1); /* in the CS */
	sim_release(s, p, 1);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1); /* not 4 */
	sim_acquire(s, p, 3); /* asks again at once: waits its turn too */
	ASSERT_STEP_TRACE(s, "");
	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 10 * MS));
	CU_ASSERT_EQUAL((size_t)s->last_node, x);
	sim_release(s, x, 2);
	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 10 * MS));
	CU_ASSERT_EQUAL((size_t)s->last_node, p);
	assert_ring_safe(s);
	sim_free(s);
}

/* A summons has no authority and may be lost: the summoner sends it again
 * after ack_timeout_ms, then at doubling intervals up to heartbeat_ms,
 * until the token comes. */
static void test_a_lost_summons_is_sent_again_backing_off(void)
{
	size_t p;
	struct sim *s = sim_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 3;
	bool lose = true;
	s->drop = drop_wants;
	s->drop_arg = &lose;
	uint64_t t0 = s->now, mark = s->seq;
	sim_acquire(s, x, 7);
	uint64_t at[5];
	for (int k = 0; k < 5; k++) {
		CU_ASSERT_FATAL(run_until_send(s, (int)x, RING_MSG_WANT, id_of(p), 200 * MS));
		at[k] = s->now;
	}
	CU_ASSERT_EQUAL(at[0] - t0, 20 * MS);
	CU_ASSERT_EQUAL(at[1] - at[0], 40 * MS);
	CU_ASSERT_EQUAL(at[2] - at[1], 80 * MS);
	CU_ASSERT(at[3] - at[2] <= 100 * MS); /* the cap, or a parked heartbeat first */
	CU_ASSERT(at[4] - at[3] <= 100 * MS);
	CU_ASSERT_EQUAL(count_logs(s, x, mark, RING_LOG_TOKEN_SUMMON), 1); /* resends are counted */
	lose = false;
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 200 * MS));
	s->drop = NULL;
	assert_ring_safe(s);
	sim_free(s);
}

/* A WANT for another park (an old one replayed, a forged one), and a second
 * WANT for the same park, move nothing. */
static void test_a_summons_for_another_park_or_a_second_one_moves_nothing(void)
{
	size_t p;
	struct sim *s = sim_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 3;
	struct ring_status st = status_of(s, p);
	uint8_t buf[RING_WIRE_MAX];
	const uint32_t wrong[][2] = {
		{st.token_epoch, 1}, {st.token_epoch - 1, 2}, {st.token_epoch + 0x100, 2}};
	uint32_t seq = 0;
	struct ring_msg hb;
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0);
	seq = hb.u.heartbeat.seq;
	for (size_t k = 0; k < 3; k++) {
		size_t len = want_datagram(s, x, p, wrong[k][0],
					   wrong[k][1] == 2 ? seq : wrong[k][1] + seq, buf);
		sim_datagram(s, p, id_of(x), buf, len);
		ASSERT_STEP_TRACE(s, "");
		CU_ASSERT(status_of(s, p).parked);
	}
	size_t len = want_datagram(s, x, p, st.token_epoch, seq, buf);
	sim_datagram(s, p, id_of(x), buf, len);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0);
	sim_datagram(s, p, id_of(x), buf, len); /* the duplicate */
	ASSERT_STEP_TRACE(s, "");
	assert_ring_safe(s);
	sim_free(s);
}

/* A parked token grants only while its last lap is recent: a client asking
 * later sends it round once first. Cut off from everyone, the holder then
 * finds out, as a moving token would, instead of granting for ever. */
static void test_a_parked_token_grants_late_only_after_a_lap(void)
{
	size_t p;
	struct sim *s = sim_parked(3, RING_QUORUM_MAJORITY, &p);
	sim_run_for(s, s->layout.loss_timeout_ms / 2 * MS);
	sim_acquire(s, p, 1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, (int)p, RING_ACTION_GRANT, 10 * MS));
	sim_release(s, p, 1);

	/* The same, cut off: the lap fails and nothing is granted. */
	CU_ASSERT_FATAL(status_of(s, p).parked);
	for (size_t i = 0; i < 3; i++)
		s->up[i] = i == p;
	sim_run_for(s, s->layout.loss_timeout_ms / 2 * MS);
	uint64_t mark = s->seq;
	sim_acquire(s, p, 2);
	sim_run_for(s, 2 * s->layout.loss_timeout_ms * MS);
	CU_ASSERT_EQUAL(count_actions(s, p, mark, RING_ACTION_GRANT), 0);
	CU_ASSERT(!status_of(s, p).has_token);
	sim_free(s);
}

/* An idle parked ring still finds a member that died: the next lap skips
 * it, as a moving token would, and the token parks again without it. */
static void test_a_lap_finds_a_member_that_died_while_the_token_was_parked(void)
{
	size_t p;
	struct sim *s = sim_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t dead = (p + 2) % 4;
	s->up[dead] = false;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_SUCCESSOR_SKIP,
				      (s->layout.loss_timeout_ms + 200) * MS));
	sim_run_for(s, 100 * MS);
	CU_ASSERT_EQUAL(parked_count(s), 1); /* back where it lapped from */
	CU_ASSERT(status_of(s, p).parked);
	for (size_t i = 0; i < 4; i++) {
		struct ring_status st = status_of(s, i);
		if (i != dead)
			CU_ASSERT_FALSE(ring_set_has(&st.alive, dead));
	}
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	assert_ring_safe(s);
	sim_free(s);
}

/* A leave re-epochs the parked token where it rests: a new park, said at
 * once, so that summons name it; and a summons from the member that left,
 * which the token no longer counts, moves nothing. */
static void test_a_park_re_epoched_in_place_is_announced_and_outsiders_cannot_summon(void)
{
	size_t p;
	struct sim *s = sim_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t o = (p + 2) % 4;
	uint32_t old = status_of(s, p).token_epoch;
	sim_leave(s, o);
	uint64_t mark = s->seq;
	sim_run_for(s, 3 * MS);
	s->up[o] = false;
	struct ring_status st = status_of(s, p);
	CU_ASSERT_FATAL(st.parked);
	CU_ASSERT(st.token_epoch > old);
	CU_ASSERT_FALSE(ring_set_has(&st.alive, o));
	bool said = false;
	for (size_t k = 0; k < s->n_rec[p]; k++) {
		struct ring_msg m;
		if (s->rec[p][k].seq > mark && decode_send(&s->rec[p][k].a, &m) &&
		    m.type == RING_MSG_HEARTBEAT && m.u.heartbeat.epoch == st.token_epoch &&
		    (m.u.heartbeat.flags & RING_HB_PARKED))
			said = true;
	}
	CU_ASSERT(said);

	uint32_t seq = 0;
	for (size_t k = 0; k < s->n_rec[p]; k++) {
		struct ring_msg m;
		if (decode_send(&s->rec[p][k].a, &m) && m.type == RING_MSG_HEARTBEAT)
			seq = m.u.heartbeat.seq; /* the park's hop, the latest said */
	}
	uint8_t buf[RING_WIRE_MAX];
	size_t len = want_datagram(s, o, p, st.token_epoch, seq, buf);
	sim_datagram(s, p, id_of(o), buf, len);
	ASSERT_STEP_TRACE(s, "");
	CU_ASSERT(status_of(s, p).parked);
	assert_ring_safe(s);
	sim_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_rules_park_tests[] = {
	T_(test_an_unwanted_rotation_parks_the_token_which_then_only_heartbeats),
	T_(test_a_paced_token_never_parks),
	T_(test_parked_holder_grants_its_own_clients_without_a_datagram),
	T_(test_a_client_elsewhere_summons_the_token_and_is_served),
	T_(test_a_summons_ends_the_parked_visit_after_the_grant_in_progress),
	T_(test_a_lost_summons_is_sent_again_backing_off),
	T_(test_a_summons_for_another_park_or_a_second_one_moves_nothing),
	T_(test_a_parked_token_grants_late_only_after_a_lap),
	T_(test_a_lap_finds_a_member_that_died_while_the_token_was_parked),
	T_(test_a_park_re_epoched_in_place_is_announced_and_outsiders_cannot_summon),
	CU_TEST_INFO_NULL,
};
