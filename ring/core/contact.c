/* Renewal's proof of contact (PROTOCOL.md §3.3): the beat numbers a
 * holder's heartbeats carry, the HEARTBEAT_ACKs the others answer them
 * with, and from those the latest time a majority of the token's alive set
 * is known to have heard the holder, which no renewal reaches more than a
 * lease past. */
#include "core/internal.h"

/* Numbers a heartbeat going out now and remembers when it went. */
uint32_t contact_beat(struct ring_node *node, uint64_t now)
{
	uint32_t b = ++node->beat;
	node->beat_sent_at[b % RING_BEAT_HISTORY] = now;
	return b;
}

/* A heartbeat H from FROM that asks for an ack. The ack says "I heard you
 * alive now, and will not carry an election for a while" (§6.2 rule 2);
 * a member whose vote is already on its way in an election cannot say
 * that, so it is silent until that vote can no longer count, whatever it
 * hears meanwhile (a heartbeat ends our part in the election here, not
 * the vote the initiator will count); so is an initiator. Only a token
 * the highest initiator we voted for minted (an epoch's low byte is its
 * minter, §4.2) above every epoch our votes' elections knew at our hop is
 * the result (election_note_vote): our votes are spent and its holder is
 * vouched for as usual; otherwise every renewal would fail for an
 * election timeout after each regeneration. (Later hops may have raised
 * what the election knew: its result is still above all of it.) */
static bool vote_spent(const struct ring_node *node, const struct ring_msg_heartbeat *h,
		       uint64_t now)
{
	if (now >= node->vote_out_until)
		return true;
	int mi = ring_layout_index(&node->layout, node->vote_initiator);
	return mi >= 0 && (h->epoch & 0xffu) == (uint32_t)mi && h->epoch > node->vote_epoch;
}

void contact_answer(struct ring_node *node, struct ring_update *up, uint16_t from,
		    const struct ring_msg_heartbeat *h, uint64_t now)
{
	if (!(h->flags & RING_HB_GRANTED) || node->phase != PHASE_NONE || node->elect_active ||
	    !vote_spent(node, h, now))
		return;
	struct ring_msg ack = {.type = RING_MSG_HEARTBEAT_ACK};
	ack.u.heartbeat_ack = (struct ring_msg_heartbeat_ack){h->epoch, h->seq, h->beat};
	act_send(node, up, from, &ack);
}

/* An ack by member IDX: of our token's hop, of a beat we sent and still
 * know the time of. It proves IDX heard us when that beat went out. */
void contact_on_ack(struct ring_node *node, size_t idx, const struct ring_msg_heartbeat_ack *a)
{
	if (node->phase != PHASE_HELD || idx == node->me || a->epoch != node->token.epoch ||
	    a->seq != node->token.seq || a->beat == 0 || a->beat > node->beat ||
	    node->beat - a->beat >= RING_BEAT_HISTORY)
		return;
	uint64_t t = node->beat_sent_at[a->beat % RING_BEAT_HISTORY];
	if (t > node->ack_at[idx])
		node->ack_at[idx] = t;
}

/* The latest time by which a majority of the token's alive set as it is
 * now (and a quorum), ourselves counted as now, had heard us, and never
 * before the grant: a member that has since left, or was skipped, vouches
 * for nothing. Each such member heard the token alive then, so none can
 * carry an election before loss_timeout_ms / 2 after it (§6.2). */
uint64_t contact_time(const struct ring_node *node, uint64_t now)
{
	size_t need = ring_set_count(&node->token.alive) / 2 + 1;
	if (need < node->quorum)
		need = node->quorum;
	uint64_t t[RING_MAX_MEMBERS];
	size_t k = 0;
	for (size_t j = 0; j < node->layout.n; j++)
		if (j != node->me && ring_set_has(&node->token.alive, j))
			t[k++] = node->ack_at[j];
	uint64_t at = now;
	/* The (need - 1)-th latest of the others': a partial selection. */
	for (size_t r = 0; r + 1 < need; r++) {
		if (r >= k)
			return node->grant_started;
		size_t best = r;
		for (size_t j = r + 1; j < k; j++)
			if (t[j] > t[best])
				best = j;
		uint64_t x = t[r];
		t[r] = t[best];
		t[best] = x;
		at = t[r];
	}
	return at > node->grant_started ? at : node->grant_started;
}
