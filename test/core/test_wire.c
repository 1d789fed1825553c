/* CUnit suite for the datagram codec (ring/core/wire.c): round trips, the exact
 * byte layout, and that decode refuses every truncated, padded, foreign or
 * out-of-range datagram without reading past its end. */
#include <CUnit/CUnit.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/set.h"
#include "core/wire.h"
#include "lib/harness.h"
#include "lib/suites.h"

static const enum ring_msg_type all_types[] = {
#define TEST_TYPE_(name, code, str) RING_MSG_##name,
	RING_MSG_TYPES(TEST_TYPE_)
#undef TEST_TYPE_
};

#define N_TYPES (sizeof all_types / sizeof all_types[0])

/* Offsets of the header fields; body offsets follow RING_WIRE_HEADER. */
enum { OFF_MAGIC = 0, OFF_VERSION = 2, OFF_TYPE = 3, OFF_FROM = 4, OFF_TO = 6, OFF_FP = 8 };

/* The soaks draw from the harness's seeded xorshift64. */
static size_t rng_below(uint64_t *s, size_t n)
{
	return (size_t)(xorshift_next(s) % n);
}

/* A valid message of TYPE with every field at its largest value, and both
 * ends of every set. */
static void make_max(struct ring_msg *m, enum ring_msg_type type)
{
	memset(m, 0, sizeof *m);
	m->type = type;
	m->from = UINT16_MAX;
	m->to = UINT16_MAX;
	m->fingerprint = UINT64_MAX;
	struct ring_set all;
	memset(all.bits, 0xff, sizeof all.bits);
	switch (type) {
	case RING_MSG_TOKEN:
		m->u.token = (struct ring_msg_token){ UINT32_MAX, UINT32_MAX, UINT32_MAX,
						      UINT32_MAX, UINT32_MAX, UINT32_MAX,
						      UINT32_MAX, all, all, all };
		break;
	case RING_MSG_TOKEN_ACK:
		/* flags: the largest value decode accepts */
		m->u.token_ack = (struct ring_msg_token_ack){ UINT32_MAX, UINT32_MAX,
							      UINT32_MAX, RING_ACK_STALE };
		break;
	case RING_MSG_HEARTBEAT:
		/* flags: the largest value decode accepts */
		m->u.heartbeat = (struct ring_msg_heartbeat){ UINT32_MAX, UINT32_MAX,
							      UINT32_MAX,
							      RING_HB_PARKED | RING_HB_BUSY | RING_HB_GRANTED,
							      UINT32_MAX, all, all };
		break;
	case RING_MSG_ELECTION:
		m->u.election = (struct ring_msg_election){ UINT16_MAX, UINT16_MAX, UINT32_MAX,
							    UINT32_MAX, all,
							    RING_ELECTION_NO_QUORUM };
		break;
	case RING_MSG_ELECTION_ACK:
		m->u.election_ack = (struct ring_msg_election_ack){ UINT16_MAX, UINT16_MAX,
								    UINT32_MAX };
		break;
	case RING_MSG_JOIN:
		m->u.join.epoch = UINT32_MAX;
		m->u.join.refused = (struct ring_hop){UINT32_MAX, UINT32_MAX};
		break;
	case RING_MSG_LEAVE:
		m->u.leave.epoch = UINT32_MAX;
		m->u.leave.accepted = (struct ring_hop){UINT32_MAX, UINT32_MAX};
		m->u.leave.refused = (struct ring_hop){UINT32_MAX, UINT32_MAX};
		break;
	case RING_MSG_EPOCH_QUERY:
		m->u.epoch_query.nonce = UINT64_MAX;
		break;
	case RING_MSG_EPOCH_REPLY:
		m->u.epoch_reply.nonce = UINT64_MAX;
		m->u.epoch_reply.epoch = UINT32_MAX;
		break;
	case RING_MSG_WANT:
		m->u.want = (struct ring_msg_want){UINT32_MAX, UINT32_MAX, UINT16_MAX, UINT16_MAX};
		break;
	case RING_MSG_HEARTBEAT_ACK:
		m->u.heartbeat_ack = (struct ring_msg_heartbeat_ack){UINT32_MAX, UINT32_MAX, UINT32_MAX};
		break;
	case RING_MSG_STATUS_REQ:
		m->u.status_req.nonce = UINT64_MAX;
		break;
	case RING_MSG_STATUS_RESP: {
		struct ring_msg_status_resp *r = &m->u.status_resp;
		r->nonce = UINT64_MAX;
		r->state = 4; /* the last state, no-quorum */
		r->flags = RING_STATUS_HAS_TOKEN | RING_STATUS_PARKED;
		r->successor = UINT16_MAX;
		r->epoch = UINT32_MAX;
		r->fence = UINT64_MAX;
		r->seen_ms = UINT32_MAX;
		r->queued = UINT32_MAX;
		r->alive = all;
		memset(&r->counters, 0xff, sizeof r->counters);
		break;
	}
	case RING_MSG_ADVICE_REQ:
		m->u.advice_req.nonce = UINT64_MAX;
		break;
	case RING_MSG_ADVICE_RESP:
		/* every figure at its largest: the order rules hold with equality */
		memset(&m->u.advice_resp, 0xff, sizeof m->u.advice_resp);
		break;
	case RING_MSG_HOLD_REQ:
		m->u.hold_req.nonce = UINT64_MAX;
		break;
	case RING_MSG_HOLD_RESP:
		m->u.hold_resp = (struct ring_msg_hold_resp){UINT64_MAX, UINT64_MAX, UINT32_MAX};
		break;
	}
}

/* A valid message of TYPE whose fields are all different byte patterns, so
 * that a swapped, shifted or byte-reversed field cannot go unnoticed. Sets
 * hold members 0 and 255 and a few in between. */
static void make_pattern(struct ring_msg *m, enum ring_msg_type type)
{
	memset(m, 0, sizeof *m);
	m->type = type;
	m->from = 0x0102;
	m->to = 0x8003;
	m->fingerprint = 0x0123456789abcdefULL;
	struct ring_set s;
	ring_set_clear(&s);
	ring_set_add(&s, 0);
	ring_set_add(&s, 9);
	ring_set_add(&s, 128);
	ring_set_add(&s, 255);
	/* Three sets apart, so that a swap of two is seen. */
	struct ring_set s2 = {0}, s3 = {0};
	ring_set_add(&s2, 3);
	ring_set_add(&s2, 200);
	ring_set_add(&s3, 1);
	ring_set_add(&s3, 77);
	switch (type) {
	case RING_MSG_TOKEN:
		m->u.token = (struct ring_msg_token){ 0x80000001u, 0x01020304u, 0xa5a5a5a5u,
						      0x7fffffffu, 0x00010203u, 0x0c0d0e0fu,
						      0x00000040u, s, s2, s3 };
		break;
	case RING_MSG_TOKEN_ACK:
		m->u.token_ack = (struct ring_msg_token_ack){ 0x11223344u, 0x55667788u,
							      0x99aabbccu, 0 };
		break;
	case RING_MSG_HEARTBEAT:
		m->u.heartbeat = (struct ring_msg_heartbeat){ 0x00000100u, 0xdeadbeefu,
							      0x01000000u, RING_HB_PARKED, 0x0badcafeu, s, s2 };
		break;
	case RING_MSG_ELECTION:
		m->u.election = (struct ring_msg_election){ 0x00ff, 0xff00, 0x0000ffffu,
							    0xffff0000u, s,
							    RING_ELECTION_NO_QUORUM };
		break;
	case RING_MSG_ELECTION_ACK:
		m->u.election_ack = (struct ring_msg_election_ack){ 0x1234, 0x5678,
								    0x9abcdef0u };
		break;
	case RING_MSG_JOIN:
		m->u.join.epoch = 0x0f0e0d0cu;
		m->u.join.refused = (struct ring_hop){0x10203040u, 0x50607080u};
		break;
	case RING_MSG_LEAVE:
		m->u.leave.epoch = 0xc0d0e0f0u;
		m->u.leave.accepted = (struct ring_hop){0x01020304u, 0x05060708u};
		m->u.leave.refused = (struct ring_hop){0x090a0b0cu, 0x0d0e0f10u};
		break;
	case RING_MSG_EPOCH_QUERY:
		m->u.epoch_query.nonce = 0x1112131415161718ULL;
		break;
	case RING_MSG_EPOCH_REPLY:
		m->u.epoch_reply.nonce = 0x2122232425262728ULL;
		m->u.epoch_reply.epoch = 0x31323334u;
		break;
	case RING_MSG_WANT:
		m->u.want = (struct ring_msg_want){0x41424344u, 0x51525354u, 0x6162u, 0x0007u};
		break;
	case RING_MSG_HEARTBEAT_ACK:
		m->u.heartbeat_ack = (struct ring_msg_heartbeat_ack){0x61626364u, 0x71727374u,
								     0x81828384u};
		break;
	case RING_MSG_STATUS_REQ:
		m->u.status_req.nonce = 0x0102030405060708ULL;
		break;
	case RING_MSG_STATUS_RESP: {
		struct ring_msg_status_resp *r = &m->u.status_resp;
		r->nonce = 0x1122334455667788ULL;
		r->state = 2;
		r->flags = RING_STATUS_HAS_TOKEN;
		r->successor = 0x0a0b;
		r->epoch = 0x01000203u;
		r->fence = 0x0102030405060708ULL;
		r->seen_ms = 0x00abcdefu;
		r->queued = 0x10u;
		r->alive = s;
		uint64_t *c = (uint64_t *)&r->counters;
		for (size_t k = 0; k < RING_COUNTER_COUNT; k++)
			c[k] = 0x0101010101010101ULL * (k + 1);
		break;
	}
	case RING_MSG_ADVICE_REQ:
		m->u.advice_req.nonce = 0x0807060504030201ULL;
		break;
	case RING_MSG_ADVICE_RESP:
		/* in order, as decode wants: p50 < p99 < p999 < max */
		m->u.advice_resp = (struct ring_msg_advice_resp){
			0x1112131415161718ULL, 0x0000002122232425ULL, 0x0000003132333435ULL,
			0x0000004142434445ULL, 0x0000005152535455ULL, 0x0000006162636465ULL,
			0x0000007172737475ULL, 0x0000000000008182ULL};
		break;
	case RING_MSG_HOLD_REQ:
		m->u.hold_req.nonce = 0x0203040506070809ULL;
		break;
	case RING_MSG_HOLD_RESP:
		m->u.hold_resp = (struct ring_msg_hold_resp){0x2122232425262728ULL,
							     0x3132333435363738ULL, 0x41424344u};
		break;
	}
}

/* Field by field, so that a failure names the field. */
static void assert_msg_equal(const struct ring_msg *a, const struct ring_msg *b)
{
	CU_ASSERT_EQUAL(a->type, b->type);
	CU_ASSERT_EQUAL(a->from, b->from);
	CU_ASSERT_EQUAL(a->to, b->to);
	CU_ASSERT_EQUAL(a->fingerprint, b->fingerprint);
	if (a->type != b->type)
		return;
	switch (a->type) {
	case RING_MSG_TOKEN:
		CU_ASSERT_EQUAL(a->u.token.epoch, b->u.token.epoch);
		CU_ASSERT_EQUAL(a->u.token.seq, b->u.token.seq);
		CU_ASSERT_EQUAL(a->u.token.counter, b->u.token.counter);
		CU_ASSERT_EQUAL(a->u.token.quiet_us, b->u.token.quiet_us);
		CU_ASSERT_EQUAL(a->u.token.idle, b->u.token.idle);
		CU_ASSERT_EQUAL(a->u.token.walk_us, b->u.token.walk_us);
		CU_ASSERT_EQUAL(a->u.token.walk_left, b->u.token.walk_left);
		CU_ASSERT_EQUAL(memcmp(&a->u.token.alive, &b->u.token.alive,
				       sizeof(struct ring_set)), 0);
		CU_ASSERT_EQUAL(memcmp(&a->u.token.want, &b->u.token.want,
				       sizeof(struct ring_set)), 0);
		CU_ASSERT_EQUAL(memcmp(&a->u.token.knows, &b->u.token.knows,
				       sizeof(struct ring_set)), 0);
		break;
	case RING_MSG_TOKEN_ACK:
		CU_ASSERT_EQUAL(a->u.token_ack.epoch, b->u.token_ack.epoch);
		CU_ASSERT_EQUAL(a->u.token_ack.seq, b->u.token_ack.seq);
		CU_ASSERT_EQUAL(a->u.token_ack.known_epoch, b->u.token_ack.known_epoch);
		CU_ASSERT_EQUAL(a->u.token_ack.flags, b->u.token_ack.flags);
		break;
	case RING_MSG_HEARTBEAT:
		CU_ASSERT_EQUAL(a->u.heartbeat.epoch, b->u.heartbeat.epoch);
		CU_ASSERT_EQUAL(a->u.heartbeat.seq, b->u.heartbeat.seq);
		CU_ASSERT_EQUAL(a->u.heartbeat.counter, b->u.heartbeat.counter);
		CU_ASSERT_EQUAL(a->u.heartbeat.flags, b->u.heartbeat.flags);
		CU_ASSERT_EQUAL(memcmp(&a->u.heartbeat.alive, &b->u.heartbeat.alive,
				       sizeof(struct ring_set)), 0);
		CU_ASSERT_EQUAL(memcmp(&a->u.heartbeat.want, &b->u.heartbeat.want,
				       sizeof(struct ring_set)), 0);
		break;
	case RING_MSG_ELECTION:
		CU_ASSERT_EQUAL(a->u.election.initiator, b->u.election.initiator);
		CU_ASSERT_EQUAL(a->u.election.hops, b->u.election.hops);
		CU_ASSERT_EQUAL(a->u.election.round, b->u.election.round);
		CU_ASSERT_EQUAL(a->u.election.max_epoch, b->u.election.max_epoch);
		CU_ASSERT_EQUAL(memcmp(&a->u.election.participants,
				       &b->u.election.participants,
				       sizeof(struct ring_set)), 0);
		CU_ASSERT_EQUAL(a->u.election.flags, b->u.election.flags);
		break;
	case RING_MSG_ELECTION_ACK:
		CU_ASSERT_EQUAL(a->u.election_ack.initiator, b->u.election_ack.initiator);
		CU_ASSERT_EQUAL(a->u.election_ack.hops, b->u.election_ack.hops);
		CU_ASSERT_EQUAL(a->u.election_ack.round, b->u.election_ack.round);
		break;
	case RING_MSG_JOIN:
		CU_ASSERT_EQUAL(a->u.join.epoch, b->u.join.epoch);
		CU_ASSERT_EQUAL(a->u.join.refused.epoch, b->u.join.refused.epoch);
		CU_ASSERT_EQUAL(a->u.join.refused.seq, b->u.join.refused.seq);
		break;
	case RING_MSG_LEAVE:
		CU_ASSERT_EQUAL(a->u.leave.epoch, b->u.leave.epoch);
		CU_ASSERT_EQUAL(a->u.leave.accepted.epoch, b->u.leave.accepted.epoch);
		CU_ASSERT_EQUAL(a->u.leave.accepted.seq, b->u.leave.accepted.seq);
		CU_ASSERT_EQUAL(a->u.leave.refused.epoch, b->u.leave.refused.epoch);
		CU_ASSERT_EQUAL(a->u.leave.refused.seq, b->u.leave.refused.seq);
		break;
	case RING_MSG_EPOCH_QUERY:
		CU_ASSERT_EQUAL(a->u.epoch_query.nonce, b->u.epoch_query.nonce);
		break;
	case RING_MSG_EPOCH_REPLY:
		CU_ASSERT_EQUAL(a->u.epoch_reply.nonce, b->u.epoch_reply.nonce);
		CU_ASSERT_EQUAL(a->u.epoch_reply.epoch, b->u.epoch_reply.epoch);
		break;
	case RING_MSG_WANT:
		CU_ASSERT_EQUAL(a->u.want.epoch, b->u.want.epoch);
		CU_ASSERT_EQUAL(a->u.want.seq, b->u.want.seq);
		CU_ASSERT_EQUAL(a->u.want.wanter, b->u.want.wanter);
		CU_ASSERT_EQUAL(a->u.want.hops, b->u.want.hops);
		break;
	case RING_MSG_HEARTBEAT_ACK:
		CU_ASSERT_EQUAL(a->u.heartbeat_ack.epoch, b->u.heartbeat_ack.epoch);
		CU_ASSERT_EQUAL(a->u.heartbeat_ack.seq, b->u.heartbeat_ack.seq);
		CU_ASSERT_EQUAL(a->u.heartbeat_ack.beat, b->u.heartbeat_ack.beat);
		break;
	case RING_MSG_STATUS_REQ:
		CU_ASSERT_EQUAL(a->u.status_req.nonce, b->u.status_req.nonce);
		break;
	case RING_MSG_STATUS_RESP: {
		const struct ring_msg_status_resp *x = &a->u.status_resp, *y = &b->u.status_resp;
		CU_ASSERT_EQUAL(x->nonce, y->nonce);
		CU_ASSERT_EQUAL(x->state, y->state);
		CU_ASSERT_EQUAL(x->flags, y->flags);
		CU_ASSERT_EQUAL(x->successor, y->successor);
		CU_ASSERT_EQUAL(x->epoch, y->epoch);
		CU_ASSERT_EQUAL(x->fence, y->fence);
		CU_ASSERT_EQUAL(x->seen_ms, y->seen_ms);
		CU_ASSERT_EQUAL(x->queued, y->queued);
		CU_ASSERT_EQUAL(memcmp(&x->alive, &y->alive, sizeof x->alive), 0);
		CU_ASSERT_EQUAL(memcmp(&x->counters, &y->counters, sizeof x->counters), 0);
		break;
	}
	case RING_MSG_ADVICE_REQ:
		CU_ASSERT_EQUAL(a->u.advice_req.nonce, b->u.advice_req.nonce);
		break;
	case RING_MSG_ADVICE_RESP: {
		const struct ring_msg_advice_resp *x = &a->u.advice_resp, *y = &b->u.advice_resp;
		CU_ASSERT_EQUAL(x->nonce, y->nonce);
		CU_ASSERT_EQUAL(x->holds, y->holds);
		CU_ASSERT_EQUAL(x->p50_us, y->p50_us);
		CU_ASSERT_EQUAL(x->p99_us, y->p99_us);
		CU_ASSERT_EQUAL(x->p999_us, y->p999_us);
		CU_ASSERT_EQUAL(x->max_us, y->max_us);
		CU_ASSERT_EQUAL(x->pause_max_us, y->pause_max_us);
		CU_ASSERT_EQUAL(x->pauses, y->pauses);
		break;
	}
	case RING_MSG_HOLD_REQ:
		CU_ASSERT_EQUAL(a->u.hold_req.nonce, b->u.hold_req.nonce);
		break;
	case RING_MSG_HOLD_RESP:
		CU_ASSERT_EQUAL(a->u.hold_resp.nonce, b->u.hold_resp.nonce);
		CU_ASSERT_EQUAL(a->u.hold_resp.fence, b->u.hold_resp.fence);
		CU_ASSERT_EQUAL(a->u.hold_resp.held_ms, b->u.hold_resp.held_ms);
		break;
	}
}

/* Encodes M, which the test expects to succeed, into BUF; returns its size. */
static size_t encode_ok(const struct ring_msg *m, uint8_t *buf, size_t cap)
{
	int n = ring_wire_encode(m, buf, cap);
	CU_ASSERT_EQUAL(n, (int)ring_wire_size(m->type));
	return n > 0 ? (size_t)n : 0;
}

/* Decodes a heap copy of exactly LEN bytes: any read past the end is an
 * ASan error, not a silent pass. */
static int decode_exact(const uint8_t *bytes, size_t len, struct ring_msg *out)
{
	uint8_t *copy = malloc(len);
	if (len > 0)
		CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
	if (len > 0)
		memcpy(copy, bytes, len);
	int rc = ring_wire_decode(copy, len, out);
	free(copy);
	return rc;
}

/* Encodes a message built with fields decode must refuse (encode takes them
 * as they are) and checks that decode answers WANT. */
static void assert_decode_fails(const struct ring_msg *m, int want)
{
	uint8_t buf[RING_WIRE_MAX];
	size_t n = encode_ok(m, buf, sizeof buf);
	struct ring_msg out;
	CU_ASSERT_EQUAL(decode_exact(buf, n, &out), want);
}

static void assert_round_trip(const struct ring_msg *m)
{
	uint8_t buf[RING_WIRE_MAX];
	size_t n = encode_ok(m, buf, sizeof buf);
	struct ring_msg out;
	CU_ASSERT_EQUAL_FATAL(decode_exact(buf, n, &out), 0);
	assert_msg_equal(m, &out);
}

static void test_round_trip_every_type_at_max_values(void)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		struct ring_msg m;
		make_max(&m, all_types[i]);
		assert_round_trip(&m);
	}
}

static void test_round_trip_every_type_with_bit_patterns(void)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		struct ring_msg m;
		make_pattern(&m, all_types[i]);
		assert_round_trip(&m);
	}
}

static void test_round_trip_keeps_set_ends_0_and_255(void)
{
	struct ring_msg m, out;
	uint8_t buf[RING_WIRE_MAX];
	make_pattern(&m, RING_MSG_ELECTION);
	size_t n = encode_ok(&m, buf, sizeof buf);
	CU_ASSERT_EQUAL_FATAL(decode_exact(buf, n, &out), 0);
	CU_ASSERT_TRUE(ring_set_has(&out.u.election.participants, 0));
	CU_ASSERT_TRUE(ring_set_has(&out.u.election.participants, 255));
	CU_ASSERT_FALSE(ring_set_has(&out.u.election.participants, 1));
	CU_ASSERT_FALSE(ring_set_has(&out.u.election.participants, 254));
	CU_ASSERT_EQUAL(ring_set_count(&out.u.election.participants), 4);
}

static void test_encoded_size_equals_wire_size(void)
{
	/* Header plus the body widths of PROTOCOL.md §2. */
	static const struct {
		enum ring_msg_type type;
		size_t size;
	} sizes[] = {
		{ RING_MSG_TOKEN, 16 + 124 },     { RING_MSG_TOKEN_ACK, 16 + 16 },
		{ RING_MSG_HEARTBEAT, 16 + 84 }, { RING_MSG_ELECTION, 16 + 48 },
		{ RING_MSG_ELECTION_ACK, 16 + 8 }, { RING_MSG_JOIN, 16 + 12 },
		{ RING_MSG_LEAVE, 16 + 20 },     { RING_MSG_STATUS_REQ, 16 + 8 },
		{ RING_MSG_STATUS_RESP, 16 + 64 + 8 * RING_COUNTER_COUNT },
		{ RING_MSG_EPOCH_QUERY, 16 + 8 }, { RING_MSG_EPOCH_REPLY, 16 + 12 },
		{ RING_MSG_WANT, 16 + 12 },        { RING_MSG_HEARTBEAT_ACK, 16 + 12 },
		{ RING_MSG_ADVICE_REQ, 16 + 8 },   { RING_MSG_ADVICE_RESP, 16 + 64 },
		{ RING_MSG_HOLD_REQ, 16 + 8 },     { RING_MSG_HOLD_RESP, 16 + 20 },
	};
	CU_ASSERT_EQUAL(sizeof sizes / sizeof sizes[0], N_TYPES);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct ring_msg m;
		uint8_t buf[RING_WIRE_MAX];
		make_pattern(&m, sizes[i].type);
		CU_ASSERT_EQUAL(ring_wire_size(sizes[i].type), sizes[i].size);
		CU_ASSERT(ring_wire_size(sizes[i].type) <= RING_WIRE_MAX);
		CU_ASSERT_EQUAL(ring_wire_encode(&m, buf, sizeof buf), (int)sizes[i].size);
	}
	CU_ASSERT_EQUAL(ring_wire_size((enum ring_msg_type)0), 0);
	CU_ASSERT_EQUAL(ring_wire_size((enum ring_msg_type)(N_TYPES + 1)), 0);
	CU_ASSERT_EQUAL(ring_wire_size((enum ring_msg_type)255), 0);
	CU_ASSERT_EQUAL(ring_wire_size((enum ring_msg_type)100000), 0);
}

static void test_token_byte_layout_is_big_endian(void)
{
	struct ring_msg m;
	memset(&m, 0, sizeof m);
	m.type = RING_MSG_TOKEN;
	m.from = 0x0102;
	m.to = 0x0304;
	m.fingerprint = 0x1122334455667788ULL;
	m.u.token.epoch = 0xa1a2a3a4u;
	m.u.token.seq = 0xb1b2b3b4u;
	m.u.token.counter = 0xc1c2c3c4u;
	m.u.token.quiet_us = 0xd1d2d3d4u;
	m.u.token.idle = 0xe1e2e3e4u;
	m.u.token.walk_us = 0xf1f2f3f4u;
	m.u.token.walk_left = 0x91929394u;
	ring_set_add(&m.u.token.alive, 0);
	ring_set_add(&m.u.token.alive, 9);
	ring_set_add(&m.u.token.alive, 255);
	ring_set_add(&m.u.token.want, 8);
	ring_set_add(&m.u.token.knows, 1);

	static const uint8_t want[140] = {
		'R', 'G', 6, 1,                                 /* magic, version, type */
		0x01, 0x02, 0x03, 0x04,                         /* from, to */
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* fingerprint */
		0xa1, 0xa2, 0xa3, 0xa4,                         /* epoch */
		0xb1, 0xb2, 0xb3, 0xb4,                         /* seq */
		0xc1, 0xc2, 0xc3, 0xc4,                         /* counter */
		0xd1, 0xd2, 0xd3, 0xd4,                         /* quiet_us */
		0xe1, 0xe2, 0xe3, 0xe4,                         /* idle */
		0xf1, 0xf2, 0xf3, 0xf4,                         /* walk_us */
		0x91, 0x92, 0x93, 0x94,                         /* walk_left */
		0x01, 0x02, 0, 0, 0, 0, 0, 0,                   /* alive: 0 and 9 ... */
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0x80,                      /* ... and 255 */
		0, 0x01, 0, 0, 0, 0, 0, 0,                      /* want: 8 */
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0x02, 0, 0, 0, 0, 0, 0, 0,                      /* knows: 1 */
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t buf[RING_WIRE_MAX];
	memset(buf, 0xee, sizeof buf);
	CU_ASSERT_EQUAL_FATAL(ring_wire_encode(&m, buf, sizeof buf), (int)sizeof want);
	for (size_t i = 0; i < sizeof want; i++)
		CU_ASSERT_EQUAL(buf[i], want[i]);
	CU_ASSERT_EQUAL(buf[sizeof want], 0xee); /* nothing written past the end */
	CU_ASSERT_EQUAL(buf[OFF_VERSION], RING_WIRE_VERSION);
	CU_ASSERT_EQUAL(buf[OFF_TYPE], RING_MSG_TOKEN);
}

static void test_every_truncation_is_short(void)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		struct ring_msg m, out;
		uint8_t buf[RING_WIRE_MAX];
		make_pattern(&m, all_types[i]);
		size_t n = encode_ok(&m, buf, sizeof buf);
		for (size_t len = 0; len < n; len++)
			CU_ASSERT_EQUAL(decode_exact(buf, len, &out), -RING_ESHORT);
	}
}

static void test_null_buffer_of_length_0_is_short(void)
{
	struct ring_msg out;
	CU_ASSERT_EQUAL(ring_wire_decode(NULL, 0, &out), -RING_ESHORT);
}

static void test_one_extra_byte_is_long(void)
{
	static const uint8_t extra[] = { 0x00, 0xff };
	for (size_t i = 0; i < N_TYPES; i++) {
		for (size_t e = 0; e < sizeof extra; e++) {
			struct ring_msg m, out;
			uint8_t buf[RING_WIRE_MAX + 1];
			make_pattern(&m, all_types[i]);
			size_t n = encode_ok(&m, buf, sizeof buf);
			buf[n] = extra[e];
			CU_ASSERT_EQUAL(decode_exact(buf, n + 1, &out), -RING_ELONG);
		}
	}
}

static void test_bad_magic_is_rejected(void)
{
	static const uint8_t magics[][2] = { { 'G', 'R' }, { 'R', 0 }, { 0, 'G' },
					      { 'r', 'g' }, { 0xff, 0xff } };
	for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++) {
		struct ring_msg m, out;
		uint8_t buf[RING_WIRE_MAX];
		make_pattern(&m, RING_MSG_TOKEN);
		size_t n = encode_ok(&m, buf, sizeof buf);
		buf[OFF_MAGIC] = magics[i][0];
		buf[OFF_MAGIC + 1] = magics[i][1];
		CU_ASSERT_EQUAL(decode_exact(buf, n, &out), -RING_EMAGIC);
	}
}

static void test_unknown_version_is_rejected(void)
{
	static const uint8_t versions[] = { 0, 1, 2, 3, 4, 5, 7, 255 };
	for (size_t i = 0; i < N_TYPES; i++) {
		for (size_t v = 0; v < sizeof versions; v++) {
			struct ring_msg m, out;
			uint8_t buf[RING_WIRE_MAX];
			make_pattern(&m, all_types[i]);
			size_t n = encode_ok(&m, buf, sizeof buf);
			buf[OFF_VERSION] = versions[v];
			CU_ASSERT_EQUAL(decode_exact(buf, n, &out), -RING_EVERSION);
		}
	}
}

/* A mixed-version ring (rolling upgrade): the receiver refuses another
 * version whole (decode never fills MSG from it), yet can name the version
 * the datagram came in, from the three bytes every version keeps; nothing
 * without our magic, or too short to hold the byte, is given a version. */
static void test_another_version_is_refused_and_named(void)
{
	static const uint8_t versions[] = { 0, 1, 2, RING_WIRE_VERSION + 1, 255 };
	for (size_t v = 0; v < sizeof versions; v++) {
		struct ring_msg m, out;
		uint8_t buf[RING_WIRE_MAX];
		make_pattern(&m, RING_MSG_TOKEN);
		size_t n = encode_ok(&m, buf, sizeof buf);
		CU_ASSERT_EQUAL(ring_wire_peek_version(buf, n), RING_WIRE_VERSION);
		buf[OFF_VERSION] = versions[v];
		CU_ASSERT_EQUAL(ring_wire_decode(buf, n, &out), -RING_EVERSION);
		CU_ASSERT_EQUAL(out.from, 0); /* the sender is not believed */
		CU_ASSERT_EQUAL(out.type, 0);
		CU_ASSERT_EQUAL(ring_wire_peek_version(buf, n), versions[v]);
		/* The version byte is enough: a longer or shorter message of
		 * another version is still that version, not "short". */
		CU_ASSERT_EQUAL(ring_wire_peek_version(buf, 3), versions[v]);
		CU_ASSERT_EQUAL(ring_wire_peek_type(buf, n), 0);
		CU_ASSERT_EQUAL(ring_wire_peek_version(buf, 2), -1);
		buf[OFF_MAGIC + 1] = 'X';
		CU_ASSERT_EQUAL(ring_wire_peek_version(buf, n), -1);
	}
	CU_ASSERT_EQUAL(ring_wire_peek_version((const uint8_t *)"RG", 0), -1);
}

static void test_unknown_type_is_rejected(void)
{
	static const uint8_t types[] = { 0, N_TYPES + 1, 255 };
	for (size_t t = 0; t < sizeof types; t++) {
		struct ring_msg m, out;
		uint8_t buf[RING_WIRE_MAX];
		make_pattern(&m, RING_MSG_TOKEN);
		size_t n = encode_ok(&m, buf, sizeof buf);
		buf[OFF_TYPE] = types[t];
		/* Whatever the length, once the header is whole. */
		CU_ASSERT_EQUAL(decode_exact(buf, n, &out), -RING_ETYPE);
		CU_ASSERT_EQUAL(decode_exact(buf, RING_WIRE_HEADER, &out), -RING_ETYPE);
	}
}

/* Magic before version before type before length before fields: the code a
 * sender gets back names the first thing wrong with its datagram. */
static void test_checks_run_in_header_order(void)
{
	struct ring_msg m, out;
	uint8_t buf[RING_WIRE_MAX + 1];
	make_pattern(&m, RING_MSG_TOKEN);
	m.from = 0; /* a bad field, found last */
	size_t n = encode_ok(&m, buf, sizeof buf);
	buf[n] = 0;

	CU_ASSERT_EQUAL(decode_exact(buf, n, &out), -RING_EFIELD);
	CU_ASSERT_EQUAL(decode_exact(buf, n + 1, &out), -RING_ELONG);
	CU_ASSERT_EQUAL(decode_exact(buf, n - 1, &out), -RING_ESHORT);
	buf[OFF_TYPE] = N_TYPES + 1;
	CU_ASSERT_EQUAL(decode_exact(buf, n - 1, &out), -RING_ETYPE);
	buf[OFF_VERSION] = 1;
	CU_ASSERT_EQUAL(decode_exact(buf, n - 1, &out), -RING_EVERSION);
	buf[OFF_MAGIC] = 'X';
	CU_ASSERT_EQUAL(decode_exact(buf, n - 1, &out), -RING_EMAGIC);
	/* A header cut short is short, whatever it holds. */
	CU_ASSERT_EQUAL(decode_exact(buf, RING_WIRE_HEADER - 1, &out), -RING_ESHORT);
}

/* Every type but the status, advice and hold requests, which ringctl
 * sends from outside the ring and so from no member id. */
static void test_sender_0_is_rejected_for_every_member_type(void)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		struct ring_msg m, out;
		uint8_t buf[RING_WIRE_MAX];
		make_pattern(&m, all_types[i]);
		m.from = 0;
		if (all_types[i] == RING_MSG_STATUS_REQ || all_types[i] == RING_MSG_ADVICE_REQ ||
		    all_types[i] == RING_MSG_HOLD_REQ) {
			size_t n = encode_ok(&m, buf, sizeof buf);
			CU_ASSERT_EQUAL(decode_exact(buf, n, &out), 0);
			continue;
		}
		assert_decode_fails(&m, -RING_EFIELD);
	}
}

static void test_status_resp_with_unknown_state_or_flags_is_rejected(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_STATUS_RESP);
	m.u.status_resp.state = 5;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_STATUS_RESP);
	m.u.status_resp.flags = 0x10; /* the first undefined bit (version 5) */
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_STATUS_RESP);
	m.u.status_resp.flags = 0x80;
	assert_decode_fails(&m, -RING_EFIELD);
}

/* The figures of an advice answer are what a histogram gives, so their
 * order is known: a sender that breaks it is not believed. */
static void test_advice_resp_out_of_order_is_rejected(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_ADVICE_RESP);
	m.u.advice_resp.p50_us = m.u.advice_resp.p99_us + 1;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_ADVICE_RESP);
	m.u.advice_resp.p99_us = m.u.advice_resp.p999_us + 1;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_ADVICE_RESP);
	m.u.advice_resp.p999_us = m.u.advice_resp.max_us + 1;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_ADVICE_RESP);
	m.u.advice_resp.holds = 0; /* a longest hold without any hold */
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_ADVICE_RESP);
	m.u.advice_resp.pauses = 0; /* a longest pause without any pause */
	assert_decode_fails(&m, -RING_EFIELD);
}

/* A member that has seen nothing answers all zeros; one that paused
 * without a hold, or whose pauses were too short to count in ms, too. */
static void test_advice_resp_of_nothing_seen_is_accepted(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_ADVICE_RESP);
	struct ring_msg_advice_resp *a = &m.u.advice_resp;
	*a = (struct ring_msg_advice_resp){.nonce = 7};
	assert_round_trip(&m);
	a->pauses = 3;
	assert_round_trip(&m);
	a->pause_max_us = 500000;
	assert_round_trip(&m);
}

static void test_advice_resp_byte_layout_is_big_endian(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_ADVICE_RESP);
	uint8_t buf[RING_WIRE_MAX];
	CU_ASSERT_EQUAL_FATAL(ring_wire_encode(&m, buf, sizeof buf), 16 + 64);
	CU_ASSERT_EQUAL(buf[OFF_TYPE], RING_MSG_ADVICE_RESP);
	static const uint8_t nonce[8] = {0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18};
	static const uint8_t holds[8] = {0, 0, 0, 0x21, 0x22, 0x23, 0x24, 0x25};
	static const uint8_t pauses[8] = {0, 0, 0, 0, 0, 0, 0x81, 0x82};
	CU_ASSERT_EQUAL(memcmp(buf + 16, nonce, 8), 0);
	CU_ASSERT_EQUAL(memcmp(buf + 24, holds, 8), 0);
	CU_ASSERT_EQUAL(memcmp(buf + 16 + 56, pauses, 8), 0);
	CU_ASSERT_EQUAL(buf[16 + 48 + 7], 0x75); /* pause_max_us, low byte */
}

/* Every version-4 ringctl decodes STATUS_RESP at exactly this length and
 * with only these flags: a byte or a bit more and it sees every member
 * that sends it as down. What watch learned since (who holds the lock)
 * travels in HOLD_RESP instead. */
static void test_status_resp_keeps_the_length_and_flags_older_ringctl_decodes(void)
{
	CU_ASSERT_EQUAL(ring_wire_size(RING_MSG_STATUS_RESP), 192);
	CU_ASSERT_EQUAL(RING_STATUS_HAS_TOKEN | RING_STATUS_PARKED, 0x3u);
	struct ring_msg m, out;
	make_max(&m, RING_MSG_STATUS_RESP);
	uint8_t buf[RING_WIRE_MAX];
	CU_ASSERT_EQUAL(ring_wire_encode(&m, buf, sizeof buf), 192);
	CU_ASSERT_EQUAL(decode_exact(buf, 192, &out), 0);
}

/* No grant is all zeros; a grant's fence names its epoch, never 0. */
static void test_hold_resp_of_no_grant_or_a_grant_is_accepted(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_HOLD_RESP);
	m.u.hold_resp = (struct ring_msg_hold_resp){.nonce = 9};
	assert_round_trip(&m);
	m.u.hold_resp.fence = (uint64_t)1 << 32; /* epoch 1, the first grant */
	assert_round_trip(&m);
	m.u.hold_resp.held_ms = 2400;
	assert_round_trip(&m);
}

static void test_hold_resp_with_a_duration_but_no_fence_or_epoch_0_is_rejected(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_HOLD_RESP);
	m.u.hold_resp.fence = 0; /* held for a while, under no grant */
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_HOLD_RESP);
	m.u.hold_resp.fence = 0xffffffffu; /* epoch 0 */
	assert_decode_fails(&m, -RING_EFIELD);
}

static void test_hold_resp_byte_layout_is_big_endian(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_HOLD_RESP);
	uint8_t buf[RING_WIRE_MAX];
	CU_ASSERT_EQUAL_FATAL(ring_wire_encode(&m, buf, sizeof buf), 16 + 20);
	CU_ASSERT_EQUAL(buf[OFF_TYPE], RING_MSG_HOLD_RESP);
	static const uint8_t body[20] = {0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
					 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,
					 0x41, 0x42, 0x43, 0x44};
	CU_ASSERT_EQUAL(memcmp(buf + 16, body, sizeof body), 0);
}

static void test_token_with_epoch_0_or_seq_0_is_rejected(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_TOKEN);
	m.u.token.epoch = 0;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_TOKEN);
	m.u.token.seq = 0;
	assert_decode_fails(&m, -RING_EFIELD);
}

static void test_heartbeat_with_epoch_0_is_rejected(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_HEARTBEAT);
	m.u.heartbeat.epoch = 0;
	assert_decode_fails(&m, -RING_EFIELD);
}

static void test_heartbeat_with_unknown_flags_is_rejected(void)
{
	static const uint32_t bad[] = { 0x8u, 0xfu, 0x80000000u, UINT32_MAX };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ring_msg m;
		make_pattern(&m, RING_MSG_HEARTBEAT);
		m.u.heartbeat.flags = bad[i];
		assert_decode_fails(&m, -RING_EFIELD);
	}
}

/* A summons names a park, and a park is of a real epoch; seq 0 is the
 * park of a token re-epoched where it rests. */
static void test_want_with_epoch_0_is_rejected(void)
{
	struct ring_msg m, out;
	uint8_t buf[RING_WIRE_MAX];
	make_pattern(&m, RING_MSG_WANT);
	m.u.want.epoch = 0;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_WANT);
	m.u.want.seq = 0;
	size_t n = encode_ok(&m, buf, sizeof buf);
	CU_ASSERT_EQUAL(decode_exact(buf, n, &out), 0);
}

static void test_token_ack_with_unknown_flags_is_rejected(void)
{
	static const uint32_t bad[] = { 0x2u, 0x3u, 0x80000000u, UINT32_MAX };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct ring_msg m;
		make_pattern(&m, RING_MSG_TOKEN_ACK);
		m.u.token_ack.flags = bad[i];
		assert_decode_fails(&m, -RING_EFIELD);
	}
	struct ring_msg m;
	make_pattern(&m, RING_MSG_TOKEN_ACK);
	m.u.token_ack.flags = 0;
	assert_round_trip(&m);
	m.u.token_ack.flags = RING_ACK_STALE;
	assert_round_trip(&m);
}

static void test_election_with_initiator_0_or_round_0_is_rejected(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_ELECTION);
	m.u.election.initiator = 0;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_ELECTION);
	m.u.election.round = 0;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_ELECTION);
	m.u.election.flags = 2; /* no such flag */
	assert_decode_fails(&m, -RING_EFIELD);
}

static void test_election_ack_with_initiator_0_or_round_0_is_rejected(void)
{
	struct ring_msg m;
	make_pattern(&m, RING_MSG_ELECTION_ACK);
	m.u.election_ack.initiator = 0;
	assert_decode_fails(&m, -RING_EFIELD);
	make_pattern(&m, RING_MSG_ELECTION_ACK);
	m.u.election_ack.round = 0;
	assert_decode_fails(&m, -RING_EFIELD);
}

/* Zeros that mean something: a broadcast, a joiner that has never held the
 * token, an empty set, a heartbeat counter before the first grant. */
static void test_zeros_without_a_rule_are_accepted(void)
{
	struct ring_msg m;
	for (size_t i = 0; i < N_TYPES; i++) {
		make_pattern(&m, all_types[i]);
		m.to = 0;
		m.fingerprint = 0;
		assert_round_trip(&m);
	}
	make_pattern(&m, RING_MSG_TOKEN);
	m.u.token.counter = 0;
	m.u.token.quiet_us = 0;
	ring_set_clear(&m.u.token.alive);
	assert_round_trip(&m);
	make_pattern(&m, RING_MSG_TOKEN_ACK);
	m.u.token_ack = (struct ring_msg_token_ack){ 0, 0, 0, 0 };
	assert_round_trip(&m);
	make_pattern(&m, RING_MSG_HEARTBEAT);
	m.u.heartbeat.seq = 0;
	m.u.heartbeat.counter = 0;
	assert_round_trip(&m);
	make_pattern(&m, RING_MSG_ELECTION);
	m.u.election.hops = 0;
	m.u.election.max_epoch = 0;
	ring_set_clear(&m.u.election.participants);
	assert_round_trip(&m);
	make_pattern(&m, RING_MSG_JOIN);
	m.u.join.epoch = 0;
	assert_round_trip(&m);
	make_pattern(&m, RING_MSG_LEAVE);
	m.u.leave.epoch = 0;
	assert_round_trip(&m);
}

static void test_decode_zeroes_what_the_type_does_not_fill(void)
{
	struct ring_msg m, out;
	uint8_t buf[RING_WIRE_MAX];
	make_pattern(&m, RING_MSG_JOIN);
	size_t n = encode_ok(&m, buf, sizeof buf);
	memset(&out, 0xaa, sizeof out);
	CU_ASSERT_EQUAL_FATAL(ring_wire_decode(buf, n, &out), 0);
	/* The rest of the union past the join body: bytes of the old value
	 * would reach whoever reads another member of it. */
	const uint8_t *u = (const uint8_t *)&out.u;
	for (size_t i = sizeof out.u.join; i < sizeof out.u; i++)
		CU_ASSERT_EQUAL(u[i], 0);
}

static void test_encode_with_small_cap_is_nospace(void)
{
	for (size_t i = 0; i < N_TYPES; i++) {
		struct ring_msg m;
		make_pattern(&m, all_types[i]);
		size_t size = ring_wire_size(all_types[i]);
		for (size_t cap = 0; cap < size; cap++) {
			/* Exactly CAP bytes on the heap: a write past them is an
			 * ASan error. */
			uint8_t *buf = malloc(cap);
			if (cap > 0)
				CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
			CU_ASSERT_EQUAL(ring_wire_encode(&m, buf, cap), -RING_ENOSPACE);
			free(buf);
		}
		uint8_t *buf = malloc(size);
		CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
		CU_ASSERT_EQUAL(ring_wire_encode(&m, buf, size), (int)size);
		free(buf);
	}
}

static void test_encode_of_unknown_type_is_rejected(void)
{
	static const unsigned types[] = { 0, N_TYPES + 1, 255, 100000 };
	for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
		struct ring_msg m;
		uint8_t buf[RING_WIRE_MAX];
		make_pattern(&m, RING_MSG_TOKEN);
		m.type = (enum ring_msg_type)types[t];
		CU_ASSERT_EQUAL(ring_wire_encode(&m, buf, sizeof buf), -RING_ETYPE);
		CU_ASSERT_EQUAL(ring_wire_encode(&m, buf, 0), -RING_ETYPE);
	}
}

/* Tests and tools craft bad datagrams through encode, so it writes whatever
 * it is given. */
static void test_encode_does_not_check_fields(void)
{
	struct ring_msg m;
	uint8_t buf[RING_WIRE_MAX];
	make_pattern(&m, RING_MSG_TOKEN_ACK);
	m.from = 0;
	m.u.token_ack.flags = UINT32_MAX;
	CU_ASSERT_EQUAL(ring_wire_encode(&m, buf, sizeof buf),
			(int)ring_wire_size(RING_MSG_TOKEN_ACK));
}

static void test_message_names_come_from_the_type_table(void)
{
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_TOKEN), "token");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_TOKEN_ACK), "token_ack");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_HEARTBEAT), "heartbeat");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_ELECTION), "election");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_ELECTION_ACK), "election_ack");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_JOIN), "join");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_LEAVE), "leave");
	CU_ASSERT_STRING_EQUAL(ring_msg_name((enum ring_msg_type)0), "unknown");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_STATUS_REQ), "status_req");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_STATUS_RESP), "status_resp");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_EPOCH_QUERY), "epoch_query");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_EPOCH_REPLY), "epoch_reply");
	CU_ASSERT_STRING_EQUAL(ring_msg_name((enum ring_msg_type)(N_TYPES + 1)), "unknown");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_ADVICE_REQ), "advice_req");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_ADVICE_RESP), "advice_resp");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_HOLD_REQ), "hold_req");
	CU_ASSERT_STRING_EQUAL(ring_msg_name(RING_MSG_HOLD_RESP), "hold_resp");
}

static bool is_decode_error(int rc)
{
	return rc == -RING_ESHORT || rc == -RING_ELONG || rc == -RING_EMAGIC ||
	       rc == -RING_EVERSION || rc == -RING_ETYPE || rc == -RING_EFIELD;
}

/* Whatever decode accepts is exactly what encode would have written: no
 * byte is ignored, so no two datagrams mean the same message. */
static void assert_soak_case(const uint8_t *bytes, size_t len, size_t *accepted)
{
	struct ring_msg out;
	int rc = decode_exact(bytes, len, &out);
	if (rc != 0) {
		CU_ASSERT(is_decode_error(rc));
		return;
	}
	(*accepted)++;
	uint8_t again[RING_WIRE_MAX];
	int n = ring_wire_encode(&out, again, sizeof again);
	CU_ASSERT_EQUAL_FATAL(n, (int)len);
	CU_ASSERT_EQUAL(memcmp(again, bytes, len), 0);
}

static void test_random_bytes_never_crash_and_accepted_ones_reencode(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t accepted = 0;
	for (int i = 0; i < 200000; i++) {
		uint8_t buf[RING_WIRE_MAX + 8];
		size_t len = rng_below(&seed, sizeof buf + 1);
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)xorshift_next(&seed);
		/* Half the time a plausible header, so that the length and
		 * field checks see traffic too, not only the magic check. */
		if (len >= RING_WIRE_HEADER && (xorshift_next(&seed) & 1)) {
			enum ring_msg_type t = all_types[rng_below(&seed, N_TYPES)];
			buf[OFF_MAGIC] = 'R';
			buf[OFF_MAGIC + 1] = 'G';
			buf[OFF_VERSION] = RING_WIRE_VERSION;
			buf[OFF_TYPE] = (uint8_t)t;
			if (xorshift_next(&seed) & 1)
				len = ring_wire_size(t);
		}
		assert_soak_case(buf, len, &accepted);
	}
	CU_ASSERT(accepted > 1000);
}

static void test_mutated_messages_never_crash_and_accepted_ones_reencode(void)
{
	uint64_t seed = 0x243f6a8885a308d3ULL;
	size_t accepted = 0;
	for (int i = 0; i < 200000; i++) {
		struct ring_msg m;
		uint8_t buf[RING_WIRE_MAX + 8];
		if (xorshift_next(&seed) & 1)
			make_pattern(&m, all_types[rng_below(&seed, N_TYPES)]);
		else
			make_max(&m, all_types[rng_below(&seed, N_TYPES)]);
		size_t len = encode_ok(&m, buf, sizeof buf);
		memset(buf + len, (int)(xorshift_next(&seed) & 0xff), sizeof buf - len);
		size_t flips = rng_below(&seed, 4);
		for (size_t f = 0; f < flips; f++) {
			size_t at = rng_below(&seed, len);
			buf[at] = (uint8_t)(buf[at] ^ (1u << rng_below(&seed, 8)));
		}
		switch (rng_below(&seed, 4)) {
		case 0: /* cut */
			len = rng_below(&seed, len + 1);
			break;
		case 1: /* grow */
			len += rng_below(&seed, 9);
			break;
		case 2: /* zero a field's worth */
			memset(buf + rng_below(&seed, len - 3), 0, 4);
			break;
		default: /* flips only */
			break;
		}
		assert_soak_case(buf, len, &accepted);
	}
	CU_ASSERT(accepted > 1000);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_wire_tests[] = {
	T_(test_round_trip_every_type_at_max_values),
	T_(test_round_trip_every_type_with_bit_patterns),
	T_(test_round_trip_keeps_set_ends_0_and_255),
	T_(test_encoded_size_equals_wire_size),
	T_(test_token_byte_layout_is_big_endian),
	T_(test_every_truncation_is_short),
	T_(test_null_buffer_of_length_0_is_short),
	T_(test_one_extra_byte_is_long),
	T_(test_bad_magic_is_rejected),
	T_(test_unknown_version_is_rejected),
	T_(test_another_version_is_refused_and_named),
	T_(test_unknown_type_is_rejected),
	T_(test_checks_run_in_header_order),
	T_(test_sender_0_is_rejected_for_every_member_type),
	T_(test_status_resp_with_unknown_state_or_flags_is_rejected),
	T_(test_advice_resp_out_of_order_is_rejected),
	T_(test_advice_resp_of_nothing_seen_is_accepted),
	T_(test_advice_resp_byte_layout_is_big_endian),
	T_(test_status_resp_keeps_the_length_and_flags_older_ringctl_decodes),
	T_(test_hold_resp_of_no_grant_or_a_grant_is_accepted),
	T_(test_hold_resp_with_a_duration_but_no_fence_or_epoch_0_is_rejected),
	T_(test_hold_resp_byte_layout_is_big_endian),
	T_(test_token_with_epoch_0_or_seq_0_is_rejected),
	T_(test_heartbeat_with_epoch_0_is_rejected),
	T_(test_heartbeat_with_unknown_flags_is_rejected),
	T_(test_want_with_epoch_0_is_rejected),
	T_(test_token_ack_with_unknown_flags_is_rejected),
	T_(test_election_with_initiator_0_or_round_0_is_rejected),
	T_(test_election_ack_with_initiator_0_or_round_0_is_rejected),
	T_(test_zeros_without_a_rule_are_accepted),
	T_(test_decode_zeroes_what_the_type_does_not_fill),
	T_(test_encode_with_small_cap_is_nospace),
	T_(test_encode_of_unknown_type_is_rejected),
	T_(test_encode_does_not_check_fields),
	T_(test_message_names_come_from_the_type_table),
	T_(test_random_bytes_never_crash_and_accepted_ones_reencode),
	T_(test_mutated_messages_never_crash_and_accepted_ones_reencode),
	CU_TEST_INFO_NULL,
};
#undef T_
