/* Datagrams on the wire: every message type, its fixed-width fields in
 * network byte order, and the only code in ringd and ringctl that reads or
 * writes a message's bytes (auth.c only appends and checks the trailer that
 * follows them; the hostile-input tests forge bytes on purpose).
 * Layout and field meanings: docs/PROTOCOL.md §2. */
#ifndef RING_WIRE_H
#define RING_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/set.h"

/* The magic "RG" and this byte after it stay where they are in every
 * version to come: that is how a member tells a datagram of another
 * version (version_mismatch, a rolling upgrade gone wrong) from noise.
 * 2: JOIN and LEAVE name the hops they refused or accepted, and
 * EPOCH_QUERY/EPOCH_REPLY. 3: a parked token (TOKEN's idle, HEARTBEAT's
 * flags) and WANT, which summons it (PROTOCOL.md §2, §3.4). 4: HEARTBEAT's
 * BUSY flag, which a try-lock elsewhere yields to, and its beat number and
 * GRANTED flag, which HEARTBEAT_ACK answers: a renewal reaches only a lease
 * past the last time a majority heard its holder (§3.3). 5: BLAKE2b
 * fingerprints, STATUS_RESP's refusal flags, HOLD_REQ/HOLD_RESP. 6: jumps
 * (§3.5): the token's want and knows sets and its walk, HEARTBEAT's want
 * set, and a WANT that names its wanter and is forwarded after the token. */
#define RING_WIRE_VERSION 6
#define RING_WIRE_HEADER 16  /* magic(2) version(1) type(1) from(2) to(2) fingerprint(8) */
#define RING_WIRE_MAX 256    /* room for the longest encoded message */

#define RING_MSG_TYPES(X)                     \
	X(TOKEN, 1, "token")                  \
	X(TOKEN_ACK, 2, "token_ack")          \
	X(HEARTBEAT, 3, "heartbeat")          \
	X(ELECTION, 4, "election")            \
	X(ELECTION_ACK, 5, "election_ack")    \
	X(JOIN, 6, "join")                    \
	X(LEAVE, 7, "leave")                  \
	X(STATUS_REQ, 8, "status_req")        \
	X(STATUS_RESP, 9, "status_resp")      \
	X(EPOCH_QUERY, 10, "epoch_query")     \
	X(EPOCH_REPLY, 11, "epoch_reply")     \
	X(WANT, 12, "want")                   \
	X(HEARTBEAT_ACK, 13, "heartbeat_ack") \
	X(ADVICE_REQ, 14, "advice_req")       \
	X(ADVICE_RESP, 15, "advice_resp")     \
	X(HOLD_REQ, 16, "hold_req")           \
	X(HOLD_RESP, 17, "hold_resp")

enum ring_msg_type {
#define RING_MSG_ENUM_(name, code, str) RING_MSG_##name = code,
	RING_MSG_TYPES(RING_MSG_ENUM_)
#undef RING_MSG_ENUM_
};

/* TOKEN_ACK flag: the receiver knows a newer epoch and dropped the token. */
#define RING_ACK_STALE 0x1u

/* The token: one per epoch; fence of a grant = epoch << 32 | counter. */
struct ring_msg_token {
	uint32_t epoch;    /* never 0 */
	uint32_t seq;      /* hop number within the epoch, from 1 */
	uint32_t counter;  /* grants made under this epoch so far */
	uint32_t quiet_us; /* microseconds since the token last heartbeat */
	uint32_t idle;     /* hops in a row that found nobody waiting (§3.4) */
	uint32_t walk_us;  /* microseconds since the token's last walk ended (§3.5) */
	uint32_t walk_left; /* passes left in the walk under way; 0: none */
	struct ring_set alive;
	struct ring_set want;  /* members waiting for the token: it jumps to them (§3.5) */
	struct ring_set knows; /* members that persisted this epoch (§4.4) */
};

struct ring_msg_token_ack {
	uint32_t epoch;
	uint32_t seq;
	uint32_t known_epoch; /* the receiver's epoch */
	uint32_t flags;       /* RING_ACK_* */
};

/* HEARTBEAT flags: the token is parked at the sender until summoned; a
 * client of the sender holds the region or waits for it there, or another
 * member summoned it (what a try-lock elsewhere is refused on); a client
 * of the sender is in the region, and each receiver answers this beat
 * with a HEARTBEAT_ACK, which its renewals need (§3.3). A bit not defined
 * here is refused. */
#define RING_HB_PARKED 0x1u
#define RING_HB_BUSY 0x2u
#define RING_HB_GRANTED 0x4u

struct ring_msg_heartbeat {
	uint32_t epoch; /* never 0 */
	uint32_t seq;
	uint32_t counter;
	uint32_t flags; /* RING_HB_* */
	uint32_t beat;  /* the sender's heartbeats so far: what an ack names */
	struct ring_set alive;
	struct ring_set want; /* the token's want set: a waiter finds itself here (§3.5) */
};

/* "I heard your heartbeat BEAT of hop EPOCH/SEQ": a holder counts these to
 * know when a majority last heard it, which bounds its renewals (§3.3). */
struct ring_msg_heartbeat_ack {
	uint32_t epoch; /* never 0 */
	uint32_t seq;
	uint32_t beat;
};

/* A summons (§3.5): "WANTER waits for the token, last heard of at hop
 * EPOCH/SEQ". The holder adds WANTER to the token's want set; a member the
 * token has left forwards it where it passed the token, HOPS counting the
 * forwards. It has no authority: all it can do is make the token visit a
 * member of its alive set. */
struct ring_msg_want {
	uint32_t epoch;  /* never 0 */
	uint32_t seq;
	uint16_t wanter; /* member id, never 0 */
	uint16_t hops;   /* forwards so far */
};

/* ELECTION flag: the initiator's previous round had fewer participants
 * than a quorum, so the members it reaches report no-quorum too. */
#define RING_ELECTION_NO_QUORUM 0x1u

struct ring_msg_election {
	uint16_t initiator; /* member id, never 0 */
	uint16_t hops;
	uint32_t round;     /* initiator's election count, never 0 */
	uint32_t max_epoch; /* highest epoch known to anyone on the way */
	struct ring_set participants;
	uint32_t flags;     /* RING_ELECTION_* */
};

struct ring_msg_election_ack {
	uint16_t initiator;
	uint16_t hops;
	uint32_t round;
};

/* A hop of the token: its epoch and seq; {0, 0} is none. */
struct ring_hop {
	uint32_t epoch;
	uint32_t seq;
};

struct ring_msg_join {
	uint32_t epoch;       /* the joiner's epoch: the new one must be higher */
	struct ring_hop refused; /* the pass it refused (restarted), or none */
};

struct ring_msg_leave {
	uint32_t epoch;
	struct ring_hop accepted; /* the last hop the leaver accepted */
	struct ring_hop refused;  /* a pass it refused because it is leaving, or none */
};

/* A starting member asks what epoch the others know (§5.3); NONCE tells
 * this life's answers from a previous one's. */
struct ring_msg_epoch_query {
	uint64_t nonce;
};

struct ring_msg_epoch_reply {
	uint64_t nonce; /* the query's */
	uint32_t epoch; /* the replier's persisted epoch */
};

/* Status over UDP (`ringctl ring`): the one request accepted from any
 * address, since ringctl is not a member; from = 0 there. */
struct ring_msg_status_req {
	uint64_t nonce;
};

#define RING_STATUS_HAS_TOKEN 0x1u
#define RING_STATUS_PARKED 0x2u /* the token is parked here (§3.4) */
/* The request was refused, and every other field is 0: it did not
 * authenticate here (another key, a clock more than RING_AUTH_FRESH_US
 * away), or it is of another file (the answer's fingerprint is ours). So
 * that ringctl says "auth fails" or "another file", not "down" (§2,
 * version 5). */
#define RING_STATUS_UNAUTHENTICATED 0x4u
#define RING_STATUS_OTHER_CONFIG 0x8u

struct ring_msg_status_resp {
	uint64_t nonce;   /* the request's */
	uint8_t state;    /* enum ring_state */
	uint8_t flags;    /* RING_STATUS_* */
	uint16_t successor;
	uint32_t epoch;
	uint64_t fence;
	uint32_t seen_ms; /* since the token was last heard; UINT32_MAX = never */
	uint32_t queued;
	struct ring_set alive;
	struct ring_counters counters;
};

/* Lease advice over UDP (`ringctl lease-advice`, `watch`): like status,
 * asked by ringctl from any address (from = 0) and answered by the shell.
 * The answer is the member's own record since it started: holds of its
 * clients (GRANTED to release) and the pauses its core detected. */
struct ring_msg_advice_req {
	uint64_t nonce;
};

struct ring_msg_advice_resp {
	uint64_t nonce;        /* the request's */
	uint64_t holds;        /* grants of this member's clients that ended */
	uint64_t p50_us;       /* hold time percentiles, each an upper bound */
	uint64_t p99_us;       /* within 1/32 of the true value (hold_hist.h); */
	uint64_t p999_us;      /* p50 <= p99 <= p999 <= max_us */
	uint64_t max_us;       /* the longest hold, exact; 0 when holds is 0 */
	uint64_t pause_max_us; /* the longest pause detected; 0: none */
	uint64_t pauses;       /* pauses detected (the status counter) */
};

/* Who holds the lock here (`ringctl watch`, `ring`): like status, asked by
 * ringctl from any address (from = 0) and answered by the shell. A pair of
 * its own, not more bytes in STATUS_RESP: a decoder takes a datagram only
 * at its type's exact length and refuses unknown flag bits, so a longer
 * or newly flagged STATUS_RESP would make every older ringctl see every
 * newer member as down (PROTOCOL.md §2). */
struct ring_msg_hold_req {
	uint64_t nonce;
};

struct ring_msg_hold_resp {
	uint64_t nonce;   /* the request's */
	uint64_t fence;   /* the grant a client of this member is in the region under; 0: none */
	uint32_t held_ms; /* since that grant (GRANTED), renewals or not; 0 without one */
};

struct ring_msg {
	enum ring_msg_type type;
	uint16_t from;        /* sender's member id, never 0 (but for STATUS_REQ, ADVICE_REQ, HOLD_REQ) */
	uint16_t to;          /* receiver's id, 0 = every member */
	uint64_t fingerprint; /* the layout's (ring_layout.fingerprint) */
	union {
		struct ring_msg_token token;
		struct ring_msg_token_ack token_ack;
		struct ring_msg_heartbeat heartbeat;
		struct ring_msg_election election;
		struct ring_msg_election_ack election_ack;
		struct ring_msg_join join;
		struct ring_msg_leave leave;
		struct ring_msg_status_req status_req;
		struct ring_msg_status_resp status_resp;
		struct ring_msg_epoch_query epoch_query;
		struct ring_msg_epoch_reply epoch_reply;
		struct ring_msg_want want;
		struct ring_msg_heartbeat_ack heartbeat_ack;
		struct ring_msg_advice_req advice_req;
		struct ring_msg_advice_resp advice_resp;
		struct ring_msg_hold_req hold_req;
		struct ring_msg_hold_resp hold_resp;
	} u;
};

/* Encodes MSG into BUF. Returns the length, or -RING_ENOSPACE when CAP is too
 * small, -RING_ETYPE for an unknown type. */
int ring_wire_encode(const struct ring_msg *msg, uint8_t *buf, size_t cap);

/* Decodes LEN bytes into MSG, trusting nothing: never reads past LEN; the
 * length must be exactly that of the type. Returns 0 or -RING_ESHORT,
 * -RING_ELONG, -RING_EMAGIC, -RING_EVERSION, -RING_ETYPE, -RING_EFIELD. */
int ring_wire_decode(const uint8_t *buf, size_t len, struct ring_msg *msg);

/* The type of the datagram in BUF without decoding it, or 0 when BUF is
 * too short to have one or is not ours (magic, version). For ordering a
 * batch only (ring_node_rx_rank); trust starts at ring_wire_decode. */
enum ring_msg_type ring_wire_peek_type(const uint8_t *buf, size_t len);

/* The wire version byte of a datagram that carries our magic, or -1 when
 * BUF is too short to hold one or is not ours. Lets the receiver of a
 * datagram that ring_wire_decode refused with -RING_EVERSION name the
 * version it came in (version_mismatch); it trusts nothing else. */
int ring_wire_peek_version(const uint8_t *buf, size_t len);

/* Encoded length of a message of TYPE, header included; 0 if unknown. */
size_t ring_wire_size(enum ring_msg_type type);

/* "token", "heartbeat", ...; "unknown" otherwise. */
const char *ring_msg_name(enum ring_msg_type type);

#endif
