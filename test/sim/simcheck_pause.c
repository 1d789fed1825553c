/* The pause rules of PROTOCOL.md §5.5 as a checker of a history (simcheck.h):
 * a member learns it was stopped only from its clock, by an event that comes
 * more than loss_timeout_ms / 2 after the deadline it last asked for. In that
 * step, before anything else, it revokes its grant, and for 2 x heartbeat_ms
 * it grants nothing (a token in its socket may be an old one). The checker
 * keeps the deadline each step returned and judges the next step's time, its
 * grants and the status after it; it never reads the core's own record. */
#include "sim/simcheck.h"

#include <inttypes.h>

void simcheck_pause_setup(struct simcheck *c, uint64_t loss_us, uint64_t heartbeat_us)
{
	c->pause.limit_us = loss_us / 2;
	c->pause.quarantine_us = 2 * heartbeat_us;
	for (size_t i = 0; i < SIMCHECK_MAX_N; i++)
		simcheck_pause_start(c, (uint32_t)i);
}

void simcheck_pause_start(struct simcheck *c, uint32_t node)
{
	if (node >= SIMCHECK_MAX_N)
		return;
	struct simcheck_pause_member *m = &c->pause.m[node];
	m->armed = SIMCHECK_NEVER;
	m->detecting = false;
	m->quiet_until = 0; /* a new process: its quarantine died with the old one */
	m->woke_at = SIMCHECK_NEVER;
	m->token_step = false;
}

/* Strictly later than the limit: the core may count the limit itself as a
 * pause or not, and the check must hold either way. */
void simcheck_pause_step(struct simcheck *c, uint32_t node)
{
	if (node >= c->cfg.n || node >= SIMCHECK_MAX_N || !c->pause.limit_us)
		return;
	struct simcheck_pause_member *m = &c->pause.m[node];
	m->detecting = m->armed != SIMCHECK_NEVER && c->now > m->armed &&
		       c->now - m->armed > c->pause.limit_us;
	if (m->detecting)
		m->quiet_until = c->now + c->pause.quarantine_us;
}

void simcheck_pause_woken(struct simcheck *c, uint32_t node, uint32_t epoch)
{
	if (node >= c->cfg.n || node >= SIMCHECK_MAX_N)
		return;
	c->pause.m[node].woke_at = c->now;
	c->pause.m[node].woke_epoch = epoch;
}

void simcheck_pause_token(struct simcheck *c, uint32_t node)
{
	if (node < c->cfg.n && node < SIMCHECK_MAX_N)
		c->pause.m[node].token_step = true;
}

void simcheck_pause_grant(struct simcheck *c, uint32_t node, uint32_t epoch)
{
	if (node >= c->cfg.n || node >= SIMCHECK_MAX_N || !c->pause.limit_us)
		return;
	const struct simcheck_pause_member *m = &c->pause.m[node];
	if (m->detecting)
		simcheck_fail(c, "pause", "n%u granted in the step that came %" PRIu64
			      " ms past its deadline (a pause, §5.5)", node,
			      (c->now - m->armed) / 1000);
	else if (c->now < m->quiet_until)
		simcheck_fail(c, "pause", "n%u granted %" PRIu64 " us into the %" PRIu64
			      " ms quarantine after a pause (§5.5)", node,
			      c->now + c->pause.quarantine_us - m->quiet_until,
			      c->pause.quarantine_us / 1000);
	else if (m->token_step && c->now == m->woke_at && epoch < m->woke_epoch)
		simcheck_fail(c, "pause", "n%u woke to a token and a heartbeat of epoch %" PRIu32
			      " and granted under the token's older epoch %" PRIu32 " (§5.5:"
			      " tokens last)", node, m->woke_epoch, epoch);
}

void simcheck_pause_end(struct simcheck *c, uint32_t node, bool granted, uint64_t deadline)
{
	if (node >= c->cfg.n || node >= SIMCHECK_MAX_N || !c->pause.limit_us)
		return;
	struct simcheck_pause_member *m = &c->pause.m[node];
	if (m->detecting && granted)
		simcheck_fail(c, "pause", "n%u still has a client in the region after the step"
			      " that came %" PRIu64 " ms past its deadline (§5.5: a pause"
			      " revokes the grant)", node, (c->now - m->armed) / 1000);
	m->detecting = m->token_step = false;
	m->armed = deadline;
}
