/* The invariant checkers of the simulator (simcheck.h): each keeps its own record of the
 * history it is fed and fails on the first event that breaks its invariant, without
 * trusting any number the system under test computed for itself. */
#include "sim/simcheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F_E(f) ((f) >> 32)
#define F_C(f) ((f) & 0xffffffffu)

/* ---- the map ---- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static uint64_t *map_find(const struct simcheck_map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->key[i] == key)
			return &m->val[i];
		if (m->key[i] == 0)
			return NULL;
	}
}

static bool map_put(struct simcheck_map *m, uint64_t key, uint64_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		uint64_t *k = calloc(cap, sizeof *k), *v = calloc(cap, sizeof *v);
		if (!k || !v) {
			free(k);
			free(v);
			return false;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->key[i])
				continue;
			size_t j = mix64(m->key[i]) & (cap - 1);
			while (k[j])
				j = (j + 1) & (cap - 1);
			k[j] = m->key[i];
			v[j] = m->val[i];
		}
		free(m->key);
		free(m->val);
		m->key = k;
		m->val = v;
		m->cap = cap;
	}
	size_t i = mix64(key) & (m->cap - 1);
	while (m->key[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->key[i])
		m->n++;
	m->key[i] = key;
	m->val[i] = val;
	return true;
}

static void map_free(struct simcheck_map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof *m);
}

/* ---- life ---- */

void simcheck_init(struct simcheck *c, const struct simcheck_config *cfg)
{
	memset(c, 0, sizeof *c);
	c->cfg = *cfg;
	if (c->cfg.n > SIMCHECK_MAX_N)
		c->cfg.n = SIMCHECK_MAX_N;
	c->i2 = true;
}

void simcheck_free(struct simcheck *c)
{
	map_free(&c->fences);
	map_free(&c->epoch_last);
	map_free(&c->epoch_floor);
	map_free(&c->hops);
	free(c->grant);
	free(c->req);
	c->grant = NULL;
	c->req = NULL;
	c->grant_n = c->grant_cap = c->req_n = c->req_cap = 0;
}

bool simcheck_fail(struct simcheck *c, const char *inv, const char *fmt, ...)
{
	if (c->failed)
		return false;
	c->failed = true;
	snprintf(c->inv, sizeof c->inv, "%s", inv);
	int off = snprintf(c->what, sizeof c->what, "t=%" PRIu64 ".%06" PRIu64 " ",
			   c->now / 1000000, c->now % 1000000);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->what + off, sizeof c->what - (size_t)off, fmt, ap);
	va_end(ap);
	return false;
}

static bool member_ok(struct simcheck *c, uint32_t node)
{
	if (node < c->cfg.n)
		return true;
	return simcheck_fail(c, "sim", "member n%u out of range", node);
}

/* ---- I2's precondition ---- */

void simcheck_i2_off(struct simcheck *c, const char *why)
{
	if (!c->i2)
		return;
	c->i2 = false;
	c->i2_off_at = c->now;
	snprintf(c->i2_off, sizeof c->i2_off, "%s", why);
}

/* ---- I3: epochs, disks and tokens ---- */

void simcheck_start(struct simcheck *c, uint32_t node, uint32_t disk_epoch)
{
	if (!member_ok(c, node))
		return;
	struct simcheck_member *m = &c->m[node];
	memset(m, 0, sizeof *m);
	m->up = true;
	/* Its disk this life is what it loaded: a disk that lost or rolled
	 * back its state is the disk it has now, not an error of the member. */
	m->persisted = disk_epoch;
	m->last_epoch = disk_epoch;
	simcheck_elect_life(c, node);
}

void simcheck_stop(struct simcheck *c, uint32_t node)
{
	if (!member_ok(c, node))
		return;
	c->m[node].up = false;
	c->m[node].have_status = false;
}

void simcheck_persist(struct simcheck *c, uint32_t node, uint32_t epoch)
{
	if (!member_ok(c, node))
		return;
	struct simcheck_member *m = &c->m[node];
	if (epoch < m->persisted)
		simcheck_fail(c, "persist", "n%u persisted epoch %" PRIu32 " over %" PRIu32, node,
			      epoch, m->persisted);
	m->persisted = epoch;
	/* A PERSIST of an epoch nobody persisted before is its minting: remember
	 * the highest fence granted until then. */
	if (epoch && !map_find(&c->epoch_floor, epoch) &&
	    !map_put(&c->epoch_floor, epoch, c->fence_max))
		simcheck_fail(c, "sim", "out of memory (epochs)");
}

void simcheck_token_recv(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq)
{
	if (!member_ok(c, node) || epoch == 0)
		return;
	if (!map_put(&c->hops, (uint64_t)epoch << 32 | seq, node + 1u))
		simcheck_fail(c, "sim", "out of memory (hops)");
}

void simcheck_token_pass(struct simcheck *c, uint32_t node, uint32_t epoch, uint32_t seq)
{
	if (!member_ok(c, node))
		return;
	c->m[node].pass_epoch = epoch;
	c->m[node].pass_seq = seq;
}

/* Is the token NODE reports a copy of its own? A holder's is. A member passing
 * the token holds a copy until some member accepts the hop it carries: from
 * then on the token is there, and the sender's copy only waits for an ack that
 * may have been lost (§3.2). If the ack never comes it skips the successor and
 * re-epochs, so its copy comes back under another epoch. This is exact with
 * respect to the hops accepted; a token datagram in flight is the sender's copy. */
static bool live_copy(const struct simcheck *c, uint32_t node)
{
	const struct simcheck_member *m = &c->m[node];
	if (!m->up || !m->have_status || !m->st.has_token)
		return false;
	if (m->st.token_held)
		return true;
	if (m->pass_epoch != m->st.token_epoch || m->pass_epoch == 0)
		return true; /* a pass we did not see: count it */
	return !map_find(&c->hops, (uint64_t)m->pass_epoch << 32 | m->pass_seq);
}

void simcheck_status(struct simcheck *c, uint32_t node, const struct simcheck_status *st,
		     bool settled)
{
	if (!member_ok(c, node))
		return;
	struct simcheck_member *m = &c->m[node];
	if (!m->up)
		simcheck_fail(c, "sim", "n%u reports a status but is not up", node);
	if (st->epoch < m->last_epoch)
		simcheck_fail(c, "I3", "n%u epoch went back from %" PRIu32 " to %" PRIu32, node,
			      m->last_epoch, st->epoch);
	if (st->epoch > m->last_epoch)
		m->last_epoch = st->epoch;
	/* PROTOCOL.md §4.2: an epoch is persisted before it is acted on, so a
	 * crash at any moment restarts a member at least where it was. */
	if (st->epoch > m->persisted && !st->persist_pending)
		simcheck_fail(c, "I3", "n%u knows epoch %" PRIu32 " but persisted only %" PRIu32
			      ": a crash now would take its epoch back", node, st->epoch,
			      m->persisted);
	m->st = *st;
	m->have_status = true;
	if (live_copy(c, node))
		for (uint32_t j = 0; j < c->cfg.n; j++)
			if (j != node && live_copy(c, j) &&
			    c->m[j].st.token_epoch == st->token_epoch)
				simcheck_fail(c, "I3", "n%u and n%u both hold a token of epoch %"
					      PRIu32 " (%s and %s)", node, j, st->token_epoch,
					      st->token_held ? "held" : "passing, not yet accepted",
					      c->m[j].st.token_held ? "held"
								    : "passing, not yet accepted");
	if (settled) {
		int who = -1;
		for (uint32_t j = 0; j < c->cfg.n; j++) {
			const struct simcheck_member *o = &c->m[j];
			if (!o->up || !o->have_status || !o->st.has_token)
				continue;
			if (who < 0)
				who = (int)j;
			else if (o->st.token_epoch != c->m[who].st.token_epoch)
				simcheck_fail(c, "I3", "after settling n%d has a token of epoch %"
					      PRIu32 " and n%u one of epoch %" PRIu32, who,
					      c->m[who].st.token_epoch, j, o->st.token_epoch);
		}
	}
}

/* ---- grants: I1, I2, I3, I5 ---- */

size_t simcheck_fence_record(struct simcheck *c, uint32_t node, uint32_t client,
			     uint64_t fence)
{
	if (c->grant_n == c->grant_cap) {
		size_t cap = c->grant_cap ? c->grant_cap * 2 : 1024;
		struct simcheck_grant *g = realloc(c->grant, cap * sizeof *g);
		if (!g) {
			simcheck_fail(c, "sim", "out of memory (grants)");
			return SIZE_MAX;
		}
		c->grant = g;
		c->grant_cap = cap;
	}
	c->grant[c->grant_n] = (struct simcheck_grant){fence, node, client, false};
	return c->grant_n++;
}

/* SPEC: a regenerated token's fences are higher than every fence issued
 * before. With a majority quorum this holds in every run, for every new
 * epoch (PROTOCOL.md §4.4); with quorum = none the two sides of a partition
 * cannot know each other's fences. */
static void check_floor(struct simcheck *c, uint32_t node, uint64_t fence, uint32_t epoch)
{
	if (!c->cfg.floor)
		return;
	uint64_t *floor = map_find(&c->epoch_floor, epoch);
	if (floor && fence <= *floor)
		simcheck_fail(c, "I1", "n%u granted fence %" PRIu64 ":%" PRIu64 " but %" PRIu64
			      ":%" PRIu64 " was granted before epoch %" PRIu32 " was minted", node,
			      F_E(fence), F_C(fence), F_E(*floor), F_C(*floor), epoch);
}

size_t simcheck_grant(struct simcheck *c, uint32_t node, uint32_t client, uint64_t fence,
		      uint32_t epoch, uint32_t node_epoch)
{
	if (!member_ok(c, node))
		return SIZE_MAX;
	if (fence == 0 || (uint32_t)F_E(fence) != epoch || epoch == 0)
		simcheck_fail(c, "I1", "n%u granted fence %" PRIx64 " with epoch %" PRIu32
			      ": the fence is epoch << 32 | counter, never 0", node, fence, epoch);
	uint64_t *twice = fence ? map_find(&c->fences, fence) : NULL;
	if (twice)
		simcheck_fail(c, "I1", "n%u granted fence %" PRIu64 ":%" PRIu64 " to c%u a second"
			      " time (first by n%u)", node, F_E(fence), F_C(fence), client,
			      c->grant[*twice - 1].node);
	uint64_t *last = epoch ? map_find(&c->epoch_last, epoch) : NULL;
	if (last && *last >= fence)
		simcheck_fail(c, "I1", "n%u granted fence %" PRIu64 ":%" PRIu64 " after %" PRIu64
			      ":%" PRIu64 " in the same epoch", node, F_E(fence), F_C(fence),
			      F_E(*last), F_C(*last));
	check_floor(c, node, fence, epoch);
	size_t gid = simcheck_fence_record(c, node, client, fence);
	if (gid == SIZE_MAX)
		return gid;
	if (fence && !twice && !map_put(&c->fences, fence, gid + 1))
		simcheck_fail(c, "sim", "out of memory (fences)");
	if (epoch && (!last || *last < fence) && !map_put(&c->epoch_last, epoch, fence))
		simcheck_fail(c, "sim", "out of memory (fences)");
	if (fence > c->fence_max)
		c->fence_max = fence;
	if (node_epoch != epoch)
		simcheck_fail(c, "I3", "n%u granted under epoch %" PRIu32 " but its epoch is %"
			      PRIu32, node, epoch, node_epoch);
	if (c->in_cs > 0) {
		c->overlaps++;
		if (c->i2)
			simcheck_fail(c, "I2", "n%u granted c%u (fence %" PRIu64 ":%" PRIu64
				      ") while %u other client(s) are in the CS", node, client,
				      F_E(fence), F_C(fence), c->in_cs);
	}
	c->grant[gid].in_cs = true;
	c->in_cs++;
	return gid;
}

/* I5, fairness with jumps (PROTOCOL.md §3.5): while a member waits in the
 * token's want set, no other member is granted twice. Judged while one
 * token runs (I2's precondition): two tokens serve two orders. A visit of
 * the member, granting or not, ends its wait; a regenerated token starts
 * every wait again. */
void simcheck_fair_grant(struct simcheck *c, uint32_t node, uint64_t waiting)
{
	if (!member_ok(c, node) || node >= SIMCHECK_MAX_N)
		return;
	for (uint32_t m = 0; m < c->cfg.n && m < SIMCHECK_MAX_N; m++) {
		if (m == node)
			continue;
		if (!(waiting >> m & 1)) {
			c->overtaken[m][node] = 0;
			continue;
		}
		if (++c->overtaken[m][node] >= 2 && c->i2)
			simcheck_fail(c, "I5", "n%u granted twice while n%u waited in the token's"
				      " want set (§3.5)", node, m);
	}
	for (uint32_t x = 0; x < SIMCHECK_MAX_N; x++)
		c->overtaken[node][x] = 0;
}

void simcheck_fair_visit(struct simcheck *c, uint32_t node)
{
	if (node < SIMCHECK_MAX_N)
		memset(c->overtaken[node], 0, sizeof c->overtaken[node]);
}

void simcheck_fair_regen(struct simcheck *c)
{
	memset(c->overtaken, 0, sizeof c->overtaken);
}

void simcheck_cs_end(struct simcheck *c, size_t gid)
{
	if (gid >= c->grant_n || !c->grant[gid].in_cs) {
		simcheck_fail(c, "sim", "grant #%zu ends a critical region it is not in", gid);
		return;
	}
	c->grant[gid].in_cs = false;
	c->in_cs--;
}

/* ---- fencing ---- */

/* Grants are ordered by their fences, the order the protocol promises (§4);
 * two grants of one fence are not ordered at all, so whichever writes second
 * is older than the one already accepted. The resource's rule compares numbers
 * it keeps itself; this compares grants, so a resource that trusts a stale
 * fence and a fence handed out twice both show here. And the other way: a
 * resource that refuses a write no older than every accepted one is wrong too,
 * or a resource refusing everything would pass. */
void simcheck_write(struct simcheck *c, size_t gid, bool accepted)
{
	if (gid >= c->grant_n) {
		simcheck_fail(c, "fencing", "a write of grant #%zu, which was never made", gid);
		return;
	}
	const struct simcheck_grant *g = &c->grant[gid];
	const struct simcheck_grant *a = c->acc_any ? &c->grant[c->acc] : NULL;
	bool older = a && (g->fence < a->fence || (g->fence == a->fence && gid != c->acc));
	if (accepted) {
		c->accepted++;
		if (older)
			simcheck_fail(c, "fencing", "the resource accepted c%u@n%u's write with fence %"
				      PRIu64 ":%" PRIu64 " after accepting c%u@n%u's with fence %"
				      PRIu64 ":%" PRIu64 "%s", g->client, g->node, F_E(g->fence),
				      F_C(g->fence), a->client, a->node, F_E(a->fence),
				      F_C(a->fence),
				      g->fence == a->fence ? ": one fence, two grants" : "");
		if (!a || g->fence > a->fence) {
			c->acc_any = true;
			c->acc = gid;
		}
	} else {
		c->refused++;
		if (!older)
			simcheck_fail(c, "fencing", "the resource refused c%u@n%u's write with fence %"
				      PRIu64 ":%" PRIu64 ", no older than any write it accepted",
				      g->client, g->node, F_E(g->fence), F_C(g->fence));
	}
}

/* ---- I4 ---- */

size_t simcheck_request(struct simcheck *c, uint32_t client, uint32_t node)
{
	if (c->req_n == c->req_cap) {
		size_t cap = c->req_cap ? c->req_cap * 2 : 1024;
		struct simcheck_request *r = realloc(c->req, cap * sizeof *r);
		if (!r) {
			simcheck_fail(c, "sim", "out of memory (requests)");
			return SIZE_MAX;
		}
		c->req = r;
		c->req_cap = cap;
	}
	c->req[c->req_n] = (struct simcheck_request){client, node, SIMCHECK_WAIT, c->now, 0};
	return c->req_n++;
}

void simcheck_request_end(struct simcheck *c, size_t r, enum simcheck_req_state state)
{
	if (r >= c->req_n)
		return;
	c->req[r].state = state;
	if (state == SIMCHECK_GRANTED)
		c->req[r].t_grant = c->now;
}

void simcheck_request_due(struct simcheck *c, size_t r, uint64_t from, uint64_t bound_us)
{
	if (r >= c->req_n || c->req[r].state != SIMCHECK_WAIT)
		return;
	const struct simcheck_request *rq = &c->req[r];
	simcheck_fail(c, "I4", "c%u at n%u asked at %.6f s and is still waiting %.3f s after"
		      " %.3f s (bound %" PRIu64 " ms)", rq->client, rq->node,
		      (double)rq->t_req / 1e6, (double)(c->now - from) / 1e6, (double)from / 1e6,
		      bound_us / 1000);
}

/* ---- liveness of a settled ring ---- */

void simcheck_settled(struct simcheck *c, const struct simcheck_rates *r)
{
	if (r->recovery > 0) {
		simcheck_fail(c, "liveness", "the settled ring still sent %" PRIu64
			      " recovery datagrams (first: %s) in %.1f s", r->recovery,
			      r->recovery_kind ? r->recovery_kind : "?", (double)r->window_us / 1e6);
		return;
	}
	uint64_t w = r->window_us, n = r->n;
	/* 5/4 and 2n of slack: a paced ring sends exactly one hop an idle
	 * pass, and the window's ends cut a lap or a visit in two. */
	uint64_t loss = r->loss_us ? r->loss_us : 1, hb = r->heartbeat_us ? r->heartbeat_us : 1;
	uint64_t hop_budget = n * (r->grants + 1) + (r->idle_pass_us ? w / r->idle_pass_us : 0) +
			      n * (w / loss + 1);
	hop_budget = hop_budget * 5 / 4 + 2 * n;
	/* A renewal may ask for acks at once (at most four a lease, §3.3);
	 * a holder whose region came free says so at once, but only after a
	 * heartbeat that said BUSY, within the slack. */
	uint64_t lease = r->lease_us ? r->lease_us : 1;
	uint64_t extra = r->renews < 4 * w / lease + 1 ? r->renews : 4 * w / lease + 1;
	uint64_t hb_budget = (2 * w / hb + r->parks + extra + 4 * n + 10) * 5 / 4;
	uint64_t want_budget = 2 * (r->requests + n);
	/* A WANT chases the token at most n - 1 members on (§3.5); a wait's
	 * first summons is also broadcast, once. */
	uint64_t forward_budget = (n - 1) * (r->wants + n);
	uint64_t copy_budget = r->requests + n;
	/* Acks answer only a renewed grant's heartbeats, once per member. */
	uint64_t beat_ack_budget = (n - 1) * (r->heartbeats + 1);
	if (r->hops > hop_budget)
		simcheck_fail(c, "liveness", "the settled ring made %" PRIu64 " token hops in %.1f s "
			      "for %" PRIu64 " grants, budget %" PRIu64, r->hops, (double)w / 1e6,
			      r->grants, hop_budget);
	else if (r->hops > r->acks + n)
		simcheck_fail(c, "liveness", "the settled ring sent %" PRIu64 " tokens for %" PRIu64
			      " acks: retransmissions on a clean network", r->hops, r->acks);
	else if (r->heartbeats > hb_budget)
		simcheck_fail(c, "liveness", "the settled ring sent %" PRIu64 " heartbeats in %.1f s, "
			      "budget %" PRIu64, r->heartbeats, (double)w / 1e6, hb_budget);
	else if (r->wants > want_budget)
		simcheck_fail(c, "liveness", "the settled ring sent %" PRIu64 " WANTs for %" PRIu64
			      " requests, budget %" PRIu64, r->wants, r->requests, want_budget);
	else if (r->want_forwards > forward_budget)
		simcheck_fail(c, "liveness", "the settled ring forwarded %" PRIu64 " WANTs for %" PRIu64
			      " sent, budget %" PRIu64, r->want_forwards, r->wants, forward_budget);
	else if (r->want_copies > copy_budget)
		simcheck_fail(c, "liveness", "the settled ring broadcast %" PRIu64 " first summonses "
			      "for %" PRIu64 " requests, budget %" PRIu64, r->want_copies, r->requests,
			      copy_budget);
	else if (r->beat_acks > beat_ack_budget)
		simcheck_fail(c, "liveness", "the settled ring sent %" PRIu64 " heartbeat acks for %"
			      PRIu64 " heartbeats, budget %" PRIu64, r->beat_acks, r->heartbeats,
			      beat_ack_budget);
}

void simcheck_one_token(struct simcheck *c)
{
	for (size_t i = 0; i < c->cfg.n; i++) {
		const struct simcheck_member *m = &c->m[i];
		if (m->up && m->have_status && m->st.has_token)
			return;
	}
	simcheck_fail(c, "liveness", "no member holds the token after the ring settled");
}
