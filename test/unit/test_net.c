/* CUnit suite for ring/common/net.c: which addresses count as the same member, and
 * resolving hosts the way a ring file names them. */
#include <CUnit/CUnit.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "core/err.h"
#include "common/net.h"
#include "lib/suites.h"

/* SA (LEN bytes) as a ring_addr, zero beyond it. */
static struct ring_addr as_ring_addr(const void *sa, socklen_t len)
{
	struct ring_addr a;
	memset(&a, 0, sizeof a);
	memcpy(&a.sa, sa, len);
	a.len = len;
	return a;
}

static struct ring_addr v4(const char *ip, uint16_t port)
{
	struct sockaddr_in s = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, ip, &s.sin_addr);
	return as_ring_addr(&s, sizeof s);
}

static struct ring_addr v6(const char *ip, uint16_t port)
{
	struct sockaddr_in6 s = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	inet_pton(AF_INET6, ip, &s.sin6_addr);
	return as_ring_addr(&s, sizeof s);
}

static void test_same_ipv4_address_and_port_match(void)
{
	struct ring_addr a = v4("127.0.0.1", 7001), b = v4("127.0.0.1", 7001);
	CU_ASSERT(ring_net_same_addr(&a, &b));
}

static void test_other_port_or_address_or_family_does_not_match(void)
{
	struct ring_addr a = v4("127.0.0.1", 7001), port = v4("127.0.0.1", 7002),
			 host = v4("127.0.0.2", 7001), six = v6("::1", 7001);
	CU_ASSERT_FALSE(ring_net_same_addr(&a, &port));
	CU_ASSERT_FALSE(ring_net_same_addr(&a, &host));
	CU_ASSERT_FALSE(ring_net_same_addr(&a, &six));
	/* Both all zeros where the other family keeps its address. */
	struct ring_addr any4 = v4("0.0.0.0", 7001), any6 = v6("::", 7001);
	CU_ASSERT_FALSE(ring_net_same_addr(&any4, &any6));
}

/* The kernel and getaddrinfo need not agree on padding or a length: the
 * raw memcmp ringctl once used would call a member a stranger. */
static void test_padding_and_length_do_not_count(void)
{
	struct ring_addr a = v4("10.0.0.1", 9), b = v4("10.0.0.1", 9);
	memset(((struct sockaddr_in *)&b.sa)->sin_zero, 0xAA, 8);
	b.len = sizeof b.sa;
	CU_ASSERT(ring_net_same_addr(&a, &b));
	struct ring_addr c = v6("fe80::1", 9), d = v6("fe80::1", 9);
	((struct sockaddr_in6 *)&d.sa)->sin6_flowinfo = htonl(1234);
	CU_ASSERT(ring_net_same_addr(&c, &d));
	struct ring_addr e = v6("fe80::2", 9);
	CU_ASSERT_FALSE(ring_net_same_addr(&c, &e));
	struct ring_addr f = v6("fe80::1", 10);
	CU_ASSERT_FALSE(ring_net_same_addr(&c, &f));
}

static void test_index_of_finds_the_member_or_returns_n(void)
{
	struct ring_addr peers[3] = {v4("127.0.0.1", 1), v4("127.0.0.1", 2), v4("127.0.0.1", 3)};
	struct ring_addr two = v4("127.0.0.1", 2), none = v4("127.0.0.1", 4);
	CU_ASSERT_EQUAL(ring_net_index_of(peers, 3, &two), 1);
	CU_ASSERT_EQUAL(ring_net_index_of(peers, 3, &none), 3);
}

static void test_resolve_numeric_hosts(void)
{
	struct ring_addr a, want = v4("127.0.0.1", 7001);
	char err[128];
	CU_ASSERT_EQUAL(ring_net_resolve("127.0.0.1", 7001, AF_UNSPEC, &a, err, sizeof err), 0);
	CU_ASSERT(ring_net_same_addr(&a, &want));
	struct ring_addr b, want6 = v6("::1", 7002);
	CU_ASSERT_EQUAL(ring_net_resolve("::1", 7002, AF_UNSPEC, &b, err, sizeof err), 0);
	CU_ASSERT(ring_net_same_addr(&b, &want6));
	char text[80];
	ring_net_format(&a, text, sizeof text);
	CU_ASSERT_STRING_EQUAL(text, "127.0.0.1:7001");
}

static void test_unresolvable_host_is_a_config_error_with_a_reason(void)
{
	struct ring_addr a;
	char err[128] = "";
	/* An IPv6 literal asked for as IPv4 fails without any DNS. */
	CU_ASSERT_EQUAL(ring_net_resolve("::1", 7001, AF_INET, &a, err, sizeof err), -RING_ECONFIG);
	CU_ASSERT(err[0] != 0);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_net_tests[] = {
	T_(test_same_ipv4_address_and_port_match),
	T_(test_other_port_or_address_or_family_does_not_match),
	T_(test_padding_and_length_do_not_count),
	T_(test_index_of_finds_the_member_or_returns_n),
	T_(test_resolve_numeric_hosts),
	T_(test_unresolvable_host_is_a_config_error_with_a_reason),
	CU_TEST_INFO_NULL,
};
#undef T_
