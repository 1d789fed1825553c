/* The ring's layout: its members in ring order, its timings, and the
 * fingerprint every datagram carries so that members with different files
 * refuse each other (the core compares it; common/fingerprint.c makes it).
 * Pure data; conf.c fills it from the INI file. */
#ifndef RING_LAYOUT_H
#define RING_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RING_MIN_MEMBERS 2
#define RING_MAX_MEMBERS 256 /* a member's ring index fits the epoch's low byte */
#define RING_NAME_MAX 64
#define RING_HOST_MAX 256

enum ring_quorum { RING_QUORUM_MAJORITY, RING_QUORUM_NONE };

struct ring_member {
	uint16_t id;                /* 1..65535, from [node.ID] */
	char host[RING_HOST_MAX];   /* used by the daemon only */
	uint16_t port;
};

struct ring_layout {
	char name[RING_NAME_MAX];
	uint32_t lease_ms;
	uint32_t ack_timeout_ms;
	uint32_t retries;
	uint32_t heartbeat_ms;
	uint32_t loss_timeout_ms;
	uint32_t idle_pass_ms;
	/* The longest one visit may keep the region however often its client
	 * renews (RENEW); 0: no bound beyond the lease itself. */
	uint32_t max_hold_ms;
	enum ring_quorum quorum;
	/* Every datagram is authenticated (secret_file, or the ring's own key),
	 * so none from a stranger reaches the core. Set by the daemon, not read
	 * from the file, and not in the fingerprint. */
	bool keyed;
	/* What this member's datagrams carry and what it accepts of others'
	 * (§2): ring_layout_fingerprint() (common/fingerprint.c) of the rest,
	 * filled by whoever starts the node (the daemon); the simulator leaves
	 * it 0, its members sharing one layout. Not read from the file. */
	uint64_t fingerprint;
	size_t n;                                  /* members */
	struct ring_member members[RING_MAX_MEMBERS]; /* in ring order: members[i+1] follows members[i] */
};

/* Ring index (0..n-1) of member ID, or -1 when ID is not a member. */
int ring_layout_index(const struct ring_layout *layout, uint16_t id);

/* Members that must take part in a regeneration: n/2+1 with a majority
 * quorum, 1 with none. */
size_t ring_layout_quorum(const struct ring_layout *layout);

/* What two members must agree on, as bytes: the name, the timings, the
 * quorum rule and the members (id, host, port) in ring order, numbers as 8
 * big-endian bytes, strings after their length. Handed to FEED piece by
 * piece; the hash of them is common/fingerprint.c's (the core links no
 * hash library). */
typedef void ring_layout_feed_fn(void *ctx, const void *data, size_t len);
void ring_layout_digest(const struct ring_layout *layout, ring_layout_feed_fn *feed, void *ctx);

/* Checks what the protocol needs of the numbers: member count, distinct ids,
 * timings that let a live token be told from a lost one (PROTOCOL.md §6).
 * Returns 0, or -RING_ECONFIG with a message in err. */
int ring_layout_check(const struct ring_layout *layout, char *err, size_t errlen);

/* Fills the defaults for every timing (SPEC.md) and clears the member list. */
void ring_layout_defaults(struct ring_layout *layout);

#endif
