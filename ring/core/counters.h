/* The status counters, from one table: the core's struct, the STATUS_RESP
 * datagram and the JSON status all list them in this order, by these names. */
#ifndef RING_COUNTERS_H
#define RING_COUNTERS_H

#include <stdint.h>

#define RING_COUNTERS(X)       \
	X(tokens_passed)       \
	X(cs_entries)          \
	X(retransmits)         \
	X(skips)               \
	X(elections)           \
	X(regenerations)       \
	X(stale_dropped)       \
	X(bad_packets)         \
	X(auth_failures)       \
	X(config_mismatches)   \
	X(version_mismatches)  \
	X(pauses)              \
	X(parks)               \
	X(summons)

struct ring_counters {
#define RING_COUNTER_FIELD_(name) uint64_t name;
	RING_COUNTERS(RING_COUNTER_FIELD_)
#undef RING_COUNTER_FIELD_
};

#define RING_COUNTER_COUNT (sizeof(struct ring_counters) / sizeof(uint64_t))

#endif
