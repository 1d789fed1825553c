/* Membership (§5.3-5.4): a restarted member's JOIN, the take-back of a pass
 * a joiner refused, and a member's LEAVE with its deadline. */
#include "core/internal.h"

/* Applies pending joins and leaves to the token we hold; any change gets a
 * new epoch (§5.3, §5.4). Returns false when the token had to be dropped
 * for want of a quorum. */
bool members_apply(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* A change needs a new epoch, which a member that has not proven its
	 * epoch may not mint (§5.3): the requests stay pending for the next
	 * proven holder. Our own leave cannot wait; reepoch drops the token. */
	if (!node->proven && !node->leaving)
		return true;
	struct ring_set alive = node->token.alive;
	struct ring_set joined;
	uint32_t base = node->token.epoch;
	bool changed = false;
	ring_set_clear(&joined);
	for (size_t i = 0; i < node->layout.n; i++) {
		if (i == node->me)
			continue;
		if (node->join_until[i] > now && node->joins_this_step < RING_JOINS_PER_STEP) {
			/* Re-epoch also when the joiner is in the set: it
			 * restarted and refuses the epochs it knew (§5.3). */
			if (!ring_set_has(&alive, i) || node->join_epoch[i] >= node->token.epoch) {
				node->joins_this_step++;
				ring_set_add(&alive, i);
				base = max_u32(base, node->join_epoch[i]);
				changed = true;
				ring_set_add(&joined, i);
			}
			node->join_until[i] = 0;
		}
		if (node->left_until[i] > now && ring_set_has(&alive, i)) {
			ring_set_del(&alive, i);
			changed = true;
		}
		node->left_until[i] = 0;
	}
	if (node->leaving && ring_set_has(&alive, node->me)) {
		ring_set_del(&alive, node->me);
		changed = true;
	}
	if (!changed)
		return true;
	if (ring_set_count(&alive) < node->quorum) {
		node->no_quorum = true;
		act_log(node, up, RING_LOG_NO_QUORUM, ring_set_count(&alive), node->quorum, 0);
		epoch_drop_token(node, up, now);
		return false;
	}
	node->token.alive = alive;
	node->alive_view = alive;
	/* A member out of the token waits in it no more: should it come back,
	 * its JOIN and its next WANT say what it wants then (§3.5). */
	for (size_t i = 0; i < node->layout.n; i++)
		if (!ring_set_has(&alive, i))
			ring_set_del(&node->token.want, i);
	if (!epoch_reepoch(node, up, base, now))
		return false;
	for (size_t i = 0; i < node->layout.n; i++)
		if (ring_set_has(&joined, i))
			act_log(node, up, RING_LOG_MEMBER_REJOIN, id_of(node, i), node->token.epoch, 0);
	/* A park re-epoched where it rests, or a holder left alone, is news
	 * to everyone: say so at once (the new epoch, the alive set), not at
	 * the next heartbeat, after the grants it allows (a member alone
	 * grants each request as a visit, §3.3). */
	/* And in the log: the park goes on under the new epoch, which is how
	 * ringctl trace knows the parked token lives on when nothing else is
	 * logged (a clean-clone run read a park re-epoched by a rejoin as a
	 * token lost, and its holder's kill -9 as no crash). */
	if (node->parked)
		act_log(node, up, RING_LOG_TOKEN_PARK, node->token.epoch, node->token.seq,
			node->token.idle);
	if (node->parked || next_in(node, &alive, node->me) == node->me)
		act_send_heartbeat(node, up, now);
	return true;
}

void members_finish_leave(struct ring_node *node, struct ring_update *up)
{
	if (node->left)
		return;
	node->left = true;
	act_log(node, up, RING_LOG_LEAVE_DONE, node->epoch, 0, 0);
	act_push(node, up, RING_ACTION_LEFT);
}

void members_on_join(struct ring_node *node, struct ring_update *up, size_t from_idx,
		     const struct ring_msg_join *j, uint64_t now)
{
	if (node->leaving)
		return;
	node->left_until[from_idx] = 0;
	node->join_until[from_idx] = now + 2 * ms(node->layout.loss_timeout_ms);
	node->join_epoch[from_idx] = j->epoch;
	if (node->phase == PHASE_HELD) {
		if (members_apply(node, up, now))
			visit_serve(node, up, now);
	} else if (node->phase == PHASE_PASSING && node->pass_to == from_idx &&
		   j->refused.epoch == node->token.epoch && j->refused.seq == node->token.seq) {
		/* Our successor restarted and refused this very pass. Only an
		 * exact refusal will do: on any other JOIN (a duplicate, an old
		 * one) the successor may hold the token by now, and passing it
		 * again would make a copy (§5.3). Even so its past life may have
		 * taken the pass, its ack still on the way: wait one more ack
		 * timeout for that ack before taking the token back (§3.2). */
		if (node->pass_refused == REFUSED_NONE) {
			node->pass_refused = REFUSED_JOIN;
			node->refused_epoch = j->epoch;
			node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
		}
	}
}

/* The successor refused our pass and no ack of it came: hand it over again
 * under a new epoch, which readmits the refuser (§5.3). */
void members_take_back(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	size_t to = node->pass_to;
	node->phase = PHASE_HELD;
	node->visit_granted = true;
	visit_uncount_pass(node);
	if (!epoch_reepoch(node, up, max_u32(node->refused_epoch, node->token.epoch), now))
		return; /* dropped: we may not mint yet */
	node->join_until[to] = 0; /* readmitted by this epoch */
	act_log(node, up, RING_LOG_MEMBER_REJOIN, id_of(node, to), node->token.epoch, 0);
	/* Its past life may have passed the token on (§3.2): as after a skip,
	 * the new epoch is heard at once. */
	node->hb_deadline = now;
	visit_pass(node, up, now);
}

/* Whether hop A is B or one after it. */
static bool hop_covers(const struct ring_hop *a, uint32_t epoch, uint32_t seq)
{
	return a->epoch > epoch || (a->epoch == epoch && a->seq >= seq);
}

void members_on_leave(struct ring_node *node, struct ring_update *up, size_t from_idx,
		      const struct ring_msg_leave *l, uint64_t now)
{
	act_log(node, up, RING_LOG_MEMBER_LEAVE, id_of(node, from_idx), node->epoch, 0);
	if (node->holder_known && node->holder_at == from_idx)
		node->holder_known = false; /* a leaver hands the token on: no summons to it */
	node->join_until[from_idx] = 0;
	node->left_until[from_idx] = now + 2 * ms(node->layout.loss_timeout_ms);
	ring_set_del(&node->alive_view, from_idx);
	if (node->phase == PHASE_PASSING && node->pass_to == from_idx) {
		/* §5.4: skip at once only when the leaver refused this very
		 * pass; if it accepted it, the token is its to pass on, as if
		 * acked. Otherwise the LEAVE may have crossed our pass, or be
		 * an old one: resend now, and its answer (ack or refusal), or
		 * the retry budget, decides. */
		if (l->refused.epoch == node->token.epoch && l->refused.seq == node->token.seq) {
			/* No retry budget to wait for; one ack timeout only, in
			 * case an earlier life of the leaver took the pass (§3.2). */
			if (node->pass_refused == REFUSED_NONE) {
				node->pass_refused = REFUSED_LEAVE;
				node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
			}
		} else if (hop_covers(&l->accepted, node->token.epoch, node->token.seq)) {
			node->phase = PHASE_NONE;
			node->counters.tokens_passed++;
			node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
		} else {
			/* Resend now, as a retransmission, but without spending the
			 * retry budget: with none left, the deadline would skip the
			 * leaver at once, and it may have taken the pass. */
			node->counters.retransmits++;
			visit_send_token(node, up, now);
			act_log(node, up, RING_LOG_RETRANSMIT, id_of(node, node->pass_to),
				node->token.epoch, node->token.seq);
			if (node->ack_deadline < now + ms(node->layout.ack_timeout_ms))
				node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
		}
	} else if (node->phase == PHASE_HELD) {
		if (members_apply(node, up, now))
			visit_serve(node, up, now);
	}
}

void members_on_leave_request(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->leaving)
		return;
	node->leaving = true;
	clients_revoke(node, up);
	node->q_len = 0; /* the shell closes the clients of a leaving member */
	/* From here on we accept no new hop (§5.4): the LEAVE names the last
	 * one we did, so a predecessor can tell whether its pass is here. */
	node->leave_accepted = node->accepted;
	/* Hand the token on and tell everyone; if that takes longer than a
	 * full retry budget for every member, leave anyway. */
	const struct ring_layout *l = &node->layout;
	node->leave_started = now;
	node->leave_deadline = now + (uint64_t)l->n * (l->retries + 1) * ms(l->ack_timeout_ms) +
			       ms(1000);
	struct ring_msg m = {.type = RING_MSG_LEAVE};
	m.u.leave.epoch = node->epoch;
	m.u.leave.accepted = node->leave_accepted;
	act_send(node, up, 0, &m);
	if (node->phase == PHASE_HELD)
		visit_serve(node, up, now);
}

void members_leave_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* Nobody took the token in time (§5.4): go, as a crash would. */
	act_log(node, up, RING_LOG_LEAVE_TIMEOUT, (now - node->leave_started) / 1000, 0, 0);
	epoch_drop_token(node, up, now);
}
