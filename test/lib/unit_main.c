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

	/* One row per suite of lib/suites.h's table. */
	CU_SuiteInfo suites[] = {
		RING_UNIT_SUITES(RING_SUITE_INFO)
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
