/* What the two textbook algorithms beside the ring share (alg_central.c, alg_ra.c): their
 * messages, events and actions. Like ring/core/node.c they are pure state machines, an event in
 * and actions out, no clock, no I/O; compare.c drives them. Test code, not part of ring. */
#ifndef ALG_H
#define ALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALG_MAX_N 64   /* member sets are 64-bit masks */
#define ALG_MSG_LEN 8  /* type(1) zero(1) from(2) stamp(4), big-endian */

#define ALG_MSG_TYPES(X)               \
	X(REQUEST, 1, "request")       \
	X(GRANT, 2, "grant")           \
	X(RELEASE, 3, "release")       \
	X(REPLY, 4, "reply")

enum alg_msg_type {
#define ALG_MSG_ENUM_(name, code, str) ALG_MSG_##name = code,
	ALG_MSG_TYPES(ALG_MSG_ENUM_)
#undef ALG_MSG_ENUM_
};

/* STAMP is the request's number (centralized) or its Lamport timestamp
 * (Ricart-Agrawala); a reply or grant echoes the stamp of the request it
 * answers, so that a duplicate answering an older request is recognised. */
struct alg_msg {
	enum alg_msg_type type;
	uint16_t from; /* the sender's member index */
	uint32_t stamp;
};

static inline const char *alg_msg_name(enum alg_msg_type type)
{
	switch (type) {
#define ALG_MSG_NAME_(name, code, str) case ALG_MSG_##name: return str;
		ALG_MSG_TYPES(ALG_MSG_NAME_)
#undef ALG_MSG_NAME_
	}
	return "?";
}

static inline void alg_msg_encode(const struct alg_msg *m, uint8_t out[ALG_MSG_LEN])
{
	out[0] = (uint8_t)m->type;
	out[1] = 0;
	out[2] = (uint8_t)(m->from >> 8);
	out[3] = (uint8_t)m->from;
	for (int i = 0; i < 4; i++)
		out[4 + i] = (uint8_t)(m->stamp >> (24 - 8 * i));
}

/* Returns 0, or -1 when BUF is not exactly one well-formed message. */
static inline int alg_msg_decode(const uint8_t *buf, size_t len, struct alg_msg *m)
{
	if (len != ALG_MSG_LEN || buf[1] != 0 || buf[0] < ALG_MSG_REQUEST || buf[0] > ALG_MSG_REPLY)
		return -1;
	m->type = (enum alg_msg_type)buf[0];
	m->from = (uint16_t)(buf[2] << 8 | buf[3]);
	m->stamp = (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 | (uint32_t)buf[6] << 8 | buf[7];
	return 0;
}

enum alg_event_type {
	ALG_EVENT_ACQUIRE, /* the member's client asks for the critical region */
	ALG_EVENT_RELEASE, /* the member's client leaves it */
	ALG_EVENT_MESSAGE, /* a message arrived */
};

struct alg_event {
	enum alg_event_type type;
	const uint8_t *buf; /* MESSAGE */
	size_t len;
	uint16_t from;      /* MESSAGE: index of the member at the source address */
};

enum alg_action_type {
	ALG_ACTION_SEND,  /* send buf to member `to` */
	ALG_ACTION_GRANT, /* the member's client is in the critical region */
};

struct alg_action {
	enum alg_action_type type;
	uint16_t to;
	/* SEND: the member whose entry the message serves, for the count of
	 * messages per entry; the protocol does not depend on it. */
	uint16_t owner;
	uint8_t buf[ALG_MSG_LEN];
};

/* A step sends at most one message to every other member. */
#define ALG_UPDATE_MAX (ALG_MAX_N + 1)

struct alg_update {
	size_t n;
	struct alg_action action[ALG_UPDATE_MAX];
};

/* Appends a SEND of M to TO serving OWNER's entry; drops it (it cannot
 * happen: no step sends more than ALG_UPDATE_MAX - 1) when UP is full. */
static inline void alg_send(struct alg_update *up, uint16_t to, uint16_t owner,
			    const struct alg_msg *m)
{
	if (up->n == ALG_UPDATE_MAX)
		return;
	struct alg_action *a = &up->action[up->n++];
	a->type = ALG_ACTION_SEND;
	a->to = to;
	a->owner = owner;
	alg_msg_encode(m, a->buf);
}

static inline void alg_grant(struct alg_update *up)
{
	if (up->n == ALG_UPDATE_MAX)
		return;
	up->action[up->n++] = (struct alg_action){.type = ALG_ACTION_GRANT};
}

#endif
