/* The CUnit suites of the unit-test binary, in one table: test/core/ has one
 * per core file, test/unit/ one per other module, test/sim/ the checkers'.
 * Each file defines CU_TestInfo ring_test_NAME_tests[] (ended by
 * CU_TEST_INFO_NULL); RING_UNIT_SUITES declares it and lib/unit_main.c
 * registers it, so a new suite is one line here. */
#ifndef RING_TEST_SUITES_H
#define RING_TEST_SUITES_H

#include <CUnit/CUnit.h>

/* X(NAME, HOOKS), in the order they run. HOOKS is NONE, or DIR where the
 * suite keeps a scratch directory: it then defines ring_test_NAME_init and
 * ring_test_NAME_cleanup (0 on success), run once around the suite. */
#define RING_UNIT_SUITES(X) \
	X(wire, NONE)        \
	X(layout, NONE)      \
	X(node, NONE)        \
	X(epoch, NONE)       \
	X(visit, NONE)       \
	X(park, NONE)        \
	X(jump, NONE)        \
	X(clients, NONE)     \
	X(review_renew2, NONE) \
	X(review_renew3, NONE) \
	X(review_jumps, NONE) \
	X(review_summons, NONE) \
	X(members, NONE)     \
	X(restart, NONE)     \
	X(election, NONE)    \
	X(timers, NONE)      \
	X(fence_file, NONE)  \
	X(epoch_store, NONE) \
	X(state_dir, NONE)   \
	X(inject, NONE)      \
	X(log, NONE)         \
	X(metrics, NONE)     \
	X(hold_hist, NONE)   \
	X(advice, NONE)      \
	X(watch, NONE)       \
	X(status_poll, NONE) \
	X(net, NONE)         \
	X(sd_notify, NONE)   \
	X(conf, NONE)        \
	X(control, NONE)     \
	X(access_hint, NONE) \
	X(trace, DIR)        \
	X(logview, DIR)      \
	X(auth, DIR)         \
	X(simcheck, NONE)    \
	X(simcheck_members, NONE)

/* What HOOKS makes of a suite: its declarations and its init and cleanup. */
#define RING_SUITE_HOOKS_NONE(name)
#define RING_SUITE_HOOKS_DIR(name)            \
	int ring_test_##name##_init(void);    \
	int ring_test_##name##_cleanup(void);
#define RING_SUITE_INIT_NONE(name) NULL
#define RING_SUITE_INIT_DIR(name) ring_test_##name##_init
#define RING_SUITE_CLEANUP_NONE(name) NULL
#define RING_SUITE_CLEANUP_DIR(name) ring_test_##name##_cleanup

#define RING_SUITE_DECLARE(name, hooks)          \
	extern CU_TestInfo ring_test_##name##_tests[]; \
	RING_SUITE_HOOKS_##hooks(name)
RING_UNIT_SUITES(RING_SUITE_DECLARE)
#undef RING_SUITE_DECLARE

/* One CU_SuiteInfo row: name, init and cleanup around the suite, no setup
 * or teardown around each test, its table. */
#define RING_SUITE_INFO(name, hooks)                                         \
	{#name, RING_SUITE_INIT_##hooks(name), RING_SUITE_CLEANUP_##hooks(name), \
	 NULL, NULL, ring_test_##name##_tests},

#endif
