/* The parking rules of PROTOCOL.md §3.4 as a checker of a history (simcheck.h):
 * what a parked token may do, judged from the log lines and datagrams of each
 * step of a member, in the order the step made them, and its status after.
 * A park is announced at once by a PARKED heartbeat, and happens only after a
 * whole rotation found nobody waiting; a parked token grants only within
 * loss_timeout_ms / 2 of its arrival; it moves on only when summoned by a
 * WANT naming that very park from a member the park counts, when its lap is
 * due, when a client of its own waits (it cannot grant it yet), or when its
 * member leaves; once summoned it grants nothing more before it moves. */
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
	c->park.unwanted_hops = 0;
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
	m->passed = m->granted = m->park_logged = false;
	m->pausing = pausing;
}

/* A regenerated token is held with idle 0 and counts its first pass: as
 * if one unwanted hop had been made (§3.4: idle counts passes). */
void simcheck_park_arrive(struct simcheck *c, uint32_t node, bool regenerated)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	m->arrived = c->now;
	/* A new visit: a park it held before is gone (a newer token came
	 * while the heartbeat of its epoch was lost), whatever it passes now. */
	m->summoned = m->visit_granted = m->was_parked = m->alone = false;
	if (regenerated)
		c->park.unwanted_hops = 1;
	else
		c->park.unwanted_hops++;
}

void simcheck_park_logged(struct simcheck *c, uint32_t node)
{
	struct simcheck_park_member *m = pm(c, node);
	if (m)
		m->park_logged = true;
}

static unsigned popcount64(uint64_t x)
{
	unsigned k = 0;
	for (; x; x &= x - 1)
		k++;
	return k;
}

/* The heartbeat after a park's log line is its announcement; its alive set
 * is the rotation the park needed (I2's one token: the hops are its). */
void simcheck_park_heartbeat(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq,
			     bool parked, uint64_t alive)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	if (m->park_logged) {
		m->park_logged = false;
		if (!parked) {
			simcheck_fail(c, "park", "n%u parked the token and its heartbeat does not"
				      " say PARKED (§3.4)", node);
			return;
		}
		unsigned need = popcount64(alive);
		if (c->i2 && c->park.unwanted_hops < need)
			simcheck_fail(c, "park", "n%u parked the token %" PRIu64 " hops after it"
				      " was last wanted, not a rotation of %u (§3.4)", node,
				      c->park.unwanted_hops, need);
	}
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
	if (!m->hb_parked || epoch != m->hb_epoch || seq != m->hb_seq)
		simcheck_fail(c, "park", "n%u unparked on a WANT for %" PRIu32 "/%" PRIu32
			      ", not its park %" PRIu32 "/%" PRIu32 " (§3.4)", node, epoch, seq,
			      m->hb_epoch, m->hb_seq);
	else if (from >= 64 || !(m->hb_alive >> from & 1))
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

void simcheck_park_pass(struct simcheck *c, uint32_t node)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m)
		return;
	m->passed = true;
	/* A visit that granted, and a park that ends, send the token on
	 * wanted (idle 0); a leaver's hand-over and a pause's end of visit
	 * may count on, and are let count on here. */
	if (m->visit_granted || (m->was_parked && !m->leaving && !m->pausing))
		c->park.unwanted_hops = 0;
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
	return m->was_summoned || c->now >= m->arrived + c->park.loss_us || m->queued > 0 ||
	       queued > 0 || m->leaving || m->pausing;
}

void simcheck_park_end(struct simcheck *c, uint32_t node, bool parked, size_t queued,
		       bool has_token)
{
	struct simcheck_park_member *m = pm(c, node);
	if (!m || !m->in_step)
		return;
	m->in_step = false;
	if (m->park_logged)
		simcheck_fail(c, "park", "n%u parked the token without a heartbeat saying so"
			      " (§3.4)", node);
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
	m->heard = parked;
	m->heard_summoned = false;
	if (!parked)
		return;
	m->left_since &= ~(1ull << from);
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
