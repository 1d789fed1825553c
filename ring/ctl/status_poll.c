/* The UDP status poll of `ringctl ring`, `watch` and `lease-advice`: asks
 * every member for its status, its advice figures or its lock, keeps the answers to
 * this round's nonce, asks the silent ones again. See status_poll.h. */
#include "ctl/status_poll.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/fingerprint.h"
#include "core/bytes.h"
#include "core/err.h"
#include "common/net.h"

struct ring_status_poll {
	const struct ring_layout *l;
	uint64_t fp;
	uint64_t nonce, nonce_base, round;
	struct ring_auth *auth; /* NULL when the ring has no secret_file */
	int fd;
	struct ring_status_poll_traffic traffic;
	unsigned kinds; /* RING_POLL_* a round asks */
	size_t answered, advised, held;
	struct ring_addr addr[RING_MAX_MEMBERS];
	bool got[RING_MAX_MEMBERS];
	struct ring_msg_status_resp resp[RING_MAX_MEMBERS];
	bool got_advice[RING_MAX_MEMBERS];
	struct ring_msg_advice_resp advice[RING_MAX_MEMBERS];
	struct ring_poll_note note[RING_MAX_MEMBERS]; /* this round's, for `ring` */
	bool got_hold[RING_MAX_MEMBERS];
	struct ring_msg_hold_resp hold[RING_MAX_MEMBERS];
};

int ring_status_poll_open(struct ring_status_poll **out, const struct ring_layout *l,
			  const char *secret_file, char *err, size_t errlen)
{
	*out = NULL;
	struct ring_status_poll *p = calloc(1, sizeof *p); /* large: not on the stack */
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	p->l = l;
	p->fd = -1;
	p->kinds = RING_POLL_STATUS;
	p->fp = ring_layout_fingerprint(l);
	int family = AF_UNSPEC;
	for (size_t i = 0; i < l->n; i++) {
		char why[256];
		if (ring_net_resolve(l->members[i].host, l->members[i].port, family, &p->addr[i], why,
				     sizeof why) < 0) {
			snprintf(err, errlen, "cannot resolve %s: %s", l->members[i].host, why);
			ring_status_poll_close(p);
			return -RING_ECONFIG;
		}
		family = p->addr[i].sa.ss_family;
	}
	p->fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (p->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		ring_status_poll_close(p);
		return -RING_EIO;
	}
	if (secret_file && secret_file[0]) {
		char why[512];
		if (ring_auth_load(&p->auth, secret_file, l->n, why, sizeof why) < 0) {
			snprintf(err, errlen, "%s (status over UDP is authenticated: run as a user "
				 "that may read the key)", why);
			ring_status_poll_close(p);
			return -RING_ECONFIG;
		}
	}
	/* Rounds number up from here: distinct nonces for this poll's life.
	 * Random, since on a keyless ring the nonce is all that keeps out an
	 * answer forged by another user of the host, who can see our pid and
	 * when we started (which the nonce was once made of). */
	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium failed to initialise");
		ring_status_poll_close(p);
		return -RING_EIO;
	}
	randombytes_buf(&p->nonce_base, sizeof p->nonce_base);
	*out = p;
	return 0;
}

void ring_status_poll_close(struct ring_status_poll *p)
{
	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	ring_auth_free(p->auth);
	free(p);
}

void ring_status_poll_ask(struct ring_status_poll *p, unsigned kinds)
{
	p->kinds = kinds & (RING_POLL_STATUS | RING_POLL_ADVICE | RING_POLL_HOLD);
	if (!p->kinds)
		p->kinds = RING_POLL_STATUS;
}

/* Sends this round's request of TYPE to member I. */
static void send_req(struct ring_status_poll *p, size_t i, enum ring_msg_type type)
{
	/* The requests have the same body: a nonce. */
	struct ring_msg req = {.type = type, .from = 0, .to = p->l->members[i].id,
			       .fingerprint = p->fp};
	if (type == RING_MSG_ADVICE_REQ)
		req.u.advice_req.nonce = p->nonce;
	else if (type == RING_MSG_HOLD_REQ)
		req.u.hold_req.nonce = p->nonce;
	else
		req.u.status_req.nonce = p->nonce;
	uint8_t buf[RING_WIRE_MAX + RING_AUTH_TRAILER];
	int n = ring_wire_encode(&req, buf, RING_WIRE_MAX);
	if (n > 0 && p->auth)
		n = ring_auth_seal(p->auth, buf, (size_t)n, sizeof buf, ring_wall_us());
	if (n > 0 && sendto(p->fd, buf, (size_t)n, 0, (struct sockaddr *)&p->addr[i].sa,
			    p->addr[i].len) == n) {
		p->traffic.sent++;
		p->traffic.sent_bytes += (uint64_t)n;
	}
}

/* Sends this round's requests to every member that has not answered them. */
static void ask(struct ring_status_poll *p)
{
	for (size_t i = 0; i < p->l->n; i++) {
		if ((p->kinds & RING_POLL_STATUS) && !p->got[i])
			send_req(p, i, RING_MSG_STATUS_REQ);
		if ((p->kinds & RING_POLL_ADVICE) && !p->got_advice[i])
			send_req(p, i, RING_MSG_ADVICE_REQ);
		if ((p->kinds & RING_POLL_HOLD) && !p->got_hold[i])
			send_req(p, i, RING_MSG_HOLD_REQ);
	}
}

/* Notes what member I's answer said of the ring's set-up, once a round:
 * the first thing seen stands. */
static void note(struct ring_status_poll *p, size_t i, enum ring_poll_problem what,
		 const struct ring_addr *from, uint16_t as_id, uint64_t fingerprint)
{
	if (i >= p->l->n || p->note[i].problem != RING_POLL_OK)
		return;
	p->note[i] = (struct ring_poll_note){.problem = what, .from = *from, .as_id = as_id};
	p->note[i].fingerprint = fingerprint;
}

/* Whether M is a status answer to this round's request (or a refusal of
 * it, which carries the member's fingerprint, not ours). */
static bool status_of_round(const struct ring_status_poll *p, const struct ring_msg *m)
{
	return m->type == RING_MSG_STATUS_RESP && (p->kinds & RING_POLL_STATUS) &&
	       (m->fingerprint == p->fp || (m->u.status_resp.flags & RING_STATUS_OTHER_CONFIG)) &&
	       m->u.status_resp.nonce == p->nonce;
}

/* A status answer that is not where the file says: from an address of no
 * member, or from member SLOT's address under another id; or one that
 * says our request did not authenticate. Noted, not kept. True when M
 * was one of those. */
static bool odd_answer(struct ring_status_poll *p, const struct ring_msg *m, size_t slot,
		       const struct ring_addr *from)
{
	if (!status_of_round(p, m))
		return false;
	int idx = ring_layout_index(p->l, m->from);
	size_t who = slot < p->l->n ? slot : (size_t)idx;
	if (m->u.status_resp.flags & RING_STATUS_UNAUTHENTICATED)
		note(p, who, RING_POLL_AUTH_REFUSED, from, m->from, m->fingerprint);
	else if (m->u.status_resp.flags & RING_STATUS_OTHER_CONFIG)
		note(p, who, RING_POLL_OTHER_CONFIG, from, m->from, m->fingerprint);
	else if (slot < p->l->n && idx != (int)slot)
		note(p, slot, RING_POLL_WRONG_ID, from, m->from, m->fingerprint);
	else if (slot >= p->l->n && idx >= 0)
		note(p, (size_t)idx, RING_POLL_WRONG_ADDRESS, from, m->from, m->fingerprint);
	else
		return false;
	return true;
}

/* Keeps M, from member SLOT's address (n: no member's), when it answers
 * this round, once per member and kind. Only from the member's own
 * address: on a keyless ring a hold or advice answer in a member's name
 * from anywhere else would put a false holder on watch's screen. */
static void keep(struct ring_status_poll *p, const struct ring_msg *m, size_t slot)
{
	int idx = m->fingerprint == p->fp ? ring_layout_index(p->l, m->from) : -1;
	if (idx < 0 || (size_t)idx != slot)
		return;
	if (m->type == RING_MSG_STATUS_RESP && (p->kinds & RING_POLL_STATUS) &&
	    m->u.status_resp.nonce == p->nonce && !p->got[idx]) {
		p->got[idx] = true;
		p->resp[idx] = m->u.status_resp;
		p->answered++;
		p->traffic.kept++;
	} else if (m->type == RING_MSG_ADVICE_RESP && (p->kinds & RING_POLL_ADVICE) &&
		   m->u.advice_resp.nonce == p->nonce && !p->got_advice[idx]) {
		p->got_advice[idx] = true;
		p->advice[idx] = m->u.advice_resp;
		p->advised++;
		p->traffic.kept++;
	} else if (m->type == RING_MSG_HOLD_RESP && (p->kinds & RING_POLL_HOLD) &&
		   m->u.hold_resp.nonce == p->nonce && !p->got_hold[idx]) {
		p->got_hold[idx] = true;
		p->hold[idx] = m->u.hold_resp;
		p->held++;
		p->traffic.kept++;
	}
}

/* Checks and strips the trailer of the *N bytes at IN from FROM (member
 * SLOT's address, or SLOT = n). The key slot is the sender's member index:
 * by address as a member would find it, else by the id it claims (the
 * replay window is per sender; the MAC decides). An answer to this round
 * that fails is noted: the member answers, but one side's key is not the
 * other's. 0, or -1 to drop it. */
static int open_answer(struct ring_status_poll *p, const uint8_t *in, ssize_t *n, size_t slot,
		       const struct ring_addr *from)
{
	const struct ring_layout *l = p->l;
	size_t len = (size_t)*n;
	size_t key = slot;
	if (key >= l->n && len >= RING_WIRE_HEADER) {
		int claimed = ring_layout_index(l, ring_get_be16(in + 4));
		key = claimed >= 0 ? (size_t)claimed : l->n;
	}
	int body = key < l->n ? ring_auth_open(p->auth, in, len, key, ring_wall_us()) : -1;
	if (body >= 0) {
		*n = body;
		return 0;
	}
	/* A valid MAC whose timestamp we refuse, on an answer to this very
	 * round (no copy of an older one): the clocks are more than 30 s
	 * apart, and that member refuses our requests as we its answers. */
	struct ring_msg m;
	if ((body == -RING_EAUTH || body == -RING_EREPLAY) && len > RING_AUTH_TRAILER &&
	    ring_wire_decode(in, len - RING_AUTH_TRAILER, &m) == 0 && status_of_round(p, &m))
		note(p, key, body == -RING_EAUTH ? RING_POLL_AUTH_FAILS : RING_POLL_CLOCK_APART, from,
		     m.from, m.fingerprint);
	return -1;
}

/* Reads every datagram waiting; keeps those that answer this round. */
static void read_all(struct ring_status_poll *p)
{
	const struct ring_layout *l = p->l;
	/* Room past the largest datagram of ours, so a longer one shows as such. */
	uint8_t in[RING_WIRE_MAX + RING_AUTH_TRAILER + 64];
	for (int k = 0; k < 4 * RING_MAX_MEMBERS; k++) { /* bounded: a flood cannot hold us */
		struct ring_addr from = {.len = sizeof from.sa};
		ssize_t n = recvfrom(p->fd, in, sizeof in, MSG_DONTWAIT, (struct sockaddr *)&from.sa,
				     &from.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		p->traffic.received++;
		p->traffic.received_bytes += (uint64_t)n;
		size_t slot = ring_net_index_of(p->addr, l->n, &from);
		if (p->auth && open_answer(p, in, &n, slot, &from) < 0)
			continue;
		struct ring_msg m;
		if (n > 0 && ring_wire_decode(in, (size_t)n, &m) == 0) {
			if (!odd_answer(p, &m, slot, &from))
				keep(p, &m, slot);
		} else if (!p->auth && n > RING_AUTH_TRAILER &&
			   ring_wire_decode(in, (size_t)n - RING_AUTH_TRAILER, &m) == 0 &&
			   status_of_round(p, &m)) {
			/* A sealed answer to our unsealed request: it has a key,
			 * this file none. */
			note(p, slot < l->n ? slot : l->n, RING_POLL_AUTH_FAILS, &from, m.from, m.fingerprint);
		}
	}
}

/* Whether every member has given every answer this round asks. */
static bool complete(const struct ring_status_poll *p)
{
	return (!(p->kinds & RING_POLL_STATUS) || p->answered == p->l->n) &&
	       (!(p->kinds & RING_POLL_ADVICE) || p->advised == p->l->n) &&
	       (!(p->kinds & RING_POLL_HOLD) || p->held == p->l->n);
}

int ring_status_poll_round(struct ring_status_poll *p, unsigned tries, unsigned try_ms,
			   int wake_fd, bool *woken)
{
	bool w = false;
	memset(p->got, 0, sizeof p->got);
	memset(p->got_advice, 0, sizeof p->got_advice);
	memset(p->note, 0, sizeof p->note);
	memset(p->got_hold, 0, sizeof p->got_hold);
	p->answered = p->advised = p->held = 0;
	p->nonce = p->nonce_base + ++p->round;
	for (unsigned t = 0; t < tries && !complete(p) && !w; t++) {
		ask(p);
		uint64_t until = ring_mono_us() / 1000u + try_ms;
		for (int spins = 0; spins < 100000 && !complete(p) && !w; spins++) {
			uint64_t now = ring_mono_us() / 1000u;
			if (now >= until)
				break;
			struct pollfd pfd[2] = {{.fd = p->fd, .events = POLLIN},
						{.fd = wake_fd, .events = POLLIN}};
			int r = poll(pfd, wake_fd >= 0 ? 2 : 1, (int)(until - now));
			if (r < 0 && errno != EINTR) {
				if (woken)
					*woken = false;
				return -RING_EIO;
			}
			if (r > 0 && (pfd[0].revents & POLLIN))
				read_all(p);
			if (r > 0 && wake_fd >= 0 && pfd[1].revents)
				w = true;
		}
	}
	if (woken)
		*woken = w;
	return (int)((p->kinds & RING_POLL_STATUS) ? p->answered : p->advised);
}

const struct ring_msg_status_resp *ring_status_poll_answer(const struct ring_status_poll *p,
							   size_t i)
{
	return i < p->l->n && p->got[i] ? &p->resp[i] : NULL;
}

size_t ring_status_poll_answered(const struct ring_status_poll *p)
{
	return p->answered;
}

const struct ring_msg_advice_resp *ring_status_poll_advice(const struct ring_status_poll *p,
							   size_t i)
{
	return i < p->l->n && p->got_advice[i] ? &p->advice[i] : NULL;
}

size_t ring_status_poll_advised(const struct ring_status_poll *p)
{
	return p->advised;
}

const struct ring_poll_note *ring_status_poll_note(const struct ring_status_poll *p, size_t i)
{
	return i < p->l->n && !p->got[i] && p->note[i].problem != RING_POLL_OK ? &p->note[i]
										: NULL;
}

const struct ring_msg_hold_resp *ring_status_poll_hold(const struct ring_status_poll *p, size_t i)
{
	return i < p->l->n && p->got_hold[i] ? &p->hold[i] : NULL;
}

uint64_t ring_status_poll_fingerprint(const struct ring_status_poll *p)
{
	return p->fp;
}

void ring_status_poll_traffic(const struct ring_status_poll *p,
			      struct ring_status_poll_traffic *out)
{
	*out = p->traffic;
}
