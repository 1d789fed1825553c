/* The hop of a visit (PROTOCOL.md §3.2) and the size of a step (§7) as a
 * checker of a history (simcheck.h): from the datagrams and log lines of
 * each step of a member, in order, and its status after. A receipt is acked
 * before the token can move on, so a crash between the two cannot leave a
 * pass alive behind a skip; a pass ends only on the ack naming its hop, so a
 * late ack of an earlier one cannot end a pass that was lost; a step admits
 * at most eight joiners (the rest wait for a later one). */
#include "sim/simcheck.h"

#include <inttypes.h>

#define SIMCHECK_JOINS_PER_STEP 8 /* PROTOCOL.md §7 */

static struct simcheck_visit_member *vm(struct simcheck *c, uint32_t node)
{
	return node < c->cfg.n && node < SIMCHECK_MAX_N ? &c->visit[node] : NULL;
}

void simcheck_visit_start(struct simcheck *c, uint32_t node)
{
	struct simcheck_visit_member *m = vm(c, node);
	if (m)
		*m = (struct simcheck_visit_member){0};
}

void simcheck_visit_step(struct simcheck *c, uint32_t node)
{
	struct simcheck_visit_member *m = vm(c, node);
	if (!m)
		return;
	m->in_step = true;
	m->token_sent = m->ack_heard = false;
	m->rejoins = 0;
}

void simcheck_visit_heard_ack(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq,
			      bool stale)
{
	struct simcheck_visit_member *m = vm(c, node);
	if (!m)
		return;
	m->ack_heard = true;
	m->ack_epoch = epoch;
	m->ack_seq = seq;
	m->ack_stale = stale;
}

void simcheck_visit_sent(struct simcheck *c, uint32_t node, bool token)
{
	struct simcheck_visit_member *m = vm(c, node);
	if (!m)
		return;
	if (token)
		m->token_sent = true;
	else if (m->token_sent)
		simcheck_fail(c, "visit", "n%u sent a token before the ack of its step: a"
			      " receipt is acked before the token moves on (§3.2)", node);
}

void simcheck_visit_pass(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq)
{
	struct simcheck_visit_member *m = vm(c, node);
	if (!m)
		return;
	m->pass_epoch = epoch;
	m->pass_seq = seq;
}

void simcheck_visit_rejoin(struct simcheck *c, uint32_t node)
{
	struct simcheck_visit_member *m = vm(c, node);
	/* A take-back readmits its refuser by its own epoch (§3.2), and the
	 * pass after it may then admit a full step's worth. */
	if (m && ++m->rejoins == SIMCHECK_JOINS_PER_STEP + 2)
		simcheck_fail(c, "visit", "n%u readmitted more than %d joiners in one step (§7)",
			      node, SIMCHECK_JOINS_PER_STEP + 1);
}

/* A pass that was awaiting its ack and is over after a step whose event
 * was an ack: that ack named the hop, or said the token is stale, or the
 * step also gave the pass up (its ack deadline fired: a skip). */
void simcheck_visit_end(struct simcheck *c, uint32_t node, bool passing, bool gave_up)
{
	struct simcheck_visit_member *m = vm(c, node);
	if (!m || !m->in_step)
		return;
	m->in_step = false;
	if (m->passing && !passing && !gave_up && m->ack_heard && !m->ack_stale &&
	    (m->ack_epoch != m->pass_epoch || m->ack_seq != m->pass_seq))
		simcheck_fail(c, "visit", "n%u ended its pass of %" PRIu32 "/%" PRIu32 " on an ack"
			      " of %" PRIu32 "/%" PRIu32 " (§3.2)", node, m->pass_epoch, m->pass_seq,
			      m->ack_epoch, m->ack_seq);
	m->passing = passing;
}
