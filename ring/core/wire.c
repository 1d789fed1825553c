/* Datagrams on the wire: the byte layout of every message type
 * (docs/PROTOCOL.md §2), the length and field checks on what arrives, and
 * the message names. Nothing else reads or writes these bytes. */
#include "core/wire.h"

#include <stdbool.h>
#include <string.h>

#include "core/err.h"
#include "core/wire_body.h"

#define MAGIC_0 'R'
#define MAGIC_1 'G'

/* Body widths, field by field in the order of the structs in wire.h. The
 * table below is built from RING_MSG_TYPES, so a new type does not compile
 * until its width is written here. */
/* epoch seq counter quiet_us idle walk_us walk_left alive want knows */
#define BODY_TOKEN (4 + 4 + 4 + 4 + 4 + 4 + 4 + 3 * SET_BYTES)
#define BODY_TOKEN_ACK (4 + 4 + 4 + 4)           /* epoch seq known_epoch flags */
#define BODY_HEARTBEAT (4 + 4 + 4 + 4 + 4 + 2 * SET_BYTES) /* epoch seq counter flags beat alive want */
#define BODY_ELECTION (2 + 2 + 4 + 4 + SET_BYTES + 4) /* initiator hops round max_epoch participants flags */
#define BODY_ELECTION_ACK (2 + 2 + 4)            /* initiator hops round */
#define BODY_JOIN (4 + 8)                        /* epoch refused(epoch seq) */
#define BODY_LEAVE (4 + 8 + 8)                   /* epoch accepted(epoch seq) refused(epoch seq) */
#define BODY_EPOCH_QUERY 8                       /* nonce */
#define BODY_EPOCH_REPLY (8 + 4)                 /* nonce epoch */
#define BODY_WANT (4 + 4 + 2 + 2)                /* epoch seq wanter hops */
#define BODY_HEARTBEAT_ACK (4 + 4 + 4)           /* epoch seq beat */
#define BODY_STATUS_REQ 8                        /* nonce */
#define BODY_STATUS_RESP (8 + 1 + 1 + 2 + 4 + 8 + 4 + 4 + SET_BYTES + 8 * RING_COUNTER_COUNT)
#define BODY_ADVICE_REQ 8                        /* nonce */
#define BODY_ADVICE_RESP (8 * 8) /* nonce holds p50 p99 p999 max pause_max pauses */
#define BODY_HOLD_REQ 8                          /* nonce */
#define BODY_HOLD_RESP (8 + 8 + 4)               /* nonce fence held_ms */

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
/* A hop is none ({0, 0}) or a real one: both parts set. */
static bool hop_ok(const struct ring_hop *h)
{
	return (h->epoch == 0) == (h->seq == 0);
}

/* What every honest answer is, by construction (hold_hist.c): percentiles
 * in order and none above the longest hold, nothing held without a hold,
 * no longest pause without a pause. A reader can then print and compare
 * the figures without checking them again. */
static bool advice_ok(const struct ring_msg_advice_resp *a)
{
	if (a->p50_us > a->p99_us || a->p99_us > a->p999_us || a->p999_us > a->max_us)
		return false;
	if (a->holds == 0 && a->max_us != 0)
		return false;
	return a->pause_max_us == 0 || a->pauses != 0;
}

/* No grant is all zeros; a grant's fence carries its epoch, never 0, in
 * its high half (fence = epoch << 32 | counter). */
static bool hold_ok(const struct ring_msg_hold_resp *h)
{
	return h->fence == 0 ? h->held_ms == 0 : (h->fence >> 32) != 0;
}

/* The "never 0" fields of wire.h and the flags nobody defined yet: the
 * protocol uses 0 to mean "none", so a 0 here is a forged or broken
 * datagram, and unknown flag bits would be silently misread. */
static int check_fields(const struct ring_msg *msg)
{
	if (msg->from == 0 && msg->type != RING_MSG_STATUS_REQ && msg->type != RING_MSG_ADVICE_REQ &&
	    msg->type != RING_MSG_HOLD_REQ)
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
		if (msg->u.heartbeat.epoch == 0 ||
		    (msg->u.heartbeat.flags & ~(RING_HB_PARKED | RING_HB_BUSY | RING_HB_GRANTED)))
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
		if (msg->u.want.epoch == 0 || msg->u.want.wanter == 0)
			return -RING_EFIELD;
		break;
	case RING_MSG_HEARTBEAT_ACK:
		if (msg->u.heartbeat_ack.epoch == 0)
			return -RING_EFIELD;
		break;
	case RING_MSG_ADVICE_RESP:
		return advice_ok(&msg->u.advice_resp) ? 0 : -RING_EFIELD;
	case RING_MSG_HOLD_RESP:
		return hold_ok(&msg->u.hold_resp) ? 0 : -RING_EFIELD;
	case RING_MSG_STATUS_REQ:
	case RING_MSG_ADVICE_REQ:
	case RING_MSG_HOLD_REQ:
	case RING_MSG_EPOCH_QUERY:
	case RING_MSG_EPOCH_REPLY:
		break;
	case RING_MSG_STATUS_RESP:
		/* 5 states (node.h); four flags are defined */
		if (msg->u.status_resp.state >= 5 ||
		    (msg->u.status_resp.flags & ~(RING_STATUS_HAS_TOKEN | RING_STATUS_PARKED |
						  RING_STATUS_UNAUTHENTICATED |
						  RING_STATUS_OTHER_CONFIG)))
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
	wire_put_body(p, msg);
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
	wire_get_body(p, msg);

	int rc = check_fields(msg);
	if (rc < 0)
		memset(msg, 0, sizeof *msg);
	return rc;
}
