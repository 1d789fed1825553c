/* CUnit suite of a member's clients (ring/core/clients.c): the queue, its
 * grants, leases and their renewals, try-locks and denials. */
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

static void test_lease_expiry_revokes_and_moves_the_token_on(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 300;
	size_t h;
	struct hring *s = hring_settled(&l, &h);

	uint64_t fence = grant_at(s, h, 5);
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
	assert_safe_and_free(s);
}

static void test_acquire_twice_is_busy_and_release_cancels_a_waiting_client(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	size_t w = successor_of(s, h);

	hring_acquire(s, w, 7);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_DENY), -1);
	CU_ASSERT_EQUAL(status_of(s, w).state, RING_STATE_WAITING);
	hring_acquire(s, w, 7);
	int d = last_action(s, RING_ACTION_DENY);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.client, 7);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.reason, -RING_EBUSY);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 1);

	hring_release(s, w, 7);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 0);
	CU_ASSERT_EQUAL(status_of(s, w).state, RING_STATE_IDLE);
	hring_run_for(s, 1000 * MS);
	CU_ASSERT(count_logs(s, w, 0, RING_LOG_TOKEN_RECV) >= 2);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_GRANT), 0);

	/* A client in the region is busy too. */
	size_t g = hring_settle(s);
	grant_at(s, g, 8);
	hring_acquire(s, g, 8);
	d = last_action(s, RING_ACTION_DENY);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.reason, -RING_EBUSY);
	CU_ASSERT(status_of(s, g).granted);
	hring_free(s);
}

static void client_step(struct hring *s, size_t i, enum ring_event_type type, uint64_t client)
{
	struct ring_event ev = event(type);
	ev.u.client.client = client;
	hring_step(s, i, ev);
}

/* RENEW keeps the grant for as long as the client renews and a majority
 * hears the holder: the grant's heartbeats ask for acks, and each renewal
 * reaches a lease past the newest heartbeat a majority acked, within a
 * heartbeat period of a lease from now (§3.3). The grant ends there. */
static void test_renew_keeps_the_grant_while_a_majority_hears_the_holder(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 300;
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	uint64_t fence = grant_at(s, h, 5), t0 = s->now;
	uint64_t last = 0;
	for (int k = 0; s->now < t0 + 5 * l.lease_ms * MS; k++) {
		hring_run_for(s, l.lease_ms * MS / 3);
		CU_ASSERT_FATAL(status_of(s, h).granted);
		client_step(s, h, RING_EVENT_RENEW, 5);
		int r = last_action(s, RING_ACTION_RENEWED);
		CU_ASSERT_FATAL(r >= 0);
		const struct ring_action *a = &s->last.action[r];
		CU_ASSERT_EQUAL(a->u.renewed.client, 5);
		CU_ASSERT_EQUAL(a->u.renewed.fence, fence);
		CU_ASSERT(a->u.renewed.deadline_us <= s->now + l.lease_ms * MS);
		/* the grant's heartbeats were acked: a heartbeat period old */
		CU_ASSERT(a->u.renewed.deadline_us + (l.heartbeat_ms + 5) * MS >=
			  s->now + l.lease_ms * MS);
		last = a->u.renewed.deadline_us;
		(void)k;
	}
	CU_ASSERT_EQUAL(count_actions(s, h, 0, RING_ACTION_GRANT), 1);
	CU_ASSERT_EQUAL(count_logs(s, h, 0, RING_LOG_LEASE_EXPIRED), 0);
	CU_ASSERT_FATAL(run_until_action(s, (int)h, RING_ACTION_REVOKE, 1000 * MS));
	CU_ASSERT_EQUAL(s->now, last);
	CU_ASSERT(last_log(s, RING_LOG_LEASE_EXPIRED) >= 0);
	assert_safe_and_free(s);
}

static bool touches(const struct flight *f, const void *arg)
{
	uint16_t id = *(const uint16_t *)arg;
	return f->from == id || f->to == id;
}

/* The hostile review's R1: a holder cut off from the ring went on renewing
 * for ever while the others regenerated and granted, two clients in the
 * region with no end. Now nobody acks its heartbeats, so its renewals
 * stop reaching further and it loses the grant within a lease (and a
 * heartbeat) of the cut, as a fresh grant would, however often its
 * client renews. */
static void test_a_holder_cut_off_renews_no_further_than_a_lease(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 300;
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	grant_at(s, h, 5);
	for (int k = 0; k < 4; k++) {
		hring_run_for(s, l.lease_ms * MS / 3);
		client_step(s, h, RING_EVENT_RENEW, 5);
	}
	CU_ASSERT_FATAL(status_of(s, h).granted);
	uint16_t id = id_of(h);
	s->drop = touches;
	s->drop_arg = &id;
	uint64_t cut = s->now, mark = s->seq;
	while (status_of(s, h).granted && s->now < cut + 20 * l.lease_ms * MS) {
		hring_run_for(s, l.lease_ms * MS / 10);
		client_step(s, h, RING_EVENT_RENEW, 5);
	}
	CU_ASSERT(!status_of(s, h).granted);
	CU_ASSERT(s->now <= cut + (l.lease_ms + l.heartbeat_ms + 5) * MS + l.lease_ms * MS / 10);
	CU_ASSERT_EQUAL(count_logs(s, h, mark, RING_LOG_LEASE_EXPIRED), 1);
	s->drop = NULL;
	assert_safe_and_free(s);
}

/* max_hold_ms bounds the grant however often it is renewed: RENEWED's
 * deadline stops growing at the bound, and the grant ends there. */
static void test_max_hold_caps_renewals(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 300;
	l.max_hold_ms = 700;
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	grant_at(s, h, 5);
	uint64_t t0 = s->now, prev = 0;
	for (int k = 0; k < 20 && status_of(s, h).granted; k++) {
		hring_run_for(s, 100 * MS);
		if (!status_of(s, h).granted)
			break;
		client_step(s, h, RING_EVENT_RENEW, 5);
		int r = last_action(s, RING_ACTION_RENEWED);
		CU_ASSERT_FATAL(r >= 0);
		uint64_t d = s->last.action[r].u.renewed.deadline_us;
		CU_ASSERT(d <= t0 + l.max_hold_ms * MS);
		CU_ASSERT(d >= prev); /* a renewal never shortens the grant */
		prev = d;
	}
	CU_ASSERT_EQUAL(prev, t0 + l.max_hold_ms * MS);
	CU_ASSERT(!status_of(s, h).granted);
	CU_ASSERT_EQUAL(count_logs(s, h, 0, RING_LOG_LEASE_EXPIRED), 1);
	int le = last_log(s, RING_LOG_LEASE_EXPIRED);
	(void)le;
	assert_safe_and_free(s);
}

/* RENEW from anyone but the holder, or after the grant ended, is refused
 * ENOTHOLDING and changes nothing. */
static void test_renew_by_a_non_holder_is_refused(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 300;
	size_t h;
	struct hring *s = hring_settled(&l, &h);
	client_step(s, h, RING_EVENT_RENEW, 5);
	int d = last_action(s, RING_ACTION_DENY);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.reason, -RING_ENOTHOLDING);
	grant_at(s, h, 5);
	client_step(s, h, RING_EVENT_RENEW, 6);
	d = last_action(s, RING_ACTION_DENY);
	CU_ASSERT_FATAL(d >= 0);
	CU_ASSERT_EQUAL(s->last.action[d].u.deny.client, 6);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_RENEWED), -1);
	/* A RENEW in the very step the lease ends: REVOKE first, then refused. */
	hring_run_for(s, l.lease_ms * MS - 1);
	s->now += 1;
	client_step(s, h, RING_EVENT_RENEW, 5);
	CU_ASSERT(last_action(s, RING_ACTION_REVOKE) >= 0);
	CU_ASSERT(last_action(s, RING_ACTION_DENY) > last_action(s, RING_ACTION_REVOKE));
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_RENEWED), -1);
	CU_ASSERT(!status_of(s, h).granted);
	assert_safe_and_free(s);
}

static int deny_reason(const struct hring *s, uint64_t client)
{
	for (size_t k = 0; k < s->last.n; k++)
		if (s->last.action[k].type == RING_ACTION_DENY &&
		    s->last.action[k].u.deny.client == client)
			return s->last.action[k].u.deny.reason;
	return 0;
}

/* TRY on an idle ring whose token is parked elsewhere summons it and is
 * granted: a free lock is taken wherever the token rests. */
static void test_try_takes_a_free_lock_parked_elsewhere(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t w = successor_of(s, p);
	client_step(s, w, RING_EVENT_TRY, 9);
	CU_ASSERT_EQUAL(deny_reason(s, 9), 0);
	CU_ASSERT_FATAL(run_until_action(s, (int)w, RING_ACTION_GRANT, 500 * MS));
	CU_ASSERT_EQUAL(s->last.action[last_action(s, RING_ACTION_GRANT)].u.grant.client, 9);
	assert_safe_and_free(s);
}

/* While a client of another member holds, its heartbeats say BUSY: a TRY
 * is refused at once (ECONFLICT), and one that was already waiting when
 * the BUSY heartbeat came is refused then; an ACQUIRE still queues. A
 * TRY behind a local waiter is refused too. */
static void test_try_is_refused_while_another_client_holds(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t w = successor_of(s, p);
	grant_at(s, p, 5);
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, -1, 500 * MS));
	hring_deliver_all(s);
	client_step(s, w, RING_EVENT_TRY, 9);
	CU_ASSERT_EQUAL(deny_reason(s, 9), -RING_ECONFLICT);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 0);
	client_step(s, w, RING_EVENT_ACQUIRE, 10);
	CU_ASSERT_EQUAL(deny_reason(s, 10), 0);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 1);
	client_step(s, w, RING_EVENT_TRY, 11); /* behind client 10 */
	CU_ASSERT_EQUAL(deny_reason(s, 11), -RING_ECONFLICT);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 1);
	assert_safe_and_free(s);
}

static void test_a_waiting_try_yields_to_a_busy_heartbeat(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t w = successor_of(s, p);
	/* Both ask in the same instant: the holder grants its own client; the
	 * TRY's summons comes too late, and the BUSY heartbeat refuses it. */
	grant_at(s, p, 5);
	client_step(s, w, RING_EVENT_TRY, 9);
	CU_ASSERT_EQUAL(deny_reason(s, 9), 0);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 1);
	bool refused = false;
	for (int k = 0; k < 200 && !refused; k++) {
		CU_ASSERT_FATAL(hring_next(s, s->now + 500 * MS));
		refused = s->last_node == (int)w && deny_reason(s, 9) == -RING_ECONFLICT;
	}
	CU_ASSERT(refused);
	CU_ASSERT_EQUAL(status_of(s, w).queued, 0);
	CU_ASSERT_EQUAL(count_actions(s, w, 0, RING_ACTION_GRANT), 0);
	assert_safe_and_free(s);
}

/* The review's T3: a late BUSY heartbeat of a hop since passed (the
 * previous holder's, delayed) refused TRYs for two heartbeat periods.
 * Only the newest hop heard speaks for the region now. */
static void test_a_late_busy_heartbeat_of_an_older_hop_refuses_nothing(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t w = successor_of(s, p);
	struct ring_msg hb;
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, -1, 500 * MS));
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, -1, &hb) >= 0);
	hring_deliver_all(s);
	CU_ASSERT_FATAL(hb.u.heartbeat.seq > 1);
	struct ring_msg late = hb;
	late.u.heartbeat.seq--;
	late.u.heartbeat.flags = RING_HB_BUSY;
	hring_inject(s, w, successor_of(s, w), late);
	client_step(s, w, RING_EVENT_TRY, 9);
	CU_ASSERT_EQUAL(deny_reason(s, 9), 0);
	client_step(s, w, RING_EVENT_RELEASE, 9);
	/* The same hop saying BUSY does count. */
	struct ring_msg now_busy = hb;
	now_busy.u.heartbeat.flags |= RING_HB_BUSY;
	hring_inject(s, w, p, now_busy);
	client_step(s, w, RING_EVENT_TRY, 10);
	CU_ASSERT_EQUAL(deny_reason(s, 10), -RING_ECONFLICT);
	assert_safe_and_free(s);
}

/* The review's T1: after a release at a parked holder, the others kept
 * refusing TRYs on its last BUSY heartbeat for up to two heartbeat
 * periods. The holder now heartbeats at once when BUSY clears. */
static void test_a_release_says_not_busy_at_once(void)
{
	size_t p;
	struct hring *s = hring_parked(3, RING_QUORUM_MAJORITY, &p);
	size_t w = successor_of(s, p);
	grant_at(s, p, 5);
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, -1, 500 * MS));
	hring_deliver_all(s);
	client_step(s, w, RING_EVENT_TRY, 9);
	CU_ASSERT_EQUAL(deny_reason(s, 9), -RING_ECONFLICT);
	uint64_t busy_at = s->now;
	client_step(s, p, RING_EVENT_RELEASE, 5);
	struct ring_msg hb;
	CU_ASSERT_FATAL(run_until_send(s, (int)p, RING_MSG_HEARTBEAT, -1, 500 * MS));
	CU_ASSERT_FATAL(last_send(s, RING_MSG_HEARTBEAT, -1, &hb) >= 0);
	CU_ASSERT_EQUAL(hb.u.heartbeat.flags & RING_HB_BUSY, 0);
	/* at once, or a quarter heartbeat period after the BUSY one */
	CU_ASSERT(s->now <= busy_at + s->layout.heartbeat_ms * MS / 4);
	hring_deliver_all(s);
	client_step(s, w, RING_EVENT_TRY, 10);
	CU_ASSERT_EQUAL(deny_reason(s, 10), 0);
	assert_safe_and_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_clients_tests[] = {
	T_(test_renew_keeps_the_grant_while_a_majority_hears_the_holder),
	T_(test_a_holder_cut_off_renews_no_further_than_a_lease),
	T_(test_a_late_busy_heartbeat_of_an_older_hop_refuses_nothing),
	T_(test_a_release_says_not_busy_at_once),
	T_(test_max_hold_caps_renewals),
	T_(test_renew_by_a_non_holder_is_refused),
	T_(test_try_takes_a_free_lock_parked_elsewhere),
	T_(test_try_is_refused_while_another_client_holds),
	T_(test_a_waiting_try_yields_to_a_busy_heartbeat),
	T_(test_lease_expiry_revokes_and_moves_the_token_on),
	T_(test_acquire_twice_is_busy_and_release_cancels_a_waiting_client),
	CU_TEST_INFO_NULL,
};
#undef T_
