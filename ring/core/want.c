/* Summons (§3.5): a member whose client waits tells the token so, with a
 * WANT to where it last knew the token to be; the holder adds it to the
 * token's want set, and a member the token has left sends the WANT on to
 * where it passed the token. */
#include "core/internal.h"

/* Whether hop A comes after hop B. */
static bool hop_after(struct ring_hop a, struct ring_hop b)
{
	return a.epoch > b.epoch || (a.epoch == b.epoch && a.seq > b.seq);
}

bool want_waiting(const struct ring_node *node)
{
	return node->q_len > 0 && node->phase == PHASE_NONE && !node->leaving && !node->left;
}

/* The token is at IDX as of hop HOP (a heartbeat from it, our own pass
 * to it): what a WANT is sent to. An older hop says nothing new. */
void want_holder_is(struct ring_node *node, size_t idx, struct ring_hop hop)
{
	if (node->holder_known && hop_after(node->holder_hop, hop))
		return;
	node->holder_known = true;
	node->holder_at = idx;
	node->holder_hop = hop;
}

/* A wait's first summons goes to every other member, the last named
 * holder first, each copy with no forward left: whoever holds
 * the token, or is about to, hears of the wait one message time after it
 * began, where a WANT sent to the last named holder chases the token
 * through every member it moved to since that heartbeat (§3.5, "Why the
 * want set, and a broadcast only for a wait's first summons"). */
static void want_to_all(struct ring_node *node, struct ring_update *up, struct ring_msg *m)
{
	m->u.want.hops = (uint16_t)(node->layout.n - 1);
	/* The named holder's copy goes first, on its own: a broadcast reaches
	 * members in layout order, and on 64 members the last is tens of µs
	 * later. Its second copy changes nothing there. */
	act_send(node, up, id_of(node, node->holder_at), m);
	if (node->layout.n > 2)
		act_send(node, up, 0, m);
	m->u.want.hops = 0;
}

/* Tells the token that a client here waits. A summons has no authority,
 * so losing one costs only time: it is sent again after heartbeat_ms, then
 * at doubling intervals up to loss_timeout_ms, until a heartbeat's want set
 * has us or the token comes; and at once to a holder newly heard of. The
 * holder heartbeats every heartbeat_ms, so a resend sooner than that would
 * mostly repeat a WANT that arrived (the simulator's budget found three per
 * request with resends from ack_timeout_ms). */
void want_summon(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (!want_waiting(node) || !node->holder_known || node->holder_at == node->me ||
	    node->want_seen)
		return;
	bool again = node->summon_to == node->holder_at &&
		     node->summon_hop.epoch == node->holder_hop.epoch &&
		     node->summon_hop.seq == node->holder_hop.seq;
	if (again && now < node->summon_next)
		return;
	struct ring_msg m = {.type = RING_MSG_WANT};
	m.u.want.epoch = node->holder_hop.epoch;
	m.u.want.seq = node->holder_hop.seq;
	m.u.want.wanter = node->id;
	if (!node->summoned_all) {
		want_to_all(node, up, &m);
		node->summoned_all = true;
	} else {
		act_send(node, up, id_of(node, node->holder_at), &m);
	}
	node->counters.summons++;
	if (!again) {
		/* One line per holder summoned; the resends are only counted. */
		act_log(node, up, RING_LOG_TOKEN_SUMMON, id_of(node, node->holder_at),
			node->holder_hop.epoch, node->holder_hop.seq);
		node->summon_every = ms(node->layout.heartbeat_ms);
	} else if (node->summon_every < ms(node->layout.loss_timeout_ms)) {
		node->summon_every = min_u64(2 * node->summon_every, ms(node->layout.loss_timeout_ms));
	}
	node->summon_to = node->holder_at;
	node->summon_hop = node->holder_hop;
	node->summon_next = now + node->summon_every;
}

/* WANTs heard while the token was elsewhere join it when it comes. */
void want_merge_heard(struct ring_node *node, uint64_t now)
{
	for (size_t i = 0; i < node->layout.n; i++) {
		bool heard = (now < node->wants_heard_until && ring_set_has(&node->wants_heard, i)) ||
			     (now < node->copies_heard_until && ring_set_has(&node->copies_heard, i));
		if (heard && ring_set_has(&node->token.alive, i))
			ring_set_add(&node->token.want, i);
	}
	ring_set_clear(&node->wants_heard);
	ring_set_clear(&node->copies_heard);
}

/* A copy of a wait's first summons, from its wanter (want_to_all). */
static bool want_is_copy(const struct ring_node *node, const struct ring_msg_want *w,
			 size_t from_idx, size_t wi)
{
	return w->hops + 1u >= node->layout.n && from_idx == wi;
}

/* A copy of a first summons where the token is not. Every member had one,
 * so wherever the token is, its holder has its own; only a pass under way
 * may have left before the wait was heard, and then the copy goes after
 * it, once, to the receiver, which keeps it if the token is not there yet.
 * Anywhere else the copy is dropped: kept, it would be a stale bit at
 * every member once the wait was served, and the token would go out of
 * its way for it (the review found it under light load: two visits for
 * nothing a request). A copy lost to a race (the receiver's came before
 * the token, ours after our pass was acked) costs the wanter its resend. */
static void want_copy_away(struct ring_node *node, struct ring_update *up,
			   const struct ring_msg_want *w, size_t wi, uint64_t now)
{
	if (node->phase == PHASE_NONE) {
		/* The token may be on its way here: a pass arrives within an
		 * ack timeout, or is sent again with the bit (below). */
		ring_set_add(&node->copies_heard, wi);
		node->copies_heard_until = now + ms(node->layout.ack_timeout_ms);
		return;
	}
	if (node->phase != PHASE_PASSING || !ring_set_has(&node->token.alive, wi) ||
	    ring_set_has(&node->token.want, wi) || node->pass_to == wi)
		return;
	ring_set_add(&node->token.want, wi); /* should the pass be made again */
	struct ring_msg m = {.type = RING_MSG_WANT};
	m.u.want = *w;
	m.u.want.epoch = node->token.epoch;
	m.u.want.seq = node->token.seq;
	act_send(node, up, id_of(node, node->pass_to), &m);
}


/* A WANT, from its wanter or forwarded (FROM_IDX sent it). Held here: the
 * wanter joins the want set, and a parked token ends its park. Passing or
 * gone: on after the token, at most n forwards in all; one we cannot send
 * on is remembered in case the token comes here first. */
void want_on_msg(struct ring_node *node, struct ring_update *up, size_t from_idx,
		 const struct ring_msg_want *w, uint64_t now)
{
	int wx = ring_layout_index(&node->layout, w->wanter);
	if (wx < 0 || (size_t)wx == node->me)
		return;
	size_t wi = (size_t)wx;
	if (node->phase != PHASE_HELD && want_is_copy(node, w, from_idx, wi)) {
		want_copy_away(node, up, w, wi, now);
		return;
	}
	if (node->phase == PHASE_HELD) {
		/* From a member the token leaves out, a summons would cost a
		 * visit that cannot serve it: its JOIN comes first (§5.3). */
		if (!ring_set_has(&node->token.alive, wi) || ring_set_has(&node->token.want, wi))
			return;
		ring_set_add(&node->token.want, wi);
		if (node->parked && !node->summoned) {
			node->summoned = true;
			act_log(node, up, RING_LOG_TOKEN_UNPARK, w->wanter, node->token.epoch,
				node->token.seq);
			visit_serve(node, up, now);
		}
		return;
	}
	if (node->phase == PHASE_PASSING && ring_set_has(&node->token.alive, wi))
		ring_set_add(&node->token.want, wi); /* should the pass be made again */
	/* On only towards news: to the member we passed the token to, or to
	 * where we heard it is at a hop after the one the WANT was sent for.
	 * The hop a WANT names then grows with every forward, so a WANT never
	 * goes round in circles between members whose beliefs are old (the
	 * simulator found one going round five of them). */
	struct ring_hop hop = {node->token.epoch, node->token.seq};
	size_t to = node->pass_to;
	if (node->phase == PHASE_NONE) {
		bool news = node->holder_known &&
			    hop_after(node->holder_hop, (struct ring_hop){w->epoch, w->seq});
		to = news ? node->holder_at : node->me;
		hop = node->holder_hop;
	}
	if (to == node->me || to == wi || to == from_idx || w->hops + 1u >= node->layout.n) {
		/* A WANT that overtook the token may be ahead of it here. One
		 * we sent on is not kept: by the time the token comes it was
		 * most likely served, and a stale bit costs a visit for nothing
		 * (a unit test saw the token go out of its way for one). */
		ring_set_add(&node->wants_heard, wi);
		node->wants_heard_until = now + ms(node->layout.loss_timeout_ms);
		return;
	}
	struct ring_msg m = {.type = RING_MSG_WANT};
	m.u.want = *w;
	m.u.want.epoch = hop.epoch;
	m.u.want.seq = hop.seq;
	m.u.want.hops++;
	act_send(node, up, id_of(node, to), &m);
}

/* A heartbeat of the newest hop says where the token is and whether it
 * knows we wait. */
void want_on_heartbeat(struct ring_node *node, struct ring_update *up, size_t from_idx,
		       const struct ring_msg_heartbeat *h, uint64_t now)
{
	struct ring_hop hop = {h->epoch, h->seq};
	want_holder_is(node, from_idx, hop);
	if (node->holder_at == from_idx && node->holder_hop.epoch == hop.epoch &&
	    node->holder_hop.seq == hop.seq)
		node->want_seen = ring_set_has(&h->want, node->me);
	want_summon(node, up, now);
}
