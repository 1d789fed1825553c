/* The elections' checks (docs/PROTOCOL.md §6, issue 28): what each member started, carried,
 * acked and won, judged from the datagrams it sent, the election it stepped on, its log and
 * its status, never from the core's state. §6.1: every election has a fresh round, starts at
 * most once a loss timeout, is carried once per round (a retransmission is only acked), with
 * max_epoch raised to the carrier's epoch; a regeneration mints above the max_epoch that came
 * back and names its participants alive. §6.2: a holder ends an election (rule 1, re-epoching
 * above a newer max_epoch), a member that heard the token within loss_timeout / 2 ends it
 * (rule 2), an initiator wins only its latest round, within an election's duration and with
 * no pause since (rule 3), and a pause ends what it carried; on a clean network nobody
 * regenerates beside a live token. §6.3: a regeneration and every token need a quorum, and a
 * member carrying a no-quorum election reports no-quorum. */
#include "sim/simcheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static struct simcheck_elect_member *em(struct simcheck *c, uint32_t node)
{
	return c->el.on && node < c->cfg.n ? &c->el.m[node] : NULL;
}

void simcheck_elect_config(struct simcheck *c, const struct simcheck_elect_config *cfg)
{
	struct simcheck_elect *el = &c->el;
	el->on = true;
	el->loss_us = cfg->loss_us;
	el->ack_us = cfg->ack_us;
	el->retries = cfg->retries;
	el->quorum = cfg->quorum;
	/* How long an election may take: the loss timeout plus a full ring
	 * of hops with their retries (§6.2 rule 3, from the configuration). */
	el->timeout_us = cfg->loss_us + (uint64_t)c->cfg.n * (cfg->retries + 1) * cfg->ack_us;
}

void simcheck_elect_life(struct simcheck *c, uint32_t node)
{
	if (node < SIMCHECK_MAX_N)
		memset(&c->el.m[node], 0, sizeof c->el.m[node]);
}

void simcheck_elect_leaving(struct simcheck *c, uint32_t node)
{
	struct simcheck_elect_member *m = em(c, node);
	if (m)
		m->leaving = true;
}

void simcheck_elect_rx(struct simcheck *c, uint32_t node, const struct simcheck_election *e)
{
	struct simcheck_elect_member *m = em(c, node);
	if (!m)
		return;
	m->rx = true;
	m->rx_init = e->initiator;
	m->rx_max = e->max_epoch;
	m->rx_parts = e->participants;
}

/* A round is taken in anew (not a retransmission, §6.1) when it is another
 * round than the last one taken in from that initiator, or that one was
 * taken in an election's duration ago or more. */
void simcheck_elect_acked(struct simcheck *c, uint32_t node, uint32_t initiator, uint32_t round)
{
	struct simcheck_elect_member *m = em(c, node);
	if (!m || initiator >= c->cfg.n || initiator == node || m->acks_n >= 4)
		return;
	struct simcheck_elect_rec *r = &m->rec[initiator];
	bool anew = r->round != round || c->now >= r->handled_at + c->el.timeout_us;
	if (anew) {
		r->round = round;
		r->handled_at = c->now;
	}
	m->acks[m->acks_n].init = initiator;
	m->acks[m->acks_n].round = round;
	m->acks[m->acks_n].anew = anew;
	m->acks[m->acks_n].carried = false;
	m->acks_n++;
}

void simcheck_elect_ack_rx(struct simcheck *c, uint32_t node, uint32_t initiator, uint32_t round)
{
	struct simcheck_elect_member *m = em(c, node);
	if (m && m->pend && m->pend_init == initiator && m->pend_round == round)
		m->pend = false;
}

/* The ack sent in this step for INIT's ROUND, or NULL: a send in the step
 * that took the election in is its carry, any other a retransmission. */
static struct simcheck_elect_ack *step_ack(struct simcheck_elect_member *m, uint32_t init,
					   uint32_t round)
{
	for (uint32_t k = 0; k < m->acks_n; k++)
		if (m->acks[k].init == init && m->acks[k].round == round)
			return &m->acks[k];
	return NULL;
}

void simcheck_elect_sent(struct simcheck *c, uint32_t node, uint32_t to,
			 const struct simcheck_election *e)
{
	struct simcheck_elect_member *m = em(c, node);
	if (!m)
		return;
	(void)to;
	m->last = *e;
	m->last_any = true;
	struct simcheck_elect_ack *a = e->initiator == node ? NULL
				       : step_ack(m, e->initiator, e->round);
	if (a && !a->carried) {
		a->carried = true;
		/* The forward still waiting for its ack is resent by its timer,
		 * in whatever step it fires: that is no second carry. */
		if (!a->anew && m->pend && m->pend_init == e->initiator && m->pend_round == e->round)
			return;
		if (!a->anew) {
			simcheck_fail(c, "election",
				      "n%u carried n%u's round %" PRIu32 " again, a retransmission"
				      " of one it took in less than an election's duration ago (§6.1)",
				      node, e->initiator, e->round);
			return;
		}
		if (m->carry_n < 4)
			m->carry[m->carry_n++] = *e;
		m->pend = true;
		m->pend_init = e->initiator;
		m->pend_round = e->round;
		m->fwd_any = true;
		m->fwd_init = e->initiator;
		m->fwd_round = e->round;
		m->fwd_dead = false;
		return;
	}
	if (m->fwd_any && m->fwd_dead && m->fwd_init == e->initiator && m->fwd_round == e->round)
		simcheck_fail(c, "election",
			      "n%u sent n%u's election round %" PRIu32 " on after a pause it"
			      " detected: a pause ends what it started or carried (§6.2 rule 3)",
			      node, e->initiator, e->round);
}

static void elect_start(struct simcheck *c, uint32_t node, struct simcheck_elect_member *m,
			uint32_t round)
{
	if (m->started && round == m->start_round)
		simcheck_fail(c, "election",
			      "n%u started round %" PRIu32 " again: every election an initiator"
			      " starts has a fresh round (§6.1)", node, round);
	else if (m->started && c->now - m->start_at < c->el.loss_us)
		simcheck_fail(c, "election",
			      "n%u started an election %.3f ms after its last, sooner than"
			      " loss_timeout_ms (%.0f ms)", node, (double)(c->now - m->start_at) / 1e3,
			      (double)c->el.loss_us / 1e3);
	if (!c->failed && m->win_any && c->now < m->win_until)
		simcheck_fail(c, "election",
			      "n%u started an election %.3f ms before the end of the one it"
			      " carried: a carrier defers its loss timer (§6.1)", node,
			      (double)(m->win_until - c->now) / 1e3);
	m->started = true;
	m->start_round = round;
	m->start_at = c->now;
	m->paused_since_start = false;
	m->fwd_any = true;
	m->fwd_init = node;
	m->fwd_round = round;
	m->fwd_dead = false;
}

/* On a clean network (I2's precondition) an election never regenerates
 * while a token lives: it passes every member, and the holder ends it
 * (§6.2: "why exactly one member regenerates"). */
static void elect_needless(struct simcheck *c, uint32_t node)
{
	if (!c->i2)
		return;
	for (uint32_t j = 0; j < c->cfg.n; j++)
		if (j != node && c->m[j].up && c->m[j].have_status && c->m[j].st.has_token) {
			simcheck_fail(c, "election",
				      "n%u regenerated on a clean network while n%u holds a live"
				      " token of epoch %" PRIu32 " (§6.2)", node, j,
				      c->m[j].st.token_epoch);
			return;
		}
}

/* The election that completes is the one the member steps on, or, when
 * the ring skipped round to it, the one it last sent. */
static void elect_won(struct simcheck *c, uint32_t node, struct simcheck_elect_member *m,
		      uint32_t epoch, uint32_t round, uint32_t have)
{
	const struct simcheck_elect *el = &c->el;
	bool rx = m->rx && m->rx_init == node;
	uint32_t max = rx ? m->rx_max : m->last_any ? m->last.max_epoch : 0;
	uint64_t parts = rx ? m->rx_parts : m->last_any ? m->last.participants : 0;
	if (!m->started || round != m->start_round)
		simcheck_fail(c, "election",
			      "n%u won round %" PRIu32 ", not the round of its latest election"
			      " (%" PRIu32 ", §6.1)", node, round, m->start_round);
	else if (c->now - m->start_at > el->timeout_us)
		simcheck_fail(c, "election",
			      "n%u won an election %.3f ms after it started, longer than an"
			      " election may take (%.3f ms, §6.2 rule 3)", node,
			      (double)(c->now - m->start_at) / 1e3, (double)el->timeout_us / 1e3);
	else if (m->paused_since_start)
		simcheck_fail(c, "election",
			      "n%u won an election it started before a pause it detected"
			      " (§6.2 rule 3)", node);
	else if (epoch <= max)
		simcheck_fail(c, "election",
			      "n%u regenerated epoch %" PRIu32 ", not above the max_epoch %" PRIu32
			      " its election came back with (§6.1)", node, epoch, max);
	else if (el->quorum && have < el->quorum)
		simcheck_fail(c, "quorum",
			      "n%u regenerated with %" PRIu32 " participants, fewer than the"
			      " quorum %zu (§6.3)", node, have, el->quorum);
	else
		elect_needless(c, node);
	m->regen_hb = true;
	m->regen_parts = parts;
}

void simcheck_elect_log(struct simcheck *c, uint32_t node, enum simcheck_elog kind, uint32_t a,
			uint32_t b, uint32_t have)
{
	struct simcheck_elect_member *m = em(c, node);
	if (!m)
		return;
	switch (kind) {
	case SIMCHECK_ELECTION_START:
		elect_start(c, node, m, a);
		break;
	case SIMCHECK_ELECTION_WON:
		elect_won(c, node, m, a, b, have);
		break;
	case SIMCHECK_TOKEN_REGEN:
		break;
	case SIMCHECK_PAUSE_DETECTED:
		m->paused_since_start = true;
		m->fwd_dead = true;
		m->pend = false;
		break;
	case SIMCHECK_TOKEN_TAKEN:
		m->took_token = true;
		break;
	}
}

static void mask_text(uint64_t mask, size_t n, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < n && i < 64 && at + 4 < cap; i++)
		if (mask >> i & 1)
			at += (size_t)snprintf(buf + at, cap - at, "%s%zu", at ? "," : "", i);
}

/* A regeneration heartbeats at once, naming its participants alive (§6.1). */
void simcheck_elect_heartbeat(struct simcheck *c, uint32_t node, uint64_t alive)
{
	struct simcheck_elect_member *m = em(c, node);
	if (!m || !m->regen_hb)
		return;
	m->regen_hb = false;
	if (alive != m->regen_parts) {
		char a[200], p[200];
		mask_text(alive, c->cfg.n, a, sizeof a);
		mask_text(m->regen_parts, c->cfg.n, p, sizeof p);
		simcheck_fail(c, "election",
			      "n%u regenerated a token naming {%s} alive, its election's"
			      " participants were {%s} (§6.1)", node, a, p);
	}
}

/* §6.3: a skip or a leave that would leave fewer than a quorum alive drops
 * the token, and a regeneration needs a quorum of participants. */
void simcheck_elect_token(struct simcheck *c, uint32_t node, size_t alive_n)
{
	if (em(c, node) && c->el.quorum && alive_n < c->el.quorum)
		simcheck_fail(c, "quorum",
			      "n%u passed a token naming %zu members alive, fewer than the"
			      " quorum %zu (§6.3)", node, alive_n, c->el.quorum);
}

/* What a carry in this step owes, judged on the status after it: rule 1
 * (a holder carries none), rule 2 (heard the token within loss_timeout /
 * 2: the member's own status said so before the step), §6.1's max_epoch
 * and §6.3's no-quorum. */
static void elect_carry_check(struct simcheck *c, uint32_t node,
			      const struct simcheck_elect_member *m, const struct simcheck_election *e,
			      const struct simcheck_elect_status *st)
{
	uint64_t half = c->el.loss_us / 2;
	/* The status counts whole milliseconds: the token was heard no
	 * earlier than one millisecond before what it says. */
	uint64_t heard = m->have_st && m->st_seen_ms != UINT64_MAX &&
			 (m->st_seen_ms + 1) * 1000 <= m->st_at
				 ? m->st_at - (m->st_seen_ms + 1) * 1000
				 : 0;
	if (st->has_token)
		simcheck_fail(c, "election",
			      "n%u carried n%u's election round %" PRIu32 " while it holds the"
			      " token (§6.2 rule 1)", node, e->initiator, e->round);
	else if (heard && c->now - heard < half)
		simcheck_fail(c, "election",
			      "n%u carried n%u's election round %" PRIu32 " having heard the token"
			      " %.3f ms before, within loss_timeout_ms / 2 (§6.2 rule 2)", node,
			      e->initiator, e->round, (double)(c->now - heard) / 1e3);
	else if (e->max_epoch < st->epoch)
		simcheck_fail(c, "election",
			      "n%u carried an election with max_epoch %" PRIu32 " below its own"
			      " epoch %" PRIu32 " (§6.1)", node, e->max_epoch, st->epoch);
	else if (e->no_quorum && !st->no_quorum)
		simcheck_fail(c, "quorum",
			      "n%u carried n%u's no-quorum election and does not report"
			      " no-quorum (§6.3)", node, e->initiator);
}

/* §6.1, Chang-Roberts: a member that carried a higher initiator's election
 * carries no lower one for that election's duration, and defers its own
 * loss timer as long. The window ends early where the core's may: the
 * member heard or took the token (its status left the election) or learned
 * a newer epoch. */
static void elect_window(struct simcheck *c, uint32_t node, struct simcheck_elect_member *m,
			 const struct simcheck_elect_status *st)
{
	for (uint32_t k = 0; k < m->carry_n && !c->failed; k++) {
		uint32_t id = m->carry[k].initiator_id;
		bool open = m->win_any && c->now < m->win_until;
		if (open && id < m->win_best)
			simcheck_fail(c, "election",
				      "n%u carried n%u's election within the duration of n%u's,"
				      " a higher initiator's it carried (§6.1)", node,
				      m->carry[k].initiator, m->win_best_idx);
		if (!open || id > m->win_best) {
			m->win_best = id;
			m->win_best_idx = m->carry[k].initiator;
		}
		m->win_until = c->now + c->el.timeout_us;
		m->win_any = true;
	}
	/* A token taken in the step ends it too, even one dropped at once
	 * (no quorum left): the core forgets what it carried. */
	if (m->took_token || st->has_token || !(st->electing || st->no_quorum) ||
	    (m->have_st && st->epoch != m->st_epoch))
		m->win_any = false;
}

/* A member that takes an election in, holds no token, has not heard one
 * for loss_timeout / 2, has no election of its own and carried none within
 * an election's duration (its status before the step said idle) carries it:
 * nothing else may swallow it (§6.1, §6.2). */
static void elect_must_carry(struct simcheck *c, uint32_t node, const struct simcheck_elect_member *m)
{
	if (m->leaving || !m->have_st || m->st_has_token || !m->st_idle ||
	    (m->st_seen_ms != UINT64_MAX && m->st_seen_ms * 1000 < c->el.loss_us / 2))
		return;
	for (uint32_t k = 0; k < m->acks_n; k++)
		if (m->acks[k].anew && !m->acks[k].carried) {
			simcheck_fail(c, "election",
				      "n%u took in n%u's election round %" PRIu32 ", idle and deaf to"
				      " the token, and neither carried nor ended it (§6.1)", node,
				      m->acks[k].init, m->acks[k].round);
			return;
		}
}

void simcheck_elect_step(struct simcheck *c, uint32_t node, const struct simcheck_elect_status *st)
{
	struct simcheck_elect_member *m = em(c, node);
	if (!m)
		return;
	for (uint32_t k = 0; k < m->carry_n && !c->failed; k++)
		elect_carry_check(c, node, m, &m->carry[k], st);
	/* Rule 1: a holder that takes in an election which saw a newer epoch
	 * than its token's re-epochs above it (or drops the token, unproven). */
	bool anew = false;
	for (uint32_t k = 0; k < m->acks_n; k++)
		anew = anew || (m->acks[k].anew && m->acks[k].init == m->rx_init);
	if (!c->failed && m->rx && anew && !m->leaving && st->token_held &&
	    st->token_epoch < m->rx_max)
		simcheck_fail(c, "election",
			      "holder n%u kept its token of epoch %" PRIu32 " under an election"
			      " that saw epoch %" PRIu32 " (§6.2 rule 1)", node, st->token_epoch,
			      m->rx_max);
	if (!c->failed)
		elect_must_carry(c, node, m);
	if (!c->failed)
		elect_window(c, node, m, st);
	m->rx = false;
	m->took_token = false;
	m->acks_n = m->carry_n = 0;
	m->have_st = true;
	m->st_at = st->at_us;
	m->st_seen_ms = st->seen_ms;
	m->st_epoch = st->epoch;
	m->st_has_token = st->has_token;
	m->st_idle = !st->has_token && !st->electing && !st->no_quorum;
}
