/* The simulated cluster of protocol cores on simnet (cluster.h). */
#include "lib/cluster.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/assert.h"
#include "core/err.h"

void cluster_init(struct cluster *c, uint64_t seed, const char *salt, bool trace,
		  uint64_t event_cap, uint64_t same_time_cap)
{
	simnet_queue_init(&c->q);
	simnet_rng_seed(&c->rng, seed, salt);
	c->trace = trace;
	c->event_cap = event_cap;
	c->same_time_cap = same_time_cap;
}

bool cluster_set_layout(struct cluster *c, const struct ring_layout *layout)
{
	c->layout = *layout;
	c->n = layout->n;
	c->m = calloc(c->n, sizeof *c->m);
	if (!c->m) {
		cluster_fail(c, "sim", "out of memory (members)");
		return false;
	}
	for (size_t i = 0; i < c->n; i++) {
		c->m[i].id = layout->members[i].id;
		c->m[i].tick_at = CLUSTER_NEVER;
	}
	return true;
}

void cluster_free(struct cluster *c)
{
	for (size_t i = 0; c->m && i < c->n; i++)
		ring_node_free(c->m[i].rn);
	free(c->m);
	c->m = NULL;
	simnet_queue_free(&c->q);
}

/* ---- failures and the trace ---- */

void cluster_fail_record(struct cluster *c, const char *inv, const char *what)
{
	if (c->on_fail) {
		c->failed = true; /* the record is the driver's */
		c->on_fail(c->fail_arg, inv, what);
		return;
	}
	if (c->failed)
		return; /* the first failure is the one to replay */
	c->failed = true;
	snprintf(c->inv, sizeof c->inv, "%s", inv);
	snprintf(c->what, sizeof c->what, "t=%" PRIu64 ".%06" PRIu64 " %s", c->now / 1000000,
		 c->now % 1000000, what);
	if (c->trace)
		printf("FAILED here: %s: %s\n", c->inv, c->what);
}

void cluster_fail(struct cluster *c, const char *inv, const char *fmt, ...)
{
	char what[sizeof c->what];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	cluster_fail_record(c, inv, what);
}

bool cluster_failed(const struct cluster *c)
{
	return c->failed;
}

void cluster_trace(const struct cluster *c, const char *fmt, ...)
{
	if (!c->trace)
		return;
	printf("t=%4" PRIu64 ".%06" PRIu64 " ", c->now / 1000000, c->now % 1000000);
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- the queue ---- */

static void nomem_check(struct cluster *c)
{
	if (c->q.nomem)
		cluster_fail(c, "sim", "%s", c->q.nomem);
}

uint32_t cluster_item_new(struct cluster *c, int kind)
{
	uint32_t i = simnet_item_new(&c->q, kind);
	if (i == UINT32_MAX)
		nomem_check(c);
	return i;
}

void cluster_item_free(struct cluster *c, uint32_t item)
{
	simnet_item_free(&c->q, item);
}

void cluster_push(struct cluster *c, uint64_t t, uint32_t item)
{
	if (!simnet_push(&c->q, t, item))
		nomem_check(c);
}

void cluster_schedule(struct cluster *c, uint64_t t, int kind, uint32_t node, uint32_t arg,
		      uint32_t gen)
{
	uint32_t i = cluster_item_new(c, kind);
	if (i == UINT32_MAX)
		return;
	c->q.items[i].node = node;
	c->q.items[i].arg = arg;
	c->q.items[i].gen = gen;
	cluster_push(c, t, i);
}

bool cluster_next(struct cluster *c, uint64_t until, uint32_t *item)
{
	if (cluster_failed(c) || c->q.heap_n == 0 || c->q.heap[0].t > until)
		return false;
	struct simnet_slot s = simnet_pop(&c->q);
	if (s.t != c->same_time_at) {
		c->same_time_at = s.t;
		c->same_time = 0;
	}
	c->now = s.t;
	if (c->event_cap && ++c->events > c->event_cap) {
		cluster_fail(c, "progress", "more than %llu events in one run",
			     (unsigned long long)c->event_cap);
		return false;
	}
	if (c->same_time_cap && ++c->same_time > c->same_time_cap) {
		cluster_fail(c, "progress", "more than %llu events at one instant: time stands still",
			     (unsigned long long)c->same_time_cap);
		return false;
	}
	*item = s.item;
	return true;
}

/* ---- members ---- */

bool cluster_start(struct cluster *c, uint32_t i, uint32_t stored_epoch)
{
	struct cluster_member *m = &c->m[i];
	int err = 0;
	m->rn = ring_node_new(&c->layout, m->id, stored_epoch, &err);
	if (!m->rn) {
		cluster_fail(c, "setup", "ring_node_new(n%u, epoch %" PRIu32 "): %s", i, stored_epoch,
			     ring_strerror(err));
		return false;
	}
	m->tick_gen++;
	m->tick_at = CLUSTER_NEVER;
	return true;
}

void cluster_stop(struct cluster *c, uint32_t i, struct ring_status *last)
{
	struct cluster_member *m = &c->m[i];
	if (m->rn && last)
		ring_node_status(m->rn, c->now, last);
	ring_node_free(m->rn);
	m->rn = NULL;
	m->have_status = false;
	m->tick_gen++;
	m->tick_at = CLUSTER_NEVER;
}

bool cluster_tick_current(const struct cluster *c, const struct simnet_item *item)
{
	const struct cluster_member *m = &c->m[item->node];
	return m->rn && item->gen == m->tick_gen;
}

struct ring_event cluster_event(const struct cluster *c, enum ring_event_type type,
				const struct simnet_item *it, uint64_t client)
{
	struct ring_event ev = {.type = type, .now_us = c->now};
	if (type == RING_EVENT_DATAGRAM) {
		ev.u.datagram.buf = it->buf;
		ev.u.datagram.len = it->len;
		ev.u.datagram.from_id = c->m[it->src].id;
	} else if (type == RING_EVENT_ACQUIRE || type == RING_EVENT_RELEASE || type == RING_EVENT_RENEW ||
		   type == RING_EVENT_TRY) {
		ev.u.client.client = client;
	}
	return ev;
}

/* A RING_ASSERT failed inside member c->stepping's step: the run fails
 * there, with its seed, like any invariant (core/assert.h). */
static void assert_failed(void *arg, const char *file, int line, const char *expr)
{
	struct cluster *c = arg;
	cluster_fail(c, "assert", "n%u: %s:%d: %s", c->stepping, file, line, expr);
}

const struct ring_update *cluster_step(struct cluster *c, uint32_t i,
				       const struct ring_event *ev)
{
	c->stepping = i;
	ring_assert_set_hook(assert_failed, c);
	struct cluster_member *m = &c->m[i];
	if (ev->type == RING_EVENT_TICK)
		m->tick_at = CLUSTER_NEVER; /* the tick it was is spent */
	struct ring_update *up = c->step_into ? c->step_into : &c->upd;
	up->cap = RING_UPDATE_MAX / 2;
	ring_node_step(m->rn, ev, up);
	ring_node_status(m->rn, c->now, &m->status);
	m->have_status = true;
	return up;
}

void cluster_arm(struct cluster *c, uint32_t i)
{
	struct cluster_member *m = &c->m[i];
	uint64_t d = (c->step_into ? c->step_into : &c->upd)->deadline_us;
	if (d == CLUSTER_NEVER) {
		m->tick_gen++;
		m->tick_at = CLUSTER_NEVER;
		return;
	}
	if (d < c->now)
		d = c->now;
	if (d != m->tick_at) {
		m->tick_gen++;
		m->tick_at = d;
		cluster_schedule(c, d, CLUSTER_EV_TICK, i, 0, m->tick_gen);
	}
}
