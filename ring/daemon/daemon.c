/* The daemon: one libevent loop that reads the clock, turns callbacks into
 * core events, steps the protocol core and carries out each action of the
 * update in order (persist before anything that depends on it). */
#define _GNU_SOURCE /* recvmmsg, sendmmsg */
#include "daemon/daemon.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/control.h"
#include "common/fingerprint.h"
#include "daemon/ctl_server.h"
#include "daemon/epoch_store.h"
#include "common/state_dir.h"
#include "core/err.h"
#include "daemon/inject.h"
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "common/net.h"
#include "core/node.h"
#include "daemon/sd_notify.h"
#include "core/wire.h"

#define RECV_BATCH 64   /* datagrams read per wake-up before yielding */
#define RECV_BUF 2048   /* anything longer than RING_WIRE_MAX is refused anyway */
#define SD_STATUS_GAP_US 1000000u /* at most one STATUS= a second to systemd */

/* Events strangers can cause are counted always but logged at most once a
 * second each, with how many went unlogged: a flood must not become a
 * flood of log lines. */
struct log_limit {
	uint64_t at;       /* when last logged */
	uint64_t unlogged; /* since then */
};

/* One received datagram, waiting in a batch. */
struct rx {
	uint8_t buf[RECV_BUF];
	ssize_t n;
	struct ring_addr from;
};

/* What one recvmmsg fills: pointed at once (rx_init), and after a call
 * only the address lengths the kernel wrote are set back. */
struct rx_batch {
	struct rx rx[RECV_BATCH];
	struct mmsghdr msg[RECV_BATCH];
	struct iovec iov[RECV_BATCH];
};

struct ring_daemon {
	const struct ring_conf *conf;
	const struct ring_layout *layout;
	uint16_t id;
	size_t me;
	struct ring_node *node;
	struct ring_log *log;
	uint64_t fingerprint;

	struct event_base *base;
	int udp_fd;
	struct event *udp_ev;
	struct ring_addr peer[RING_MAX_MEMBERS];
	struct event *timer;
	uint64_t armed_us;
	struct event *log_flush; /* activated by a logged line: runs last in the iteration */
	uint64_t now;            /* the core's clock, as read once per callback */
	bool now_valid;
	struct event *sig_term, *sig_int;

	struct ring_ctl_server *ctl;
	struct ring_metrics metrics;       /* METRICS and the HTTP listener show it */
	struct ring_metrics_http *http;    /* NULL unless metrics_listen is set */
	struct ring_state_dir state;     /* state_dir, checked once, for the daemon's life */
	struct ring_state_dir sock_dir;  /* the control socket's folder when set elsewhere */
	struct ring_epoch_store store;
	struct ring_faults faults; /* allow_inject: only ever drops or delays */

	struct ring_auth *auth; /* NULL when secret_file is unset */
	const char *key_source; /* "secret_file", "auto" or "auto-made" (the auth_key line) */
	uint64_t auth_failures;
	struct log_limit auth_log;
	struct log_limit noisy_log[3]; /* bad_packet, config_mismatch, version_mismatch */
	/* The source of the datagram being stepped (receive), NULL between
	 * them: the noisy events name it, since "from 0" (a stranger) alone
	 * does not say who is misconfigured. */
	const struct ring_addr *rx_from;
	struct {
		uint64_t at; /* when this second began */
		unsigned n;  /* answered in it */
	} refused;           /* answers to status requests that fail auth */
	struct event *sig_hup;

	/* Under systemd (ring_daemon_notify): READY=1 once joined, STATUS=
	 * on change, WATCHDOG=1 from a timer of the loop itself. */
	struct ring_sd_notify sd;
	bool sd_ready;
	struct event *sd_watchdog;  /* NULL without WATCHDOG_USEC */
	struct event *sd_status_ev; /* a change within SD_STATUS_GAP_US, sent later */
	char sd_status[160];        /* the last STATUS= sent */
	uint64_t sd_status_at;      /* when, on the core's clock; 0: never */
	bool leaving;
	bool stopping;
	int fatal;
	char fatal_msg[RING_PATH_MAX + 256];
	struct ring_update up; /* reused: large, and one step runs at a time */
	struct rx_batch rx;    /* reused by every udp_cb */
};

/* The core's clock (PROTOCOL.md §5.5). CLOCK_BOOTTIME, not MONOTONIC: a
 * suspended host must wake up as a paused member, with its lease and its
 * silence measured across the suspend, not as one that lost no time. */
static uint64_t read_clock(void)
{
	return ring_clock_us(CLOCK_BOOTTIME);
}

/* The time of the callback that is running: read once, at its first use,
 * and shared by every step of it (a batch of datagrams, its log limits).
 * Each callback starts with clock_reset; so does anything that may take a
 * while (an fsync), so that no step is handed a time long gone. */
static uint64_t now_us(struct ring_daemon *d)
{
	if (!d->now_valid) {
		d->now = read_clock();
		d->now_valid = true;
	}
	return d->now;
}

static void clock_reset(struct ring_daemon *d)
{
	d->now_valid = false;
}

/* Stops the loop; the reason is already in d->fatal_msg. */
static void set_fatal(struct ring_daemon *d)
{
	d->fatal = 1;
	event_base_loopbreak(d->base);
}

/* ---- carrying out an update ---- */

static void step(struct ring_daemon *d, struct ring_event *ev);

/* Returns true when the datagram was a token swallowed by drop-token.
 * TYPE is its message type, for the metrics. */
static bool send_to(struct ring_daemon *d, size_t idx, const uint8_t *buf, size_t len,
		    unsigned type)
{
	if (ring_faults_lose(&d->faults, idx))
		return false;
	if (ring_faults_swallow_token(&d->faults, buf, len))
		return true;
	/* EAGAIN or ENOBUFS is a lost datagram; the protocol retransmits. */
	if (sendto(d->udp_fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)&d->peer[idx].sa,
		   d->peer[idx].len) >= 0)
		ring_metrics_count(d->metrics.tx, type);
	return false;
}

/* To every other member, in one system call: a parked token's heartbeats
 * are most of what an idle ring does. Broadcasts are never tokens, so only
 * planted loss applies. */
static void broadcast(struct ring_daemon *d, const uint8_t *buf, size_t len, unsigned type)
{
	static struct mmsghdr msg[RING_MAX_MEMBERS];
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	unsigned n = 0;
	for (size_t i = 0; i < d->layout->n; i++) {
		if (i == d->me || ring_faults_lose(&d->faults, i))
			continue;
		msg[n].msg_hdr = (struct msghdr){.msg_name = &d->peer[i].sa,
						 .msg_namelen = d->peer[i].len,
						 .msg_iov = &iov, .msg_iovlen = 1};
		n++;
	}
	/* EAGAIN or ENOBUFS loses the rest: a lost heartbeat, ridden out. */
	if (n > 0) {
		int sent = sendmmsg(d->udp_fd, msg, n, MSG_DONTWAIT);
		if (sent > 0)
			d->metrics.tx[type < RING_MSG_SLOTS ? type : 0] += (uint64_t)sent;
	}
}

static void do_send(struct ring_daemon *d, const struct ring_action *a, bool *dropped)
{
	uint8_t sealed[RING_WIRE_MAX + RING_AUTH_TRAILER];
	const uint8_t *buf = a->u.send.buf;
	size_t len = a->u.send.len;
	unsigned type = ring_wire_peek_type(buf, len);
	if (d->auth) {
		/* Sealed once: every receiver keeps its own replay window. */
		memcpy(sealed, buf, len);
		int n = ring_auth_seal(d->auth, sealed, len, sizeof sealed, ring_wall_us());
		if (n < 0)
			return;
		buf = sealed;
		len = (size_t)n;
	}
	if (a->u.send.to == 0) {
		broadcast(d, buf, len, type);
		return;
	}
	int idx = ring_layout_index(d->layout, a->u.send.to);
	if (idx >= 0 && send_to(d, (size_t)idx, buf, len, type))
		*dropped = true;
}

/* Whether an event limited by L may be logged now; if so, *SKIPPED is how
 * many were not since the last one. */
static bool log_allowed(struct log_limit *l, uint64_t now, uint64_t *skipped)
{
	if (l->at && now - l->at < 1000000u) {
		l->unlogged++;
		return false;
	}
	l->at = now;
	*skipped = l->unlogged;
	l->unlogged = 0;
	return true;
}

static void log_core(struct ring_daemon *d, const struct ring_action *a)
{
	static const enum ring_log_event noisy[] = {RING_LOG_BAD_PACKET, RING_LOG_CONFIG_MISMATCH,
						    RING_LOG_VERSION_MISMATCH};
	static const char *const unlogged[] = {"bad_packet_unlogged", "config_mismatch_unlogged",
					       "version_mismatch_unlogged"};
	_Static_assert(sizeof noisy / sizeof noisy[0] ==
			       sizeof ((struct ring_daemon *)0)->noisy_log /
				       sizeof ((struct ring_daemon *)0)->noisy_log[0],
		       "one log limit per noisy event");
	enum ring_log_event ev = a->u.log.event;
	size_t k = 0;
	while (k < sizeof noisy / sizeof noisy[0] && noisy[k] != ev)
		k++;
	char addr[80];
	bool with_addr = false;
	if (k < sizeof noisy / sizeof noisy[0]) {
		uint64_t skipped;
		if (!log_allowed(&d->noisy_log[k], now_us(d), &skipped))
			return;
		if (skipped) {
			struct ring_log_field f = RING_LF_N("count", skipped);
			ring_log_emit(d->log, unlogged[k], false, &f, 1);
		}
		if (d->rx_from) {
			ring_net_format(d->rx_from, addr, sizeof addr);
			with_addr = true;
		}
	}
	ring_log_core(d->log, a, with_addr ? addr : NULL);
}

static void carry_out(struct ring_daemon *d)
{
	bool dropped = false;
	for (size_t k = 0; k < d->up.n && !d->fatal; k++) {
		const struct ring_action *a = &d->up.action[k];
		switch (a->type) {
		case RING_ACTION_PERSIST:
			if (ring_epoch_store_save(&d->store, a->u.persist.epoch, d->fatal_msg,
						  sizeof d->fatal_msg) < 0) {
				/* Acting on an epoch we could not store could
				 * reuse it after a restart: stop instead. */
				set_fatal(d);
				return;
			}
			clock_reset(d); /* an fsync can take milliseconds */
			break;
		case RING_ACTION_SEND:
			do_send(d, a, &dropped);
			break;
		case RING_ACTION_GRANT:
			ring_ctl_server_grant(d->ctl, a->u.grant.client, a->u.grant.fence,
					      a->u.grant.epoch);
			break;
		case RING_ACTION_REVOKE:
			ring_ctl_server_revoke(d->ctl, a->u.revoke.client, a->u.revoke.fence);
			break;
		case RING_ACTION_DENY:
			ring_ctl_server_deny(d->ctl, a->u.deny.client, a->u.deny.reason);
			break;
		case RING_ACTION_RENEWED: {
			uint64_t now = now_us(d), end = a->u.renewed.deadline_us;
			ring_ctl_server_renewed(d->ctl, a->u.renewed.client, a->u.renewed.fence,
						end > now ? (end - now) / 1000 : 0);
			break;
		}
		case RING_ACTION_LOG:
			if (a->u.log.event == RING_LOG_PAUSE_DETECTED)
				ring_metrics_pause(&d->metrics, a->u.log.field[0]); /* for lease advice */
			log_core(d, a);
			break;
		case RING_ACTION_LEFT:
			d->stopping = true;
			event_base_loopexit(d->base, NULL);
			break;
		case RING_ACTION_FATAL:
			/* The core cannot go on without repeating an epoch or
			 * acting on one it did not store: a crash is safe. A
			 * FATAL stands alone in its update, so the core's own
			 * epoch_exhausted line went with the rest: say it here. */
			if (a->u.fatal.reason == -RING_EEXHAUSTED) {
				struct ring_status st;
				ring_node_status(d->node, now_us(d), &st);
				struct ring_log_field f = RING_LF_N("epoch", st.epoch);
				ring_log_emit(d->log, "epoch_exhausted", false, &f, 1);
			}
			snprintf(d->fatal_msg, sizeof d->fatal_msg, "protocol core stopped: %s%s",
				 ring_strerror(a->u.fatal.reason),
				 a->u.fatal.reason == -RING_EEXHAUSTED
					 ? " (see docs/operations.md, \"Epoch exhaustion\")"
					 : "");
			set_fatal(d);
			return;
		}
	}
	if (dropped && !d->fatal) {
		struct ring_event ev = {.type = RING_EVENT_DROP_TOKEN};
		step(d, &ev);
	}
}

static void arm_timer(struct ring_daemon *d, uint64_t now)
{
	uint64_t deadline = d->up.deadline_us;
	if (deadline == d->armed_us)
		return;
	d->armed_us = deadline;
	if (deadline == UINT64_MAX) {
		evtimer_del(d->timer);
		return;
	}
	uint64_t in = deadline > now ? deadline - now : 0;
	struct timeval tv = {.tv_sec = (time_t)(in / 1000000u), .tv_usec = (suseconds_t)(in % 1000000u)};
	evtimer_add(d->timer, &tv);
}

static void sd_update(struct ring_daemon *d);

static void step(struct ring_daemon *d, struct ring_event *ev)
{
	ev->now_us = now_us(d);
	ring_node_step(d->node, ev, &d->up);
	carry_out(d);
	if (!d->fatal)
		arm_timer(d, ev->now_us);
	if (d->sd.fd >= 0 && !d->fatal)
		sd_update(d);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_daemon *d = arg;
	clock_reset(d);
	d->armed_us = UINT64_MAX; /* it fired: nothing is armed any more */
	struct ring_event ev = {.type = RING_EVENT_TICK};
	step(d, &ev);
}

/* ---- UDP ---- */

static uint16_t member_at(struct ring_daemon *d, const struct ring_addr *from)
{
	size_t i = ring_net_index_of(d->peer, d->layout->n, from);
	return i < d->layout->n ? d->layout->members[i].id : 0;
}

/* Sends M, sealed when the ring has a key, to a ringctl at TO. */
static void answer(struct ring_daemon *d, const struct ring_msg *m, const struct ring_addr *to)
{
	uint8_t out[RING_WIRE_MAX + RING_AUTH_TRAILER];
	int n = ring_wire_encode(m, out, RING_WIRE_MAX);
	if (n > 0 && d->auth)
		n = ring_auth_seal(d->auth, out, (size_t)n, sizeof out, ring_wall_us());
	if (n > 0 && sendto(d->udp_fd, out, (size_t)n, MSG_DONTWAIT,
			    (const struct sockaddr *)&to->sa, to->len) >= 0)
		ring_metrics_count(d->metrics.tx, m->type);
}

/* A request of TYPE (STATUS_REQ, ADVICE_REQ, HOLD_REQ) that decodes and is of this
 * ring, into REQ; false for anything else. */
static bool request_ok(struct ring_daemon *d, const uint8_t *buf, size_t len,
		       enum ring_msg_type type, struct ring_msg *req)
{
	return ring_wire_decode(buf, len, req) == 0 && req->type == type &&
	       req->fingerprint == d->fingerprint;
}

/* At most this many refusals a second (below): enough for a few `ringctl
 * ring` at once, too few to make a member a reflector for spoofed
 * requests. */
#define REFUSE_PER_S 8

/* Answers the status request REQ that we will not answer (FLAG: it failed
 * authentication, or is of another file) with an empty STATUS_RESP
 * carrying only FLAG and our fingerprint, sealed with our key: ringctl
 * then says "auth fails" or "another file" instead of "down". It tells a
 * stranger nothing the wire does not (fingerprints travel in clear). */
static void refuse_status(struct ring_daemon *d, const struct ring_msg *req, uint8_t flag,
			  const struct ring_addr *from)
{
	uint64_t now = now_us(d);
	if (!d->refused.at || now - d->refused.at >= 1000000u) {
		d->refused.at = now;
		d->refused.n = 0;
	}
	if (d->refused.n++ >= REFUSE_PER_S)
		return;
	struct ring_msg m = {.type = RING_MSG_STATUS_RESP, .from = d->id, .to = 0,
			     .fingerprint = d->fingerprint};
	m.u.status_resp.nonce = req->u.status_req.nonce;
	m.u.status_resp.flags = flag;
	answer(d, &m, from);
}

/* A datagram of LEN bytes (with its trailer) that failed authentication:
 * refused, when it is a status request of this ring. */
static void refuse_unauthenticated(struct ring_daemon *d, const uint8_t *buf, size_t len,
				   const struct ring_addr *from)
{
	struct ring_msg req;
	if (len > RING_AUTH_TRAILER &&
	    request_ok(d, buf, len - RING_AUTH_TRAILER, RING_MSG_STATUS_REQ, &req))
		refuse_status(d, &req, RING_STATUS_UNAUTHENTICATED, from);
}

/* Returns false for a request that does not decode or is of another ring
 * (the core counts it); the latter is refused (refuse_status). */
static bool answer_status(struct ring_daemon *d, const uint8_t *buf, size_t len,
			  const struct ring_addr *from)
{
	struct ring_msg req;
	if (!request_ok(d, buf, len, RING_MSG_STATUS_REQ, &req)) {
		if (ring_wire_decode(buf, len, &req) == 0 && req.type == RING_MSG_STATUS_REQ)
			refuse_status(d, &req, RING_STATUS_OTHER_CONFIG, from);
		return false;
	}
	struct ring_status st;
	ring_node_status(d->node, now_us(d), &st);
	struct ring_msg m = {.type = RING_MSG_STATUS_RESP, .from = d->id, .to = 0,
			     .fingerprint = d->fingerprint};
	struct ring_msg_status_resp *r = &m.u.status_resp;
	r->nonce = req.u.status_req.nonce;
	r->state = (uint8_t)st.state;
	r->flags = (st.has_token ? RING_STATUS_HAS_TOKEN : 0) | (st.parked ? RING_STATUS_PARKED : 0);
	r->successor = st.successor;
	r->epoch = st.epoch;
	r->fence = st.fence;
	r->seen_ms = st.token_seen_ms_ago > UINT32_MAX - 1 ? UINT32_MAX
							  : (uint32_t)st.token_seen_ms_ago;
	r->queued = (uint32_t)st.queued;
	r->alive = st.alive;
	r->counters = st.counters;
	r->counters.auth_failures = d->auth_failures;
	answer(d, &m, from);
	return true;
}

/* Lease advice (ringctl lease-advice, watch): this member's hold times and
 * pauses as the metrics keep them. False as for answer_status. */
static bool answer_advice(struct ring_daemon *d, const uint8_t *buf, size_t len,
			  const struct ring_addr *from)
{
	struct ring_msg req;
	if (!request_ok(d, buf, len, RING_MSG_ADVICE_REQ, &req))
		return false;
	struct ring_advice_figures f;
	ring_metrics_figures(&d->metrics, &f);
	struct ring_msg m = {.type = RING_MSG_ADVICE_RESP, .from = d->id, .to = 0,
			     .fingerprint = d->fingerprint};
	m.u.advice_resp = (struct ring_msg_advice_resp){
		.nonce = req.u.advice_req.nonce, .holds = f.holds, .p50_us = f.p50_us,
		.p99_us = f.p99_us, .p999_us = f.p999_us, .max_us = f.max_us,
		.pause_max_us = f.pause_max_us, .pauses = f.pauses};
	answer(d, &m, from);
	return true;
}

/* Who holds the lock here (watch, ring): the grant of a local client in
 * the region, its fence and how long it has lasted. False as for
 * answer_status. */
static bool answer_hold(struct ring_daemon *d, const uint8_t *buf, size_t len,
			const struct ring_addr *from)
{
	struct ring_msg req;
	if (!request_ok(d, buf, len, RING_MSG_HOLD_REQ, &req))
		return false;
	struct ring_status st;
	ring_node_status(d->node, now_us(d), &st);
	struct ring_msg m = {.type = RING_MSG_HOLD_RESP, .from = d->id, .to = 0,
			     .fingerprint = d->fingerprint};
	m.u.hold_resp.nonce = req.u.hold_req.nonce;
	if (st.granted) {
		/* A grant's fence is the last one granted here (check_self). */
		m.u.hold_resp.fence = st.fence;
		m.u.hold_resp.held_ms = st.grant_held_ms > UINT32_MAX ? UINT32_MAX
								      : (uint32_t)st.grant_held_ms;
	}
	answer(d, &m, from);
	return true;
}

static void auth_failed(struct ring_daemon *d, const struct ring_addr *from, uint16_t id, int why)
{
	d->auth_failures++;
	uint64_t skipped;
	if (!log_allowed(&d->auth_log, now_us(d), &skipped))
		return;
	char addr[80];
	ring_net_format(from, addr, sizeof addr);
	struct ring_log_field f[] = {
		RING_LF_N("from", id), RING_LF_S("addr", addr),
		RING_LF_S("reason", ring_strerror(why)), RING_LF_N("unlogged", skipped),
	};
	ring_log_emit(d->log, "auth_fail", false, f, sizeof f / sizeof f[0]);
}

static void receive(struct ring_daemon *d, struct rx *r);

/* Reads what the socket holds, then hands it to the core in the order the
 * core asks for (ring_node_rx_rank: tokens last, so that a stalled member
 * learns a newer epoch before it could grant under an old token). */
static void udp_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct ring_daemon *d = arg;
	struct rx *batch = d->rx.rx;
	struct mmsghdr *msg = d->rx.msg;
	clock_reset(d);
	/* One system call for the whole batch. Fewer than asked means the
	 * socket was drained: no second call only to hear EAGAIN. */
	int got = recvmmsg(fd, msg, RECV_BATCH, MSG_DONTWAIT, NULL);
	size_t n = got > 0 ? (size_t)got : 0;
	for (size_t k = 0; k < n; k++) {
		batch[k].n = (ssize_t)msg[k].msg_len;
		batch[k].from.len = msg[k].msg_hdr.msg_namelen;
		msg[k].msg_hdr.msg_namelen = sizeof batch[k].from.sa; /* for the next call */
	}
	for (int rank = 0; rank < 2; rank++)
		for (size_t k = 0; k < n && !d->fatal && !d->stopping; k++)
			if (ring_node_rx_rank(batch[k].buf, batch[k].n > 0 ? (size_t)batch[k].n : 0) ==
			    rank)
				receive(d, &batch[k]);
}

static void receive(struct ring_daemon *d, struct rx *r)
{
	uint8_t *buf = r->buf;
	ssize_t n = r->n;
	uint16_t id = member_at(d, &r->from);
	if (d->auth) {
		int idx = id ? ring_layout_index(d->layout, id) : -1;
		/* Strangers (ringctl) share the last replay window. */
		size_t slot = idx >= 0 ? (size_t)idx : d->layout->n;
		int body = ring_auth_open(d->auth, buf, (size_t)n, slot, ring_wall_us());
		if (body < 0) {
			auth_failed(d, &r->from, id, body);
			refuse_unauthenticated(d, buf, (size_t)n, &r->from);
			return;
		}
		n = body;
	}
	unsigned type = n > 0 ? ring_wire_peek_type(buf, (size_t)n) : 0;
	ring_metrics_count(d->metrics.rx, type);
	if ((type == RING_MSG_STATUS_REQ && answer_status(d, buf, (size_t)n, &r->from)) ||
	    (type == RING_MSG_ADVICE_REQ && answer_advice(d, buf, (size_t)n, &r->from)) ||
	    (type == RING_MSG_HOLD_REQ && answer_hold(d, buf, (size_t)n, &r->from)))
		return; /* answered; a broken one goes to the core to be counted */
	if (id != 0) {
		int idx = ring_layout_index(d->layout, id);
		if (idx >= 0 && ring_faults_blocked(&d->faults, (size_t)idx))
			return; /* inject block: as if the link were cut */
	}
	struct ring_event ev = {.type = RING_EVENT_DATAGRAM};
	ev.u.datagram.buf = buf;
	ev.u.datagram.len = (size_t)n;
	ev.u.datagram.from_id = id;
	d->rx_from = &r->from;
	step(d, &ev);
	d->rx_from = NULL;
}

/* ---- the control socket's requests ---- */

static void ctl_client(void *arg, enum ring_event_type type, uint64_t handle)
{
	struct ring_event ev = {.type = type};
	ev.u.client.client = handle;
	clock_reset(arg);
	step(arg, &ev);
}

/* The core's status plus what only the shell counts (datagrams that failed
 * authentication never reach the core), as the control socket and the
 * metrics both report it. */
static void local_status(struct ring_daemon *d, struct ring_status *st)
{
	clock_reset(d);
	ring_node_status(d->node, now_us(d), st);
	st->counters.auth_failures = d->auth_failures;
}

static int ctl_status(void *arg, char *buf, size_t len)
{
	struct ring_daemon *d = arg;
	struct ring_status st;
	local_status(d, &st);
	return ring_ctl_status_json(buf, len, d->layout, &st, d->auth != NULL);
}

static int ctl_metrics(void *arg, char *buf, size_t len)
{
	struct ring_daemon *d = arg;
	struct ring_status st;
	local_status(d, &st);
	return ring_metrics_format(buf, len, d->layout, &st, &d->metrics);
}

static uint64_t ctl_now(void *arg)
{
	return now_us(arg);
}

static int ctl_inject(void *arg, const struct ring_ctl_request *r, char *why, size_t whylen)
{
	struct ring_daemon *d = arg;
	return ring_faults_apply(&d->faults, d->conf, d->me, r, d->log, why, whylen);
}

static bool ctl_stopped(void *arg)
{
	struct ring_daemon *d = arg;
	return d->fatal || d->stopping;
}

/* ---- the log ---- */

/* A line was logged: write the iteration's lines with one write(2) once
 * every callback of this loop iteration has run. An event activated now
 * queues behind the callbacks already active; activating it again while
 * it waits does nothing. */
static void log_pending(void *arg)
{
	struct ring_daemon *d = arg;
	event_active(d->log_flush, EV_TIMEOUT, 0);
}

static void log_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_daemon *d = arg;
	ring_log_flush(d->log);
}

/* ---- systemd (sd_notify.c speaks the protocol) ---- */

/* Sends STATUS= when the member's standing changed, at most once per
 * SD_STATUS_GAP_US: a change sooner is sent by sd_status_ev when the gap
 * is over (the newest text then, not every one in between). */
static void sd_status(struct ring_daemon *d, const struct ring_status *st)
{
	char text[sizeof d->sd_status], msg[sizeof text + 16];
	if (ring_sd_status_text(text, sizeof text, st, d->me, d->layout->n, d->leaving) < 0 ||
	    strcmp(text, d->sd_status) == 0)
		return;
	uint64_t now = now_us(d);
	if (d->sd_status_at && now - d->sd_status_at < SD_STATUS_GAP_US) {
		if (!evtimer_pending(d->sd_status_ev, NULL)) {
			uint64_t in = SD_STATUS_GAP_US - (now - d->sd_status_at);
			struct timeval tv = {.tv_sec = 0, .tv_usec = (suseconds_t)in};
			evtimer_add(d->sd_status_ev, &tv);
		}
		return;
	}
	snprintf(msg, sizeof msg, "STATUS=%s", text);
	if (ring_sd_notify_send(&d->sd, msg) == 0) {
		memcpy(d->sd_status, text, sizeof text);
		d->sd_status_at = now;
	}
}

/* After every step: READY=1 the first time the member has joined the ring
 * (sent again at the next step if it could not go), then STATUS=. */
static void sd_update(struct ring_daemon *d)
{
	struct ring_status st;
	ring_node_status(d->node, now_us(d), &st);
	if (!d->sd_ready && !d->leaving && ring_sd_joined(&st, d->me)) {
		char text[sizeof d->sd_status], msg[sizeof text + 32];
		if (ring_sd_status_text(text, sizeof text, &st, d->me, d->layout->n, false) < 0)
			text[0] = '\0';
		snprintf(msg, sizeof msg, "READY=1\nSTATUS=%s", text);
		if (ring_sd_notify_send(&d->sd, msg) == 0) {
			d->sd_ready = true;
			memcpy(d->sd_status, text, sizeof text);
			d->sd_status_at = now_us(d);
			struct ring_log_field f = RING_LF_N("epoch", st.epoch);
			ring_log_emit(d->log, "systemd_ready", false, &f, 1);
		}
		return;
	}
	sd_status(d, &st);
}

static void sd_status_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_daemon *d = arg;
	clock_reset(d);
	sd_update(d);
}

/* The watchdog's ping comes from a timer of the loop, so that a loop that
 * is wedged (stuck in a callback, or `ringctl inject pause`) stops pinging
 * and systemd restarts the member. It also refreshes STATUS=, which may
 * change with time alone. */
static void sd_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_daemon *d = arg;
	clock_reset(d);
	ring_sd_notify_send(&d->sd, "WATCHDOG=1"); /* a lost one: the next comes in half the time */
	if (!d->fatal)
		sd_update(d);
}

/* ---- signals ---- */

static void hup_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	struct ring_daemon *d = arg;
	char err[512];
	if (!d->auth)
		return;
	/* systemctl reload waits for READY=1 after RELOADING=1; a member not
	 * yet ready says neither, or the reload would make it look ready. */
	bool tell = d->sd.fd >= 0 && d->sd_ready;
	if (tell) {
		char msg[64];
		snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu",
			 (unsigned long long)ring_mono_us());
		ring_sd_notify_send(&d->sd, msg);
	}
	int rc = d->conf->auto_key
			 ? ring_auth_reload_at(d->auth, d->state.fd, RING_AUTO_KEY, d->conf->secret_file,
					       err, sizeof err)
			 : ring_auth_reload(d->auth, d->conf->secret_file, err, sizeof err);
	struct ring_log_field f = rc == 0 ? RING_LF_S("secret_file", d->conf->secret_file)
					  : RING_LF_S("error", err);
	ring_log_emit(d->log, rc == 0 ? "keys_reloaded" : "keys_reload_failed", false, &f, 1);
	if (tell) {
		/* A failed reload keeps the old keys and serves on: ready, and
		 * the status says why until the standing changes. */
		char msg[sizeof d->sd_status + 32];
		snprintf(d->sd_status, sizeof d->sd_status, "%s%.100s", rc == 0 ? "" : "key reload failed: ",
			 rc == 0 ? "" : err);
		snprintf(msg, sizeof msg, "READY=1%s%s", rc == 0 ? "" : "\nSTATUS=", d->sd_status);
		ring_sd_notify_send(&d->sd, msg);
	}
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct ring_daemon *d = arg;
	clock_reset(d);
	if (d->leaving) {
		event_base_loopexit(d->base, NULL); /* a second signal: go now */
		return;
	}
	d->leaving = true;
	struct ring_log_field f = RING_LF_S("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	ring_log_emit(d->log, "leave_start", false, &f, 1);
	/* Before the leave: systemd knows the stop is ours, not a crash. */
	ring_sd_notify_send(&d->sd, "STOPPING=1\nSTATUS=leaving the ring");
	snprintf(d->sd_status, sizeof d->sd_status, "leaving the ring");
	/* The core hands the token on, tells the others, and gives up after
	 * its own deadline (leave_timeout, PROTOCOL.md §5.4). */
	struct ring_event ev = {.type = RING_EVENT_LEAVE};
	step(d, &ev);
}

/* ---- life cycle ---- */

static void rx_init(struct rx_batch *b)
{
	for (size_t k = 0; k < RECV_BATCH; k++) {
		b->iov[k] = (struct iovec){.iov_base = b->rx[k].buf, .iov_len = sizeof b->rx[k].buf};
		b->msg[k].msg_hdr = (struct msghdr){
			.msg_name = &b->rx[k].from.sa, .msg_namelen = sizeof b->rx[k].from.sa,
			.msg_iov = &b->iov[k], .msg_iovlen = 1,
		};
	}
}

/* Fills what needs no system call. */
static int daemon_alloc(struct ring_daemon **out, const struct ring_conf *conf, uint16_t id,
			struct ring_log *log, char *err, size_t errlen)
{
	int idx = ring_layout_index(&conf->layout, id);
	if (idx < 0) {
		snprintf(err, errlen, "%s: no member %u in ring \"%s\"", conf->path, id,
			 conf->layout.name);
		return -RING_ENOTMEMBER;
	}
	struct ring_daemon *d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	d->conf = conf;
	d->layout = &conf->layout;
	d->id = id;
	d->me = (size_t)idx;
	d->log = log;
	d->udp_fd = -1;
	d->sd.fd = -1;
	d->store.dir.fd = d->store.spare_fd = -1;
	d->state.fd = d->sock_dir.fd = -1;
	d->armed_us = UINT64_MAX;
	rx_init(&d->rx);
	d->fingerprint = ring_layout_fingerprint(d->layout);
	ring_faults_init(&d->faults, d->fingerprint ^ (uint64_t)getpid() ^ read_clock());
	*out = d;
	return 0;
}

/* The loop's own events: the socket, the core's timer, the signals, the
 * log's flush. */
static int add_events(struct ring_daemon *d, char *err, size_t errlen)
{
	d->udp_ev = event_new(d->base, d->udp_fd, EV_READ | EV_PERSIST, udp_cb, d);
	d->timer = evtimer_new(d->base, timer_cb, d);
	d->sig_term = evsignal_new(d->base, SIGTERM, signal_cb, d);
	d->sig_int = evsignal_new(d->base, SIGINT, signal_cb, d);
	d->sig_hup = evsignal_new(d->base, SIGHUP, hup_cb, d);
	d->log_flush = event_new(d->base, -1, 0, log_flush_cb, d);
	if (!d->udp_ev || !d->timer || !d->sig_term || !d->sig_int || !d->sig_hup ||
	    !d->log_flush) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	ring_log_on_pending(d->log, log_pending, d);
	event_add(d->udp_ev, NULL);
	evsignal_add(d->sig_term, NULL);
	evsignal_add(d->sig_int, NULL);
	evsignal_add(d->sig_hup, NULL);
	signal(SIGPIPE, SIG_IGN); /* a client gone mid-reply is handled by its event */
	return 0;
}

/* The ring's key: secret_file as named, or the ring's own key in
 * state_dir, made when missing (several members may start at once: one
 * key wins, docs/security.md). */
static int load_key(struct ring_daemon *d, char *err, size_t errlen)
{
	const struct ring_conf *conf = d->conf;
	size_t slots = d->layout->n + 1;
	if (!conf->secret_file[0])
		return 0;
	d->key_source = "secret_file";
	if (!conf->auto_key)
		return ring_auth_load(&d->auth, conf->secret_file, slots, err, errlen) < 0
			       ? -RING_ECONFIG /* the file is part of the configuration */
			       : 0;
	bool made;
	int rc = ring_auth_keygen_at(d->state.fd, RING_AUTO_KEY, conf->secret_file, &made, err,
				     errlen);
	if (rc < 0)
		return rc;
	d->key_source = made ? "auto-made" : "auto";
	return ring_auth_load_at(&d->auth, d->state.fd, RING_AUTO_KEY, conf->secret_file, slots,
				 err, errlen) < 0
		       ? -RING_ECONFIG
		       : 0;
}

/* The folder of our control socket, checked: state_dir itself, or the
 * one `control` names (ours or root's, writable by nobody else); with
 * control_group, opened to that group for searching. */
static int control_folder(struct ring_daemon *d, const struct ring_state_dir **out, char *err,
			  size_t errlen)
{
	char folder[RING_SOCK_MAX], name[RING_SOCK_MAX];
	const char *path = d->conf->control[d->me];
	*out = &d->state;
	if (ring_path_split(path, folder, sizeof folder, name, sizeof name) != 0) {
		snprintf(err, errlen, "control socket %s: not a usable path", path);
		return -RING_ECONFIG;
	}
	int rc = 0;
	if (strcmp(folder, d->conf->state_dir) != 0) {
		*out = &d->sock_dir;
		rc = ring_state_dir_open(&d->sock_dir, folder, RING_DIR_SOCKET, false, err, errlen);
	}
	const struct ring_conf_group *g = &d->conf->control_group;
	return rc == 0 && g->name[0] ? ring_state_dir_share(*out, g->gid, g->name, err, errlen) : rc;
}

const char *ring_daemon_key_source(const struct ring_daemon *d)
{
	return d->key_source;
}

int ring_daemon_new(struct ring_daemon **out, const struct ring_conf *conf, uint16_t id,
		    struct ring_log *log, char *err, size_t errlen)
{
	*out = NULL;
	int rc = daemon_alloc(out, conf, id, log, err, errlen);
	if (rc < 0)
		return rc;
	struct ring_daemon *d = *out;
	uint32_t epoch;
	rc = ring_state_dir_open(&d->state, conf->state_dir, RING_DIR_STATE, true, err, errlen);
	if (rc < 0 || (rc = ring_epoch_store_open(&d->store, &d->state, id, err, errlen)) < 0 ||
	    (rc = ring_epoch_store_load(&d->store, &epoch, err, errlen)) < 0 ||
	    (rc = load_key(d, err, errlen)) < 0)
		return rc;
	d->base = event_base_new();
	if (!d->base) {
		snprintf(err, errlen, "event_base_new failed");
		return -RING_ENOMEM;
	}
	/* The control socket first: a second ringd with our id is told so,
	 * rather than that the port is taken. */
	const struct ring_ctl_handler h = {
		.arg = d, .client = ctl_client, .status = ctl_status,
		.inject = ctl_inject, .stopped = ctl_stopped,
		.metrics = ctl_metrics, .now = ctl_now, .samples = &d->metrics,
	};
	const struct ring_state_dir *sock_dir;
	rc = control_folder(d, &sock_dir, err, errlen);
	if (rc == 0)
		rc = ring_ctl_server_new(&d->ctl, d->base, sock_dir, conf->control[d->me], id,
					 &conf->control_group, &h, log, err, errlen);
	if (rc == 0 && conf->metrics[d->me].port)
		rc = ring_metrics_http_new(&d->http, d->base, conf->metrics[d->me].host,
					   conf->metrics[d->me].port, ctl_metrics, d, log, err,
					   errlen);
	if (rc < 0 ||
	    (rc = ring_net_open_ring(d->layout, d->me, d->peer, &d->udp_fd, err, errlen)) < 0)
		return rc;
	struct ring_layout layout = *d->layout;
	layout.keyed = d->auth != NULL;
	layout.fingerprint = d->fingerprint;
	d->node = ring_node_new(&layout, id, epoch, &rc);
	if (!d->node) {
		snprintf(err, errlen, "%s", ring_strerror(rc));
		return rc;
	}
	return add_events(d, err, errlen);
}

int ring_daemon_notify(struct ring_daemon *d, const char *notify_socket, uint64_t watchdog_usec,
		       char *err, size_t errlen)
{
	int rc = ring_sd_notify_open(&d->sd, notify_socket, err, errlen);
	if (rc < 0 || d->sd.fd < 0)
		return rc; /* not under systemd: no timer, nothing costs anything */
	d->sd_status_ev = evtimer_new(d->base, sd_status_cb, d);
	if (!d->sd_status_ev) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	if (watchdog_usec == 0)
		return 0;
	/* Half the interval, as sd_watchdog_enabled(3) advises: one late
	 * ping is not yet a missed one. */
	uint64_t half = watchdog_usec / 2;
	struct timeval tv = {.tv_sec = (time_t)(half / 1000000u),
			     .tv_usec = (suseconds_t)(half % 1000000u)};
	d->sd_watchdog = event_new(d->base, -1, EV_PERSIST, sd_watchdog_cb, d);
	if (!d->sd_watchdog) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	event_add(d->sd_watchdog, &tv);
	return 0;
}

int ring_daemon_run(struct ring_daemon *d, char *err, size_t errlen)
{
	const struct ring_member *me = &d->layout->members[d->me];
	struct ring_status st;
	ring_node_status(d->node, 0, &st);
	struct ring_log_field f[] = {
		RING_LF_S("ring", d->layout->name), RING_LF_S("host", me->host),
		RING_LF_N("port", me->port),        RING_LF_N("epoch", st.epoch),
		RING_LF_N("members", d->layout->n), RING_LF_S("control", d->conf->control[d->me]),
		/* which wire this binary speaks: what an upgrade must check */
		RING_LF_N("wire", RING_WIRE_VERSION),
		/* what ringctl trace dates a crash by: a holder is heard every
		 * heartbeat_ms, missed after loss_timeout_ms */
		RING_LF_N("heartbeat_ms", d->layout->heartbeat_ms),
		RING_LF_N("loss_timeout_ms", d->layout->loss_timeout_ms),
	};
	ring_log_emit(d->log, "node_start", false, f, sizeof f / sizeof f[0]);
	struct ring_event ev = {.type = RING_EVENT_START};
	step(d, &ev);
	if (!d->fatal)
		event_base_dispatch(d->base);
	clock_reset(d);
	ring_node_status(d->node, now_us(d), &st);
	struct ring_log_field g[] = {
		RING_LF_S("reason", d->fatal ? "error" : "leave"),
		RING_LF_N("epoch", st.epoch),
		RING_LF_N("cs_entries", st.counters.cs_entries),
		RING_LF_N("tokens_passed", st.counters.tokens_passed),
	};
	ring_log_emit(d->log, "node_stop", false, g, sizeof g / sizeof g[0]);
	/* The loop has stopped: its flush event will not run again, and
	 * main may print the reason on the same stderr next. */
	ring_log_flush(d->log);
	if (d->fatal) {
		snprintf(err, errlen, "%s", d->fatal_msg);
		return 1;
	}
	return 0;
}

/* In the reverse order of ring_daemon_new. */
void ring_daemon_free(struct ring_daemon *d)
{
	if (!d)
		return;
	if (d->log_flush) {
		ring_log_on_pending(d->log, NULL, NULL);
		ring_log_flush(d->log);
	}
	struct event *events[] = {d->sd_watchdog, d->sd_status_ev, d->log_flush, d->sig_hup,
				  d->sig_int, d->sig_term, d->timer, d->udp_ev};
	for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
		if (events[i])
			event_free(events[i]);
	ring_sd_notify_close(&d->sd);
	ring_node_free(d->node);
	if (d->udp_fd >= 0)
		close(d->udp_fd);
	ring_metrics_http_free(d->http);
	ring_ctl_server_free(d->ctl);
	if (d->base)
		event_base_free(d->base);
	ring_auth_free(d->auth);
	ring_epoch_store_close(&d->store);
	ring_state_dir_close(&d->sock_dir);
	ring_state_dir_close(&d->state);
	free(d);
}
