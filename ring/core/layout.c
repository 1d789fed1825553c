/* The ring layout's helpers: member lookup, quorum size, the bytes its
 * fingerprint is a hash of, and the sanity rules on timings. */
#include "core/layout.h"

#include <stdio.h>
#include <string.h>

#include "core/err.h"

void ring_layout_defaults(struct ring_layout *layout)
{
	memset(layout, 0, sizeof *layout);
	layout->lease_ms = 5000;
	layout->ack_timeout_ms = 20;
	layout->retries = 3;
	layout->heartbeat_ms = 100;
	layout->loss_timeout_ms = 1000;
	layout->idle_pass_ms = 0;
	layout->quorum = RING_QUORUM_MAJORITY;
}

int ring_layout_index(const struct ring_layout *layout, uint16_t id)
{
	for (size_t i = 0; i < layout->n; i++)
		if (layout->members[i].id == id)
			return (int)i;
	return -1;
}

size_t ring_layout_quorum(const struct ring_layout *layout)
{
	return layout->quorum == RING_QUORUM_MAJORITY ? layout->n / 2 + 1 : 1;
}

/* Numbers are fed as 8 big-endian bytes so that the fingerprint is the
 * same on every host whatever its byte order. */
static void feed_u64(ring_layout_feed_fn *feed, void *ctx, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (56 - 8 * i));
	feed(ctx, b, sizeof b);
}

/* MAX is the size of the array S lives in: a string that fills it without
 * a terminator is fed up to its end, never past it. Its length first, so
 * that "ab" + "c" and "a" + "bc" differ. */
static void feed_str(ring_layout_feed_fn *feed, void *ctx, const char *s, size_t max)
{
	size_t len = strnlen(s, max);
	feed_u64(feed, ctx, len);
	feed(ctx, s, len);
}

void ring_layout_digest(const struct ring_layout *layout, ring_layout_feed_fn *feed, void *ctx)
{
	feed_str(feed, ctx, layout->name, sizeof layout->name);
	feed_u64(feed, ctx, layout->lease_ms);
	feed_u64(feed, ctx, layout->ack_timeout_ms);
	feed_u64(feed, ctx, layout->retries);
	feed_u64(feed, ctx, layout->heartbeat_ms);
	feed_u64(feed, ctx, layout->loss_timeout_ms);
	feed_u64(feed, ctx, layout->idle_pass_ms);
	/* Only when set, so that a file without it describes the ring it
	 * did before the key existed. */
	if (layout->max_hold_ms) {
		feed_str(feed, ctx, "max_hold_ms", 16);
		feed_u64(feed, ctx, layout->max_hold_ms);
	}
	feed_u64(feed, ctx, (uint64_t)layout->quorum);
	feed_u64(feed, ctx, layout->n);
	for (size_t i = 0; i < layout->n; i++) {
		feed_u64(feed, ctx, layout->members[i].id);
		feed_str(feed, ctx, layout->members[i].host, sizeof layout->members[i].host);
		feed_u64(feed, ctx, layout->members[i].port);
	}
}

int ring_layout_check(const struct ring_layout *layout, char *err, size_t errlen)
{
	if (layout->n < RING_MIN_MEMBERS || layout->n > RING_MAX_MEMBERS) {
		snprintf(err, errlen, "a ring has %d..%d members, this one has %zu",
			 RING_MIN_MEMBERS, RING_MAX_MEMBERS, layout->n);
		return -RING_ECONFIG;
	}
	for (size_t i = 0; i < layout->n; i++) {
		if (layout->members[i].id == 0) {
			snprintf(err, errlen, "member ids are 1..65535");
			return -RING_ECONFIG;
		}
		for (size_t j = i + 1; j < layout->n; j++)
			if (layout->members[i].id == layout->members[j].id) {
				snprintf(err, errlen, "duplicate member id %u",
					 layout->members[i].id);
				return -RING_ECONFIG;
			}
	}
	if (layout->ack_timeout_ms == 0 || layout->heartbeat_ms == 0 ||
	    layout->lease_ms == 0 || layout->loss_timeout_ms == 0) {
		snprintf(err, errlen, "timings must be positive");
		return -RING_ECONFIG;
	}
	/* A live holder is heard every heartbeat_ms; a member stays silent for
	 * half the loss timeout before it takes part in an election
	 * (PROTOCOL.md §6), so two heartbeats must fit in that half. */
	if ((uint64_t)layout->heartbeat_ms * 4 > layout->loss_timeout_ms) {
		snprintf(err, errlen,
			 "loss_timeout_ms (%u) must be at least 4 x heartbeat_ms (%u)",
			 layout->loss_timeout_ms, layout->heartbeat_ms);
		return -RING_ECONFIG;
	}
	/* A resting token heartbeats like a held one; the bound only keeps an
	 * idle ring from looking stuck to its users. */
	if (layout->idle_pass_ms > 60000) {
		snprintf(err, errlen, "idle_pass_ms is at most 60000");
		return -RING_ECONFIG;
	}
	/* A bound below one lease would end grants that never renewed. */
	if (layout->max_hold_ms != 0 && layout->max_hold_ms < layout->lease_ms) {
		snprintf(err, errlen, "max_hold_ms (%u) must be 0 or at least lease_ms (%u)",
			 layout->max_hold_ms, layout->lease_ms);
		return -RING_ECONFIG;
	}
	if (layout->retries > 100) {
		snprintf(err, errlen, "retries is at most 100");
		return -RING_ECONFIG;
	}
	return 0;
}
