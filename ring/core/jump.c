/* Jumps (§3.5): where the token goes from here. To the first member after
 * us in ring order that waits for it (the token's want set), past the ones
 * that do not; on a walk, to every member in turn, so that a member that
 * died is still found and the alive set stays true; and in order while its
 * epoch is not yet known to a majority, so that it becomes known (§4.4). */
#include "core/internal.h"

bool jump_others_want(const struct ring_node *node)
{
	for (size_t i = 0; i < node->layout.n; i++)
		if (i != node->me && ring_set_has(&node->token.want, i) &&
		    ring_set_has(&node->token.alive, i))
			return true;
	return false;
}

/* The token's walk age as it leaves: our own time since the walk ended,
 * plus half a hop for the flight, as quiet_us counts (§5.1). */
uint32_t jump_walk_age(const struct ring_node *node, uint64_t now)
{
	uint64_t age = now - node->walk_base + node->hop_rtt_us / 2;
	return age > UINT32_MAX ? UINT32_MAX : (uint32_t)age;
}

/* A walk is due once the last ended loss_timeout_ms / 2 ago (a whole
 * loss_timeout_ms for a park's lap or summons, so that a rare request is
 * served by one jump). It then
 * ends, with the default timings, long before the token is
 * loss_timeout_ms past the last one, after which a jump's receiver grants
 * nothing until a walk has been round (park_fresh): so the side of a
 * partition without a majority stops granting before the other side can
 * suspect a loss. */
bool jump_walk_due(const struct ring_node *node, uint64_t now, bool from_park)
{
	uint64_t loss = ms(node->layout.loss_timeout_ms);
	return node->token.walk_left == 0 && now - node->walk_base >= (from_park ? loss : loss / 2);
}

/* A walk: one pass to each member of the alive set, in ring order, back
 * to us. */
void jump_walk_start(struct ring_node *node)
{
	node->token.walk_left = (uint32_t)ring_set_count(&node->token.alive);
}

/* The member the token goes to from here (not us: next_in gives us only
 * when nobody else is alive), and the walk's progress. */
size_t jump_next(struct ring_node *node, uint64_t now, bool from_park)
{
	size_t succ = next_in(node, &node->token.alive, node->me);
	if (succ == node->me)
		return succ;
	if (jump_walk_due(node, now, from_park))
		jump_walk_start(node);
	if (node->token.walk_left > 0) {
		/* This pass ends the walk, once acked: the token is back where
		 * the walk began. Not before: a pass that fails (a skip) did
		 * not go round (the simulator's park check found a holder left
		 * alone that counted such a walk as done, and granted stale). */
		if (--node->token.walk_left == 0)
			node->walk_ending = true;
		return succ;
	}
	/* An epoch a majority does not know yet must reach members that do
	 * not: in ring order from its minter, each hop a new one (§4.4). */
	if (!epoch_confirmed(node))
		return succ;
	struct ring_set w = {0};
	for (size_t i = 0; i < node->layout.n; i++)
		if (i != node->me && ring_set_has(&node->token.want, i) &&
		    ring_set_has(&node->token.alive, i))
			ring_set_add(&w, i);
	size_t next = next_in(node, &w, node->me);
	/* Nobody waits: a paced ring moves on in order (§3.4). */
	return next == node->me ? succ : next;
}
