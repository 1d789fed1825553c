/* The unit-test binary: registers every module's CUnit suite, runs them
 * with the basic interface, and exits non-zero on any failure. */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include <stdio.h>

#include "suites.h"

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "unit: %s\n", CU_get_error_msg());
		return 1;
	}

	int (*const suites[])(void) = {
		ring_test_wire_suite,
		ring_test_layout_suite,
		ring_test_node_suite,
		ring_test_fence_file_suite,
		ring_test_epoch_store_suite,
		ring_test_net_suite,
		ring_test_conf_suite,
		ring_test_control_suite,
		ring_test_trace_suite,
		ring_test_auth_suite,
		ring_test_simcheck_suite,
		ring_test_rules_token_suite,
		ring_test_rules_members_suite,
		ring_test_rules_election_suite,
	};
	for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
		if (suites[i]() != 0) {
			fprintf(stderr, "unit: registering suites: %s\n", CU_get_error_msg());
			CU_cleanup_registry();
			return 1;
		}

	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_ErrorCode rc = CU_basic_run_tests();
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
