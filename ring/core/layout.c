/* The ring layout's helpers: member lookup, quorum size, fingerprint and the
 * sanity rules on timings. */
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

static uint64_t fnv_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Numbers are hashed as 8 big-endian bytes so that the fingerprint is the
 * same on every host whatever its byte order. */
static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (56 - 8 * i));
	return fnv_bytes(h, b, sizeof b);
}

/* MAX is the size of the array S lives in: a string that fills it without
 * a terminator is hashed up to its end, never past it. */
static uint64_t fnv_str(uint64_t h, const char *s, size_t max)
{
	size_t len = strnlen(s, max);
	h = fnv_u64(h, len);
	return fnv_bytes(h, s, len);
}

uint64_t ring_layout_fingerprint(const struct ring_layout *layout)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv_str(h, layout->name, sizeof layout->name);
	h = fnv_u64(h, layout->lease_ms);
	h = fnv_u64(h, layout->ack_timeout_ms);
	h = fnv_u64(h, layout->retries);
	h = fnv_u64(h, layout->heartbeat_ms);
	h = fnv_u64(h, layout->loss_timeout_ms);
	h = fnv_u64(h, layout->idle_pass_ms);
	/* Only when set, so that a file without it keeps the fingerprint it
	 * had before the key existed (a rolling upgrade stays one ring). */
	if (layout->max_hold_ms)
		h = fnv_u64(fnv_str(h, "max_hold_ms", 16), layout->max_hold_ms);
	h = fnv_u64(h, (uint64_t)layout->quorum);
	h = fnv_u64(h, layout->n);
	for (size_t i = 0; i < layout->n; i++) {
		h = fnv_u64(h, layout->members[i].id);
		h = fnv_str(h, layout->members[i].host,
			    sizeof layout->members[i].host);
		h = fnv_u64(h, layout->members[i].port);
	}
	return h;
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
