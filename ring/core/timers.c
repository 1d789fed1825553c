/* Time: one table of every timer of the core, which drives both what fires
 * in a step and the next deadline the step returns; pause detection. */
#include "core/internal.h"

/* A deadline that fires far too late means this process was stopped (§5.5):
 * whatever it granted may have been given to someone else meanwhile. */
void timers_check_pause(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	uint64_t limit = ms(node->layout.loss_timeout_ms) / 2;
	if (node->armed_deadline == NEVER || now <= node->armed_deadline ||
	    now - node->armed_deadline < limit)
		return;
	uint64_t late = now - node->armed_deadline;
	node->counters.pauses++;
	act_log(node, up, RING_LOG_PAUSE_DETECTED, late / 1000, 0, 0);
	clients_revoke(node, up);
	/* Until a fresh heartbeat can reach us, grant nothing: a token waiting
	 * in our socket may be an old one (§5.5). */
	node->quarantine_until = now + 2 * ms(node->layout.heartbeat_ms);
	if (node->phase == PHASE_HELD)
		node->visit_granted = true;
	/* An election we started or carried before the pause saw the ring as
	 * it was then; completing it now could mint below what was granted
	 * meanwhile. */
	node->elect_active = false;
	node->fwd.active = false;
}

/* When the held token's visit has something to do by itself: a rest or a
 * quarantine that ends, a parked token's lap. visit_serve() decides what. */
static uint64_t visit_at(const struct ring_node *node)
{
	uint64_t d = NEVER;
	if (node->phase != PHASE_HELD)
		return d;
	if (node->resting)
		d = min_u64(d, node->rest_deadline);
	if (node->parked && !node->granted)
		d = min_u64(d, park_lap_at(node));
	if (!node->granted && node->q_len > 0 && node->quarantine_until > 0)
		d = min_u64(d, node->quarantine_until);
	return d;
}

static bool phase_none_waiting(const struct ring_node *node)
{
	return node->phase == PHASE_NONE && !node->leaving && !node->left;
}

static uint64_t timer_lease(const struct ring_node *n)
{
	return n->granted ? n->lease_deadline : NEVER;
}

static uint64_t timer_pass(const struct ring_node *n)
{
	return n->phase == PHASE_PASSING ? n->ack_deadline : NEVER;
}

static uint64_t timer_fwd(const struct ring_node *n)
{
	return n->fwd.active ? n->fwd.deadline : NEVER;
}

static uint64_t timer_hb(const struct ring_node *n)
{
	return visit_heartbeats(n) ? n->hb_deadline : NEVER;
}

static uint64_t timer_query(const struct ring_node *n)
{
	return n->query_active ? n->query_next : NEVER;
}

static uint64_t timer_floor(const struct ring_node *n)
{
	return restart_floors_missing(n) ? n->floor_next : NEVER;
}

static uint64_t timer_leave(const struct ring_node *n)
{
	return n->leaving && !n->left ? n->leave_deadline : NEVER;
}
static uint64_t timer_summon(const struct ring_node *n)
{
	return want_waiting(n) && n->holder_known && n->holder_at != n->me && !n->want_seen
		       ? n->summon_next
		       : NEVER;
}
static uint64_t timer_no_quorum(const struct ring_node *n)
{
	return phase_none_waiting(n) && !n->proven ? n->loss_deadline : NEVER;
}
static uint64_t timer_loss(const struct ring_node *n)
{
	return phase_none_waiting(n) && n->proven ? n->loss_deadline : NEVER;
}

/* Every timer of the core, in the order they fire within a step. AT says
 * when it is due (NEVER: not armed), for next_deadline; FIRE runs once it
 * is, or at every step when EVERY (serve and summon look for themselves).
 * A lease is checked first of all, before the event (ring_node_step). */
static const struct core_timer {
	uint64_t (*at)(const struct ring_node *node);
	void (*fire)(struct ring_node *node, struct ring_update *up, uint64_t now);
	bool every;
} timers[] = {
	{timer_lease, NULL, false},
	{timer_pass, visit_ack_timeout, false},
	{timer_fwd, election_ack_timeout, false},
	{visit_at, visit_serve, true},
	{timer_hb, visit_heartbeat_due, false},
	{timer_query, restart_query_due, false},
	{timer_floor, restart_floor_due, false},
	{timer_summon, want_summon, true},
	{timer_leave, members_leave_timeout, false},
	{timer_no_quorum, election_no_quorum_timeout, false},
	{timer_loss, election_loss_timeout, false},
};

void timers_run(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	for (size_t k = 0; k < sizeof timers / sizeof timers[0]; k++) {
		const struct core_timer *t = &timers[k];
		if (t->fire && (t->every || now >= t->at(node)))
			t->fire(node, up, now);
	}
}

uint64_t timers_next_deadline(const struct ring_node *node)
{
	uint64_t d = NEVER;
	if (node->left)
		return d;
	for (size_t k = 0; k < sizeof timers / sizeof timers[0]; k++)
		d = min_u64(d, timers[k].at(node));
	return d;
}
