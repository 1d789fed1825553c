/* fuzz_datagram's input format, shared by the harness (fuzz_datagram.c)
 * and the generator of its seeds (seeds.c), so that a change to the format
 * is a change to both. An input is a flag byte (bit 0: the member starts
 * from a stored epoch), then records of a length byte, a sender byte and a
 * time-step byte, each sender a member (a datagram of that length
 * follows), a local client's event or a tick (no datagram follows). */
#ifndef RING_FUZZ_DATAGRAM_H
#define RING_FUZZ_DATAGRAM_H

#include <stdint.h>

#include "core/node.h"

#define FUZZ_DG_STORED 0x1u          /* flag byte: a restarted member */
#define FUZZ_DG_STORED_EPOCH 0x300u  /* the epoch it restarts from */
#define FUZZ_DG_MEMBERS 5            /* ids 10, 20, .. 50, ring order */
#define FUZZ_DG_ME 30                /* the member fed the input: index 2 */
#define FUZZ_DG_STEP_US 997          /* what one unit of the time step is */
#define FUZZ_DG_STRANGERS 200        /* senders from here on are no member */
#define FUZZ_DG_STRANGER_0 0xfd      /* one that says nothing of itself (id 0) */
#define FUZZ_DG_CLIENT 0xfe          /* the step says which event, and whose */
#define FUZZ_DG_TICK 0xff

/* The id a datagram comes from for sender byte WHO: mostly members,
 * sometimes strangers (id 0, odd, or an unknown id, even). */
static inline uint16_t fuzz_dg_from(uint8_t who)
{
	if (who < FUZZ_DG_STRANGERS)
		return (uint16_t)(10 * (who % FUZZ_DG_MEMBERS + 1));
	return who & 1 ? 0 : 12345;
}

/* A local client's event for FUZZ_DG_CLIENT: the step's low two bits say
 * which, its top three whose (clients 1..8), the whole step how long after
 * the previous record. */
static inline enum ring_event_type fuzz_dg_client_event(uint8_t step)
{
	static const enum ring_event_type events[] = {RING_EVENT_RELEASE, RING_EVENT_ACQUIRE,
						      RING_EVENT_RENEW, RING_EVENT_TRY};
	return events[step & 3];
}

#endif
