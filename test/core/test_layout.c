/* CUnit suite for the ring layout (ring/core/layout.c): SPEC defaults, member
 * lookup, quorum size, what the fingerprint covers, and the sanity rules. */
#include <CUnit/CUnit.h>

#include <stdio.h>
#include <string.h>

#include "common/fingerprint.h"
#include "core/err.h"
#include "core/layout.h"
#include "lib/suites.h"

/* The defaults plus N members with ids 1..N on distinct ports. */
static void make_layout(struct ring_layout *l, size_t n)
{
	ring_layout_defaults(l);
	snprintf(l->name, sizeof l->name, "lab");
	l->n = n;
	for (size_t i = 0; i < n; i++) {
		l->members[i].id = (uint16_t)(i + 1);
		snprintf(l->members[i].host, sizeof l->members[i].host, "10.0.0.%zu", i + 1);
		l->members[i].port = (uint16_t)(7001 + i);
	}
}

static int check(const struct ring_layout *l)
{
	char err[128] = "";
	int rc = ring_layout_check(l, err, sizeof err);
	/* A refusal always says why. */
	if (rc != 0)
		CU_ASSERT(err[0] != '\0');
	return rc;
}

static void test_defaults_match_spec(void)
{
	struct ring_layout l;
	ring_layout_defaults(&l);
	CU_ASSERT_EQUAL(l.lease_ms, 5000);
	CU_ASSERT_EQUAL(l.ack_timeout_ms, 20);
	CU_ASSERT_EQUAL(l.retries, 3);
	CU_ASSERT_EQUAL(l.heartbeat_ms, 100);
	CU_ASSERT_EQUAL(l.loss_timeout_ms, 1000);
	CU_ASSERT_EQUAL(l.idle_pass_ms, 0);
	CU_ASSERT_EQUAL(l.quorum, RING_QUORUM_MAJORITY);
}

static void test_defaults_clear_name_and_members(void)
{
	struct ring_layout l;
	memset(&l, 0x5a, sizeof l);
	ring_layout_defaults(&l);
	CU_ASSERT_EQUAL(l.n, 0);
	CU_ASSERT_EQUAL(l.name[0], '\0');
	CU_ASSERT_EQUAL(l.members[0].id, 0);
	CU_ASSERT_EQUAL(l.members[RING_MAX_MEMBERS - 1].port, 0);
}

static void test_index_finds_every_member(void)
{
	struct ring_layout l;
	make_layout(&l, 5);
	l.members[0].id = 40; /* order is the ring's, not the ids' */
	CU_ASSERT_EQUAL(ring_layout_index(&l, 40), 0);
	CU_ASSERT_EQUAL(ring_layout_index(&l, 2), 1);
	CU_ASSERT_EQUAL(ring_layout_index(&l, 3), 2);
	CU_ASSERT_EQUAL(ring_layout_index(&l, 5), 4);
}

static void test_index_of_a_non_member_is_minus_1(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	CU_ASSERT_EQUAL(ring_layout_index(&l, 4), -1);
	CU_ASSERT_EQUAL(ring_layout_index(&l, 0), -1);
	CU_ASSERT_EQUAL(ring_layout_index(&l, UINT16_MAX), -1);
	/* A slot past n is not a member, whatever it holds. */
	l.members[3].id = 9;
	CU_ASSERT_EQUAL(ring_layout_index(&l, 9), -1);
}

static void test_majority_quorum_is_n_over_2_plus_1(void)
{
	static const size_t want[][2] = { { 2, 2 }, { 3, 2 }, { 4, 3 }, { 5, 3 },
					  { 6, 4 }, { 256, 129 } };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		struct ring_layout l;
		make_layout(&l, want[i][0]);
		CU_ASSERT_EQUAL(ring_layout_quorum(&l), want[i][1]);
	}
}

static void test_no_quorum_is_1(void)
{
	static const size_t sizes[] = { 2, 3, 4, 5, 256 };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct ring_layout l;
		make_layout(&l, sizes[i]);
		l.quorum = RING_QUORUM_NONE;
		CU_ASSERT_EQUAL(ring_layout_quorum(&l), 1);
	}
}

static void test_fingerprint_is_stable_for_equal_layouts(void)
{
	struct ring_layout a, b;
	make_layout(&a, 4);
	make_layout(&b, 4);
	CU_ASSERT_EQUAL(ring_layout_fingerprint(&a), ring_layout_fingerprint(&b));
	CU_ASSERT_EQUAL(ring_layout_fingerprint(&a), ring_layout_fingerprint(&a));
}

/* Pinned values: members on hosts of either byte order must compute the
 * same fingerprint or they refuse each other. Computed independently of
 * layout.c and fingerprint.c (Python's hashlib): the first 8 bytes of
 * BLAKE2b-256 over the name, timings, quorum, n and members, numbers as 8
 * big-endian bytes, strings prefixed by their length. */
static void test_fingerprint_has_pinned_value(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	snprintf(l.members[2].host, sizeof l.members[2].host, "host-c.example");
	CU_ASSERT_EQUAL(ring_layout_fingerprint(&l), 0xa413281006d95b4eULL);
}

/* A name that fills its array without a terminator is hashed up to the end
 * of the array: the bytes after it are the timings, in host order. */
static void test_fingerprint_of_a_full_name_stops_at_its_array(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	snprintf(l.members[2].host, sizeof l.members[2].host, "host-c.example");
	memset(l.name, 'n', sizeof l.name);
	CU_ASSERT_EQUAL(ring_layout_fingerprint(&l), 0xdca55a01d219adf2ULL);
}

/* What is not part of the agreement does not count: slots past n, and
 * bytes after a string's terminator. */
static void test_fingerprint_ignores_what_is_not_agreed(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	b.members[3].id = 77;
	snprintf(b.members[3].host, sizeof b.members[3].host, "ghost");
	memset(b.name + 4, 'x', 8);
	memset(b.members[0].host + 9, 'y', 8);
	CU_ASSERT_EQUAL(ring_layout_fingerprint(&a), ring_layout_fingerprint(&b));
}

static void assert_fingerprint_differs(const struct ring_layout *a,
				       const struct ring_layout *b)
{
	CU_ASSERT_NOT_EQUAL(ring_layout_fingerprint(a), ring_layout_fingerprint(b));
}

static void test_fingerprint_changes_with_the_name(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	snprintf(b.name, sizeof b.name, "lab2");
	assert_fingerprint_differs(&a, &b);
	b.name[0] = '\0';
	assert_fingerprint_differs(&a, &b);
}

static void test_fingerprint_changes_with_each_timing(void)
{
	for (int t = 0; t < 6; t++) {
		struct ring_layout a, b;
		make_layout(&a, 3);
		make_layout(&b, 3);
		switch (t) {
		case 0: b.lease_ms++; break;
		case 1: b.ack_timeout_ms++; break;
		case 2: b.retries++; break;
		case 3: b.heartbeat_ms++; break;
		case 4: b.loss_timeout_ms++; break;
		default: b.idle_pass_ms++; break;
		}
		assert_fingerprint_differs(&a, &b);
	}
}

/* Two timings swapped must not hash alike: each has its place. */
static void test_fingerprint_changes_when_timings_swap(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	b.heartbeat_ms = a.ack_timeout_ms;
	b.ack_timeout_ms = a.heartbeat_ms;
	assert_fingerprint_differs(&a, &b);
}

static void test_fingerprint_changes_with_the_quorum(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	b.quorum = RING_QUORUM_NONE;
	assert_fingerprint_differs(&a, &b);
}

static void test_fingerprint_changes_with_a_member_id(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	b.members[1].id = 200;
	assert_fingerprint_differs(&a, &b);
}

static void test_fingerprint_changes_with_a_member_host(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	snprintf(b.members[2].host, sizeof b.members[2].host, "10.0.0.30");
	assert_fingerprint_differs(&a, &b);
}

static void test_fingerprint_changes_with_a_member_port(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	b.members[0].port = 7101;
	assert_fingerprint_differs(&a, &b);
}

/* Hex digits in which the printed fingerprints of A and B differ. */
static int hex_digits_apart(const struct ring_layout *a, const struct ring_layout *b)
{
	char x[17], y[17];
	snprintf(x, sizeof x, "%016llx", (unsigned long long)ring_layout_fingerprint(a));
	snprintf(y, sizeof y, "%016llx", (unsigned long long)ring_layout_fingerprint(b));
	int apart = 0;
	for (int i = 0; i < 16; i++)
		apart += x[i] != y[i];
	return apart;
}

/* Two files one port apart must not print fingerprints that look alike:
 * FNV-1a's were 5 hex digits apart (e84f4b8a147d9e77 / e84f4a8a147d9cc4).
 * A real hash changes 15 of 16 on average; every case here, at least 8. */
static void test_fingerprint_one_port_apart_differs_in_most_digits(void)
{
	for (size_t i = 0; i < 3; i++)
		for (int delta = -1; delta <= 1; delta += 2) {
			struct ring_layout a, b;
			make_layout(&a, 3);
			make_layout(&b, 3);
			b.members[i].port = (uint16_t)(b.members[i].port + delta);
			int apart = hex_digits_apart(&a, &b);
			if (apart < 8)
				printf("\n  member %zu's port %+d: only %d hex digits apart\n", i, delta,
				       apart);
			CU_ASSERT(apart >= 8);
		}
}

static void test_fingerprint_changes_with_member_order(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 3);
	struct ring_member m = b.members[0];
	b.members[0] = b.members[1];
	b.members[1] = m;
	assert_fingerprint_differs(&a, &b);
}

static void test_fingerprint_changes_with_member_count(void)
{
	struct ring_layout a, b;
	make_layout(&a, 3);
	make_layout(&b, 4);
	assert_fingerprint_differs(&a, &b);
}

static void test_check_accepts_defaults_with_2_and_5_members(void)
{
	struct ring_layout l;
	make_layout(&l, 2);
	CU_ASSERT_EQUAL(check(&l), 0);
	make_layout(&l, 5);
	CU_ASSERT_EQUAL(check(&l), 0);
}

static void test_check_accepts_the_largest_ring(void)
{
	struct ring_layout l;
	make_layout(&l, RING_MAX_MEMBERS);
	CU_ASSERT_EQUAL(check(&l), 0);
}

static void test_check_rejects_fewer_than_2_members(void)
{
	struct ring_layout l;
	make_layout(&l, 1);
	CU_ASSERT_EQUAL(check(&l), -RING_ECONFIG);
	make_layout(&l, 0);
	CU_ASSERT_EQUAL(check(&l), -RING_ECONFIG);
}

static void test_check_rejects_duplicate_ids(void)
{
	struct ring_layout l;
	make_layout(&l, 5);
	l.members[1].id = l.members[0].id; /* neighbours */
	CU_ASSERT_EQUAL(check(&l), -RING_ECONFIG);
	make_layout(&l, 5);
	l.members[4].id = l.members[0].id; /* first and last */
	CU_ASSERT_EQUAL(check(&l), -RING_ECONFIG);
}

static void test_check_rejects_id_0(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	l.members[2].id = 0;
	CU_ASSERT_EQUAL(check(&l), -RING_ECONFIG);
}

static void test_check_rejects_loss_timeout_below_4_heartbeats(void)
{
	struct ring_layout l;
	make_layout(&l, 3);
	l.heartbeat_ms = 100;
	l.loss_timeout_ms = 399;
	CU_ASSERT_EQUAL(check(&l), -RING_ECONFIG);
	l.loss_timeout_ms = 400;
	CU_ASSERT_EQUAL(check(&l), 0);
	/* No overflow on the way: 4 x 2^31 does not fit 32 bits. */
	l.heartbeat_ms = 0x80000000u;
	l.loss_timeout_ms = UINT32_MAX;
	CU_ASSERT_EQUAL(check(&l), -RING_ECONFIG);
}

static void test_check_error_fits_a_small_buffer(void)
{
	struct ring_layout l;
	char err[8];
	memset(err, 'z', sizeof err);
	make_layout(&l, 1);
	CU_ASSERT_EQUAL(ring_layout_check(&l, err, sizeof err), -RING_ECONFIG);
	CU_ASSERT_EQUAL(err[sizeof err - 1], '\0');
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_layout_tests[] = {
	T_(test_defaults_match_spec),
	T_(test_defaults_clear_name_and_members),
	T_(test_index_finds_every_member),
	T_(test_index_of_a_non_member_is_minus_1),
	T_(test_majority_quorum_is_n_over_2_plus_1),
	T_(test_no_quorum_is_1),
	T_(test_fingerprint_is_stable_for_equal_layouts),
	T_(test_fingerprint_has_pinned_value),
	T_(test_fingerprint_of_a_full_name_stops_at_its_array),
	T_(test_fingerprint_ignores_what_is_not_agreed),
	T_(test_fingerprint_changes_with_the_name),
	T_(test_fingerprint_changes_with_each_timing),
	T_(test_fingerprint_changes_when_timings_swap),
	T_(test_fingerprint_changes_with_the_quorum),
	T_(test_fingerprint_changes_with_a_member_id),
	T_(test_fingerprint_changes_with_a_member_host),
	T_(test_fingerprint_changes_with_a_member_port),
	T_(test_fingerprint_one_port_apart_differs_in_most_digits),
	T_(test_fingerprint_changes_with_member_order),
	T_(test_fingerprint_changes_with_member_count),
	T_(test_check_accepts_defaults_with_2_and_5_members),
	T_(test_check_accepts_the_largest_ring),
	T_(test_check_rejects_fewer_than_2_members),
	T_(test_check_rejects_duplicate_ids),
	T_(test_check_rejects_id_0),
	T_(test_check_rejects_loss_timeout_below_4_heartbeats),
	T_(test_check_error_fits_a_small_buffer),
	CU_TEST_INFO_NULL,
};
#undef T_
