/* The protocol core's front door: ring_node_step takes one event with the
 * time, hands it to the section that owns it, runs the timers and checks
 * what a member can check about itself; the life cycle and the status. */
#include "core/internal.h"

static const char *const state_names[] = {
#define RING_STATE_NAME_(name, str) str,
	RING_STATES(RING_STATE_NAME_)
#undef RING_STATE_NAME_
};

const char *ring_state_name(enum ring_state state)
{
	if ((size_t)state >= sizeof state_names / sizeof state_names[0])
		return "unknown";
	return state_names[state];
}

/* Admission (§2): what every datagram must pass before its type is looked
 * at. It must decode, come from a member other than us under its own id, be
 * of our configuration, be for us (or for everyone), and carry epochs
 * within reach (§4.2). Returns the sender's ring index, or -1 when the
 * datagram goes no further (counted and logged here). */
static int admit(struct ring_node *node, struct ring_update *up, const struct ring_event *ev,
		 struct ring_msg *m)
{
	uint64_t now = ev->now_us;
	uint16_t from = ev->u.datagram.from_id;
	int err = ring_wire_decode(ev->u.datagram.buf, ev->u.datagram.len, m);
	if (err == -RING_EVERSION) {
		act_version_mismatch(node, up, from,
				     ring_wire_peek_version(ev->u.datagram.buf, ev->u.datagram.len));
		return -1;
	}
	if (err < 0) {
		act_bad_packet(node, up, from, err);
		return -1;
	}
	int idx = ring_layout_index(&node->layout, from);
	if (from == 0 || idx < 0) {
		act_bad_packet(node, up, from, -RING_ENOTMEMBER);
		return -1;
	}
	if (m->fingerprint != node->fingerprint) {
		node->counters.config_mismatches++;
		act_log(node, up, RING_LOG_CONFIG_MISMATCH, from, 0, 0);
		return -1;
	}
	if (m->from != from || from == node->id) {
		act_bad_packet(node, up, from, -RING_ESPOOF);
		return -1;
	}
	if (m->to != 0 && m->to != node->id) {
		act_bad_packet(node, up, from, -RING_ENOTFORME);
		return -1;
	}
	if (!epoch_msg_ok(node, m)) {
		act_bad_packet(node, up, from, -RING_EJUMP);
		/* Forged, or the ring moved on while we were away: the others
		 * will tell which (§5.3). */
		if (!node->query_active && now >= node->query_next)
			restart_query_start(node, up, now, false);
		return -1;
	}
	return idx;
}

static void on_datagram(struct ring_node *node, struct ring_update *up,
			const struct ring_event *ev)
{
	uint64_t now = ev->now_us;
	uint16_t from = ev->u.datagram.from_id;
	struct ring_msg m;
	int idx = admit(node, up, ev, &m);
	if (idx < 0 || node->left)
		return;
	if (m.type != RING_MSG_EPOCH_QUERY && m.type != RING_MSG_EPOCH_REPLY && m.type != RING_MSG_TOKEN)
		restart_ask_floor(node, up, (size_t)idx, now);
	switch (m.type) {
	case RING_MSG_TOKEN:
		visit_on_token(node, up, from, &m.u.token, now);
		break;
	case RING_MSG_TOKEN_ACK:
		visit_on_ack(node, up, from, &m.u.token_ack, now);
		break;
	case RING_MSG_HEARTBEAT:
		visit_on_heartbeat(node, up, from, &m.u.heartbeat, now);
		break;
	case RING_MSG_ELECTION:
		election_on_msg(node, up, from, &m.u.election, now);
		break;
	case RING_MSG_ELECTION_ACK:
		election_on_ack(node, (size_t)idx, &m.u.election_ack);
		break;
	case RING_MSG_JOIN:
		members_on_join(node, up, (size_t)idx, &m.u.join, now);
		break;
	case RING_MSG_LEAVE:
		members_on_leave(node, up, (size_t)idx, &m.u.leave, now);
		break;
	case RING_MSG_EPOCH_QUERY:
		restart_on_query(node, up, from, &m.u.epoch_query);
		break;
	case RING_MSG_EPOCH_REPLY:
		restart_on_reply(node, up, (size_t)idx, &m.u.epoch_reply, now);
		break;
	case RING_MSG_WANT:
		want_on_msg(node, up, (size_t)idx, &m.u.want, now);
		break;
	case RING_MSG_HEARTBEAT_ACK:
		contact_on_ack(node, (size_t)idx, &m.u.heartbeat_ack);
		break;
	case RING_MSG_STATUS_REQ:
	case RING_MSG_STATUS_RESP:
	case RING_MSG_ADVICE_REQ:
	case RING_MSG_ADVICE_RESP:
	case RING_MSG_HOLD_REQ:
	case RING_MSG_HOLD_RESP:
		break; /* status, advice and hold are the driver's to answer */
	}
}

/* What one member can check about itself after every step: one phase at a
 * time, a grant only of a token held here, an epoch never below the one
 * it started from, a token never newer than the epoch it knows. */
static void check_self(const struct ring_node *node)
{
	RING_ASSERT(!node->granted || node->phase == PHASE_HELD);
	RING_ASSERT(!node->parked || node->phase == PHASE_HELD);
	RING_ASSERT(!node->granted || node->grant_fence == node->last_fence);
	RING_ASSERT(node->phase == PHASE_NONE || node->token.epoch <= node->epoch);
	RING_ASSERT(node->epoch >= node->start_epoch);
	RING_ASSERT(node->q_len <= RING_QUEUE_MAX && node->q_head < RING_QUEUE_MAX);
	RING_ASSERT(node->phase != PHASE_PASSING || node->pass_to != node->me);
}

/* START: the member begins its life; once only. */
static void start(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	if (node->started)
		return;
	node->started = true;
	/* Rounds should differ from a previous life's. The daemon's
	 * clock (CLOCK_BOOTTIME) keeps growing across restarts of the
	 * process, but starts again near 0 when the host reboots, so a
	 * round may repeat then. That costs liveness at most: a round
	 * only tells an election's hops and acks from another's (§6.1);
	 * what a regeneration mints is bounded by epochs and the proof
	 * of §5.3, not by rounds. */
	node->elect_round = (uint32_t)(now / 1000);
	/* Listen for a live ring briefly before calling an election. */
	node->loss_deadline = now + 2 * ms(node->layout.heartbeat_ms);
	/* Whatever the disk says, learn what the others know first: the
	 * disk may have been wiped or restored from a backup (§5.3). */
	if (restart_query_needed(node) == 0) {
		node->proven = true;
		node->first_nonce = node->query_nonce = now + 1;
	} else {
		restart_query_start(node, up, now, true);
	}
}

void ring_node_step(struct ring_node *node, const struct ring_event *ev,
		    struct ring_update *up)
{
	uint64_t now = ev->now_us;
	up->n = 0;
	if (node->broken) {
		/* Stays dead: its state no longer matches what it told the world. */
		act_fatal(node, up, -RING_EOVERFLOW);
		up->deadline_us = NEVER;
		return;
	}
	node->joins_this_step = 0;
	if (node->started) {
		/* Before anything else: a grant that outlived its lease or a
		 * pause ends here (SPEC: pause_detected revokes first). */
		timers_check_pause(node, up, now);
		clients_check_lease(node, up, now);
	}
	switch (ev->type) {
	case RING_EVENT_START:
		start(node, up, now);
		break;
	case RING_EVENT_TICK:
		break;
	case RING_EVENT_DATAGRAM:
		on_datagram(node, up, ev);
		break;
	case RING_EVENT_ACQUIRE:
		clients_on_acquire(node, up, ev->u.client.client, now);
		break;
	case RING_EVENT_RELEASE:
		clients_on_release(node, up, ev->u.client.client, now);
		break;
	case RING_EVENT_RENEW:
		clients_on_renew(node, up, ev->u.client.client, now);
		break;
	case RING_EVENT_TRY:
		clients_on_try(node, up, ev->u.client.client, now);
		break;
	case RING_EVENT_LEAVE:
		members_on_leave_request(node, up, now);
		break;
	case RING_EVENT_DROP_TOKEN:
		/* A fault drill (ringctl inject drop-token): nobody holds the
		 * token any more and the ring must find out by itself. */
		if (node->phase != PHASE_NONE)
			epoch_drop_token(node, up, now);
		break;
	}
	if (node->started && !node->broken) {
		timers_run(node, up, now);
		clients_busy_cleared(node, up, now);
	}
	/* A leaving member is done once the token is no longer its to pass. */
	if (node->leaving && node->phase == PHASE_NONE && !node->broken)
		members_finish_leave(node, up);
	up->deadline_us = node->started && !node->broken ? timers_next_deadline(node) : NEVER;
	node->armed_deadline = up->deadline_us;
	if (!node->broken)
		check_self(node);
}

struct ring_node *ring_node_new(const struct ring_layout *layout, uint16_t id,
				uint32_t stored_epoch, int *err)
{
	int idx = ring_layout_index(layout, id);
	if (idx < 0) {
		*err = -RING_ENOTMEMBER;
		return NULL;
	}
	struct ring_node *node = calloc(1, sizeof *node);
	if (!node) {
		*err = -RING_ENOMEM;
		return NULL;
	}
	node->layout = *layout;
	node->fingerprint = layout->fingerprint;
	node->id = id;
	node->me = (size_t)idx;
	node->quorum = ring_layout_quorum(layout);
	node->epoch = stored_epoch;
	node->start_epoch = stored_epoch;
	node->armed_deadline = NEVER;
	for (size_t i = 0; i < layout->n; i++)
		ring_set_add(&node->alive_view, i);
	*err = 0;
	return node;
}

void ring_node_free(struct ring_node *node)
{
	free(node);
}

void ring_node_status(const struct ring_node *node, uint64_t now_us,
		      struct ring_status *st)
{
	memset(st, 0, sizeof *st);
	st->node = node->id;
	st->epoch = node->epoch;
	st->fence = node->last_fence;
	st->has_token = node->phase != PHASE_NONE;
	st->token_held = node->phase == PHASE_HELD;
	st->parked = st->token_held && node->parked;
	st->summoned = st->parked && node->summoned;
	st->token_epoch = st->has_token ? node->token.epoch : 0;
	if (st->has_token)
		st->want = node->token.want;
	st->alive = st->has_token ? node->token.alive : node->alive_view;
	st->successor = id_of(node, next_in(node, &st->alive, node->me));
	st->token_seen_ms_ago = node->heard_ever && now_us >= node->last_heard
					? (now_us - node->last_heard) / 1000
					: UINT64_MAX;
	st->granted = node->granted;
	st->grant_client = node->granted ? node->grant_client : 0;
	st->grant_held_ms = node->granted && now_us >= node->grant_started
				    ? (now_us - node->grant_started) / 1000
				    : 0;
	st->queued = node->q_len;
	st->counters = node->counters;
	/* Holding means here, not yet passed: a member awaiting the ack of its
	 * pass (has_token) is no longer where the token is. */
	if (st->token_held)
		st->state = RING_STATE_HOLDING;
	else if (node->no_quorum)
		st->state = RING_STATE_NO_QUORUM;
	else if (node->elect_active || now_us < node->participated_until)
		st->state = RING_STATE_ELECTING;
	else if (node->q_len > 0)
		st->state = RING_STATE_WAITING;
	else
		st->state = RING_STATE_IDLE;
}

int ring_node_rx_rank(const uint8_t *buf, size_t len)
{
	return ring_wire_peek_type(buf, len) == RING_MSG_TOKEN ? 1 : 0;
}
