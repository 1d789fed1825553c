/* Membership and hand-over as checks of a history (simcheck.h, issue 28): the rules of
 * docs/PROTOCOL.md §3.2, §5.3 and §5.4 that hold at every moment of every run, whatever
 * the faults, judged from what members sent and received, the leaves they were told,
 * the hops they accepted and their statuses. How a member gives up a pass (a skip, a
 * take-back, a leaver's refusal), what a JOIN and a LEAVE it heard do to its next
 * pass, what a leaving member may still do, how often a member asks to be let in, and
 * one alive set per epoch. Nothing here reads the core's state. */
#include "sim/simcheck.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A datagram whose epoch is this many generations above what the receiver
 * knew may be one it refuses unread (§4.2, a jump of 2^16): such a JOIN or
 * LEAVE is judged by nobody, in either direction. */
#define FAR_GENS 0x8000u
/* Records of §5.3-5.4 last 2 x loss_timeout_ms; one this close to its end
 * may have expired at the step that judges it. */
#define EDGE_US 1000u

void simcheck_memb_init(struct simcheck_memb *b, size_t n, uint64_t heartbeat_us,
			uint64_t loss_us, uint64_t ack_us, uint32_t retries)
{
	memset(b, 0, sizeof *b);
	b->n = n > SIMCHECK_MAX_N ? SIMCHECK_MAX_N : n;
	b->heartbeat_us = heartbeat_us;
	b->loss_us = loss_us;
	b->ack_us = ack_us;
	b->retries = retries;
	b->epoch_sets = true;
	for (size_t i = 0; i < SIMCHECK_MAX_N; i++)
		b->m[i].step_leave_from = -1;
}

void simcheck_memb_free(struct simcheck_memb *b)
{
	free(b->set_key);
	free(b->set_val);
	b->set_key = b->set_val = NULL;
	b->set_cap = b->set_n = 0;
}

static struct simcheck_memb_node *node_of(struct simcheck_memb *b, uint32_t node)
{
	return node < b->n ? &b->m[node] : NULL;
}

void simcheck_memb_start(struct simcheck_memb *b, uint32_t node)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m)
		return;
	memset(m, 0, sizeof *m);
	m->up = true;
	m->step_leave_from = -1;
}

void simcheck_memb_stop(struct simcheck_memb *b, uint32_t node)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (m)
		m->up = false;
}

void simcheck_memb_proven(struct simcheck_memb *b, uint32_t node)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (m)
		m->proven = true;
}

void simcheck_memb_disk_damaged(struct simcheck_memb *b)
{
	b->epoch_sets = false;
}

static void forget_pending(struct simcheck_memb_node *m)
{
	memset(m->join_at, 0, sizeof m->join_at);
	memset(m->leave_heard_at, 0, sizeof m->leave_heard_at);
}

/* NODE's pass is gone from it, and it learned no newer epoch: it gave the
 * pass up and dropped the token (it may not mint, or too few are left).
 * Only as a give-up may (giveup_check), or at its leave deadline. */
static void vanish_check(struct simcheck *c, struct simcheck_memb *b, uint32_t node)
{
	const struct simcheck_memb_node *m = &b->m[node];
	const struct simcheck_memb_pass *p = &m->pass;
	if (p->answered || (m->leaving && m->step_at >= m->leave_at + b->leave_us))
		return;
	if (p->refused_at ? m->step_at < p->refused_at + b->ack_us : p->sends < b->retries + 1)
		simcheck_fail(c, "handover", "n%u's pass %" PRIu32 ":%" PRIu32 " to n%u is gone "
			      "after %u sends in %.3f ms, unanswered%s, and no newer epoch came: "
			      "only a skip or a refusal ends a pass (§3.2)", node, p->epoch, p->seq,
			      p->to, p->sends, (double)(m->step_at - p->sent_at) / 1e3,
			      p->refused_at ? " for an ack timeout after its refusal" : "");
}

/* The pass is followed only while its sender is passing it throughout;
 * once the token is gone from it (acked, dropped), so are the JOINs and
 * LEAVEs it had not applied to a pass: the token they applied to is gone,
 * and the next one may already say otherwise. */
void simcheck_memb_status(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			  bool has_token, bool held, uint32_t epoch)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m)
		return;
	if (m->has_token && !has_token && m->pass.epoch && epoch == m->pass.epoch)
		vanish_check(c, b, node);
	if ((m->has_token || m->took) && !has_token) {
		memset(&m->pass, 0, sizeof m->pass);
		forget_pending(m);
	}
	/* Holding it, not passing: the pass is over (a skip that left it
	 * alone), and an ack that comes now is nobody's. */
	if (held)
		memset(&m->pass, 0, sizeof m->pass);
	m->has_token = has_token;
	m->took = false;
}

void simcheck_memb_step(struct simcheck_memb *b, uint32_t node, uint64_t now, int from,
			bool leave)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m)
		return;
	m->step_leave_from = leave ? from : -1;
	m->step_at = now;
}

/* ---- a leaving member (§5.4) ---- */

void simcheck_memb_leave(struct simcheck *c, struct simcheck_memb *b, uint32_t node)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m || m->leaving)
		return;
	m->leaving = true;
	m->leave_at = c->now;
}

void simcheck_memb_leave_step(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			      uint32_t clients_in_cs)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (m && m->leaving && clients_in_cs)
		simcheck_fail(c, "leave", "n%u was told to leave and %u of its clients are still "
			      "in the critical region: a leaving member revokes its grant first "
			      "(§5.4)", node, clients_in_cs);
}

void simcheck_memb_leave_due(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			     bool left)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (m && m->leaving && !left && b->leave_us && m->step_at > m->leave_at + b->leave_us)
		simcheck_fail(c, "leave", "n%u is still leaving %.3f ms after it was told to: past "
			      "n x (retries + 1) x ack_timeout_ms + 1 s (%.3f ms) it goes (§5.4)",
			      node, (double)(m->step_at - m->leave_at) / 1e3,
			      (double)b->leave_us / 1e3);
}

void simcheck_memb_grant(struct simcheck *c, struct simcheck_memb *b, uint32_t node)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (m && m->leaving)
		simcheck_fail(c, "leave", "n%u granted %.3f ms after it was told to leave (§5.4)",
			      node, (double)(c->now - m->leave_at) / 1e3);
}

void simcheck_memb_token_recv(struct simcheck *c, struct simcheck_memb *b, uint32_t node)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m)
		return;
	if (m->leaving)
		simcheck_fail(c, "leave", "n%u accepted a hop %.3f ms after it was told to leave: "
			      "a leaving member refuses every new pass (§5.4)", node,
			      (double)(c->now - m->leave_at) / 1e3);
	/* A token taken: the pass before it is over, and what was pending
	 * is applied to this one; if it had a token already, that one may
	 * have used them up, and the new one says nothing of them. */
	memset(&m->pass, 0, sizeof m->pass);
	if (m->has_token || m->took)
		forget_pending(m);
	m->took = true;
}

/* ---- JOINs (§5.3) ---- */

void simcheck_memb_send_join(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			     bool refusal)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m || refusal)
		return; /* a refusal answers one pass: it is the pass's budget */
	uint64_t at = m->step_at; /* a slow fsync sends it later than it was decided */
	if (m->join_last && at + 1 < m->join_last + b->heartbeat_us)
		simcheck_fail(c, "liveness", "n%u asked to join again %.3f ms after its last JOIN: "
			      "at most one a heartbeat_ms (%.0f ms, §5.3)", node,
			      (double)(at + 1 - m->join_last) / 1e3, (double)b->heartbeat_us / 1e3);
	m->join_last = at + 1;
}

static bool far_above(const struct simcheck *c, uint32_t node, uint32_t epoch)
{
	uint32_t known = node < c->cfg.n ? c->m[node].last_epoch : 0;
	return (epoch >> 8) >= (known >> 8) + FAR_GENS;
}

void simcheck_memb_recv_join(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			     uint32_t from, uint32_t epoch, uint32_t ref_e, uint32_t ref_s)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m || from >= b->n)
		return;
	if (far_above(c, node, epoch)) {
		m->join_at[from] = m->leave_heard_at[from] = 0;
		return;
	}
	if (m->leaving)
		return; /* a leaving member takes nobody in */
	/* A JOIN supersedes an earlier LEAVE of the same member. */
	m->leave_heard_at[from] = 0;
	if (!m->join_at[from] || epoch < m->join_epoch[from])
		m->join_epoch[from] = epoch;
	m->join_at[from] = m->join_any[from] = c->now ? c->now : 1;
	struct simcheck_memb_pass *p = &m->pass;
	if (p->epoch && p->to == from && ref_e == p->epoch && ref_s == p->seq && !p->refused_at) {
		p->refused_at = c->now ? c->now : 1;
		p->refused_join = true;
		p->refused_epoch = epoch;
		p->left_since = false;
	}
}

/* ---- LEAVEs and acks a passer hears (§3.2, §5.4) ---- */

static bool hop_covers(uint32_t ae, uint32_t as, uint32_t e, uint32_t s)
{
	return ae > e || (ae == e && as >= s);
}

void simcheck_memb_recv_leave(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			      uint32_t from, uint32_t epoch, uint32_t acc_e, uint32_t acc_s,
			      uint32_t ref_e, uint32_t ref_s)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m || from >= b->n)
		return;
	if (far_above(c, node, epoch)) {
		m->join_at[from] = m->leave_heard_at[from] = 0;
		return;
	}
	m->join_at[from] = 0;
	m->leave_heard_at[from] = c->now ? c->now : 1;
	struct simcheck_memb_pass *p = &m->pass;
	if (!p->epoch || p->to != from)
		return;
	if (p->refused_at && p->refused_join)
		p->left_since = true;
	if (ref_e == p->epoch && ref_s == p->seq) {
		if (!p->refused_at) {
			p->refused_at = c->now ? c->now : 1;
			p->refused_join = false;
		}
	} else if (hop_covers(acc_e, acc_s, p->epoch, p->seq)) {
		p->answered = true; /* the leaver took it: as good as its ack */
	}
}

void simcheck_memb_recv_ack(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			    uint32_t from, uint32_t epoch, uint32_t seq, uint32_t known)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (m && !far_above(c, node, known) && m->pass.epoch && m->pass.to == from && m->pass.epoch == epoch &&
	    m->pass.seq == seq)
		m->pass.answered = true;
}

/* ---- what a member sends ---- */

/* Every change of the alive set gets a new epoch (§3.2 skip, §5.3 join, §5.4
 * leave), so every hop and heartbeat of one epoch carries one set. */
static bool set_grow(struct simcheck_memb *b)
{
	size_t cap = b->set_cap ? 2 * b->set_cap : 256;
	uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
	if (!k || !v) {
		free(k);
		free(v);
		return false;
	}
	for (size_t i = 0; i < b->set_cap; i++) {
		if (!b->set_key[i])
			continue;
		size_t j = (size_t)(b->set_key[i] * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
		while (k[j])
			j = (j + 1) & (cap - 1);
		k[j] = b->set_key[i];
		v[j] = b->set_val[i];
	}
	free(b->set_key);
	free(b->set_val);
	b->set_key = k;
	b->set_val = v;
	b->set_cap = cap;
	return true;
}

static void epoch_set(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
		      const char *what, uint32_t epoch, uint64_t alive)
{
	if (!b->epoch_sets || !epoch)
		return;
	if ((b->set_n + 1) * 2 > b->set_cap && !set_grow(b)) {
		simcheck_fail(c, "sim", "out of memory (alive sets)");
		return;
	}
	size_t i = (size_t)(epoch * 0x9e3779b97f4a7c15ull >> 20) & (b->set_cap - 1);
	while (b->set_key[i] && b->set_key[i] != epoch)
		i = (i + 1) & (b->set_cap - 1);
	if (!b->set_key[i]) {
		b->set_key[i] = epoch;
		b->set_val[i] = alive;
		b->set_n++;
	} else if (b->set_val[i] != alive) {
		simcheck_fail(c, "membership", "n%u sent a %s of epoch %" PRIu32 " with alive set "
			      "%#" PRIx64 ", but that epoch's hops carry %#" PRIx64 ": a change of "
			      "the alive set gets a new epoch (§3.2, §5.3, §5.4)", node, what, epoch,
			      alive, b->set_val[i]);
	}
}

void simcheck_memb_send_heartbeat(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
				  uint32_t epoch, uint64_t alive)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m)
		return;
	epoch_set(c, b, node, "heartbeat", epoch, alive);
	m->took = true; /* it has a token now, if only for this step */
	if (m->pass.epoch && epoch > m->pass.epoch)
		m->pass.heard = true;
}

/* NODE passes a new hop while its last pass was never answered and the token
 * stayed with it: it gave that pass up. Only for the reasons of §3.2: retries
 * + 1 sends at ack timeouts unanswered (a skip), or a refusal by name one ack
 * timeout old (a take-back, a leaver's skip); a take-back readmits the refuser
 * above the epoch its JOIN named; and the new epoch is heard at once. */
static void giveup_check(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			 uint32_t epoch, uint64_t alive)
{
	const struct simcheck_memb_pass *p = &b->m[node].pass;
	uint64_t now = b->m[node].step_at;
	double since = (double)(now - p->sent_at) / 1e3;
	if (p->answered)
		simcheck_fail(c, "handover", "n%u gave up its pass %" PRIu32 ":%" PRIu32 " to n%u, "
			      "which had acked it or said by LEAVE that it took it (§3.2, §5.4)",
			      node, p->epoch, p->seq, p->to);
	else if (p->refused_at && now < p->refused_at + b->ack_us)
		simcheck_fail(c, "handover", "n%u gave up its pass %" PRIu32 ":%" PRIu32 " to n%u "
			      "%.3f ms after n%u refused it: it waits an ack timeout for an ack of "
			      "the refuser's past life (§3.2)", node, p->epoch, p->seq, p->to,
			      (double)(now - p->refused_at) / 1e3, p->to);
	else if (!p->refused_at && p->sends < b->retries + 1)
		simcheck_fail(c, "handover", "n%u gave up its pass %" PRIu32 ":%" PRIu32 " to n%u "
			      "after %u sends in %.3f ms, unanswered and unrefused: a skip needs "
			      "retries + 1 = %u (§3.2)", node, p->epoch, p->seq, p->to, p->sends,
			      since, b->retries + 1);
	else if (p->refused_at && p->refused_join && !p->left_since && !(alive >> p->to & 1))
		simcheck_fail(c, "handover", "n%u skipped n%u, which refused its pass by JOIN: a "
			      "take-back readmits the refuser (§5.3)", node, p->to);
	else if (p->refused_at && p->refused_join && !p->left_since && epoch <= p->refused_epoch)
		simcheck_fail(c, "handover", "n%u took its pass back under epoch %" PRIu32 ", not "
			      "above the %" PRIu32 " the refusing JOIN named (§5.3)", node, epoch,
			      p->refused_epoch);
	else if (!p->heard)
		simcheck_fail(c, "handover", "n%u gave up its pass %" PRIu32 ":%" PRIu32 " and "
			      "passed epoch %" PRIu32 " without heartbeating a newer epoch first "
			      "(§3.2: the new epoch is heard at once)", node, p->epoch, p->seq,
			      epoch);
}

/* NODE (proven, so it applies what it heard, §5.3) makes its first new pass
 * since it heard these JOINs and LEAVEs: a member that asked in is in the
 * alive set under an epoch above its JOIN's, one that announced its leave
 * is out (§5.3, §5.4; a JOIN supersedes a LEAVE and the other way round).
 * A record older than 2 x loss_timeout_ms has expired; a step admits at
 * most 8 joiners, so with more pending nothing is judged of the joins. */
static void pending_check(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			  uint32_t epoch, uint64_t alive)
{
	struct simcheck_memb_node *m = &b->m[node];
	uint64_t life = 2 * b->loss_us, now = m->step_at;
	size_t joins = 0; /* at most: the JOINs it heard that may still be pending */
	for (size_t x = 0; x < b->n; x++)
		joins += m->join_any[x] && now + EDGE_US < m->join_any[x] + life;
	for (uint32_t x = 0; x < b->n && !c->failed; x++) {
		bool in = alive >> x & 1;
		if (x == node)
			continue;
		if (m->leave_heard_at[x] && now + EDGE_US < m->leave_heard_at[x] + life && in)
			simcheck_fail(c, "membership", "n%u passed the token with n%u in its alive "
				      "set %.3f ms after it heard n%u's LEAVE: the next holder "
				      "removes a leaver (§5.4)", node, x,
				      (double)(now - m->leave_heard_at[x]) / 1e3, x);
		else if (m->join_at[x] && now + EDGE_US < m->join_at[x] + life && joins <= 8 &&
			 !in)
			simcheck_fail(c, "membership", "n%u passed the token without n%u %.3f ms "
				      "after it heard n%u's JOIN: the next holder takes it in (§5.3)",
				      node, x, (double)(now - m->join_at[x]) / 1e3, x);
		else if (m->join_at[x] && now + EDGE_US < m->join_at[x] + life && joins <= 8 &&
			 epoch <= m->join_epoch[x])
			simcheck_fail(c, "membership", "n%u took n%u in under epoch %" PRIu32 ", not "
				      "above the %" PRIu32 " of its JOIN (§5.3)", node, x, epoch,
				      m->join_epoch[x]);
	}
	forget_pending(m);
}

void simcheck_memb_send_token(struct simcheck *c, struct simcheck_memb *b, uint32_t node,
			      uint32_t to, uint32_t epoch, uint32_t seq, uint64_t alive)
{
	struct simcheck_memb_node *m = node_of(b, node);
	if (!m)
		return;
	epoch_set(c, b, node, "token", epoch, alive);
	m->took = true;
	struct simcheck_memb_pass *p = &m->pass;
	if (p->epoch == epoch && p->seq == seq) {
		/* A resend: at an ack timeout it spends a retry; right on a
		 * LEAVE from the receiver that crossed it, it does not (§5.4). */
		if (m->step_leave_from != (int)to)
			p->sends++;
		return;
	}
	if (m->leaving && (alive >> node & 1))
		simcheck_fail(c, "leave", "n%u passed the token %.3f ms after it was told to leave "
			      "with itself in the alive set: a leaver passes it with itself removed "
			      "(§5.4)", node, (double)(c->now - m->leave_at) / 1e3);
	if (p->epoch)
		giveup_check(c, b, node, epoch, alive);
	if (m->proven)
		pending_check(c, b, node, epoch, alive);
	memset(p, 0, sizeof *p);
	p->epoch = epoch;
	p->seq = seq;
	p->to = to;
	p->sends = 1;
	p->sent_at = m->step_at;
}
