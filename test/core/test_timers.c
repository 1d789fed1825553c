/* CUnit suite of the timer table (ring/core/timers.c): what fires, and the
 * next deadline a member asks to be woken at. */
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

/* Found by the mixed class's soak (seed 1001514): a member resting the
 * token (idle_pass_ms) that is left alone by a leave kept the rest's
 * deadline, already past, and was woken at the same instant for ever. */
static void test_member_left_alone_while_resting_does_not_spin(void)
{
	struct ring_layout l = resting_layout(2);
	l.quorum = RING_QUORUM_NONE;
	struct hring *s = hring_new(&l);
	hring_boot(s);
	size_t h = hring_settle(s); /* resting: idle_pass_ms 50 */
	size_t o = 1 - h;
	hring_leave(s, o);
	hring_run_for(s, 1000 * MS); /* fails the step bound if it spins */
	CU_ASSERT(status_of(s, h).token_held);
	CU_ASSERT(s->deadline[h] > s->now - 1000 * MS);
	hring_acquire(s, h, 1);
	CU_ASSERT(last_action(s, RING_ACTION_GRANT) >= 0);
	hring_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_timers_tests[] = {
	T_(test_member_left_alone_while_resting_does_not_spin),
	CU_TEST_INFO_NULL,
};
#undef T_
