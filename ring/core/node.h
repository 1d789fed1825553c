/* The token-ring protocol as a pure state machine: fed events with the
 * current time, it returns actions. No sockets, no clock, no I/O; the daemon
 * and the simulator drive it the same way. Design: docs/PROTOCOL.md. */
#ifndef RING_NODE_H
#define RING_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"
#include "core/layout.h"
#include "core/set.h"
#include "core/wire.h"

#define RING_STATES(X)                  \
	X(IDLE, "idle")                 \
	X(WAITING, "waiting")           \
	X(HOLDING, "holding")           \
	X(ELECTING, "electing")         \
	X(NO_QUORUM, "no-quorum")

enum ring_state {
#define RING_STATE_ENUM_(name, str) RING_STATE_##name,
	RING_STATES(RING_STATE_ENUM_)
#undef RING_STATE_ENUM_
};

const char *ring_state_name(enum ring_state state);

/* Log events the core emits, with the names of their (up to three) numeric
 * fields. SPEC.md lists them; -v events are marked verbose. */
#define RING_LOG_EVENTS(X)                                                   \
	X(TOKEN_RECV, "token_recv", 1, "from", "epoch", "seq")               \
	X(TOKEN_PASS, "token_pass", 1, "to", "epoch", "seq")                 \
	X(CS_ENTER, "cs_enter", 0, "fence", "epoch", "client")               \
	X(CS_EXIT, "cs_exit", 0, "fence", "client", NULL)                    \
	X(LEASE_EXPIRED, "lease_expired", 0, "fence", "client", NULL)        \
	X(RETRANSMIT, "retransmit", 0, "to", "epoch", "seq")                 \
	X(SUCCESSOR_SKIP, "successor_skip", 0, "dead", "epoch", NULL)        \
	X(MEMBER_REJOIN, "member_rejoin", 0, "id", "epoch", NULL)            \
	X(MEMBER_LEAVE, "member_leave", 0, "id", "epoch", NULL)              \
	X(LOSS_SUSPECT, "loss_suspect", 0, "silent_ms", "epoch", NULL)       \
	X(ELECTION_START, "election_start", 0, "round", "epoch", NULL)       \
	X(ELECTION_WON, "election_won", 0, "epoch", "round", "participants") \
	X(TOKEN_REGEN, "token_regen", 0, "epoch", "alive", NULL)             \
	X(TOKEN_STALE_DROP, "token_stale_drop", 0, "epoch", "from", "known") \
	X(EPOCH_ADOPT, "epoch_adopt", 0, "epoch", "from", NULL)              \
	X(NO_QUORUM, "no_quorum", 0, "have", "need", NULL)                   \
	X(BAD_PACKET, "bad_packet", 0, "from", "reason", NULL)               \
	X(CONFIG_MISMATCH, "config_mismatch", 0, "from", NULL, NULL)         \
	X(VERSION_MISMATCH, "version_mismatch", 0, "from", "theirs", "ours") \
	X(PAUSE_DETECTED, "pause_detected", 0, "ms", NULL, NULL)             \
	X(LEAVE_DONE, "leave_done", 0, "epoch", NULL, NULL)                  \
	X(LEAVE_TIMEOUT, "leave_timeout", 0, "after_ms", NULL, NULL)         \
	X(EPOCH_LEARNED, "epoch_learned", 0, "epoch", "replies", "start")    \
	X(EPOCH_EXHAUSTED, "epoch_exhausted", 0, "epoch", NULL, NULL)       \
	X(EPOCH_OUT_OF_REACH, "epoch_out_of_reach", 0, "stored", "known", "replies") \
	X(TOKEN_PARK, "token_park", 0, "epoch", "seq", "idle")              \
	X(TOKEN_SUMMON, "token_summon", 0, "to", "epoch", "seq")            \
	X(TOKEN_UNPARK, "token_unpark", 0, "by", "epoch", "seq")

enum ring_log_event {
#define RING_LOG_ENUM_(name, str, verbose, a, b, c) RING_LOG_##name,
	RING_LOG_EVENTS(RING_LOG_ENUM_)
#undef RING_LOG_ENUM_
	RING_LOG_COUNT_
};

struct ring_log_info {
	const char *name;
	bool verbose;          /* logged only with -v */
	const char *field[3];  /* NULL where unused */
};
const struct ring_log_info *ring_log_info(enum ring_log_event ev);

/* ---- events ---- */

enum ring_event_type {
	RING_EVENT_START,    /* once, first */
	RING_EVENT_TICK,     /* a deadline the core asked for has come */
	RING_EVENT_DATAGRAM, /* a datagram arrived */
	RING_EVENT_ACQUIRE,  /* a local client asks for the critical region */
	RING_EVENT_RELEASE,  /* a local client releases, cancels or disconnects */
	RING_EVENT_RENEW,    /* a holder asks for its lease to start again from now */
	RING_EVENT_TRY,      /* ACQUIRE, but refused (ECONFLICT) while another client
			      * holds the region or waits for it */
	RING_EVENT_LEAVE,    /* graceful stop (SIGTERM) */
	RING_EVENT_DROP_TOKEN, /* drill: the token here vanishes, as if lost after its ack */
};

struct ring_event {
	enum ring_event_type type;
	uint64_t now_us; /* monotonic microseconds; never goes back */
	union {
		struct {
			const uint8_t *buf;
			size_t len;
			uint16_t from_id; /* member at the source address, 0 if none */
		} datagram;
		struct {
			uint64_t client; /* the shell's handle, never 0 */
		} client;
	} u;
};

/* ---- actions ---- */

enum ring_action_type {
	RING_ACTION_PERSIST, /* store epoch durably (write, fsync, rename) BEFORE the actions after it */
	RING_ACTION_SEND,    /* send buf to member `to`, or to every other member when to == 0 */
	RING_ACTION_GRANT,   /* tell client it holds the critical region */
	RING_ACTION_REVOKE,  /* tell client its grant is over (lease, pause, lost token) */
	RING_ACTION_DENY,    /* refuse an ACQUIRE, TRY or RENEW (reason) */
	RING_ACTION_RENEWED, /* a RENEW took: the grant now ends at deadline_us */
	RING_ACTION_LOG,     /* one log event */
	RING_ACTION_LEFT,    /* a graceful leave is complete: the shell may exit */
	RING_ACTION_FATAL,   /* the member cannot go on (reason): carry out nothing
			      * more, not even the rest of this update, and exit */
};

struct ring_action {
	enum ring_action_type type;
	union {
		struct {
			uint32_t epoch;
		} persist;
		struct {
			uint16_t to;
			uint16_t len;
			uint8_t buf[RING_WIRE_MAX];
		} send;
		struct {
			uint64_t client;
			uint64_t fence;
			uint32_t epoch;
		} grant;
		struct {
			uint64_t client;
			uint64_t fence;
		} revoke;
		struct {
			uint64_t client;
			int reason; /* -RING_E* */
		} deny;
		struct {
			uint64_t client;
			uint64_t fence;
			uint64_t deadline_us; /* the step's clock */
		} renewed;
		struct {
			enum ring_log_event event;
			uint64_t field[3];
		} log;
		struct {
			int reason; /* -RING_EEXHAUSTED, -RING_EOVERFLOW */
		} fatal;
	} u;
};

/* One step never produces more actions than this (PROTOCOL.md §7): the
 * longest step needs about 40, with membership changes capped per step. */
#define RING_UPDATE_MAX 96

/* A step that would need more room than CAP ends in one FATAL action
 * (-RING_EOVERFLOW) in place of everything it did, and so does every later
 * step: the member's state is no longer what its actions say. */
struct ring_update {
	size_t cap;   /* room the driver gives; 0 or above RING_UPDATE_MAX means all */
	size_t n;
	struct ring_action action[RING_UPDATE_MAX];
	uint64_t deadline_us; /* step again with TICK at this time; UINT64_MAX = none */
};

/* ---- status ---- */

struct ring_status {
	uint16_t node;
	enum ring_state state;
	uint32_t epoch;          /* newest epoch this member knows */
	uint64_t fence;          /* last fence granted here, 0 if none */
	uint16_t successor;      /* where the token goes next from here */
	struct ring_set alive;   /* ring indices this member believes alive */
	uint64_t token_seen_ms_ago; /* UINT64_MAX if never */
	bool has_token;          /* holds it, or is passing it and awaits the ack */
	bool token_held;         /* holds it (not yet passed) */
	bool parked;             /* holds it parked until summoned (§3.4) */
	bool summoned;           /* parked, and a member elsewhere asked for it */
	uint32_t token_epoch;    /* epoch of the token held or being passed */
	struct ring_set want;    /* that token's want set: who waits for it (§3.5) */
	bool granted;            /* a local client is in the critical region */
	uint64_t grant_client;
	uint64_t grant_held_ms;  /* since that client's GRANTED, renewals or not; 0 without */
	size_t queued;           /* clients waiting */
	struct ring_counters counters;
};

struct ring_node;

/* A member of LAYOUT with id ID, starting from STORED_EPOCH (0 when the
 * member never ran). Copies the layout. Returns NULL with *err set to
 * -RING_ENOTMEMBER or -RING_ENOMEM. */
struct ring_node *ring_node_new(const struct ring_layout *layout, uint16_t id,
				uint32_t stored_epoch, int *err);
void ring_node_free(struct ring_node *node);

/* Feeds one event; UPDATE is filled with the actions to carry out in order
 * and the next deadline. */
void ring_node_step(struct ring_node *node, const struct ring_event *event,
		    struct ring_update *update);

void ring_node_status(const struct ring_node *node, uint64_t now_us,
		      struct ring_status *status);

/* The order in which a driver that read several datagrams at once feeds
 * them to the core: lower ranks first, arrival order within a rank. Tokens
 * go last, so that a member that was stalled learns a newer epoch from the
 * heartbeat queued behind an old token before it could grant under it.
 * UDP promises no order, so none is broken. */
int ring_node_rx_rank(const uint8_t *buf, size_t len);

/* The fence's parts (PROTOCOL.md §4). */
static inline uint64_t ring_fence(uint32_t epoch, uint32_t counter)
{
	return (uint64_t)epoch << 32 | counter;
}

#endif
