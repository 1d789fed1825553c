/* Epochs (PROTOCOL.md §4): minting a newer one, what a datagram's epoch may
 * be, adopting a newer epoch and dropping the token it makes stale. */
#include "core/internal.h"

/* A new epoch above BASE that only this member can make: the generation
 * above BASE's, with our ring index in the low byte. Two members never mint
 * the same epoch, and we never mint one twice since each is persisted.
 * Returns 0 when the generations are used up (§4.2): the update is then one
 * FATAL, since any epoch we could still make would repeat one. */
uint32_t epoch_mint(struct ring_node *node, struct ring_update *up, uint32_t base)
{
	uint32_t gen = (max_u32(base, node->epoch) >> 8) + 1;
	if (gen > RING_GEN_MAX) {
		act_log(node, up, RING_LOG_EPOCH_EXHAUSTED, max_u32(base, node->epoch), 0, 0);
		act_fatal(node, up, -RING_EEXHAUSTED);
		return 0;
	}
	uint32_t e = gen << 8 | (uint32_t)node->me;
	RING_ASSERT(e > base && e > node->epoch && (e & 0xffu) == node->me);
	return e;
}

/* Whether epoch E is within one jump of BASE: none, or at most
 * RING_GEN_JUMP generations above it (§4.2), from 0 too. */
bool epoch_within_reach(uint32_t base, uint32_t e)
{
	return e == 0 || (e >> 8) <= (base >> 8) + RING_GEN_JUMP;
}

/* An epoch a datagram may carry: one within reach of ours. A member further
 * behind, a wiped one joining an old ring for instance, learns where the
 * ring is from the others' EPOCH_REPLY, judged by query_settle (§5.3): an
 * answer beyond reach counts only when another member vouches for it too. */
bool epoch_ok(const struct ring_node *node, uint32_t e)
{
	return epoch_within_reach(node->epoch, e);
}

bool epoch_msg_ok(const struct ring_node *node, const struct ring_msg *m)
{
	switch (m->type) {
	case RING_MSG_TOKEN:
		return epoch_ok(node, m->u.token.epoch);
	case RING_MSG_TOKEN_ACK:
		return epoch_ok(node, m->u.token_ack.epoch) &&
		       epoch_ok(node, m->u.token_ack.known_epoch);
	case RING_MSG_HEARTBEAT:
		return epoch_ok(node, m->u.heartbeat.epoch);
	case RING_MSG_ELECTION:
		return epoch_ok(node, m->u.election.max_epoch);
	case RING_MSG_JOIN:
		return epoch_ok(node, m->u.join.epoch) && epoch_ok(node, m->u.join.refused.epoch);
	case RING_MSG_LEAVE:
		return epoch_ok(node, m->u.leave.epoch) &&
		       epoch_ok(node, m->u.leave.accepted.epoch) &&
		       epoch_ok(node, m->u.leave.refused.epoch);
	case RING_MSG_WANT:
		return epoch_ok(node, m->u.want.epoch);
	case RING_MSG_HEARTBEAT_ACK:
		return epoch_ok(node, m->u.heartbeat_ack.epoch);
	default:
		/* EPOCH_REPLY is how a member that fell behind catches up:
		 * on_epoch_reply bounds it, since one answer beyond reach is
		 * evidence only once a second member gives one too (§5.3). */
		return true;
	}
}

void epoch_drop_token(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	clients_revoke(node, up);
	node->phase = PHASE_NONE;
	node->resting = false;
	node->parked = false;
	node->summoned = false;
	node->walk_ending = false;
	node->loss_deadline = now + ms(node->layout.loss_timeout_ms);
}

/* Learn that epoch E exists. Tokens older than it are now stale, ours too. */
void epoch_adopt(struct ring_node *node, struct ring_update *up, uint32_t e,
		 uint16_t from, uint64_t now)
{
	if (e <= node->epoch || !act_persist(node, up, e))
		return;
	act_log(node, up, RING_LOG_EPOCH_ADOPT, e, from, 0);
	if (node->phase != PHASE_NONE && node->token.epoch < e) {
		node->counters.stale_dropped++;
		act_log(node, up, RING_LOG_TOKEN_STALE_DROP, node->token.epoch, from, e);
		epoch_drop_token(node, up, now);
	}
	/* Paired with check_self: no token here is older than what we know. */
	RING_ASSERT(node->epoch == e && (node->phase == PHASE_NONE || node->token.epoch == e));
}

/* Give the token we hold a new epoch, above BASE (§4.2): after a skip, a
 * membership change, or when its fences run out. Returns false when the
 * member is broken (epochs exhausted, or no room to persist): the caller
 * stops, as the update is one FATAL. */
bool epoch_reepoch(struct ring_node *node, struct ring_update *up, uint32_t base,
		   uint64_t now)
{
	if (!node->proven) {
		/* We may have minted epochs in a life our disk forgot (§5.3):
		 * minting again before a majority told us what exists could
		 * repeat one. The token goes; a proven member regenerates. */
		epoch_drop_token(node, up, now);
		return false;
	}
	uint32_t e = epoch_mint(node, up, max_u32(base, node->token.epoch));
	if (e == 0 || !act_persist(node, up, e))
		return false;
	node->token.epoch = e;
	node->token.seq = 0;
	node->token.counter = 0;
	ring_set_clear(&node->token.knows);
	ring_set_add(&node->token.knows, node->me);
	node->seen_epoch = e;
	node->seen_seq = 0;
	RING_ASSERT(node->epoch == e);
	return true;
}

/* Under a majority quorum, grant under an epoch only once a majority has
 * persisted it, so that every later election, which needs a majority, meets
 * it and mints above it (§4.4). The token's knows set is the minter and
 * every member that accepted a hop of the epoch, each added by itself
 * after it persisted the epoch. With jumps (§3.5) seq + 1 would count
 * right only because an unconfirmed token goes in ring order; the set is
 * right whatever the route (PROTOCOL.md §4.4). */
bool epoch_confirmed(const struct ring_node *node)
{
	return ring_set_count(&node->token.knows) >= node->quorum;
}
