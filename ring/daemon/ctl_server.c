/* The control socket in ringd: accepting clients, reading their lines,
 * acquire timeouts, writing replies. What a line means for the lock is the
 * core's to decide; this file only hands requests on and answers back. */
#include "daemon/ctl_server.h"

#include <errno.h>
#include <fcntl.h>
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
#include <event2/listener.h>

#include "common/clock.h"
#include "common/conf.h"
#include "core/err.h"
#include "common/state_dir.h"

#define REPLY_MAX 1024  /* control replies written at once; longer ones (a big STATUS) are queued */
#define READ_MAX 4096   /* read per wake-up, as much as a bufferevent would take */
#define CORK_MAX 4096   /* replies to one read gathered for one write; more are written as they come */

enum client_state { CLIENT_IDLE, CLIENT_WAITING, CLIENT_GRANTED };

/* A client's socket is read by its own event, not by the bufferevent,
 * which asks the kernel how much is waiting (ioctl FIONREAD) before every
 * read: one system call per request more than a plain read(2). The
 * bufferevent only writes what the socket did not take at once. */
struct client {
	struct ring_ctl_server *s;
	uint64_t handle;
	struct bufferevent *bev; /* writing, and its errors */
	struct event *rd;        /* reading */
	struct evbuffer *in;     /* what was read, up to a whole line */
	enum client_state state;
	struct event *timeout;
	/* On the daemon's clock (h.now), for the metrics' histograms:
	 * when it asked (ASKED_PENDING while the ACQUIRE is being stepped),
	 * and when it was granted. */
	uint64_t asked_us, granted_us;
	struct client *next;
};

#define ASKED_PENDING UINT64_MAX

struct ring_ctl_server {
	struct event_base *base;
	struct ring_ctl_handler h;
	struct ring_log *log;
	struct evconnlistener *listener;
	char path[RING_SOCK_MAX];   /* for messages: where clients find it */
	struct ring_state_dir dir;  /* its folder, checked; entries reached through it */
	char name[RING_SOCK_MAX];   /* its name in DIR */
	struct ring_conf_group group; /* control_group: who else may connect; name "" when none */
	bool bound;
	struct client *clients;
	size_t nclients, max_clients;
	struct event *relisten;
	uint64_t accept_err_logged_us;
	uint64_t next_handle;
	/* The client whose lines are being handled, and its replies so far:
	 * a pipelined "RELEASE\nACQUIRE\n" gets "OK" and "GRANTED" with one
	 * write instead of two (docs/control.md, Pipelining). */
	struct client *corked;
	size_t cork_len;
	char cork[CORK_MAX];
};

static struct client *client_by_handle(struct ring_ctl_server *s, uint64_t handle)
{
	for (struct client *c = s->clients; c; c = c->next)
		if (c->handle == handle)
			return c;
	return NULL;
}

/* Writes the N bytes at P to C, in order after what is queued. */
static void write_bytes(struct client *c, const char *line, size_t n)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	/* Nothing queued: write it now rather than a loop round later
	 * (epoll_ctl, epoll_wait, writev), so that a GRANTED reaches its
	 * client at once; a third fewer system calls per critical-region
	 * entry (docs/benchmarks.md). What the socket does not take, and any
	 * error, goes through the buffer as before, in order. */
	size_t off = 0;
	if (evbuffer_get_length(out) == 0) {
		ssize_t w = send(bufferevent_getfd(c->bev), line, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0)
			off = (size_t)w;
	}
	if (off < n)
		evbuffer_add(out, line + off, n - off);
}

/* Writes what C's replies gathered, keeping C corked: called before any
 * reply that does not go through the gathering, so bytes keep their order. */
static void cork_flush(struct client *c)
{
	struct ring_ctl_server *s = c->s;
	if (s->corked != c || s->cork_len == 0)
		return;
	size_t n = s->cork_len;
	s->cork_len = 0;
	write_bytes(c, s->cork, n);
}

/* Replies to C from here on are gathered until uncork(). */
static void cork(struct client *c)
{
	c->s->corked = c;
	c->s->cork_len = 0;
}

static void uncork(struct client *c)
{
	cork_flush(c);
	c->s->corked = NULL;
}

/* The N bytes at P for C: gathered while C's own lines are handled,
 * written at once otherwise (a GRANTED when the token arrives). */
static void reply_bytes(struct client *c, const char *line, size_t n)
{
	struct ring_ctl_server *s = c->s;
	if (s->corked == c) {
		if (n <= sizeof s->cork - s->cork_len) {
			memcpy(s->cork + s->cork_len, line, n);
			s->cork_len += n;
			return;
		}
		cork_flush(c); /* too much for one gathering: in order, as it comes */
	}
	write_bytes(c, line, n);
}

static void reply(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(struct client *c, const char *fmt, ...)
{
	char line[REPLY_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof line) {
		cork_flush(c);
		va_start(ap, fmt);
		evbuffer_add_vprintf(bufferevent_get_output(c->bev), fmt, ap);
		va_end(ap);
		return;
	}
	reply_bytes(c, line, (size_t)n);
}

/* The end of C's grant, as the hold histogram's sample; the daemon's
 * clock has been read for the step that ended it. */
static void hold_ended(struct client *c)
{
	uint64_t now = c->s->h.now(c->s->h.arg);
	ring_metrics_hold(c->s->h.samples, now > c->granted_us ? now - c->granted_us : 0);
}

/* Writes what is queued for C now: before a stall or a close, the event
 * loop will not get the chance. A socket bufferevent keeps the front of its
 * output frozen so that only it drains it, and its flush does not write;
 * thaw it for this one write. */
static void flush_now(struct client *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	evutil_socket_t fd = bufferevent_getfd(c->bev);
	cork_flush(c);
	evbuffer_unfreeze(out, 1);
	for (int k = 0; k < 8 && evbuffer_get_length(out) > 0; k++)
		if (evbuffer_write(out, fd) <= 0)
			break;
	evbuffer_freeze(out, 1);
}

/* ---- the core's answers ---- */

void ring_ctl_server_grant(struct ring_ctl_server *s, uint64_t handle, uint64_t fence,
			   uint32_t epoch)
{
	struct client *c = client_by_handle(s, handle);
	if (!c)
		return;
	if (c->timeout)
		event_del(c->timeout);
	/* A grant made while its ACQUIRE is still being stepped waited no
	 * time: the same step read the clock for both. */
	uint64_t now = s->h.now(s->h.arg);
	if (c->asked_us == ASKED_PENDING)
		c->asked_us = now;
	ring_hist_observe(&s->h.samples->grant_wait, now > c->asked_us ? now - c->asked_us : 0);
	c->granted_us = now;
	c->state = CLIENT_GRANTED;
	reply(c, "GRANTED %llu %u\n", (unsigned long long)fence, epoch);
}

void ring_ctl_server_revoke(struct ring_ctl_server *s, uint64_t handle, uint64_t fence)
{
	struct client *c = client_by_handle(s, handle);
	if (!c)
		return;
	if (c->state == CLIENT_GRANTED)
		hold_ended(c);
	c->state = CLIENT_IDLE;
	reply(c, "REVOKED %llu\n", (unsigned long long)fence);
}

void ring_ctl_server_deny(struct ring_ctl_server *s, uint64_t handle, int reason)
{
	struct client *c = client_by_handle(s, handle);
	if (!c)
		return;
	if (reason == -RING_ENOTHOLDING) {
		/* A RENEW that came after its grant ended: the REVOKED went first. */
		reply(c, "ERR not holding\n");
		return;
	}
	if (c->timeout)
		event_del(c->timeout);
	c->state = CLIENT_IDLE;
	if (reason == -RING_ECONFLICT)
		reply(c, "BUSY\n");
	else
		reply(c, "ERR %s\n", ring_strerror(reason));
}

void ring_ctl_server_renewed(struct ring_ctl_server *s, uint64_t handle, uint64_t fence,
			     uint64_t ms_left)
{
	struct client *c = client_by_handle(s, handle);
	if (c)
		reply(c, "RENEWED %llu %llu\n", (unsigned long long)fence,
		      (unsigned long long)ms_left);
}

/* ---- clients ---- */

static void client_free(struct client *c)
{
	struct ring_ctl_server *s = c->s;
	if (s->corked == c)
		s->corked = NULL;
	for (struct client **p = &s->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->timeout)
		event_free(c->timeout);
	if (c->rd)
		event_free(c->rd); /* before the bufferevent closes the descriptor */
	if (c->in)
		evbuffer_free(c->in);
	bufferevent_free(c->bev);
	free(c);
	s->nclients--;
}

/* A client that goes away releases what it held or waited for. */
static void client_gone(struct client *c)
{
	if (c->state != CLIENT_IDLE) {
		bool held = c->state == CLIENT_GRANTED;
		c->state = CLIENT_IDLE;
		c->s->h.client(c->s->h.arg, RING_EVENT_RELEASE, c->handle);
		if (held)
			hold_ended(c);
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
	c->s->h.client(c->s->h.arg, RING_EVENT_RELEASE, c->handle);
	reply(c, "TIMEOUT\n");
}

static void on_acquire(struct client *c, const struct ring_ctl_request *r)
{
	enum ring_event_type ev = r->cmd == RING_CTL_TRY ? RING_EVENT_TRY : RING_EVENT_ACQUIRE;
	if (c->state != CLIENT_IDLE) {
		reply(c, "ERR busy: this connection already waits or holds\n");
		return;
	}
	c->state = CLIENT_WAITING;
	if (r->has_timeout) {
		if (!c->timeout)
			c->timeout = evtimer_new(c->s->base, acquire_timeout_cb, c);
		struct timeval tv = {.tv_sec = (time_t)(r->timeout_ms / 1000),
				     .tv_usec = (suseconds_t)(r->timeout_ms % 1000) * 1000};
		evtimer_add(c->timeout, &tv);
	}
	/* The time of the ACQUIRE is the time its step reads: known once
	 * the step ran (or at its GRANTED, should that come in the step). */
	c->asked_us = ASKED_PENDING;
	c->s->h.client(c->s->h.arg, ev, c->handle);
	if (c->asked_us == ASKED_PENDING)
		c->asked_us = c->s->h.now(c->s->h.arg);
}

static void on_release(struct client *c)
{
	if (c->state == CLIENT_IDLE) {
		reply(c, "ERR not holding\n");
		return;
	}
	if (c->timeout)
		event_del(c->timeout);
	/* The state stays as it is while the RELEASE is stepped: the step
	 * checks the lease and pauses before anything else, and may end the
	 * grant itself (ring_ctl_server_revoke, which says REVOKED and makes
	 * the client idle). Then this RELEASE ended nothing: ERR not holding,
	 * as after any REVOKED (docs/control.md), never OK for a region the
	 * client had lost. */
	c->s->h.client(c->s->h.arg, RING_EVENT_RELEASE, c->handle);
	if (c->state == CLIENT_IDLE) {
		reply(c, "ERR not holding\n");
		return;
	}
	bool held = c->state == CLIENT_GRANTED;
	c->state = CLIENT_IDLE;
	if (held)
		hold_ended(c);
	reply(c, "OK\n");
}

/* The core answers RENEWED, or refuses; a lease that ran out before the
 * line was read is revoked by the same step (REVOKED, then the refusal). */
static void on_renew(struct client *c)
{
	if (c->state != CLIENT_GRANTED) {
		reply(c, "ERR not holding\n");
		return;
	}
	c->s->h.client(c->s->h.arg, RING_EVENT_RENEW, c->handle);
}

static void on_status(struct client *c)
{
	char buf[4096];
	int n = c->s->h.status(c->s->h.arg, buf, sizeof buf);
	if (n > 0 && (size_t)n < sizeof buf)
		reply(c, "%s", buf);
	else
		reply(c, "ERR status too large\n");
}

/* The exposition, then RING_CTL_METRICS_END on a line of its own: the
 * reply is many lines, and the client reads up to the marker. Allocated
 * per request: a scrape is rare, and the loop's memory stays small. */
static void on_metrics(struct client *c)
{
	static const char end[] = RING_CTL_METRICS_END "\n";
	size_t cap = RING_METRICS_MAX + sizeof end;
	char *buf = malloc(cap);
	int n = buf ? c->s->h.metrics(c->s->h.arg, buf, RING_METRICS_MAX) : -1;
	if (n > 0 && n < RING_METRICS_MAX) {
		memcpy(buf + n, end, sizeof end - 1);
		reply_bytes(c, buf, (size_t)n + sizeof end - 1);
	} else {
		reply(c, "ERR %s\n", buf ? "metrics too large" : "out of memory");
	}
	free(buf);
}

static void on_inject(struct client *c, const struct ring_ctl_request *r)
{
	char why[RING_PATH_MAX + 64];
	if (c->s->h.inject(c->s->h.arg, r, why, sizeof why) < 0) {
		reply(c, "ERR %s\n", why);
		return;
	}
	reply(c, "OK\n");
	if (r->inject == RING_INJECT_PAUSE) {
		/* Stall the whole loop, as SIGSTOP or a long GC would: timers
		 * fire late afterwards and the core notices (§5.5). The OK goes
		 * out first, or the client would wait out the stall too. */
		flush_now(c);
		ring_log_flush(c->s->log); /* the loop's own flush waits out the stall */
		struct timespec ts = {.tv_sec = r->arg / 1000, .tv_nsec = (long)(r->arg % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
}

static void handle_line(struct client *c, const char *line)
{
	struct ring_ctl_request r;
	char err[128];
	if (ring_ctl_parse(line, &r, err, sizeof err) < 0) {
		reply(c, "ERR %s\n", err);
		return;
	}
	switch (r.cmd) {
	case RING_CTL_ACQUIRE:
	case RING_CTL_TRY:
		on_acquire(c, &r);
		return;
	case RING_CTL_RENEW:
		on_renew(c);
		return;
	case RING_CTL_RELEASE:
		on_release(c);
		return;
	case RING_CTL_STATUS:
		on_status(c);
		return;
	case RING_CTL_INJECT:
		on_inject(c, &r);
		return;
	case RING_CTL_METRICS:
		on_metrics(c);
		return;
	}
}

/* Whether the client sent more: false when it closed or failed (then it
 * is gone), or nothing was waiting. */
static bool client_read(struct client *c, evutil_socket_t fd)
{
	char buf[READ_MAX];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n > 0)
		return evbuffer_add(c->in, buf, (size_t)n) == 0;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return false;
	client_gone(c); /* end of file, or a reset */
	return false;
}

static void client_read_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct client *c = arg;
	struct ring_ctl_server *s = c->s;
	struct evbuffer *in = c->in;
	if (!client_read(c, fd))
		return;
	/* Every whole line that arrived, however many were pipelined: each
	 * takes its bytes out, so this ends. Their replies go out together
	 * when the last is handled: one write for the read. */
	cork(c);
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
		if (s->h.stopped(s->h.arg)) {
			uncork(c);
			return;
		}
	}
	uncork(c);
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

/* ---- accepting ---- */

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
		      int salen, void *arg)
{
	(void)l;
	(void)sa;
	(void)salen;
	struct ring_ctl_server *s = arg;
	struct client *c = s->nclients < s->max_clients ? calloc(1, sizeof *c) : NULL;
	if (!c) {
		/* Past the cap, file descriptors stay free for what must not
		 * fail: persisting an epoch. */
		static const char busy[] = "ERR too many clients\n";
		(void)send(fd, busy, sizeof busy - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		evutil_closesocket(fd);
		return;
	}
	c->s = s;
	c->handle = ++s->next_handle;
	c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		free(c);
		evutil_closesocket(fd);
		return;
	}
	c->next = s->clients;
	s->clients = c;
	s->nclients++;
	c->in = evbuffer_new();
	c->rd = event_new(s->base, fd, EV_READ | EV_PERSIST, client_read_cb, c);
	if (!c->in || !c->rd) {
		client_free(c); /* closes fd */
		return;
	}
	event_add(c->rd, NULL);
	bufferevent_setcb(c->bev, NULL, NULL, client_event_cb, c);
	bufferevent_enable(c->bev, EV_WRITE);
}

/* accept() failing with EMFILE or ENFILE would be retried at once, forever:
 * stop listening for a moment instead. */
static void relisten_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct ring_ctl_server *s = arg;
	evconnlistener_enable(s->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct ring_ctl_server *s = arg;
	int e = EVUTIL_SOCKET_ERROR();
	evconnlistener_disable(l);
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
	evtimer_add(s->relisten, &tv);
	uint64_t now = ring_mono_us(); /* only to space out a log line */
	if (now - s->accept_err_logged_us >= 1000000u) {
		struct ring_log_field f = RING_LF_S("error", evutil_socket_error_to_string(e));
		ring_log_emit(s->log, "control_accept_error", false, &f, 1);
		s->accept_err_logged_us = now;
	}
}

/* Clients past this many are turned away, keeping descriptors for the
 * epoch file and the UDP socket. */
static size_t client_cap(void)
{
	struct rlimit rl;
	rlim_t nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
	size_t cap = nofile > 96 ? (size_t)(nofile - 64) : 32;
	return cap > 4096 ? 4096 : cap;
}

/* The socket's mode: 0600, ringd's user's alone; with control_group,
 * 0660 and that group's. It is bound 0600 and given to the group before
 * it opens to 0660, so nobody outside the group is ever let in; through
 * DIR, the folder checked. */
static int socket_mode(struct ring_ctl_server *s, char *err, size_t errlen)
{
	const struct ring_conf_group *g = &s->group;
	struct stat st;
	const char *what = "chmod 0600";
	int rc = fchmodat(s->dir.fd, s->name, 0600, 0);
	if (rc != 0 || !g->name[0]) {
		if (rc != 0)
			snprintf(err, errlen, "control socket %s: cannot %s it: %s", s->path, what,
				 strerror(errno));
		return rc != 0 ? -RING_EIO : 0;
	}
	what = "stat";
	rc = fstatat(s->dir.fd, s->name, &st, AT_SYMLINK_NOFOLLOW);
	if (rc == 0 && st.st_gid != g->gid) {
		what = "chgrp";
		rc = fchownat(s->dir.fd, s->name, (uid_t)-1, g->gid, AT_SYMLINK_NOFOLLOW);
	}
	if (rc == 0) {
		what = "chmod 0660";
		rc = fchmodat(s->dir.fd, s->name, 0660, 0);
	}
	if (rc != 0) {
		snprintf(err, errlen, "control socket %s: cannot %s it for group %s (control_group): "
			 "%s; ringd's user must be a member of the group, or run with it (the unit's "
			 "Group=)", s->path, what, g->name,
			 strerror(errno));
		return -RING_EIO;
	}
	return 0;
}

/* Why binding by a path is safe here: DIR was opened without following
 * its last component and is ours, writable by nobody else, so no other
 * user can add, remove or swap an entry in it, and the path bound goes
 * through DIR's own descriptor (/proc/self/fd/N/NAME), so a folder
 * swapped above it since the check is not the one used either. What is
 * at NAME already is removed only when it is a socket of ours that does
 * not answer: a file, a link or a stranger's socket stops the start. */
static int listen_on(struct ring_ctl_server *s, uint16_t member, char *err, size_t errlen)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	if (ring_state_dir_at_path(&s->dir, s->name, sun.sun_path, sizeof sun.sun_path) != 0) {
		snprintf(err, errlen, "control socket %s: path too long", s->path);
		return -RING_ECONFIG;
	}
	int rc = ring_state_dir_socket_check(&s->dir, s->name, err, errlen);
	if (rc < 0)
		return rc;
	/* A socket file left by a crash is removed; one that answers belongs
	 * to a running member with our id, and two of those must not run. */
	int probe = rc == 1 ? socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) : -1;
	if (probe >= 0) {
		if (connect(probe, (struct sockaddr *)&sun, sizeof sun) == 0) {
			close(probe);
			snprintf(err, errlen, "member %u is already running (%s answers)", member,
				 s->path);
			return -RING_EBUSY;
		}
		close(probe);
	}
	if (rc == 1)
		unlinkat(s->dir.fd, s->name, 0);
	mode_t old = umask(0177); /* created 0600: only its owner may drive the lock */
	s->listener = evconnlistener_new_bind(s->base, accept_cb, s,
					      LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 16,
					      (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	if (!s->listener) {
		snprintf(err, errlen, "cannot listen on %s: %s", s->path, strerror(errno));
		return -RING_EIO;
	}
	s->bound = true;
	evconnlistener_set_error_cb(s->listener, accept_error_cb);
	return socket_mode(s, err, errlen);
}

int ring_ctl_server_new(struct ring_ctl_server **out, struct event_base *base,
			const struct ring_state_dir *dir, const char *path, uint16_t member,
			const struct ring_conf_group *group, const struct ring_ctl_handler *h,
			struct ring_log *log, char *err, size_t errlen)
{
	struct ring_ctl_server *s = calloc(1, sizeof *s);
	*out = s;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	s->dir.fd = -1;
	s->base = base;
	s->h = *h;
	s->log = log;
	s->max_clients = client_cap();
	s->group = *group;
	snprintf(s->path, sizeof s->path, "%s", path);
	char folder[RING_SOCK_MAX];
	if (ring_path_split(path, folder, sizeof folder, s->name, sizeof s->name) != 0) {
		snprintf(err, errlen, "control socket %s: not a usable path", path);
		return -RING_ECONFIG;
	}
	snprintf(s->dir.path, sizeof s->dir.path, "%s", dir->path);
	s->dir.fd = fcntl(dir->fd, F_DUPFD_CLOEXEC, 0);
	if (s->dir.fd < 0) {
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		return -RING_EIO;
	}
	s->relisten = evtimer_new(base, relisten_cb, s);
	if (!s->relisten) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	return listen_on(s, member, err, errlen);
}

void ring_ctl_server_free(struct ring_ctl_server *s)
{
	if (!s)
		return;
	while (s->clients)
		client_free(s->clients);
	if (s->listener)
		evconnlistener_free(s->listener);
	if (s->bound)
		unlinkat(s->dir.fd, s->name, 0);
	ring_state_dir_close(&s->dir);
	if (s->relisten)
		event_free(s->relisten);
	free(s);
}
