/* Parking (§3.4): a token no member wants stays where it is, and goes
 * round once a loss timeout; want.c summons it. */
#include "core/internal.h"

/* Nobody else waits for the token (its want set, §3.5), and no walk is
 * under way. Only when idle_pass_ms is 0; a paced token keeps moving. */
bool park_allowed(const struct ring_node *node, uint64_t now)
{
	/* A client here that cannot be granted yet (quarantine, an epoch not
	 * confirmed, a park that would be stale) sends the token on at once:
	 * no park to announce. */
	bool can_grant = node->q_len == 0 ||
			 (node->quarantine_until == 0 && epoch_confirmed(node) &&
			  now - node->walk_base < ms(node->layout.loss_timeout_ms) / 2);
	/* Nor when its lap is due already: it would end at once. */
	bool lap_due = now - node->walk_base >= ms(node->layout.loss_timeout_ms);
	return node->layout.idle_pass_ms == 0 && !node->summoned && can_grant && !lap_due &&
	       node->token.walk_left == 0 && !jump_others_want(node);
}

/* A parked token grants only within loss_timeout_ms / 2 of its last walk
 * (§3.4): the walk showed the ring reached us then. A holder cut off from
 * everyone since would otherwise grant for as long as the cut lasts, while
 * the others regenerate. So a client asking later sends it round once
 * first, and the majority side has not yet suspected a loss. A token that
 * jumped here (§3.5) grants within loss_timeout_ms of the last walk, by
 * when the next one is long due; one that came from our predecessor
 * grants as on a ring without jumps. */
bool park_fresh(const struct ring_node *node, uint64_t now)
{
	uint64_t age = now - node->walk_base;
	uint64_t loss = ms(node->layout.loss_timeout_ms);
	if (node->parked)
		return age < loss / 2;
	return node->arrived_plain || age < loss;
}

/* And it goes round once every loss_timeout_ms even when nobody asks: a
 * member that died is then found, skipped and reported (no-quorum) as on
 * a moving ring, for two datagrams per member a loss timeout. */
uint64_t park_lap_at(const struct ring_node *node)
{
	return node->walk_base + ms(node->layout.loss_timeout_ms);
}

bool park_lap_due(const struct ring_node *node, uint64_t now)
{
	return node->parked && now >= park_lap_at(node);
}

/* The token stays here, heartbeating PARKED. Not at once: a member whose
 * client asks finds the token by following its passes (§3.5), and a
 * broadcast per park cost the ring n - 1 datagrams a grant under light
 * load (the simulator's heartbeat budget found it). */
void park_token(struct ring_node *node, struct ring_update *up)
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
}
