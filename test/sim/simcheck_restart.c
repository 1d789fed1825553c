/* The restart proof of PROTOCOL.md §5.3 as a model of each member's life, judged against
 * what the member did: it is proven exactly when n - n/2 others (an empty disk) or n/2
 * (a stored epoch) have answered its start query; until then it calls no election and
 * names itself in none, and for 2 x heartbeat_ms after its start and its proof it calls
 * none either; a token from a member that has not answered this life is not taken; one
 * from P of an epoch <= max(start epoch, floor(P)) is refused by name and not taken, one
 * above it is not refused; the refusal carries max(its epoch, floor(P)). floor(P) is P's
 * first answer of this life, the start epoch the disk's, raised at the proof to the
 * highest answer. A life the model cannot follow (an answer beyond reach: §4.2's climb) is
 * left alone. */
#include <inttypes.h>

#include "sim/simcheck.h"

static struct simcheck_rs_member *life(struct simcheck *c, uint32_t node)
{
	if (node >= c->cfg.n || !c->m[node].up || c->m[node].rs.lost)
		return NULL;
	return &c->m[node].rs;
}

void simcheck_restart_start(struct simcheck *c, uint32_t node, uint32_t disk_epoch,
			    size_t needed, uint64_t listen_us)
{
	if (node >= c->cfg.n)
		return;
	struct simcheck_rs_member *r = &c->m[node].rs;
	r->start_epoch = disk_epoch;
	r->needed = needed;
	r->listen_us = listen_us;
	r->started_at = c->now;
	r->proven = needed == 0;
	r->proven_at = c->now;
}

void simcheck_restart_query(struct simcheck *c, uint32_t node, uint64_t nonce)
{
	struct simcheck_rs_member *r = life(c, node);
	if (!r)
		return;
	if (!r->first_nonce)
		r->first_nonce = nonce;
	if (!r->start_nonce && !r->proven)
		r->start_nonce = nonce;
	if (nonce > r->last_nonce)
		r->last_nonce = nonce;
}

/* Whether this answer settles the start query in the model. A member that
 * answers the query again (a resend, a duplicate) is counted once, with
 * its newest answer: the highest of those is what the proof adopts. */
static bool reply_settles(struct simcheck_rs_member *r, uint32_t n, uint32_t from,
			  uint64_t nonce, uint32_t epoch, uint32_t before)
{
	if (r->proven || nonce != r->start_nonce)
		return false;
	r->answered |= 1ull << from;
	r->answer[from] = epoch;
	if ((size_t)__builtin_popcountll(r->answered) < r->needed)
		return false;
	uint32_t s = before;
	for (uint32_t j = 0; j < n; j++)
		if ((r->answered >> j & 1) && r->answer[j] > s)
			s = r->answer[j];
	if (s > r->start_epoch)
		r->start_epoch = s;
	return true;
}

void simcheck_restart_reply(struct simcheck *c, uint32_t node, uint32_t from, uint64_t nonce,
			    uint32_t epoch, uint32_t before, bool proven_now)
{
	struct simcheck_rs_member *r = life(c, node);
	if (!r || from >= c->cfg.n)
		return;
	if (!r->first_nonce || nonce < r->first_nonce || nonce > r->last_nonce) {
		if (proven_now)
			simcheck_fail(c, "restart", "n%u was proven by n%u's answer %" PRIu64
				      ", not to a query of this life (§5.3)", node, from, nonce);
		return;
	}
	if (!simcheck_within_reach(before, epoch)) {
		r->lost = true; /* the climb of §4.2: beyond this model */
		return;
	}
	if (!(r->floor_known >> from & 1)) {
		r->floor_known |= 1ull << from;
		r->floor[from] = epoch;
	}
	bool settles = reply_settles(r, (uint32_t)c->cfg.n, from, nonce, epoch, before);
	if (settles != proven_now)
		simcheck_fail(c, "restart", "n%u %s with %d of the %zu answers its start query "
			      "needs (§5.3)", node, proven_now ? "was proven" : "was not proven",
			      __builtin_popcountll(r->answered), r->needed);
	if (settles) {
		r->proven = true;
		r->proven_at = c->now;
	}
}

/* A token hop EPOCH/SEQ from FROM reached NODE, which knew BEFORE. */
void simcheck_restart_token(struct simcheck *c, uint32_t node, uint32_t from, uint32_t epoch,
			    uint32_t seq, uint32_t before, const struct simcheck_answer *ans)
{
	struct simcheck_rs_member *r = life(c, node);
	if (!r || from >= c->cfg.n || r->leaving || epoch < before)
		return;
	if (!(r->floor_known >> from & 1)) {
		if (ans->taken)
			simcheck_fail(c, "restart", "n%u took hop %" PRIu32 "/%" PRIu32 " from n%u, "
				      "which has not answered its query of this life (§5.3)", node,
				      epoch, seq, from);
		return;
	}
	uint32_t fl = r->floor[from];
	uint32_t t = r->start_epoch > fl ? r->start_epoch : fl;
	/* Once this life took a hop of the epoch, its past's hops of it are
	 * older, and refused as duplicates: the floor no longer applies. */
	bool floored = epoch <= t && (epoch <= r->start_epoch || r->took_epoch != epoch);
	if (ans->taken)
		r->took_epoch = epoch;
	if (floored && ans->taken)
		simcheck_fail(c, "restart", "n%u took hop %" PRIu32 "/%" PRIu32 " from n%u, at or "
			      "below max(start epoch %" PRIu32 ", floor %" PRIu32 ") (§5.3)", node,
			      epoch, seq, from, r->start_epoch, fl);
	if (epoch > t && ans->refused)
		simcheck_fail(c, "restart", "n%u refused hop %" PRIu32 "/%" PRIu32 " from n%u, "
			      "above max(start epoch %" PRIu32 ", floor %" PRIu32 ") (§5.3)", node,
			      epoch, seq, from, r->start_epoch, fl);
	uint32_t need = before > fl ? before : fl;
	if (ans->refused && ans->refusal_epoch < need)
		simcheck_fail(c, "restart", "n%u's refusal of hop %" PRIu32 "/%" PRIu32 " to n%u "
			      "says epoch %" PRIu32 ", below max(its epoch, floor) = %" PRIu32
			      " (§5.3)", node, epoch, seq, from, ans->refusal_epoch, need);
}

void simcheck_restart_leaving(struct simcheck *c, uint32_t node)
{
	struct simcheck_rs_member *r = life(c, node);
	if (r)
		r->leaving = true;
}

/* NODE sent an ELECTION: its own (INITIATED, round ROUND) or one it carries;
 * SELF: it names itself a participant. */
void simcheck_restart_election(struct simcheck *c, uint32_t node, bool initiated,
			       uint32_t round, bool self)
{
	struct simcheck_rs_member *r = life(c, node);
	if (!r)
		return;
	if (!r->proven && (initiated || self))
		simcheck_fail(c, "restart", "n%u %s an election before it was proven (§5.3)", node,
			      initiated ? "called" : "took part in");
	if (!initiated || (r->elected && round == r->round))
		return;
	r->elected = true;
	r->round = round;
	uint64_t since = r->proven_at > r->started_at ? r->proven_at : r->started_at;
	if (r->proven && c->now - since < r->listen_us)
		simcheck_fail(c, "restart", "n%u called an election %.3f ms after its %s, before "
			      "listening %.3f ms for a live token (§5.3)", node,
			      (double)(c->now - since) / 1e3,
			      r->proven_at > r->started_at ? "proof" : "start",
			      (double)r->listen_us / 1e3);
}

/* NODE, knowing BEFORE, persisted EPOCH in a step whose datagram carried it
 * (CARRIED) or not: one it was not told, with its own low byte, it minted,
 * and an unproven member mints nothing (§4.2, §5.3). */
void simcheck_restart_persist(struct simcheck *c, uint32_t node, uint32_t epoch,
			      uint32_t before, bool carried)
{
	struct simcheck_rs_member *r = life(c, node);
	if (!r || r->proven || carried || epoch <= before || (epoch & 0xffu) != node)
		return;
	simcheck_fail(c, "restart", "n%u minted epoch %" PRIu32 " before it was proven (§5.3)",
		      node, epoch);
}
