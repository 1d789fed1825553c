/* hostile: attacks a ring on 127.0.0.1 with every datagram SPEC.md "Hostile
 * input" says a member must drop and count, predicting the counter each lands
 * in, and its control sockets with junk; or (--stranger) stands on a down
 * member's port and answers its peers' EPOCH_QUERY with a forged epoch.
 * Driven by test/security/t_*.sh. */
#define _DEFAULT_SOURCE /* AF_PACKET, IPPROTO_RAW and strdup under -std=c11 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/auth.h"
#include "core/bytes.h"
#include "common/clock.h"
#include "common/conf.h"
#include "common/fingerprint.h"
#include "core/err.h"
#include "core/layout.h"
#include "core/wire.h"

#define EXIT_USAGE 2
#define RECV_BUF 2048       /* what ringd reads of a datagram (daemon.c RECV_BUF) */
#define UDP_MAX 65507       /* the largest UDP payload over IPv4 */
#define CAPTURE_MAX 512     /* a captured ring datagram: RING_WIRE_MAX + trailer, with room */
#define SPOOF_AGE_US 500000 /* spoofed sealed datagrams are this old: see seal_spoofed() */
#define OLD_US 2100000      /* replay_old: older than the newest from that sender by this */
#define COPY_LAG_US 5000    /* replay_copy: only datagrams sealed this recently */
#define GAP_NEWER 100       /* replay_gap: this many newer from the same sender first, */
#define GAP_US 1500000      /* and not older than this */
#define SENT_MAX 65536      /* hashes of what we sent: the capture skips our own */

/* Where a datagram lands in the member that receives it, following
 * daemon.c receive() and node.c on_datagram() in their order. */
enum bucket {
	B_AUTH,      /* auth_failures: no, short or wrong MAC, stale, replayed */
	B_BAD,       /* bad_packets: undecodable, non-member, spoofed id, not for us */
	B_MISMATCH,  /* config_mismatches: a member's address, another fingerprint */
	B_VERSION,   /* version_mismatches: our magic, another wire version, from anyone */
	B_UNCOUNTED, /* dropped without any counter (a STATUS_REQ that is not one) */
	B_ANSWERED,  /* a good STATUS_REQ: answered, as for ringctl ring */
	B_ACCEPTED,  /* reaches the protocol: must never happen for an attack */
	B_COUNT
};

static const char *const bucket_name[B_COUNT] = {"auth_failures", "bad_packets",
						 "config_mismatches", "version_mismatches",
						 "uncounted", "answered", "accepted"};

#define KINDS(X)                                                                          \
	X(RANDOM, "random", "random bytes, 0..400 long")                                  \
	X(SHORT, "short", "a sealed datagram cut short (0..len-1 bytes)")                 \
	X(LONG, "long", "a sealed datagram with bytes added, up to 65507 (> 2048 incl.)") \
	X(BAD_VERSION, "bad_version", "protocol version 0, 2, 255; no trailer")           \
	X(BAD_TYPE, "bad_type", "type 0, 10, 200, 255; garbage MAC")                      \
	X(BAD_VERSION_KEYED, "bad_version_keyed", "unknown version, sealed with the key, non-member") \
	X(BAD_TYPE_KEYED, "bad_type_keyed", "unknown type, sealed with the key, non-member") \
	X(OTHER_RING, "other_ring", "another fingerprint, no trailer")                    \
	X(OTHER_RING_MAC, "other_ring_mac", "another fingerprint, garbage MAC")           \
	X(OTHER_RING_KEY, "other_ring_key", "another fingerprint, sealed with another ring's key") \
	X(OTHER_RING_OURKEY, "other_ring_ourkey", "another fingerprint, sealed with our key, non-member") \
	X(OTHER_RING_MEMBER, "other_ring_member", "another fingerprint, sealed with our key, from a member's address") \
	X(FORGE_TOKEN, "forge_token", "TOKEN epoch 0xffffff00+, garbage MAC or none, spoofed member or not") \
	X(FORGE_ELECTION, "forge_election", "ELECTION, garbage MAC or none")               \
	X(FORGE_LEAVE, "forge_leave", "LEAVE, garbage MAC or none")                        \
	X(FORGE_JOIN, "forge_join", "JOIN, garbage MAC or none")                           \
	X(KEYED_STRANGER, "keyed_stranger", "every member message sealed with the key, from an ephemeral port") \
	X(STATUS_JUNK, "status_junk", "type STATUS_REQ, sealed, bad length or other fingerprint, non-member") \
	X(REPLAY_COPY, "replay_copy", "captured datagram, exact copy, original source, at once") \
	X(REPLAY_TS, "replay_ts", "captured datagram, timestamp changed, original source") \
	X(REPLAY_CROSS, "replay_cross", "captured datagram to B, sent from its sender to C") \
	X(REPLAY_OLD, "replay_old", "captured datagram, once its sender sent a 2.1 s newer one") \
	X(REPLAY_GAP, "replay_gap", "captured datagram, once 100 newer came from its sender, within 1.5 s") \
	X(EACH_TYPE, "each_type", "every message type in turn, well-formed, sealed with the key, from an ephemeral port") \
	X(PROVOKE_QUERY, "provoke_query", "HEARTBEAT epoch 0xffffffff from a member's address, sealed: refused as a jump, starts a catch-up EPOCH_QUERY") \
	X(EPOCH_NONCE, "epoch_nonce", "EPOCH_REPLY with a sniffed query's real nonce, epoch 0xffffffff, +2^16+1 or +256 generations; garbage MAC, other key, or sealed from a stranger")

enum kind {
#define KIND_ENUM_(name, word, help) K_##name,
	KINDS(KIND_ENUM_)
#undef KIND_ENUM_
	K_COUNT
};

static const struct {
	const char *word, *help;
} kinds[] = {
#define KIND_ROW_(name, word, help) {word, help},
	KINDS(KIND_ROW_)
#undef KIND_ROW_
};

struct stats {
	uint64_t sent, errors, bytes;
	uint64_t bucket[B_COUNT];
	uint64_t by_type[256]; /* by the type byte, any of its values, for -v */
};

struct captured {
	size_t src, dst; /* member indexes */
	uint64_t ts;     /* the trailer's timestamp */
	uint64_t nth;    /* how many of its pair were captured before it */
	size_t len;
	uint8_t buf[CAPTURE_MAX];
};

/* It reads the ring's INI file and its key: to seal on purpose what must
 * pass authentication, to spoof members' source addresses (raw IPv4) and to
 * capture (AF_PACKET on lo) and replay the ring's own traffic. Root only. */
struct ctx {
	struct ring_conf conf;
	const struct ring_layout *l;
	uint64_t fp, other_fp;
	bool keyed; /* the ring has a secret_file */
	struct ring_auth *auth;  /* our key: stranger datagrams, ts = now */
	struct ring_auth *spoof; /* our key: member-sourced datagrams, ts = now - SPOOF_AGE_US */
	unsigned char other_key[crypto_auth_KEYBYTES];
	int udp, raw;
	struct sockaddr_in member[RING_MAX_MEMBERS];
	uint64_t rng;
	long only; /* member index to attack, or -1 for all */
	size_t n_each;
	bool want[K_COUNT];
	bool verbose;
	struct stats st[K_COUNT];
	uint64_t drops_before[RING_MAX_MEMBERS];
	uint64_t sent_hash[SENT_MAX];
	size_t n_sent_hash;
	uint32_t pair_count[RING_MAX_MEMBERS][RING_MAX_MEMBERS]; /* captured, src x dst */
	uint32_t epoch_of[RING_MAX_MEMBERS]; /* each member's stored epoch, at start */
	uint64_t nonces; /* EPOCH_QUERY nonces sniffed for epoch_nonce */
};

static void nap_us(uint64_t us)
{
	struct timespec ts = {.tv_sec = (time_t)(us / 1000000u),
			      .tv_nsec = (long)(us % 1000000u) * 1000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* xorshift64*: seeded by the caller, never rand(). */
static uint64_t rnd(struct ctx *c)
{
	c->rng ^= c->rng >> 12;
	c->rng ^= c->rng << 25;
	c->rng ^= c->rng >> 27;
	return c->rng * 0x2545F4914F6CDD1DULL;
}

static size_t rnd_below(struct ctx *c, size_t n)
{
	return n ? (size_t)(rnd(c) % n) : 0;
}

static void rnd_fill(struct ctx *c, uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rnd(c);
}

static uint64_t fnv(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}


/* ---- what the member will do with it (daemon.c udp_cb, node.c on_datagram) ---- */

/* The highest epoch among the fields node.c epochs_ok() bounds (§4.2); 0
 * for the types it lets through unbounded (EPOCH_REPLY among them). */
static uint32_t bounded_epoch(const struct ring_msg *m)
{
	uint32_t e[3] = {0, 0, 0};
	switch (m->type) {
	case RING_MSG_TOKEN:
		e[0] = m->u.token.epoch;
		break;
	case RING_MSG_TOKEN_ACK:
		e[0] = m->u.token_ack.epoch, e[1] = m->u.token_ack.known_epoch;
		break;
	case RING_MSG_HEARTBEAT:
		e[0] = m->u.heartbeat.epoch;
		break;
	case RING_MSG_ELECTION:
		e[0] = m->u.election.max_epoch;
		break;
	case RING_MSG_JOIN:
		e[0] = m->u.join.epoch, e[1] = m->u.join.refused.epoch;
		break;
	case RING_MSG_LEAVE:
		e[0] = m->u.leave.epoch, e[1] = m->u.leave.accepted.epoch;
		e[2] = m->u.leave.refused.epoch;
		break;
	case RING_MSG_WANT:
		e[0] = m->u.want.epoch;
		break;
	case RING_MSG_HEARTBEAT_ACK:
		e[0] = m->u.heartbeat_ack.epoch;
		break;
	default:
		break;
	}
	uint32_t top = e[0] > e[1] ? e[0] : e[1];
	return top > e[2] ? top : e[2];
}

/* Whether node.c would refuse epoch E at a member whose epoch is MINE as
 * further ahead than a datagram may jump (RING_GEN_JUMP generations). */
static bool jumps(uint32_t e, uint32_t mine)
{
	return e != 0 && (e >> 8) > (mine >> 8) + 0x10000u;
}

/* SRC: member index of the source address, or -1 for a stranger. MAC_OK:
 * the trailer is a valid, fresh, never-seen seal under the ring's key (only
 * meaningful when the ring is keyed). */
static enum bucket predict(const struct ctx *c, const uint8_t *buf, size_t len, long src,
			   size_t dst, bool mac_ok)
{
	size_t n = len < RECV_BUF ? len : RECV_BUF; /* recvfrom truncates the rest */
	if (c->keyed) {
		if (!mac_ok || n != len || n < RING_AUTH_TRAILER)
			return B_AUTH;
		n -= RING_AUTH_TRAILER;
	}
	struct ring_msg m;
	int rc = ring_wire_decode(buf, n, &m);
	/* Before the STATUS_REQ check: the daemon only answers a request of
	 * its own version (ring_wire_peek_type), the core counts the rest. */
	if (rc == -RING_EVERSION)
		return B_VERSION;
	if (n > 3 && (buf[3] == RING_MSG_STATUS_REQ || buf[3] == RING_MSG_ADVICE_REQ ||
		      buf[3] == RING_MSG_HOLD_REQ))
		/* answer_status() (answer_advice(), answer_hold()) answers a good one and
		 * drops the rest silently */
		return rc == 0 && m.fingerprint == c->fp ? B_ANSWERED : B_UNCOUNTED;
	if (rc < 0 || src < 0)
		return B_BAD;
	if (m.fingerprint != c->fp)
		return B_MISMATCH;
	uint16_t src_id = c->l->members[src].id, dst_id = c->l->members[dst].id;
	if (m.from != src_id || src_id == dst_id || (m.to != 0 && m.to != dst_id))
		return B_BAD;
	if (jumps(bounded_epoch(&m), c->epoch_of[dst]))
		return B_BAD; /* bad_packet(-RING_EJUMP), and a catch-up query */
	return B_ACCEPTED;
}

/* ---- sending ---- */

/* sk_rmem_alloc and drops of the UDP socket bound to 127.0.0.1:PORT, from
 * /proc/net/udp. Returns false when there is no such socket. */
static bool udp_queue(uint16_t port, uint64_t *rx, uint64_t *drops)
{
	FILE *f = fopen("/proc/net/udp", "r");
	if (!f)
		return false;
	char line[512];
	char want[16];
	snprintf(want, sizeof want, "0100007F:%04X", port);
	bool found = false;
	while (fgets(line, sizeof line, f)) {
		char local[64], remote[64], queues[64];
		unsigned st;
		unsigned long long d = 0;
		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref ptr drops */
		if (sscanf(line, " %*[^:]: %63s %63s %x %63s %*s %*s %*s %*s %*s %*s %*s %llu",
			   local, remote, &st, queues, &d) < 4)
			continue;
		if (strcmp(local, want) != 0)
			continue;
		char *colon = strchr(queues, ':');
		*rx = colon ? strtoull(colon + 1, NULL, 16) : 0;
		*drops = d;
		found = true;
		break;
	}
	fclose(f);
	return found;
}

/* Paces the attack by the receiver's queue, so that what we send is read
 * and counted rather than dropped by the kernel (and the ring's own
 * datagrams with it). Bounded: 2 s at most. */
static void pace(struct ctx *c, size_t dst, size_t len)
{
	static unsigned since[RING_MAX_MEMBERS];
	if (len <= 1024 && ++since[dst] < 8)
		return;
	since[dst] = 0;
	uint64_t limit = len > RECV_BUF ? 1 : 48 * 1024, rx, drops;
	uint64_t until = ring_mono_us() + 2000000u;
	while (udp_queue(c->l->members[dst].port, &rx, &drops) && rx >= limit && ring_mono_us() < until)
		nap_us(200);
}

static uint16_t csum_add(uint32_t sum, const uint8_t *p, size_t len, bool fold)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (fold && sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* One UDP datagram from 127.0.0.1:SPORT to 127.0.0.1:DPORT through the raw
 * socket: a member's source address that is not ours. The kernel fills the
 * IP checksum, id and total length; the UDP checksum is ours. */
static int raw_send(struct ctx *c, uint16_t sport, uint16_t dport, const uint8_t *data, size_t len)
{
	static uint8_t pkt[20 + 8 + UDP_MAX];
	if (len > UDP_MAX)
		return -EMSGSIZE;
	uint8_t *ip = pkt, *udp = pkt + 20;
	memset(pkt, 0, 28);
	ip[0] = 0x45;
	ip[8] = 64; /* ttl */
	ip[9] = IPPROTO_UDP;
	uint32_t lo = htonl(INADDR_LOOPBACK);
	memcpy(ip + 12, &lo, 4);
	memcpy(ip + 16, &lo, 4);
	size_t ulen = 8 + len;
	ip[2] = (uint8_t)((20 + ulen) >> 8);
	ip[3] = (uint8_t)(20 + ulen);
	udp[0] = (uint8_t)(sport >> 8);
	udp[1] = (uint8_t)sport;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	udp[4] = (uint8_t)(ulen >> 8);
	udp[5] = (uint8_t)ulen;
	memcpy(udp + 8, data, len);
	/* pseudo header: src, dst, zero, proto, udp length */
	uint32_t sum = 0;
	sum += csum_add(0, ip + 12, 8, true);
	sum += IPPROTO_UDP + (uint32_t)ulen;
	uint16_t s = (uint16_t)~csum_add(sum, udp, ulen, true);
	if (s == 0)
		s = 0xffff;
	udp[6] = (uint8_t)(s >> 8);
	udp[7] = (uint8_t)s;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(dport),
				 .sin_addr.s_addr = lo};
	ssize_t w = sendto(c->raw, pkt, 20 + ulen, 0, (struct sockaddr *)&to, sizeof to);
	return w == (ssize_t)(20 + ulen) ? 0 : -errno;
}

/* Sends BUF to member DST, from member SRC's address (raw) or from our own
 * ephemeral port (SRC -1), and books it under KIND with its prediction. */
static void send_one(struct ctx *c, enum kind k, long src, size_t dst, const uint8_t *buf,
		     size_t len, bool mac_ok)
{
	enum bucket b = predict(c, buf, len, src, dst, mac_ok);
	pace(c, dst, len);
	int rc;
	if (src < 0) {
		ssize_t w = sendto(c->udp, buf, len, 0, (struct sockaddr *)&c->member[dst],
				   sizeof c->member[dst]);
		rc = w == (ssize_t)len ? 0 : -errno;
	} else {
		rc = raw_send(c, c->l->members[src].port, c->l->members[dst].port, buf, len);
	}
	struct stats *s = &c->st[k];
	if (rc < 0) {
		s->errors++;
		if (c->verbose)
			fprintf(stderr, "hostile: %s: send %zu bytes: %s\n", kinds[k].word, len,
				strerror(-rc));
		return;
	}
	s->sent++;
	s->bytes += len;
	if (len > 3)
		s->by_type[buf[3]]++;
	s->bucket[b]++;
	if (c->n_sent_hash < SENT_MAX)
		c->sent_hash[c->n_sent_hash++] = fnv(buf, len);
}

/* ---- crafting ---- */

static size_t pick_dst(struct ctx *c)
{
	return c->only >= 0 ? (size_t)c->only : rnd_below(c, c->l->n);
}

/* A member other than DST, for a spoofed source. */
static size_t other_member(struct ctx *c, size_t dst)
{
	size_t s = rnd_below(c, c->l->n - 1);
	return s >= dst ? s + 1 : s;
}

static const enum ring_msg_type member_types[] = {
	RING_MSG_TOKEN, RING_MSG_TOKEN_ACK, RING_MSG_HEARTBEAT, RING_MSG_ELECTION,
	RING_MSG_ELECTION_ACK, RING_MSG_JOIN, RING_MSG_LEAVE, RING_MSG_EPOCH_QUERY,
	RING_MSG_EPOCH_REPLY, RING_MSG_WANT, RING_MSG_STATUS_RESP, RING_MSG_HEARTBEAT_ACK,
	RING_MSG_ADVICE_RESP, RING_MSG_HOLD_RESP,
};
#define N_MEMBER_TYPES (sizeof member_types / sizeof member_types[0])
/* Every type of RING_MSG_TYPES, numbered 1..N_WIRE_TYPES. */
#define RING_MSG_COUNT_(name, code, str) +1
#define N_WIRE_TYPES (0 RING_MSG_TYPES(RING_MSG_COUNT_))

/* A well-formed message of TYPE from FROM to TO, with fields that would
 * hurt if a member believed them: epochs near the top, every member alive. */
static int craft(struct ctx *c, enum ring_msg_type type, uint16_t from, uint16_t to,
		 uint64_t fp, uint8_t *buf, size_t cap)
{
	struct ring_msg m = {.type = type, .from = from, .to = to, .fingerprint = fp};
	struct ring_set all;
	memset(&all, 0, sizeof all);
	for (size_t i = 0; i < c->l->n; i++)
		ring_set_add(&all, i);
	uint32_t high = 0xffffff00u | (uint32_t)rnd_below(c, 256);
	switch (type) {
	case RING_MSG_TOKEN:
		m.u.token = (struct ring_msg_token){.epoch = high, .seq = 1, .counter = 0,
						    .quiet_us = 0, .alive = all};
		break;
	case RING_MSG_TOKEN_ACK:
		m.u.token_ack = (struct ring_msg_token_ack){.epoch = high, .seq = 1,
							    .known_epoch = high, .flags = RING_ACK_STALE};
		break;
	case RING_MSG_HEARTBEAT:
		m.u.heartbeat = (struct ring_msg_heartbeat){.epoch = high, .seq = 1, .alive = all};
		break;
	case RING_MSG_ELECTION:
		m.u.election = (struct ring_msg_election){.initiator = from, .hops = 1,
							  .round = 0x7fffffff, .max_epoch = high,
							  .participants = all};
		break;
	case RING_MSG_ELECTION_ACK:
		m.u.election_ack = (struct ring_msg_election_ack){.initiator = from, .hops = 1,
								  .round = 1};
		break;
	case RING_MSG_JOIN:
		m.u.join.epoch = high;
		m.u.join.refused = (struct ring_hop){high, 1};
		break;
	case RING_MSG_LEAVE:
		m.u.leave.epoch = high;
		m.u.leave.accepted = (struct ring_hop){high, UINT32_MAX};
		m.u.leave.refused = (struct ring_hop){high, 1};
		break;
	case RING_MSG_EPOCH_QUERY:
		m.u.epoch_query.nonce = rnd(c);
		break;
	case RING_MSG_EPOCH_REPLY:
		/* The nonce is a guess: a member answers only its own queries. */
		m.u.epoch_reply = (struct ring_msg_epoch_reply){.nonce = rnd(c), .epoch = high};
		break;
	case RING_MSG_WANT:
		/* Names a wanter that does not wait: at most the token visits it
		 * once for nothing (§3.5). */
		m.u.want = (struct ring_msg_want){.epoch = high, .seq = 1, .wanter = 1};
		break;
	case RING_MSG_HEARTBEAT_ACK:
		/* Vouches for a holder that may be cut off. Only a keyed ring
		 * tells it from a member's: on a keyless one a stream of them
		 * keeps a cut-off holder's renewals going until max_hold_ms
		 * (docs/security.md), and the fence orders its writes. */
		m.u.heartbeat_ack = (struct ring_msg_heartbeat_ack){.epoch = high, .seq = 1, .beat = 1};
		break;
	case RING_MSG_STATUS_REQ:
		m.u.status_req.nonce = rnd(c);
		break;
	case RING_MSG_STATUS_RESP:
		/* What a member answers ringctl, claiming the token at the top. */
		m.u.status_resp = (struct ring_msg_status_resp){
			.nonce = rnd(c), .state = 2 /* holding */, .flags = RING_STATUS_HAS_TOKEN,
			.successor = to, .epoch = high, .fence = (uint64_t)high << 32 | 1,
			.seen_ms = 0, .queued = 1, .alive = all};
		m.u.status_resp.counters.cs_entries = 1;
		break;
	case RING_MSG_ADVICE_REQ:
		m.u.advice_req.nonce = rnd(c);
		break;
	case RING_MSG_ADVICE_RESP:
		/* Figures that would make ringctl advise a huge lease. */
		m.u.advice_resp = (struct ring_msg_advice_resp){
			.nonce = rnd(c), .holds = 1, .max_us = UINT64_MAX, .pause_max_us = UINT64_MAX,
			.pauses = 1};
		break;
	case RING_MSG_HOLD_REQ:
		m.u.hold_req.nonce = rnd(c);
		break;
	case RING_MSG_HOLD_RESP:
		/* A client of the sender in the region since forever. */
		m.u.hold_resp = (struct ring_msg_hold_resp){
			.nonce = rnd(c), .fence = (uint64_t)high << 32 | 1, .held_ms = UINT32_MAX};
		break;
	}
	return ring_wire_encode(&m, buf, cap);
}

/* Seals with our key at the current time (stranger datagrams). */
static size_t seal(struct ctx *c, uint8_t *buf, size_t len, size_t cap)
{
	int n = ring_auth_seal(c->auth, buf, len, cap, ring_wall_us());
	return n > 0 ? (size_t)n : len;
}

/* Seals a datagram that will carry a member's source address. Its
 * timestamp is half a second old: within the replay window, never the
 * newest the receiver has from that member, and far from the timestamps
 * the real member is sealing now, so it cannot push the member's own
 * datagrams out as replays. */
static size_t seal_spoofed(struct ctx *c, uint8_t *buf, size_t len, size_t cap)
{
	int n = ring_auth_seal(c->spoof, buf, len, cap, ring_wall_us() - SPOOF_AGE_US);
	return n > 0 ? (size_t)n : len;
}

/* A trailer of the current time and a random MAC. */
static size_t garbage_mac(struct ctx *c, uint8_t *buf, size_t len)
{
	ring_put_be64(buf + len, ring_wall_us());
	rnd_fill(c, buf + len + 8, RING_AUTH_MAC);
	return len + RING_AUTH_TRAILER;
}

/* Sealed with a key that is not the ring's: another ring's datagram. */
static size_t other_key_mac(struct ctx *c, uint8_t *buf, size_t len)
{
	ring_put_be64(buf + len, ring_wall_us());
	crypto_auth(buf + len + 8, buf, len + 8, c->other_key);
	return len + RING_AUTH_TRAILER;
}

/* A HEARTBEAT of epoch 0xffffffff from member SRC to DST, sealed when the
 * ring is keyed: an epoch beyond reach from a member, which DST refuses
 * as a jump and answers by asking the others what they know (a catch-up
 * EPOCH_QUERY, §5.3), whose nonce travels in clear for epoch_nonce. */
static size_t craft_provoke(struct ctx *c, size_t src, size_t dst, uint8_t *buf, size_t cap)
{
	struct ring_msg m = {.type = RING_MSG_HEARTBEAT, .from = c->l->members[src].id,
			     .to = c->l->members[dst].id, .fingerprint = c->fp};
	m.u.heartbeat.epoch = UINT32_MAX;
	m.u.heartbeat.seq = 1;
	for (size_t j = 0; j < c->l->n; j++)
		ring_set_add(&m.u.heartbeat.alive, j);
	int n = ring_wire_encode(&m, buf, cap);
	size_t len = n > 0 ? (size_t)n : 0;
	/* Sealed now, not SPOOF_AGE_US ago: it must pass the replay window
	 * of a busy sender's slot to reach the core (an old timestamp is
	 * refused once the slot's 64 are newer). One now-sealed datagram
	 * cannot make the member's own look like replays: they are newer,
	 * or older but not older than its 64th newest. */
	return c->keyed ? seal(c, buf, len, cap) : len;
}

static void attack_kind(struct ctx *c, enum kind k)
{
	static uint8_t buf[UDP_MAX];
	const struct ring_layout *l = c->l;
	static const uint8_t bad_versions[] = {0, 2, 255};
	static const uint8_t bad_types[] = {0, 10, 200, 255};
	static const size_t long_lens[] = {1, 17, 300, 1500, RECV_BUF - 1, RECV_BUF,
					   RECV_BUF + 1, 4096, 9000, UDP_MAX};
	for (size_t i = 0; i < c->n_each; i++) {
		size_t dst = pick_dst(c);
		uint16_t to = l->members[dst].id;
		uint16_t some = l->members[rnd_below(c, l->n)].id;
		enum ring_msg_type t = member_types[rnd_below(c, N_MEMBER_TYPES)];
		long src = -1;
		bool mac_ok = false;
		size_t len = 0;
		int n;
		switch (k) {
		case K_RANDOM:
			len = rnd_below(c, 401);
			rnd_fill(c, buf, len);
			if (len > 3 && (buf[3] == RING_MSG_STATUS_REQ || buf[3] == RING_MSG_ADVICE_REQ ||
					buf[3] == RING_MSG_HOLD_REQ))
				buf[3] = 0; /* random STATUS_REQs are status_junk's */
			break;
		case K_SHORT:
			n = craft(c, t, some, to, c->fp, buf, sizeof buf);
			len = c->keyed ? seal(c, buf, (size_t)n, sizeof buf) : (size_t)n;
			len = rnd_below(c, len);
			break;
		case K_LONG: {
			n = craft(c, t, some, to, c->fp, buf, sizeof buf);
			len = c->keyed ? seal(c, buf, (size_t)n, sizeof buf) : (size_t)n;
			size_t want = long_lens[i % (sizeof long_lens / sizeof long_lens[0])];
			size_t total = want > len ? want : len + 1;
			rnd_fill(c, buf + len, total - len);
			len = total;
			break;
		}
		case K_BAD_VERSION:
		case K_BAD_VERSION_KEYED:
		case K_BAD_TYPE:
		case K_BAD_TYPE_KEYED: {
			/* One header byte no member knows; the _KEYED kinds seal
			 * it, the others send bad_version with no trailer and
			 * bad_type with a garbage MAC. */
			bool version = k == K_BAD_VERSION || k == K_BAD_VERSION_KEYED;
			n = craft(c, t, some, to, c->fp, buf, sizeof buf);
			if (version)
				buf[2] = bad_versions[i % sizeof bad_versions];
			else
				buf[3] = bad_types[i % sizeof bad_types];
			len = (size_t)n;
			if ((k == K_BAD_VERSION_KEYED || k == K_BAD_TYPE_KEYED) && c->keyed) {
				len = seal(c, buf, len, sizeof buf);
				mac_ok = true;
			} else if (!version && c->keyed) {
				len = garbage_mac(c, buf, len);
			}
			break;
		}
		case K_OTHER_RING:
		case K_OTHER_RING_MAC:
		case K_OTHER_RING_KEY:
		case K_OTHER_RING_OURKEY:
		case K_OTHER_RING_MEMBER:
			if (k == K_OTHER_RING_MEMBER) {
				if (l->n < 2)
					continue;
				src = (long)other_member(c, dst);
				some = l->members[src].id;
			}
			n = craft(c, t, some, to, c->other_fp, buf, sizeof buf);
			len = (size_t)n;
			if (!c->keyed)
				break;
			if (k == K_OTHER_RING_MAC)
				len = garbage_mac(c, buf, len);
			else if (k == K_OTHER_RING_KEY)
				len = other_key_mac(c, buf, len);
			else if (k == K_OTHER_RING_OURKEY)
				len = seal(c, buf, len, sizeof buf), mac_ok = true;
			else if (k == K_OTHER_RING_MEMBER)
				len = seal_spoofed(c, buf, len, sizeof buf), mac_ok = true;
			break;
		case K_FORGE_TOKEN:
		case K_FORGE_ELECTION:
		case K_FORGE_LEAVE:
		case K_FORGE_JOIN: {
			if (!c->keyed)
				continue; /* without a key these would be believed */
			enum ring_msg_type ft = k == K_FORGE_TOKEN      ? RING_MSG_TOKEN
						: k == K_FORGE_ELECTION ? RING_MSG_ELECTION
						: k == K_FORGE_LEAVE    ? RING_MSG_LEAVE
									: RING_MSG_JOIN;
			/* Half pretend to come from a member (its address and id),
			 * half from anywhere; half carry a garbage MAC, half none. */
			if (l->n >= 2 && i % 2 == 0) {
				src = (long)other_member(c, dst);
				some = l->members[src].id;
			}
			n = craft(c, ft, some, to, c->fp, buf, sizeof buf);
			len = (size_t)n;
			if (i % 4 < 2)
				len = garbage_mac(c, buf, len);
			break;
		}
		case K_KEYED_STRANGER:
			n = craft(c, t, some, to, c->fp, buf, sizeof buf);
			len = (size_t)n;
			if (c->keyed)
				len = seal(c, buf, len, sizeof buf), mac_ok = true;
			break;
		case K_EACH_TYPE:
			/* Every type of wire.h in turn (STATUS_REQ from id 0, as
			 * ringctl sends it): well-formed, but from no member. */
			t = (enum ring_msg_type)(RING_MSG_TOKEN + i % N_WIRE_TYPES);
			n = craft(c, t,
				  t == RING_MSG_STATUS_REQ || t == RING_MSG_ADVICE_REQ ||
						  t == RING_MSG_HOLD_REQ
					  ? 0
					  : some,
				  to, c->fp, buf, sizeof buf);
			len = (size_t)n;
			if (c->keyed)
				len = seal(c, buf, len, sizeof buf), mac_ok = true;
			break;
		case K_PROVOKE_QUERY:
			if (l->n < 2)
				continue;
			src = (long)other_member(c, dst);
			len = craft_provoke(c, (size_t)src, dst, buf, sizeof buf);
			mac_ok = true;
			break;
		case K_STATUS_JUNK:
			n = craft(c, RING_MSG_STATUS_REQ, 0, to, i % 2 ? c->other_fp : c->fp, buf,
				  sizeof buf);
			len = (size_t)n;
			if (i % 2 == 0) /* right ring, wrong length */
				len = i % 4 == 0 ? len - 1 - rnd_below(c, len - 4) : len + 1 + rnd_below(c, 32);
			if (c->keyed)
				len = seal(c, buf, len, sizeof buf), mac_ok = true;
			break;
		default:
			return; /* replays: replay() */
		}
		send_one(c, k, src, dst, buf, len, mac_ok);
	}
}

/* ---- capture and replay ---- */

static long member_by_port(const struct ctx *c, uint16_t port)
{
	for (size_t i = 0; i < c->l->n; i++)
		if (c->l->members[i].port == port)
			return (long)i;
	return -1;
}

static bool sent_by_us(const struct ctx *c, const uint8_t *buf, size_t len)
{
	uint64_t h = fnv(buf, len);
	for (size_t i = c->n_sent_hash; i-- > 0;)
		if (c->sent_hash[i] == h)
			return true;
	return false;
}

/* Reads one IPv4/UDP packet from the capture socket that went from one
 * member's port to another's: what the ring itself sent. */
static bool capture_one(struct ctx *c, int cap, struct captured *out, size_t min_len)
{
	uint8_t pkt[20 + 60 + 8 + CAPTURE_MAX];
	struct sockaddr_ll sll;
	socklen_t slen = sizeof sll;
	ssize_t n = recvfrom(cap, pkt, sizeof pkt, MSG_DONTWAIT, (struct sockaddr *)&sll, &slen);
	if (n < 28 || sll.sll_pkttype != PACKET_HOST)
		return false; /* lo shows each packet twice: keep the received one */
	size_t ihl = (size_t)(pkt[0] & 0x0f) * 4;
	if ((pkt[0] >> 4) != 4 || ihl < 20 || pkt[9] != IPPROTO_UDP || (size_t)n < ihl + 8)
		return false;
	uint32_t lo = htonl(INADDR_LOOPBACK);
	if (memcmp(pkt + 12, &lo, 4) != 0 || memcmp(pkt + 16, &lo, 4) != 0)
		return false;
	const uint8_t *udp = pkt + ihl;
	uint16_t sport = ring_get_be16(udp), dport = ring_get_be16(udp + 2);
	size_t ulen = ring_get_be16(udp + 4);
	long s = member_by_port(c, sport), d = member_by_port(c, dport);
	if (s < 0 || d < 0 || ulen < 8 || ihl + ulen > (size_t)n)
		return false;
	size_t len = ulen - 8;
	if (len < min_len || len > CAPTURE_MAX)
		return false;
	if (sent_by_us(c, udp + 8, len))
		return false;
	out->src = (size_t)s;
	out->dst = (size_t)d;
	out->len = len;
	memcpy(out->buf, udp + 8, len);
	out->ts = ring_get_be64(out->buf + len - RING_AUTH_TRAILER);
	out->nth = c->pair_count[s][d]++;
	return true;
}

static int open_capture(void)
{
	int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
	if (fd < 0)
		return -errno;
	int big = 8 << 20;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP),
				  .sll_ifindex = (int)if_nametoindex("lo")};
	if (sll.sll_ifindex == 0 || bind(fd, (struct sockaddr *)&sll, sizeof sll) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Captures the ring's own datagrams and sends them again from their
 * original source: exact copies at once (sealed less than COPY_LAG_US ago,
 * so still among the receiver's last 64 from that sender), copies with
 * another timestamp, copies to a member they were not for, copies of
 * datagrams their sender has since superseded by more than 2 s, and copies
 * of datagrams that 100 newer ones from the same sender have pushed out of
 * the receiver's last 64 within 1.5 s (the gap between the two rules of
 * auth.c's replay window). Bounded by LIMIT_US. */
static int replay(struct ctx *c, uint64_t limit_us)
{
	bool want_copy = c->want[K_REPLAY_COPY], want_ts = c->want[K_REPLAY_TS];
	bool want_cross = c->want[K_REPLAY_CROSS] && c->l->n >= 3 && c->only < 0;
	bool want_old = c->want[K_REPLAY_OLD], want_gap = c->want[K_REPLAY_GAP];
	if (!want_copy && !want_ts && !want_cross && !want_old && !want_gap)
		return 0;
	if (!c->keyed) {
		fprintf(stderr, "hostile: replays skipped: the ring has no secret_file, and "
			"without one a replay is a datagram like any other\n");
		return 0;
	}
	int cap = open_capture();
	if (cap < 0) {
		fprintf(stderr, "hostile: capture on lo: %s (needs root)\n", strerror(-cap));
		return -1;
	}
	size_t n = c->n_each;
	size_t held_max = n * 4 + 16, held_n = 0, gap_n = 0;
	struct captured *held = calloc(held_max, sizeof *held);
	struct captured *gap = calloc(held_max, sizeof *gap);
	if (!held || !gap) {
		free(held);
		free(gap);
		close(cap);
		return -1;
	}
	struct captured p;
	uint64_t until = ring_mono_us() + limit_us, captured = 0;
	unsigned turn = 0;
	while (ring_mono_us() < until) {
		bool more = (want_copy && c->st[K_REPLAY_COPY].sent < n) ||
			    (want_ts && c->st[K_REPLAY_TS].sent < n) ||
			    (want_cross && c->st[K_REPLAY_CROSS].sent < n) ||
			    (want_old && c->st[K_REPLAY_OLD].sent < n) ||
			    (want_gap && c->st[K_REPLAY_GAP].sent < n);
		if (!more)
			break;
		struct pollfd pfd = {.fd = cap, .events = POLLIN};
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (!capture_one(c, cap, &p, RING_AUTH_TRAILER + RING_WIRE_HEADER))
			continue;
		captured++;
		if (c->only >= 0 && p.dst != (size_t)c->only)
			continue;
		/* replay_old: any held datagram of this pair that P supersedes
		 * by more than OLD_US goes now; the receiver has seen P. */
		for (size_t i = 0; i < held_n && c->st[K_REPLAY_OLD].sent < n;) {
			struct captured *h = &held[i];
			if (h->src == p.src && h->dst == p.dst && h->ts + OLD_US <= p.ts) {
				send_one(c, K_REPLAY_OLD, (long)h->src, h->dst, h->buf, h->len, false);
				held[i] = held[--held_n];
			} else {
				i++;
			}
		}
		/* replay_gap: held datagrams of this pair with GAP_NEWER newer
		 * ones since, the newest less than GAP_US after them: out of
		 * the receiver's last 64, inside its 2 s reorder window. */
		for (size_t i = 0; i < gap_n && c->st[K_REPLAY_GAP].sent < n;) {
			struct captured *h = &gap[i];
			if (h->src != p.src || h->dst != p.dst) {
				i++;
			} else if (p.ts > h->ts + GAP_US) {
				gap[i] = gap[--gap_n]; /* too late: the window moved on */
			} else if (p.nth >= h->nth + GAP_NEWER) {
				send_one(c, K_REPLAY_GAP, (long)h->src, h->dst, h->buf, h->len, true);
				gap[i] = gap[--gap_n];
			} else {
				i++;
			}
		}
		uint64_t now = ring_wall_us();
		bool recent = now < p.ts + COPY_LAG_US;
		uint16_t to = ring_get_be16(p.buf + 6);
		for (unsigned tries = 0; tries < 5; tries++) {
			unsigned k = turn++ % 5;
			if (k == 0 && want_copy && c->st[K_REPLAY_COPY].sent < n && recent) {
				send_one(c, K_REPLAY_COPY, (long)p.src, p.dst, p.buf, p.len, false);
				break;
			}
			if (k == 1 && want_ts && c->st[K_REPLAY_TS].sent < n) {
				/* A new timestamp, now: fresh, but the MAC no longer fits. */
				ring_put_be64(p.buf + p.len - RING_AUTH_TRAILER,
					p.ts + 1 + rnd_below(c, 1000000));
				send_one(c, K_REPLAY_TS, (long)p.src, p.dst, p.buf, p.len, false);
				break;
			}
			if (k == 2 && want_cross && c->st[K_REPLAY_CROSS].sent < n && to != 0) {
				size_t d = p.dst;
				for (unsigned g = 0; g < 16 && (d == p.dst || d == p.src); g++)
					d = rnd_below(c, c->l->n);
				if (d == p.dst || d == p.src)
					continue;
				/* The MAC is valid and fresh and the receiver never saw
				 * it: auth passes, the header's `to` does not. */
				send_one(c, K_REPLAY_CROSS, (long)p.src, d, p.buf, p.len, true);
				break;
			}
			if (k == 3 && want_old && held_n < held_max &&
			    c->st[K_REPLAY_OLD].sent + held_n < n + 8) {
				held[held_n++] = p;
				break;
			}
			if (k == 4 && want_gap && gap_n < held_max &&
			    c->st[K_REPLAY_GAP].sent + gap_n < n + 8) {
				gap[gap_n++] = p;
				break;
			}
		}
	}
	free(held);
	free(gap);
	close(cap);
	if (captured == 0) {
		fprintf(stderr, "hostile: captured no ring traffic on lo in %.1f s\n",
			(double)limit_us / 1e6);
		return -1;
	}
	return 0;
}

/* ---- EPOCH_REPLY with the real nonce ---- */

/* A member's EPOCH_QUERY nonce travels in clear (§5.3), so whoever sees one
 * can answer it. Captures the queries on lo, provoking a catch-up query
 * from each member (provoke_query's datagram, every 0.5 s for at most
 * 3 s) until one is seen, then answers each member's nonce from another
 * member's address with wild epochs: 0xffffffff; 2^16 + 1 generations above
 * its stored epoch (beyond reach); 256 above it (within reach, plausible).
 * A keyed ring refuses them all at authentication (no MAC, a garbage one,
 * another ring's key), or, sealed with the ring's key from a stranger's
 * port, as a bad packet. Returns -1 when no nonce was seen. */
static int epoch_nonce(struct ctx *c)
{
	if (!c->keyed) {
		fprintf(stderr, "hostile: epoch_nonce skipped: the ring has no secret_file, and "
			"without one a reply with the real nonce is believed "
			"(test/security/t_forged_epoch.sh plays that)\n");
		return 0;
	}
	if (c->l->n < 2)
		return 0;
	int cap = open_capture();
	if (cap < 0) {
		fprintf(stderr, "hostile: capture on lo: %s (needs root)\n", strerror(-cap));
		return -1;
	}
	static uint8_t buf[UDP_MAX];
	uint64_t nonce[RING_MAX_MEMBERS] = {0};
	bool have[RING_MAX_MEMBERS] = {false};
	size_t victims[RING_MAX_MEMBERS], n_victims = 0;
	for (size_t v = 0; v < c->l->n; v++) {
		if (c->only >= 0 && v != (size_t)c->only)
			continue;
		uint64_t until = ring_mono_us() + 3000000u, next = 0;
		while (!have[v] && ring_mono_us() < until) {
			if (ring_mono_us() >= next) {
				size_t src = other_member(c, v);
				size_t len = craft_provoke(c, src, v, buf, sizeof buf);
				send_one(c, K_PROVOKE_QUERY, (long)src, v, buf, len, true);
				next = ring_mono_us() + 500000u;
			}
			struct pollfd pfd = {.fd = cap, .events = POLLIN};
			if (poll(&pfd, 1, 50) <= 0)
				continue;
			struct captured p;
			for (int k = 0; k < 256 && capture_one(c, cap, &p, RING_WIRE_HEADER); k++) {
				size_t body = p.len;
				if (c->keyed && body >= RING_AUTH_TRAILER)
					body -= RING_AUTH_TRAILER;
				struct ring_msg m;
				if (ring_wire_decode(p.buf, body, &m) != 0 ||
				    m.type != RING_MSG_EPOCH_QUERY)
					continue;
				if (!have[p.src]) {
					c->nonces++;
					if (c->verbose)
						fprintf(stderr, "hostile: member %u asks, nonce %" PRIu64 "\n",
							c->l->members[p.src].id, m.u.epoch_query.nonce);
				}
				nonce[p.src] = m.u.epoch_query.nonce;
				have[p.src] = true;
			}
		}
		if (have[v])
			victims[n_victims++] = v;
	}
	close(cap);
	for (size_t i = 0; i < c->n_each && n_victims > 0; i++) {
		size_t v = victims[i % n_victims];
		size_t src = other_member(c, v);
		uint32_t mine = c->epoch_of[v] == UINT32_MAX ? 0x100u : c->epoch_of[v];
		uint32_t wild[3] = {UINT32_MAX, mine + ((0x10000u + 1u) << 8), mine + (0x100u << 8)};
		struct ring_msg m = {.type = RING_MSG_EPOCH_REPLY, .from = c->l->members[src].id,
				     .to = c->l->members[v].id, .fingerprint = c->fp};
		m.u.epoch_reply.nonce = nonce[v];
		m.u.epoch_reply.epoch = wild[(i / n_victims) % 3];
		int n = ring_wire_encode(&m, buf, sizeof buf);
		if (n < 0)
			continue;
		size_t len = (size_t)n;
		long from = (long)src;
		bool mac_ok = false;
		switch ((i / n_victims / 3) % 4) {
		case 0:
			break; /* no trailer */
		case 1:
			len = garbage_mac(c, buf, len);
			break;
		case 2:
			len = other_key_mac(c, buf, len);
			break;
		default: /* the ring's key, but from no member's address */
			len = seal(c, buf, len, sizeof buf);
			mac_ok = true;
			from = -1;
			break;
		}
		send_one(c, K_EPOCH_NONCE, from, v, buf, len, mac_ok);
	}
	printf("hostile-nonce: members=%zu nonces=%" PRIu64 "\n", n_victims, c->nonces);
	if (n_victims == 0) {
		fprintf(stderr, "hostile: epoch_nonce: no EPOCH_QUERY seen on lo in 3 s per member\n");
		return -1;
	}
	return 0;
}

/* ---- a stranger on a down member's port (--stranger) ---- */

/* EPOCH_REPLY (NONCE, EPOCH) from member IDX, through FD bound to its
 * port, to member Q; with a garbage MAC when the ring is keyed. */
static bool stranger_reply(struct ctx *c, int fd, size_t idx, size_t q, uint64_t nonce,
			   uint32_t epoch)
{
	static uint8_t out[RING_WIRE_MAX + RING_AUTH_TRAILER];
	struct ring_msg r = {.type = RING_MSG_EPOCH_REPLY, .from = c->l->members[idx].id,
			     .to = c->l->members[q].id, .fingerprint = c->fp};
	r.u.epoch_reply = (struct ring_msg_epoch_reply){.nonce = nonce, .epoch = epoch};
	int len = ring_wire_encode(&r, out, RING_WIRE_MAX);
	if (len <= 0)
		return false;
	size_t w = (size_t)len;
	if (c->keyed)
		w = garbage_mac(c, out, w);
	return sendto(fd, out, w, 0, (struct sockaddr *)&c->member[q], sizeof c->member[q]) ==
	       (ssize_t)w;
}

/* Binds member IDX's port, which must be free (the member down), and answers
 * every EPOCH_QUERY that comes from a member with its own nonce and
 * EPOCH: to the querier, this is member IDX answering. With LATE_FILE,
 * answers nothing until LATE_FILE exists, then answers each querier's
 * latest nonce once and returns: a late reply, for a member that has
 * stopped asking. Stops when UNTIL_FILE exists or after SECONDS. Prints a
 * line per reply and a summary; returns 0, or 1 when the port is taken. */
static int stranger(struct ctx *c, size_t idx, uint32_t epoch, const char *late_file,
		    const char *until_file, double seconds)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&c->member[idx], sizeof c->member[idx]) != 0) {
		fprintf(stderr, "hostile: --stranger: bind 127.0.0.1:%u: %s (is member %u up?)\n",
			c->l->members[idx].port, strerror(errno), c->l->members[idx].id);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	printf("hostile-stranger: on 127.0.0.1:%u as member %u, answering epoch %" PRIu32 "%s\n",
	       c->l->members[idx].port, c->l->members[idx].id, epoch,
	       late_file ? " late" : "");
	fflush(stdout);
	uint64_t nonce[RING_MAX_MEMBERS] = {0};
	bool asked[RING_MAX_MEMBERS] = {false};
	unsigned queries = 0, replies = 0;
	uint64_t until = ring_mono_us() + (uint64_t)(seconds * 1e6);
	static uint8_t buf[RECV_BUF];
	bool done = false;
	while (!done && ring_mono_us() < until && !(until_file && access(until_file, F_OK) == 0)) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int ready = poll(&pfd, 1, 20);
		for (int k = 0; ready > 0 && k < 256; k++) {
			struct sockaddr_in from;
			socklen_t flen = sizeof from;
			ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from,
					     &flen);
			if (n <= 0)
				break;
			long q = member_by_port(c, ntohs(from.sin_port));
			size_t body = (size_t)n;
			if (c->keyed && body >= RING_AUTH_TRAILER)
				body -= RING_AUTH_TRAILER; /* read, not checked: no key */
			struct ring_msg m;
			if (q < 0 || (size_t)q == idx || ring_wire_decode(buf, body, &m) != 0 ||
			    m.type != RING_MSG_EPOCH_QUERY)
				continue;
			queries++;
			nonce[q] = m.u.epoch_query.nonce;
			asked[q] = true;
			if (late_file)
				continue;
			if (stranger_reply(c, fd, idx, (size_t)q, nonce[q], epoch)) {
				replies++;
				printf("hostile-stranger: answered member %u nonce %" PRIu64
				       " epoch %" PRIu32 "\n",
				       c->l->members[q].id, nonce[q], epoch);
				fflush(stdout);
			}
		}
		if (!late_file || access(late_file, F_OK) != 0)
			continue;
		for (size_t q = 0; q < c->l->n; q++) {
			if (!asked[q])
				continue;
			if (stranger_reply(c, fd, idx, q, nonce[q], epoch)) {
				replies++;
				printf("hostile-stranger: late reply to member %u nonce %" PRIu64
				       " epoch %" PRIu32 "\n",
				       c->l->members[q].id, nonce[q], epoch);
			}
		}
		done = true;
	}
	printf("hostile-stranger: queries=%u replies=%u\n", queries, replies);
	close(fd);
	return 0;
}

/* Each member's stored epoch (state_dir/node-ID.epoch, "epoch N"), for the
 * predictions and the wild epochs; UINT32_MAX where it cannot be read. */
static void read_epochs(struct ctx *c)
{
	for (size_t i = 0; i < c->l->n; i++) {
		char path[RING_PATH_MAX + 32];
		snprintf(path, sizeof path, "%s/node-%u.epoch", c->conf.state_dir,
			 c->l->members[i].id);
		c->epoch_of[i] = UINT32_MAX;
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		unsigned long e;
		if (fscanf(f, "epoch %lu", &e) == 1 && e <= UINT32_MAX)
			c->epoch_of[i] = (uint32_t)e;
		fclose(f);
	}
}

/* ---- the control socket ---- */

struct ctl_result {
	unsigned conns, lines_sent, replies, errs, eofs, status_ok;
};

static int ctl_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sun.sun_path)
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void write_all(int fd, const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t until = ring_mono_us() + 2000000u;
	while (len > 0 && ring_mono_us() < until) {
		ssize_t w = send(fd, b, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			b += w;
			len -= (size_t)w;
		} else if (w < 0 && errno != EAGAIN && errno != EINTR) {
			return; /* the member hung up: fine */
		} else {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			(void)poll(&pfd, 1, 50);
		}
	}
}

/* Reads what comes back for up to WAIT_MS or until EOF or WANT lines;
 * counts lines, "ERR" lines, EOF and a JSON status line. */
static void ctl_read(int fd, unsigned wait_ms, unsigned want, struct ctl_result *r)
{
	char buf[8192];
	unsigned got = 0;
	uint64_t until = ring_mono_us() + (uint64_t)wait_ms * 1000u;
	bool bol = true;
	size_t col = 0;
	char head[4];
	while (got < want || want == 0) {
		uint64_t now = ring_mono_us();
		if (now >= until)
			break;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, (int)((until - now) / 1000u) + 1) <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			r->eofs++;
			return;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (bol) {
				col = 0;
				bol = false;
			}
			if (col < sizeof head)
				head[col] = buf[i];
			col++;
			if (buf[i] == '\n') {
				r->replies++;
				got++;
				if (col >= 4 && memcmp(head, "ERR ", 4) == 0)
					r->errs++;
				if (col >= 4 && head[0] == '{')
					r->status_ok++;
				bol = true;
			}
		}
	}
}

/* Everything at member IDX's control socket; returns false when the member
 * stopped answering STATUS afterwards. */
static bool attack_control(struct ctx *c, size_t idx, struct ctl_result *r)
{
	const char *path = c->conf.control[idx];
	static const char *const junk[] = {
		"HELLO", "acquire", "ACQUIRE abc", "ACQUIRE -1", "ACQUIRE 99999999999999999999999",
		"ACQUIRE 1 2 3 4 5 6", "RELEASE", "RELEASE now", "STATUS --json", "INJECT",
		"INJECT pause 999999999", "INJECT loss 101", "INJECT block 0", "INJECT nothing",
		"INJECT clear extra", "", " ", "\t\t", "\r", "%s%s%s%n", "GET / HTTP/1.0",
		"\x7f\x80\xff\xfe", "STATUS\x1b[2J",
	};
	size_t nj = sizeof junk / sizeof junk[0];
	/* junk lines, one connection, each answered by one ERR line (an empty
	 * line too: "empty command") */
	int fd = ctl_connect(path);
	if (fd < 0)
		return false;
	r->conns++;
	for (size_t i = 0; i < nj; i++) {
		char line[128];
		int len = snprintf(line, sizeof line, "%s\n", junk[i]);
		write_all(fd, line, (size_t)len);
		r->lines_sent++;
	}
	ctl_read(fd, 2000, (unsigned)nj, r);
	close(fd);
	/* binary: random bytes with NULs and newlines in them */
	uint8_t bin[4096];
	for (int round = 0; round < 8; round++) {
		if ((fd = ctl_connect(path)) < 0)
			return false;
		r->conns++;
		rnd_fill(c, bin, sizeof bin);
		write_all(fd, bin, sizeof bin);
		ctl_read(fd, 200, 0, r);
		close(fd);
	}
	/* half a line, then gone; and ACQUIRE, then gone (a waiting client
	 * that disappears must leave the queue) */
	static const char *const halves[] = {"ACQU", "STATUS", "ACQUIRE\n", "ACQUIRE 10\n",
					     "RELEASE"};
	for (size_t i = 0; i < sizeof halves / sizeof halves[0]; i++) {
		if ((fd = ctl_connect(path)) < 0)
			return false;
		r->conns++;
		write_all(fd, halves[i], strlen(halves[i]));
		close(fd);
	}
	/* 100 KB without a newline: refused, connection dropped */
	if ((fd = ctl_connect(path)) < 0)
		return false;
	r->conns++;
	static uint8_t big[100 * 1024];
	memset(big, 'A', sizeof big);
	write_all(fd, big, sizeof big);
	ctl_read(fd, 2000, 0, r);
	close(fd);
	/* many connections: opened and dropped one by one, then 200 at once */
	for (int i = 0; i < 500; i++) {
		if ((fd = ctl_connect(path)) < 0)
			return false;
		r->conns++;
		close(fd);
	}
	int many[200];
	size_t open_n = 0;
	for (; open_n < sizeof many / sizeof many[0]; open_n++) {
		if ((many[open_n] = ctl_connect(path)) < 0)
			break;
		r->conns++;
	}
	for (size_t i = 0; i < open_n; i++)
		close(many[i]);
	/* and it still answers */
	if ((fd = ctl_connect(path)) < 0)
		return false;
	unsigned before = r->status_ok;
	write_all(fd, "STATUS\n", 7);
	ctl_read(fd, 3000, 1, r);
	close(fd);
	return r->status_ok > before;
}

/* Opens N connections to member IDX's control socket and keeps them open
 * until UNTIL exists (at most 120 s): a client that exhausts the member's
 * file descriptors. A connect the member has not accepted yet waits in its
 * backlog; those count too. Returns how many are open. */
static size_t hold_control(struct ctx *c, size_t idx, size_t n, const char *until)
{
	int *fds = calloc(n, sizeof *fds);
	if (!fds)
		return 0;
	size_t open_n = 0;
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", c->conf.control[idx]);
	uint64_t give_up = ring_mono_us() + 10000000u;
	unsigned full = 0; /* connects refused in a row: the backlog is full */
	while (open_n < n && ring_mono_us() < give_up && full < 100) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			break;
		if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0 && errno != EINPROGRESS) {
			int e = errno;
			close(fd);
			if (e != EAGAIN)
				break;
			full++;
			nap_us(2000); /* the member accepts slowly, or cannot any more */
			continue;
		}
		full = 0;
		fds[open_n++] = fd;
	}
	printf("hostile: holding %zu connections to %s\n", open_n, c->conf.control[idx]);
	fflush(stdout);
	for (int i = 0; i < 120 * 20 && access(until, F_OK) != 0; i++)
		nap_us(50000);
	for (size_t i = 0; i < open_n; i++)
		close(fds[i]);
	free(fds);
	return open_n;
}

/* ---- main ---- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hostile -c CONFIG [-N COUNT] [--only ID] [--kinds K,K...|--skip K,K...]\n"
		"               [--seed S] [--control] [--no-udp] [--replay-s S] [-v]\n"
		"       hostile -c CONFIG --only ID --hold N UNTIL_FILE\n"
		"       hostile -c CONFIG --stranger ID --reply-epoch E [--late FILE] [--until FILE]\n"
		"               [--seconds S]\n"
		"       hostile --list\n\n"
		"Attacks the ring of CONFIG on 127.0.0.1 (as root: raw and packet sockets)\n"
		"with COUNT datagrams of each kind (default 100) and, with --control, every\n"
		"member's control socket; prints per kind what it sent and where each\n"
		"datagram lands by the members' code (auth_failures, bad_packets,\n"
		"config_mismatches, version_mismatches, uncounted, accepted), then one line\n"
		"  hostile: sent=N auth_failures=A bad_packets=B config_mismatches=C version_mismatches=V\n"
		"           uncounted=U accepted=X drops=D\n"
		"(drops: datagrams the kernel dropped at the members' sockets meanwhile),\n"
		"and one hostile-kind: line per kind with the same fields. --list: the kinds.\n"
		"The replays capture the ring's traffic for at most --replay-s seconds (15).\n"
		"--hold opens N connections to member ID's control socket and keeps them\n"
		"until UNTIL_FILE exists (at most 120 s).\n"
		"--stranger binds member ID's port (the member down) and answers every\n"
		"EPOCH_QUERY from a member with its nonce and epoch E (0xffffffff...);\n"
		"with --late, nothing until FILE exists, then each querier's latest nonce\n"
		"once. Until --until FILE exists or S seconds (60) have passed.\n");
}

/* --kinds K,K (only those) or, with SKIP, --skip K,K (all but those). */
static bool parse_kinds(struct ctx *c, const char *list, bool skip)
{
	for (size_t k = 0; k < K_COUNT; k++)
		c->want[k] = skip;
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return false;
	bool ok = true;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		bool found = false;
		for (size_t k = 0; k < K_COUNT; k++)
			if (strcmp(w, kinds[k].word) == 0) {
				c->want[k] = !skip;
				found = true;
			}
		if (!found) {
			fprintf(stderr, "hostile: unknown kind %s (hostile --list)\n", w);
			ok = false;
		}
	}
	free(copy);
	return ok;
}

static struct ctx ctx;

int main(int argc, char **argv)
{
	struct ctx *c = &ctx;
	const char *config = NULL;
	uint64_t seed = 0;
	bool control = false, udp = true;
	size_t hold = 0;
	const char *hold_until = NULL;
	double replay_s = 15, seconds = 60;
	long stranger_id = -1;
	unsigned long long reply_epoch = UINT32_MAX;
	const char *late_file = NULL, *until_file = NULL;
	c->n_each = 100;
	c->only = -1;
	long only_id = -1;
	for (size_t k = 0; k < K_COUNT; k++)
		c->want[k] = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--list") == 0) {
			for (size_t k = 0; k < K_COUNT; k++)
				printf("%-20s %s\n", kinds[k].word, kinds[k].help);
			return 0;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "-c") == 0 && v) {
			config = v, i++;
		} else if (strcmp(a, "-N") == 0 && v) {
			c->n_each = strtoul(v, NULL, 10), i++;
		} else if (strcmp(a, "--only") == 0 && v) {
			only_id = strtol(v, NULL, 10), i++;
		} else if (strcmp(a, "--seed") == 0 && v) {
			seed = strtoull(v, NULL, 10), i++;
		} else if (strcmp(a, "--replay-s") == 0 && v) {
			replay_s = strtod(v, NULL), i++;
		} else if ((strcmp(a, "--kinds") == 0 || strcmp(a, "--skip") == 0) && v) {
			if (!parse_kinds(c, v, strcmp(a, "--skip") == 0))
				return EXIT_USAGE;
			i++;
		} else if (strcmp(a, "--hold") == 0 && v && i + 2 < argc) {
			hold = strtoul(v, NULL, 10);
			hold_until = argv[i + 2];
			i += 2;
		} else if (strcmp(a, "--stranger") == 0 && v) {
			stranger_id = strtol(v, NULL, 10), i++;
		} else if (strcmp(a, "--reply-epoch") == 0 && v) {
			reply_epoch = strtoull(v, NULL, 0), i++;
		} else if (strcmp(a, "--late") == 0 && v) {
			late_file = v, i++;
		} else if (strcmp(a, "--until") == 0 && v) {
			until_file = v, i++;
		} else if (strcmp(a, "--seconds") == 0 && v) {
			seconds = strtod(v, NULL), i++;
		} else if (strcmp(a, "--control") == 0) {
			control = true;
		} else if (strcmp(a, "--no-udp") == 0) {
			udp = false;
		} else if (strcmp(a, "-v") == 0) {
			c->verbose = true;
		} else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!config || c->n_each == 0 || c->n_each > 100000 || replay_s <= 0 || replay_s > 120 ||
	    (hold_until && (hold == 0 || hold > 100000 || only_id < 0)) ||
	    reply_epoch > UINT32_MAX || !(seconds > 0 && seconds <= 600)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	char err[RING_PATH_MAX + 256];
	if (ring_conf_load(config, &c->conf, err, sizeof err) < 0) {
		fprintf(stderr, "hostile: %s\n", err);
		return 78;
	}
	c->l = &c->conf.layout;
	for (size_t i = 0; i < c->l->n; i++) {
		if (strcmp(c->l->members[i].host, "127.0.0.1") != 0) {
			fprintf(stderr, "hostile: member %u is on %s: only 127.0.0.1 is attacked\n",
				c->l->members[i].id, c->l->members[i].host);
			return 1;
		}
		c->member[i] = (struct sockaddr_in){.sin_family = AF_INET,
						    .sin_port = htons(c->l->members[i].port),
						    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	}
	if (only_id >= 0) {
		int idx = only_id <= 65535 ? ring_layout_index(c->l, (uint16_t)only_id) : -1;
		if (idx < 0) {
			fprintf(stderr, "hostile: no member %ld\n", only_id);
			return EXIT_USAGE;
		}
		c->only = idx;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "hostile: libsodium failed to initialise\n");
		return 1;
	}
	c->fp = ring_layout_fingerprint(c->l);
	/* Another ring: the same members under another name. */
	struct ring_layout other = *c->l;
	snprintf(other.name, sizeof other.name, "%.40s-other", c->l->name);
	c->other_fp = ring_layout_fingerprint(&other);
	crypto_auth_keygen(c->other_key);
	c->keyed = c->conf.secret_file[0] != 0;
	if (c->keyed && (ring_auth_load(&c->auth, c->conf.secret_file, 1, err, sizeof err) < 0 ||
			 ring_auth_load(&c->spoof, c->conf.secret_file, 1, err, sizeof err) < 0)) {
		fprintf(stderr, "hostile: %s\n", err);
		return 1;
	}
	c->rng = seed ? seed : (ring_wall_us() ^ (uint64_t)getpid() << 32);
	if (!c->rng)
		c->rng = 1;
	if (hold_until)
		return hold_control(c, (size_t)c->only, hold, hold_until) > 0 ? 0 : 1;
	if (stranger_id >= 0) {
		int idx = stranger_id <= 65535 ? ring_layout_index(c->l, (uint16_t)stranger_id) : -1;
		if (idx < 0) {
			fprintf(stderr, "hostile: no member %ld\n", stranger_id);
			return EXIT_USAGE;
		}
		return stranger(c, (size_t)idx, (uint32_t)reply_epoch, late_file, until_file, seconds);
	}
	read_epochs(c);
	printf("hostile: ring \"%s\", %zu members, %s, seed %" PRIu64 ", %zu of each kind%s\n",
	       c->l->name, c->l->n, c->keyed ? "keyed" : "no secret_file", c->rng, c->n_each,
	       c->only >= 0 ? " (one member)" : "");
	fflush(stdout);

	int rc = 0;
	if (udp) {
		c->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in any = {.sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		c->raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
		if (c->udp < 0 || bind(c->udp, (struct sockaddr *)&any, sizeof any) != 0 ||
		    c->raw < 0) {
			fprintf(stderr, "hostile: sockets: %s (raw sockets need root)\n",
				strerror(errno));
			return 1;
		}
		int big = 4 << 20;
		(void)setsockopt(c->udp, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
		(void)setsockopt(c->raw, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
		for (size_t i = 0; i < c->l->n; i++) {
			uint64_t rx;
			if (!udp_queue(c->l->members[i].port, &rx, &c->drops_before[i]))
				fprintf(stderr, "hostile: nothing listens on 127.0.0.1:%u (member %u)\n",
					c->l->members[i].port, c->l->members[i].id);
		}
		for (size_t k = 0; k < K_COUNT; k++) {
			if (!c->want[k])
				continue;
			if (k == K_EPOCH_NONCE) {
				if (epoch_nonce(c) < 0)
					rc = 1;
			} else {
				attack_kind(c, (enum kind)k);
			}
		}
		if (replay(c, (uint64_t)(replay_s * 1e6)) < 0)
			rc = 1;
	}

	printf("\n%-20s %7s %9s %9s %9s %9s %9s %9s %9s\n", "kind", "sent", "errors", "auth",
	       "bad", "mismatch", "version", "uncounted", "accepted");
	struct stats tot = {0};
	for (size_t k = 0; k < K_COUNT; k++) {
		const struct stats *s = &c->st[k];
		if (!c->want[k])
			continue;
		printf("%-20s %7" PRIu64 " %9" PRIu64, kinds[k].word, s->sent, s->errors);
		for (size_t b = 0; b < B_COUNT; b++)
			printf(" %9" PRIu64, s->bucket[b]);
		printf("\n");
		tot.sent += s->sent;
		tot.errors += s->errors;
		tot.bytes += s->bytes;
		for (size_t b = 0; b < B_COUNT; b++)
			tot.bucket[b] += s->bucket[b];
	}
	uint64_t drops = 0;
	for (size_t i = 0; udp && i < c->l->n; i++) {
		uint64_t rx, d;
		if (udp_queue(c->l->members[i].port, &rx, &d) && d >= c->drops_before[i])
			drops += d - c->drops_before[i];
	}
	printf("%-20s %7" PRIu64 " %9" PRIu64, "total", tot.sent, tot.errors);
	for (size_t b = 0; b < B_COUNT; b++)
		printf(" %9" PRIu64, tot.bucket[b]);
	printf("\n\n");
	for (size_t k = 0; k < K_COUNT && c->verbose; k++) {
		if (!c->want[k] || !c->st[k].sent)
			continue;
		printf("  %-20s %s; by type:", kinds[k].word, kinds[k].help);
		for (unsigned t = 0; t < 256; t++)
			if (c->st[k].by_type[t])
				printf(" %s %" PRIu64, ring_msg_name((enum ring_msg_type)t),
				       c->st[k].by_type[t]);
		printf("\n");
	}
	for (size_t k = 0; k < K_COUNT; k++) {
		if (!c->want[k])
			continue;
		printf("hostile-kind: %s sent=%" PRIu64, kinds[k].word, c->st[k].sent);
		for (size_t b = 0; b < B_COUNT; b++)
			printf(" %s=%" PRIu64, bucket_name[b], c->st[k].bucket[b]);
		printf("\n");
	}

	if (control) {
		printf("control sockets:\n");
		for (size_t i = 0; i < c->l->n; i++) {
			if (c->only >= 0 && (size_t)c->only != i)
				continue;
			struct ctl_result r = {0};
			struct stat sb;
			unsigned mode = stat(c->conf.control[i], &sb) == 0 ? sb.st_mode & 07777 : 0;
			bool alive = attack_control(c, i, &r);
			printf("  member %u (%s, mode %04o): %u connections, %u junk lines -> %u replies "
			       "(%u ERR), %u closed by the member; STATUS afterwards: %s\n",
			       c->l->members[i].id, c->conf.control[i], mode, r.conns, r.lines_sent,
			       r.replies, r.errs, r.eofs, alive ? "answers" : "NO ANSWER");
			printf("hostile-control: member=%u mode=%04o alive=%d junk=%u errs=%u\n",
			       c->l->members[i].id, mode, alive, r.lines_sent, r.errs);
			if (!alive)
				rc = 1;
		}
	}
	printf("hostile: sent=%" PRIu64 " errors=%" PRIu64, tot.sent, tot.errors);
	for (size_t b = 0; b < B_COUNT; b++)
		printf(" %s=%" PRIu64, bucket_name[b], tot.bucket[b]);
	printf(" drops=%" PRIu64 "\n", drops);
	ring_auth_free(c->auth);
	ring_auth_free(c->spoof);
	if (c->udp > 0)
		close(c->udp);
	if (c->raw > 0)
		close(c->raw);
	return rc;
}
