/* Ricart-Agrawala as a pure state machine (alg_ra.h). Replies echo the stamp of the request
 * they answer and are kept as a set: a duplicate counts once, and one answering an older
 * request (a duplicated request answered late) is ignored. */
#include "compare/alg_ra.h"

#include <stdlib.h>

struct alg_ra {
	size_t n, me;
	uint32_t clock;     /* Lamport clock: above every stamp seen */
	uint32_t my_stamp;  /* of the current request */
	bool requesting, in_cs;
	uint64_t replied;   /* members that answered the current request */
	uint64_t deferred;  /* members whose request we answer when we leave */
	uint32_t deferred_stamp[ALG_MAX_N];
};

struct alg_ra *alg_ra_new(size_t n, size_t me)
{
	if (n == 0 || n > ALG_MAX_N || me >= n)
		return NULL;
	struct alg_ra *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->n = n;
	r->me = me;
	return r;
}

void alg_ra_free(struct alg_ra *r)
{
	free(r);
}

static uint64_t bit(size_t i)
{
	return (uint64_t)1 << i;
}

static uint64_t others(const struct alg_ra *r)
{
	uint64_t all = r->n == 64 ? UINT64_MAX : bit(r->n) - 1;
	return all & ~bit(r->me);
}

static void enter_if_ready(struct alg_ra *r, struct alg_update *up)
{
	if (r->requesting && !r->in_cs && (r->replied & others(r)) == others(r)) {
		r->in_cs = true;
		alg_grant(up);
	}
}

/* (stamp a, member i) comes before (stamp b, member j): total order. */
static bool before(uint32_t a, size_t i, uint32_t b, size_t j)
{
	return a < b || (a == b && i < j);
}

static void reply(struct alg_ra *r, struct alg_update *up, uint16_t to, uint32_t stamp)
{
	struct alg_msg m = {ALG_MSG_REPLY, (uint16_t)r->me, stamp};
	alg_send(up, to, to, &m);
}

static void on_acquire(struct alg_ra *r, struct alg_update *up)
{
	if (r->requesting)
		return;
	r->requesting = true;
	r->my_stamp = ++r->clock;
	r->replied = 0;
	struct alg_msg m = {ALG_MSG_REQUEST, (uint16_t)r->me, r->my_stamp};
	for (size_t j = 0; j < r->n; j++)
		if (j != r->me)
			alg_send(up, (uint16_t)j, (uint16_t)r->me, &m);
	enter_if_ready(r, up); /* alone: at once */
}

static void on_release(struct alg_ra *r, struct alg_update *up)
{
	if (!r->in_cs)
		return;
	r->in_cs = false;
	r->requesting = false;
	for (size_t j = 0; j < r->n; j++)
		if (r->deferred & bit(j))
			reply(r, up, (uint16_t)j, r->deferred_stamp[j]);
	r->deferred = 0;
}

static void on_request(struct alg_ra *r, struct alg_update *up, uint16_t from, uint32_t stamp)
{
	if (stamp > r->clock)
		r->clock = stamp;
	bool defer = r->in_cs || (r->requesting && before(r->my_stamp, r->me, stamp, from));
	if (!defer) {
		reply(r, up, from, stamp);
		return;
	}
	/* One request per member at a time: a second one deferred is the
	 * newer (the older one's duplicate would be answered and ignored). */
	if (!(r->deferred & bit(from)) || stamp > r->deferred_stamp[from])
		r->deferred_stamp[from] = stamp;
	r->deferred |= bit(from);
}

static void on_message(struct alg_ra *r, struct alg_update *up, const struct alg_event *ev)
{
	struct alg_msg m;
	if (alg_msg_decode(ev->buf, ev->len, &m) < 0 || m.from != ev->from || m.from >= r->n ||
	    m.from == r->me)
		return;
	switch (m.type) {
	case ALG_MSG_REQUEST:
		on_request(r, up, m.from, m.stamp);
		break;
	case ALG_MSG_REPLY:
		if (r->requesting && m.stamp == r->my_stamp) {
			r->replied |= bit(m.from);
			enter_if_ready(r, up);
		}
		break;
	case ALG_MSG_GRANT:
	case ALG_MSG_RELEASE:
		break;
	}
}

void alg_ra_step(struct alg_ra *r, const struct alg_event *ev, struct alg_update *up)
{
	up->n = 0;
	switch (ev->type) {
	case ALG_EVENT_ACQUIRE:
		on_acquire(r, up);
		break;
	case ALG_EVENT_RELEASE:
		on_release(r, up);
		break;
	case ALG_EVENT_MESSAGE:
		on_message(r, up, ev);
		break;
	}
}
