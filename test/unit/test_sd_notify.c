/* CUnit suite for ring/daemon/sd_notify.c: NOTIFY_SOCKET addresses, the watchdog's
 * environment, a datagram as systemd receives it, and what "joined" and
 * STATUS= say for a member's status. */
#include <CUnit/CUnit.h>

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/err.h"
#include "daemon/sd_notify.h"
#include "lib/suites.h"

static void test_a_path_keeps_its_nul_and_an_abstract_name_has_none(void)
{
	struct sockaddr_un sa;
	socklen_t len;
	CU_ASSERT_EQUAL(ring_sd_addr_parse("/run/systemd/notify", &sa, &len), 0);
	CU_ASSERT_STRING_EQUAL(sa.sun_path, "/run/systemd/notify");
	CU_ASSERT_EQUAL(len, offsetof(struct sockaddr_un, sun_path) + strlen("/run/systemd/notify") + 1);
	CU_ASSERT_EQUAL(ring_sd_addr_parse("@ring/x", &sa, &len), 0);
	CU_ASSERT_EQUAL(sa.sun_path[0], '\0');
	CU_ASSERT_EQUAL(memcmp(sa.sun_path + 1, "ring/x", 6), 0);
	CU_ASSERT_EQUAL(len, offsetof(struct sockaddr_un, sun_path) + 7);
}

static void test_relative_empty_and_too_long_addresses_are_refused(void)
{
	struct sockaddr_un sa;
	socklen_t len;
	char longp[sizeof sa.sun_path + 2];
	memset(longp, 'a', sizeof longp - 1);
	longp[0] = '/';
	longp[sizeof longp - 1] = '\0';
	CU_ASSERT_EQUAL(ring_sd_addr_parse("run/notify", &sa, &len), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_addr_parse("", &sa, &len), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_addr_parse("@", &sa, &len), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_addr_parse("/", &sa, &len), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_addr_parse(NULL, &sa, &len), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_addr_parse(longp, &sa, &len), -RING_EFIELD);
	/* sun_path's length exactly: no room for the NUL a path keeps. */
	longp[sizeof sa.sun_path] = '\0';
	CU_ASSERT_EQUAL(ring_sd_addr_parse(longp, &sa, &len), -RING_EFIELD);
	longp[sizeof sa.sun_path - 1] = '\0';
	CU_ASSERT_EQUAL(ring_sd_addr_parse(longp, &sa, &len), 0);
}

static void test_the_watchdog_is_ours_only_without_a_pid_or_with_our_pid(void)
{
	uint64_t u = 1;
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse(NULL, NULL, 42, &u), 0);
	CU_ASSERT_EQUAL(u, 0);
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("3000000", NULL, 42, &u), 0);
	CU_ASSERT_EQUAL(u, 3000000);
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("3000000", "42", 42, &u), 0);
	CU_ASSERT_EQUAL(u, 3000000);
	/* Inherited from a parent that systemd watches: not ours to feed. */
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("3000000", "41", 42, &u), 0);
	CU_ASSERT_EQUAL(u, 0);
}

static void test_a_watchdog_value_that_is_not_a_number_is_refused(void)
{
	uint64_t u = 1;
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("3s", NULL, 42, &u), -RING_EFIELD);
	CU_ASSERT_EQUAL(u, 0);
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("", NULL, 42, &u), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("-1", NULL, 42, &u), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("99999999999999999999", NULL, 42, &u), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_sd_watchdog_parse("1000", "x", 42, &u), -RING_EFIELD);
}

/* What systemd would read on its socket: an abstract name of our own. */
static void test_a_message_arrives_whole_on_an_abstract_socket(void)
{
	char name[64], err[128], got[256];
	snprintf(name, sizeof name, "@ring-unit-sd-%ld", (long)getpid());
	struct sockaddr_un sa;
	socklen_t len;
	CU_ASSERT_FATAL(ring_sd_addr_parse(name, &sa, &len) == 0);
	int rx = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(rx >= 0);
	CU_ASSERT_FATAL(bind(rx, (struct sockaddr *)&sa, len) == 0);
	struct ring_sd_notify n;
	CU_ASSERT_EQUAL(ring_sd_notify_open(&n, name, err, sizeof err), 0);
	CU_ASSERT(n.fd >= 0);
	CU_ASSERT_EQUAL(ring_sd_notify_send(&n, "READY=1\nSTATUS=in the ring"), 0);
	ssize_t r = recv(rx, got, sizeof got - 1, MSG_DONTWAIT);
	CU_ASSERT_EQUAL(r, (ssize_t)strlen("READY=1\nSTATUS=in the ring"));
	got[r > 0 ? r : 0] = '\0';
	CU_ASSERT_STRING_EQUAL(got, "READY=1\nSTATUS=in the ring");
	close(rx);
	/* Nobody listening any more: an error to return, not a hang. */
	CU_ASSERT_EQUAL(ring_sd_notify_send(&n, "WATCHDOG=1"), -RING_EIO);
	ring_sd_notify_close(&n);
	CU_ASSERT_EQUAL(n.fd, -1);
}

static void test_without_notify_socket_nothing_is_opened_or_sent(void)
{
	char err[128];
	struct ring_sd_notify n;
	CU_ASSERT_EQUAL(ring_sd_notify_open(&n, NULL, err, sizeof err), 0);
	CU_ASSERT_EQUAL(n.fd, -1);
	CU_ASSERT_EQUAL(ring_sd_notify_open(&n, "", err, sizeof err), 0);
	CU_ASSERT_EQUAL(n.fd, -1);
	CU_ASSERT_EQUAL(ring_sd_notify_send(&n, "READY=1"), 0);
	CU_ASSERT_EQUAL(ring_sd_notify_open(&n, "relative/path", err, sizeof err), -RING_EFIELD);
	CU_ASSERT_EQUAL(n.fd, -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "relative/path"));
}

/* A status of member ME (index) of three: heard a token SEEN ms ago (or
 * never: UINT64_MAX), with the alive set ALIVE (bits by index). */
static struct ring_status status_of(size_t me, uint64_t seen, unsigned alive, enum ring_state s)
{
	struct ring_status st;
	memset(&st, 0, sizeof st);
	st.node = (uint16_t)(me + 1);
	st.state = s;
	st.epoch = 513;
	st.token_seen_ms_ago = seen;
	for (size_t i = 0; i < 3; i++)
		if (alive >> i & 1u)
			ring_set_add(&st.alive, i);
	return st;
}

static void test_joined_needs_a_live_token_heard_and_a_place_in_the_alive_set(void)
{
	/* A member that heard nothing yet starts believing all alive. */
	struct ring_status alone = status_of(0, UINT64_MAX, 7, RING_STATE_NO_QUORUM);
	struct ring_status in = status_of(0, 12, 7, RING_STATE_IDLE);
	struct ring_status left_out = status_of(0, 12, 6, RING_STATE_IDLE);
	CU_ASSERT_FALSE(ring_sd_joined(&alone, 0));
	CU_ASSERT(ring_sd_joined(&in, 0));
	CU_ASSERT_FALSE(ring_sd_joined(&left_out, 0));
	CU_ASSERT(ring_sd_joined(&left_out, 1));
}

static void test_status_names_the_standing_not_where_the_token_is(void)
{
	char a[160], b[160];
	struct ring_status st = status_of(1, 3, 7, RING_STATE_IDLE);
	CU_ASSERT(ring_sd_status_text(a, sizeof a, &st, 1, 3, false) > 0);
	CU_ASSERT_STRING_EQUAL(a, "in the ring: epoch 513, 3 of 3 members alive");
	/* The token passing through must not change it: STATUS= is sent on
	 * change, and would otherwise change at every hop. */
	st.state = RING_STATE_HOLDING;
	st.has_token = st.token_held = true;
	st.token_seen_ms_ago = 0;
	CU_ASSERT(ring_sd_status_text(b, sizeof b, &st, 1, 3, false) > 0);
	CU_ASSERT_STRING_EQUAL(a, b);
	st.state = RING_STATE_WAITING;
	st.queued = 4;
	CU_ASSERT(ring_sd_status_text(b, sizeof b, &st, 1, 3, false) > 0);
	CU_ASSERT_STRING_EQUAL(a, b);
}

static void test_status_says_waiting_no_quorum_electing_or_leaving(void)
{
	char t[160];
	struct ring_status st = status_of(0, UINT64_MAX, 7, RING_STATE_IDLE);
	ring_sd_status_text(t, sizeof t, &st, 0, 3, false);
	CU_ASSERT_STRING_EQUAL(t, "waiting for the ring (epoch 513)");
	st.state = RING_STATE_NO_QUORUM;
	ring_sd_status_text(t, sizeof t, &st, 0, 3, false);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "no quorum"));
	st = status_of(0, 900, 3, RING_STATE_NO_QUORUM);
	ring_sd_status_text(t, sizeof t, &st, 0, 3, false);
	CU_ASSERT_STRING_EQUAL(t, "no quorum: 2 of 3 members alive (epoch 513)");
	st.state = RING_STATE_ELECTING;
	ring_sd_status_text(t, sizeof t, &st, 0, 3, false);
	CU_ASSERT_PTR_NOT_NULL(strstr(t, "electing"));
	ring_sd_status_text(t, sizeof t, &st, 0, 3, true);
	CU_ASSERT_STRING_EQUAL(t, "leaving the ring");
	CU_ASSERT_EQUAL(ring_sd_status_text(t, 8, &st, 0, 3, false), -RING_ENOSPACE);
}

CU_TestInfo ring_test_sd_notify_tests[] = {
	{"a path keeps its NUL and an abstract name has none",
	 test_a_path_keeps_its_nul_and_an_abstract_name_has_none},
	{"relative, empty and too long addresses are refused",
	 test_relative_empty_and_too_long_addresses_are_refused},
	{"the watchdog is ours only without a pid or with our pid",
	 test_the_watchdog_is_ours_only_without_a_pid_or_with_our_pid},
	{"a watchdog value that is not a number is refused",
	 test_a_watchdog_value_that_is_not_a_number_is_refused},
	{"a message arrives whole on an abstract socket",
	 test_a_message_arrives_whole_on_an_abstract_socket},
	{"without NOTIFY_SOCKET nothing is opened or sent",
	 test_without_notify_socket_nothing_is_opened_or_sent},
	{"joined needs a live token heard and a place in the alive set",
	 test_joined_needs_a_live_token_heard_and_a_place_in_the_alive_set},
	{"status names the standing, not where the token is",
	 test_status_names_the_standing_not_where_the_token_is},
	{"status says waiting, no quorum, electing or leaving",
	 test_status_says_waiting_no_quorum_electing_or_leaving},
	CU_TEST_INFO_NULL,
};
