/* Parking and summons (§3.4): a token no member wants stays where it is,
 * and a member that wants it summons it with WANT. */
#include "core/internal.h"

/* A whole rotation found nobody waiting (§3.4): every other member the token
 * counts passed it on unwanted since it was last wanted. Only when
 * idle_pass_ms is 0; a paced token keeps moving. */
bool park_allowed(const struct ring_node *node)
{
	/* A client here that cannot be granted yet (quarantine, an epoch not
	 * confirmed) sends the token on at once: no park to announce. */
	bool can_grant = node->q_len == 0 ||
			 (node->quarantine_until == 0 && epoch_confirmed(node));
	return node->layout.idle_pass_ms == 0 && !node->summoned && can_grant &&
	       (size_t)node->token.idle + 1 >= ring_set_count(&node->token.alive);
}

/* A parked token grants only while its last lap is recent (§3.4): the
 * token's arrival showed the ring reached us then. A holder cut off from
 * everyone since would otherwise grant for as long as the cut lasts, while
 * the others regenerate; a moving token finds out at its next pass. So a
 * client asking later sends it round once first, as an unparked token
 * would have gone, and the majority side has not yet suspected a loss. */
bool park_fresh(const struct ring_node *node, uint64_t now)
{
	return !node->parked || now - node->arrived < ms(node->layout.loss_timeout_ms) / 2;
}

/* And it goes round once every loss_timeout_ms even when nobody asks: a
 * member that died is then found, skipped and reported (no-quorum) as on
 * a moving ring, for two datagrams per member a loss timeout. */
uint64_t park_lap_at(const struct ring_node *node)
{
	return node->arrived + ms(node->layout.loss_timeout_ms);
}

bool park_lap_due(const struct ring_node *node, uint64_t now)
{
	return node->parked && now >= park_lap_at(node);
}

/* The token stays here, heartbeating; the heartbeat says so at once, so
 * that a member whose client asks knows whom to summon. */
void park_token(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	RING_ASSERT(node->phase == PHASE_HELD && !node->granted);
	node->parked = true;
	node->resting = false;
	/* Back from a lap with nothing granted on the way is the same park. */
	bool same = node->token.epoch == node->lap_epoch &&
		    node->token.counter == node->lap_counter;
	if (!same) {
		node->counters.parks++;
		act_log(node, up, RING_LOG_TOKEN_PARK, node->token.epoch, node->token.seq,
			node->token.idle);
	}
	node->lap_epoch = 0;
	act_send_heartbeat(node, up, now);
}

bool park_wanted(const struct ring_node *node)
{
	return node->q_len > 0 && node->phase == PHASE_NONE && !node->leaving && !node->left;
}

/* Asks the member where the token parks to send it on, when a client here
 * waits. A summons has no authority, so losing one costs only time: it is
 * sent again, backing off from ack_timeout_ms to heartbeat_ms, and at once
 * for a new park (a parked heartbeat naming another hop). */
void park_summon(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (!park_wanted(node) || !node->park_known || node->park_at == node->me)
		return;
	bool again = node->summon_hop.epoch == node->park_hop.epoch &&
		     node->summon_hop.seq == node->park_hop.seq;
	if (again && now < node->summon_next)
		return;
	struct ring_msg m = {.type = RING_MSG_WANT};
	m.u.want.epoch = node->park_hop.epoch;
	m.u.want.seq = node->park_hop.seq;
	act_send(node, up, id_of(node, node->park_at), &m);
	node->counters.summons++;
	if (!again) {
		/* One line per park summoned; the resends are only counted. */
		act_log(node, up, RING_LOG_TOKEN_SUMMON, id_of(node, node->park_at),
			node->park_hop.epoch, node->park_hop.seq);
		node->summon_every = ms(node->layout.ack_timeout_ms);
	} else if (node->summon_every < ms(node->layout.heartbeat_ms)) {
		node->summon_every = min_u64(2 * node->summon_every, ms(node->layout.heartbeat_ms));
	}
	node->summon_hop = node->park_hop;
	node->summon_next = now + node->summon_every;
}

/* A summons for the park we hold (§3.4): the visit ends with the grant in
 * progress, if any. One for another park, or for none, is old or forged. */
void park_on_want(struct ring_node *node, struct ring_update *up, size_t from_idx,
		  const struct ring_msg_want *w, uint64_t now)
{
	/* From a member the token leaves out, a summons would cost a rotation
	 * that cannot serve it: its JOIN comes first (§5.3). */
	if (node->phase != PHASE_HELD || !node->parked || node->summoned ||
	    w->epoch != node->token.epoch || w->seq != node->token.seq ||
	    !ring_set_has(&node->token.alive, from_idx))
		return;
	uint16_t from = id_of(node, from_idx);
	node->summoned = true;
	act_log(node, up, RING_LOG_TOKEN_UNPARK, from, w->epoch, w->seq);
	visit_serve(node, up, now);
}
