/* CUnit suite of the node itself (ring/core/node.c): creating one, the step
 * (its pause check first, its room for actions), the dispatcher's handling of
 * hostile datagrams, the status and the names the spec gives states and logs. */
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

static void test_node_new_refuses_an_id_outside_the_ring(void)
{
	struct ring_layout l = default_layout(3);
	int err = 0;
	CU_ASSERT_PTR_NULL(ring_node_new(&l, 99, 0, &err));
	CU_ASSERT_EQUAL(err, -RING_ENOTMEMBER);
	err = 0;
	CU_ASSERT_PTR_NULL(ring_node_new(&l, 0, 0, &err));
	CU_ASSERT_EQUAL(err, -RING_ENOTMEMBER);
}

static void test_fresh_member_elects_after_listening_two_heartbeats(void)
{
	struct ring_layout l = default_layout(3);
	struct hring *s = hring_new(&l);
	uint64_t listen = 2 * l.heartbeat_ms * MS;

	hring_start(s, 0);
	/* First it asks what epoch the others know (§5.3), and takes no
	 * token and calls no election before a majority has answered. */
	CU_ASSERT_EQUAL(s->last.n, 1);
	CU_ASSERT(last_send(s, RING_MSG_EPOCH_QUERY, 0, NULL) == 0);
	CU_ASSERT_EQUAL(s->last.deadline_us, T0 + l.heartbeat_ms * MS);
	hring_deliver_all(s); /* the query; 1 and 2 answer */
	hring_deliver_all(s); /* their answers */
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_EPOCH_LEARNED), 0);
	CU_ASSERT_EQUAL(s->last.deadline_us, T0 + listen);
	CU_ASSERT_EQUAL(status_of(s, 0).state, RING_STATE_IDLE);

	/* A tick before the listening ends does nothing and keeps the deadline. */
	s->now = T0 + listen - 1;
	hring_tick(s, 0);
	CU_ASSERT_EQUAL(s->last.n, 0);
	CU_ASSERT_EQUAL(s->last.deadline_us, T0 + listen);

	CU_ASSERT_FATAL(hring_tick_earliest(s));
	CU_ASSERT_EQUAL(s->now, T0 + listen);
	int start = last_log(s, RING_LOG_ELECTION_START);
	struct ring_msg m;
	int sent = last_send(s, RING_MSG_ELECTION, id_of(1), &m);
	CU_ASSERT_FATAL(start >= 0 && sent >= 0);
	CU_ASSERT(start < sent);
	CU_ASSERT_EQUAL(last_send(s, RING_MSG_ELECTION, id_of(2), NULL), -1);
	CU_ASSERT_EQUAL(m.from, id_of(0));
	CU_ASSERT_EQUAL(m.to, id_of(1));
	CU_ASSERT_EQUAL(m.u.election.initiator, id_of(0));
	CU_ASSERT_EQUAL(m.u.election.round, s->last.action[start].u.log.field[0]);
	CU_ASSERT(ring_set_has(&m.u.election.participants, 0));
	CU_ASSERT_EQUAL(ring_set_count(&m.u.election.participants), 1);
	/* The election hop is acked like a token hop: the member retransmits. */
	CU_ASSERT_EQUAL(s->last.deadline_us, s->now + l.ack_timeout_ms * MS);
	CU_ASSERT_EQUAL(status_of(s, 0).state, RING_STATE_ELECTING);
	CU_ASSERT_EQUAL(status_of(s, 0).counters.elections, 1);
	hring_free(s);
}

static void test_three_members_bootstrap_to_exactly_one_token(void)
{
	struct ring_layout l = resting_layout(3);
	struct hring *s = hring_started(&l);
	hring_run_for(s, 2000 * MS);
	size_t holder = hring_settle(s);

	size_t with_token = 0;
	for (size_t i = 0; i < 3; i++)
		with_token += status_of(s, i).has_token;
	CU_ASSERT_EQUAL(with_token, 1);
	CU_ASSERT_EQUAL_FATAL(count_logs_all(s, 0, RING_LOG_TOKEN_REGEN), 1);

	size_t minter = 3;
	uint32_t epoch = 0;
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < s->n_rec[i]; k++) {
			const struct ring_action *a = &s->rec[i][k].a;
			if (a->type == RING_ACTION_LOG && a->u.log.event == RING_LOG_TOKEN_REGEN) {
				minter = i;
				epoch = (uint32_t)a->u.log.field[0];
			}
		}
	CU_ASSERT_FATAL(minter < 3);
	CU_ASSERT_EQUAL(epoch & 0xff, minter);
	CU_ASSERT(epoch >> 8 >= 1);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(status_of(s, i).epoch, epoch);
	CU_ASSERT_EQUAL(status_of(s, holder).token_epoch, epoch);

	/* The epoch is stored before the token that carries it leaves. */
	bool persisted = false, sent = false;
	for (size_t k = 0; k < s->n_rec[minter] && !sent; k++) {
		const struct ring_action *a = &s->rec[minter][k].a;
		struct ring_msg m;
		if (a->type == RING_ACTION_PERSIST && a->u.persist.epoch == epoch)
			persisted = true;
		if (decode_send(a, &m) && m.type == RING_MSG_TOKEN && m.u.token.epoch == epoch) {
			sent = true;
			CU_ASSERT(persisted);
		}
	}
	CU_ASSERT(sent);
	assert_safe_and_free(s);
}

/* The ground of the two pause histories: a settled resting ring of three on
 * one-minute leases (no lease ends in them) whose holder *H has granted
 * client 6; the grant's fence in *FENCE unless FENCE is NULL. */
static struct hring *holder_granted_for_a_minute(size_t *h, uint64_t *fence)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 60000;
	struct hring *s = hring_settled(&l, h);
	uint64_t f = grant_at(s, *h, 6);
	if (fence)
		*fence = f;
	return s;
}

static void test_pause_past_half_the_loss_timeout_revokes_before_anything_else(void)
{
	size_t h;
	uint64_t fence;
	struct hring *s = holder_granted_for_a_minute(&h, &fence);

	uint64_t late = s->layout.loss_timeout_ms * MS / 2 + 100 * MS;
	CU_ASSERT_FATAL(s->deadline[h] != NEVER);
	s->now = s->deadline[h] + late;
	hring_tick(s, h);
	CU_ASSERT_FATAL(s->last.n >= 2);
	CU_ASSERT_EQUAL(s->last.action[0].type, RING_ACTION_LOG);
	CU_ASSERT_EQUAL(s->last.action[0].u.log.event, RING_LOG_PAUSE_DETECTED);
	CU_ASSERT_EQUAL(s->last.action[0].u.log.field[0], late / MS);
	CU_ASSERT_EQUAL(s->last.action[1].type, RING_ACTION_REVOKE);
	CU_ASSERT_EQUAL(s->last.action[1].u.revoke.client, 6);
	CU_ASSERT_EQUAL(s->last.action[1].u.revoke.fence, fence);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	struct ring_status st = status_of(s, h);
	CU_ASSERT(!st.granted);
	CU_ASSERT_EQUAL(st.counters.pauses, 1);
	hring_free(s);
}

static void test_late_tick_within_half_the_loss_timeout_is_no_pause(void)
{
	size_t h;
	struct hring *s = holder_granted_for_a_minute(&h, NULL);

	s->now = s->deadline[h] + s->layout.loss_timeout_ms * MS / 2 - 100 * MS;
	hring_tick(s, h);
	CU_ASSERT_EQUAL(last_log(s, RING_LOG_PAUSE_DETECTED), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_REVOKE), -1);
	CU_ASSERT(status_of(s, h).granted);
	CU_ASSERT_EQUAL(status_of(s, h).counters.pauses, 0);
	hring_free(s);
}

/* A datagram that must be counted and otherwise ignored: nothing sent,
 * stored or granted, the token and the epoch as they were. */
static void assert_ignored(struct hring *s, size_t i, const struct ring_status *before)
{
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_SEND), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_PERSIST), -1);
	CU_ASSERT_EQUAL(last_action(s, RING_ACTION_GRANT), -1);
	struct ring_status st = status_of(s, i);
	CU_ASSERT_EQUAL(st.has_token, before->has_token);
	CU_ASSERT_EQUAL(st.epoch, before->epoch);
}

static void assert_bad_packet(struct hring *s, size_t i, uint16_t from_id, const uint8_t *buf,
			      size_t len)
{
	struct ring_status before = status_of(s, i);
	hring_datagram(s, i, from_id, buf, len);
	struct ring_status st = status_of(s, i);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets + 1);
	CU_ASSERT_EQUAL(st.counters.config_mismatches, before.counters.config_mismatches);
	int bp = last_log(s, RING_LOG_BAD_PACKET);
	CU_ASSERT(bp >= 0);
	if (bp >= 0)
		CU_ASSERT_EQUAL(s->last.action[bp].u.log.field[0], from_id);
	assert_ignored(s, i, &before);
}

static size_t encode(const struct ring_msg *m, uint8_t *buf)
{
	int n = ring_wire_encode(m, buf, RING_WIRE_MAX);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

static void test_hostile_datagrams_are_counted_never_acted_on(void)
{
	struct ring_layout l = resting_layout(3);
	/* x, the target, has no token; y is a member the datagrams claim to be from. */
	size_t h, x, y;
	struct hring *s = hring_settled_order(&l, &h, &x, &y);
	CU_ASSERT_FATAL(x != h && y != x);
	uint32_t epoch = status_of(s, x).epoch;

	/* A token that would move x to a far newer epoch, were it believed. */
	struct ring_msg bait;
	memset(&bait, 0, sizeof bait);
	bait.type = RING_MSG_TOKEN;
	bait.from = id_of(y);
	bait.to = id_of(x);
	bait.fingerprint = ring_layout_fingerprint(&l);
	bait.u.token.epoch = epoch + 0x1000;
	bait.u.token.seq = 1;
	for (size_t i = 0; i < l.n; i++)
		ring_set_add(&bait.u.token.alive, i);
	uint8_t buf[RING_WIRE_MAX + 8];
	size_t len;

	uint64_t seed = 0x2545f4914f6cdd1dULL;
	for (int k = 0; k < 200; k++) {
		len = (size_t)(xorshift_next(&seed) % (sizeof buf + 1));
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)xorshift_next(&seed);
		assert_bad_packet(s, x, id_of(y), buf, len);
	}

	len = encode(&bait, buf);
	assert_bad_packet(s, x, 0, buf, len);      /* not from a member's address */
	assert_bad_packet(s, x, 99, buf, len);     /* an id outside the ring */
	assert_bad_packet(s, x, id_of(h), buf, len); /* header and address disagree */

	struct ring_msg m = bait;
	m.to = id_of(h); /* addressed to someone else */
	len = encode(&m, buf);
	assert_bad_packet(s, x, id_of(y), buf, len);
	m = bait;
	m.from = id_of(x); /* claims to come from the receiver itself */
	len = encode(&m, buf);
	assert_bad_packet(s, x, id_of(x), buf, len);

	/* Another ring's layout: a mismatch, not a bad packet. */
	m = bait;
	m.fingerprint ^= 1;
	len = encode(&m, buf);
	struct ring_status before = status_of(s, x);
	hring_datagram(s, x, id_of(y), buf, len);
	struct ring_status st = status_of(s, x);
	CU_ASSERT_EQUAL(st.counters.config_mismatches, before.counters.config_mismatches + 1);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets);
	int cm = last_log(s, RING_LOG_CONFIG_MISMATCH);
	CU_ASSERT_FATAL(cm >= 0);
	CU_ASSERT_EQUAL(s->last.action[cm].u.log.field[0], id_of(y));
	assert_ignored(s, x, &before);

	/* Another wire version (a member mid-upgrade): its own counter and
	 * event naming both versions, neither a bad packet nor a mismatch,
	 * and nothing else happens. */
	len = encode(&bait, buf);
	buf[2] = RING_WIRE_VERSION + 1;
	before = status_of(s, x);
	hring_datagram(s, x, id_of(y), buf, len);
	st = status_of(s, x);
	CU_ASSERT_EQUAL(st.counters.version_mismatches, before.counters.version_mismatches + 1);
	CU_ASSERT_EQUAL(st.counters.bad_packets, before.counters.bad_packets);
	CU_ASSERT_EQUAL(st.counters.config_mismatches, before.counters.config_mismatches);
	int vm = last_log(s, RING_LOG_VERSION_MISMATCH);
	CU_ASSERT_FATAL(vm >= 0);
	CU_ASSERT_EQUAL(s->last.action[vm].u.log.field[0], id_of(y));
	CU_ASSERT_EQUAL(s->last.action[vm].u.log.field[1], RING_WIRE_VERSION + 1);
	CU_ASSERT_EQUAL(s->last.action[vm].u.log.field[2], RING_WIRE_VERSION);
	assert_ignored(s, x, &before);

	CU_ASSERT_EQUAL(status_of(s, x).epoch, epoch);
	CU_ASSERT(!status_of(s, x).has_token);
	CU_ASSERT(status_of(s, h).token_held);

	/* The bait itself, sent properly, is taken: the refusals above were
	 * for what was wrong with each copy, not for the token. */
	len = encode(&bait, buf);
	hring_datagram(s, x, id_of(y), buf, len);
	CU_ASSERT(status_of(s, x).has_token);
	CU_ASSERT_EQUAL(status_of(s, x).epoch, epoch + 0x1000);
	hring_free(s);
}

static void test_state_and_log_names_are_those_of_the_spec(void)
{
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_IDLE), "idle");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_WAITING), "waiting");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_HOLDING), "holding");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_ELECTING), "electing");
	CU_ASSERT_STRING_EQUAL(ring_state_name(RING_STATE_NO_QUORUM), "no-quorum");
	CU_ASSERT_STRING_EQUAL(ring_state_name((enum ring_state)99), "unknown");

	static const struct {
		enum ring_log_event ev;
		const char *name;
		const char *field; /* the one SPEC.md names, or NULL */
	} spec[] = {
		{RING_LOG_TOKEN_RECV, "token_recv", NULL},
		{RING_LOG_TOKEN_PASS, "token_pass", NULL},
		{RING_LOG_CS_ENTER, "cs_enter", "fence"},
		{RING_LOG_CS_EXIT, "cs_exit", "fence"},
		{RING_LOG_LEASE_EXPIRED, "lease_expired", "fence"},
		{RING_LOG_RETRANSMIT, "retransmit", "to"},
		{RING_LOG_SUCCESSOR_SKIP, "successor_skip", "dead"},
		{RING_LOG_MEMBER_REJOIN, "member_rejoin", "id"},
		{RING_LOG_LOSS_SUSPECT, "loss_suspect", NULL},
		{RING_LOG_ELECTION_START, "election_start", "round"},
		{RING_LOG_ELECTION_WON, "election_won", "epoch"},
		{RING_LOG_TOKEN_REGEN, "token_regen", "epoch"},
		{RING_LOG_TOKEN_STALE_DROP, "token_stale_drop", "epoch"},
		{RING_LOG_NO_QUORUM, "no_quorum", NULL},
		{RING_LOG_BAD_PACKET, "bad_packet", "from"},
		{RING_LOG_CONFIG_MISMATCH, "config_mismatch", "from"},
		{RING_LOG_VERSION_MISMATCH, "version_mismatch", "from"},
		{RING_LOG_PAUSE_DETECTED, "pause_detected", "ms"},
		{RING_LOG_MEMBER_LEAVE, "member_leave", "id"},
	};
	for (size_t k = 0; k < sizeof spec / sizeof spec[0]; k++) {
		const struct ring_log_info *info = ring_log_info(spec[k].ev);
		CU_ASSERT_PTR_NOT_NULL_FATAL(info);
		CU_ASSERT_STRING_EQUAL(info->name, spec[k].name);
		if (spec[k].field)
			CU_ASSERT_STRING_EQUAL(info->field[0], spec[k].field);
		/* Token hops are logged only with -v; everything else always. */
		bool hop = spec[k].ev == RING_LOG_TOKEN_RECV || spec[k].ev == RING_LOG_TOKEN_PASS;
		CU_ASSERT_EQUAL(info->verbose, hop);
	}
	CU_ASSERT_STRING_EQUAL(ring_log_info(RING_LOG_CS_ENTER)->field[1], "epoch");
	CU_ASSERT_STRING_EQUAL(ring_log_info(RING_LOG_BAD_PACKET)->field[1], "reason");
	CU_ASSERT_STRING_EQUAL(ring_log_info(RING_LOG_COUNT_)->name, "unknown");
	CU_ASSERT_STRING_EQUAL(ring_log_info((enum ring_log_event)1000)->name, "unknown");

	/* Every event has a name, and no two share one. */
	for (int a = 0; a < RING_LOG_COUNT_; a++) {
		const char *na = ring_log_info((enum ring_log_event)a)->name;
		CU_ASSERT_PTR_NOT_NULL_FATAL(na);
		CU_ASSERT_STRING_NOT_EQUAL(na, "unknown");
		for (int b = a + 1; b < RING_LOG_COUNT_; b++)
			CU_ASSERT_STRING_NOT_EQUAL(na, ring_log_info((enum ring_log_event)b)->name);
	}
}

/* A step that needs more room than the driver gave ends in one FATAL, and
 * so does every later one: no PERSIST is ever silently lost (§7). */
static void test_update_overflow_is_fatal_and_final(void)
{
	struct ring_layout l = default_layout(3);
	int err;
	struct ring_node *n = ring_node_new(&l, id_of(0), 0, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	struct ring_update *up = calloc(1, sizeof *up);
	CU_ASSERT_PTR_NOT_NULL_FATAL(up);
	struct ring_event ev = event(RING_EVENT_START);
	ev.now_us = T0;
	up->cap = 1;
	ring_node_step(n, &ev, up); /* one SEND: fits */
	CU_ASSERT_EQUAL(up->n, 1);
	CU_ASSERT_EQUAL(up->action[0].type, RING_ACTION_SEND);
	ev = event(RING_EVENT_ACQUIRE);
	ev.now_us = T0 + 1;
	ev.u.client.client = 5;
	ring_node_step(n, &ev, up); /* queued: nothing to do */
	ev = event(RING_EVENT_LEAVE);
	ev.now_us = T0 + 2;
	ring_node_step(n, &ev, up); /* LEAVE, leave_done, LEFT: too many */
	CU_ASSERT_EQUAL(up->n, 1);
	CU_ASSERT_EQUAL(up->action[0].type, RING_ACTION_FATAL);
	CU_ASSERT_EQUAL(up->action[0].u.fatal.reason, -RING_EOVERFLOW);
	up->cap = 0;
	ev = event(RING_EVENT_TICK);
	ev.now_us = T0 + 3;
	ring_node_step(n, &ev, up);
	CU_ASSERT_EQUAL(up->n, 1);
	CU_ASSERT_EQUAL(up->action[0].type, RING_ACTION_FATAL);
	CU_ASSERT_EQUAL(up->deadline_us, NEVER);
	free(up);
	ring_node_free(n);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_node_tests[] = {
	T_(test_node_new_refuses_an_id_outside_the_ring),
	T_(test_fresh_member_elects_after_listening_two_heartbeats),
	T_(test_three_members_bootstrap_to_exactly_one_token),
	T_(test_pause_past_half_the_loss_timeout_revokes_before_anything_else),
	T_(test_late_tick_within_half_the_loss_timeout_is_no_pause),
	T_(test_hostile_datagrams_are_counted_never_acted_on),
	T_(test_state_and_log_names_are_those_of_the_spec),
	T_(test_update_overflow_is_fatal_and_final),
	CU_TEST_INFO_NULL,
};
#undef T_
