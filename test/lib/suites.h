/* The CUnit suites of the unit-test binary, one per module: each
 * test/test_NAME.c defines its table ring_test_NAME_tests[] (ended by
 * CU_TEST_INFO_NULL), and test/unit_main.c registers one row per suite.
 * A new suite is a line here and a row there. */
#ifndef RING_TEST_SUITES_H
#define RING_TEST_SUITES_H

#include <CUnit/CUnit.h>

extern CU_TestInfo ring_test_wire_tests[];
extern CU_TestInfo ring_test_layout_tests[];
extern CU_TestInfo ring_test_node_tests[];
extern CU_TestInfo ring_test_fence_file_tests[];
extern CU_TestInfo ring_test_epoch_store_tests[];
extern CU_TestInfo ring_test_state_dir_tests[];
extern CU_TestInfo ring_test_inject_tests[];
extern CU_TestInfo ring_test_log_tests[];
extern CU_TestInfo ring_test_metrics_tests[];
extern CU_TestInfo ring_test_watch_tests[];
extern CU_TestInfo ring_test_status_poll_tests[];
extern CU_TestInfo ring_test_net_tests[];
extern CU_TestInfo ring_test_sd_notify_tests[];
extern CU_TestInfo ring_test_conf_tests[];
extern CU_TestInfo ring_test_control_tests[];
extern CU_TestInfo ring_test_trace_tests[];
extern CU_TestInfo ring_test_logview_tests[];
extern CU_TestInfo ring_test_auth_tests[];
extern CU_TestInfo ring_test_simcheck_tests[];
extern CU_TestInfo ring_test_rules_token_tests[];
extern CU_TestInfo ring_test_rules_members_tests[];
extern CU_TestInfo ring_test_rules_election_tests[];
extern CU_TestInfo ring_test_rules_park_tests[];
extern CU_TestInfo ring_test_review_park_tests[];
extern CU_TestInfo ring_test_review_laps_tests[];
extern CU_TestInfo ring_test_review_epochs_tests[];
extern CU_TestInfo ring_test_review_epochs2_tests[];
extern CU_TestInfo ring_test_review_epochs3_tests[];

/* Suite init and cleanup (a scratch directory), where a suite has them:
 * 0 on success. */
int ring_test_trace_init(void);
int ring_test_trace_cleanup(void);
int ring_test_logview_init(void);
int ring_test_logview_cleanup(void);
int ring_test_auth_init(void);
int ring_test_auth_cleanup(void);

#endif
