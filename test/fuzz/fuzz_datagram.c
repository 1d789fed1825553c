/* libFuzzer target: datagrams from anyone, through the decoder and the
 * protocol core's receive path. The input is a series of datagrams, each
 * prefixed by its length, its sender (ring index, or a stranger) and a time
 * step, fed to a started member of a 5-member ring (fuzz_datagram.h; the
 * seeds in corpus/datagram are made by seeds.c, `make fuzz-seeds`). Besides crashes and
 * sanitizer reports, it checks that the member's epoch never goes back and
 * that every action it returns is well formed.
 *
 * Two fields no fuzzer guesses are filled in, as an attacker on the path
 * would (PROTOCOL.md §5.3: the nonce travels in clear): a header whose
 * fingerprint is 0 gets the ring's, and an EPOCH_REPLY whose nonce is 0
 * gets the member's latest EPOCH_QUERY nonce (1: its first of this life,
 * a late answer), so on_epoch_reply runs for real. It also checks that a
 * member that started from a stored epoch never moves more than 2^16 + 1
 * generations in one step (the reach of any datagram, §4.2, plus one mint)
 * unless two members answered beyond its reach (§5.3: then they vouch for
 * it): issue 26's hole. RING_FUZZ_EPOCH_REACH=0 turns that check off. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/err.h"
#include "core/layout.h"
#include "core/node.h"
#include "core/wire.h"
#include "fuzz_datagram.h"

static struct ring_layout layout;
static uint64_t fingerprint;
static bool check_reach;
/* This run's EPOCH_QUERY nonces, from the member's SEND actions. */
static uint64_t first_nonce, last_nonce;

static void setup(void)
{
	ring_layout_defaults(&layout);
	strcpy(layout.name, "fuzz");
	layout.n = FUZZ_DG_MEMBERS;
	for (size_t i = 0; i < layout.n; i++) {
		layout.members[i].id = fuzz_dg_from((uint8_t)i);
		strcpy(layout.members[i].host, "h");
		layout.members[i].port = (uint16_t)(7000 + i);
	}
	/* Any value but 0 (which patch() replaces): the fuzzer links the core
	 * alone, without the hash of common/fingerprint.c. */
	layout.fingerprint = 0x66757a7a72696e67ULL; /* "fuzzring" */
	fingerprint = layout.fingerprint;
	const char *reach = getenv("RING_FUZZ_EPOCH_REACH");
	check_reach = !reach || strcmp(reach, "0") != 0;
}

/* Records the nonces of the queries the member sends. */
static void note_queries(const struct ring_update *up)
{
	for (size_t k = 0; k < up->n; k++) {
		const struct ring_action *a = &up->action[k];
		struct ring_msg m;
		if (a->type != RING_ACTION_SEND ||
		    ring_wire_decode(a->u.send.buf, a->u.send.len, &m) != 0 ||
		    m.type != RING_MSG_EPOCH_QUERY)
			continue;
		if (!first_nonce)
			first_nonce = m.u.epoch_query.nonce;
		last_nonce = m.u.epoch_query.nonce;
	}
}

/* Fills in what an attacker reads off the wire (see the top). */
static void patch(uint8_t *buf, size_t len)
{
	if (len < RING_WIRE_HEADER)
		return;
	if (ring_get_be64(buf + 8) == 0)
		ring_put_be64(buf + 8, fingerprint);
	if (buf[3] != RING_MSG_EPOCH_REPLY || len < RING_WIRE_HEADER + 8)
		return;
	uint64_t n = ring_get_be64(buf + RING_WIRE_HEADER);
	if (n == 0)
		ring_put_be64(buf + RING_WIRE_HEADER, last_nonce);
	else if (n == 1)
		ring_put_be64(buf + RING_WIRE_HEADER, first_nonce);
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
	uint32_t stored = size > 0 && (data[0] & FUZZ_DG_STORED) ? FUZZ_DG_STORED_EPOCH : 0;
	struct ring_node *node = ring_node_new(&layout, FUZZ_DG_ME, stored, &err);
	if (!node)
		abort();
	static struct ring_update up;
	static uint8_t dgram[256];
	bool broken = false;
	first_nonce = last_nonce = 0;
	up.cap = RING_UPDATE_MAX / 2;
	uint64_t now = 1000000;
	struct ring_event ev = {.type = RING_EVENT_START, .now_us = now};
	ring_node_step(node, &ev, &up);
	note_queries(&up);
	struct ring_status st;
	uint32_t epoch = stored;
	unsigned far_from = 0; /* members that answered beyond reach (bit who % FUZZ_DG_MEMBERS) */
	size_t off = 1;
	uint64_t client = 1;
	while (off + 3 <= size) {
		size_t len = data[off];
		uint8_t who = data[off + 1];
		uint8_t step = data[off + 2];
		off += 3;
		if (len > size - off)
			len = size - off;
		now += (uint64_t)step * FUZZ_DG_STEP_US;
		if (who == FUZZ_DG_CLIENT) {
			/* A local client comes, renews, tries or goes: the same
			 * paths a member takes for its own clients, interleaved. */
			ev = (struct ring_event){.type = fuzz_dg_client_event(step), .now_us = now};
			ev.u.client.client = client + (step >> 5);
		} else if (who == FUZZ_DG_TICK) {
			ev = (struct ring_event){.type = RING_EVENT_TICK, .now_us = now};
		} else {
			ev = (struct ring_event){.type = RING_EVENT_DATAGRAM, .now_us = now};
			memcpy(dgram, data + off, len);
			patch(dgram, len);
			ev.u.datagram.buf = dgram;
			ev.u.datagram.len = len;
			ev.u.datagram.from_id = fuzz_dg_from(who);
			off += len;
			struct ring_msg m;
			if (who < FUZZ_DG_STRANGERS && ring_wire_decode(dgram, len, &m) == 0 &&
			    m.type == RING_MSG_EPOCH_REPLY && m.from == ev.u.datagram.from_id &&
			    (m.u.epoch_reply.epoch >> 8) > (epoch >> 8) + 0x10000u)
				far_from |= 1u << (who % FUZZ_DG_MEMBERS);
		}
		ring_node_step(node, &ev, &up);
		check_update(&up, &broken);
		note_queries(&up);
		ring_node_status(node, now, &st);
		if (st.epoch < epoch)
			abort(); /* epochs never go back */
		if (check_reach && stored && (st.epoch >> 8) > (epoch >> 8) + 0x10000u + 1u &&
		    __builtin_popcount(far_from) < 2)
			abort(); /* one member's word carried the member beyond reach */
		epoch = st.epoch;
	}
	ring_node_free(node);
	return 0;
}
