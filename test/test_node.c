/* CUnit suite for the protocol core (ring/node.c). */
#include <CUnit/CUnit.h>

#include "suites.h"

int ring_test_node_suite(void)
{
	CU_pSuite s = CU_add_suite("node", NULL, NULL);
	return s ? 0 : (int)CU_get_error();
}
