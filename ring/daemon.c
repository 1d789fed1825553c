/* The daemon: one libevent loop that reads the clock, steps the protocol
 * core and carries out each action of the update in order (persist before
 * anything that depends on it). Everything else here is plumbing. */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "auth.h"
#include "control.h"
#include "epoch_store.h"
#include "err.h"
#include "net.h"
#include "node.h"
#include "wire.h"

#define RECV_BATCH 64   /* datagrams read per wake-up before yielding */
#define RECV_BUF 2048   /* anything longer than RING_WIRE_MAX is refused anyway */
#define REPLY_MAX 1024  /* control replies written at once; longer ones (a big STATUS) are queued */

enum client_state { CLIENT_IDLE, CLIENT_WAITING, CLIENT_GRANTED };

struct client {
	struct ring_daemon *d;
	uint64_t handle;
	struct bufferevent *bev;
	enum client_state state;
	uint64_t fence;
	struct event *timeout;
	struct client *next;
};

/* Events strangers can cause are counted always but logged at most once a
 * second each, with how many went unlogged: a flood must not become a
 * flood of log lines. */
struct log_limit {
	uint64_t at;       /* when last logged */
	uint64_t unlogged; /* since then */
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
	struct event *sig_term, *sig_int;

	struct evconnlistener *listener;
	char ctl_path[RING_SOCK_MAX];
	bool ctl_bound;
	struct client *clients;
	size_t nclients, max_clients;
	struct event *relisten;
	uint64_t accept_err_logged_us;
	uint64_t next_handle;

	struct ring_epoch_store store;

	/* Fault injection (allow_inject): only ever drops or delays. */
	bool drop_token;
	uint32_t loss_pct;
	struct ring_set blocked;
	uint64_t rng;

	struct ring_auth *auth; /* NULL when secret_file is unset */
	uint64_t auth_failures;
	struct log_limit auth_log;
	struct log_limit noisy_log[2]; /* bad_packet, config_mismatch */
	struct event *sig_hup;
	bool leaving;
	bool stopping;
	int fatal;
	char fatal_msg[RING_PATH_MAX + 256];
	struct ring_update up; /* reused: large, and one step runs at a time */
};

/* The core's clock (PROTOCOL.md §5.5). CLOCK_BOOTTIME, not MONOTONIC: a
 * suspended host must wake up as a paused member, with its lease and its
 * silence measured across the suspend, not as one that lost no time. */
static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Stops the loop; the reason is already in d->fatal_msg. */
static void set_fatal(struct ring_daemon *d)
{
	d->fatal = 1;
	event_base_loopbreak(d->base);
}

/* ---- clients ---- */

static struct client *client_by_handle(struct ring_daemon *d, uint64_t handle)
{
	for (struct client *c = d->clients; c; c = c->next)
		if (c->handle == handle)
			return c;
	return NULL;
}

static void reply(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(struct client *c, const char *fmt, ...)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	char line[REPLY_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof line) {
		va_start(ap, fmt);
		evbuffer_add_vprintf(out, fmt, ap);
		va_end(ap);
		return;
	}
	/* Nothing queued: write it now rather than a loop round later
	 * (epoll_ctl, epoll_wait, writev), so that a GRANTED reaches its
	 * client at once; a third fewer system calls per critical-region
	 * entry (docs/benchmarks.md). What the socket does not take, and any
	 * error, goes through the buffer as before, in order. */
	size_t off = 0;
	if (evbuffer_get_length(out) == 0) {
		ssize_t w = send(bufferevent_getfd(c->bev), line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0)
			off = (size_t)w;
	}
	if (off < (size_t)n)
		evbuffer_add(out, line + off, (size_t)n - off);
}

/* Writes what is queued for C now: before a stall or a close, the event
 * loop will not get the chance. A socket bufferevent keeps the front of its
 * output frozen so that only it drains it, and its flush does not write;
 * thaw it for this one write. */
static void flush_now(struct client *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	evbuffer_unfreeze(out, 1);
	for (int k = 0; k < 8 && evbuffer_get_length(out) > 0; k++)
		if (evbuffer_write(out, fd) <= 0)
			break;
	evbuffer_freeze(out, 1);
}

/* ---- carrying out an update ---- */

static void step(struct ring_daemon *d, struct ring_event *ev);

static bool chance(struct ring_daemon *d, uint32_t pct)
{
	/* xorshift64: injected loss needs no quality, only no syscall. */
	d->rng ^= d->rng << 13;
	d->rng ^= d->rng >> 7;
	d->rng ^= d->rng << 17;
	return d->rng % 100 < pct;
}

/* Returns true when the datagram was a token swallowed by drop-token. */
static bool send_to(struct ring_daemon *d, size_t idx, const uint8_t *buf, size_t len)
{
	if (ring_set_has(&d->blocked, idx) || (d->loss_pct && chance(d, d->loss_pct)))
		return false;
	if (d->drop_token && ring_wire_peek_type(buf, len) == RING_MSG_TOKEN) {
		d->drop_token = false;
		return true;
	}
	/* EAGAIN or ENOBUFS is a lost datagram; the protocol retransmits. */
	(void)sendto(d->udp_fd, buf, len, MSG_DONTWAIT, (const struct sockaddr *)&d->peer[idx].sa,
		     d->peer[idx].len);
	return false;
}

static void do_send(struct ring_daemon *d, const struct ring_action *a, bool *dropped)
{
	uint8_t sealed[RING_WIRE_MAX + RING_AUTH_TRAILER];
	const uint8_t *buf = a->u.send.buf;
	size_t len = a->u.send.len;
	if (d->auth) {
		/* Sealed once: every receiver keeps its own replay window. */
		memcpy(sealed, buf, len);
		int n = ring_auth_seal(d->auth, sealed, len, sizeof sealed, wall_us());
		if (n < 0)
			return;
		buf = sealed;
		len = (size_t)n;
	}
	if (a->u.send.to == 0) {
		for (size_t i = 0; i < d->layout->n; i++)
			if (i != d->me)
				send_to(d, i, buf, len);
		return;
	}
	int idx = ring_layout_index(d->layout, a->u.send.to);
	if (idx >= 0 && send_to(d, (size_t)idx, buf, len))
		*dropped = true;
}

/* Whether an event limited by L may be logged now; if so, *SKIPPED is how
 * many were not since the last one. */
static bool log_allowed(struct log_limit *l, uint64_t *skipped)
{
	uint64_t now = now_us();
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
	enum ring_log_event ev = a->u.log.event;
	size_t k = ev == RING_LOG_BAD_PACKET ? 0 : ev == RING_LOG_CONFIG_MISMATCH ? 1 : 2;
	if (k < 2) {
		uint64_t skipped;
		if (!log_allowed(&d->noisy_log[k], &skipped))
			return;
		if (skipped) {
			struct ring_log_field f = RING_LF_N("count", skipped);
			ring_log_emit(d->log, k == 0 ? "bad_packet_unlogged" : "config_mismatch_unlogged",
				      false, &f, 1);
		}
	}
	ring_log_core(d->log, a);
}

static void carry_out(struct ring_daemon *d)
{
	bool dropped = false;
	for (size_t k = 0; k < d->up.n && !d->fatal; k++) {
		const struct ring_action *a = &d->up.action[k];
		struct client *c;
		switch (a->type) {
		case RING_ACTION_PERSIST:
			if (ring_epoch_store_save(&d->store, a->u.persist.epoch, d->fatal_msg,
						  sizeof d->fatal_msg) < 0) {
				/* Acting on an epoch we could not store could
				 * reuse it after a restart: stop instead. */
				set_fatal(d);
				return;
			}
			break;
		case RING_ACTION_SEND:
			do_send(d, a, &dropped);
			break;
		case RING_ACTION_GRANT:
			if ((c = client_by_handle(d, a->u.grant.client))) {
				if (c->timeout)
					event_del(c->timeout);
				c->state = CLIENT_GRANTED;
				c->fence = a->u.grant.fence;
				reply(c, "GRANTED %llu %u\n", (unsigned long long)a->u.grant.fence,
				      a->u.grant.epoch);
			}
			break;
		case RING_ACTION_REVOKE:
			if ((c = client_by_handle(d, a->u.revoke.client))) {
				c->state = CLIENT_IDLE;
				reply(c, "REVOKED %llu\n", (unsigned long long)a->u.revoke.fence);
			}
			break;
		case RING_ACTION_DENY:
			if ((c = client_by_handle(d, a->u.deny.client))) {
				if (c->timeout)
					event_del(c->timeout);
				c->state = CLIENT_IDLE;
				reply(c, "ERR %s\n", ring_strerror(a->u.deny.reason));
			}
			break;
		case RING_ACTION_LOG:
			log_core(d, a);
			break;
		case RING_ACTION_LEFT:
			d->stopping = true;
			event_base_loopexit(d->base, NULL);
			break;
		case RING_ACTION_FATAL:
			/* The core cannot go on without repeating an epoch or
			 * acting on one it did not store: a crash is safe. */
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

static void step(struct ring_daemon *d, struct ring_event *ev)
{
	ev->now_us = now_us();
	ring_node_step(d->node, ev, &d->up);
	carry_out(d);
	if (!d->fatal)
		arm_timer(d, ev->now_us);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_daemon *d = arg;
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

/* Returns false, answering nothing, for a request that does not decode or
 * is of another ring. */
static bool answer_status(struct ring_daemon *d, const uint8_t *buf, size_t len,
			  const struct ring_addr *from)
{
	struct ring_msg req;
	if (ring_wire_decode(buf, len, &req) < 0 || req.fingerprint != d->fingerprint)
		return false;
	struct ring_status st;
	ring_node_status(d->node, now_us(), &st);
	struct ring_msg m = {.type = RING_MSG_STATUS_RESP, .from = d->id, .to = 0,
			     .fingerprint = d->fingerprint};
	struct ring_msg_status_resp *r = &m.u.status_resp;
	r->nonce = req.u.status_req.nonce;
	r->state = (uint8_t)st.state;
	r->flags = st.has_token ? RING_STATUS_HAS_TOKEN : 0;
	r->successor = st.successor;
	r->epoch = st.epoch;
	r->fence = st.fence;
	r->seen_ms = st.token_seen_ms_ago > UINT32_MAX - 1 ? UINT32_MAX
							  : (uint32_t)st.token_seen_ms_ago;
	r->queued = (uint32_t)st.queued;
	r->alive = st.alive;
	r->counters = st.counters;
	r->counters.auth_failures = d->auth_failures;
	uint8_t out[RING_WIRE_MAX + RING_AUTH_TRAILER];
	int n = ring_wire_encode(&m, out, RING_WIRE_MAX);
	if (n > 0 && d->auth)
		n = ring_auth_seal(d->auth, out, (size_t)n, sizeof out, wall_us());
	if (n > 0)
		(void)sendto(d->udp_fd, out, (size_t)n, MSG_DONTWAIT, (const struct sockaddr *)&from->sa,
			     from->len);
	return true;
}

static void auth_failed(struct ring_daemon *d, const struct ring_addr *from, uint16_t id, int why)
{
	d->auth_failures++;
	uint64_t skipped;
	if (!log_allowed(&d->auth_log, &skipped))
		return;
	char addr[80];
	ring_net_format(from, addr, sizeof addr);
	struct ring_log_field f[] = {
		RING_LF_N("from", id), RING_LF_S("addr", addr),
		RING_LF_S("reason", ring_strerror(why)), RING_LF_N("unlogged", skipped),
	};
	ring_log_emit(d->log, "auth_fail", false, f, sizeof f / sizeof f[0]);
}

/* One received datagram, waiting in a batch. */
struct rx {
	uint8_t buf[RECV_BUF];
	ssize_t n;
	struct ring_addr from;
};

static void receive(struct ring_daemon *d, struct rx *r);

/* Reads what the socket holds, then hands it to the core in the order the
 * core asks for (ring_node_rx_rank: tokens last, so that a stalled member
 * learns a newer epoch before it could grant under an old token). */
static void udp_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct ring_daemon *d = arg;
	static struct rx batch[RECV_BATCH];
	size_t n = 0;
	while (n < RECV_BATCH) {
		struct rx *r = &batch[n];
		r->from.len = sizeof r->from.sa;
		r->n = recvfrom(fd, r->buf, sizeof r->buf, MSG_DONTWAIT, (struct sockaddr *)&r->from.sa,
				&r->from.len);
		if (r->n < 0)
			break; /* EAGAIN: drained */
		n++;
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
		int body = ring_auth_open(d->auth, buf, (size_t)n, slot, wall_us());
		if (body < 0) {
			auth_failed(d, &r->from, id, body);
			return;
		}
		n = body;
	}
	if (n > 0 && ring_wire_peek_type(buf, (size_t)n) == RING_MSG_STATUS_REQ &&
	    answer_status(d, buf, (size_t)n, &r->from))
		return; /* answered; a broken one goes to the core to be counted */
	if (id != 0) {
		int idx = ring_layout_index(d->layout, id);
		if (idx >= 0 && ring_set_has(&d->blocked, (size_t)idx))
			return; /* inject block: as if the link were cut */
	}
	struct ring_event ev = {.type = RING_EVENT_DATAGRAM};
	ev.u.datagram.buf = buf;
	ev.u.datagram.len = (size_t)n;
	ev.u.datagram.from_id = id;
	step(d, &ev);
}

/* ---- the control socket ---- */

static void client_free(struct client *c)
{
	struct ring_daemon *d = c->d;
	for (struct client **p = &d->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->timeout)
		event_free(c->timeout);
	bufferevent_free(c->bev);
	free(c);
	d->nclients--;
}

/* A client that goes away releases what it held or waited for. */
static void client_gone(struct client *c)
{
	struct ring_daemon *d = c->d;
	if (c->state != CLIENT_IDLE) {
		c->state = CLIENT_IDLE;
		struct ring_event ev = {.type = RING_EVENT_RELEASE};
		ev.u.client.client = c->handle;
		step(d, &ev);
	}
	client_free(c);
}

static void acquire_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct client *c = arg;
	if (c->state != CLIENT_WAITING)
		return;
	c->state = CLIENT_IDLE;
	struct ring_event ev = {.type = RING_EVENT_RELEASE};
	ev.u.client.client = c->handle;
	step(c->d, &ev);
	reply(c, "TIMEOUT\n");
}

static void do_inject(struct ring_daemon *d, struct client *c, const struct ring_ctl_request *r)
{
	if (!d->conf->allow_inject) {
		reply(c, "ERR inject refused: allow_inject = false in %s\n", d->conf->path);
		return;
	}
	int idx = -1;
	if (r->inject == RING_INJECT_BLOCK || r->inject == RING_INJECT_UNBLOCK) {
		idx = ring_layout_index(d->layout, (uint16_t)r->arg);
		if (idx < 0 || (size_t)idx == d->me) {
			reply(c, "ERR %u is not another member\n", r->arg);
			return;
		}
	}
	char what[48];
	bool has_arg = r->inject == RING_INJECT_LOSS || r->inject == RING_INJECT_BLOCK ||
		       r->inject == RING_INJECT_UNBLOCK || r->inject == RING_INJECT_PAUSE;
	if (has_arg)
		snprintf(what, sizeof what, "%s %u", ring_inject_name(r->inject), r->arg);
	else
		snprintf(what, sizeof what, "%s", ring_inject_name(r->inject));
	struct ring_log_field f = RING_LF_S("what", what);
	ring_log_emit(d->log, "inject", false, &f, 1);
	switch (r->inject) {
	case RING_INJECT_DROP_TOKEN:
		d->drop_token = true;
		break;
	case RING_INJECT_LOSS:
		d->loss_pct = r->arg;
		break;
	case RING_INJECT_BLOCK:
		ring_set_add(&d->blocked, (size_t)idx);
		break;
	case RING_INJECT_UNBLOCK:
		ring_set_del(&d->blocked, (size_t)idx);
		break;
	case RING_INJECT_PAUSE: {
		/* Stall the whole loop, as SIGSTOP or a long GC would: timers
		 * fire late afterwards and the core notices (§5.5). */
		reply(c, "OK\n");
		flush_now(c);
		struct timespec ts = {.tv_sec = r->arg / 1000, .tv_nsec = (long)(r->arg % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		return;
	}
	case RING_INJECT_CLEAR:
		d->drop_token = false;
		d->loss_pct = 0;
		ring_set_clear(&d->blocked);
		break;
	}
	reply(c, "OK\n");
}

static void handle_line(struct client *c, const char *line)
{
	struct ring_daemon *d = c->d;
	struct ring_ctl_request r;
	char err[128];
	if (ring_ctl_parse(line, &r, err, sizeof err) < 0) {
		reply(c, "ERR %s\n", err);
		return;
	}
	switch (r.cmd) {
	case RING_CTL_ACQUIRE: {
		if (c->state != CLIENT_IDLE) {
			reply(c, "ERR busy: this connection already waits or holds\n");
			return;
		}
		c->state = CLIENT_WAITING;
		if (r.has_timeout) {
			if (!c->timeout)
				c->timeout = evtimer_new(d->base, acquire_timeout_cb, c);
			struct timeval tv = {.tv_sec = (time_t)(r.timeout_ms / 1000),
					     .tv_usec = (suseconds_t)(r.timeout_ms % 1000) * 1000};
			evtimer_add(c->timeout, &tv);
		}
		struct ring_event ev = {.type = RING_EVENT_ACQUIRE};
		ev.u.client.client = c->handle;
		step(d, &ev);
		return;
	}
	case RING_CTL_RELEASE: {
		if (c->state == CLIENT_IDLE) {
			reply(c, "ERR not holding\n");
			return;
		}
		if (c->timeout)
			event_del(c->timeout);
		c->state = CLIENT_IDLE;
		struct ring_event ev = {.type = RING_EVENT_RELEASE};
		ev.u.client.client = c->handle;
		step(d, &ev);
		reply(c, "OK\n");
		return;
	}
	case RING_CTL_STATUS: {
		struct ring_status st;
		char buf[4096];
		ring_node_status(d->node, now_us(), &st);
		st.counters.auth_failures = d->auth_failures;
		int n = ring_ctl_status_json(buf, sizeof buf, d->layout, &st);
		if (n > 0 && (size_t)n < sizeof buf)
			reply(c, "%s", buf);
		else
			reply(c, "ERR status too large\n");
		return;
	}
	case RING_CTL_INJECT:
		do_inject(d, c, &r);
		return;
	}
}

static void client_read_cb(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	/* Every whole line that arrived, however many were pipelined: each
	 * takes its bytes out, so this ends. */
	for (;;) {
		size_t len;
		char *line = evbuffer_readln(in, &len, EVBUFFER_EOL_CRLF);
		if (!line)
			break;
		if (len >= RING_CTL_LINE_MAX || strlen(line) != len)
			reply(c, "ERR line too long or not text\n");
		else
			handle_line(c, line);
		free(line);
		if (c->d->fatal || c->d->stopping)
			return;
	}
	if (evbuffer_get_length(in) >= RING_CTL_LINE_MAX) {
		/* No newline in sight: a broken or hostile client. */
		reply(c, "ERR line too long\n");
		flush_now(c);
		client_gone(c);
	}
}

static void client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		client_gone(arg);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
		      int salen, void *arg)
{
	(void)l;
	(void)sa;
	(void)salen;
	struct ring_daemon *d = arg;
	struct client *c = d->nclients < d->max_clients ? calloc(1, sizeof *c) : NULL;
	if (!c) {
		/* Past the cap, file descriptors stay free for what must not
		 * fail: persisting an epoch. */
		static const char busy[] = "ERR too many clients\n";
		(void)send(fd, busy, sizeof busy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		evutil_closesocket(fd);
		return;
	}
	c->d = d;
	c->handle = ++d->next_handle;
	c->bev = bufferevent_socket_new(d->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		free(c);
		evutil_closesocket(fd);
		return;
	}
	bufferevent_setcb(c->bev, client_read_cb, NULL, client_event_cb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	c->next = d->clients;
	d->clients = c;
	d->nclients++;
}

/* accept() failing with EMFILE or ENFILE would be retried at once, forever:
 * stop listening for a moment instead. */
static void relisten_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_daemon *d = arg;
	evconnlistener_enable(d->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct ring_daemon *d = arg;
	int e = EVUTIL_SOCKET_ERROR();
	evconnlistener_disable(l);
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
	evtimer_add(d->relisten, &tv);
	uint64_t now = now_us();
	if (now - d->accept_err_logged_us >= 1000000u) {
		struct ring_log_field f = RING_LF_S("error", evutil_socket_error_to_string(e));
		ring_log_emit(d->log, "control_accept_error", false, &f, 1);
		d->accept_err_logged_us = now;
	}
}

static int open_control(struct ring_daemon *d, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(d->ctl_path, sizeof d->ctl_path, "%s", d->conf->control[d->me]);
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", d->ctl_path);
	/* A socket file left by a crash is removed; one that answers belongs
	 * to a running member with our id, and two of those must not run. */
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (connect(probe, (struct sockaddr *)&sun, sizeof sun) == 0) {
			close(probe);
			snprintf(err, errlen, "member %u is already running (%s answers)", d->id,
				 d->ctl_path);
			return -RING_EBUSY;
		}
		close(probe);
	}
	unlink(d->ctl_path);
	mode_t old = umask(0177); /* created 0600: only its owner may drive the lock */
	d->listener = evconnlistener_new_bind(d->base, accept_cb, d,
					      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
					      (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	if (!d->listener) {
		snprintf(err, errlen, "cannot listen on %s: %s", d->ctl_path, strerror(errno));
		return -errno;
	}
	d->ctl_bound = true;
	chmod(d->ctl_path, 0600);
	evconnlistener_set_error_cb(d->listener, accept_error_cb);
	return 0;
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
	int rc = ring_auth_reload(d->auth, d->conf->secret_file, err, sizeof err);
	struct ring_log_field f = rc == 0 ? RING_LF_S("secret_file", d->conf->secret_file)
					  : RING_LF_S("error", err);
	ring_log_emit(d->log, rc == 0 ? "keys_reloaded" : "keys_reload_failed", false, &f, 1);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	struct ring_daemon *d = arg;
	if (d->leaving) {
		event_base_loopexit(d->base, NULL); /* a second signal: go now */
		return;
	}
	d->leaving = true;
	struct ring_log_field f = RING_LF_S("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	ring_log_emit(d->log, "leave_start", false, &f, 1);
	/* The core hands the token on, tells the others, and gives up after
	 * its own deadline (leave_timeout, PROTOCOL.md §5.4). */
	struct ring_event ev = {.type = RING_EVENT_LEAVE};
	step(d, &ev);
}

/* ---- life cycle ---- */

int ring_daemon_new(struct ring_daemon **out, const struct ring_conf *conf, uint16_t id,
		    struct ring_log *log, char *err, size_t errlen)
{
	*out = NULL;
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
	d->store.dir_fd = d->store.spare_fd = -1;
	d->armed_us = UINT64_MAX;
	struct rlimit rl;
	rlim_t nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
	d->max_clients = nofile > 96 ? (size_t)(nofile - 64) : 32;
	if (d->max_clients > 4096)
		d->max_clients = 4096;
	d->fingerprint = ring_layout_fingerprint(d->layout);
	d->rng = d->fingerprint ^ (uint64_t)getpid() ^ now_us();
	if (!d->rng)
		d->rng = 1;
	*out = d;

	uint32_t epoch;
	int rc = ring_epoch_store_open(&d->store, conf->state_dir, id, err, errlen);
	if (rc < 0 || (rc = ring_epoch_store_load(&d->store, &epoch, err, errlen)) < 0)
		return rc;

	if (conf->secret_file[0]) {
		rc = ring_auth_load(&d->auth, conf->secret_file, d->layout->n + 1, err, errlen);
		if (rc < 0)
			return -RING_ECONFIG; /* the file is part of the configuration */
	}

	d->base = event_base_new();
	if (!d->base) {
		snprintf(err, errlen, "event_base_new failed");
		return -RING_ENOMEM;
	}
	/* The control socket first: a second ringd with our id is told so,
	 * rather than that the port is taken. */
	if ((rc = open_control(d, err, errlen)) < 0 || (rc = ring_net_open_ring(d->layout, d->me, d->peer, &d->udp_fd, err, errlen)) < 0)
		return rc;
	d->node = ring_node_new(d->layout, id, epoch, &rc);
	if (!d->node) {
		snprintf(err, errlen, "%s", ring_strerror(rc));
		return rc;
	}
	d->udp_ev = event_new(d->base, d->udp_fd, EV_READ | EV_PERSIST, udp_cb, d);
	d->timer = evtimer_new(d->base, timer_cb, d);
	d->sig_term = evsignal_new(d->base, SIGTERM, signal_cb, d);
	d->sig_int = evsignal_new(d->base, SIGINT, signal_cb, d);
	d->sig_hup = evsignal_new(d->base, SIGHUP, hup_cb, d);
	d->relisten = evtimer_new(d->base, relisten_cb, d);
	if (!d->udp_ev || !d->timer || !d->sig_term || !d->sig_int ||
	    !d->sig_hup || !d->relisten) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	event_add(d->udp_ev, NULL);
	evsignal_add(d->sig_term, NULL);
	evsignal_add(d->sig_int, NULL);
	evsignal_add(d->sig_hup, NULL);
	signal(SIGPIPE, SIG_IGN); /* a client gone mid-reply is handled by its event */
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
		RING_LF_N("members", d->layout->n), RING_LF_S("control", d->ctl_path),
	};
	ring_log_emit(d->log, "node_start", false, f, sizeof f / sizeof f[0]);
	struct ring_event ev = {.type = RING_EVENT_START};
	step(d, &ev);
	if (!d->fatal)
		event_base_dispatch(d->base);
	ring_node_status(d->node, now_us(), &st);
	struct ring_log_field g[] = {
		RING_LF_S("reason", d->fatal ? "error" : "leave"),
		RING_LF_N("epoch", st.epoch),
		RING_LF_N("cs_entries", st.counters.cs_entries),
		RING_LF_N("tokens_passed", st.counters.tokens_passed),
	};
	ring_log_emit(d->log, "node_stop", false, g, sizeof g / sizeof g[0]);
	if (d->fatal) {
		snprintf(err, errlen, "%s", d->fatal_msg);
		return 1;
	}
	return 0;
}

void ring_daemon_free(struct ring_daemon *d)
{
	if (!d)
		return;
	while (d->clients)
		client_free(d->clients);
	if (d->listener)
		evconnlistener_free(d->listener);
	if (d->ctl_bound)
		unlink(d->ctl_path);
	if (d->sig_int)
		event_free(d->sig_int);
	if (d->sig_hup)
		event_free(d->sig_hup);
	if (d->relisten)
		event_free(d->relisten);
	ring_auth_free(d->auth);
	if (d->sig_term)
		event_free(d->sig_term);
	if (d->timer)
		event_free(d->timer);
	if (d->udp_ev)
		event_free(d->udp_ev);
	if (d->base)
		event_base_free(d->base);
	if (d->udp_fd >= 0)
		close(d->udp_fd);
	ring_epoch_store_close(&d->store);
	ring_node_free(d->node);
	free(d);
}
