/* libFuzzer target: datagrams from anyone, through the decoder and the
 * protocol core's receive path. The input is a series of datagrams, each
 * prefixed by its length, its sender (ring index, or a stranger) and a time
 * step, fed to a started member of a 5-member ring. Besides crashes and
 * sanitizer reports, it checks that the member's epoch never goes back and
 * that every action it returns is well formed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "layout.h"
#include "node.h"
#include "wire.h"

static struct ring_layout layout;

static void setup(void)
{
	ring_layout_defaults(&layout);
	strcpy(layout.name, "fuzz");
	layout.n = 5;
	for (size_t i = 0; i < layout.n; i++) {
		layout.members[i].id = (uint16_t)(10 * (i + 1));
		strcpy(layout.members[i].host, "h");
		layout.members[i].port = (uint16_t)(7000 + i);
	}
}

/* A FATAL stands alone in its update. Whatever it is fed, the core never
 * runs out of room for a step's actions (given half of RING_UPDATE_MAX, as
 * PROTOCOL.md §7 promises a margin); it may run out of epochs (an
 * EPOCH_REPLY can carry one near the top), and then, broken, it returns
 * one FATAL on every later step. */
static void check_update(const struct ring_update *up, bool *broken)
{
	bool fatal = false;
	for (size_t k = 0; k < up->n; k++)
		fatal = fatal || up->action[k].type == RING_ACTION_FATAL;
	if (fatal) {
		if (up->n != 1 || up->action[0].type != RING_ACTION_FATAL)
			abort();
		if (!*broken && up->action[0].u.fatal.reason != -RING_EEXHAUSTED)
			abort(); /* out of room: an action would have been lost */
		*broken = true;
		return;
	}
	if (*broken)
		abort(); /* a broken member came back */
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		if (a->type == RING_ACTION_SEND) {
			struct ring_msg m;
			/* What the core sends must decode: it is someone's input. */
			if (a->u.send.len > RING_WIRE_MAX ||
			    ring_wire_decode(a->u.send.buf, a->u.send.len, &m) != 0)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (layout.n == 0)
		setup();
	int err;
	/* Half the runs start from a stored epoch: a restarted member. */
	uint32_t stored = size > 0 && (data[0] & 1) ? 0x300 : 0;
	struct ring_node *node = ring_node_new(&layout, 30, stored, &err);
	if (!node)
		abort();
	static struct ring_update up;
	bool broken = false;
	up.cap = RING_UPDATE_MAX / 2;
	uint64_t now = 1000000;
	struct ring_event ev = {.type = RING_EVENT_START, .now_us = now};
	ring_node_step(node, &ev, &up);
	struct ring_status st;
	uint32_t epoch = stored;
	size_t off = 1;
	uint64_t client = 1;
	while (off + 3 <= size) {
		size_t len = data[off];
		uint8_t who = data[off + 1];
		uint8_t step = data[off + 2];
		off += 3;
		if (len > size - off)
			len = size - off;
		now += (uint64_t)step * 997;
		if (who == 0xfe) {
			/* A local client comes or goes: the same paths a member
			 * takes for its own clients, interleaved. */
			ev = (struct ring_event){.type = (step & 1) ? RING_EVENT_ACQUIRE
								  : RING_EVENT_RELEASE,
						 .now_us = now};
			ev.u.client.client = client + (step >> 5);
		} else if (who == 0xff) {
			ev = (struct ring_event){.type = RING_EVENT_TICK, .now_us = now};
		} else {
			ev = (struct ring_event){.type = RING_EVENT_DATAGRAM, .now_us = now};
			ev.u.datagram.buf = data + off;
			ev.u.datagram.len = len;
			/* Mostly members, sometimes strangers (id 0 or unknown). */
			ev.u.datagram.from_id = who < 5 * 40 ? (uint16_t)(10 * (who % 5 + 1))
					       : (who & 1 ? 0 : 12345);
			off += len;
		}
		ring_node_step(node, &ev, &up);
		check_update(&up, &broken);
		ring_node_status(node, now, &st);
		if (st.epoch < epoch)
			abort(); /* epochs never go back */
		epoch = st.epoch;
	}
	ring_node_free(node);
	return 0;
}
