/* What a step returns: the actions (send, persist, log, fatal) pushed into
 * the update, the sends every section shares, and the log events' table. */
#include "core/internal.h"

static const struct ring_log_info log_infos[] = {
#define RING_LOG_INFO_(name, str, verbose, a, b, c) {str, verbose, {a, b, c}},
	RING_LOG_EVENTS(RING_LOG_INFO_)
#undef RING_LOG_INFO_
};

const struct ring_log_info *ring_log_info(enum ring_log_event ev)
{
	static const struct ring_log_info unknown = {"unknown", false, {NULL, NULL, NULL}};
	if ((size_t)ev >= RING_LOG_COUNT_)
		return &unknown;
	return &log_infos[ev];
}

static size_t update_cap(const struct ring_update *up)
{
	return up->cap == 0 || up->cap > RING_UPDATE_MAX ? RING_UPDATE_MAX : up->cap;
}

/* Replaces everything UP holds with one FATAL: a member that cannot do
 * what it decided must do nothing at all, and stop (§7). */
void act_fatal(struct ring_node *node, struct ring_update *up, int reason)
{
	node->broken = true;
	up->n = 1;
	memset(&up->action[0], 0, sizeof up->action[0]);
	up->action[0].type = RING_ACTION_FATAL;
	up->action[0].u.fatal.reason = reason;
}

/* The next action slot. RING_UPDATE_MAX (96) is more than twice what the
 * longest step we know of needs (about forty, §7), but that is an estimate,
 * not a proof, and a driver may give less room (update.cap). Running out
 * must not be silent, since a lost PERSIST would let a member act on an
 * epoch it never stored: the update becomes one FATAL and the member is
 * broken, so this and every later push of the step return NULL and add
 * nothing to it. */
struct ring_action *act_push(struct ring_node *node, struct ring_update *up,
			     enum ring_action_type type)
{
	if (node->broken)
		return NULL;
	if (up->n >= update_cap(up)) {
		act_fatal(node, up, -RING_EOVERFLOW);
		return NULL;
	}
	struct ring_action *a = &up->action[up->n++];
	memset(a, 0, sizeof *a);
	a->type = type;
	return a;
}

void act_log(struct ring_node *node, struct ring_update *up,
	     enum ring_log_event ev, uint64_t a, uint64_t b, uint64_t c)
{
	struct ring_action *act = act_push(node, up, RING_ACTION_LOG);
	if (!act)
		return;
	act->u.log.event = ev;
	act->u.log.field[0] = a;
	act->u.log.field[1] = b;
	act->u.log.field[2] = c;
}

void act_bad_packet(struct ring_node *node, struct ring_update *up, uint16_t from, int err)
{
	node->counters.bad_packets++;
	act_log(node, up, RING_LOG_BAD_PACKET, from, (uint64_t)(err < 0 ? -err : err), 0);
}

/* A datagram of another wire version: a member still on the old binary (or
 * already on the new one) during an upgrade. Its own counter and line, not
 * a bad packet, so that an operator sees at once what is wrong; like any
 * undecodable datagram it goes no further, so the sender is never taken
 * for a live member and never half-joins (PROTOCOL.md §2). */
void act_version_mismatch(struct ring_node *node, struct ring_update *up, uint16_t from,
			  int theirs)
{
	node->counters.version_mismatches++;
	act_log(node, up, RING_LOG_VERSION_MISMATCH, from, (uint64_t)theirs, RING_WIRE_VERSION);
}

void act_send(struct ring_node *node, struct ring_update *up, uint16_t to,
	      struct ring_msg *msg)
{
	msg->from = node->id;
	msg->to = to;
	msg->fingerprint = node->fingerprint;
	struct ring_action *a = act_push(node, up, RING_ACTION_SEND);
	if (!a)
		return;
	int len = ring_wire_encode(msg, a->u.send.buf, sizeof a->u.send.buf);
	if (len < 0) {
		up->n--; /* cannot happen: every message fits RING_WIRE_MAX */
		return;
	}
	a->u.send.to = to;
	a->u.send.len = (uint16_t)len;
}

/* Returns false when the member is broken: the epoch was not stored, so it
 * must not be acted on (the update is one FATAL by now). */
bool act_persist(struct ring_node *node, struct ring_update *up, uint32_t epoch)
{
	/* An epoch only grows: one persisted below would let us mint again
	 * what we minted (I3). */
	RING_ASSERT(epoch >= node->epoch);
	struct ring_action *a = act_push(node, up, RING_ACTION_PERSIST);
	if (!a)
		return false;
	a->u.persist.epoch = epoch;
	node->epoch = epoch;
	return true;
}

void act_send_ack(struct ring_node *node, struct ring_update *up, uint16_t to,
		  uint32_t epoch, uint32_t seq, uint32_t flags)
{
	struct ring_msg m = {.type = RING_MSG_TOKEN_ACK};
	m.u.token_ack.epoch = epoch;
	m.u.token_ack.seq = seq;
	m.u.token_ack.known_epoch = node->epoch;
	m.u.token_ack.flags = flags;
	act_send(node, up, to, &m);
}

void act_send_join(struct ring_node *node, struct ring_update *up, uint16_t to,
		   uint64_t now)
{
	if (node->leaving || now < node->join_next)
		return;
	node->join_next = now + ms(node->layout.heartbeat_ms);
	struct ring_msg m = {.type = RING_MSG_JOIN};
	m.u.join.epoch = node->epoch;
	act_send(node, up, to, &m);
}

/* "I will not take this pass" (§5.3, §5.4): a restarted member asks to be
 * taken in (JOIN), a leaving one says it is gone (LEAVE). Naming the exact
 * hop is what lets the sender act at once: a duplicate or an old refusal
 * cannot match a later pass, since every pass has a new seq or epoch. */
void act_send_refusal(struct ring_node *node, struct ring_update *up, uint16_t to,
		      const struct ring_msg_token *t)
{
	struct ring_msg m;
	if (node->leaving) {
		m = (struct ring_msg){.type = RING_MSG_LEAVE};
		m.u.leave.epoch = node->epoch;
		m.u.leave.accepted = node->leave_accepted;
		m.u.leave.refused = (struct ring_hop){t->epoch, t->seq};
	} else {
		/* The new epoch must be above the floor that refused it too:
		 * refused for a floor above our own epoch (a forged or
		 * mistaken answer can only set one within reach, §5.3), the
		 * sender's take-back would otherwise mint below it and be
		 * refused again, one epoch per round for as long as it lasts. */
		int ti = ring_layout_index(&node->layout, to);
		uint32_t above = node->epoch;
		if (ti >= 0 && ring_set_has(&node->floor_known, (size_t)ti))
			above = max_u32(above, node->floor_from[ti]);
		m = (struct ring_msg){.type = RING_MSG_JOIN};
		m.u.join.epoch = above;
		m.u.join.refused = (struct ring_hop){t->epoch, t->seq};
	}
	act_send(node, up, to, &m);
}

void act_send_heartbeat(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	struct ring_msg m = {.type = RING_MSG_HEARTBEAT};
	m.u.heartbeat.epoch = node->token.epoch;
	m.u.heartbeat.seq = node->token.seq;
	m.u.heartbeat.counter = node->token.counter;
	/* Summoned, the park is ending: it draws no more summons, and the
	 * member that summoned it waits, so the region is taken (§3.3). */
	node->busy_sent = node->granted || node->q_len > 0 || node->summoned;
	m.u.heartbeat.flags = (node->parked && !node->summoned ? RING_HB_PARKED : 0) |
			      (node->busy_sent ? RING_HB_BUSY : 0) |
			      (node->granted ? RING_HB_GRANTED : 0);
	/* Acks name the beat they answer, so a late one vouches only for the
	 * time its beat went out (contact.c). */
	m.u.heartbeat.beat = contact_beat(node, now);
	m.u.heartbeat.alive = node->token.alive;
	m.u.heartbeat.want = node->token.want;
	act_send(node, up, 0, &m);
	node->hb_base = now;
	node->hb_deadline = now + ms(node->layout.heartbeat_ms);
}
