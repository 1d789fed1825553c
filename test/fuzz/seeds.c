/* The fuzzers' seed corpora, made and checked. `seeds DIR` writes the
 * datagram corpus (test/fuzz/corpus/datagram, `make fuzz-seeds`) from
 * ring_wire_encode, one scenario per file in fuzz_datagram's input format,
 * so that the seeds follow the wire instead of being typed; `seeds --check
 * CORPUS` (make house) fails when a committed corpus has drifted: a
 * datagram the decoder refuses, a message type, control command or config
 * key no seed has, a config seed that no longer loads. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/control.h"
#include "core/err.h"
#include "core/wire.h"
#include "fuzz/fuzz_datagram.h"

/* The ring fuzz_datagram plays: the member fed the input is 30 (index 2),
 * its predecessor 20 (index 1), its successor 40 (index 3). A seed starts
 * a fresh member unless it sets FUZZ_DG_STORED in its first byte (the
 * epoch_reply seeds of a restarted one); the fuzzer flips that bit too.
 * The ring's epoch is of generation 2, minted by 20. */
enum { PRED = 1, SUCC = 3 };
#define ID(i) fuzz_dg_from((uint8_t)(i))
#define EPOCH 0x201u
/* The hop the token arrives with: the third of its epoch, so that a
 * majority has persisted the epoch and the member may grant under it
 * (§4.4, epoch_confirmed). */
#define HOP 3u

struct seed {
	uint8_t buf[2048];
	size_t len;
};

static void die(const char *what)
{
	fprintf(stderr, "seeds: %s\n", what);
	exit(2);
}

static void put(struct seed *s, const void *p, size_t n)
{
	if (n > sizeof s->buf - s->len)
		die("a seed outgrew its buffer");
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/* A datagram from the member of ring index WHO (or a stranger), STEP time
 * units after the previous record. The fingerprint is left 0: the harness
 * fills in the ring's. */
static void put_msg(struct seed *s, uint8_t who, uint8_t step, struct ring_msg m)
{
	uint8_t d[RING_WIRE_MAX];
	m.fingerprint = 0;
	int n = ring_wire_encode(&m, d, sizeof d);
	struct ring_msg back;
	if (n < 0 || n > 255 || ring_wire_decode(d, (size_t)n, &back) != 0)
		die("a seed's message does not encode, or not into one that decodes");
	uint8_t rec[3] = {(uint8_t)n, who, step};
	put(s, rec, sizeof rec);
	put(s, d, (size_t)n);
}

static void put_tick(struct seed *s, uint8_t step)
{
	uint8_t rec[3] = {0, FUZZ_DG_TICK, step};
	put(s, rec, sizeof rec);
}

/* Client 1's EVENT, about a millisecond after the previous record. */
static void put_client(struct seed *s, enum ring_event_type event)
{
	for (uint8_t step = 4; step < 8; step++) {
		if (fuzz_dg_client_event(step) == event) {
			uint8_t rec[3] = {0, FUZZ_DG_CLIENT, step};
			put(s, rec, sizeof rec);
			return;
		}
	}
	die("no step gives that client event");
}

static struct ring_msg msg(enum ring_msg_type type, size_t from, uint16_t to)
{
	struct ring_msg m = {.type = type, .from = ID(from), .to = to};
	return m;
}

static struct ring_set everyone(void)
{
	struct ring_set set;
	ring_set_clear(&set);
	for (size_t i = 0; i < FUZZ_DG_MEMBERS; i++)
		ring_set_add(&set, i);
	return set;
}

static struct ring_msg token(uint32_t epoch, uint32_t seq, uint32_t counter)
{
	struct ring_msg m = msg(RING_MSG_TOKEN, PRED, FUZZ_DG_ME);
	m.u.token = (struct ring_msg_token){.epoch = epoch, .seq = seq, .counter = counter,
					    .quiet_us = 100, .alive = everyone()};
	return m;
}

/* An answer to the member's query: NONCE 0 stands for its latest query's,
 * 1 for its first's (fuzz_datagram.c fills them in). */
static struct ring_msg epoch_reply(size_t from, uint64_t nonce, uint32_t epoch)
{
	struct ring_msg m = msg(RING_MSG_EPOCH_REPLY, from, FUZZ_DG_ME);
	m.u.epoch_reply = (struct ring_msg_epoch_reply){.nonce = nonce, .epoch = epoch};
	return m;
}

/* A fresh member proven by three answers (n - n / 2 of 5, §5.3): until
 * then it takes no token and passes none. They know generation 1, so that
 * a token of EPOCH is newer than its sender's answer, not a copy from
 * before the member's start (visit.c, token_refused). */
static void proven(struct seed *s)
{
	put_msg(s, 0, 1, epoch_reply(0, 0, 0x100));
	put_msg(s, PRED, 1, epoch_reply(PRED, 0, 0x100));
	put_msg(s, SUCC, 1, epoch_reply(SUCC, 0, 0x100));
}

/* ---- the scenarios, one a file (the names the corpus always had) ---- */

/* The token from the predecessor; the member takes and acks it, and
 * passes it on (nobody waits here); 40 stays silent. */
static void seed_token(struct seed *s)
{
	proven(s);
	put_msg(s, PRED, 10, token(EPOCH, HOP, 2));
	put_tick(s, 200);
}

/* The token passes through: taken from 20, handed to 40, acked by 40. */
static void seed_token_ack(struct seed *s)
{
	proven(s);
	put_msg(s, PRED, 10, token(EPOCH, HOP, 2));
	struct ring_msg m = msg(RING_MSG_TOKEN_ACK, SUCC, FUZZ_DG_ME);
	m.u.token_ack = (struct ring_msg_token_ack){.epoch = EPOCH, .seq = HOP + 1,
						    .known_epoch = EPOCH};
	put_msg(s, SUCC, 10, m);
	put_tick(s, 200);
}

/* The holder's heartbeat, its client in the region: the member answers
 * with a HEARTBEAT_ACK. */
static void seed_heartbeat(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_HEARTBEAT, PRED, 0);
	m.u.heartbeat = (struct ring_msg_heartbeat){
		.epoch = EPOCH, .seq = 4, .counter = 2, .flags = RING_HB_BUSY | RING_HB_GRANTED,
		.beat = 1, .alive = everyone()};
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

/* The member holds the token for its client and beats; 40 answers. */
static void seed_heartbeat_ack(struct seed *s)
{
	proven(s);
	put_client(s, RING_EVENT_ACQUIRE);
	put_msg(s, PRED, 10, token(EPOCH, HOP, 2));
	put_tick(s, 110);
	struct ring_msg m = msg(RING_MSG_HEARTBEAT_ACK, SUCC, FUZZ_DG_ME);
	m.u.heartbeat_ack = (struct ring_msg_heartbeat_ack){.epoch = EPOCH, .seq = HOP,
							    .beat = 1};
	put_msg(s, SUCC, 1, m);
	put_client(s, RING_EVENT_RENEW);
	put_client(s, RING_EVENT_RELEASE);
}

/* A token that went a whole round unwanted parks here (idle_pass_ms 0,
 * §3.4), heartbeating, until 40 summons it. */
static void seed_want(struct seed *s)
{
	proven(s);
	struct ring_msg t = token(EPOCH, HOP, 2);
	t.u.token.idle = FUZZ_DG_MEMBERS - 1;
	put_msg(s, PRED, 10, t);
	put_tick(s, 50);
	struct ring_msg m = msg(RING_MSG_WANT, SUCC, FUZZ_DG_ME);
	m.u.want = (struct ring_msg_want){.epoch = EPOCH, .seq = HOP, .wanter = 2};
	put_msg(s, SUCC, 10, m);
	put_tick(s, 200);
}

/* 20's election reaches the member: it adds itself and passes it on. */
static void seed_election(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_ELECTION, PRED, FUZZ_DG_ME);
	m.u.election = (struct ring_msg_election){.initiator = ID(PRED), .hops = 1, .round = 7,
						  .max_epoch = EPOCH};
	ring_set_clear(&m.u.election.participants);
	ring_set_add(&m.u.election.participants, PRED);
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

/* An ack of an election of the member's own. */
static void seed_election_ack(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_ELECTION_ACK, PRED, FUZZ_DG_ME);
	m.u.election_ack = (struct ring_msg_election_ack){.initiator = FUZZ_DG_ME, .hops = 1,
							  .round = 7};
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

/* 20 (re)joins, having refused nothing. */
static void seed_join(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_JOIN, PRED, FUZZ_DG_ME);
	m.u.join.epoch = 0x100;
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

/* 20 leaves, having accepted hop 1 of the ring's epoch. */
static void seed_leave(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_LEAVE, PRED, FUZZ_DG_ME);
	m.u.leave.epoch = EPOCH;
	m.u.leave.accepted = (struct ring_hop){EPOCH, 1};
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

/* 20 restarted and asks what epoch the member knows. */
static void seed_epoch_query(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_EPOCH_QUERY, PRED, 0);
	m.u.epoch_query.nonce = 0x0102030405060708ull;
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

/* A fresh member answered by three: two at 0x300, one near the top. */
static void seed_epoch_reply_fresh(struct seed *s)
{
	put_msg(s, 0, 1, epoch_reply(0, 0, 0x300));
	put_msg(s, PRED, 1, epoch_reply(PRED, 0, 0x300));
	put_msg(s, SUCC, 1, epoch_reply(SUCC, 0, 0xfffff000u));
	put_tick(s, 200);
}

/* A restarted member proven at 0x400; then 40's late answer to its first
 * query, far ahead (beyond reach), before 40's own tokens. */
static void seed_epoch_reply_late(struct seed *s)
{
	s->buf[0] = FUZZ_DG_STORED;
	put_msg(s, 0, 1, epoch_reply(0, 0, 0x400));
	put_msg(s, PRED, 1, epoch_reply(PRED, 0, 0x400));
	put_tick(s, 200);
	put_msg(s, SUCC, 1, epoch_reply(SUCC, 1, 0x01010400u));
	struct ring_msg t = token(0x500, 1, 0);
	t.from = ID(SUCC);
	put_msg(s, SUCC, 1, t);
	put_tick(s, 200);
	t.u.token.seq = 2;
	put_msg(s, SUCC, 1, t);
}

/* A restarted member that two members answer with the very top epoch
 * (issue 26): two vouch for it, so it may climb; it must not break. */
static void seed_epoch_reply_top(struct seed *s)
{
	s->buf[0] = FUZZ_DG_STORED;
	put_msg(s, 0, 1, epoch_reply(0, 0, 0xffffffffu));
	put_msg(s, PRED, 1, epoch_reply(PRED, 0, 0xffffffffu));
	put_tick(s, 200);
	put_tick(s, 200);
}

/* Issue of the first fuzz run: a token at hop 2^32 - 1 must be passed on
 * under a new epoch, not as hop 0. Only a proven member gives a token a
 * new epoch (§5.3); 40 acks the new hop (0x302: generation 3, minted by
 * index 2). */
static void seed_regress_seq_wrap(struct seed *s)
{
	proven(s);
	put_msg(s, PRED, 5, token(EPOCH, UINT32_MAX, 2));
	struct ring_msg m = msg(RING_MSG_TOKEN_ACK, SUCC, FUZZ_DG_ME);
	m.u.token_ack = (struct ring_msg_token_ack){.epoch = 0x302, .seq = 1, .known_epoch = 0x302};
	put_msg(s, SUCC, 1, m);
	put_tick(s, 200);
}

/* A visit: the member's client asks, the token comes, the client holds
 * the region a while, renews, releases, and tries again. */
static void seed_visit(struct seed *s)
{
	proven(s);
	put_client(s, RING_EVENT_ACQUIRE);
	put_msg(s, PRED, 5, token(EPOCH, HOP, 2));
	put_tick(s, 50);
	put_client(s, RING_EVENT_RENEW);
	put_client(s, RING_EVENT_RELEASE);
	put_client(s, RING_EVENT_TRY);
}

/* The driver's requests and answers (`ringctl ring`, lease-advice, watch):
 * the core only admits them. A status request from a member's address
 * with from = 0, as ringctl sends; the other requests from a stranger. */
static void seed_status_req(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_STATUS_REQ, 0, FUZZ_DG_ME);
	m.from = 0;
	m.u.status_req.nonce = 9;
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

static void seed_status_resp(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_STATUS_RESP, PRED, FUZZ_DG_ME);
	m.u.status_resp = (struct ring_msg_status_resp){
		.nonce = 9, .state = RING_STATE_HOLDING, .flags = RING_STATUS_HAS_TOKEN,
		.successor = FUZZ_DG_ME, .epoch = EPOCH, .fence = (uint64_t)EPOCH << 32 | 2,
		.seen_ms = 0, .queued = 1, .alive = everyone()};
	m.u.status_resp.counters.tokens_passed = 40;
	m.u.status_resp.counters.cs_entries = 2;
	put_msg(s, PRED, 10, m);
	put_tick(s, 200);
}

static void seed_advice_req(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_ADVICE_REQ, 0, FUZZ_DG_ME);
	m.from = 0;
	m.u.advice_req.nonce = 0x0102030405060708ull;
	put_msg(s, FUZZ_DG_STRANGER_0, 10, m);
}

static void seed_advice_resp(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_ADVICE_RESP, PRED, FUZZ_DG_ME);
	m.u.advice_resp = (struct ring_msg_advice_resp){
		.nonce = 9, .holds = 40, .p50_us = 50000, .p99_us = 60000, .p999_us = 61000,
		.max_us = 62000, .pause_max_us = 490000, .pauses = 1};
	put_msg(s, PRED, 10, m);
}

static void seed_hold_req(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_HOLD_REQ, 0, FUZZ_DG_ME);
	m.from = 0;
	m.u.hold_req.nonce = 0x0102030405060708ull;
	put_msg(s, FUZZ_DG_STRANGER_0, 10, m);
}

static void seed_hold_resp(struct seed *s)
{
	struct ring_msg m = msg(RING_MSG_HOLD_RESP, PRED, FUZZ_DG_ME);
	m.u.hold_resp = (struct ring_msg_hold_resp){
		.nonce = 0x0102030405060708ull, .fence = (uint64_t)EPOCH << 32 | 2, .held_ms = 2400};
	put_msg(s, PRED, 10, m);
}

/* None of them is malformed on purpose: a mutation or two makes any
 * malformed datagram out of a well-formed one, while the fuzzer seldom
 * finds its way past the decoder's checks unaided. Each starts past
 * them, so it starts where the core decides. */
static const struct {
	const char *name;
	void (*make)(struct seed *s);
} seeds[] = {
	{"token", seed_token},
	{"token_ack", seed_token_ack},
	{"heartbeat", seed_heartbeat},
	{"heartbeat_ack", seed_heartbeat_ack},
	{"want", seed_want},
	{"election", seed_election},
	{"election_ack", seed_election_ack},
	{"join", seed_join},
	{"leave", seed_leave},
	{"epoch_query", seed_epoch_query},
	{"epoch_reply_fresh", seed_epoch_reply_fresh},
	{"epoch_reply_late", seed_epoch_reply_late},
	{"epoch_reply_top", seed_epoch_reply_top},
	{"regress-seq-wrap", seed_regress_seq_wrap},
	{"visit", seed_visit},
	{"status_req", seed_status_req},
	{"status_resp", seed_status_resp},
	{"advice_req", seed_advice_req},
	{"advice_resp", seed_advice_resp},
	{"hold_req", seed_hold_req},
	{"hold_resp", seed_hold_resp},
};

static int write_seeds(const char *dir)
{
	for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
		struct seed s = {.len = 1};
		seeds[k].make(&s);
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, seeds[k].name);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(s.buf, 1, s.len, f) != s.len || fclose(f) != 0) {
			fprintf(stderr, "seeds: %s: %s\n", path, strerror(errno));
			return 2;
		}
	}
	printf("seeds: %zu datagram seeds written to %s\n", sizeof seeds / sizeof seeds[0], dir);
	return 0;
}

/* ---- the checks of the committed corpora ---- */

/* Reads a whole file into BUF (at most CAP bytes); -1 when it cannot. */
static long slurp(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, cap, f);
	bool whole = n < cap && !ferror(f);
	fclose(f);
	return whole ? (long)n : -1;
}

/* Calls CHECK on every regular file of DIR, in no order; returns how many
 * it failed, and the number of files in *N. */
static int each_file(const char *dir, int (*check)(const char *path, const char *name, void *ctx),
		     void *ctx, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "seeds: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	int bad = 0;
	*n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		bad += check(path, e->d_name, ctx);
		(*n)++;
	}
	closedir(d);
	return bad;
}

struct dg_tally {
	size_t datagrams;
	bool type_seen[256];
};

/* One seed, read as fuzz_datagram reads it: every datagram must decode at
 * this version, whole, with the fingerprint left for the harness. */
static int check_datagram_seed(const char *path, const char *name, void *ctx)
{
	struct dg_tally *t = ctx;
	static uint8_t data[65536];
	long size = slurp(path, data, sizeof data);
	if (size < 1) {
		fprintf(stderr, "seeds: %s: cannot read it, or it is empty\n", path);
		return 1;
	}
	int bad = 0;
	size_t off = 1, k = 0;
	while (off + 3 <= (size_t)size) {
		size_t len = data[off];
		uint8_t who = data[off + 1];
		off += 3;
		if (who == FUZZ_DG_CLIENT || who == FUZZ_DG_TICK)
			continue;
		k++;
		t->datagrams++;
		struct ring_msg m;
		int rc = len > (size_t)size - off ? -RING_ESHORT : ring_wire_decode(data + off, len, &m);
		off += len;
		if (rc != 0) {
			fprintf(stderr, "seeds: %s: datagram %zu does not decode (%s): `make fuzz-seeds` "
				"makes the corpus again from the encoder\n", name, k, ring_strerror(rc));
			bad = 1;
		} else if (m.fingerprint != 0) {
			fprintf(stderr, "seeds: %s: datagram %zu has a fingerprint, which the ring's "
				"is not; leave it 0 for the harness to fill in\n", name, k);
			bad = 1;
		} else {
			t->type_seen[m.type] = true;
		}
	}
	if (off != (size_t)size) {
		fprintf(stderr, "seeds: %s: %zu bytes after its last record\n", name, (size_t)size - off);
		bad = 1;
	}
	return bad;
}

static int check_datagrams(const char *dir)
{
	struct dg_tally t = {0};
	size_t n;
	int bad = each_file(dir, check_datagram_seed, &t, &n);
#define SEEN_(name, code, str)                                                        \
	if (!t.type_seen[code]) {                                                     \
		fprintf(stderr, "seeds: no seed in %s has a datagram of type " str " (add one to " \
			"test/fuzz/seeds.c, then make fuzz-seeds)\n", dir);              \
		bad++;                                                                \
	}
	RING_MSG_TYPES(SEEN_)
#undef SEEN_
	if (!bad)
		printf("seeds: %zu datagrams of %zu seeds in %s decode at wire version %d, "
		       "every message type among them\n", t.datagrams, n, dir, RING_WIRE_VERSION);
	return bad;
}

/* The control commands (control.h), by the word that starts a line. */
static const char *const ctl_words[] = {"ACQUIRE", "RELEASE", "STATUS", "INJECT",
					"METRICS", "RENEW",   "TRY"};
#define CTL_WORDS (sizeof ctl_words / sizeof ctl_words[0])
_Static_assert(CTL_WORDS == RING_CTL_TRY + 1, "a word for every control command, in order");
#define INJECT_COUNT_(name, word, arg, help) +1
#define INJECTS (0 RING_INJECTS(INJECT_COUNT_))

struct ctl_tally {
	size_t lines;
	bool cmd_seen[CTL_WORDS];
	bool inject_seen[INJECTS];
};

/* Every line of a control seed must parse: a seed the parser refuses at
 * once only tries its error path. */
static int check_control_seed(const char *path, const char *name, void *ctx)
{
	struct ctl_tally *t = ctx;
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "seeds: %s: %s\n", path, strerror(errno));
		return 1;
	}
	int bad = 0;
	char line[RING_CTL_LINE_MAX + 2];
	for (unsigned no = 1; fgets(line, sizeof line, f); no++) {
		line[strcspn(line, "\n")] = 0;
		struct ring_ctl_request req;
		char err[128];
		t->lines++;
		if (ring_ctl_parse(line, &req, err, sizeof err) != 0) {
			fprintf(stderr, "seeds: %s:%u: `%s` is refused: %s\n", name, no, line, err);
			bad = 1;
			continue;
		}
		if ((size_t)req.cmd < CTL_WORDS)
			t->cmd_seen[req.cmd] = true;
		if (req.cmd == RING_CTL_INJECT && (size_t)req.inject < INJECTS)
			t->inject_seen[req.inject] = true;
	}
	fclose(f);
	return bad;
}

static int check_control(const char *dir)
{
	struct ctl_tally t = {0};
	size_t n;
	int bad = each_file(dir, check_control_seed, &t, &n);
	for (size_t c = 0; c < CTL_WORDS; c++) {
		if (!t.cmd_seen[c]) {
			fprintf(stderr, "seeds: no line in %s is a %s command\n", dir, ctl_words[c]);
			bad++;
		}
	}
	for (size_t i = 0; i < INJECTS; i++) {
		if (!t.inject_seen[i]) {
			fprintf(stderr, "seeds: no line in %s injects %s\n", dir,
				ring_inject_name((enum ring_inject)i));
			bad++;
		}
	}
	if (!bad)
		printf("seeds: %zu lines of %zu seeds in %s parse, every command and inject "
		       "among them\n", t.lines, n, dir);
	return bad;
}

struct conf_tally {
	const char *examples; /* the folder of the shipped files (conf/) */
	bool key_seen[64];
};

/* Whether line LINE sets KEY ("key = ..."), not in a comment. */
static bool sets_key(const char *line, const char *key)
{
	line += strspn(line, " \t");
	size_t n = strlen(key);
	return strncmp(line, key, n) == 0 && line[n + strspn(line + n, " \t")] == '=';
}

/* A config seed must load as fuzz_conf loads it (from a file in /tmp, so
 * relative paths mean the same), and a seed named like a shipped example
 * must be that example as it is now. */
static int check_conf_seed(const char *path, const char *name, void *ctx)
{
	struct conf_tally *t = ctx;
	static uint8_t text[65536], shipped[65536];
	long size = slurp(path, text, sizeof text);
	char copy[64], example[4096], err[1024];
	snprintf(example, sizeof example, "%s/%s", t->examples, name);
	long ssize = slurp(example, shipped, sizeof shipped);
	if (ssize >= 0 && (ssize != size || memcmp(text, shipped, (size_t)size) != 0)) {
		fprintf(stderr, "seeds: %s is not %s as it is now (cp %s %s)\n", path, example,
			example, path);
		return 1;
	}
	snprintf(copy, sizeof copy, "/tmp/ring-seeds-%d.ini", (int)getpid());
	FILE *f = fopen(copy, "wb");
	if (size < 0 || !f || fwrite(text, 1, (size_t)size, f) != (size_t)size || fclose(f) != 0)
		die("cannot copy a config seed to /tmp");
	static struct ring_conf conf;
	int rc = ring_conf_load(copy, &conf, err, sizeof err);
	unlink(copy);
	if (rc != 0) {
		fprintf(stderr, "seeds: %s does not load: %s\n", name, err);
		return 1;
	}
	text[size] = 0;
	for (char *line = strtok((char *)text, "\n"); line; line = strtok(NULL, "\n"))
		for (size_t k = 0; k < ring_conf_key_count && k < 64; k++)
			t->key_seen[k] = t->key_seen[k] || sets_key(line, ring_conf_keys[k].name);
	return 0;
}

static int check_conf(const char *dir, const char *examples)
{
	struct conf_tally t = {.examples = examples};
	size_t n;
	if (ring_conf_key_count > 64)
		die("more config keys than the check has room for");
	int bad = each_file(dir, check_conf_seed, &t, &n);
	for (size_t k = 0; k < ring_conf_key_count; k++) {
		if (!t.key_seen[k]) {
			fprintf(stderr, "seeds: no seed in %s sets %s\n", dir, ring_conf_keys[k].name);
			bad++;
		}
	}
	if (!bad)
		printf("seeds: %zu config seeds in %s load, every key set in one, the examples "
		       "of %s as they are\n", n, dir, examples);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 2 && argv[1][0] != '-')
		return write_seeds(argv[1]);
	if (argc == 4 && strcmp(argv[1], "--check") == 0) {
		char dir[4096];
		int bad = 0;
		snprintf(dir, sizeof dir, "%s/datagram", argv[2]);
		bad += check_datagrams(dir);
		snprintf(dir, sizeof dir, "%s/control", argv[2]);
		bad += check_control(dir);
		snprintf(dir, sizeof dir, "%s/conf", argv[2]);
		bad += check_conf(dir, argv[3]);
		return bad ? 1 : 0;
	}
	fprintf(stderr, "usage: seeds DIR              write the datagram seeds into DIR\n"
			"       seeds --check CORPUS CONF  check CORPUS/{datagram,control,conf},\n"
			"                                  the config seeds against the examples in CONF\n");
	return 2;
}
