/* The centralized algorithm as a pure state machine (alg_central.h): a member's side and the
 * coordinator's FIFO queue. Requests are numbered per member, so that a duplicated or
 * reordered message is recognised and ignored. */
#include "compare/alg_central.h"

#include <stdlib.h>

struct alg_central {
	size_t n, me, coord;
	/* as a member */
	bool wanting, in_cs;
	uint32_t seq; /* number of this member's current (or last) request */
	/* as the coordinator */
	bool busy;              /* someone holds the region: */
	uint16_t holder;
	uint32_t holder_seq;
	uint32_t last_seq[ALG_MAX_N]; /* newest request seen from each member */
	struct {
		uint16_t who;
		uint32_t seq;
	} queue[ALG_MAX_N];     /* one request per member at most */
	size_t q_head, q_len;
};

struct alg_central *alg_central_new(size_t n, size_t me, size_t coord)
{
	if (n == 0 || n > ALG_MAX_N || me >= n || coord >= n)
		return NULL;
	struct alg_central *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->n = n;
	c->me = me;
	c->coord = coord;
	return c;
}

void alg_central_free(struct alg_central *c)
{
	free(c);
}

/* The coordinator hands the region to WHO: a GRANT message, or at once when
 * it is the coordinator's own request. */
static void grant_to(struct alg_central *c, struct alg_update *up, uint16_t who, uint32_t seq)
{
	c->busy = true;
	c->holder = who;
	c->holder_seq = seq;
	if (who == c->me) {
		if (c->wanting && !c->in_cs && c->seq == seq) {
			c->in_cs = true;
			alg_grant(up);
		}
		return;
	}
	struct alg_msg m = {ALG_MSG_GRANT, (uint16_t)c->me, seq};
	alg_send(up, who, who, &m);
}

static void coord_request(struct alg_central *c, struct alg_update *up, uint16_t who,
			  uint32_t seq)
{
	if (seq <= c->last_seq[who])
		return; /* a duplicate of a request already queued or served */
	c->last_seq[who] = seq;
	if (!c->busy) {
		grant_to(c, up, who, seq);
		return;
	}
	if (c->q_len == ALG_MAX_N)
		return; /* cannot happen: each member has one request at a time */
	size_t tail = (c->q_head + c->q_len) % ALG_MAX_N;
	c->queue[tail].who = who;
	c->queue[tail].seq = seq;
	c->q_len++;
}

static void coord_release(struct alg_central *c, struct alg_update *up, uint16_t who,
			  uint32_t seq)
{
	if (!c->busy || c->holder != who || c->holder_seq != seq)
		return; /* a duplicate, or a release of nothing */
	c->busy = false;
	if (c->q_len == 0)
		return;
	uint16_t next = c->queue[c->q_head].who;
	uint32_t next_seq = c->queue[c->q_head].seq;
	c->q_head = (c->q_head + 1) % ALG_MAX_N;
	c->q_len--;
	grant_to(c, up, next, next_seq);
}

static void on_acquire(struct alg_central *c, struct alg_update *up)
{
	if (c->wanting)
		return;
	c->wanting = true;
	c->seq++;
	if (c->me == c->coord) {
		coord_request(c, up, (uint16_t)c->me, c->seq);
		return;
	}
	struct alg_msg m = {ALG_MSG_REQUEST, (uint16_t)c->me, c->seq};
	alg_send(up, (uint16_t)c->coord, (uint16_t)c->me, &m);
}

static void on_release(struct alg_central *c, struct alg_update *up)
{
	if (!c->in_cs)
		return;
	c->in_cs = false;
	c->wanting = false;
	if (c->me == c->coord) {
		coord_release(c, up, (uint16_t)c->me, c->seq);
		return;
	}
	struct alg_msg m = {ALG_MSG_RELEASE, (uint16_t)c->me, c->seq};
	alg_send(up, (uint16_t)c->coord, (uint16_t)c->me, &m);
}

static void on_message(struct alg_central *c, struct alg_update *up, const struct alg_event *ev)
{
	struct alg_msg m;
	if (alg_msg_decode(ev->buf, ev->len, &m) < 0 || m.from != ev->from || m.from >= c->n ||
	    m.from == c->me)
		return;
	switch (m.type) {
	case ALG_MSG_REQUEST:
		if (c->me == c->coord)
			coord_request(c, up, m.from, m.stamp);
		break;
	case ALG_MSG_RELEASE:
		if (c->me == c->coord)
			coord_release(c, up, m.from, m.stamp);
		break;
	case ALG_MSG_GRANT:
		/* Only the coordinator grants, and only the current request. */
		if (m.from == c->coord && c->wanting && !c->in_cs && m.stamp == c->seq) {
			c->in_cs = true;
			alg_grant(up);
		}
		break;
	case ALG_MSG_REPLY:
		break;
	}
}

void alg_central_step(struct alg_central *c, const struct alg_event *ev, struct alg_update *up)
{
	up->n = 0;
	switch (ev->type) {
	case ALG_EVENT_ACQUIRE:
		on_acquire(c, up);
		break;
	case ALG_EVENT_RELEASE:
		on_release(c, up);
		break;
	case ALG_EVENT_MESSAGE:
		on_message(c, up, ev);
		break;
	}
}
