/* Epochs told and answered (PROTOCOL.md §4.3, §5.3), as checks of a history: a member told
 * of a newer epoch within reach knows it after that step, a stale token is answered STALE
 * with the newer epoch, and the restart query keeps its pace (resends backing off from
 * heartbeat_ms to loss_timeout_ms, one new query per loss_timeout_ms). The simulator feeds
 * what one step was told and did; a unit test feeds made-up steps. */
#include <inttypes.h>

#include "sim/simcheck.h"

/* §4.2's jump bound: a datagram's epoch is believed only within 2^16
 * generations above the receiver's own (0 always is). */
bool simcheck_within_reach(uint32_t base, uint32_t e)
{
	return e == 0 || (e >> 8) <= (base >> 8) + 0x10000u;
}

/* §4.3: a member that learns a newer epoch from a heartbeat, or from a STALE
 * ack of the pass it awaits, persists it and acts on it in that very step.
 * One beyond reach is refused (§4.2), so it teaches nothing. */
void simcheck_told(struct simcheck *c, uint32_t node, const char *by, uint32_t before,
		   uint32_t told, uint32_t after)
{
	if (node >= c->cfg.n || told <= before || !simcheck_within_reach(before, told))
		return;
	if (after < told)
		simcheck_fail(c, "adopt", "n%u knew epoch %" PRIu32 " and was told %" PRIu32
			      " by %s, but after that step it knows %" PRIu32
			      " (§4.3: a newer epoch is adopted)", node, before, told, by, after);
}

/* §4.3: a token of an epoch older than the receiver's is dropped and acked
 * STALE with the newer epoch, so that its sender drops its copy too rather
 * than retransmit it and skip the receiver. */
void simcheck_stale_token(struct simcheck *c, uint32_t node, uint32_t known, uint32_t epoch,
			  uint32_t seq, const struct simcheck_ack *ack)
{
	if (node >= c->cfg.n || epoch >= known)
		return;
	if (!ack->sent)
		simcheck_fail(c, "stale", "n%u knows epoch %" PRIu32 " and got hop %" PRIu32
			      "/%" PRIu32 ", but sent no ack of it (§4.3)", node, known, epoch, seq);
	else if (!ack->stale || ack->known_epoch < known)
		simcheck_fail(c, "stale", "n%u knows epoch %" PRIu32 " and acked the stale hop %"
			      PRIu32 "/%" PRIu32 " %s with known_epoch %" PRIu32
			      " (§4.3: STALE and the newer epoch)", node, known, epoch, seq,
			      ack->stale ? "STALE" : "unflagged", ack->known_epoch);
}

bool simcheck_pass_sent(struct simcheck *c, uint32_t node, uint32_t to, uint32_t epoch,
			uint32_t seq, bool timer)
{
	if (node >= c->cfg.n)
		return false;
	struct simcheck_ep_member *p = &c->m[node].ep;
	bool again = p->pass_to == to + 1 && p->pass_epoch == epoch && p->pass_seq == seq;
	if (!again) {
		p->pass_first_at = c->now;
		p->pass_resent = false;
	} else if (timer) {
		p->pass_resent = true;
	}
	p->pass_to = to + 1;
	p->pass_epoch = epoch;
	p->pass_seq = seq;
	return again;
}

/* §5.1: an ack of the pass a member awaits, from its successor, measures the
 * hop's round trip, from the pass's first send, unless an ack timeout made
 * it send the pass again: then nobody knows which copy the ack answers. */
void simcheck_pass_acked(struct simcheck *c, uint32_t node, uint32_t from, uint32_t epoch,
			 uint32_t seq)
{
	if (node >= c->cfg.n)
		return;
	struct simcheck_ep_member *p = &c->m[node].ep;
	if (p->pass_to != from + 1 || p->pass_epoch != epoch || p->pass_seq != seq)
		return;
	if (!p->pass_resent)
		p->rtt_us = c->now - p->pass_first_at;
	p->pass_to = 0; /* acked: a later ack of it is a duplicate */
}

/* §5.1: the quiet a pass carries is the time since the token's last
 * heartbeat as the member knows it (from the quiet it took the token with,
 * or its own heartbeat) plus half its last measured hop round trip. */
void simcheck_quiet_sent(struct simcheck *c, uint32_t node, uint64_t quiet_us,
			 uint64_t heartbeat_us)
{
	if (node >= c->cfg.n || !c->m[node].ep.hb_due)
		return;
	const struct simcheck_ep_member *p = &c->m[node].ep;
	uint64_t base = p->hb_due - heartbeat_us;
	uint64_t bound = c->now - base + p->rtt_us / 2;
	if (quiet_us > bound)
		simcheck_fail(c, "quiet", "n%u passed the token with quiet_us %" PRIu64 ", above "
			      "%" PRIu64 ": %.3f ms since its last heartbeat and half its measured "
			      "round trip of %.3f ms (§5.1)", node, quiet_us, bound,
			      (double)(c->now - base) / 1e3, (double)p->rtt_us / 1e3);
}

bool simcheck_passing_to(const struct simcheck *c, uint32_t node, uint32_t to)
{
	return node < c->cfg.n && c->m[node].ep.pass_to == to + 1;
}

/* §5.3: a query unanswered is sent again after heartbeat_ms, then at
 * doubling intervals up to loss_timeout_ms; once one settles, the next
 * (a catch-up) waits loss_timeout_ms, so two queries of one life begin at
 * least that far apart. Late is always allowed: a pause only delays. */
void simcheck_query_sent(struct simcheck *c, uint32_t node, uint64_t nonce,
			 uint64_t heartbeat_us, uint64_t loss_us)
{
	if (node >= c->cfg.n)
		return;
	struct simcheck_ep_member *q = &c->m[node].ep;
	uint64_t now = c->now;
	if (q->query_any && nonce == q->query_nonce) {
		uint32_t k = q->query_resends < 40 ? q->query_resends : 40;
		uint64_t need = heartbeat_us << k;
		if (need > loss_us)
			need = loss_us;
		if (now - q->query_last < need)
			simcheck_fail(c, "query", "n%u sent EPOCH_QUERY %" PRIu64 " again %.3f ms "
				      "after the last, before its backoff of %.3f ms (§5.3)", node,
				      nonce, (double)(now - q->query_last) / 1e3,
				      (double)need / 1e3);
		q->query_resends++;
		q->query_last = now;
		return;
	}
	if (q->query_any && now - q->query_first < loss_us)
		simcheck_fail(c, "query", "n%u began EPOCH_QUERY %" PRIu64 " %.3f ms after its "
			      "query %" PRIu64 " began; one a loss timeout (%.3f ms) at most (§5.3)",
			      node, nonce, (double)(now - q->query_first) / 1e3, q->query_nonce,
			      (double)loss_us / 1e3);
	q->query_any = true;
	q->query_nonce = nonce;
	q->query_first = q->query_last = now;
	q->query_resends = 0;
}

/* §4.3: a STALE ack drops the sender's copy of the epoch it names. One
 * naming an older hop, from a member that knows nothing newer than the
 * token now passed, leaves that token where it is: KEPT says the member
 * still has a token after the step, or passed it on in it. */
void simcheck_stale_ack_old(struct simcheck *c, uint32_t node, uint32_t token_epoch,
			    uint32_t ack_epoch, uint32_t known_epoch, bool kept)
{
	if (node >= c->cfg.n || ack_epoch == token_epoch || known_epoch > token_epoch || kept)
		return;
	simcheck_fail(c, "stale", "n%u dropped its token of epoch %" PRIu32 " for a STALE ack "
		      "of its older pass in epoch %" PRIu32 " (known_epoch %" PRIu32 ", §4.3)",
		      node, token_epoch, ack_epoch, known_epoch);
}

/* §5.1: the token is heard every heartbeat_ms. A member that took it with
 * QUIET_US of quiet owes a heartbeat HEARTBEAT_US after the last one; */
void simcheck_hb_took(struct simcheck *c, uint32_t node, uint64_t quiet_us,
		      uint64_t heartbeat_us)
{
	if (node >= c->cfg.n)
		return;
	uint64_t base = quiet_us < c->now ? c->now - quiet_us : 0;
	c->m[node].ep.hb_due = base + heartbeat_us;
}

/* each heartbeat it sends puts the next one HEARTBEAT_US later; */
void simcheck_hb_sent(struct simcheck *c, uint32_t node, uint64_t heartbeat_us)
{
	if (node < c->cfg.n)
		c->m[node].ep.hb_due = c->now + heartbeat_us;
}

/* A pause (GEN, the caller's count of them, moved on) ends what was owed. */
void simcheck_hb_paused(struct simcheck *c, uint32_t node, uint32_t gen)
{
	if (node < c->cfg.n && c->m[node].ep.pause_gen != gen) {
		c->m[node].ep.pause_gen = gen;
		c->m[node].ep.hb_due = 0;
	}
}

/* and a member retransmitting its pass (its successor may be gone) speaks
 * for the token: a retransmission when a heartbeat is due comes with one
 * (HEARTBEAT: the step sent one). */
void simcheck_hb_retransmit(struct simcheck *c, uint32_t node, bool heartbeat)
{
	if (node >= c->cfg.n || heartbeat || !c->m[node].ep.hb_due || c->now < c->m[node].ep.hb_due)
		return;
	simcheck_fail(c, "heartbeat", "n%u retransmitted its pass %.3f ms after its heartbeat "
		      "was due, and sent none (§5.1)", node,
		      (double)(c->now - c->m[node].ep.hb_due) / 1e3);
}

/* §5.2, §5.3: NODE heard a live token (took one, regenerated one, a heartbeat
 * of its epoch or newer, an ack of its pass), or sent a JOIN of its own (not
 * a refusal), which it does at most once a heartbeat_ms. */
void simcheck_heard(struct simcheck *c, uint32_t node)
{
	if (node < c->cfg.n) {
		c->m[node].ep.heard_any = true;
		c->m[node].ep.heard_at = c->now;
	}
}

void simcheck_join_sent(struct simcheck *c, uint32_t node)
{
	if (node < c->cfg.n) {
		c->m[node].ep.joined_any = true;
		c->m[node].ep.joined_at = c->now;
	}
}

/* A stale heartbeat is no live token (§5.2): a member that holds none and has
 * heard no live one for loss_timeout_ms / 2 asks the stale token's holder to
 * take it in (§5.3), unless it sent a JOIN less than a heartbeat_ms ago or is
 * leaving. JOINED: the step sent FROM's sender a JOIN. */
void simcheck_stale_heartbeat(struct simcheck *c, uint32_t node, bool holds, uint64_t loss_us,
			      uint64_t heartbeat_us, bool joined)
{
	if (node >= c->cfg.n || holds || joined || c->m[node].rs.leaving)
		return;
	const struct simcheck_ep_member *h = &c->m[node].ep;
	if ((h->heard_any && c->now - h->heard_at < loss_us / 2) ||
	    (h->joined_any && c->now - h->joined_at < heartbeat_us))
		return;
	simcheck_fail(c, "join", "n%u heard only a stale heartbeat, no live token for %.3f ms, "
		      "and did not ask its sender to take it in (§5.2, §5.3)", node,
		      h->heard_any ? (double)(c->now - h->heard_at) / 1e3 : -1.0);
}
