/* CUnit suite of a member's clients (ring/core/clients.c): the queue, its
 * grants, leases and denials. */
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

#define T_(f) {#f, f}
CU_TestInfo ring_test_clients_tests[] = {
	T_(test_lease_expiry_revokes_and_moves_the_token_on),
	T_(test_acquire_twice_is_busy_and_release_cancels_a_waiting_client),
	CU_TEST_INFO_NULL,
};
#undef T_
