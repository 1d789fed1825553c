/* CUnit suite of elections and regeneration (PROTOCOL.md §6; ring/core/election.c)
 * and of the pauses that start them (§5.5): one scripted history per rule of
 * pauses, elections, their guards and quorum, each failing when the rule is
 * removed (its mutant in test/mutants/). */
#include <CUnit/CUnit.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fingerprint.h"
#include "core/err.h"
#include "core/layout.h"
#include "core/node.h"
#include "core/set.h"
#include "core/wire.h"
#include "lib/harness.h"
#include "lib/suites.h"

/* ---- a paused member's socket ----
 * A paused member is not stepped (its deadline is hidden from the ring), and
 * what is sent to it waits in its socket; on waking it reads the socket in
 * the daemon's batch order (ring_node_rx_rank: everything but tokens first,
 * §5.5), so that the first event it sees is already late. */

#define SOCK_MAX 256

struct sock {
	bool paused;
	size_t n;
	struct flight f[SOCK_MAX];
};

static struct sock sock[HRING_MAX];

/* The drop filter of the histories below: datagrams to a paused member go
 * to its socket; EXTRA, when set, is a loss of the history's own. */
static bool (*extra_drop)(const struct hring *s, const struct flight *f);

static bool socket_filter(const struct flight *f, const void *arg)
{
	const struct hring *s = arg;
	size_t to = index_of(s, f->to);
	if (sock[to].paused) {
		if (sock[to].n < SOCK_MAX)
			sock[to].f[sock[to].n++] = *f;
		return true;
	}
	return extra_drop && extra_drop(s, f);
}

static void sockets_init(struct hring *s)
{
	memset(sock, 0, sizeof sock);
	extra_drop = NULL;
	s->drop = socket_filter;
	s->drop_arg = s;
}

/* Stops member I. With KEEP_SOCKET what is sent to it waits for it, but
 * the ring's watch still counts it (a paused member's client is still in
 * the region, which §5.5 says no member can prevent); without, what is sent
 * to it is lost and the watch leaves it out until it wakes. */
static void pause_member(struct hring *s, size_t i, bool keep_socket)
{
	sock[i].paused = true;
	sock[i].n = 0;
	s->deadline[i] = NEVER;
	s->up[i] = keep_socket;
}

static int msg_type(const struct flight *f)
{
	struct ring_msg m;
	return ring_wire_decode(f->buf, f->len, &m) == 0 ? (int)m.type : -1;
}

/* Loses what waits in member I's socket but messages of TYPE. */
static void socket_keep_only(size_t i, enum ring_msg_type type)
{
	size_t out = 0;
	for (size_t k = 0; k < sock[i].n; k++)
		if (msg_type(&sock[i].f[k]) == (int)type)
			sock[i].f[out++] = sock[i].f[k];
	sock[i].n = out;
}

/* Wakes member I: it reads its socket (or, if empty, its timer fires). */
static void wake_member(struct hring *s, size_t i)
{
	sock[i].paused = false;
	s->up[i] = true;
	if (sock[i].n == 0) {
		hring_tick(s, i);
		return;
	}
	for (int rank = 0; rank <= 1; rank++)
		for (size_t k = 0; k < sock[i].n; k++) {
			const struct flight *f = &sock[i].f[k];
			if (ring_node_rx_rank(f->buf, f->len) == rank)
				hring_datagram(s, i, f->from, f->buf, f->len);
		}
	sock[i].n = 0;
}

/* The GRANT in the last update, or NULL. */
static const struct ring_action *last_grant(const struct hring *s)
{
	int k = last_action(s, RING_ACTION_GRANT);
	return k < 0 ? NULL : &s->last.action[k];
}

/* A ring on layout L whose members read through the sockets above, booted
 * and settled; its holder in *H unless H is NULL. */
static struct hring *sockets_settled(const struct ring_layout *l, size_t *h)
{
	struct hring *s = hring_new(l);
	sockets_init(s);
	hring_boot(s);
	size_t holder = hring_settle(s);
	if (h)
		*h = holder;
	return s;
}

/* The opening of the two histories of a member that stops with the token
 * on its way to it: a resting ring of three on long leases, holder H, P its
 * successor with a client waiting, Q the third; returns once H has sent P
 * the token. */
static struct hring *token_on_its_way(size_t *h, size_t *p, size_t *q)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 60000;
	struct hring *s = sockets_settled(&l, h);
	*p = successor_of(s, *h);
	*q = successor_of(s, *p);
	hring_acquire(s, *p, 7);
	CU_ASSERT_FATAL(run_until_send(s, (int)*h, RING_MSG_TOKEN, id_of(*p), 500 * MS));
	return s;
}

/* ---- §5.5 pauses ---- */

/* §5.5: a detected pause revokes the grant before anything else. The holder
 * stops with a client in the region; the others regenerate and grant to a
 * client of their own. When the holder wakes, its client must be out before
 * anything else happens: otherwise two clients are in the region at once.
 * Kills pause-never-detected and pause-no-revoke. */
static void test_paused_holders_client_is_out_before_the_new_holders_grant_overlaps(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 60000; /* no lease ends in this history */
	size_t h;
	struct hring *s = sockets_settled(&l, &h);
	hring_acquire(s, h, 1);
	CU_ASSERT_FATAL(last_grant(s) != NULL);
	size_t a = successor_of(s, h), b = successor_of(s, a);

	pause_member(s, h, false);
	uint64_t mark = s->seq;
	hring_acquire(s, a, 2);
	hring_acquire(s, b, 3);
	hring_run_for(s, 3000 * MS);
	CU_ASSERT_EQUAL_FATAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 1);
	CU_ASSERT_FATAL(status_of(s, a).granted || status_of(s, b).granted);

	wake_member(s, h);
	CU_ASSERT(count_logs(s, h, mark, RING_LOG_PAUSE_DETECTED) == 1);
	CU_ASSERT(!status_of(s, h).granted);
	hring_run_for(s, 500 * MS);
	CU_ASSERT_EQUAL(count_actions(s, h, mark, RING_ACTION_GRANT), 0);
	assert_safe_and_free(s);
}

/* §5.5 and §7: after a pause the member grants nothing for 2 x heartbeat_ms,
 * and the pause is found before the event is handled. The member stops with
 * the token on its way to it and a client waiting; its predecessor skips it
 * and the ring grants under the new epoch. On waking, the old token is all
 * its socket holds (the new epoch's heartbeats sent meanwhile were lost; the
 * next one is behind the token, within heartbeat_ms, which is what the
 * quarantine waits for): granted under, it would put a second client in
 * the region with a fence below the current one. Kills pause-no-quarantine
 * (no quarantine) and pause-checked-late (the token is handled, and granted
 * under, before the pause is noticed). */
static void test_member_waking_to_a_stale_token_in_its_socket_grants_nothing_under_it(void)
{
	size_t h, p, q;
	struct hring *s = token_on_its_way(&h, &p, &q);
	uint32_t old_epoch = status_of(s, h).token_epoch;
	pause_member(s, p, true); /* the token in flight lands in its socket */

	uint64_t mark = s->seq;
	hring_acquire(s, q, 8);
	CU_ASSERT_FATAL(run_until_action(s, (int)q, RING_ACTION_GRANT, 2000 * MS));
	uint64_t fence_q = last_grant(s)->u.grant.fence;
	CU_ASSERT_FATAL(fence_q >> 32 > old_epoch);
	hring_run_for(s, 1500 * MS);
	CU_ASSERT_FATAL(status_of(s, q).granted);

	socket_keep_only(p, RING_MSG_TOKEN);
	CU_ASSERT_FATAL(sock[p].n >= 1);
	uint64_t woke = s->seq;
	wake_member(s, p);
	CU_ASSERT_EQUAL(count_logs(s, p, woke, RING_LOG_PAUSE_DETECTED), 1);
	hring_run_for(s, 500 * MS);
	CU_ASSERT_EQUAL(count_actions(s, p, mark, RING_ACTION_GRANT), 0);
	CU_ASSERT(!status_of(s, p).has_token);
	CU_ASSERT(status_of(s, q).granted);
	assert_safe_and_free(s);
}

/* §5.5, the batch order: a member stalled longer than the skip time but
 * well under the pause threshold wakes with the token it was passed and,
 * behind it, the heartbeat of the epoch its skip minted. No pause is
 * detected, so no quarantine: only reading the batch with tokens last
 * (ring_node_rx_rank) makes it learn the new epoch first and drop the old
 * token; read in arrival order it grants under the old token while the new
 * holder's client is in the region. Kills tokens-last. */
static void test_stalled_member_reads_the_newer_heartbeat_before_its_old_token(void)
{
	size_t h, p, q;
	struct hring *s = token_on_its_way(&h, &p, &q);
	uint64_t stalled = s->now;
	uint64_t deadline = s->deadline[p];
	pause_member(s, p, true); /* the token in flight lands in its socket */
	uint64_t mark = s->seq;
	hring_acquire(s, q, 8);
	/* h skips p, heartbeats the new epoch at once (into p's socket too),
	 * and q grants under it. */
	CU_ASSERT_FATAL(run_until_action(s, (int)q, RING_ACTION_GRANT, 400 * MS));
	CU_ASSERT_FATAL(status_of(s, q).granted);
	CU_ASSERT_FATAL(sock[p].n >= 2);
	CU_ASSERT_EQUAL_FATAL(msg_type(&sock[p].f[0]), RING_MSG_TOKEN);
	/* p wakes well before a pause would show: a stall. (Its deadline,
	 * the resend of its summons since §3.5, may be just past.) */
	CU_ASSERT_FATAL(s->now < stalled + s->layout.loss_timeout_ms * MS / 2);
	CU_ASSERT_FATAL(s->now < deadline + s->layout.loss_timeout_ms * MS / 2);
	s->deadline[p] = deadline;
	uint64_t woke = s->seq;
	wake_member(s, p);
	CU_ASSERT_EQUAL(count_logs(s, p, woke, RING_LOG_PAUSE_DETECTED), 0);
	CU_ASSERT_EQUAL(count_actions(s, p, mark, RING_ACTION_GRANT), 0);
	CU_ASSERT(status_of(s, q).granted);
	CU_ASSERT(s->max_granted <= 1);
	hring_free(s);
}

static bool drop_heartbeats_to_paused(const struct hring *s, const struct flight *f)
{
	(void)s;
	return msg_type(f) == RING_MSG_HEARTBEAT && f->to == id_of(0);
}

/* §5.5: a detected pause ends the visit: a held token moves on at once,
 * where the next member judges it (a STALE ack if the ring moved on). Here
 * the holder rests long (idle_pass_ms) and stops mid-rest; the others
 * regenerate and grant. It wakes with the new epoch's heartbeats lost: only
 * moving the token on tells it the token is stale. Had it kept resting, a
 * client arriving after the quarantine would be granted under the old token
 * while the new holder's client is in the region. Kills pause-visit-goes-on. */
static void test_paused_resting_holder_hands_its_token_on_instead_of_granting_under_it(void)
{
	struct ring_layout l = default_layout(3);
	l.idle_pass_ms = 5000;
	l.lease_ms = 60000;
	struct hring *s = hring_new(&l);
	sockets_init(s);
	hring_boot(s);
	/* Member 0 takes the token fresh, so that its rest has just begun. */
	CU_ASSERT_FATAL(run_until_log(s, 0, RING_LOG_TOKEN_RECV, 20000 * MS));
	size_t h = 0;
	uint32_t old_epoch = status_of(s, h).token_epoch;
	pause_member(s, h, false);
	uint64_t mark = s->seq;
	hring_acquire(s, 1, 2);
	hring_acquire(s, 2, 3);
	hring_run_for(s, 1800 * MS);
	CU_ASSERT_EQUAL_FATAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 1);
	CU_ASSERT_FATAL(status_of(s, 1).granted || status_of(s, 2).granted);

	extra_drop = drop_heartbeats_to_paused;
	uint64_t woke = s->seq;
	wake_member(s, h);
	CU_ASSERT_EQUAL(count_logs(s, h, woke, RING_LOG_PAUSE_DETECTED), 1);
	/* The visit is over: the token left in the very step. */
	struct ring_msg tok;
	CU_ASSERT(last_send(s, RING_MSG_TOKEN, -1, &tok) >= 0 && tok.u.token.epoch == old_epoch);
	hring_run_for(s, 300 * MS); /* past the quarantine */
	hring_acquire(s, h, 9);
	hring_run_for(s, 300 * MS);
	CU_ASSERT_EQUAL(count_actions(s, h, mark, RING_ACTION_GRANT), 0);
	assert_safe_and_free(s);
}

/* ---- §6.2 ending an election while a token lives ---- */

static size_t kept_holder; /* the member the next filter spares */

static bool drop_heartbeats_but_to_holder(const struct hring *s, const struct flight *f)
{
	(void)s;
	return msg_type(f) == RING_MSG_HEARTBEAT && f->to != id_of(kept_holder);
}

/* §6.2 rule 1: a member holding the token ends any election that reaches
 * it. The holder keeps a client in the region; its heartbeats to the others
 * are lost, so they suspect loss and elect. Only the holder stands between
 * their election and a second token: it has not itself heard a token for
 * more than loss_timeout_ms / 2 (its own heartbeats do not count), so rule 2
 * would not stop it. Kills holder-ends-election. */
static void test_holder_ends_an_election_so_no_second_token_is_made(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 60000;
	size_t h;
	struct hring *s = sockets_settled(&l, &h);
	hring_acquire(s, h, 1);
	CU_ASSERT_FATAL(last_grant(s) != NULL);
	kept_holder = h;
	extra_drop = drop_heartbeats_but_to_holder;
	uint64_t mark = s->seq;
	hring_run_for(s, 4000 * MS);
	CU_ASSERT(count_logs_all(s, mark, RING_LOG_ELECTION_START) >= 1);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	CU_ASSERT(status_of(s, h).granted);
	assert_safe_and_free(s);
}

/* Member 0 is cut off from the token (tokens and heartbeats to it are
 * lost), and an election never reaches the member that has the token. */
static bool drop_for_lonely_initiator(const struct hring *s, const struct flight *f)
{
	int t = msg_type(f);
	if (f->to == id_of(0) && (t == RING_MSG_TOKEN || t == RING_MSG_HEARTBEAT))
		return true;
	return t == RING_MSG_ELECTION && status_of(s, index_of(s, f->to)).has_token;
}

/* §6.2 rule 2: a member that heard a live token within loss_timeout_ms / 2
 * ends an election. Member 0 alone lost touch: the ring skipped it and
 * nothing of the token reaches it, so it keeps calling elections. Their
 * hops to whoever has the token are lost, so rule 1 never sees them; only
 * the members that hear the token every heartbeat can stop them. Without
 * rule 2 the election comes back with a majority and a second token is made
 * next to the live one. Kills recently-heard. */
static void test_member_that_heard_the_token_ends_a_lonely_members_election(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = sockets_settled(&l, NULL);
	extra_drop = drop_for_lonely_initiator;
	uint64_t mark = s->seq;
	hring_run_for(s, 5000 * MS);
	CU_ASSERT(count_logs(s, 0, mark, RING_LOG_ELECTION_START) >= 2);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	assert_safe_and_free(s);
}

/* ---- §6.3 quorum ---- */

/* §6.3: a leave that would leave fewer than a quorum in the token's alive
 * set drops the token. A ring of three lost one member; of the two left,
 * the holder leaves. The one member remaining is no majority and must not
 * grant: with the rule gone it is handed the token alone and grants.
 * Kills membership-quorum. */
static void test_leave_below_quorum_drops_the_token_and_nothing_is_granted(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = sockets_settled(&l, NULL);
	s->up[2] = false;
	hring_run_for(s, 3000 * MS);
	CU_ASSERT_FATAL(run_until_log(s, 1, RING_LOG_TOKEN_RECV, 2000 * MS));
	struct ring_status st = status_of(s, 1);
	CU_ASSERT_EQUAL_FATAL(ring_set_count(&st.alive), 2);
	uint64_t mark = s->seq;
	hring_leave(s, 1);
	CU_ASSERT(last_log(s, RING_LOG_NO_QUORUM) >= 0);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_TOKEN, -1, NULL), -1);
	hring_acquire(s, 0, 5);
	hring_run_for(s, 3000 * MS);
	CU_ASSERT_EQUAL(count_actions(s, 0, mark, RING_ACTION_GRANT), 0);
	CU_ASSERT(!status_of(s, 0).has_token);
	assert_safe_and_free(s);
}

/* §6.3: every member an election without quorum reaches reports no-quorum
 * too (it could not know otherwise). Five members, three crash with the
 * token at member 1, whose skips then fall below quorum; member 0 then
 * sleeps and calls no election of its own. It wakes to member 1's
 * flagged election in its socket and carries it: from then on an operator
 * asking it must read no-quorum, not "electing". Kills no-quorum-spread. */
static void test_member_carrying_a_no_quorum_election_reports_no_quorum(void)
{
	struct ring_layout l = resting_layout(5);
	struct hring *s = sockets_settled(&l, NULL);
	CU_ASSERT_FATAL(run_until_log(s, 1, RING_LOG_TOKEN_RECV, 2000 * MS));
	for (size_t i = 2; i < 5; i++)
		s->up[i] = false;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, 1, RING_LOG_NO_QUORUM, 1000 * MS));
	pause_member(s, 0, true);
	hring_run_for(s, 2000 * MS);
	bool flagged = false;
	for (size_t k = 0; k < sock[0].n; k++) {
		struct ring_msg m;
		if (ring_wire_decode(sock[0].f[k].buf, sock[0].f[k].len, &m) == 0 &&
		    m.type == RING_MSG_ELECTION && (m.u.election.flags & RING_ELECTION_NO_QUORUM))
			flagged = true;
	}
	CU_ASSERT_FATAL(flagged);
	wake_member(s, 0);
	CU_ASSERT(count_sends(s, 0, mark, RING_MSG_ELECTION, id_of(1)) >= 1);
	CU_ASSERT_EQUAL(count_logs(s, 0, mark, RING_LOG_NO_QUORUM), 0);
	CU_ASSERT_EQUAL(status_of(s, 0).state, RING_STATE_NO_QUORUM);
	hring_free(s);
}

/* §6.2 rule 3: a pause abandons the election started before it. Member 2
 * stops holding the token, so member 0 calls an election, and stops too
 * right after. Its election goes round and waits in its socket; meanwhile
 * member 2 wakes, hands its token to the sleeping member 0, skips it under a
 * new epoch, and member 1 grants under that epoch. When member 0 wakes its
 * election is younger than an election may take, and nothing live was heard
 * since it started: only the pause says that what it saw is out of date.
 * Completing it would mint below the epoch granted under (a generation
 * above the old one, but with a lower minter index) and make a second token.
 * (The watch counts the sleeping holder too, so the region is checked by
 * fences here.) Kills pause-keeps-election. */
static void test_initiator_waking_from_a_pause_drops_the_election_it_started_before(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 60000;
	struct hring *s = sockets_settled(&l, NULL);
	CU_ASSERT_FATAL(run_until_log(s, 2, RING_LOG_TOKEN_RECV, 2000 * MS));
	pause_member(s, 2, true);
	hring_acquire(s, 1, 5);
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_ELECTION_START, 3000 * MS));
	CU_ASSERT_FATAL(s->last_node == 0);
	uint64_t started = s->now;
	pause_member(s, 0, true);
	hring_run_for(s, 150 * MS);
	CU_ASSERT_EQUAL_FATAL(count_logs(s, 1, mark, RING_LOG_ELECTION_START), 0);
	wake_member(s, 2);
	hring_run_for(s, 400 * MS);
	CU_ASSERT_FATAL(status_of(s, 1).granted);
	uint64_t fence = status_of(s, 1).fence;
	CU_ASSERT_FATAL(s->now < started + 700 * MS);
	hring_run(s, started + 700 * MS, NULL, NULL);

	wake_member(s, 0);
	CU_ASSERT_EQUAL(count_logs(s, 0, mark, RING_LOG_PAUSE_DETECTED), 1);
	hring_run_for(s, 500 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	CU_ASSERT(status_of(s, 0).epoch >= fence >> 32);
	CU_ASSERT(status_of(s, 1).granted);
	CU_ASSERT_EQUAL(s->fence_regressions, 0);
	CU_ASSERT_EQUAL(s->bad_grants, 0);
	CU_ASSERT(s->max_granted <= 1);
	hring_free(s);
}

/* ---- §6.3 quorum: two of five ---- */

static void run_two_of_five(struct hring *s)
{
	for (size_t i = 2; i < 5; i++)
		s->up[i] = false;
	hring_start(s, 0);
	hring_start(s, 1);
	hring_acquire(s, 0, 1);
	hring_acquire(s, 1, 2);
	hring_run_for(s, 6000 * MS);
}

static void test_majority_ring_without_quorum_never_regenerates_or_grants(void)
{
	struct ring_layout l = resting_layout(5);
	struct hring *s = hring_new(&l);
	run_two_of_five(s);
	CU_ASSERT(count_logs_all(s, 0, RING_LOG_NO_QUORUM) >= 1);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_REGEN), 0);
	/* Both say why nothing is granted, the member whose elections fail
	 * and the one that only takes part in them: status is what an
	 * operator asks either of them. */
	CU_ASSERT_EQUAL(status_of(s, 1).state, RING_STATE_NO_QUORUM);
	CU_ASSERT_EQUAL(status_of(s, 0).state, RING_STATE_NO_QUORUM);
	for (size_t i = 0; i < 2; i++) {
		struct ring_status st = status_of(s, i);
		CU_ASSERT(!st.has_token);
		CU_ASSERT_EQUAL(st.counters.regenerations, 0);
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_GRANT), 0);
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_PERSIST), 0);
	}
	hring_free(s);
}

static void test_ring_without_quorum_rule_regenerates_with_two_of_five(void)
{
	struct ring_layout l = resting_layout(5);
	l.quorum = RING_QUORUM_NONE;
	struct hring *s = hring_new(&l);
	run_two_of_five(s);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_TOKEN_REGEN), 1);
	CU_ASSERT_EQUAL(count_logs_all(s, 0, RING_LOG_NO_QUORUM), 0);
	for (size_t i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(count_actions(s, i, 0, RING_ACTION_GRANT), 1);
	size_t h = hring_settle(s);
	struct ring_status st = status_of(s, h);
	CU_ASSERT_EQUAL(ring_set_count(&st.alive), 2);
	CU_ASSERT(ring_set_has(&st.alive, 0) && ring_set_has(&st.alive, 1));
	assert_safe_and_free(s);
}

/* ---- §6.1 the election ---- */

/* §6.1: each participant raises the election's max_epoch to its own epoch.
 * Member 0 sleeps; the others skip it (a new epoch, minted by member 2) and
 * grant under that epoch; then member 1 crashes and the token dies with it.
 * Member 0 wakes and calls the election that member 2 carries: member 0
 * never heard of the new epoch, so only member 2's epoch in max_epoch keeps
 * the regenerated epoch above the fence granted. Without it member 0 mints
 * the same generation with a lower index: below that fence, and member 2
 * drops the token as stale, which costs the ring a second regeneration.
 * Kills election-max-epoch. */
static void test_regenerated_epoch_is_above_an_epoch_only_a_participant_knew(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = sockets_settled(&l, NULL);
	CU_ASSERT_FATAL(run_until_log(s, 1, RING_LOG_TOKEN_RECV, 2000 * MS));
	hring_run_for(s, 10 * MS); /* member 0's pass is acked: the token is 1's */
	CU_ASSERT_FATAL(!status_of(s, 0).has_token);
	uint32_t e1 = status_of(s, 0).epoch;
	pause_member(s, 0, false);
	CU_ASSERT_FATAL(run_until_log(s, 2, RING_LOG_SUCCESSOR_SKIP, 2000 * MS));
	uint32_t e2 = status_of(s, 2).epoch;
	CU_ASSERT_FATAL(e2 > e1);
	hring_acquire(s, 1, 5);
	CU_ASSERT_FATAL(run_until_action(s, 1, RING_ACTION_GRANT, 2000 * MS));
	uint64_t fence = last_grant(s)->u.grant.fence;
	hring_release(s, 1, 5);
	s->up[1] = false;
	hring_run_for(s, 300 * MS);
	CU_ASSERT_FATAL(!status_of(s, 2).has_token);
	/* Member 0's election reaches member 2 after half a loss timeout of
	 * silence, before member 2 calls one of its own. */
	uint64_t wake_at = s->deadline[2] - 200 * MS;
	CU_ASSERT_FATAL(s->deadline[2] != NEVER && wake_at > s->now);
	hring_run(s, wake_at, NULL, NULL);
	uint64_t woke = s->seq;
	wake_member(s, 0);
	CU_ASSERT_FATAL(run_until_log(s, 0, RING_LOG_TOKEN_REGEN, 500 * MS));
	uint32_t e3 = (uint32_t)s->last.action[last_log(s, RING_LOG_TOKEN_REGEN)].u.log.field[0];
	CU_ASSERT(e3 > e2);
	CU_ASSERT(e3 > fence >> 32);
	hring_run_for(s, 1000 * MS);
	CU_ASSERT_EQUAL(count_logs_all(s, woke, RING_LOG_TOKEN_REGEN), 1);
	CU_ASSERT_EQUAL(count_logs_all(s, woke, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT(count_logs(s, 2, woke, RING_LOG_TOKEN_RECV) >= 1);
	assert_safe_and_free(s);
}

/* Hand-made election hop from member FROM to member TO. */
static void inject_election(struct hring *s, size_t to, size_t from, size_t initiator,
			    uint32_t round, uint32_t max_epoch)
{
	struct ring_msg m;
	memset(&m, 0, sizeof m);
	m.type = RING_MSG_ELECTION;
	m.from = id_of(from);
	m.to = id_of(to);
	m.fingerprint = ring_layout_fingerprint(&s->layout);
	m.u.election.initiator = id_of(initiator);
	m.u.election.hops = 1;
	m.u.election.round = round;
	m.u.election.max_epoch = max_epoch;
	ring_set_add(&m.u.election.participants, initiator);
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&m, buf, sizeof buf);
	CU_ASSERT_FATAL(len > 0);
	hring_datagram(s, to, id_of(from), buf, (size_t)len);
}

/* Member 1 alone is up, and has heard no token for 600 ms: long enough to
 * carry an election (rule 2), too short to call its own. */
static struct hring *lone_carrier(struct ring_layout *l)
{
	make_resting_layout(l, 3);
	struct hring *s = sockets_settled(l, NULL);
	CU_ASSERT_FATAL(run_until_log(s, 2, RING_LOG_TOKEN_RECV, 2000 * MS));
	s->up[0] = false;
	s->up[2] = false;
	hring_run_for(s, 600 * MS);
	CU_ASSERT_FATAL(!status_of(s, 1).has_token);
	CU_ASSERT_FATAL(status_of(s, 1).token_seen_ms_ago >= 500);
	CU_ASSERT_FATAL(s->deadline[1] > s->now + 100 * MS);
	return s;
}

/* §6.1: a retransmitted election already handled is acked, not carried
 * again. Member 1 carries member 0's election; the hop comes again (its ack
 * was lost). Carried twice, every hop of an election would double with
 * each lost ack, and the second copy would restart the carrier's retries
 * toward a silent member, delaying its skip. Only the traffic shows it:
 * the duplicate is answered and goes no further. Kills election-dedupe. */
static void test_retransmitted_election_is_acked_but_carried_once(void)
{
	struct ring_layout l;
	struct hring *s = lone_carrier(&l);
	uint32_t e = status_of(s, 1).epoch;
	uint64_t mark = s->seq;
	inject_election(s, 1, 0, 0, 77, e);
	CU_ASSERT_EQUAL(count_sends(s, 1, mark, RING_MSG_ELECTION, id_of(2)), 1);
	s->now += 10 * MS; /* before the carrier's own retransmit */
	uint64_t again = s->seq;
	inject_election(s, 1, 0, 0, 77, e);
	CU_ASSERT(last_send(s, RING_MSG_ELECTION_ACK, id_of(0), NULL) >= 0);
	CU_ASSERT_EQUAL(count_sends(s, 1, again, RING_MSG_ELECTION, id_of(2)), 0);
	hring_free(s);
}

/* §6.1: a member that carried a higher initiator's election swallows lower
 * ones for that election's duration, the carrier's half of Chang-Roberts:
 * the lower one could only die at the higher initiator, after a round of
 * hops for nothing (and with the higher initiator silent, be the one that
 * completes beside it). The swallowed hop is acked and goes no further.
 * Kills participated-swallow. */
static void test_carrier_of_a_higher_election_swallows_a_lower_one(void)
{
	struct ring_layout l;
	struct hring *s = lone_carrier(&l);
	uint32_t e = status_of(s, 1).epoch;
	inject_election(s, 1, 2, 2, 50, e); /* member 2's, the highest id */
	CU_ASSERT(last_send(s, RING_MSG_ELECTION, id_of(2), NULL) >= 0);
	uint64_t mark = s->seq;
	s->now += 5 * MS;
	inject_election(s, 1, 0, 0, 60, e); /* member 0's, lower */
	CU_ASSERT(last_send(s, RING_MSG_ELECTION_ACK, id_of(0), NULL) >= 0);
	struct ring_msg m;
	CU_ASSERT(last_send(s, RING_MSG_ELECTION, -1, &m) < 0 ||
		  m.u.election.initiator != id_of(0));
	for (size_t k = 0; k < s->n_rec[1]; k++) {
		if (s->rec[1][k].seq <= mark || !decode_send(&s->rec[1][k].a, &m))
			continue;
		CU_ASSERT(m.type != RING_MSG_ELECTION || m.u.election.initiator != id_of(0));
	}
	hring_free(s);
}

/* §6.1: a member that carries an election defers its own loss timer for an
 * election's duration. Member 1 carries member 0's election just before its
 * own loss timer would fire; calling an election of its own now would start
 * a second, competing election (its id is higher: member 0's would be
 * abandoned for it and the ring wait another full round). It must stay
 * quiet until the carried election has had its time. Kills
 * election-no-defer. */
static void test_carrier_defers_its_own_election_while_the_carried_one_runs(void)
{
	struct ring_layout l;
	struct hring *s = lone_carrier(&l);
	uint32_t e = status_of(s, 1).epoch;
	uint64_t mark = s->seq;
	uint64_t carried = s->now;
	inject_election(s, 1, 0, 0, 88, e);
	CU_ASSERT(count_sends(s, 1, mark, RING_MSG_ELECTION, id_of(2)) == 1);
	/* Its own loss timer was due within 400 ms; an election may take
	 * loss_timeout_ms + n (retries + 1) ack_timeout_ms. */
	uint64_t duration = (l.loss_timeout_ms + 3 * (l.retries + 1) * l.ack_timeout_ms) * MS;
	hring_run(s, carried + duration - 10 * MS, NULL, NULL);
	CU_ASSERT_EQUAL(count_logs(s, 1, mark, RING_LOG_ELECTION_START), 0);
	CU_ASSERT_EQUAL(count_logs(s, 1, mark, RING_LOG_LOSS_SUSPECT), 0);
	hring_run_for(s, 100 * MS);
	CU_ASSERT(count_logs(s, 1, mark, RING_LOG_ELECTION_START) >= 1);
	hring_free(s);
}

/* The ELECTION hops member I sent since SINCE for INITIATOR's election. */
static size_t elections_sent(const struct hring *s, size_t i, uint64_t since, size_t initiator)
{
	size_t c = 0;
	struct ring_msg m;
	for (size_t k = 0; k < s->n_rec[i]; k++)
		c += s->rec[i][k].seq > since && decode_send(&s->rec[i][k].a, &m) &&
		     m.type == RING_MSG_ELECTION && m.u.election.initiator == id_of(initiator);
	return c;
}

/* §6.1, the initiator's half of Chang-Roberts: a member running its own
 * election swallows an election from a lower id (acked, carried no
 * further), and abandons its own for one from a higher id, which it
 * carries. Carried both ways, two elections would go around at once and
 * each be swallowed at the other's initiator, so that neither completes
 * and the ring waits another loss timeout; swallowing both ways, neither
 * completes either. Member 1 (id 20) calls its election; member 0's (id
 * 10) and then member 2's (id 30) reach it. Kills chang-roberts and
 * chang-roberts-higher. */
static void test_initiator_swallows_a_lower_election_and_carries_a_higher_one(void)
{
	struct ring_layout l;
	struct hring *s = lone_carrier(&l);
	CU_ASSERT_FATAL(run_until_log(s, 1, RING_LOG_ELECTION_START, 2000 * MS));
	uint32_t e = status_of(s, 1).epoch;
	uint64_t mark = s->seq;
	s->now += 2 * MS;
	inject_election(s, 1, 0, 0, 60, e);
	CU_ASSERT(last_send(s, RING_MSG_ELECTION_ACK, id_of(0), NULL) >= 0);
	CU_ASSERT_EQUAL(elections_sent(s, 1, mark, 0), 0);
	CU_ASSERT_EQUAL(status_of(s, 1).state, RING_STATE_ELECTING);
	s->now += 2 * MS;
	inject_election(s, 1, 0, 2, 70, e);
	CU_ASSERT(last_send(s, RING_MSG_ELECTION_ACK, id_of(0), NULL) >= 0);
	CU_ASSERT_EQUAL(elections_sent(s, 1, mark, 2), 1);
	hring_free(s);
}

/* Member 0 (id 10, the lowest) alone is up in a ring of N, just started:
 * it has heard no token, so it carries any election, and its own (if it
 * calls one) gives way to every other initiator, all higher. */
static struct hring *lowest_lone_carrier(struct ring_layout *l, size_t n)
{
	make_resting_layout(l, n);
	struct hring *s = hring_new(l);
	for (size_t i = 1; i < n; i++)
		s->up[i] = false; /* scripted by hand */
	hring_start(s, 0);
	return s;
}

/* §6.1: a carrier swallows lower initiators only while the election it
 * carried runs, and compares them with that election's initiator. Member 0
 * carries member 4's election (id 50); it dies (everyone else is down) and
 * its time passes. Then member 1's (id 20) comes, and is carried: member 1
 * is now the best this member carried. Then member 2's (id 30), above it:
 * carried too, and it is the one that may complete (Chang-Roberts). Were
 * the highest initiator ever carried remembered past its election, id 30
 * would be swallowed for an id 50 election that no longer runs, while id
 * 20's dies at member 2: neither completes and the ring waits another
 * loss timeout. Kills best-initiator-sticky. */
static void test_a_carrier_forgets_a_higher_initiator_once_its_election_is_over(void)
{
	struct ring_layout l;
	struct hring *s = lowest_lone_carrier(&l, 5);
	inject_election(s, 0, 4, 4, 50, 0);
	CU_ASSERT_FATAL(last_send(s, RING_MSG_ELECTION, id_of(1), NULL) >= 0);
	uint64_t duration = (l.loss_timeout_ms + 5 * (l.retries + 1) * l.ack_timeout_ms) * MS;
	hring_run_for(s, duration + 10 * MS); /* member 4's election is over */
	uint64_t mark = s->seq;
	inject_election(s, 0, 1, 1, 60, 0);
	CU_ASSERT_FATAL(elections_sent(s, 0, mark, 1) == 1);
	s->now += 5 * MS;
	inject_election(s, 0, 1, 2, 70, 0);
	CU_ASSERT(last_send(s, RING_MSG_ELECTION_ACK, id_of(1), NULL) >= 0);
	CU_ASSERT_EQUAL(elections_sent(s, 0, mark, 2), 1);
	hring_free(s);
}

/* §6.1: an election hop ends with its receiver's ack, no other. Member 0
 * carries member 3's election to member 1, which is silent: after its
 * retries member 0 skips it and sends the hop to member 2, with the same
 * hops count (the skip counts no hop). Member 1's ack of the first hop
 * then arrives late. Taken for member 2's, it would end the forward: were
 * member 2's hop lost, nobody would resend it and the election would die
 * there. Member 0 must go on resending to member 2 until member 2 acks.
 * Kills election-ack-any-member. */
static void test_a_late_ack_of_a_skipped_member_does_not_end_the_next_hop(void)
{
	struct ring_layout l;
	struct hring *s = lowest_lone_carrier(&l, 4);
	inject_election(s, 0, 3, 3, 40, 0);
	struct ring_msg hop;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_ELECTION, id_of(1), &hop) >= 0);
	CU_ASSERT_FATAL(run_until_send(s, 0, RING_MSG_ELECTION, id_of(2), 500 * MS));
	struct ring_msg next;
	CU_ASSERT_FATAL(last_send(s, RING_MSG_ELECTION, id_of(2), &next) >= 0);
	CU_ASSERT_FATAL(next.u.election.hops == hop.u.election.hops);
	struct ring_msg ack = {.type = RING_MSG_ELECTION_ACK};
	ack.u.election_ack.initiator = hop.u.election.initiator;
	ack.u.election_ack.round = hop.u.election.round;
	ack.u.election_ack.hops = hop.u.election.hops;
	uint64_t mark = s->seq;
	hring_inject(s, 0, 1, ack); /* member 1's, late */
	hring_run_for(s, (l.ack_timeout_ms + 1) * MS);
	CU_ASSERT_EQUAL(count_sends(s, 0, mark, RING_MSG_ELECTION, id_of(2)), 1);
	hring_free(s);
}

/* §5.5: after a pause a member grants nothing for 2 x heartbeat_ms, and
 * grants again once that is over. The holder H of four stops for longer
 * than the pause threshold while it rests the token (too short for the
 * others to call an election) and a client asks at H as it wakes. The
 * token comes back within the quarantine: H passes it on without granting.
 * At the next visit the quarantine is over and H grants. Kills
 * pause-no-quarantine (the first visit grants) and quarantine-never-ends
 * (no visit ever grants). */
static void test_woken_member_grants_nothing_for_two_heartbeats_then_grants(void)
{
	struct ring_layout l = resting_layout(4);
	size_t h;
	struct hring *s = sockets_settled(&l, &h);
	uint64_t armed = s->deadline[h];
	CU_ASSERT_FATAL(armed != NEVER);
	pause_member(s, h, true);
	hring_run(s, armed + (uint64_t)l.loss_timeout_ms * MS / 2 + 20 * MS, NULL, NULL);
	uint64_t mark = s->seq;
	uint64_t woke = s->now;
	wake_member(s, h);
	CU_ASSERT_EQUAL_FATAL(count_logs(s, h, mark, RING_LOG_PAUSE_DETECTED), 1);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_ELECTION_START), 0);
	hring_acquire(s, h, 7);
	uint64_t over = woke + 2 * (uint64_t)l.heartbeat_ms * MS;
	CU_ASSERT_FATAL(run_until_log(s, (int)h, RING_LOG_TOKEN_RECV, 1000 * MS));
	CU_ASSERT_FATAL(s->now < over); /* the token came back within the quarantine */
	CU_ASSERT(last_action(s, RING_ACTION_GRANT) < 0);
	CU_ASSERT(last_log(s, RING_LOG_TOKEN_PASS) >= 0);
	CU_ASSERT_FATAL(run_until_action(s, (int)h, RING_ACTION_GRANT, 1000 * MS));
	CU_ASSERT(s->now >= over);
	CU_ASSERT_EQUAL(count_actions(s, h, mark, RING_ACTION_GRANT), 1);
	assert_safe_and_free(s);
}

/* ---- §6.2 rule 1's re-epoch, and rule 3 at a heartbeat ---- */

static bool drop_joins(const struct hring *s, const struct flight *f)
{
	(void)s;
	return msg_type(f) == RING_MSG_JOIN;
}

/* §6.2 rule 1: a holder that an election reaches with a max_epoch above its
 * token's first re-epochs above it. Member M learned an epoch newer than
 * the live token's (a token of it died, or a datagram carried it), so it
 * takes the live token for stale; its JOINs are lost. Its election reaches
 * the holder, which keeps a client a while. Re-epoched, the token is
 * accepted by M when it comes; otherwise M answers it STALE, the live token
 * dies, and the ring spends a regeneration for nothing. Kills
 * holder-no-reepoch. */
static void test_holder_reepochs_above_an_election_so_a_member_ahead_takes_its_token(void)
{
	struct ring_layout l = resting_layout(3);
	size_t h;
	struct hring *s = sockets_settled(&l, &h);
	size_t x = successor_of(s, h), m = successor_of(s, x); /* m's next is h */
	hring_acquire(s, h, 1);
	CU_ASSERT_FATAL(last_grant(s) != NULL);
	extra_drop = drop_joins;

	struct ring_msg hb;
	memset(&hb, 0, sizeof hb);
	hb.type = RING_MSG_HEARTBEAT;
	hb.from = id_of(x);
	hb.to = 0;
	hb.fingerprint = ring_layout_fingerprint(&l);
	uint32_t ahead = status_of(s, h).token_epoch + (1u << 8);
	hb.u.heartbeat.epoch = ahead;
	hb.u.heartbeat.seq = 1;
	hb.u.heartbeat.alive = status_of(s, h).alive;
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&hb, buf, sizeof buf);
	CU_ASSERT_FATAL(len > 0);
	uint64_t mark = s->seq;
	hring_datagram(s, m, id_of(x), buf, (size_t)len);
	CU_ASSERT_FATAL(status_of(s, m).epoch == ahead);

	hring_run_for(s, 2500 * MS);
	CU_ASSERT_FATAL(count_logs(s, m, mark, RING_LOG_ELECTION_START) >= 1);
	CU_ASSERT(status_of(s, h).token_epoch > ahead);
	uint64_t released = s->seq;
	hring_release(s, h, 1);
	hring_run_for(s, 1000 * MS);
	CU_ASSERT(count_logs(s, m, released, RING_LOG_TOKEN_RECV) >= 1);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_STALE_DROP), 0);
	CU_ASSERT_EQUAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	assert_safe_and_free(s);
}

static bool drop_to_member_2(const struct hring *s, const struct flight *f)
{
	(void)s;
	int t = msg_type(f);
	return f->to == id_of(2) && (t == RING_MSG_TOKEN || t == RING_MSG_HEARTBEAT);
}

/* §6.2 rule 3: an initiator that hears a live heartbeat abandons its
 * election at once. Member 2 is cut off from the token and calls elections
 * (the others end them, rule 2); then the cut heals. Its first heartbeat
 * must end its election there and then: still "electing", it would report
 * so to an operator of a healthy ring, and swallow the election of any
 * lower member (Chang-Roberts) should the token die before the token comes
 * round to it. Kills heartbeat-keeps-election. */
static void test_heartbeat_ends_the_initiators_election_at_once(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = sockets_settled(&l, NULL);
	extra_drop = drop_to_member_2;
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, 2, RING_LOG_ELECTION_START, 3000 * MS));
	hring_run_for(s, 50 * MS);
	CU_ASSERT_FATAL(status_of(s, 2).state == RING_STATE_ELECTING);
	extra_drop = NULL;
	struct want w = {2, RING_ACTION_LOG, RING_LOG_EPOCH_ADOPT, -1};
	CU_ASSERT_FATAL(hring_run(s, s->now + 500 * MS, want_met, &w));
	CU_ASSERT_EQUAL(s->last_event, RING_EVENT_DATAGRAM);
	CU_ASSERT(!status_of(s, 2).has_token);
	CU_ASSERT_NOT_EQUAL(status_of(s, 2).state, RING_STATE_ELECTING);
	(void)mark;
	hring_free(s);
}

static size_t deaf_member; /* the next filter loses heartbeats to it */
static bool drop_heartbeats_to_init(const struct hring *s, const struct flight *f)
{
	(void)s;
	return f->to == id_of(deaf_member) && msg_type(f) == RING_MSG_HEARTBEAT;
}

/* Holds back the carrier's hops of the initiator's own election to it. */
static uint16_t too_old_from, too_old_to;
static struct flight too_old_held;
static bool hold_election_back(const struct hring *s, const struct flight *f)
{
	(void)s;
	struct ring_msg m;
	if (f->from != too_old_from || f->to != too_old_to ||
	    ring_wire_decode(f->buf, f->len, &m) != 0 || m.type != RING_MSG_ELECTION ||
	    m.u.election.initiator != too_old_to)
		return false;
	if (too_old_held.len == 0)
		too_old_held = *f;
	return true;
}

/* §6.2 rule 3: an election that comes back later than an election may take
 * is abandoned. The holder dies; the first member to suspect it calls an
 * election, which the other carries — and the carrier's hop back to the
 * initiator waits in the network past the election's time. The initiator's
 * own timer, due at that time, fires late (a loaded host: by less than
 * half the loss timeout, so no pause is detected) and the old round's return
 * is read first, in the same wake-up. What it says of the ring is as old as
 * its round: completing it would mint from a view the ring may have left
 * (here: with the dead holder back, or anyone else's regeneration, unseen).
 * The initiator must not regenerate from it. Kills election-too-old. */
static void test_election_back_after_its_time_is_abandoned(void)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 60000;
	size_t h;
	struct hring *s = sockets_settled(&l, &h);
	hring_acquire(s, h, 7); /* the token stays at h while its client holds */
	CU_ASSERT_FATAL(status_of(s, h).granted);
	/* The initiator is the higher id of the other two, so that the carrier
	 * carries its election (Chang-Roberts) instead of swallowing it; it
	 * hears the holder's heartbeats no more a little before h dies, so it
	 * suspects the loss first. */
	size_t a = (h + 1) % 3, b = (h + 2) % 3;
	size_t init = id_of(a) > id_of(b) ? a : b;
	size_t carrier = 3 - h - init;
	deaf_member = init;
	extra_drop = drop_heartbeats_to_init;
	hring_run_for(s, 300 * MS);
	s->up[h] = false; /* the holder dies with the token and its client */
	uint64_t mark = s->seq;
	CU_ASSERT_FATAL(run_until_log(s, -1, RING_LOG_ELECTION_START, 3000 * MS));
	CU_ASSERT_EQUAL_FATAL((size_t)s->last_node, init);
	uint64_t started = s->now;
	memset(&too_old_held, 0, sizeof too_old_held);
	too_old_from = id_of(carrier);
	too_old_to = id_of(init);
	extra_drop = hold_election_back;
	/* The carrier forwards it (to the dead holder, then back to the
	 * initiator, where it is held); run until the initiator's round is due. */
	uint64_t timeout = l.loss_timeout_ms * MS + 3 * (l.retries + 1) * l.ack_timeout_ms * MS;
	hring_run(s, started + timeout - 1, NULL, NULL);
	CU_ASSERT_FATAL(too_old_held.len > 0);
	CU_ASSERT_EQUAL_FATAL(count_logs(s, init, mark, RING_LOG_ELECTION_START), 1);
	CU_ASSERT_EQUAL_FATAL(count_logs_all(s, mark, RING_LOG_TOKEN_REGEN), 0);
	/* The initiator wakes 100 ms after its round was due and reads the
	 * return before its timer. */
	s->now = started + timeout + 100 * MS;
	hring_datagram(s, init, too_old_held.from, too_old_held.buf, too_old_held.len);
	CU_ASSERT_EQUAL(count_logs(s, init, mark, RING_LOG_PAUSE_DETECTED), 0);
	CU_ASSERT_EQUAL(count_logs(s, init, mark, RING_LOG_TOKEN_REGEN), 0);
	CU_ASSERT_EQUAL(count_logs(s, init, mark, RING_LOG_ELECTION_WON), 0);
	hring_free(s);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_election_tests[] = {
	T_(test_paused_holders_client_is_out_before_the_new_holders_grant_overlaps),
	T_(test_member_waking_to_a_stale_token_in_its_socket_grants_nothing_under_it),
	T_(test_stalled_member_reads_the_newer_heartbeat_before_its_old_token),
	T_(test_paused_resting_holder_hands_its_token_on_instead_of_granting_under_it),
	T_(test_holder_ends_an_election_so_no_second_token_is_made),
	T_(test_member_that_heard_the_token_ends_a_lonely_members_election),
	T_(test_leave_below_quorum_drops_the_token_and_nothing_is_granted),
	T_(test_member_carrying_a_no_quorum_election_reports_no_quorum),
	T_(test_initiator_waking_from_a_pause_drops_the_election_it_started_before),
	T_(test_majority_ring_without_quorum_never_regenerates_or_grants),
	T_(test_ring_without_quorum_rule_regenerates_with_two_of_five),
	T_(test_regenerated_epoch_is_above_an_epoch_only_a_participant_knew),
	T_(test_retransmitted_election_is_acked_but_carried_once),
	T_(test_carrier_of_a_higher_election_swallows_a_lower_one),
	T_(test_carrier_defers_its_own_election_while_the_carried_one_runs),
	T_(test_initiator_swallows_a_lower_election_and_carries_a_higher_one),
	T_(test_a_carrier_forgets_a_higher_initiator_once_its_election_is_over),
	T_(test_a_late_ack_of_a_skipped_member_does_not_end_the_next_hop),
	T_(test_woken_member_grants_nothing_for_two_heartbeats_then_grants),
	T_(test_holder_reepochs_above_an_election_so_a_member_ahead_takes_its_token),
	T_(test_heartbeat_ends_the_initiators_election_at_once),
	T_(test_election_back_after_its_time_is_abandoned),
	CU_TEST_INFO_NULL,
};
#undef T_
