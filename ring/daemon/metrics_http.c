/* The metrics' HTTP listener: a small HTTP/1.x server of our own on an
 * evconnlistener and bufferevents, bounded in connections, bytes and time,
 * so that no local user can make the member work for it or run it out of
 * file descriptors (SPEC.md "Hostile input"; docs/security.md).
 *
 * Not evhttp: libevent 2.1's evhttp runs its own accept loop, which spins
 * on EMFILE, has no cap on connections and no hook when one closes, and its
 * timeout is per read, so a client that sends a byte a second keeps its
 * connection for hours. One request per connection is all a scrape needs. */
#include "daemon/metrics_http.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "common/clock.h"
#include "core/err.h"
#include "daemon/metrics.h"

#define CONN_MAX 64          /* open connections at most; Prometheus holds one */
#define CONN_MIN 4           /* ... and at least, however low the file limit */
#define HEAD_MAX 8192        /* the request line and headers; no body is read */
#define DEADLINE_S 3         /* from accept to the reply written, whatever the client sends */
#define RELISTEN_MS 200      /* after an accept error (EMFILE...), listening pauses this long */
#define BACKLOG 32           /* connections the kernel holds for us; beyond, SYNs wait */
#define LOG_GAP_US 1000000u  /* each kind of warning at most once a second */

/* A warning strangers can cause: logged at most once a second, with how
 * many happened since the last line (this one included). */
struct limited {
	uint64_t at;
	uint64_t n;
};

struct conn {
	struct ring_metrics_http *h;
	struct bufferevent *bev;
	struct event *deadline;
	bool replied; /* the reply is queued: close once it is written */
	struct conn *prev, *next;
};

struct ring_metrics_http {
	struct event_base *base;
	struct ring_log *log;
	ring_metrics_fn fn;
	void *arg;
	struct evconnlistener *listener;
	struct event *relisten;
	struct conn *conns;
	size_t nconns, max_conns;
	struct limited busy, accept_err, timed_out, too_large;
};

/* Whether a line for L is due now; counts the event either way. */
static bool limited_due(struct limited *l)
{
	uint64_t now = ring_mono_us(); /* only to space out log lines */
	l->n++;
	if (l->at && now - l->at < LOG_GAP_US)
		return false;
	l->at = now;
	return true;
}

static void log_dropped(struct ring_metrics_http *h, struct limited *l, const char *reason)
{
	if (!limited_due(l))
		return;
	struct ring_log_field f[] = {RING_LF_S("reason", reason), RING_LF_N("count", l->n)};
	ring_log_emit(h->log, "metrics_client_dropped", false, f, 2);
	l->n = 0;
}

/* ---- connections ---- */

static void conn_free(struct conn *c)
{
	struct ring_metrics_http *h = c->h;
	if (c->prev)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->deadline)
		event_free(c->deadline);
	if (c->bev)
		bufferevent_free(c->bev); /* closes the socket */
	free(c);
	h->nconns--;
}

/* Queues a whole reply to C (no body for HEAD) and stops reading: one
 * request per connection, closed once written (Connection: close). */
static void reply(struct conn *c, const char *status, const char *extra, const char *type,
		  const char *body, size_t len, bool head)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	bufferevent_disable(c->bev, EV_READ);
	c->replied = true;
	if (evbuffer_add_printf(out,
				"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
				"Connection: close\r\n\r\n",
				status, type, len, extra) < 0 ||
	    (!head && evbuffer_add(out, body, len) != 0)) {
		conn_free(c);
		return;
	}
	bufferevent_enable(c->bev, EV_WRITE);
}

static void reply_text(struct conn *c, const char *status, const char *extra, const char *text,
		       bool head)
{
	reply(c, status, extra, "text/plain; charset=utf-8", text, strlen(text), head);
}

static void reply_metrics(struct conn *c, bool head)
{
	char *buf = malloc(RING_METRICS_MAX); /* per scrape: rare, and the loop stays small */
	int n = buf ? c->h->fn(c->h->arg, buf, RING_METRICS_MAX) : -1;
	if (n <= 0 || n >= RING_METRICS_MAX)
		reply_text(c, "500 Internal Server Error", "", "cannot format the metrics\n", head);
	else
		reply(c, "200 OK", "", "text/plain; version=0.0.4; charset=utf-8", buf, (size_t)n,
		      head);
	free(buf);
}

/* Answers the request line LINE: "METHOD TARGET HTTP/1.x". */
static void answer(struct conn *c, char *line)
{
	char *target = strchr(line, ' ');
	char *version = target ? strchr(target + 1, ' ') : NULL;
	if (!version || strncmp(version + 1, "HTTP/1.", 7) != 0) {
		reply_text(c, "400 Bad Request", "", "not an HTTP/1.x request line\n", false);
		return;
	}
	*target++ = '\0';
	*version = '\0';
	bool head = strcmp(line, "HEAD") == 0;
	if (!head && strcmp(line, "GET") != 0) {
		reply_text(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", "GET or HEAD only\n",
			   false);
		return;
	}
	target[strcspn(target, "?#")] = '\0'; /* a query (Prometheus params) changes nothing */
	if (strcmp(target, "/metrics") != 0)
		reply_text(c, "404 Not Found", "", "only /metrics is here\n", head);
	else
		reply_metrics(c, head);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	/* The whole head first, so that closing after the reply leaves nothing
	 * unread (which would reset the connection under the reply). */
	struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos < 0)
		end = evbuffer_search(in, "\n\n", 2, NULL);
	if (end.pos < 0) {
		if (evbuffer_get_length(in) > HEAD_MAX) {
			log_dropped(c->h, &c->h->too_large, "too_large");
			reply_text(c, "431 Request Header Fields Too Large", "", "request too large\n",
				   false);
		}
		return;
	}
	if (end.pos > HEAD_MAX) {
		log_dropped(c->h, &c->h->too_large, "too_large");
		reply_text(c, "431 Request Header Fields Too Large", "", "request too large\n", false);
		return;
	}
	size_t len;
	char *line = evbuffer_readln(in, &len, EVBUFFER_EOL_CRLF);
	if (!line || strlen(line) != len)
		reply_text(c, "400 Bad Request", "", "not an HTTP/1.x request line\n", false);
	else
		answer(c, line);
	free(line);
}

/* The output is empty: after the reply, the connection's work is done. */
static void write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	struct conn *c = arg;
	if (c->replied)
		conn_free(c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(arg);
}

/* However slowly it sends or reads, a client has DEADLINE_S in all. */
static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *c = arg;
	log_dropped(c->h, &c->h->timed_out, "timeout");
	conn_free(c);
}

/* ---- accepting ---- */

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
		      int salen, void *arg)
{
	(void)l;
	(void)sa;
	(void)salen;
	struct ring_metrics_http *h = arg;
	struct conn *c = h->nconns < h->max_conns ? calloc(1, sizeof *c) : NULL;
	if (!c) {
		/* Closed at once: the descriptors stay for the control socket,
		 * the ring's UDP and the epoch file. Each costs us one accept
		 * and one close, paid for by the client's own connect. */
		evutil_closesocket(fd);
		if (limited_due(&h->busy)) {
			struct ring_log_field f[] = {RING_LF_N("limit", h->max_conns),
						     RING_LF_N("refused", h->busy.n)};
			ring_log_emit(h->log, "metrics_busy", false, f, 2);
			h->busy.n = 0;
		}
		return;
	}
	c->h = h;
	c->next = h->conns;
	if (h->conns)
		h->conns->prev = c;
	h->conns = c;
	h->nconns++;
	c->bev = bufferevent_socket_new(h->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->deadline = evtimer_new(h->base, deadline_cb, c);
	struct timeval tv = {.tv_sec = DEADLINE_S, .tv_usec = 0};
	if (!c->bev || !c->deadline || evtimer_add(c->deadline, &tv) != 0) {
		if (!c->bev)
			evutil_closesocket(fd);
		conn_free(c);
		return;
	}
	/* Reading stops at the head's limit (and one byte more, to tell). */
	bufferevent_setwatermark(c->bev, EV_READ, 0, HEAD_MAX + 1);
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	bufferevent_enable(c->bev, EV_READ);
}

static void relisten_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_metrics_http *h = arg;
	evconnlistener_enable(h->listener);
}

/* accept() failing (EMFILE, ENFILE, ENOBUFS, ENOMEM) leaves the listener
 * readable, and libevent would retry at once, forever: stop listening for
 * RELISTEN_MS instead, as the control socket does. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct ring_metrics_http *h = arg;
	int e = EVUTIL_SOCKET_ERROR();
	evconnlistener_disable(l);
	struct timeval tv = {.tv_sec = 0, .tv_usec = RELISTEN_MS * 1000};
	evtimer_add(h->relisten, &tv);
	if (limited_due(&h->accept_err)) {
		struct ring_log_field f[] = {RING_LF_S("error", evutil_socket_error_to_string(e)),
					     RING_LF_N("count", h->accept_err.n)};
		ring_log_emit(h->log, "metrics_accept_error", false, f, 2);
		h->accept_err.n = 0;
	}
}

/* Connections past this many are closed at once: CONN_MAX, or an eighth
 * of the file limit when that is lower, so that most descriptors stay for
 * the control socket's clients. */
static size_t conn_cap(void)
{
	struct rlimit rl;
	rlim_t nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
	size_t cap = nofile / 8 < CONN_MAX ? (size_t)(nofile / 8) : CONN_MAX;
	return cap < CONN_MIN ? CONN_MIN : cap;
}

int ring_metrics_http_new(struct ring_metrics_http **out, struct event_base *base,
			  const char *host, uint16_t port, ring_metrics_fn fn, void *arg,
			  struct ring_log *log, char *err, size_t errlen)
{
	struct ring_metrics_http *h = calloc(1, sizeof *h);
	*out = h;
	if (!h || !(h->relisten = evtimer_new(base, relisten_cb, h))) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	h->base = base;
	h->log = log;
	h->fn = fn;
	h->arg = arg;
	h->max_conns = conn_cap();
	struct sockaddr_storage ss = {0};
	socklen_t sslen;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	if (evutil_inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sslen = sizeof *sin;
	} else if (evutil_inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sslen = sizeof *sin6;
	} else {
		snprintf(err, errlen, "metrics_listen: %s is not an address", host);
		return -RING_ECONFIG;
	}
	h->listener = evconnlistener_new_bind(
		base, accept_cb, h, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
		BACKLOG, (struct sockaddr *)&ss, (int)sslen);
	if (!h->listener) {
		snprintf(err, errlen, "cannot listen for metrics on %s%s%s:%u: %s",
			 strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port,
			 strerror(errno));
		return -RING_EIO;
	}
	evconnlistener_set_error_cb(h->listener, accept_error_cb);
	return 0;
}

void ring_metrics_http_free(struct ring_metrics_http *h)
{
	if (!h)
		return;
	while (h->conns)
		conn_free(h->conns);
	if (h->listener)
		evconnlistener_free(h->listener);
	if (h->relisten)
		event_free(h->relisten);
	free(h);
}
