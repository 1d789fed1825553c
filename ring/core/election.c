/* Elections (§6): detecting a lost token, Chang-Roberts over the live
 * members, and regenerating the token under a newer epoch. */
#include "core/internal.h"

static void election_arrive(struct ring_node *node, struct ring_update *up,
			    const struct ring_msg_election *e, uint64_t now);

/* How long an election may take before its initiator tries again: the loss
 * timeout plus a full ring of hops, each with its retries (§6). */
static uint64_t election_timeout(const struct ring_node *node)
{
	const struct ring_layout *l = &node->layout;
	return ms(l->loss_timeout_ms) +
	       (uint64_t)l->n * (l->retries + 1) * ms(l->ack_timeout_ms);
}

/* A vote of ours goes out in INITIATOR's election, which knew epochs up to
 * MAX_EPOCH here. What contact_answer() stays silent on until it cannot
 * count: every token but one the highest initiator we voted for minted
 * above every epoch our votes' elections knew. That election is the one
 * that completes (we carry no lower one after it, and each lower
 * initiator it passes gives up its own), so such a token is its result. */
static void election_note_vote(struct ring_node *node, uint16_t initiator, uint32_t max_epoch,
			       uint64_t now)
{
	if (now < node->vote_out_until) {
		node->vote_epoch = max_u32(node->vote_epoch, max_epoch);
		if (initiator > node->vote_initiator)
			node->vote_initiator = initiator;
	} else {
		node->vote_epoch = max_epoch;
		node->vote_initiator = initiator;
	}
	node->vote_out_until = now + election_timeout(node);
}

/* A live token was heard recently enough that an election must be a
 * mistake (§6.2). */
bool election_recently_heard(const struct ring_node *node, uint64_t now)
{
	return node->heard_ever &&
	       now - node->last_heard < ms(node->layout.loss_timeout_ms) / 2;
}

static void election_send(struct ring_node *node, struct ring_update *up)
{
	struct ring_msg m = {.type = RING_MSG_ELECTION};
	m.u.election = node->fwd.msg;
	act_send(node, up, id_of(node, node->fwd.to), &m);
}

/* Hands an election to the next member in configured order, whatever the
 * token thinks of it: excluded members take part too. */
static void election_forward(struct ring_node *node, struct ring_update *up,
			     const struct ring_msg_election *e, size_t to, uint64_t now)
{
	if (to == node->me) { /* around the ring with nobody else answering */
		node->fwd.active = false;
		if (e->initiator == node->id)
			election_arrive(node, up, e, now);
		return;
	}
	node->fwd.active = true;
	node->fwd.msg = *e;
	node->fwd.msg.hops = (uint16_t)(e->hops + 1);
	node->fwd.to = to;
	node->fwd.retries_left = node->layout.retries;
	node->fwd.deadline = now + ms(node->layout.ack_timeout_ms);
	election_send(node, up);
}

static void start_election(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	node->elect_round++;
	if (node->elect_round == 0)
		node->elect_round = 1;
	node->elect_active = true;
	node->elect_started = now;
	node->counters.elections++;
	node->loss_deadline = now + election_timeout(node);
	act_log(node, up, RING_LOG_ELECTION_START, node->elect_round, node->epoch, 0);
	struct ring_msg_election e = {
		.initiator = node->id,
		.round = node->elect_round,
		.max_epoch = node->epoch,
		.flags = node->no_quorum ? RING_ELECTION_NO_QUORUM : 0,
	};
	ring_set_add(&e.participants, node->me);
	election_forward(node, up, &e, (node->me + 1) % node->layout.n, now);
}

static void regenerate(struct ring_node *node, struct ring_update *up,
		       const struct ring_msg_election *e, uint64_t now)
{
	uint32_t epoch = epoch_mint(node, up, e->max_epoch);
	if (epoch == 0)
		return;
	size_t have = ring_set_count(&e->participants);
	act_log(node, up, RING_LOG_ELECTION_WON, epoch, e->round, have);
	if (!act_persist(node, up, epoch))
		return;
	memset(&node->token, 0, sizeof node->token);
	node->token.epoch = epoch;
	node->token.alive = e->participants;
	ring_set_add(&node->token.knows, node->me);
	node->seen_epoch = epoch;
	node->seen_seq = 0;
	node->alive_view = e->participants;
	node->counters.regenerations++;
	act_log(node, up, RING_LOG_TOKEN_REGEN, epoch, have, 0);
	visit_begin(node, now);
	/* The election went round every member it could reach: a walk. */
	node->walk_base = now;
	node->arrived_plain = true;
	node->want_seen = false;
	want_holder_is(node, node->me, (struct ring_hop){epoch, 0});
	want_merge_heard(node, now);
	node->no_quorum = false;
	node->participated_until = 0;
	node->heard_ever = true;
	node->last_heard = now;
	act_send_heartbeat(node, up, now); /* everyone learns the new epoch at once */
	visit_serve(node, up, now);
}

/* Our own election came back around the ring. */
static void election_complete(struct ring_node *node, struct ring_update *up,
			      const struct ring_msg_election *e, uint64_t now)
{
	node->elect_active = false;
	/* A live token heard since the start has ended the election already
	 * (on_token, on_heartbeat clear elect_active: §6.2 rule 3). */
	if (now - node->elect_started > election_timeout(node))
		return; /* too old: what it learned of epochs may be out of date (§6.2) */
	size_t have = ring_set_count(&e->participants);
	if (have < node->quorum) {
		node->no_quorum = true;
		act_log(node, up, RING_LOG_NO_QUORUM, have, node->quorum, 0);
		node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
		return;
	}
	regenerate(node, up, e, now);
}

static void election_arrive(struct ring_node *node, struct ring_update *up,
			    const struct ring_msg_election *e, uint64_t now)
{
	int ii = ring_layout_index(&node->layout, e->initiator);
	if (ii < 0)
		return;
	if ((size_t)ii == node->me) {
		if (node->elect_active && e->round == node->elect_round)
			election_complete(node, up, e, now);
		return;
	}
	/* Retransmissions of an election we already handled. Rounds restart
	 * after a member restarts, so a round is remembered for a while only. */
	if (node->handled_round[ii] == e->round && node->handled_until[ii] > now)
		return;
	node->handled_round[ii] = e->round;
	node->handled_until[ii] = now + election_timeout(node);
	if (node->leaving)
		return;
	if (node->phase != PHASE_NONE) {
		/* A live token ends the election (§6.2). Its heartbeat tells the
		 * initiator; an epoch above what the election saw lets members
		 * that learned a dead epoch accept this token. */
		if (node->phase == PHASE_HELD && e->max_epoch > node->token.epoch &&
		    !epoch_reepoch(node, up, e->max_epoch, now))
			return;
		act_send_heartbeat(node, up, now);
		return;
	}
	/* The initiator alone lost touch, or just started. It is not told:
	 * only the holder's own heartbeats may count as hearing the token,
	 * or members answering each other would keep a dead token "alive".
	 * The holder's next heartbeat reaches it within heartbeat_ms. */
	if (election_recently_heard(node, now))
		return;
	if (node->elect_active) {
		if (node->id > e->initiator)
			return; /* ours goes on instead (Chang-Roberts) */
		node->elect_active = false;
	}
	/* Having carried a higher initiator's election, carry no lower one:
	 * only one may complete the round (Chang-Roberts). */
	if (now < node->participated_until && e->initiator < node->best_initiator)
		return;
	if (now >= node->participated_until || e->initiator > node->best_initiator)
		node->best_initiator = e->initiator;
	/* The initiator's last round lacked a quorum: so do we, on this side. */
	if (e->flags & RING_ELECTION_NO_QUORUM)
		node->no_quorum = true;
	struct ring_msg_election fwd = *e;
	/* A member that has not proven its epoch carries the election but is
	 * no participant: the token it would be handed it could not take. */
	if (node->proven)
		ring_set_add(&fwd.participants, node->me);
	fwd.max_epoch = max_u32(fwd.max_epoch, node->epoch);
	node->participated_until = now + election_timeout(node);
	election_note_vote(node, e->initiator, fwd.max_epoch, now);
	if (node->loss_deadline < node->participated_until)
		node->loss_deadline = node->participated_until;
	election_forward(node, up, &fwd, (node->me + 1) % node->layout.n, now);
}

/* Every election hop is acked, even one we go on to swallow (§6.1). Even
 * one whose max_epoch is beyond reach below ours: skipping us there would
 * let the others regenerate under what we know, and the low epochs may be
 * a rolled-back disk's (test/core/test_restart.c, review_epochs3). We carry it, raised to
 * our epoch, and the election dies where nobody can take that: a ring
 * wedged until the operator mends the disk, not fences going back. */
void election_on_msg(struct ring_node *node, struct ring_update *up, uint16_t from,
		     const struct ring_msg_election *e, uint64_t now)
{
	struct ring_msg ack = {.type = RING_MSG_ELECTION_ACK};
	ack.u.election_ack.initiator = e->initiator;
	ack.u.election_ack.round = e->round;
	ack.u.election_ack.hops = e->hops;
	act_send(node, up, from, &ack);
	election_arrive(node, up, e, now);
}

/* The ack of the election hop we are forwarding, and of no other. */
void election_on_ack(struct ring_node *node, size_t from_idx,
		     const struct ring_msg_election_ack *a)
{
	if (node->fwd.active && from_idx == node->fwd.to &&
	    a->initiator == node->fwd.msg.initiator && a->round == node->fwd.msg.round &&
	    a->hops == node->fwd.msg.hops)
		node->fwd.active = false;
}

void election_ack_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->fwd.retries_left > 0) {
		node->fwd.retries_left--;
		node->fwd.deadline = now + ms(node->layout.ack_timeout_ms);
		election_send(node, up);
	} else {
		/* Skip the silent member; the election goes on without it. */
		struct ring_msg_election e = node->fwd.msg;
		e.hops = (uint16_t)(e.hops - 1);
		election_forward(node, up, &e, (node->fwd.to + 1) % node->layout.n, now);
	}
}

void election_no_quorum_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* Time to elect, but too few members answered to prove our epoch:
	 * say so, as a failed election would (§5.3). */
	node->no_quorum = true;
	act_log(node, up, RING_LOG_NO_QUORUM, ring_set_count(&node->replied) + 1,
		restart_query_needed(node) + 1, 0);
	node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
}

void election_loss_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (!node->elect_active && now >= node->participated_until)
		act_log(node, up, RING_LOG_LOSS_SUSPECT,
			node->heard_ever ? (now - node->last_heard) / 1000 : 0, node->epoch, 0);
	start_election(node, up, now);
}
