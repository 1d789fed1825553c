/* The token's visit (§3.1-3.3): accepting a hop, serving the visit, passing
 * the token on with its acks and retries, heartbeats, skipping a dead
 * successor. */
#include "core/internal.h"

void visit_send_token(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	struct ring_msg m = {.type = RING_MSG_TOKEN};
	m.u.token = node->token;
	/* Transit counts too: half the last hop's round trip stands in for it,
	 * or a fast ring whose hops are mostly in flight would never reach
	 * its heartbeat (§5.1). */
	uint64_t quiet = now - node->hb_base + node->hop_rtt_us / 2;
	m.u.token.quiet_us = quiet > UINT32_MAX ? UINT32_MAX : (uint32_t)quiet;
	/* The pass that ends a walk ends it at its receiver (§3.5). */
	m.u.token.walk_us = node->walk_ending ? 0 : jump_walk_age(node, now);
	act_send(node, up, id_of(node, node->pass_to), &m);
}

/* A pass is being made again (a skip, a take-back): the visit was counted
 * in idle by the first, so undo that, and pass_token counts it once. */
void visit_uncount_pass(struct ring_node *node)
{
	if (node->token.idle == 0)
		node->visit_wanted = true;
	else
		node->token.idle--;
}

/* Decides what the held token does next: grant, rest, park, or move on
 * (§3.3, §3.4). */
void visit_serve(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (now >= node->quarantine_until)
		node->quarantine_until = 0;
	if (node->phase != PHASE_HELD || node->granted)
		return;
	bool alone = next_in(node, &node->token.alive, node->me) == node->me;
	if (node->leaving) {
		visit_pass(node, up, now);
		return;
	}
	if (alone) { /* a park is for a ring: alone, every grant is a visit anyway */
		node->parked = false;
		node->summoned = false; /* by a member since gone: nobody waits (§3.3's BUSY) */
		node->lap_epoch = 0;
	}
	if (!node->parked && !alone && park_allowed(node, now))
		park_token(node, up);
	if (node->visit_granted) {
		if (!alone && !(node->parked && !node->summoned && !park_lap_due(node, now))) {
			visit_pass(node, up, now);
			return;
		}
		/* Alone in the ring, or parked with nobody else asking: each
		 * grant is a visit of its own. */
		node->visit_granted = false;
	}
	/* This epoch's fences are used up: a new epoch, which like any other
	 * must be confirmed before it is granted under (§4.1, §4.4). */
	if (node->q_len > 0 && node->token.counter == UINT32_MAX &&
	    !epoch_reepoch(node, up, node->token.epoch, now))
		return;
	if (node->q_len > 0 && node->quarantine_until == 0 && epoch_confirmed(node) &&
	    park_fresh(node, now)) {
		clients_grant(node, up, now);
		return;
	}
	if (alone) {
		/* Keep it; an ACQUIRE or a JOIN wakes us (quorum 1: confirmed).
		 * A rest begun before the others left has nothing to end: its
		 * deadline would fire at once, for ever. */
		node->resting = false;
		return;
	}
	if (node->parked) {
		if (node->q_len == 0 && !node->summoned && !park_lap_due(node, now))
			return;
		/* Summoned: on to the summoner (§3.5). Wanted here but stale, or
		 * a lap is due: a walk, once round in ring order and back. */
		if (!node->summoned && node->token.walk_left == 0)
			jump_walk_start(node);
		node->lap_epoch = node->q_len == 0 && !node->summoned ? node->token.epoch : 0;
		node->lap_counter = node->token.counter;
		node->visit_wanted = true;
		visit_pass(node, up, now);
		return;
	}
	if (node->q_len > 0 || node->layout.idle_pass_ms == 0) {
		/* Wanted here but not grantable yet (quarantine, an unconfirmed
		 * epoch, a jump past its walk), or wanted elsewhere: move on. */
		visit_pass(node, up, now);
		return;
	}
	if (!node->resting) {
		node->resting = true;
		node->rest_deadline = now + ms(node->layout.idle_pass_ms);
	} else if (now >= node->rest_deadline) {
		visit_pass(node, up, now);
	}
}

void visit_pass(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* A grant ends before the token leaves: a client in the region of a
	 * token elsewhere is two holders (I2). */
	RING_ASSERT(!node->granted);
	/* The park ends here, before a re-epoch below could announce it. */
	bool from_park = node->parked;
	bool summoned = node->summoned; /* served by this pass, or nobody is left to */
	node->parked = false;
	node->summoned = false;
	if (!members_apply(node, up, now))
		return;
	/* Hop numbers run out: a new epoch. */
	if (node->token.seq == UINT32_MAX && !epoch_reepoch(node, up, node->token.epoch, now))
		return;
	/* Our clients still waiting wait in the want set like anyone's: the
	 * token comes back once every member waiting after us was served. So
	 * does a member whose client was served in this visit: it most likely
	 * asks again before the token is back (a client in a loop, a busy
	 * ring), and then need not summon it with a WANT, which the token
	 * would have left behind by then (make compare counted 1 to 3 WANTs
	 * and forwards an entry under heavy load). If it does not ask, the
	 * token visits it once for nothing, two datagrams. */
	ring_set_del(&node->token.want, node->me);
	bool again = node->q_len > 0 || node->visit_served;
	if (again && !node->leaving) {
		ring_set_add(&node->token.want, node->me);
		node->want_seen = true;
	}
	size_t next = jump_next(node, now, from_park);
	if (next == node->me) {
		if (node->leaving) { /* nobody to hand it to */
			epoch_drop_token(node, up, now);
			return;
		}
		node->visit_granted = false;
		return;
	}
	node->resting = false;
	node->visit_granted = false;
	/* Hops in a row that found nobody waiting, for the log (§3.4): the
	 * want set decides where the token goes and whether it parks. */
	if (node->visit_wanted || node->q_len > 0 || summoned)
		node->token.idle = 0;
	else if (node->token.idle < UINT32_MAX)
		node->token.idle++;
	node->visit_wanted = false;
	/* A heartbeat that is due goes first, so the token leaves with its
	 * quiet time reset; otherwise every later holder would find it due. */
	if (now >= node->hb_deadline)
		act_send_heartbeat(node, up, now);
	/* seen_* stays the last hop we accepted (§3.2): a hop we pass
	 * reaches only its receiver, so recording it would refuse nothing
	 * more (make mutants found the rule redundant; PROTOCOL.md §3.2). */
	node->token.seq++;
	node->phase = PHASE_PASSING;
	node->pass_refused = REFUSED_NONE;
	node->pass_to = next;
	ring_set_del(&node->token.want, next); /* its visit */
	want_holder_is(node, next, (struct ring_hop){node->token.epoch, node->token.seq});
	node->retries_left = node->layout.retries;
	node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
	node->pass_sent = now;
	visit_send_token(node, up, now);
	act_log(node, up, RING_LOG_TOKEN_PASS, id_of(node, next), node->token.epoch,
		node->token.seq);
}

/* The successor did not answer (§3.2): it is dead to this token. */
static void skip_successor(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	size_t dead = node->pass_to;
	node->counters.skips++;
	node->walk_ending = false; /* the walk did not come round */
	ring_set_del(&node->token.alive, dead);
	ring_set_del(&node->token.want, dead);
	node->phase = PHASE_HELD;
	if (ring_set_count(&node->token.alive) < node->quorum) {
		act_log(node, up, RING_LOG_SUCCESSOR_SKIP, id_of(node, dead), node->token.epoch, 0);
		node->no_quorum = true;
		act_log(node, up, RING_LOG_NO_QUORUM, ring_set_count(&node->token.alive),
			node->quorum, 0);
		epoch_drop_token(node, up, now);
		return;
	}
	/* A new epoch makes the copy the successor may have after all (its
	 * acks lost) stale wherever the two meet (§4.2). */
	if (!epoch_reepoch(node, up, node->token.epoch, now))
		return;
	node->alive_view = node->token.alive;
	act_log(node, up, RING_LOG_SUCCESSOR_SKIP, id_of(node, dead), node->token.epoch, 0);
	node->visit_granted = true; /* the visit was over; move on */
	visit_uncount_pass(node);
	/* The skipped member may have passed a copy on before it died with
	 * its ack lost (§3.2): heartbeat the new epoch at once, so that the
	 * copy is dropped, and its grant revoked, within a datagram's time. */
	node->hb_deadline = now;
	visit_pass(node, up, now);
}

/* A visit starts here, with a token taken or regenerated: held, and
 * nothing granted, wanted, rested or parked yet (§3.3, §3.4). */
void visit_begin(struct ring_node *node, uint64_t now)
{
	node->phase = PHASE_HELD;
	node->visit_granted = false;
	node->visit_wanted = false;
	node->visit_served = false;
	node->resting = false;
	node->parked = false;
	node->summoned = false;
	node->arrived = now;
	/* The region is ours to tell now: what others said of it is past. */
	node->busy_elsewhere_until = 0;
	node->busy_hop = (struct ring_hop){node->token.epoch, node->token.seq};
	node->busy_from = node->me;
	node->busy_beat = 0;
	node->busy_sent = false; /* what a past visit's heartbeat said */
}

/* Whether a TOKEN from FROM (ring index FI) is answered without being
 * taken: stale, a duplicate, before FROM's floor is known, refused to a
 * restarted or leaving member, or not counting us alive. */
static bool token_refused(struct ring_node *node, struct ring_update *up, uint16_t from,
			  size_t fi, const struct ring_msg_token *t)
{
	if (t->epoch < node->epoch) {
		node->counters.stale_dropped++;
		act_log(node, up, RING_LOG_TOKEN_STALE_DROP, t->epoch, from, node->epoch);
		act_send_ack(node, up, from, t->epoch, t->seq, RING_ACK_STALE);
		return true;
	}
	if (t->epoch == node->seen_epoch && t->seq <= node->seen_seq) {
		act_send_ack(node, up, from, t->epoch, t->seq, 0); /* a duplicate */
		return true;
	}
	if (!ring_set_has(&node->floor_known, fi)) {
		/* The first token from FROM in this life may be a late copy of
		 * one our past accepted, which a lost or rolled-back disk cannot
		 * tell (§5.3). FROM's answer will: say nothing until then, and
		 * its retransmission is judged against it. */
		struct ring_msg q = {.type = RING_MSG_EPOCH_QUERY};
		q.u.epoch_query.nonce = node->query_nonce;
		act_send(node, up, from, &q);
		return true;
	}
	/* A floor refuses what FROM may have sent our past life. Once this
	 * life accepted a hop of the epoch, from anyone, every hop of it our
	 * past took is older than that one (one token per epoch, its seq
	 * growing along its path), so the duplicate check above refused it
	 * already: what remains is new. With jumps (§3.5) a floor learned late
	 * is the ring's current epoch, and would refuse its live token. */
	bool floored = t->epoch <= node->floor_from[fi] && node->accepted.epoch != t->epoch;
	if (t->epoch <= node->start_epoch || floored || node->leaving) {
		/* Restarted: we cannot tell which hops of this epoch our past
		 * accepted, so ask to be taken in under a new one (§5.3).
		 * Leaving: we said which hop was our last (§5.4). Either way the
		 * sender learns that this very pass was refused. */
		act_send_refusal(node, up, from, t);
		return true;
	}
	if (!ring_set_has(&t->alive, node->me)) {
		/* Tokens go only to members they count as alive. */
		act_bad_packet(node, up, from, -RING_EFIELD);
		return true;
	}
	return false;
}

/* Takes the token: the hop is ours (acked before anything else), the
 * visit starts afresh, with COUNTER the highest fence count of its epoch. */
static void token_take(struct ring_node *node, struct ring_update *up, uint16_t from,
		       size_t fi, const struct ring_msg_token *t, uint32_t counter, uint64_t now)
{
	node->seen_epoch = t->epoch;
	node->seen_seq = t->seq;
	node->accepted = (struct ring_hop){t->epoch, t->seq};
	/* Acked before the token can move on: a member that crashes between
	 * its pass and its ack would otherwise be skipped while its pass
	 * lives on, a second token with no datagram lost (review of §3.4). */
	act_send_ack(node, up, from, t->epoch, t->seq, 0);
	/* Our own pass back around keeps what it knew too (§4.4, §3.5). */
	struct ring_set knows = {0}, want = {0};
	if (node->phase != PHASE_NONE && node->token.epoch == t->epoch) {
		knows = node->token.knows;
		want = node->token.want;
	}
	node->token = *t;
	node->token.counter = counter;
	for (size_t i = 0; i < node->layout.n; i++) {
		if (ring_set_has(&knows, i))
			ring_set_add(&node->token.knows, i);
		if (ring_set_has(&want, i))
			ring_set_add(&node->token.want, i);
	}
	/* We persisted the epoch before this step acts on it (epoch_adopt, or
	 * it was ours already): one more member that knows it (§4.4). And
	 * this is our visit. Bits of members outside the layout say nothing. */
	for (size_t i = node->layout.n; i < RING_MAX_MEMBERS; i++) {
		ring_set_del(&node->token.knows, i);
		ring_set_del(&node->token.want, i);
	}
	ring_set_add(&node->token.knows, node->me);
	ring_set_del(&node->token.want, node->me);
	want_merge_heard(node, now);
	if (node->token.walk_left > ring_set_count(&t->alive))
		node->token.walk_left = (uint32_t)ring_set_count(&t->alive);
	uint64_t walk = t->walk_us;
	node->walk_base = walk < now ? now - walk : 0;
	node->arrived_plain = next_in(node, &t->alive, fi) == node->me;
	node->walk_ending = false; /* a pass of ours that came back round: the token is here */
	node->want_seen = false;
	node->holder_known = true;
	node->holder_at = node->me;
	node->holder_hop = (struct ring_hop){t->epoch, t->seq};
	uint64_t quiet = t->quiet_us;
	node->hb_base = quiet < now ? now - quiet : 0;
	node->hb_deadline = node->hb_base + ms(node->layout.heartbeat_ms);
	node->heard_ever = true;
	node->last_heard = now;
	node->alive_view = t->alive;
	node->no_quorum = false;
	node->elect_active = false;
	node->participated_until = 0;
	visit_begin(node, now);
	act_log(node, up, RING_LOG_TOKEN_RECV, from, t->epoch, t->seq);
}

void visit_on_token(struct ring_node *node, struct ring_update *up, uint16_t from,
		    const struct ring_msg_token *t, uint64_t now)
{
	int fx = ring_layout_index(&node->layout, from);
	if (fx < 0 || (size_t)fx >= RING_MAX_MEMBERS)
		return; /* on_datagram let only members through */
	size_t fi = (size_t)fx;
	if (token_refused(node, up, from, fi, t))
		return;
	epoch_adopt(node, up, t->epoch, from, now);
	uint32_t counter = t->counter;
	if (node->phase != PHASE_NONE && node->token.epoch == t->epoch) {
		/* Our own pass came back around (its ack was lost): the token
		 * moved on, so this is the one token. Keep the highest count so
		 * that no fence of this epoch can be issued twice. */
		clients_revoke(node, up);
		if (node->token.counter > counter)
			counter = node->token.counter;
	}
	/* Nor below a fence we granted ourselves, whatever the hop: in a
	 * keyless ring anyone can send a later hop of our epoch with a lower
	 * count (I1 at the edge; the fuzzer found it). */
	if (node->last_fence >> 32 == t->epoch && (uint32_t)node->last_fence > counter)
		counter = (uint32_t)node->last_fence;
	token_take(node, up, from, fi, t, counter, now);
	if (members_apply(node, up, now))
		visit_serve(node, up, now);
}

void visit_on_ack(struct ring_node *node, struct ring_update *up, uint16_t from,
		  const struct ring_msg_token_ack *a, uint64_t now)
{
	if (node->phase != PHASE_PASSING || from != id_of(node, node->pass_to))
		return;
	if (a->flags & RING_ACK_STALE) {
		epoch_adopt(node, up, a->known_epoch, from, now);
		if (node->phase != PHASE_NONE && a->epoch == node->token.epoch) {
			node->counters.stale_dropped++;
			act_log(node, up, RING_LOG_TOKEN_STALE_DROP, node->token.epoch, from,
				a->known_epoch);
			epoch_drop_token(node, up, now);
		}
	} else if (a->epoch == node->token.epoch && a->seq == node->token.seq) {
		if (node->retries_left == node->layout.retries)
			node->hop_rtt_us = now - node->pass_sent;
		if (node->walk_ending)
			node->walk_base = now;
		node->walk_ending = false;
		node->phase = PHASE_NONE;
		node->counters.tokens_passed++;
		node->heard_ever = true;
		node->last_heard = now;
		node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
	}
}

static bool hop_before(struct ring_hop a, struct ring_hop b)
{
	return a.epoch < b.epoch || (a.epoch == b.epoch && a.seq < b.seq);
}

/* What a heartbeat says about the region, for a TRY here (§3.3). Only the
 * newest heartbeat heard speaks: a late one of a holder that has since
 * passed the token on, or of the same holder before it said otherwise,
 * says nothing now. Right after a pause the heartbeats read may be old: a
 * client they say is busy may have long released (§5.5). */
static void heartbeat_busy(struct ring_node *node, struct ring_update *up, uint16_t from,
			   const struct ring_msg_heartbeat *h, uint64_t now)
{
	struct ring_hop hop = {h->epoch, h->seq};
	size_t fi = (size_t)ring_layout_index(&node->layout, from);
	if (hop_before(hop, node->busy_hop) ||
	    (!hop_before(node->busy_hop, hop) && fi == node->busy_from && h->beat < node->busy_beat))
		return;
	node->busy_hop = hop;
	node->busy_from = fi;
	node->busy_beat = h->beat;
	/* The want set does not count (§3.5): a bit may outlive its wait (a
	 * TRY refused there), and a client waiting elsewhere was invisible to
	 * a TRY here before jumps too (§3.3). */
	if (h->flags & RING_HB_BUSY && node->phase == PHASE_NONE && now >= node->quarantine_until)
		clients_busy_elsewhere(node, up, now);
	else
		node->busy_elsewhere_until = 0;
}

void visit_on_heartbeat(struct ring_node *node, struct ring_update *up, uint16_t from,
			const struct ring_msg_heartbeat *h, uint64_t now)
{
	if (h->epoch < node->epoch) {
		/* A stale token is alive at FROM. If ours is not, ask FROM to
		 * take us in: it will re-epoch above what we know (§5.3). */
		if (node->phase == PHASE_NONE && !election_recently_heard(node, now))
			act_send_join(node, up, from, now);
		return;
	}
	/* Before the heartbeat ends any election vote of ours (below). */
	contact_answer(node, up, from, h, now);
	epoch_adopt(node, up, h->epoch, from, now);
	node->heard_ever = true;
	node->last_heard = now;
	node->alive_view = h->alive;
	heartbeat_busy(node, up, from, h, now);
	want_on_heartbeat(node, up, (size_t)ring_layout_index(&node->layout, from), h, now);
	node->no_quorum = false;
	node->elect_active = false;
	node->participated_until = 0;
	if (node->phase == PHASE_NONE)
		node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
	if (!ring_set_has(&h->alive, node->me))
		act_send_join(node, up, from, now);
}

/* Who speaks for the token (§5.1): its holder, and a member still passing
 * it once a retransmission showed the successor may be gone. A pass that
 * is merely awaiting its ack leaves that to the new holder: two members
 * heartbeating one token doubles the broadcasts for nothing. */
bool visit_heartbeats(const struct ring_node *node)
{
	return node->phase == PHASE_HELD ||
	       (node->phase == PHASE_PASSING && node->retries_left < node->layout.retries);
}

void visit_ack_timeout(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->pass_refused == REFUSED_JOIN) {
		members_take_back(node, up, now);
	} else if (node->pass_refused == REFUSED_LEAVE) {
		skip_successor(node, up, now);
	} else if (node->retries_left > 0) {
		node->retries_left--;
		node->counters.retransmits++;
		node->ack_deadline = now + ms(node->layout.ack_timeout_ms);
		visit_send_token(node, up, now);
		act_log(node, up, RING_LOG_RETRANSMIT, id_of(node, node->pass_to),
			node->token.epoch, node->token.seq);
	} else {
		skip_successor(node, up, now);
	}
}

void visit_heartbeat_due(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	act_send_heartbeat(node, up, now);
}
