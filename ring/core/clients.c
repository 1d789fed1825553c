/* The local clients: the queue of requests, the grant with its fencing
 * token, the lease, releases and denials. */
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

static void queue_remove(struct ring_node *node, uint64_t client)
{
	size_t out = 0;
	for (size_t k = 0; k < node->q_len; k++) {
		uint64_t c = node->queue[(node->q_head + k) % RING_QUEUE_MAX];
		if (c != client)
			node->queue[(node->q_head + out++) % RING_QUEUE_MAX] = c;
	}
	node->q_len = out;
	RING_ASSERT(!queue_has(node, client));
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
	node->lease_deadline = now + ms(node->layout.lease_ms);
	/* Fences only grow (I1): strictly above every one this member granted. */
	RING_ASSERT(node->grant_fence > before);
	node->last_fence = node->grant_fence;
	node->visit_granted = true;
	node->visit_wanted = true;
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

void clients_on_acquire(struct ring_node *node, struct ring_update *up, uint64_t client,
			uint64_t now)
{
	if (node->leaving || node->left) {
		deny(node, up, client, -RING_ELEAVING);
		return;
	}
	if (client == 0 || (node->granted && node->grant_client == client) ||
	    queue_has(node, client)) {
		deny(node, up, client, -RING_EBUSY);
		return;
	}
	if (node->q_len == RING_QUEUE_MAX) {
		deny(node, up, client, -RING_EFULL);
		return;
	}
	node->queue[(node->q_head + node->q_len) % RING_QUEUE_MAX] = client;
	node->q_len++;
	visit_serve(node, up, now);
	park_summon(node, up, now);
}

void clients_on_release(struct ring_node *node, struct ring_update *up, uint64_t client,
			uint64_t now)
{
	if (node->granted && node->grant_client == client) {
		act_log(node, up, RING_LOG_CS_EXIT, node->grant_fence, client, 0);
		node->granted = false;
		visit_serve(node, up, now);
		return;
	}
	queue_remove(node, client);
}

void clients_check_lease(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->granted && now >= node->lease_deadline)
		end_grant(node, up, RING_LOG_LEASE_EXPIRED);
}
