/* The test ring of the core's unit suites (harness.h). */
#include "lib/harness.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fingerprint.h"
#include "core/err.h"

uint16_t id_of(size_t i)
{
	return (uint16_t)(10 * (i + 1));
}

/* A ring of N members with ids 10, 20, ... in ring order and the default
 * timings; tests change timings before hring_new(). */
void make_layout(struct ring_layout *l, size_t n)
{
	ring_layout_defaults(l);
	strcpy(l->name, "t");
	l->n = n;
	for (size_t i = 0; i < n; i++) {
		l->members[i].id = id_of(i);
		strcpy(l->members[i].host, "h");
		l->members[i].port = (uint16_t)(7000 + i);
	}
}

/* A layout where an unwanted token rests 50 ms at each member, so that
 * between hops the ring is quiet and one member plainly holds it. */
void make_resting_layout(struct ring_layout *l, size_t n)
{
	make_layout(l, n);
	l->idle_pass_ms = 50;
}

struct hring *hring_new(const struct ring_layout *l)
{
	CU_ASSERT_FATAL(l->n <= HRING_MAX);
	struct hring *s = calloc(1, sizeof *s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	s->flight = calloc(FLIGHT_MAX, sizeof *s->flight);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->flight);
	s->layout = *l;
	/* What the daemon does: the node carries the real fingerprint, so
	 * that the datagrams the tests craft with it are of this ring. */
	s->layout.fingerprint = ring_layout_fingerprint(l);
	s->n = l->n;
	s->now = T0;
	s->last_node = -1;
	CU_ASSERT_FATAL(cluster_set_layout(&s->cl, &s->layout));
	s->cl.step_into = &s->last;
	for (size_t i = 0; i < s->n; i++) {
		CU_ASSERT_FATAL(cluster_start(&s->cl, (uint32_t)i, 0));
		s->up[i] = true;
		s->deadline[i] = NEVER;
	}
	return s;
}

void hring_free(struct hring *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->rec[i]);
	cluster_free(&s->cl);
	free(s->flight);
	free(s);
}

/* Member I crashed and comes back with the epoch it had stored. */
void hring_restart(struct hring *s, size_t i, uint32_t stored_epoch)
{
	cluster_stop(&s->cl, (uint32_t)i, NULL);
	CU_ASSERT_FATAL(cluster_start(&s->cl, (uint32_t)i, stored_epoch));
	s->deadline[i] = NEVER;
	s->broken[i] = false;
}

struct ring_status status_of(const struct hring *s, size_t i)
{
	struct ring_status st;
	ring_node_status(s->cl.m[i].rn, s->now, &st);
	return st;
}

size_t index_of(const struct hring *s, uint16_t id)
{
	int i = ring_layout_index(&s->layout, id);
	CU_ASSERT_FATAL(i >= 0);
	return (size_t)i;
}

size_t successor_of(const struct hring *s, size_t i)
{
	return index_of(s, status_of(s, i).successor);
}

bool decode_send(const struct ring_action *a, struct ring_msg *m)
{
	return a->type == RING_ACTION_SEND && ring_wire_decode(a->u.send.buf, a->u.send.len, m) == 0;
}

static void enqueue(struct hring *s, uint16_t from, uint16_t to, const uint8_t *buf, uint16_t len)
{
	CU_ASSERT_FATAL(s->f_len < FLIGHT_MAX);
	struct flight *f = &s->flight[(s->f_head + s->f_len++) % FLIGHT_MAX];
	f->at = s->now + LATENCY;
	f->from = from;
	f->to = to;
	f->len = len;
	memcpy(f->buf, buf, len);
}

static int action_phrase(const struct ring_action *a, char *buf, size_t len);

static void record(struct hring *s, size_t i, const struct ring_action *a)
{
	if (s->n_rec[i] == s->cap_rec[i]) {
		size_t cap = s->cap_rec[i] ? 2 * s->cap_rec[i] : 256;
		struct rec *r = realloc(s->rec[i], cap * sizeof *r);
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		s->rec[i] = r;
		s->cap_rec[i] = cap;
	}
	struct rec *r = &s->rec[i][s->n_rec[i]++];
	r->seq = ++s->seq;
	r->at = s->now;
	r->a = *a;
	if (getenv("HARNESS_TRACE")) {
		char what[128];
		action_phrase(a, what, sizeof what);
		fprintf(stderr, "%10.3f ms n%zu %s", s->now / 1000.0, i, what);
		if (a->type == RING_ACTION_LOG)
			fprintf(stderr, " %llu %llu %llu", (unsigned long long)a->u.log.field[0],
				(unsigned long long)a->u.log.field[1],
				(unsigned long long)a->u.log.field[2]);
		fputc('\n', stderr);
	}
}

/* The safety the whole ring must keep whatever a test does to it. */
static void watch(struct hring *s, size_t i)
{
	size_t held = 0, granted = 0;
	for (size_t k = 0; k < s->n; k++) {
		if (!s->up[k])
			continue;
		struct ring_status st = status_of(s, k);
		held += st.token_held;
		granted += st.granted;
	}
	if (held > s->max_held)
		s->max_held = held;
	if (granted > s->max_granted)
		s->max_granted = granted;
	struct ring_status st = status_of(s, i);
	for (size_t k = 0; k < s->last.n; k++) {
		const struct ring_action *a = &s->last.action[k];
		if (a->type != RING_ACTION_GRANT)
			continue;
		if (!st.token_held || st.state != RING_STATE_HOLDING ||
		    st.token_epoch != a->u.grant.epoch || a->u.grant.fence >> 32 != a->u.grant.epoch ||
		    st.fence != a->u.grant.fence)
			s->bad_grants++;
		if (a->u.grant.fence <= s->max_fence)
			s->fence_regressions++;
		else
			s->max_fence = a->u.grant.fence;
	}
}

/* Steps member I with EV at the current time; keeps the update, records its
 * actions and puts its datagrams on the network. */
void hring_step(struct hring *s, size_t i, struct ring_event ev)
{
	ev.now_us = s->now;
	/* The cluster gives the core half the room, as in the simulator: a
	 * step that outgrew PROTOCOL.md §7's estimate (about forty actions)
	 * ends in one FATAL of -RING_EOVERFLOW, which no test expects. A
	 * member that returned a FATAL (its epochs ran out) returns one on
	 * every step. */
	s->cl.now = s->now;
	cluster_step(&s->cl, (uint32_t)i, &ev);
	if (cluster_failed(&s->cl) && strcmp(s->cl.inv, "assert") == 0)
		CU_assertImplementation(CU_FALSE, __LINE__, s->cl.what, __FILE__, "", CU_TRUE);
	bool fatal = s->last.n > 0 && s->last.action[0].type == RING_ACTION_FATAL;
	CU_ASSERT_FATAL(!fatal || s->last.n == 1);
	CU_ASSERT_FATAL(!fatal || s->broken[i] ||
			s->last.action[0].u.fatal.reason != -RING_EOVERFLOW);
	s->broken[i] = s->broken[i] || fatal;
	s->last_node = (int)i;
	s->last_event = ev.type;
	s->deadline[i] = s->last.deadline_us;
	if (getenv("HRING_TRACE"))
		fprintf(stderr, "  [%.6f n%zu ev%d] %s\n", (double)s->now / 1e6, i, (int)ev.type,
			step_trace(s));
	for (size_t k = 0; k < s->last.n; k++) {
		const struct ring_action *a = &s->last.action[k];
		record(s, i, a);
		if (a->type != RING_ACTION_SEND)
			continue;
		if (a->u.send.to != 0) {
			enqueue(s, id_of(i), a->u.send.to, a->u.send.buf, a->u.send.len);
			continue;
		}
		for (size_t j = 0; j < s->n; j++)
			if (j != i)
				enqueue(s, id_of(i), id_of(j), a->u.send.buf, a->u.send.len);
	}
	watch(s, i);
}

struct ring_event event(enum ring_event_type type)
{
	struct ring_event ev;
	memset(&ev, 0, sizeof ev);
	ev.type = type;
	return ev;
}

void hring_start(struct hring *s, size_t i)
{
	hring_step(s, i, event(RING_EVENT_START));
}

void hring_start_all(struct hring *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->up[i])
			hring_start(s, i);
}

struct hring *hring_started(const struct ring_layout *l)
{
	struct hring *s = hring_new(l);
	hring_start_all(s);
	return s;
}

void hring_come_back(struct hring *s, size_t i, uint32_t stored_epoch)
{
	hring_restart(s, i, stored_epoch);
	s->up[i] = true;
	hring_start(s, i);
}

void hring_tick(struct hring *s, size_t i)
{
	hring_step(s, i, event(RING_EVENT_TICK));
}

void hring_leave(struct hring *s, size_t i)
{
	hring_step(s, i, event(RING_EVENT_LEAVE));
}

void hring_acquire(struct hring *s, size_t i, uint64_t client)
{
	struct ring_event ev = event(RING_EVENT_ACQUIRE);
	ev.u.client.client = client;
	hring_step(s, i, ev);
}

void hring_release(struct hring *s, size_t i, uint64_t client)
{
	struct ring_event ev = event(RING_EVENT_RELEASE);
	ev.u.client.client = client;
	hring_step(s, i, ev);
}

void hring_datagram(struct hring *s, size_t i, uint16_t from_id, const uint8_t *buf, size_t len)
{
	struct ring_event ev = event(RING_EVENT_DATAGRAM);
	ev.u.datagram.buf = buf;
	ev.u.datagram.len = len;
	ev.u.datagram.from_id = from_id;
	hring_step(s, i, ev);
}

/* Hands the oldest datagram in flight to its receiver, now, unless the
 * receiver is down or the drop filter takes it. */
static void deliver_one(struct hring *s)
{
	struct flight f = s->flight[s->f_head];
	s->f_head = (s->f_head + 1) % FLIGHT_MAX;
	s->f_len--;
	size_t to = index_of(s, f.to);
	if (!s->up[to] || (s->drop && s->drop(&f, s->drop_arg)))
		return;
	hring_datagram(s, to, f.from, f.buf, f.len);
}

/* Delivers, at the current time, every datagram in flight when called;
 * those they cause stay in flight. Returns how many were taken. */
size_t hring_deliver_all(struct hring *s)
{
	size_t n = s->f_len;
	for (size_t k = 0; k < n; k++)
		deliver_one(s);
	return n;
}

/* The member that is up with the earliest deadline (the lowest index on a
 * tie), or NEVER. */
static uint64_t earliest_deadline(const struct hring *s, size_t *who)
{
	uint64_t d = NEVER;
	for (size_t i = 0; i < s->n; i++)
		if (s->up[i] && s->deadline[i] < d) {
			d = s->deadline[i];
			*who = i;
		}
	return d;
}

/* Moves the clock to the earliest deadline and TICKs that member. */
bool hring_tick_earliest(struct hring *s)
{
	size_t who = 0;
	uint64_t d = earliest_deadline(s, &who);
	if (d == NEVER)
		return false;
	if (d > s->now)
		s->now = d;
	hring_tick(s, who);
	return true;
}

/* Does the next thing in time order, the arrival of the oldest datagram or
 * the earliest deadline (arrivals first on a tie), if it comes by UNTIL;
 * otherwise moves the clock to UNTIL. Returns whether it did anything. */
bool hring_next(struct hring *s, uint64_t until)
{
	size_t who = 0;
	uint64_t d = earliest_deadline(s, &who);
	uint64_t f = s->f_len ? s->flight[s->f_head].at : NEVER;
	uint64_t t = d < f ? d : f;
	if (t == NEVER || t > until) {
		if (until != NEVER && until > s->now)
			s->now = until;
		return false;
	}
	if (t > s->now)
		s->now = t;
	if (f <= d)
		deliver_one(s);
	else
		hring_tick(s, who);
	return true;
}

/* Runs the ring until time UNTIL, or until STOP holds after the next thing
 * done (a step, or a datagram lost). Returns whether STOP was met. */
bool hring_run(struct hring *s, uint64_t until,
		    bool (*stop)(const struct hring *s, const void *arg), const void *arg)
{
	for (size_t k = 0; k < RUN_STEPS_MAX; k++) {
		s->last_node = -1;
		if (!hring_next(s, until))
			return false;
		if (stop && stop(s, arg))
			return true;
	}
	CU_FAIL("the ring did not get past its step bound: a loop at one instant?");
	return false;
}

void hring_run_for(struct hring *s, uint64_t dur_us)
{
	hring_run(s, s->now + dur_us, NULL, NULL);
}

/* ---- the last update ---- */

/* Index of the first action of TYPE in the last update, or -1. */
int last_action(const struct hring *s, enum ring_action_type type)
{
	for (size_t k = 0; k < s->last.n; k++)
		if (s->last.action[k].type == type)
			return (int)k;
	return -1;
}

int last_log(const struct hring *s, enum ring_log_event ev)
{
	for (size_t k = 0; k < s->last.n; k++)
		if (s->last.action[k].type == RING_ACTION_LOG && s->last.action[k].u.log.event == ev)
			return (int)k;
	return -1;
}

/* Index of the first SEND of a TYPE message to member TO (-1: anyone) in the
 * last update, decoded into M, or -1. */
int last_send(const struct hring *s, enum ring_msg_type type, int to, struct ring_msg *m)
{
	for (size_t k = 0; k < s->last.n; k++) {
		const struct ring_action *a = &s->last.action[k];
		struct ring_msg tmp;
		if (!decode_send(a, &tmp) || tmp.type != type)
			continue;
		if (to >= 0 && a->u.send.to != to)
			continue;
		if (m)
			*m = tmp;
		return (int)k;
	}
	return -1;
}


bool want_met(const struct hring *s, const void *arg)
{
	const struct want *w = arg;
	if (s->last_node < 0 || (w->node >= 0 && s->last_node != w->node))
		return false;
	if (w->type == RING_ACTION_LOG && w->what >= 0)
		return last_log(s, (enum ring_log_event)w->what) >= 0;
	if (w->type == RING_ACTION_SEND && w->what >= 0)
		return last_send(s, (enum ring_msg_type)w->what, w->to, NULL) >= 0;
	return last_action(s, w->type) >= 0;
}

bool run_until_log(struct hring *s, int node, enum ring_log_event ev, uint64_t limit_us)
{
	struct want w = {node, RING_ACTION_LOG, (int)ev, -1};
	return hring_run(s, s->now + limit_us, want_met, &w);
}

void run_until_held(struct hring *s, size_t i)
{
	for (int k = 0; k < 100 && !status_of(s, i).token_held; k++)
		CU_ASSERT_FATAL(run_until_log(s, (int)i, RING_LOG_TOKEN_RECV, 2000 * MS));
	CU_ASSERT_FATAL(status_of(s, i).token_held);
}

bool run_until_send(struct hring *s, int node, enum ring_msg_type type, int to,
			   uint64_t limit_us)
{
	struct want w = {node, RING_ACTION_SEND, (int)type, to};
	return hring_run(s, s->now + limit_us, want_met, &w);
}

bool run_until_action(struct hring *s, int node, enum ring_action_type type,
			     uint64_t limit_us)
{
	struct want w = {node, type, -1, -1};
	return hring_run(s, s->now + limit_us, want_met, &w);
}

/* ---- the record ---- */

size_t count_logs(const struct hring *s, size_t i, uint64_t since, enum ring_log_event ev)
{
	size_t c = 0;
	for (size_t k = 0; k < s->n_rec[i]; k++) {
		const struct rec *r = &s->rec[i][k];
		c += r->seq > since && r->a.type == RING_ACTION_LOG && r->a.u.log.event == ev;
	}
	return c;
}

size_t count_logs_all(const struct hring *s, uint64_t since, enum ring_log_event ev)
{
	size_t c = 0;
	for (size_t i = 0; i < s->n; i++)
		c += count_logs(s, i, since, ev);
	return c;
}

size_t count_actions(const struct hring *s, size_t i, uint64_t since, enum ring_action_type type)
{
	size_t c = 0;
	for (size_t k = 0; k < s->n_rec[i]; k++)
		c += s->rec[i][k].seq > since && s->rec[i][k].a.type == type;
	return c;
}

/* SENDs of TYPE from member I to member id TO since SINCE; a broadcast
 * counts for everyone. */
size_t count_sends(const struct hring *s, size_t i, uint64_t since, enum ring_msg_type type,
			  uint16_t to)
{
	size_t c = 0;
	for (size_t k = 0; k < s->n_rec[i]; k++) {
		const struct rec *r = &s->rec[i][k];
		struct ring_msg m;
		if (r->seq > since && decode_send(&r->a, &m) && m.type == type &&
		    (r->a.u.send.to == to || r->a.u.send.to == 0))
			c++;
	}
	return c;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The longest time without a LOG EV at any member but SKIP, from FROM_US
 * (the records since SINCE) to now. */
uint64_t longest_gap(const struct hring *s, uint64_t since, enum ring_log_event ev,
			    size_t skip, uint64_t from_us)
{
	size_t total = 0, n = 0;
	for (size_t i = 0; i < s->n; i++)
		total += s->n_rec[i];
	uint64_t *at = malloc((total + 1) * sizeof *at);
	CU_ASSERT_PTR_NOT_NULL_FATAL(at);
	for (size_t i = 0; i < s->n; i++) {
		if (i == skip)
			continue;
		for (size_t k = 0; k < s->n_rec[i]; k++) {
			const struct rec *r = &s->rec[i][k];
			if (r->seq > since && r->a.type == RING_ACTION_LOG && r->a.u.log.event == ev)
				at[n++] = r->at;
		}
	}
	at[n++] = s->now;
	qsort(at, n, sizeof *at, cmp_u64);
	uint64_t gap = 0, prev = from_us;
	for (size_t k = 0; k < n; k++) {
		if (at[k] - prev > gap)
			gap = at[k] - prev;
		prev = at[k];
	}
	free(at);
	return gap;
}

/* ---- scenarios ---- */

bool ring_settled(const struct hring *s, const void *arg)
{
	(void)arg;
	if (s->f_len > 0)
		return false;
	size_t has = 0, held = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->up[i])
			continue;
		struct ring_status st = status_of(s, i);
		has += st.has_token;
		held += st.token_held;
	}
	return has == 1 && held == 1;
}

/* Runs a resting ring until nothing is in flight and one member holds the
 * token; returns that member. */
size_t hring_settle(struct hring *s)
{
	CU_ASSERT_FATAL(hring_run(s, s->now + 2000 * MS, ring_settled, NULL));
	for (size_t i = 0; i < s->n; i++)
		if (s->up[i] && status_of(s, i).token_held)
			return i;
	CU_FAIL_FATAL("settled without a holder");
	return 0;
}

/* Starts every member that is up at the same instant and runs until the
 * token exists and circulates. */
void hring_boot(struct hring *s)
{
	hring_start_all(s);
	hring_run_for(s, 1500 * MS);
	CU_ASSERT_EQUAL_FATAL(count_logs_all(s, 0, RING_LOG_TOKEN_REGEN), 1);
}

struct hring *hring_settled(const struct ring_layout *l, size_t *h)
{
	struct hring *s = hring_new(l);
	hring_boot(s);
	size_t holder = hring_settle(s);
	if (h)
		*h = holder;
	return s;
}

struct hring *hring_settled_order(const struct ring_layout *l, size_t *h, size_t *x, size_t *y)
{
	struct hring *s = hring_settled(l, h);
	*x = successor_of(s, *h);
	*y = successor_of(s, *x);
	return s;
}

struct hring *hring_losing_acks(size_t *h, size_t *x, size_t *y)
{
	struct ring_layout l = resting_layout(3);
	l.lease_ms = 60000;
	struct hring *s = hring_settled_order(&l, h, x, y);
	losses_on(s);
	lose_count(RING_MSG_TOKEN_ACK, id_of(*x), id_of(*h), -1);
	return s;
}

struct hring *hring_parked(size_t n, enum ring_quorum q, size_t *p)
{
	struct ring_layout layout, *l = &layout;
	make_layout(l, n);
	l->quorum = q;
	struct hring *s = hring_new(l);
	hring_boot(s);
	*p = hring_settle(s);
	CU_ASSERT_FATAL(status_of(s, *p).parked);
	CU_ASSERT_FATAL(run_until_log(s, (int)*p, RING_LOG_TOKEN_RECV, (l->loss_timeout_ms + 50) * MS));
	CU_ASSERT_FATAL(status_of(s, *p).parked);
	hring_run_for(s, 5 * MS);
	return s;
}

size_t want_datagram(const struct hring *s, size_t from, size_t to, uint32_t epoch, uint32_t seq,
		     uint8_t buf[RING_WIRE_MAX])
{
	struct ring_msg m = {.type = RING_MSG_WANT, .from = id_of(from), .to = id_of(to)};
	m.fingerprint = ring_layout_fingerprint(&s->layout);
	m.u.want.epoch = epoch;
	m.u.want.seq = seq;
	m.u.want.wanter = id_of(from); /* its own summons, not a forward */
	int n = ring_wire_encode(&m, buf, RING_WIRE_MAX);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

void assert_ring_safe(const struct hring *s)
{
	CU_ASSERT(s->max_held <= 1);
	CU_ASSERT(s->max_granted <= 1);
	CU_ASSERT_EQUAL(s->bad_grants, 0);
	CU_ASSERT_EQUAL(s->fence_regressions, 0);
}

struct flight captured;

bool capture_token_to(const struct flight *f, const void *arg)
{
	struct ring_msg m;
	if (f->to == *(const uint16_t *)arg && ring_wire_decode(f->buf, f->len, &m) == 0 &&
	    m.type == RING_MSG_TOKEN)
		captured = *f;
	return false;
}

/* ---- golden traces ---- */

/* One action as a phrase of a golden trace: "persist", "send token>30"
 * (">*" for everyone), "grant", a log event by its name, ... */
static int action_phrase(const struct ring_action *a, char *buf, size_t len)
{
	struct ring_msg m;
	switch (a->type) {
	case RING_ACTION_PERSIST:
		return snprintf(buf, len, "persist");
	case RING_ACTION_SEND:
		if (!decode_send(a, &m))
			return snprintf(buf, len, "send ?");
		if (a->u.send.to == 0)
			return snprintf(buf, len, "send %s>*", ring_msg_name(m.type));
		return snprintf(buf, len, "send %s>%u", ring_msg_name(m.type),
				(unsigned)a->u.send.to);
	case RING_ACTION_GRANT:
		return snprintf(buf, len, "grant");
	case RING_ACTION_REVOKE:
		return snprintf(buf, len, "revoke");
	case RING_ACTION_DENY:
		return snprintf(buf, len, "deny");
	case RING_ACTION_RENEWED:
		return snprintf(buf, len, "renewed");
	case RING_ACTION_LOG:
		return snprintf(buf, len, "%s", ring_log_info(a->u.log.event)->name);
	case RING_ACTION_LEFT:
		return snprintf(buf, len, "left");
	case RING_ACTION_FATAL:
		return snprintf(buf, len, "fatal");
	}
	return snprintf(buf, len, "?");
}

const char *step_trace(const struct hring *s)
{
	static char buf[2048];
	size_t at = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < s->last.n && at < sizeof buf; k++) {
		int w = snprintf(buf + at, sizeof buf - at, "%s", k ? ", " : "");
		if (w < 0 || (at += (size_t)w) >= sizeof buf)
			break;
		w = action_phrase(&s->last.action[k], buf + at, sizeof buf - at);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	return buf;
}

void assert_step_trace(const struct hring *s, const char *want, const char *file, int line)
{
	const char *got = step_trace(s);
	if (strcmp(got, want) == 0) {
		CU_PASS("step trace");
		return;
	}
	char msg[3072];
	snprintf(msg, sizeof msg, "step of n%d: want \"%s\", got \"%s\"", s->last_node, want,
		 got);
	CU_assertImplementation(CU_FALSE, (unsigned)line, msg, file, "", CU_FALSE);
}

void hring_inject(struct hring *s, size_t i, size_t from, struct ring_msg m)
{
	m.from = id_of(from);
	m.to = id_of(i);
	m.fingerprint = ring_layout_fingerprint(&s->layout);
	uint8_t buf[RING_WIRE_MAX];
	int len = ring_wire_encode(&m, buf, sizeof buf);
	CU_ASSERT_FATAL(len > 0);
	hring_datagram(s, i, id_of(from), buf, (size_t)len);
}

size_t count_grants_all(const struct hring *s, uint64_t since)
{
	size_t c = 0;
	for (size_t i = 0; i < s->n; i++)
		c += count_actions(s, i, since, RING_ACTION_GRANT);
	return c;
}

void hring_acquire_everywhere(struct hring *s, uint64_t client)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->up[i])
			hring_acquire(s, i, client + i);
}

uint64_t hring_ask_everywhere_and_run(struct hring *s, uint64_t client, uint64_t dur_us)
{
	uint64_t mark = s->seq;
	hring_acquire_everywhere(s, client);
	hring_run_for(s, dur_us);
	return mark;
}

uint64_t grant_at(struct hring *s, size_t i, uint64_t client)
{
	hring_acquire(s, i, client);
	int g = last_action(s, RING_ACTION_GRANT);
	CU_ASSERT_FATAL(g >= 0);
	return s->last.action[g].u.grant.fence;
}

void make_short_lease_layout(struct ring_layout *l, size_t n)
{
	make_resting_layout(l, n);
	l->lease_ms = 200;
}

/* ---- losing and crafting datagrams ---- */

size_t craft(const struct hring *s, struct ring_msg *m, uint16_t from_id, uint16_t to_id,
	     uint8_t *buf)
{
	m->from = from_id;
	m->to = to_id;
	m->fingerprint = ring_layout_fingerprint(&s->layout);
	int n = ring_wire_encode(m, buf, RING_WIRE_MAX);
	CU_ASSERT_FATAL(n > 0);
	return (size_t)n;
}

size_t craft_token(const struct hring *s, uint16_t from_id, uint16_t to_id,
		   struct ring_msg_token t, uint8_t *buf)
{
	struct ring_msg m;
	memset(&m, 0, sizeof m);
	m.type = RING_MSG_TOKEN;
	m.u.token = t;
	return craft(s, &m, from_id, to_id, buf);
}

size_t copy_last_token(const struct hring *s, uint16_t to_id, uint8_t *buf, struct ring_msg *m)
{
	int k = last_send(s, RING_MSG_TOKEN, to_id, m);
	CU_ASSERT_FATAL(k >= 0);
	const struct ring_action *a = &s->last.action[k];
	memcpy(buf, a->u.send.buf, a->u.send.len);
	return a->u.send.len;
}

uint64_t first_grant_fence(const struct hring *s, size_t i, uint64_t since)
{
	for (size_t k = 0; k < s->n_rec[i]; k++) {
		const struct rec *r = &s->rec[i][k];
		if (r->seq > since && r->a.type == RING_ACTION_GRANT)
			return r->a.u.grant.fence;
	}
	return 0;
}

static bool is_type(const struct flight *f, enum ring_msg_type type)
{
	struct ring_msg m;
	return ring_wire_decode(f->buf, f->len, &m) == 0 && m.type == type;
}

/* The counted losses: one table, since a history sets them up once. */
struct counted_loss {
	enum ring_msg_type type;
	uint16_t from, to;
	int left; /* how many more to lose; negative: every one */
};

#define LOSSES_MAX 4
static struct counted_loss losses[LOSSES_MAX];
static size_t n_losses;

void lose_count(enum ring_msg_type type, uint16_t from, uint16_t to, int count)
{
	CU_ASSERT_FATAL(n_losses < LOSSES_MAX);
	losses[n_losses++] = (struct counted_loss){type, from, to, count};
}

static bool drop_losses(const struct flight *f, const void *arg)
{
	(void)arg;
	for (size_t k = 0; k < n_losses; k++) {
		struct counted_loss *x = &losses[k];
		if (x->left == 0 || (x->from && f->from != x->from) || (x->to && f->to != x->to) ||
		    !is_type(f, x->type))
			continue;
		if (x->left > 0)
			x->left--;
		return true;
	}
	return false;
}

void losses_on(struct hring *s)
{
	s->drop = drop_losses;
	s->drop_arg = NULL;
}

void losses_off(struct hring *s)
{
	s->drop = NULL;
	n_losses = 0;
}

static bool drop_lost(const struct flight *f, const void *arg)
{
	const struct loss *l = arg;
	struct ring_msg m;
	if (ring_wire_decode(f->buf, f->len, &m) != 0)
		return false;
	for (size_t k = 0; k < l->n; k++)
		if ((l->rule[k].type == 0 || l->rule[k].type == (int)m.type) &&
		    (l->rule[k].from == 0 || l->rule[k].from == f->from) &&
		    (l->rule[k].to == 0 || l->rule[k].to == f->to))
			return true;
	return false;
}

void lose_add(struct hring *s, struct loss *l, enum ring_msg_type type, uint16_t from,
	      uint16_t to)
{
	CU_ASSERT_FATAL(l->n < 4);
	l->rule[l->n].type = (int)type;
	l->rule[l->n].from = from;
	l->rule[l->n].to = to;
	l->n++;
	s->drop = drop_lost;
	s->drop_arg = l;
}

void lose_none(struct hring *s, struct loss *l)
{
	l->n = 0;
	s->drop = NULL;
	s->drop_arg = NULL;
}

struct ring_layout default_layout(size_t n)
{
	struct ring_layout l;
	make_layout(&l, n);
	return l;
}

struct ring_layout resting_layout(size_t n)
{
	struct ring_layout l;
	make_resting_layout(&l, n);
	return l;
}

void assert_safe_and_free(struct hring *s)
{
	assert_ring_safe(s);
	hring_free(s);
}

uint64_t xorshift_next(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}
