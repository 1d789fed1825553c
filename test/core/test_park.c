/* CUnit suite of the parked token and its summons (PROTOCOL.md §3.4;
 * ring/core/park.c), on the default layout (idle_pass_ms = 0): one scripted
 * history per rule, then the histories of the two hostile reviews of parking. */
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

static size_t parked_count(const struct hring *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++)
		k += s->up[i] && status_of(s, i).parked;
	return k;
}

static size_t token_sends(const struct hring *s, uint64_t since)
{
	return count_logs_all(s, since, RING_LOG_TOKEN_PASS) +
	       count_logs_all(s, since, RING_LOG_RETRANSMIT);
}

/* Drop hook: loses every WANT while *arg (a bool) is true. */
static bool drop_wants(const struct flight *f, const void *arg)
{
	return *(const bool *)arg && ring_wire_peek_type(f->buf, f->len) == RING_MSG_WANT;
}

/* A token nobody wants parks where it is, at once (§3.5: its want set
 * is empty); its next heartbeat says PARKED, and it moves only for a lap
 * once a loss timeout, which is the same park: logged once. */
static void test_an_unwanted_token_parks_at_once_and_then_only_heartbeats(void)
{
	struct ring_layout l = default_layout(4);
	struct hring *s = hring_started(&l);
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_TOKEN_PARK, 2000 * MS));
	size_t p = (size_t)s->last_node;
	/* Made there and kept: no pass, and no broadcast of its own (the
	 * regeneration's heartbeat went just before). */
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_PASS), 0);
	char want[128];
	snprintf(want, sizeof want, "send election_ack>%u, election_won, persist, token_regen, "
		 "send heartbeat>*, token_park", id_of((p + 3) % 4));
	ASSERT_STEP_TRACE(s, want);
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	struct ring_msg hb;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0);
	CU_ASSERT_EQUAL(hb.u.heartbeat.flags, RING_HB_PARKED);
	CU_ASSERT_EQUAL(parked_count(s), 1);

	uint64_t mark = s->seq;
	hring_run_for(s, 10 * l.loss_timeout_ms * MS);
	size_t hops = token_sends(s, mark); /* a lap of four hops a loss timeout */
	CU_ASSERT(hops >= 9 * 4 && hops <= 10 * 4);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_PARK), 0);
	CU_ASSERT(status_of(s, p).parked);
	size_t hbs = count_sends(s, p, mark, RING_MSG_HEARTBEAT, 0);
	CU_ASSERT(hbs >= 95 && hbs <= 111); /* one a heartbeat_ms, and one per lap */
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_LOSS_SUSPECT), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	assert_safe_and_free(s);
}

/* A paced ring (idle_pass_ms > 0) keeps its token moving. */
static void test_a_paced_token_never_parks(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = hring_new(&l);
	hring_boot(s);
	uint64_t mark = s->seq;
	hring_run_for(s, 2000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_PARK), 0);
	CU_ASSERT(token_sends(s, mark) >= 30);
	hring_free(s);
}

/* A client at the member where the token parks is granted at once, and
 * again and again while nobody else asks: no datagram at all. */
static void test_parked_holder_grants_its_own_clients_without_a_datagram(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	uint64_t fence = 0;
	for (uint64_t c = 1; c <= 5; c++) {
		hring_acquire(s, p, c);
		ASSERT_STEP_TRACE(s, "grant, cs_enter");
		struct ring_status st = status_of(s, p);
		CU_ASSERT(st.fence > fence);
		fence = st.fence;
		hring_release(s, p, c);
		ASSERT_STEP_TRACE(s, "cs_exit");
		CU_ASSERT(status_of(s, p).parked);
	}
	assert_safe_and_free(s);
}

/* A client elsewhere summons the token: one WANT to where the last
 * heartbeat said it parks, then the same to everyone (a wait's first
 * summons, §3.5), and the token jumps straight to it, past the member in
 * between; nobody else waiting, it parks there at once. */
static void test_a_client_elsewhere_summons_the_token_and_is_served(void)
{
	size_t p;
	struct hring *s = hring_parked(4, RING_QUORUM_MAJORITY, &p);
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	hring_run_for(s, 2 * MS); /* everyone heard where it parks */
	size_t x = (p + 2) % 4;
	uint64_t mark = s->seq;
	hring_acquire(s, x, 7);
	char want[64];
	snprintf(want, sizeof want, "send want>%u, send want>*, token_summon", id_of(p));
	ASSERT_STEP_TRACE(s, want);
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	snprintf(want, sizeof want, "token_unpark, send token>%u, token_pass", id_of(x));
	ASSERT_STEP_TRACE(s, want);
	CU_ASSERT_FATAL(run_until_action(s, (int)x, RING_ACTION_GRANT, 10 * MS));
	snprintf(want, sizeof want, "send token_ack>%u, token_recv, token_park, grant, cs_enter",
		 id_of(p));
	ASSERT_STEP_TRACE(s, want);
	CU_ASSERT_EQUAL(count_logs(s, (p + 1) % 4, mark, RING_LOG_TOKEN_RECV), 0);
	hring_release(s, x, 7);
	ASSERT_STEP_TRACE(s, "cs_exit");
	CU_ASSERT(status_of(s, x).parked);
	CU_ASSERT_EQUAL(status_of(s, x).counters.summons, 1);
	CU_ASSERT_EQUAL(token_sends(s, mark), 1); /* two datagrams: the WANT and one hop */
	assert_safe_and_free(s);
}

/* Fairness: a summons during a local grant ends the visit with that grant;
 * the parked holder's other clients, queued or asking again, wait for the
 * token's return. */
static void test_a_summons_ends_the_parked_visit_after_the_grant_in_progress(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 3;
	hring_acquire(s, p, 1);
	hring_acquire(s, p, 4); /* queued behind 1 */
	hring_acquire(s, x, 2);
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN, -1, NULL), -1); /* in the CS */
	hring_release(s, p, 1);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1); /* not 4 */
	hring_acquire(s, p, 3); /* asks again at once: waits its turn too */
	ASSERT_STEP_TRACE(s, "");
	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 10 * MS));
	CU_ASSERT_EQUAL((size_t)s->last_node, x);
	hring_release(s, x, 2);
	CU_ASSERT_FATAL(run_until_action(s, -1, RING_ACTION_GRANT, 10 * MS));
	CU_ASSERT_EQUAL((size_t)s->last_node, p);
	assert_safe_and_free(s);
}

/* A summons has no authority and may be lost: the summoner sends it again
 * after heartbeat_ms, then at doubling intervals up to loss_timeout_ms,
 * until the token comes (§3.5: a heartbeat's want set would tell it the
 * summons arrived). */
static void test_a_lost_summons_is_sent_again_backing_off(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 3;
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	hring_run_for(s, 2 * MS); /* x heard where it parks */
	bool lose = true;
	s->drop = drop_wants;
	s->drop_arg = &lose;
	uint64_t t0 = s->now, mark = s->seq;
	hring_acquire(s, x, 7);
	char want[64];
	snprintf(want, sizeof want, "send want>%u, send want>*, token_summon", id_of(p));
	ASSERT_STEP_TRACE(s, want);
	uint64_t at[3];
	for (int k = 0; k < 3; k++) {
		CU_ASSERT_FATAL(run_until_send(s, (int)x, RING_MSG_WANT, id_of(p), 500 * MS));
		at[k] = s->now;
	}
	CU_ASSERT_EQUAL(at[0] - t0, 100 * MS);
	CU_ASSERT_EQUAL(at[1] - at[0], 200 * MS);
	CU_ASSERT_EQUAL(at[2] - at[1], 400 * MS);
	CU_ASSERT_EQUAL(count_logs(s, x, mark, RING_LOG_TOKEN_SUMMON), 1); /* resends are counted */
	/* Only a wait's first summons goes to all (§3.5); the resends go to
	 * the named holder alone. Kills summon-all-always. */
	CU_ASSERT_EQUAL(count_sends(s, x, mark, RING_MSG_WANT, 0), 1);
	lose = false;
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 1200 * MS));
	s->drop = NULL;
	assert_safe_and_free(s);
}

/* A WANT names its wanter, not a park (§3.5): one naming a wanter that is
 * not a member, or the holder itself, moves nothing; one from a member
 * sends the token to it whatever hop it names (an old one too: at worst a
 * visit for nothing); and a second one, a duplicate, moves nothing more. */
static void test_a_summons_for_nobody_or_a_second_one_moves_nothing(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 3;
	struct ring_status st = status_of(s, p);
	uint8_t buf[RING_WIRE_MAX];
	struct ring_msg m;
	size_t len = want_datagram(s, x, p, st.token_epoch, 1, buf);
	CU_ASSERT_FATAL(ring_wire_decode(buf, len, &m) == 0);
	const uint16_t nobody[] = {999, id_of(p)};
	for (size_t k = 0; k < 2; k++) {
		m.u.want.wanter = nobody[k];
		uint8_t forged[RING_WIRE_MAX];
		int n = ring_wire_encode(&m, forged, sizeof forged);
		CU_ASSERT_FATAL(n > 0);
		hring_datagram(s, p, id_of(x), forged, (size_t)n);
		ASSERT_STEP_TRACE(s, "");
		CU_ASSERT(status_of(s, p).parked);
	}
	len = want_datagram(s, x, p, st.token_epoch - 0x100, 1, buf); /* an old hop */
	hring_datagram(s, p, id_of(x), buf, len);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(x), NULL) >= 0);
	hring_datagram(s, p, id_of(x), buf, len); /* the duplicate */
	ASSERT_STEP_TRACE(s, "");
	assert_safe_and_free(s);
}

/* A parked token grants only while its last lap is recent: a client asking
 * later sends it round once first. Cut off from everyone, the holder then
 * finds out, as a moving token would, instead of granting for ever. */
static void test_a_parked_token_grants_late_only_after_a_lap(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	hring_run_for(s, s->layout.loss_timeout_ms / 2 * MS);
	hring_acquire(s, p, 1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, (int)p, RING_ACTION_GRANT, 10 * MS));
	hring_release(s, p, 1);

	/* The same, cut off: the lap fails and nothing is granted. */
	CU_ASSERT_FATAL(status_of(s, p).parked);
	for (size_t i = 0; i < 3; i++)
		s->up[i] = i == p;
	hring_run_for(s, s->layout.loss_timeout_ms / 2 * MS);
	uint64_t mark = s->seq;
	hring_acquire(s, p, 2);
	hring_run_for(s, 2 * s->layout.loss_timeout_ms * MS);
	CU_ASSERT_EQUAL(count_actions(s, p, mark, RING_ACTION_GRANT), 0);
	CU_ASSERT(!status_of(s, p).has_token);
	hring_free(s);
}

/* An idle parked ring still finds a member that died: the next lap skips
 * it, as a moving token would, and the token parks again without it. */
static void test_a_lap_finds_a_member_that_died_while_the_token_was_parked(void)
{
	size_t p;
	struct hring *s = hring_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t dead = (p + 2) % 4;
	s->up[dead] = false;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_SUCCESSOR_SKIP,
				      (s->layout.loss_timeout_ms + 200) * MS));
	hring_run_for(s, 100 * MS);
	CU_ASSERT_EQUAL(parked_count(s), 1); /* back where it lapped from */
	CU_ASSERT(status_of(s, p).parked);
	for (size_t i = 0; i < 4; i++) {
		struct ring_status st = status_of(s, i);
		if (i != dead)
			CU_ASSERT_FALSE(ring_set_has(&st.alive, dead));
	}
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	assert_safe_and_free(s);
}

/* A leave re-epochs the parked token where it rests: a new park, said at
 * once, so that summons name it; and a summons from the member that left,
 * which the token no longer counts, moves nothing. */
static void test_a_park_re_epoched_in_place_is_announced_and_outsiders_cannot_summon(void)
{
	size_t p;
	struct hring *s = hring_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t o = (p + 2) % 4;
	uint32_t old = status_of(s, p).token_epoch;
	hring_leave(s, o);
	uint64_t mark = s->seq;
	hring_run_for(s, 3 * MS);
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
	hring_datagram(s, p, id_of(o), buf, len);
	ASSERT_STEP_TRACE(s, "");
	CU_ASSERT(status_of(s, p).parked);
	assert_safe_and_free(s);
}

/* ---- review_park: a hostile review of token parking and summons ----
 * (PROTOCOL.md §3.4, commit bdf922a). Each test is a scripted history that
 * the change got wrong: each failed there, and passes since the finding it
 * is named after was fixed (PROTOCOL.md §3.4, "What the review of this
 * section found"). */

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
	struct hring *s = hring_parked(3, RING_QUORUM_NONE, &p);
	for (size_t k = 1; k < 3; k++) {
		size_t o = (p + k) % 3;
		hring_leave(s, o);
		hring_run_for(s, 5 * MS);
		s->up[o] = false; /* gone: its process exited */
	}
	CU_ASSERT_FATAL(status_of(s, p).token_held);
	CU_ASSERT_EQUAL(status_of(s, p).successor, id_of(p)); /* alone */
	CU_ASSERT(!status_of(s, p).parked); /* a park is for a ring */

	/* While the park is fresh, it grants; once stale, never again. */
	hring_run_for(s, s->layout.loss_timeout_ms * MS);
	uint64_t mark = s->seq;
	hring_acquire(s, p, 1);
	hring_run_for(s, 10 * s->layout.loss_timeout_ms * MS);
	CU_ASSERT_EQUAL(count_actions(s, p, mark, RING_ACTION_GRANT), 1); /* FAILS: 0 */
	CU_ASSERT_EQUAL(status_of(s, p).queued, 0);                      /* FAILS: 1 */
	assert_safe_and_free(s);
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
	struct hring *s = hring_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 2) % 4, y = (p + 3) % 4;
	/* P's next heartbeat is due heartbeat_ms after this one. */
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, 0, 200 * MS));
	uint64_t due = s->now + s->layout.heartbeat_ms * MS;
	hring_run(s, due - LATENCY, NULL, NULL);
	CU_ASSERT_EQUAL(s->now, due - LATENCY);
	hring_acquire(s, x, 7); /* its WANT lands exactly when P's heartbeat is due */
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0); /* the token moves on */
	struct ring_msg hb;
	if (last_send(s, RING_MSG_HEARTBEAT, 0, &hb) >= 0)
		CU_ASSERT_EQUAL(hb.u.heartbeat.flags & RING_HB_PARKED, 0); /* FAILS */

	/* Y, whose client asks now, summons P, where it last heard of the
	 * token: since jumps (§3.5) a summons needs no park, and P sends it on
	 * to where it passed the token, so Y is served next all the same. */
	uint64_t mark = s->seq;
	hring_run_for(s, 2 * MS);
	hring_acquire(s, y, 8);
	CU_ASSERT(count_sends(s, y, mark, RING_MSG_WANT, id_of(p)) <= 2); /* to P, to all */
	hring_run_for(s, 3 * MS); /* Y's summons reaches X */
	CU_ASSERT_FATAL(status_of(s, x).granted); /* X was served */
	hring_release(s, x, 7);
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, id_of(y), NULL) >= 0);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 50 * MS));
	assert_safe_and_free(s);
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
	struct hring *s = hring_parked(5, RING_QUORUM_MAJORITY, &a);
	size_t b = (a + 1) % 5, d = (a + 3) % 5, f = (a + 4) % 5;
	struct crash_cut cut = {.b = id_of(b), .a = id_of(a), .holder = id_of(a), .f = id_of(f)};
	s->drop = crash_cut_drop;
	s->drop_arg = &cut;

	/* Since jumps (§3.5) a summons sends the token straight to F: the
	 * history now needs a walk, the park's lap, on which B takes the token
	 * and passes it on in one step. F's client asks as it leaves A. */
	CU_ASSERT_FATAL(run_until_send(s, (int)a, RING_MSG_TOKEN, id_of(b),
				       (s->layout.loss_timeout_ms + 50) * MS));
	hring_acquire(s, f, 41);
	/* B passes it on: then it dies. */
	struct want w = {(int)b, RING_ACTION_LOG, RING_LOG_TOKEN_PASS, -1};
	CU_ASSERT_FATAL(hring_run(s, s->now + 20 * MS, want_met, &w));
	s->up[b] = false;
	CU_ASSERT_FATAL(run_until_action(s, (int)f, RING_ACTION_GRANT, 10 * MS));
	uint32_t old_epoch = status_of(s, f).token_epoch;
	hring_acquire(s, d, 42); /* after the token went by */

	/* Acked before it was passed on (the fix), the hop is A's no more:
	 * no skip copies it, and D waits for F's client. With the ack after
	 * the pass, A skipped B at +80 ms and D granted under a new epoch
	 * while F's client was still inside under the old one. */
	cut.hold_armed = true;
	hring_run_for(s, 200 * MS);
	CU_ASSERT(!(status_of(s, f).granted && status_of(s, d).granted));
	CU_ASSERT(s->max_granted <= 1);
	CU_ASSERT_EQUAL(status_of(s, d).counters.cs_entries, 0);
	(void)old_epoch;
	if (cut.have_held)
		hring_datagram(s, f, cut.held.from, cut.held.buf, cut.held.len);
	s->drop = NULL;
	CU_ASSERT_EQUAL(s->bad_grants, 0);
	CU_ASSERT_EQUAL(s->fence_regressions, 0); /* I1 holds: E' fences are higher */
	hring_free(s);
}

/* ---- review_laps: a hostile review of laps, freshness and the other ----
 * parking changes made after the first review (PROTOCOL.md §3.4: laps,
 * park_fresh, may_park's refusal, uncount_pass, a park re-epoched in place,
 * summons from outsiders). Each test is a scripted history the change got
 * wrong: it failed on the commit it was written against (b54c96d) and
 * passes since the fix; the comment above it says what it showed. */

/* Every HEARTBEAT member I sent after MARK that says PARKED. */
static size_t parked_heartbeats(const struct hring *s, size_t i, uint64_t since)
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
	struct hring *s = hring_parked(4, RING_QUORUM_MAJORITY, &p);
	uint64_t mark = s->seq;
	hring_leave(s, p);
	CU_ASSERT_FATAL(last_send(s, RING_MSG_TOKEN, -1, NULL) >= 0); /* handed on */
	CU_ASSERT_EQUAL(parked_heartbeats(s, p, mark), 0); /* was 1 */

	/* A member whose client asks now believes the leaver holds a park. */
	size_t x = (p + 2) % 4;
	hring_run_for(s, LATENCY);
	uint64_t mark2 = s->seq;
	hring_acquire(s, x, 9);
	/* Its first summons goes to all, the leaver too; none to it alone. */
	CU_ASSERT_EQUAL(count_sends(s, x, mark2, RING_MSG_WANT, id_of(p)) -
			count_sends(s, x, mark2, RING_MSG_WANT, 0), 0); /* was 1 */
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 100 * MS));
	assert_safe_and_free(s);
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
	struct hring *s = hring_parked(4, RING_QUORUM_MAJORITY, &p);
	size_t x = (p + 1) % 4, y = (p + 2) % 4;
	hring_acquire(s, p, 1); /* granted at once, holds its lease */
	CU_ASSERT_FATAL(status_of(s, p).granted);
	hring_acquire(s, x, 2); /* summons P: the park ends with P's grant */
	CU_ASSERT_FATAL(run_until_log(s, (int)p, RING_LOG_TOKEN_UNPARK, 10 * MS));
	uint64_t mark = s->seq;
	hring_acquire(s, y, 3);
	hring_run_for(s, 1000 * MS);
	CU_ASSERT(status_of(s, p).granted); /* still P's client's visit */
	size_t wants = count_sends(s, y, mark, RING_MSG_WANT, id_of(p));
	/* Y's first summons, and its resends until the next heartbeat (no
	 * longer flagged PARKED) says the park is over: at most 1 + 3 within
	 * heartbeat_ms, not one a heartbeat for the whole lease. */
	CU_ASSERT(wants <= 4); /* was 12 */
	CU_ASSERT_EQUAL(parked_heartbeats(s, p, mark), 0);
	hring_release(s, p, 1);
	CU_ASSERT(run_until_action(s, (int)x, RING_ACTION_GRANT, 50 * MS));
	hring_release(s, x, 2);
	CU_ASSERT(run_until_action(s, (int)y, RING_ACTION_GRANT, 50 * MS));
	assert_safe_and_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_park_tests[] = {
	T_(test_an_unwanted_token_parks_at_once_and_then_only_heartbeats),
	T_(test_a_paced_token_never_parks),
	T_(test_parked_holder_grants_its_own_clients_without_a_datagram),
	T_(test_a_client_elsewhere_summons_the_token_and_is_served),
	T_(test_a_summons_ends_the_parked_visit_after_the_grant_in_progress),
	T_(test_a_lost_summons_is_sent_again_backing_off),
	T_(test_a_summons_for_nobody_or_a_second_one_moves_nothing),
	T_(test_a_parked_token_grants_late_only_after_a_lap),
	T_(test_a_lap_finds_a_member_that_died_while_the_token_was_parked),
	T_(test_a_park_re_epoched_in_place_is_announced_and_outsiders_cannot_summon),
	T_(test_alone_parked_holder_never_grants_after_the_others_leave),
	T_(test_a_passing_holder_never_heartbeats_parked),
	T_(test_a_crash_between_pass_and_ack_copies_the_token),
	T_(test_a_leaving_parked_holder_does_not_announce_a_park_it_hands_on),
	T_(test_a_summoned_park_stops_drawing_summons),
	CU_TEST_INFO_NULL,
};
#undef T_
