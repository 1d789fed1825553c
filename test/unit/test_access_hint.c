/* CUnit suite for ring/ctl/access_hint.c: what ringctl tells a user the
 * kernel refused a control socket (EACCES), in each case: not in
 * control_group, added to it after logging in, in it, and no
 * control_group at all. */
#include <CUnit/CUnit.h>

#include <string.h>

#include "ctl/access_hint.h"
#include "lib/suites.h"

static char out[1024];

static const char *message(const char *group, bool in_db, bool in_session)
{
	struct ring_access_facts f = {
		.sock = "/var/lib/ring/prod/node-1.sock", .conf = "/etc/ring/ring.conf",
		.group = group, .user = "alice", .owner = "ring",
		.in_group_db = in_db, .in_session = in_session,
	};
	ring_access_message(&f, out, sizeof out);
	return out;
}

static void test_outside_the_group_names_the_group_and_the_command(void)
{
	const char *m = message("ringusers", false, false);
	CU_ASSERT_STRING_EQUAL(m, "permission denied on /var/lib/ring/prod/node-1.sock: you are "
			       "not in group 'ringusers' (control_group); ask an administrator "
			       "to run: usermod -aG ringusers alice");
	CU_ASSERT_PTR_NULL(strstr(m, "unreachable"));
}

static void test_added_after_login_says_log_in_again(void)
{
	const char *m = message("ringusers", true, false);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "permission denied on /var/lib/ring/prod/node-1.sock"));
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "after this session began; log in again"));
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "newgrp ringusers"));
	CU_ASSERT_PTR_NULL(strstr(m, "usermod"));
}

static void test_in_the_group_points_at_the_member_and_the_folders(void)
{
	const char *m = message("ringusers", true, true);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "though you are in group 'ringusers'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "restart it"));
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "ringd -c /etc/ring/ring.conf --check"));
}

static void test_without_control_group_says_whose_it_is_and_how_to_share_it(void)
{
	const char *m = message("", false, false);
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "permission denied on /var/lib/ring/prod/node-1.sock"));
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "only for ringd's user (ring) and root"));
	CU_ASSERT_PTR_NOT_NULL(strstr(m, "set control_group = GROUP in [ring] of "
					 "/etc/ring/ring.conf"));
}

static void test_a_long_message_is_cut_not_overrun(void)
{
	char small[40];
	struct ring_access_facts f = {
		.sock = "/s", .conf = "/c", .group = "g", .user = "u", .owner = "o",
	};
	memset(small, 'x', sizeof small);
	ring_access_message(&f, small, 20);
	CU_ASSERT_EQUAL(strlen(small), 19);
	CU_ASSERT_EQUAL(small[20], 'x');
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_access_hint_tests[] = {
	T_(test_outside_the_group_names_the_group_and_the_command),
	T_(test_added_after_login_says_log_in_again),
	T_(test_in_the_group_points_at_the_member_and_the_folders),
	T_(test_without_control_group_says_whose_it_is_and_how_to_share_it),
	T_(test_a_long_message_is_cut_not_overrun),
	CU_TEST_INFO_NULL,
};
#undef T_
