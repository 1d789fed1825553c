/* The local clients: the queue of requests, the grant with its fencing
 * token, the lease and its renewals, try-locks, releases and denials. */
#include "core/internal.h"

static bool queue_has(const struct ring_node *node, uint64_t client)
{
	for (size_t k = 0; k < node->q_len; k++)
		if (node->queue[(node->q_head + k) % RING_QUEUE_MAX] == client)
			return true;
	return false;
}

static uint64_t queue_pop(struct ring_node *node)
{
	RING_ASSERT(node->q_len > 0 && node->q_len <= RING_QUEUE_MAX);
	uint64_t c = node->queue[node->q_head];
	node->q_head = (node->q_head + 1) % RING_QUEUE_MAX;
	node->q_len--;
	return c;
}

/* Keeps the requests for which KEEP says so, in order. */
static void queue_filter(struct ring_node *node, bool (*keep)(uint64_t c, bool is_try, uint64_t arg),
			 uint64_t arg)
{
	size_t out = 0;
	for (size_t k = 0; k < node->q_len; k++) {
		size_t from = (node->q_head + k) % RING_QUEUE_MAX;
		if (!keep(node->queue[from], node->queue_try[from], arg))
			continue;
		size_t to = (node->q_head + out++) % RING_QUEUE_MAX;
		node->queue[to] = node->queue[from];
		node->queue_try[to] = node->queue_try[from];
	}
	node->q_len = out;
}

static bool not_client(uint64_t c, bool is_try, uint64_t client)
{
	(void)is_try;
	return c != client;
}

static void queue_remove(struct ring_node *node, uint64_t client)
{
	queue_filter(node, not_client, client);
	RING_ASSERT(!queue_has(node, client));
}

static void queue_push(struct ring_node *node, uint64_t client, bool is_try)
{
	RING_ASSERT(node->q_len < RING_QUEUE_MAX);
	size_t at = (node->q_head + node->q_len) % RING_QUEUE_MAX;
	node->queue[at] = client;
	node->queue_try[at] = is_try;
	node->q_len++;
}

/* When the grant ends unless renewed again: a lease from NOW, never past
 * max_hold_ms from the grant, and never more than a lease past the last
 * time a majority is known to have heard us (contact.c, §3.3): a holder
 * cut off from the ring renews nothing, and loses the grant as a fresh one
 * would. At the grant that time is now. */
static uint64_t lease_end(const struct ring_node *node, uint64_t now)
{
	uint64_t end = contact_time(node, now) + ms(node->layout.lease_ms);
	if (node->layout.max_hold_ms)
		end = min_u64(end, node->grant_started + ms(node->layout.max_hold_ms));
	return end;
}

/* Ends the grant: REVOKE to its client, logged as EV. */
static void end_grant(struct ring_node *node, struct ring_update *up, enum ring_log_event ev)
{
	struct ring_action *a = act_push(node, up, RING_ACTION_REVOKE);
	if (a) {
		a->u.revoke.client = node->grant_client;
		a->u.revoke.fence = node->grant_fence;
	}
	act_log(node, up, ev, node->grant_fence, node->grant_client, 0);
	node->granted = false;
}

void clients_revoke(struct ring_node *node, struct ring_update *up)
{
	if (node->granted)
		end_grant(node, up, RING_LOG_CS_EXIT);
}

void clients_grant(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	/* One grant at a time, of the token we hold in the epoch we know,
	 * once per visit (§3.3). An unproven member may grant (§5.3: it
	 * mints nothing); the token's epoch is one we persisted either way. */
	RING_ASSERT(node->phase == PHASE_HELD && !node->granted && !node->visit_granted);
	RING_ASSERT(node->token.epoch == node->epoch);
	uint64_t before = node->last_fence;
	uint64_t client = queue_pop(node);
	node->token.counter++;
	node->granted = true;
	node->grant_client = client;
	node->grant_fence = ring_fence(node->token.epoch, node->token.counter);
	node->grant_started = now;
	node->lease_deadline = lease_end(node, now);
	/* Fences only grow (I1): strictly above every one this member granted. */
	RING_ASSERT(node->grant_fence > before);
	node->last_fence = node->grant_fence;
	node->visit_granted = true;
	node->visit_wanted = true;
	node->visit_served = true;
	node->resting = false;
	node->counters.cs_entries++;
	struct ring_action *a = act_push(node, up, RING_ACTION_GRANT);
	if (a) {
		a->u.grant.client = client;
		a->u.grant.fence = node->grant_fence;
		a->u.grant.epoch = node->token.epoch;
	}
	act_log(node, up, RING_LOG_CS_ENTER, node->grant_fence, node->token.epoch, client);
}

static void deny(struct ring_node *node, struct ring_update *up, uint64_t client, int reason)
{
	struct ring_action *a = act_push(node, up, RING_ACTION_DENY);
	if (a) {
		a->u.deny.client = client;
		a->u.deny.reason = reason;
	}
}

/* Why CLIENT may not queue, or 0. */
static int acquire_refused(const struct ring_node *node, uint64_t client)
{
	if (node->leaving || node->left)
		return -RING_ELEAVING;
	if (client == 0 || (node->granted && node->grant_client == client) ||
	    queue_has(node, client))
		return -RING_EBUSY;
	if (node->q_len == RING_QUEUE_MAX)
		return -RING_EFULL;
	return 0;
}

static void enqueue(struct ring_node *node, struct ring_update *up, uint64_t client,
		    bool is_try, uint64_t now)
{
	int why = acquire_refused(node, client);
	if (why) {
		deny(node, up, client, why);
		return;
	}
	if (node->q_len == 0)
		node->summoned_all = false; /* a wait begins: its first summons goes to all */
	queue_push(node, client, is_try);
	visit_serve(node, up, now);
	want_summon(node, up, now);
}

void clients_on_acquire(struct ring_node *node, struct ring_update *up, uint64_t client,
			uint64_t now)
{
	enqueue(node, up, client, false, now);
}

/* A try-lock in the sense of flock -n: refused while the region is taken
 * or asked for, here, by a member that summoned our parked token, or (as
 * the holder's heartbeats say) elsewhere;
 * otherwise an ordinary request, which summons a parked token: a free
 * lock is taken wherever the token rests. */
void clients_on_try(struct ring_node *node, struct ring_update *up, uint64_t client,
		    uint64_t now)
{
	bool busy = node->granted || node->q_len > 0 || node->summoned ||
		    (node->phase == PHASE_NONE && now < node->busy_elsewhere_until);
	if (busy && acquire_refused(node, client) == 0) {
		deny(node, up, client, -RING_ECONFLICT);
		return;
	}
	enqueue(node, up, client, true, now);
}

static bool not_try(uint64_t c, bool is_try, uint64_t arg)
{
	(void)c;
	(void)arg;
	return !is_try;
}

/* A heartbeat says another member's client holds or waits (§3.3): the
 * region is taken, so every TRY still waiting here is refused now, and
 * new ones for as long as the holder would heartbeat twice. */
void clients_busy_elsewhere(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	node->busy_elsewhere_until = now + 2 * ms(node->layout.heartbeat_ms);
	for (size_t k = 0; k < node->q_len; k++) {
		size_t at = (node->q_head + k) % RING_QUEUE_MAX;
		if (node->queue_try[at])
			deny(node, up, node->queue[at], -RING_ECONFLICT);
	}
	queue_filter(node, not_try, 0);
}

/* RENEW: the grant's lease starts again from now, within max_hold_ms.
 * Nothing else changes: the token stays, heartbeats go on, and the fence
 * is the one granted (a renewal is no new grant). */
void clients_on_renew(struct ring_node *node, struct ring_update *up, uint64_t client,
		      uint64_t now)
{
	if (!node->granted || node->grant_client != client) {
		deny(node, up, client, -RING_ENOTHOLDING);
		return;
	}
	/* Every heartbeat of a grant asks for acks; a renewal asks at once
	 * too when none went out for a quarter lease (a heartbeat_ms close to
	 * the lease): a client renewing every third of a lease then always
	 * finds a proof that young, and one renewing in a loop costs the ring
	 * at most four heartbeats a lease. */
	if (node->phase == PHASE_HELD && now >= node->hb_base + ms(node->layout.lease_ms) / 4)
		act_send_heartbeat(node, up, now);
	uint64_t end = lease_end(node, now);
	if (end > node->lease_deadline)
		node->lease_deadline = end;
	struct ring_action *a = act_push(node, up, RING_ACTION_RENEWED);
	if (a) {
		a->u.renewed.client = client;
		a->u.renewed.fence = node->grant_fence;
		a->u.renewed.deadline_us = node->lease_deadline;
	}
}

void clients_on_release(struct ring_node *node, struct ring_update *up, uint64_t client,
			uint64_t now)
{
	if (node->granted && node->grant_client == client) {
		act_log(node, up, RING_LOG_CS_EXIT, node->grant_fence, client, 0);
		node->granted = false;
		visit_serve(node, up, now);
	} else {
		queue_remove(node, client);
	}
}

/* After every step: the region came free here (a release, a lease ran
 * out, a pause revoked) while the token stays, and our last heartbeat said
 * BUSY. Say so now, so that a TRY elsewhere is not refused on it for two
 * heartbeat periods (§3.3); at most four times a heartbeat period, so a
 * client that takes and lets go in a loop makes no storm. */
void clients_busy_cleared(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (!node->busy_sent || node->phase != PHASE_HELD || node->granted || node->q_len > 0 ||
	    node->summoned)
		return;
	uint64_t soonest = node->hb_base + ms(node->layout.heartbeat_ms) / 4;
	if (now >= soonest)
		act_send_heartbeat(node, up, now);
	else if (node->hb_deadline > soonest)
		node->hb_deadline = soonest;
}

void clients_check_lease(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->granted && now >= node->lease_deadline)
		end_grant(node, up, RING_LOG_LEASE_EXPIRED);
}
