/* The restart proof (§5.3): what a starting member's epoch is worth, asked
 * of the others with EPOCH_QUERY and settled from their EPOCH_REPLYs. */
#include "core/internal.h"

/* Answers a start needs (§5.3). A member with nothing on disk (first start,
 * or a wiped state_dir) needs enough of the others that they share a member
 * other than itself with any majority that persisted an epoch: n - n/2.
 * One with a stored epoch needs a majority counting itself, n/2 others,
 * which a majority ring needs up anyway: that costs no availability and
 * catches a disk rolled back below what any of them knows. quorum = none
 * promises no majority anywhere (§6.3): a stored epoch is taken as it is,
 * and a member with none asks one other. */
size_t restart_query_needed(const struct ring_node *node)
{
	size_t n = node->layout.n;
	if (node->layout.quorum == RING_QUORUM_MAJORITY)
		return node->start_epoch ? n / 2 : n - n / 2;
	return node->start_epoch ? 0 : 1;
}

static void query_send(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	struct ring_msg m = {.type = RING_MSG_EPOCH_QUERY};
	m.u.epoch_query.nonce = node->query_nonce;
	act_send(node, up, 0, &m);
	/* Backing off: a member that cannot be proven (too few up) should not
	 * cost the others a datagram every heartbeat for ever. */
	node->query_next = now + node->query_every;
	node->query_every = min_u64(2 * node->query_every, ms(node->layout.loss_timeout_ms));
}

/* Asks every member what epoch it knows: at start, to learn the floor
 * below which our own past may hold tokens we cannot remember; later, to
 * catch up with a ring that moved further than a datagram may jump. */
void restart_query_start(struct ring_node *node, struct ring_update *up, uint64_t now,
			 bool at_start)
{
	node->query_active = true;
	node->query_at_start = at_start;
	/* Nonces grow within this life, and the driver's clock (the daemon's
	 * CLOCK_BOOTTIME) grows across restarts of the process, so answers to
	 * a previous life's queries are not taken for this one's (§5.3). It
	 * starts again near 0 at a reboot; there what keeps a previous life's
	 * answers out is that none outlives the reboot (its socket and queues
	 * are gone, and no datagram lingers in the network that long). */
	node->query_nonce = now + 1 > node->query_nonce ? now + 1 : node->query_nonce + 1;
	if (at_start)
		node->first_nonce = node->query_nonce;
	ring_set_clear(&node->replied);
	node->query_every = ms(node->layout.heartbeat_ms);
	query_send(node, up, now);
}

/* The K-th highest answer to the current query (K is 1 or 2) among those
 * within reach of BASE, or beyond it when FAR; *COUNT says how many there
 * are. 0 when there are fewer than K. */
static uint32_t reply_rank(const struct ring_node *node, uint32_t base, bool far, size_t k,
			   size_t *count)
{
	uint32_t top[2] = {0, 0};
	size_t c = 0;
	for (size_t i = 0; i < node->layout.n; i++) {
		if (!ring_set_has(&node->replied, i))
			continue;
		uint32_t e = node->reply_epoch[i];
		if (epoch_within_reach(base, e) == far)
			continue;
		c++;
		if (e > top[0]) {
			top[1] = top[0];
			top[0] = e;
		} else if (e > top[1]) {
			top[1] = e;
		}
	}
	*count = c;
	return top[k > 1 ? 1 : 0];
}

/* How many members must answer beyond reach before we may go there: two,
 * so that one forged answer moves nobody. Except on a keyed ring at the
 * start of a member with nothing on disk whose query needs only one answer
 * (a ring of two, or quorum = none): its epoch 0 says nothing about where
 * the ring is, the one other member it needs is all there is to ask, and
 * with a key nobody else can answer for it. Without the exception a wiped
 * member of such a ring is never proven once the ring is 2^16 generations
 * old; without a key, one forged answer would take it anywhere. */
static size_t far_vouchers(const struct ring_node *node)
{
	if (node->layout.keyed && node->query_at_start && node->start_epoch == 0 &&
	    restart_query_needed(node) < 2)
		return 1;
	return 2;
}

/* Where the current query's answers may take us (§4.2, §5.3): from our
 * epoch, an answer beyond reach counts only when a second member's is
 * beyond reach too; then we may reach the lower of the two highest (two
 * members vouch for it), and judge again from there. Each round climbs, so
 * there are at most n. One datagram, or one member's wild disk, therefore
 * moves nobody further than one jump, and a member that really fell
 * behind (the ring minted 2^16 generations while it was away) catches up
 * once two others answer (one, where far_vouchers says so). */
static uint32_t reply_base(const struct ring_node *node)
{
	size_t vouch = far_vouchers(node);
	uint32_t base = node->epoch;
	for (size_t round = 0; round < node->layout.n; round++) {
		size_t far;
		uint32_t next = reply_rank(node, base, true, vouch, &far);
		if (far < vouch)
			break;
		base = next;
	}
	return base;
}

/* The answers to the current query settle it once enough of them are within
 * reach of where they may take us; those beyond reach that no second member
 * vouched for are left out, and counted as the bad datagrams they are. */
static void query_settle(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	uint32_t base = reply_base(node);
	size_t have;
	uint32_t highest = reply_rank(node, base, false, 1, &have);
	if (have < restart_query_needed(node))
		return;
	node->query_active = false;
	node->query_next = now + ms(node->layout.loss_timeout_ms);
	node->floor_every = ms(node->layout.heartbeat_ms);
	node->floor_next = now + node->floor_every;
	for (size_t i = 0; i < node->layout.n; i++)
		if (ring_set_has(&node->replied, i) && !epoch_within_reach(base, node->reply_epoch[i]))
			act_bad_packet(node, up, id_of(node, i), -RING_EJUMP);
	/* At start, the highest answer: a majority that persisted an epoch
	 * shares a member with those who answered. Catching up, the second
	 * highest where there is one: one forged answer cannot move us. */
	size_t k = node->query_at_start || have < 2 ? 1 : 2;
	uint32_t floor = max_u32(reply_rank(node, base, false, k, &have), base);
	epoch_adopt(node, up, floor, 0, now);
	if (node->broken)
		return;
	/* The members whose first answer of this life was beyond reach have a
	 * floor now that it is within it (§5.3). */
	for (size_t i = 0; i < node->layout.n; i++) {
		if (ring_set_has(&node->replied, i) && !ring_set_has(&node->floor_known, i) &&
		    epoch_ok(node, node->reply_epoch[i])) {
			node->floor_from[i] = node->reply_epoch[i];
			ring_set_add(&node->floor_known, i);
		}
	}
	if (node->query_at_start) {
		/* Any epoch a majority persisted before we started is at most
		 * this; tokens of such epochs may be copies of hops our lost
		 * past accepted, so they are refused like a restart's (§5.3). */
		node->start_epoch = max_u32(node->start_epoch, floor);
		node->proven = true;
		/* Our disk holds an epoch beyond reach of every member that
		 * answered: a bad disk, or a jump nobody followed. It is not
		 * lowered (a low answer may be a peer that was away, and
		 * fences must not go back), so we stay out: our tokens are
		 * beyond everybody's reach, and a regeneration dies at us
		 * (on_election). The operator is told (operations.md). */
		if (highest && !epoch_within_reach(highest, node->epoch))
			act_log(node, up, RING_LOG_EPOCH_OUT_OF_REACH, node->epoch, highest, have);
		node->no_quorum = false;
		if (node->loss_deadline < now + 2 * ms(node->layout.heartbeat_ms))
			node->loss_deadline = now + 2 * ms(node->layout.heartbeat_ms);
	}
	act_log(node, up, RING_LOG_EPOCH_LEARNED, floor, have, node->query_at_start);
}

void restart_on_reply(struct ring_node *node, struct ring_update *up, size_t from_idx,
		      const struct ring_msg_epoch_reply *r, uint64_t now)
{
	if (from_idx >= RING_MAX_MEMBERS || node->first_nonce == 0 ||
	    r->nonce < node->first_nonce || r->nonce > node->query_nonce)
		return; /* not asked in this life */
	bool near = epoch_ok(node, r->epoch);
	/* Any answer of this life was sent after we started, so it is at
	 * least the epoch of every hop its sender sent us before (§5.3). The
	 * first one: later ones would refuse hops sent after we started. One
	 * beyond reach waits for the query to settle: a floor no token
	 * within reach could pass would shut its sender out for good. */
	if (near && !ring_set_has(&node->floor_known, from_idx)) {
		node->floor_from[from_idx] = r->epoch;
		ring_set_add(&node->floor_known, from_idx);
	}
	if (!node->query_active || r->nonce != node->query_nonce) {
		/* A late answer still teaches: once proven, an epoch a member
		 * knows that the first answers did not is one we must not mint
		 * again. Within reach only (§4.2), like any datagram's. */
		if (!near)
			act_bad_packet(node, up, id_of(node, from_idx), -RING_EJUMP);
		else if (node->proven)
			epoch_adopt(node, up, r->epoch, id_of(node, from_idx), now);
		return;
	}
	ring_set_add(&node->replied, from_idx);
	node->reply_epoch[from_idx] = r->epoch;
	query_settle(node, up, now);
}

/* "What epoch do you know?" (§5.3): the one we persisted. */
void restart_on_query(struct ring_node *node, struct ring_update *up, uint16_t from,
		      const struct ring_msg_epoch_query *q)
{
	struct ring_msg r = {.type = RING_MSG_EPOCH_REPLY};
	r.u.epoch_reply.nonce = q->nonce;
	r.u.epoch_reply.epoch = node->epoch;
	act_send(node, up, from, &r);
}

void restart_query_due(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	query_send(node, up, now);
}

/* Floors still unknown after the query settled (§5.3, §3.5). Asked a few
 * times, backing off to loss_timeout_ms: a member that stays down costs
 * nothing after that, and its first token is judged as before, by asking
 * then. */
#define RING_FLOOR_ASKS 8
#define RING_FLOOR_PER_STEP 8

bool restart_floors_missing(const struct ring_node *node)
{
	if (node->query_active || node->first_nonce == 0 || node->floor_asks >= RING_FLOOR_ASKS)
		return false;
	for (size_t i = 0; i < node->layout.n; i++)
		if (i != node->me && !ring_set_has(&node->floor_known, i))
			return true;
	return false;
}

void restart_floor_due(struct ring_node *node, struct ring_update *up, uint64_t now)
{
	struct ring_msg m = {.type = RING_MSG_EPOCH_QUERY};
	m.u.epoch_query.nonce = node->query_nonce;
	/* A few a step, so that a step's actions stay bounded (§7): the
	 * next round asks the next ones. */
	size_t sent = 0, n = node->layout.n;
	for (size_t k = 0; k < n && sent < RING_FLOOR_PER_STEP; k++) {
		size_t i = (node->floor_cursor + k) % n;
		if (i == node->me || ring_set_has(&node->floor_known, i))
			continue;
		act_send(node, up, id_of(node, i), &m);
		sent++;
		node->floor_cursor = (i + 1) % n;
	}
	node->floor_asks++;
	node->floor_next = now + node->floor_every;
	node->floor_every = min_u64(2 * node->floor_every, ms(node->layout.loss_timeout_ms));
}

/* A member we have no floor of yet speaks (a heartbeat, a WANT, ...): it is
 * up, and may send us a token before long, which we could take only once
 * we know its floor. Ask it now, at most once a heartbeat period; one that
 * stays down is never asked. */
void restart_ask_floor(struct ring_node *node, struct ring_update *up, size_t idx, uint64_t now)
{
	if (idx == node->me || idx >= RING_MAX_MEMBERS || node->first_nonce == 0 ||
	    ring_set_has(&node->floor_known, idx) ||
	    (node->floor_asked[idx] && now - node->floor_asked[idx] < ms(node->layout.heartbeat_ms)))
		return;
	node->floor_asked[idx] = now;
	struct ring_msg m = {.type = RING_MSG_EPOCH_QUERY};
	m.u.epoch_query.nonce = node->query_nonce;
	act_send(node, up, id_of(node, idx), &m);
}
