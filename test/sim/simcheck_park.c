/* The parking rules of PROTOCOL.md §3.4 as a checker of a history (simcheck.h):
 * what a parked token may do, judged from the log lines and datagrams of each
 * step of a member, in the order the step made them, and its status after.
 * A park's next heartbeat says PARKED (the park is not announced at once: a
 * WANT finds the token by following its passes, §3.5), and a PARKED
 * heartbeat never has anyone else in its want set; a parked token grants only
 * within loss_timeout_ms / 2 of its arrival; it moves on only when summoned
 * by a WANT from a member the park counts, when its lap is due (a loss
 * timeout after the token's last walk), when a client of its own waits (it
 * cannot grant it yet), or when its member leaves; once summoned it grants
 * nothing more before it moves. */
#include "sim/simcheck.h"

#include <inttypes.h>

static struct simcheck_park_member *pm(struct simcheck *c, uint32_t node)
{
	return node < c->cfg.n && node < SIMCHECK_MAX_N && c->park.loss_us ? &c->park.m[node]
									     : NULL;
}

void simcheck_park_setup(struct simcheck *c, uint64_t loss_us)
{
	c->park.loss_us = loss_us;
	for (uint32_t i = 0; i < c->cfg.n; i++)
		simcheck_park_start(c, i);
}

void simcheck_park_start(struct simcheck *c, uint32_t node)
{
	struct simcheck_park_member *m = pm(c, node);
	if (m)
		*m = (struct simcheck_park_member){0};
}

void simcheck_park_leave(struct simcheck *c, uint32_t node)
{
	struct simcheck_park_member *m = pm(c, node);
	if (m)
		m->leaving = true;
}

void simcheck_park_step(struct simcheck *c, uint32_t node, bool pausing)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	m->in_step = true;
	m->was_parked = m->parked;
	m->was_summoned = m->summoned;
	m->passed = m->granted = m->park_logged = m->unannounced = false;
	m->pausing = pausing;
}

void simcheck_park_token_walk(struct simcheck *c, uint32_t node, uint32_t walk_us)
{
	struct simcheck_park_member *m = pm(c, node);
	if (m)
		m->walk_seen = walk_us;
}

/* A regenerated token has just been round as an election: a walk. */
void simcheck_park_arrive(struct simcheck *c, uint32_t node, bool regenerated)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	m->arrived = c->now;
	m->announce = false;
	m->walked = regenerated ? c->now : m->walk_seen > c->now ? 0 : c->now - m->walk_seen;
	/* A new visit: a park it held before is gone (a newer token came
	 * while the heartbeat of its epoch was lost), whatever it passes now. */
	m->summoned = m->visit_granted = m->was_parked = m->alone = false;
}

void simcheck_park_logged(struct simcheck *c, uint32_t node)
{
	struct simcheck_park_member *m = pm(c, node);
	if (m)
		m->park_logged = m->announce = true;
}

/* The heartbeat after a park's log line is its announcement; its alive set
 * is the rotation the park needed (I2's one token: the hops are its). */
void simcheck_park_heartbeat(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq,
			     bool parked, uint64_t alive, uint64_t want)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	if (m->announce) {
		/* Judged at the step's end: a park that ends in this step
		 * (a lap, a pause's end of visit) sends its due heartbeat
		 * unflagged just before the pass. */
		m->announce = false;
		m->unannounced = !parked && !m->summoned;
	}
	uint64_t others = want & alive & ~(1ull << (node & 63));
	if (parked && others)
		simcheck_fail(c, "park", "n%u heartbeats a park while n%u waits in its"
			      " want set (§3.5)", node, (unsigned)__builtin_ctzll(others));
	m->hb_parked = parked;
	m->alone = !(alive & ~(1ull << (node & 63)));
	if (parked) {
		m->hb_epoch = epoch;
		m->hb_seq = seq;
		m->hb_alive = alive;
	}
}

void simcheck_park_unpark(struct simcheck *c, uint32_t node, uint32_t from, uint32_t epoch,
			  uint32_t seq)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	m->summoned = true;
	/* A WANT names its wanter, not the park (§3.5): any WANT ends a
	 * park, but only one from a member the park counts. */
	(void)epoch;
	(void)seq;
	if (m->hb_parked && (from >= 64 || !(m->hb_alive >> from & 1)))
		simcheck_fail(c, "park", "n%u unparked on a WANT from n%u, which its park"
			      " leaves out (§3.4)", node, from);
}

void simcheck_park_grant(struct simcheck *c, uint32_t node)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	m->granted = m->visit_granted = true;
	if (m->summoned && !m->alone)
		simcheck_fail(c, "park", "n%u granted again after its park was summoned,"
			      " before the token moved on (§3.4)", node);
}

void simcheck_park_pass(struct simcheck *c, uint32_t node, uint32_t to, uint32_t epoch,
			uint32_t seq)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	if (epoch > m->known_epoch || (epoch == m->known_epoch && seq > m->known_seq)) {
		m->known_epoch = epoch;
		m->known_seq = seq;
	}
	m->passed = true;
	m->announce = false;
	/* Our own pass to a member that left is news of it since: it took
	 * (back) the token, or will refuse it by name. */
	if (to < 64)
		m->left_since &= ~(1ull << to);
	m->visit_granted = false;
	if (m->summoned)
		m->was_summoned = true;
	m->summoned = false;
	m->hb_parked = false;
}

/* Why a parked token may have moved on in this step (§3.4): summoned, its
 * lap due, a client of its own waiting that it could not grant, a leave,
 * or a pause that ended the visit (§5.5). */
static bool park_end_explained(const struct simcheck *c, const struct simcheck_park_member *m,
			       size_t queued)
{
	return m->was_summoned || c->now >= m->walked + c->park.loss_us || m->queued > 0 ||
	       queued > 0 || m->leaving || m->pausing;
}

void simcheck_park_end(struct simcheck *c, uint32_t node, bool parked, size_t queued,
		       bool has_token)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m || !m->in_step)
		return;
	m->in_step = false;
	if (m->unannounced && !m->passed)
		simcheck_fail(c, "park", "n%u parked the token and its heartbeat does not"
			      " say PARKED (§3.4)", node);
	else if (m->was_parked && m->passed && !park_end_explained(c, m, queued))
		simcheck_fail(c, "park", "n%u moved its parked token on %" PRIu64 " ms after it"
			      " came, unsummoned, with nobody waiting (§3.4)", node,
			      (c->now - m->arrived) / 1000);
	else if (m->was_parked && parked && m->granted &&
		 c->now - m->arrived >= c->park.loss_us / 2)
		simcheck_fail(c, "park", "n%u granted from a park %" PRIu64 " ms after the token"
			      " came, past loss_timeout / 2 (§3.4)", node,
			      (c->now - m->arrived) / 1000);
	m->parked = parked;
	m->queued = queued;
	if (!has_token)
		m->summoned = m->hb_parked = false;
	/* A summoned park stays parked until the token moves; one that ended
	 * otherwise (its member alone in the ring grants as it likes, §3.3)
	 * has no summons left to honour. */
	if (!parked)
		m->summoned = false;
}

/* ---- summons ---- */

void simcheck_park_heard_leave(struct simcheck *c, uint32_t node, uint32_t from)
{
	struct simcheck_park_member *m = pm(c, node);
	if (m && from < 64)
		m->left_since |= 1ull << from;
}

void simcheck_park_heard_heartbeat(struct simcheck *c, uint32_t node, uint32_t from,
				   uint32_t epoch, uint32_t seq, bool parked)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m || from >= 64)
		return;
	/* Only news calls for a summons: a late heartbeat of a hop older
	 * than one this member passed or heard of says nothing (§3.5). */
	bool news = epoch > m->known_epoch || (epoch == m->known_epoch && seq > m->known_seq);
	if (news) {
		m->known_epoch = epoch;
		m->known_seq = seq;
	}
	m->heard = parked && news;
	m->heard_summoned = false;
	m->left_since &= ~(1ull << from); /* it speaks for a token again */
	if (!parked)
		return;
	m->heard_epoch = epoch;
	m->heard_seq = seq;
	m->heard_from = from;
}

static void want_record(struct simcheck_park_member *m, uint32_t epoch, uint32_t seq)
{
	m->want_any = true;
	m->want_epoch = epoch;
	m->want_seq = seq;
}

void simcheck_park_want(struct simcheck *c, uint32_t node, uint32_t to, uint32_t epoch,
			uint32_t seq)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	if (to < 64 && (m->left_since >> to & 1))
		simcheck_fail(c, "park", "n%u summoned n%u after n%u's LEAVE, with no park"
			      " heard from it since (§3.4)", node, to, to);
	if (m->heard && to == m->heard_from && epoch == m->heard_epoch && seq == m->heard_seq)
		m->heard_summoned = true; /* the park it last summoned changes at the step's end */
	else
		want_record(m, epoch, seq);
}

/* The park heard is new to this member when its last summons named
 * another hop (a resend of the same one may wait out its backoff). */
void simcheck_park_summons_end(struct simcheck *c, uint32_t node, size_t queued,
			       bool has_token, uint32_t epoch)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m || !m->heard)
		return;
	bool again = m->want_any && m->want_epoch == m->heard_epoch &&
		     m->want_seq == m->heard_seq;
	if (!m->heard_summoned && !again && queued > 0 && !has_token && !m->leaving &&
	    epoch == m->heard_epoch)
		simcheck_fail(c, "park", "n%u has a client waiting and heard of the park at"
			      " n%u, %" PRIu32 "/%" PRIu32 ", but did not summon it (§3.4)", node,
			      m->heard_from, m->heard_epoch, m->heard_seq);
	if (m->heard_summoned)
		want_record(m, m->heard_epoch, m->heard_seq);
	m->heard = m->heard_summoned = false;
}
