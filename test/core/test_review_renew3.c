/* CUnit suite of the third hostile review of renewal's proof of contact
 * (PROTOCOL.md §3.3 "Renewal needs contact", §6.2): who may ack a
 * GRANTED heartbeat while its vote is out. The two findings' tests
 * (renamed from test_break_*) failed on the reviewed code and pass since
 * election_note_vote keeps the highest initiator and epoch of the votes
 * out; *_holds: a probe the reviewed code withstood. */
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

static void client_step(struct hring *s, size_t i, enum ring_event_type type, uint64_t client)
{
	struct ring_event ev = event(type);
	ev.u.client.client = client;
	hring_step(s, i, ev);
}

/* Every datagram to or from member id CUT is lost while cut_on. */
static struct {
	uint16_t cut;
	bool cut_on;
} net3;

static bool net3_drop(const struct flight *f, const void *arg)
{
	(void)arg;
	return net3.cut_on && (f->from == net3.cut || f->to == net3.cut);
}

/* Whether member I's last step sent a HEARTBEAT_ACK. */
static bool acked_in_last(const struct hring *s, size_t i)
{
	if (s->last_node != (int)i)
		return false;
	for (size_t k = 0; k < s->last.n; k++) {
		struct ring_msg m;
		if (s->last.action[k].type == RING_ACTION_SEND && decode_send(&s->last.action[k], &m) &&
		    m.type == RING_MSG_HEARTBEAT_ACK)
			return true;
	}
	return false;
}

/* Whether member I's last step forwarded an ELECTION. */
static bool forwarded_in_last(const struct hring *s, size_t i)
{
	if (s->last_node != (int)i)
		return false;
	for (size_t k = 0; k < s->last.n; k++) {
		struct ring_msg m;
		if (s->last.action[k].type == RING_ACTION_SEND && decode_send(&s->last.action[k], &m) &&
		    m.type == RING_MSG_ELECTION)
			return true;
	}
	return false;
}

static struct ring_msg election_msg(uint16_t initiator, uint32_t round, uint32_t max_epoch,
				    size_t initiator_idx)
{
	struct ring_msg m = {.type = RING_MSG_ELECTION};
	m.u.election.initiator = initiator;
	m.u.election.hops = 1;
	m.u.election.round = round;
	m.u.election.max_epoch = max_epoch;
	ring_set_add(&m.u.election.participants, initiator_idx);
	return m;
}

static struct ring_msg granted_heartbeat(const struct hring *s, uint32_t epoch)
{
	struct ring_msg m = {.type = RING_MSG_HEARTBEAT};
	m.u.heartbeat.epoch = epoch;
	m.u.heartbeat.seq = 1;
	m.u.heartbeat.counter = 1;
	m.u.heartbeat.flags = RING_HB_GRANTED | RING_HB_BUSY;
	m.u.heartbeat.beat = 1;
	for (size_t i = 0; i < s->n; i++)
		ring_set_add(&m.u.heartbeat.alive, i);
	return m;
}

/* A settled ring of five, member X cut off for a while (so it has heard no
 * token for loss_timeout_ms / 2 and will carry an election), and not yet
 * so long that its own loss timer fired. */
static struct hring *five_with_x_deaf(size_t *h, size_t *x, uint32_t *e0)
{
	struct ring_layout l = default_layout(5);
	struct hring *s = hring_settled(&l, h);
	*x = successor_of(s, *h);
	*e0 = status_of(s, *x).epoch;
	uint64_t elections = status_of(s, *x).counters.elections;
	memset(&net3, 0, sizeof net3);
	net3.cut = id_of(*x);
	net3.cut_on = true;
	s->drop = net3_drop;
	s->drop_arg = NULL;
	hring_run_for(s, (l.loss_timeout_ms / 2 + 100) * MS);
	CU_ASSERT_FATAL(status_of(s, *x).counters.elections == elections);
	s->drop = NULL;
	return s;
}

/* Two members other than X and H: the lowest and the highest index. */
static void two_others(const struct hring *s, size_t h, size_t x, size_t *lo, size_t *hi)
{
	*lo = SIZE_MAX;
	*hi = SIZE_MAX;
	for (size_t i = 0; i < s->n; i++) {
		if (i == h || i == x)
			continue;
		if (*lo == SIZE_MAX)
			*lo = i;
		*hi = i;
	}
}

/* F1 (high, safety). contact_answer's exemption: a member whose vote is out
 * acks a heartbeat of an epoch above the election's max_epoch *as it was
 * when the member forwarded it* ("a token of an epoch that election did
 * not know is most likely what it made"). But max_epoch is raised by every
 * later participant (election_arrive: max(max_epoch, node->epoch)), and
 * the initiator mints above the final one. History (n = 5, H holds epoch
 * e1 with a renewing client): X, cut off from H for loss/2 while e1 was
 * minted in place at H (a rejoin or an election's re-epoch, §6.2 rule 1),
 * still knows e0 < e1; I's election (max e0) reaches X, X forwards it
 * (vote_epoch = e0); X's link to H heals, X hears H's GRANTED heartbeat
 * of e1 and acks it (e1 > vote_epoch). Z, which knew e1 but has heard no
 * token for loss/2 (cut from H), carries the election next and raises
 * max_epoch to e1; I completes with {I, X, Z}, mints above e1, and its
 * token grants. H's contact set {H, X, W} and the participants {I, X, Z}
 * meet only in X, whose ack came after its counted vote: H renews to
 * (X's ack) + lease, a regeneration's grant beside it that the promise
 * "each member that acked carries no election for loss/2 after" says
 * cannot begin before contact + loss/2. Here the node-level core of it:
 * X, with a vote out in an election that can still learn e1, acks.
 * Fix: no exemption by epoch: stay silent until vote_out_until whatever
 * the heartbeat's epoch, except for a heartbeat of the very token that
 * election made (the regenerator's epoch, i.e. the alive set == the
 * participants and seq small, or better: carry the initiator in the
 * heartbeat's token and exempt only a token regenerated by that
 * initiator's round); or have the initiator refuse to regenerate if its
 * final max_epoch is above the max_epoch it knew when each participant
 * voted (carry, per election, "max_epoch raised after a vote"). */
static void test_a_vote_out_acks_no_epoch_a_later_participant_may_raise_to(void)
{
	size_t h, x, lo, hi;
	uint32_t e0;
	struct hring *s = five_with_x_deaf(&h, &x, &e0);
	two_others(s, h, x, &lo, &hi);
	/* I's election, max_epoch e0, reaches X: X votes. */
	hring_inject(s, x, lo, election_msg(id_of(lo), 77, e0, lo));
	CU_ASSERT_FATAL(forwarded_in_last(s, x));
	/* H's token, re-epoched in place to e1 > e0 while X was away. */
	uint32_t e1 = (((e0 >> 8) + 1) << 8) | (uint32_t)h;
	hring_inject(s, x, h, granted_heartbeat(s, e1));
	printf("\n    [F1] X voted in an election of max_epoch %u, then %s H's heartbeat of %u\n",
	       e0, acked_in_last(s, x) ? "acked" : "ignored", e1);
	/* The election goes on: the next member that knows e1 raises it, and
	 * the regeneration mints above e1. X's vote counts; its ack must not. */
	CU_ASSERT(!acked_in_last(s, x));
	hring_free(s);
}

/* F2 (high, safety). vote_epoch is overwritten by each election a member
 * forwards, not kept at the highest of the votes still out. X forwards
 * E1 (initiator A, max_epoch e1: someone before X knew e1), then E2 of a
 * higher initiator B that knew only e0 (Chang-Roberts lets it through:
 * B > best_initiator). vote_epoch drops to e0, and X acks H's GRANTED
 * heartbeat of e1 while its vote in E1 (which knew e1 and can mint above
 * it) is still out until vote_out_until. If B's election then dies (B
 * hears H, or is swallowed), E1 can still complete with X's vote: the
 * second review's history (test_a_member_whose_vote_is_out_does_not_ack)
 * with one more election in between. Fix: vote_epoch = max(vote_epoch,
 * fwd.max_epoch) while now < vote_out_until (reset only once it passed). */
static void test_a_second_vote_does_not_lower_what_the_votes_knew(void)
{
	size_t h, x, lo, hi;
	uint32_t e0;
	struct hring *s = five_with_x_deaf(&h, &x, &e0);
	two_others(s, h, x, &lo, &hi);
	uint32_t e1 = (((e0 >> 8) + 1) << 8) | (uint32_t)h;
	hring_inject(s, x, lo, election_msg(id_of(lo), 77, e1, lo));
	CU_ASSERT_FATAL(forwarded_in_last(s, x));
	s->now += 1 * MS;
	hring_inject(s, x, hi, election_msg(id_of(hi), 91, e0, hi));
	CU_ASSERT_FATAL(forwarded_in_last(s, x));
	/* X never adopted e1 (an election's max_epoch is not adopted). */
	CU_ASSERT_FATAL(status_of(s, x).epoch == e0);
	s->now += 1 * MS;
	hring_inject(s, x, h, granted_heartbeat(s, e1));
	printf("\n    [F2] X voted for max_epoch %u then %u; it %s a heartbeat of %u\n", e1, e0,
	       acked_in_last(s, x) ? "acked" : "ignored", e1);
	CU_ASSERT(!acked_in_last(s, x));
	hring_free(s);
}

/* Probe: X with one vote out (max_epoch e1) stays silent to e1 itself,
 * and to e0. */
static void test_vote_out_silent_to_known_epochs_holds(void)
{
	size_t h, x, lo, hi;
	uint32_t e0;
	struct hring *s = five_with_x_deaf(&h, &x, &e0);
	two_others(s, h, x, &lo, &hi);
	uint32_t e1 = (((e0 >> 8) + 1) << 8) | (uint32_t)h;
	hring_inject(s, x, lo, election_msg(id_of(lo), 77, e1, lo));
	CU_ASSERT_FATAL(forwarded_in_last(s, x));
	hring_inject(s, x, h, granted_heartbeat(s, e1));
	CU_ASSERT(!acked_in_last(s, x));
	hring_free(s);
}

/* Probe (liveness): a healthy ring of nine with heartbeat_ms = lease / 4
 * and a client renewing every lease / 3 keeps its grant for 20 leases;
 * every renewal reaches at least a lease past the renewal less a third. */
static void test_nine_members_heartbeat_quarter_lease_renew_third_holds(void)
{
	struct ring_layout l = resting_layout(9);
	l.lease_ms = 400;
	l.heartbeat_ms = 100;
	l.loss_timeout_ms = 400;
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	grant_at(s, h, 5);
	uint64_t worst = UINT64_MAX;
	for (int k = 0; k < 60; k++) {
		hring_run_for(s, l.lease_ms * MS / 3);
		CU_ASSERT_FATAL(status_of(s, h).granted);
		client_step(s, h, RING_EVENT_RENEW, 5);
		int r = last_action(s, RING_ACTION_RENEWED);
		CU_ASSERT_FATAL(r >= 0);
		uint64_t left = s->last.action[r].u.renewed.deadline_us - s->now;
		if (left < worst)
			worst = left;
	}
	printf("\n    [probe] n=9: least lease left after a renewal %llu ms of %u\n",
	       (unsigned long long)(worst / MS), l.lease_ms);
	CU_ASSERT(worst >= l.lease_ms * MS / 2);
	CU_ASSERT_EQUAL(count_logs(s, h, 0, RING_LOG_LEASE_EXPIRED), 0);
	hring_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_review_renew3_tests[] = {
	T_(test_a_vote_out_acks_no_epoch_a_later_participant_may_raise_to),
	T_(test_a_second_vote_does_not_lower_what_the_votes_knew),
	T_(test_vote_out_silent_to_known_epochs_holds),
	T_(test_nine_members_heartbeat_quarter_lease_renew_third_holds),
	CU_TEST_INFO_NULL,
};
