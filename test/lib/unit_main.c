/* The unit-test binary: registers every module's CUnit suite, runs them
 * with the basic interface, and exits non-zero on any failure.
 * `build/unit [SUITE [TEST]]` runs one suite or one test of it. */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include <stdio.h>

#include "lib/suites.h"

int main(int argc, char **argv)
{
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit: %s\n", CU_get_error_msg());
		return 1;
	}

	/* One row per suite: name, init and cleanup around the suite (or
	 * NULL), setup and teardown around each test (or NULL), its table. */
	CU_SuiteInfo suites[] = {
		{"wire", NULL, NULL, NULL, NULL, ring_test_wire_tests},
		{"layout", NULL, NULL, NULL, NULL, ring_test_layout_tests},
		{"node", NULL, NULL, NULL, NULL, ring_test_node_tests},
		{"fence_file", NULL, NULL, NULL, NULL, ring_test_fence_file_tests},
		{"epoch_store", NULL, NULL, NULL, NULL, ring_test_epoch_store_tests},
		{"state_dir", NULL, NULL, NULL, NULL, ring_test_state_dir_tests},
		{"inject", NULL, NULL, NULL, NULL, ring_test_inject_tests},
		{"log", NULL, NULL, NULL, NULL, ring_test_log_tests},
		{"metrics", NULL, NULL, NULL, NULL, ring_test_metrics_tests},
		{"watch", NULL, NULL, NULL, NULL, ring_test_watch_tests},
		{"status_poll", NULL, NULL, NULL, NULL, ring_test_status_poll_tests},
		{"net", NULL, NULL, NULL, NULL, ring_test_net_tests},
		{"sd_notify", NULL, NULL, NULL, NULL, ring_test_sd_notify_tests},
		{"conf", NULL, NULL, NULL, NULL, ring_test_conf_tests},
		{"control", NULL, NULL, NULL, NULL, ring_test_control_tests},
		{"trace", ring_test_trace_init, ring_test_trace_cleanup, NULL, NULL,
		 ring_test_trace_tests},
		{"logview", ring_test_logview_init, ring_test_logview_cleanup, NULL, NULL,
		 ring_test_logview_tests},
		{"auth", ring_test_auth_init, ring_test_auth_cleanup, NULL, NULL,
		 ring_test_auth_tests},
		{"simcheck", NULL, NULL, NULL, NULL, ring_test_simcheck_tests},
		{"rules_token", NULL, NULL, NULL, NULL, ring_test_rules_token_tests},
		{"rules_members", NULL, NULL, NULL, NULL, ring_test_rules_members_tests},
		{"rules_election", NULL, NULL, NULL, NULL, ring_test_rules_election_tests},
		{"rules_park", NULL, NULL, NULL, NULL, ring_test_rules_park_tests},
		{"review_park", NULL, NULL, NULL, NULL, ring_test_review_park_tests},
		{"review_laps", NULL, NULL, NULL, NULL, ring_test_review_laps_tests},
		{"review_epochs", NULL, NULL, NULL, NULL, ring_test_review_epochs_tests},
		{"review_epochs2", NULL, NULL, NULL, NULL, ring_test_review_epochs2_tests},
		{"review_epochs3", NULL, NULL, NULL, NULL, ring_test_review_epochs3_tests},
		CU_SUITE_INFO_NULL,
	};
	if (CU_register_suites(suites) != CUE_SUCCESS) {
		fprintf(stderr, "unit: registering suites: %s\n", CU_get_error_msg());
		CU_cleanup_registry();
		return 1;
	}

	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_ErrorCode rc;
	CU_pSuite suite = argc > 1 ? CU_get_suite(argv[1]) : NULL;
	CU_pTest test = suite && argc > 2 ? CU_get_test(suite, argv[2]) : NULL;
	if (argc > 1 && (!suite || (argc > 2 && !test))) {
		fprintf(stderr, "unit: no %s %s\n", argc > 2 ? "test" : "suite",
			argc > 2 ? argv[2] : argv[1]);
		CU_cleanup_registry();
		return 2;
	}
	if (test)
		rc = CU_basic_run_test(suite, test);
	else if (suite)
		rc = CU_basic_run_suite(suite);
	else
		rc = CU_basic_run_tests();
	/* A run that stopped early (rc) or a suite whose setup failed counts
	 * as a failure, not only failed assertions. */
	int failed = rc != CUE_SUCCESS || CU_get_number_of_failures() > 0 ||
		     CU_get_number_of_tests_failed() > 0 ||
		     CU_get_number_of_suites_failed() > 0;
	if (rc != CUE_SUCCESS)
		fprintf(stderr, "unit: %s\n", CU_get_error_msg());
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
