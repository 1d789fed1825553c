/* The body of every message type on the wire (docs/PROTOCOL.md §2): its
 * fields in the order of the structs in wire.h, in network byte order.
 * wire.c frames them and checks what arrives. */
#include "core/wire_body.h"

/* The status answer (ringctl ring and watch) carries every counter of
 * counters.h, in its order: the longest body, kept apart from the others. */
static uint8_t *put_status_resp(uint8_t *p, const struct ring_msg_status_resp *r)
{
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

static const uint8_t *get_status_resp(const uint8_t *p, struct ring_msg_status_resp *r)
{
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

/* The token: five counts, its walk, and three sets (wire.h). */
static uint8_t *put_token(uint8_t *p, const struct ring_msg_token *t)
{
	p = put_u32(p, t->epoch);
	p = put_u32(p, t->seq);
	p = put_u32(p, t->counter);
	p = put_u32(p, t->quiet_us);
	p = put_u32(p, t->idle);
	p = put_u32(p, t->walk_us);
	p = put_u32(p, t->walk_left);
	p = put_set(p, &t->alive);
	p = put_set(p, &t->want);
	return put_set(p, &t->knows);
}

static const uint8_t *get_token(const uint8_t *p, struct ring_msg_token *t)
{
	p = get_u32(p, &t->epoch);
	p = get_u32(p, &t->seq);
	p = get_u32(p, &t->counter);
	p = get_u32(p, &t->quiet_us);
	p = get_u32(p, &t->idle);
	p = get_u32(p, &t->walk_us);
	p = get_u32(p, &t->walk_left);
	p = get_set(p, &t->alive);
	p = get_set(p, &t->want);
	return get_set(p, &t->knows);
}

/* The advice answer's eight fields, all 64-bit, in the order of wire.h. */
#define ADVICE_FIELDS(X) X(nonce) X(holds) X(p50_us) X(p99_us) X(p999_us) X(max_us) \
	X(pause_max_us) X(pauses)

static uint8_t *put_advice_resp(uint8_t *p, const struct ring_msg_advice_resp *r)
{
#define WIRE_PUT_ADVICE_(f) p = put_u64(p, r->f);
	ADVICE_FIELDS(WIRE_PUT_ADVICE_)
#undef WIRE_PUT_ADVICE_
	return p;
}

static const uint8_t *get_advice_resp(const uint8_t *p, struct ring_msg_advice_resp *r)
{
#define WIRE_GET_ADVICE_(f) p = get_u64(p, &r->f);
	ADVICE_FIELDS(WIRE_GET_ADVICE_)
#undef WIRE_GET_ADVICE_
	return p;
}

/* The pairs ringctl asks a member over UDP (status, advice, hold): a
 * nonce each way, and the answer's fields. Apart from the members' own
 * messages, which wire_put_body and wire_get_body spell out. */
static uint8_t *put_ctl_body(uint8_t *p, const struct ring_msg *msg)
{
	switch (msg->type) {
	case RING_MSG_STATUS_REQ:
		return put_u64(p, msg->u.status_req.nonce);
	case RING_MSG_STATUS_RESP:
		return put_status_resp(p, &msg->u.status_resp);
	case RING_MSG_ADVICE_REQ:
		return put_u64(p, msg->u.advice_req.nonce);
	case RING_MSG_ADVICE_RESP:
		return put_advice_resp(p, &msg->u.advice_resp);
	case RING_MSG_HOLD_REQ:
		return put_u64(p, msg->u.hold_req.nonce);
	case RING_MSG_HOLD_RESP:
		p = put_u64(p, msg->u.hold_resp.nonce);
		p = put_u64(p, msg->u.hold_resp.fence);
		return put_u32(p, msg->u.hold_resp.held_ms);
	default:
		return p; /* the members' messages: wire_put_body's */
	}
}

static const uint8_t *get_ctl_body(const uint8_t *p, struct ring_msg *msg)
{
	switch (msg->type) {
	case RING_MSG_STATUS_REQ:
		return get_u64(p, &msg->u.status_req.nonce);
	case RING_MSG_STATUS_RESP:
		return get_status_resp(p, &msg->u.status_resp);
	case RING_MSG_ADVICE_REQ:
		return get_u64(p, &msg->u.advice_req.nonce);
	case RING_MSG_ADVICE_RESP:
		return get_advice_resp(p, &msg->u.advice_resp);
	case RING_MSG_HOLD_REQ:
		return get_u64(p, &msg->u.hold_req.nonce);
	case RING_MSG_HOLD_RESP:
		p = get_u64(p, &msg->u.hold_resp.nonce);
		p = get_u64(p, &msg->u.hold_resp.fence);
		return get_u32(p, &msg->u.hold_resp.held_ms);
	default:
		return p; /* the members' messages: wire_get_body's */
	}
}

uint8_t *wire_put_body(uint8_t *p, const struct ring_msg *msg)
{
	switch (msg->type) {
	case RING_MSG_TOKEN:
		return put_token(p, &msg->u.token);
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
		p = put_u32(p, h->beat);
		p = put_set(p, &h->alive);
		return put_set(p, &h->want);
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
		p = put_u32(p, msg->u.want.seq);
		p = put_u16(p, msg->u.want.wanter);
		return put_u16(p, msg->u.want.hops);
	case RING_MSG_HEARTBEAT_ACK:
		p = put_u32(p, msg->u.heartbeat_ack.epoch);
		p = put_u32(p, msg->u.heartbeat_ack.seq);
		return put_u32(p, msg->u.heartbeat_ack.beat);
	case RING_MSG_STATUS_REQ:
	case RING_MSG_STATUS_RESP:
	case RING_MSG_ADVICE_REQ:
	case RING_MSG_ADVICE_RESP:
	case RING_MSG_HOLD_REQ:
	case RING_MSG_HOLD_RESP:
		return put_ctl_body(p, msg);
	}
	return p; /* unreachable: the caller checked the type */
}

const uint8_t *wire_get_body(const uint8_t *p, struct ring_msg *msg)
{
	switch (msg->type) {
	case RING_MSG_TOKEN:
		return get_token(p, &msg->u.token);
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
		p = get_u32(p, &h->beat);
		p = get_set(p, &h->alive);
		return get_set(p, &h->want);
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
		p = get_u32(p, &msg->u.want.seq);
		p = get_u16(p, &msg->u.want.wanter);
		return get_u16(p, &msg->u.want.hops);
	case RING_MSG_HEARTBEAT_ACK:
		p = get_u32(p, &msg->u.heartbeat_ack.epoch);
		p = get_u32(p, &msg->u.heartbeat_ack.seq);
		return get_u32(p, &msg->u.heartbeat_ack.beat);
	case RING_MSG_STATUS_REQ:
	case RING_MSG_STATUS_RESP:
	case RING_MSG_ADVICE_REQ:
	case RING_MSG_ADVICE_RESP:
	case RING_MSG_HOLD_REQ:
	case RING_MSG_HOLD_RESP:
		return get_ctl_body(p, msg);
	}
	return p; /* unreachable: the caller checked the type */
}
