/* The CUnit suites of the unit-test binary, one per module. Each registers
 * its suite and returns 0, or a CUnit error code. */
#ifndef RING_TEST_SUITES_H
#define RING_TEST_SUITES_H

int ring_test_wire_suite(void);
int ring_test_layout_suite(void);
int ring_test_node_suite(void);
int ring_test_fence_file_suite(void);
int ring_test_epoch_store_suite(void);
int ring_test_net_suite(void);
int ring_test_conf_suite(void);
int ring_test_control_suite(void);
int ring_test_trace_suite(void);
int ring_test_auth_suite(void);
int ring_test_simcheck_suite(void);
int ring_test_rules_token_suite(void);
int ring_test_rules_members_suite(void);
int ring_test_rules_election_suite(void);

#endif
