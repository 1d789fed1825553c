/* Datagrams on the wire: the byte layout of every message type
 * (docs/PROTOCOL.md §2), the length and field checks on what arrives, and
 * the message names. Nothing else reads or writes these bytes. */
#include "core/wire.h"

#include <stdbool.h>
#include <string.h>

#include "core/bytes.h"
#include "core/err.h"

#define MAGIC_0 'R'
#define MAGIC_1 'G'

#define SET_BYTES sizeof(struct ring_set)

_Static_assert(sizeof(struct ring_set) == 32, "a ring_set travels as 32 raw bytes");

/* Body widths, field by field in the order of the structs in wire.h. The
 * table below is built from RING_MSG_TYPES, so a new type does not compile
 * until its width is written here. */
#define BODY_TOKEN (4 + 4 + 4 + 4 + 4 + SET_BYTES) /* epoch seq counter quiet_us idle alive */
#define BODY_TOKEN_ACK (4 + 4 + 4 + 4)           /* epoch seq known_epoch flags */
#define BODY_HEARTBEAT (4 + 4 + 4 + 4 + SET_BYTES) /* epoch seq counter flags alive */
#define BODY_ELECTION (2 + 2 + 4 + 4 + SET_BYTES + 4) /* initiator hops round max_epoch participants flags */
#define BODY_ELECTION_ACK (2 + 2 + 4)            /* initiator hops round */
#define BODY_JOIN (4 + 8)                        /* epoch refused(epoch seq) */
#define BODY_LEAVE (4 + 8 + 8)                   /* epoch accepted(epoch seq) refused(epoch seq) */
#define BODY_EPOCH_QUERY 8                       /* nonce */
#define BODY_EPOCH_REPLY (8 + 4)                 /* nonce epoch */
#define BODY_WANT (4 + 4)                        /* epoch seq */
#define BODY_STATUS_REQ 8                        /* nonce */
#define BODY_STATUS_RESP (8 + 1 + 1 + 2 + 4 + 8 + 4 + 4 + SET_BYTES + 8 * RING_COUNTER_COUNT)

/* The type travels in one byte and every message must fit RING_WIRE_MAX,
 * which is what receivers size their buffers by. */
#define WIRE_FITS_(name, code, str)                                        \
	_Static_assert((code) > 0 && (code) <= 255, #name " code fits a byte"); \
	_Static_assert(RING_WIRE_HEADER + BODY_##name <= RING_WIRE_MAX,    \
		       #name " fits RING_WIRE_MAX");
RING_MSG_TYPES(WIRE_FITS_)
#undef WIRE_FITS_

/* The one source of truth for lengths: ring_wire_size(), encode and decode
 * all read it. Codes without an entry stay 0, which means unknown. */
static const size_t body_size[] = {
#define WIRE_BODY_(name, code, str) [code] = BODY_##name,
	RING_MSG_TYPES(WIRE_BODY_)
#undef WIRE_BODY_
};

#define TYPE_SLOTS (sizeof body_size / sizeof body_size[0])

/* Cursors over bytes.h: each helper returns the position after its field. */
static uint8_t *put_u8(uint8_t *p, uint8_t v)
{
	p[0] = v;
	return p + 1;
}

static uint8_t *put_u16(uint8_t *p, uint16_t v)
{
	ring_put_be16(p, v);
	return p + 2;
}

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
	ring_put_be32(p, v);
	return p + 4;
}

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
	ring_put_be64(p, v);
	return p + 8;
}

static uint8_t *put_set(uint8_t *p, const struct ring_set *s)
{
	memcpy(p, s->bits, SET_BYTES);
	return p + SET_BYTES;
}

static uint8_t *put_hop(uint8_t *p, const struct ring_hop *h)
{
	p = put_u32(p, h->epoch);
	return put_u32(p, h->seq);
}

static const uint8_t *get_u8(const uint8_t *p, uint8_t *v)
{
	*v = p[0];
	return p + 1;
}

static const uint8_t *get_u16(const uint8_t *p, uint16_t *v)
{
	*v = ring_get_be16(p);
	return p + 2;
}

static const uint8_t *get_u32(const uint8_t *p, uint32_t *v)
{
	*v = ring_get_be32(p);
	return p + 4;
}

static const uint8_t *get_u64(const uint8_t *p, uint64_t *v)
{
	*v = ring_get_be64(p);
	return p + 8;
}

static const uint8_t *get_set(const uint8_t *p, struct ring_set *s)
{
	memcpy(s->bits, p, SET_BYTES);
	return p + SET_BYTES;
}

static const uint8_t *get_hop(const uint8_t *p, struct ring_hop *h)
{
	p = get_u32(p, &h->epoch);
	return get_u32(p, &h->seq);
}

/* Body width of type code CODE, 0 when no such type. Takes the raw code so
 * that a byte off the wire and an enum from the caller go the same way. */
static size_t body_of(unsigned code)
{
	return code < TYPE_SLOTS ? body_size[code] : 0;
}

size_t ring_wire_size(enum ring_msg_type type)
{
	size_t body = body_of((unsigned)type);
	return body ? RING_WIRE_HEADER + body : 0;
}

const char *ring_msg_name(enum ring_msg_type type)
{
	switch (type) {
#define WIRE_NAME_(name, code, str) \
	case RING_MSG_##name:       \
		return str;
		RING_MSG_TYPES(WIRE_NAME_)
#undef WIRE_NAME_
	}
	return "unknown";
}

static uint8_t *put_body(uint8_t *p, const struct ring_msg *msg)
{
	switch (msg->type) {
	case RING_MSG_TOKEN: {
		const struct ring_msg_token *t = &msg->u.token;
		p = put_u32(p, t->epoch);
		p = put_u32(p, t->seq);
		p = put_u32(p, t->counter);
		p = put_u32(p, t->quiet_us);
		p = put_u32(p, t->idle);
		return put_set(p, &t->alive);
	}
	case RING_MSG_TOKEN_ACK: {
		const struct ring_msg_token_ack *a = &msg->u.token_ack;
		p = put_u32(p, a->epoch);
		p = put_u32(p, a->seq);
		p = put_u32(p, a->known_epoch);
		return put_u32(p, a->flags);
	}
	case RING_MSG_HEARTBEAT: {
		const struct ring_msg_heartbeat *h = &msg->u.heartbeat;
		p = put_u32(p, h->epoch);
		p = put_u32(p, h->seq);
		p = put_u32(p, h->counter);
		p = put_u32(p, h->flags);
		return put_set(p, &h->alive);
	}
	case RING_MSG_ELECTION: {
		const struct ring_msg_election *e = &msg->u.election;
		p = put_u16(p, e->initiator);
		p = put_u16(p, e->hops);
		p = put_u32(p, e->round);
		p = put_u32(p, e->max_epoch);
		p = put_set(p, &e->participants);
		return put_u32(p, e->flags);
	}
	case RING_MSG_ELECTION_ACK: {
		const struct ring_msg_election_ack *e = &msg->u.election_ack;
		p = put_u16(p, e->initiator);
		p = put_u16(p, e->hops);
		return put_u32(p, e->round);
	}
	case RING_MSG_JOIN:
		p = put_u32(p, msg->u.join.epoch);
		return put_hop(p, &msg->u.join.refused);
	case RING_MSG_LEAVE:
		p = put_u32(p, msg->u.leave.epoch);
		p = put_hop(p, &msg->u.leave.accepted);
		return put_hop(p, &msg->u.leave.refused);
	case RING_MSG_EPOCH_QUERY:
		return put_u64(p, msg->u.epoch_query.nonce);
	case RING_MSG_EPOCH_REPLY:
		p = put_u64(p, msg->u.epoch_reply.nonce);
		return put_u32(p, msg->u.epoch_reply.epoch);
	case RING_MSG_WANT:
		p = put_u32(p, msg->u.want.epoch);
		return put_u32(p, msg->u.want.seq);
	case RING_MSG_STATUS_REQ:
		return put_u64(p, msg->u.status_req.nonce);
	case RING_MSG_STATUS_RESP: {
		const struct ring_msg_status_resp *r = &msg->u.status_resp;
		p = put_u64(p, r->nonce);
		p = put_u8(p, r->state);
		p = put_u8(p, r->flags);
		p = put_u16(p, r->successor);
		p = put_u32(p, r->epoch);
		p = put_u64(p, r->fence);
		p = put_u32(p, r->seen_ms);
		p = put_u32(p, r->queued);
		p = put_set(p, &r->alive);
#define WIRE_PUT_COUNTER_(name) p = put_u64(p, r->counters.name);
		RING_COUNTERS(WIRE_PUT_COUNTER_)
#undef WIRE_PUT_COUNTER_
		return p;
	}
	}
	return p; /* unreachable: the caller checked the type */
}

static const uint8_t *get_body(const uint8_t *p, struct ring_msg *msg)
{
	switch (msg->type) {
	case RING_MSG_TOKEN: {
		struct ring_msg_token *t = &msg->u.token;
		p = get_u32(p, &t->epoch);
		p = get_u32(p, &t->seq);
		p = get_u32(p, &t->counter);
		p = get_u32(p, &t->quiet_us);
		p = get_u32(p, &t->idle);
		return get_set(p, &t->alive);
	}
	case RING_MSG_TOKEN_ACK: {
		struct ring_msg_token_ack *a = &msg->u.token_ack;
		p = get_u32(p, &a->epoch);
		p = get_u32(p, &a->seq);
		p = get_u32(p, &a->known_epoch);
		return get_u32(p, &a->flags);
	}
	case RING_MSG_HEARTBEAT: {
		struct ring_msg_heartbeat *h = &msg->u.heartbeat;
		p = get_u32(p, &h->epoch);
		p = get_u32(p, &h->seq);
		p = get_u32(p, &h->counter);
		p = get_u32(p, &h->flags);
		return get_set(p, &h->alive);
	}
	case RING_MSG_ELECTION: {
		struct ring_msg_election *e = &msg->u.election;
		p = get_u16(p, &e->initiator);
		p = get_u16(p, &e->hops);
		p = get_u32(p, &e->round);
		p = get_u32(p, &e->max_epoch);
		p = get_set(p, &e->participants);
		return get_u32(p, &e->flags);
	}
	case RING_MSG_ELECTION_ACK: {
		struct ring_msg_election_ack *e = &msg->u.election_ack;
		p = get_u16(p, &e->initiator);
		p = get_u16(p, &e->hops);
		return get_u32(p, &e->round);
	}
	case RING_MSG_JOIN:
		p = get_u32(p, &msg->u.join.epoch);
		return get_hop(p, &msg->u.join.refused);
	case RING_MSG_LEAVE:
		p = get_u32(p, &msg->u.leave.epoch);
		p = get_hop(p, &msg->u.leave.accepted);
		return get_hop(p, &msg->u.leave.refused);
	case RING_MSG_EPOCH_QUERY:
		return get_u64(p, &msg->u.epoch_query.nonce);
	case RING_MSG_EPOCH_REPLY:
		p = get_u64(p, &msg->u.epoch_reply.nonce);
		return get_u32(p, &msg->u.epoch_reply.epoch);
	case RING_MSG_WANT:
		p = get_u32(p, &msg->u.want.epoch);
		return get_u32(p, &msg->u.want.seq);
	case RING_MSG_STATUS_REQ:
		return get_u64(p, &msg->u.status_req.nonce);
	case RING_MSG_STATUS_RESP: {
		struct ring_msg_status_resp *r = &msg->u.status_resp;
		p = get_u64(p, &r->nonce);
		p = get_u8(p, &r->state);
		p = get_u8(p, &r->flags);
		p = get_u16(p, &r->successor);
		p = get_u32(p, &r->epoch);
		p = get_u64(p, &r->fence);
		p = get_u32(p, &r->seen_ms);
		p = get_u32(p, &r->queued);
		p = get_set(p, &r->alive);
#define WIRE_GET_COUNTER_(name) p = get_u64(p, &r->counters.name);
		RING_COUNTERS(WIRE_GET_COUNTER_)
#undef WIRE_GET_COUNTER_
		return p;
	}
	}
	return p; /* unreachable: the caller checked the type */
}

/* A hop is none ({0, 0}) or a real one: both parts set. */
static bool hop_ok(const struct ring_hop *h)
{
	return (h->epoch == 0) == (h->seq == 0);
}

/* The "never 0" fields of wire.h and the flags nobody defined yet: the
 * protocol uses 0 to mean "none", so a 0 here is a forged or broken
 * datagram, and unknown flag bits would be silently misread. */
static int check_fields(const struct ring_msg *msg)
{
	if (msg->from == 0 && msg->type != RING_MSG_STATUS_REQ)
		return -RING_EFIELD;
	switch (msg->type) {
	case RING_MSG_TOKEN:
		if (msg->u.token.epoch == 0 || msg->u.token.seq == 0)
			return -RING_EFIELD;
		break;
	case RING_MSG_TOKEN_ACK:
		if (msg->u.token_ack.flags & ~RING_ACK_STALE)
			return -RING_EFIELD;
		break;
	case RING_MSG_HEARTBEAT:
		if (msg->u.heartbeat.epoch == 0 || (msg->u.heartbeat.flags & ~RING_HB_PARKED))
			return -RING_EFIELD;
		break;
	case RING_MSG_ELECTION:
		if (msg->u.election.initiator == 0 || msg->u.election.round == 0 ||
		    (msg->u.election.flags & ~RING_ELECTION_NO_QUORUM))
			return -RING_EFIELD;
		break;
	case RING_MSG_ELECTION_ACK:
		if (msg->u.election_ack.initiator == 0 ||
		    msg->u.election_ack.round == 0)
			return -RING_EFIELD;
		break;
	case RING_MSG_JOIN:
		if (!hop_ok(&msg->u.join.refused))
			return -RING_EFIELD;
		break;
	case RING_MSG_LEAVE:
		if (!hop_ok(&msg->u.leave.accepted) || !hop_ok(&msg->u.leave.refused))
			return -RING_EFIELD;
		break;
	case RING_MSG_WANT:
		if (msg->u.want.epoch == 0)
			return -RING_EFIELD;
		break;
	case RING_MSG_STATUS_REQ:
	case RING_MSG_EPOCH_QUERY:
	case RING_MSG_EPOCH_REPLY:
		break;
	case RING_MSG_STATUS_RESP:
		/* 5 states (node.h); HAS_TOKEN and PARKED are defined */
		if (msg->u.status_resp.state >= 5 ||
		    (msg->u.status_resp.flags & ~(RING_STATUS_HAS_TOKEN | RING_STATUS_PARKED)))
			return -RING_EFIELD;
		break;
	}
	return 0;
}

/* Checks only what it needs to write the bytes: tests and tools craft
 * messages with bad fields on purpose, and decode is where trust ends. */
int ring_wire_encode(const struct ring_msg *msg, uint8_t *buf, size_t cap)
{
	size_t size = ring_wire_size(msg->type);
	if (size == 0)
		return -RING_ETYPE;
	if (cap < size)
		return -RING_ENOSPACE;

	uint8_t *p = buf;
	p = put_u8(p, MAGIC_0);
	p = put_u8(p, MAGIC_1);
	p = put_u8(p, RING_WIRE_VERSION);
	p = put_u8(p, (uint8_t)msg->type);
	p = put_u16(p, msg->from);
	p = put_u16(p, msg->to);
	p = put_u64(p, msg->fingerprint);
	put_body(p, msg);
	return (int)size;
}

enum ring_msg_type ring_wire_peek_type(const uint8_t *buf, size_t len)
{
	if (len < RING_WIRE_HEADER || buf[0] != MAGIC_0 || buf[1] != MAGIC_1 ||
	    buf[2] != RING_WIRE_VERSION || body_of(buf[3]) == 0)
		return 0;
	return (enum ring_msg_type)buf[3];
}

/* Only the magic and the version byte: the three bytes every version of
 * the wire keeps at its start (wire.h). */
int ring_wire_peek_version(const uint8_t *buf, size_t len)
{
	if (len < 3 || buf[0] != MAGIC_0 || buf[1] != MAGIC_1)
		return -1;
	return buf[2];
}

/* Every check happens before the bytes it guards are read: the header's
 * length first, then magic, version and type (each needs the one before to
 * mean anything), then the exact length of that type, and the field rules
 * last, on values that are known to be whole. */
int ring_wire_decode(const uint8_t *buf, size_t len, struct ring_msg *msg)
{
	/* Zeroed first so that neither a short body nor padding leaks old
	 * bytes to the caller; on error MSG stays all zeros. */
	memset(msg, 0, sizeof *msg);
	if (len < RING_WIRE_HEADER)
		return -RING_ESHORT;

	const uint8_t *p = buf;
	uint8_t m0, m1, version, code;
	p = get_u8(p, &m0);
	p = get_u8(p, &m1);
	p = get_u8(p, &version);
	p = get_u8(p, &code);
	if (m0 != MAGIC_0 || m1 != MAGIC_1)
		return -RING_EMAGIC;
	if (version != RING_WIRE_VERSION)
		return -RING_EVERSION;
	size_t body = body_of(code);
	if (body == 0)
		return -RING_ETYPE;
	if (len < RING_WIRE_HEADER + body)
		return -RING_ESHORT;
	if (len > RING_WIRE_HEADER + body)
		return -RING_ELONG;

	msg->type = (enum ring_msg_type)code;
	p = get_u16(p, &msg->from);
	p = get_u16(p, &msg->to);
	p = get_u64(p, &msg->fingerprint);
	get_body(p, msg);

	int rc = check_fields(msg);
	if (rc < 0)
		memset(msg, 0, sizeof *msg);
	return rc;
}
