/* The simulated world's machinery: the seeded random source, the event queue
 * on virtual time and the lossy, duplicating, delaying network (simnet.h). */
#include "lib/simnet.h"

#include <stdlib.h>
#include <string.h>

/* ---- randomness ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* The tape (simnet_tape): while it lasts, each draw is its next 8 bytes. */
static const uint8_t *tape;
static size_t tape_left;

void simnet_tape(const uint8_t *bytes, size_t len)
{
	tape = bytes;
	tape_left = bytes ? len : 0;
}

uint64_t simnet_rng_next(struct simnet_rng *r)
{
	uint64_t result = rotl(r->s[1] * 5, 7) * 9;
	if (tape_left >= 8) {
		uint64_t v = 0;
		for (int k = 0; k < 8; k++)
			v = v << 8 | tape[k];
		tape += 8;
		tape_left -= 8;
		result = v;
	}
	uint64_t t = r->s[1] << 17;
	r->s[2] ^= r->s[0];
	r->s[3] ^= r->s[1];
	r->s[1] ^= r->s[2];
	r->s[0] ^= r->s[3];
	r->s[2] ^= t;
	r->s[3] = rotl(r->s[3], 45);
	return result;
}

void simnet_rng_seed(struct simnet_rng *r, uint64_t seed, const char *salt)
{
	uint64_t x = seed;
	for (const char *p = salt; *p; p++)
		x = (x ^ (unsigned char)*p) * 0x100000001b3ull;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t simnet_rng_below(struct simnet_rng *r, uint64_t n)
{
	return simnet_rng_next(r) % n;
}

uint64_t simnet_rng_range(struct simnet_rng *r, uint64_t lo, uint64_t hi)
{
	return hi <= lo ? lo : lo + simnet_rng_below(r, hi - lo + 1);
}

bool simnet_rng_chance(struct simnet_rng *r, double p)
{
	return (double)(simnet_rng_next(r) >> 11) * 0x1.0p-53 < p;
}

/* ---- the event queue ---- */

void simnet_queue_init(struct simnet_queue *q)
{
	memset(q, 0, sizeof *q);
	q->free_item = UINT32_MAX;
}

void simnet_queue_free(struct simnet_queue *q)
{
	free(q->heap);
	free(q->items);
	q->heap = NULL;
	q->items = NULL;
	q->heap_n = q->heap_cap = 0;
	q->items_n = q->items_cap = 0;
	q->free_item = UINT32_MAX;
}

static bool slot_less(const struct simnet_slot *a, const struct simnet_slot *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void nomem(struct simnet_queue *q, const char *what)
{
	if (!q->nomem)
		q->nomem = what;
}

bool simnet_push(struct simnet_queue *q, uint64_t t, uint32_t item)
{
	if (q->heap_n == q->heap_cap) {
		size_t cap = q->heap_cap ? q->heap_cap * 2 : 1024;
		struct simnet_slot *h = realloc(q->heap, cap * sizeof *h);
		if (!h) {
			nomem(q, "out of memory (event queue)");
			return false;
		}
		q->heap = h;
		q->heap_cap = cap;
	}
	struct simnet_slot s = {t, q->seq++, item};
	size_t i = q->heap_n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!slot_less(&s, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = s;
	return true;
}

struct simnet_slot simnet_pop(struct simnet_queue *q)
{
	struct simnet_slot top = q->heap[0];
	struct simnet_slot last = q->heap[--q->heap_n];
	size_t i = 0, n = q->heap_n;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && slot_less(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!slot_less(&q->heap[c], &last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (n > 0)
		q->heap[i] = last;
	return top;
}

uint32_t simnet_item_new(struct simnet_queue *q, int kind)
{
	uint32_t i;
	if (q->free_item != UINT32_MAX) {
		i = q->free_item;
		q->free_item = q->items[i].next_free;
	} else {
		if (q->items_n == q->items_cap) {
			uint32_t cap = q->items_cap ? q->items_cap * 2 : 1024;
			struct simnet_item *it = realloc(q->items, cap * sizeof *it);
			if (!it) {
				nomem(q, "out of memory (events)");
				return UINT32_MAX;
			}
			q->items = it;
			q->items_cap = cap;
		}
		i = q->items_n++;
	}
	struct simnet_item *it = &q->items[i];
	it->kind = kind;
	it->node = it->src = it->gen = it->arg = 0;
	it->len = 0;
	return i;
}

void simnet_item_free(struct simnet_queue *q, uint32_t i)
{
	q->items[i].next_free = q->free_item;
	q->free_item = i;
}

/* ---- the network ---- */

bool simnet_link_cut(const struct simnet_link *link, uint32_t a, uint32_t b)
{
	if (link->cut && ((link->side >> a) & 1) != ((link->side >> b) & 1))
		return true;
	return link->dcut && b < SIMNET_MAX_N && a < SIMNET_MAX_N && ((link->deaf[b] >> a) & 1);
}

static void deliver_later(struct simnet_link *link, struct simnet_rng *rng,
			  struct simnet_queue *q, uint64_t now, int kind, uint32_t src,
			  uint32_t dst, const uint8_t *buf, uint16_t len)
{
	uint64_t delay = simnet_rng_range(rng, link->min_delay_us, link->max_delay_us);
	if (link->loss_on && simnet_rng_chance(rng, link->p_slow))
		delay = simnet_rng_range(rng, link->min_delay_us, link->slow_delay_us);
	uint32_t i = simnet_item_new(q, kind);
	if (i == UINT32_MAX)
		return;
	struct simnet_item *it = &q->items[i];
	it->node = dst;
	it->src = src;
	it->len = len;
	memcpy(it->buf, buf, len);
	if (simnet_push(q, now + delay, i)) {
		if (delay > link->last_delay_us)
			link->last_delay_us = delay;
		link->copies++;
		link->delay_sum_us += delay;
	}
}

enum simnet_fate simnet_send(struct simnet_link *link, struct simnet_rng *rng,
			     struct simnet_queue *q, uint64_t now, int kind, uint32_t src,
			     uint32_t dst, const uint8_t *buf, uint16_t len)
{
	link->last_delay_us = 0;
	if (simnet_link_cut(link, src, dst))
		return SIMNET_CUT;
	if (link->loss_on && simnet_rng_chance(rng, link->p_loss))
		return SIMNET_LOST;
	deliver_later(link, rng, q, now, kind, src, dst, buf, len);
	if (link->loss_on && simnet_rng_chance(rng, link->p_dup)) {
		deliver_later(link, rng, q, now, kind, src, dst, buf, len);
		return SIMNET_DUPLICATED;
	}
	return SIMNET_SENT;
}
