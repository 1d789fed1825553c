/* `ringctl watch`'s loop and terminal: rounds of the status poll on a
 * schedule, the view drawn on an alternate screen (or as plain lines), a
 * self-pipe for the signals so that a wait on the ring also hears them.
 * See watch_loop.h; the view itself is watch.c. */
#include "ctl/watch_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "core/err.h"
#include "ctl/watch.h"

/* Entering: the alternate screen (the user's scrollback stays as it was),
 * the cursor hidden. Leaving undoes both, in the other order. */
#define ENTER_SCREEN "\033[?1049h\033[?25l"
#define LEAVE_SCREEN "\033[?25h\033[?1049l"

/* Rounds between two asks for the lease advice (watch's footer). */
#define ADVICE_EVERY 10u

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t w = write(sig_pipe[1], &b, 1);
	(void)w; /* a full pipe: a signal is pending anyway */
	errno = saved;
}

static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP, SIGCONT};

static void catch_signal(int sig)
{
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll wakes */
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void default_signals(void)
{
	struct sigaction sa = {.sa_handler = SIG_DFL};
	sigemptyset(&sa.sa_mask);
	for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
		sigaction(caught[k], &sa, NULL);
}

struct term {
	int fd;
	bool tty;      /* drawing a screen, not lines */
	bool entered;  /* the alternate screen is ours now */
	bool gone;     /* the reader went away (EPIPE): stop quietly */
	unsigned cols, rows;
};

/* Writes all of BUF; false when the reader has gone or writing failed. */
static bool put(struct term *t, const char *buf, size_t len)
{
	for (size_t off = 0; off < len && !t->gone;) {
		ssize_t w = write(t->fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = {.fd = t->fd, .events = POLLOUT};
			(void)poll(&pfd, 1, 1000);
			continue;
		}
		if (w <= 0) {
			t->gone = true;
			break;
		}
		off += (size_t)w;
	}
	return !t->gone;
}

static void term_size(struct term *t)
{
	struct winsize ws;
	t->cols = 80;
	t->rows = 24;
	if (ioctl(t->fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
		t->cols = ws.ws_col;
		t->rows = ws.ws_row;
	}
}

static void term_enter(struct term *t)
{
	if (t->tty && !t->entered) {
		put(t, ENTER_SCREEN, strlen(ENTER_SCREEN));
		t->entered = true;
	}
}

static void term_leave(struct term *t)
{
	if (t->entered) {
		t->entered = false;
		put(t, LEAVE_SCREEN, strlen(LEAVE_SCREEN));
	}
}

/* Time labels: UTC to the millisecond on lines (like the logs, for
 * reading beside them), the local time of day on a screen. */
static void stamp(char *b, size_t n, bool tty)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (tty) {
		localtime_r(&ts.tv_sec, &tm);
		strftime(b, n, "%H:%M:%S", &tm);
	} else {
		gmtime_r(&ts.tv_sec, &tm);
		char s[32];
		strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(b, n, "%s.%03ldZ", s, ts.tv_nsec / 1000000L);
	}
}

/* Draws the view: home, each line over the old one (cleared to its end),
 * the rest of the screen cleared; no newline after the last line, so a
 * full screen does not scroll. Lines: one each round. */
static void draw(struct term *t, const struct ring_watch *w, char *buf, size_t cap)
{
	char when[64];
	stamp(when, sizeof when, t->tty);
	if (!t->tty) {
		int n = ring_watch_render(w, RING_WATCH_LINE, 0, 0, when, buf, cap);
		put(t, buf, (size_t)n < cap ? (size_t)n : strlen(buf));
		return;
	}
	/* One column short: a character in the last column leaves some
	 * terminals about to wrap, and then clearing to the end eats it. */
	int n = ring_watch_render(w, RING_WATCH_SCREEN, t->cols > 1 ? t->cols - 1 : 1, t->rows, when,
				  buf, cap);
	size_t len = (size_t)n < cap ? (size_t)n : strlen(buf);
	put(t, "\033[H", 3);
	for (size_t off = 0; off < len;) {
		char *nl = memchr(buf + off, '\n', len - off);
		size_t end = nl ? (size_t)(nl - buf) : len;
		put(t, buf + off, end - off);
		put(t, "\033[K", 3);
		off = end + 1;
		if (off < len)
			put(t, "\n", 1);
	}
	put(t, "\033[J", 3);
}

/* Gives the terminal back, stops as SIGTSTP would have, and takes the
 * terminal again once continued. */
static void suspend(struct term *t)
{
	bool was = t->entered;
	term_leave(t);
	struct sigaction sa = {.sa_handler = SIG_DFL};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTSTP, &sa, NULL);
	raise(SIGTSTP); /* stops here until SIGCONT */
	catch_signal(SIGTSTP);
	if (was)
		term_enter(t);
}

enum { GO_ON, REDRAW, STOP };

/* Reads what the signals left in the pipe and acts on it. */
static int signals(struct term *t)
{
	unsigned char b[64];
	int what = GO_ON;
	ssize_t n;
	while ((n = read(sig_pipe[0], b, sizeof b)) > 0) {
		for (ssize_t k = 0; k < n; k++) {
			if (b[k] == SIGINT || b[k] == SIGTERM || b[k] == SIGHUP)
				return STOP;
			if (b[k] == SIGTSTP)
				suspend(t);
			if (b[k] == SIGWINCH && t->tty)
				term_size(t);
			what = REDRAW;
		}
	}
	return what;
}

static int open_pipe(char *err, size_t errlen)
{
	if (pipe(sig_pipe) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -RING_EIO;
	}
	for (int k = 0; k < 2; k++) {
		fcntl(sig_pipe[k], F_SETFL, fcntl(sig_pipe[k], F_GETFL) | O_NONBLOCK);
		fcntl(sig_pipe[k], F_SETFD, FD_CLOEXEC);
	}
	return 0;
}

static void close_pipe(void)
{
	for (int k = 0; k < 2; k++) {
		if (sig_pipe[k] >= 0)
			close(sig_pipe[k]);
		sig_pipe[k] = -1;
	}
}

/* SIGPIPE ignored: a reader gone is a write error, then a clean stop. The
 * caught signals go to the pipe, for the loop to hear. */
static void catch_signals(void)
{
	struct sigaction ign = {.sa_handler = SIG_IGN};
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, NULL);
	for (size_t k = 0; k < sizeof caught / sizeof caught[0]; k++)
		catch_signal(caught[k]);
}

/* One watch: the poll, the view it feeds and the terminal it is drawn on. */
struct watch {
	struct ring_status_poll *p;
	const struct ring_layout *l;
	const struct ring_watch_opts *o;
	struct term t;
	struct ring_watch *view;
	char *buf;
	size_t cap;
};

static void redraw(struct watch *w)
{
	draw(&w->t, w->view, w->buf, w->cap);
}

/* The view takes the round's answers: NULL for a member that gave none. */
static void take_answers(struct watch *w)
{
	const struct ring_msg_status_resp *ans[RING_MAX_MEMBERS];
	const struct ring_msg_advice_resp *adv[RING_MAX_MEMBERS];
	const struct ring_msg_hold_resp *hold[RING_MAX_MEMBERS];
	for (size_t i = 0; i < w->l->n; i++) {
		ans[i] = ring_status_poll_answer(w->p, i);
		adv[i] = ring_status_poll_advice(w->p, i);
		hold[i] = ring_status_poll_hold(w->p, i);
	}
	ring_watch_update(w->view, ans, ring_mono_us());
	ring_watch_holds(w->view, hold);
	ring_watch_advice(w->view, adv); /* none asked this round: the last stands */
}

/* Waits until NEXT (ring_mono_us), hearing signals meanwhile; false when
 * one of them asks to stop. */
static bool wait_until(struct watch *w, uint64_t next)
{
	bool stop = false;
	uint64_t now;
	for (int spins = 0; spins < 100000 && !stop && (now = ring_mono_us()) < next; spins++) {
		struct pollfd pfd = {.fd = sig_pipe[0], .events = POLLIN};
		int ms = (int)((next - now + 999) / 1000);
		if (poll(&pfd, 1, ms) > 0) {
			int s = signals(&w->t);
			stop = s == STOP;
			if (s == REDRAW)
				redraw(w);
		}
	}
	return !stop;
}

/* The rounds, from START until the count is reached, a signal stops them or
 * the reader goes away. 0, or -RING_EIO when the poll fails. */
static int run_rounds(struct watch *w, uint64_t start, char *err, size_t errlen)
{
	/* Each round asks twice (a lost datagram is not a down member), each
	 * try waiting half the interval, at most 250 ms: a round ends within
	 * the interval, and a member silent through both is down at once. */
	const struct ring_watch_opts *o = w->o;
	unsigned try_ms = o->interval_ms / 2 < 250 ? o->interval_ms / 2 : 250;
	uint64_t next = start;
	for (uint64_t round = 0; !w->t.gone && (!o->count || round < o->count);) {
		bool woken = false;
		/* Who holds the lock is asked with every round's status (it
		 * changes as fast); the advice changes slowly: asked with the
		 * first round's and every ADVICE_EVERY rounds after. */
		unsigned kinds = RING_POLL_STATUS | RING_POLL_HOLD;
		ring_status_poll_ask(w->p, round % ADVICE_EVERY == 0 ? kinds | RING_POLL_ADVICE : kinds);
		if (ring_status_poll_round(w->p, 2, try_ms, sig_pipe[0], &woken) < 0) {
			snprintf(err, errlen, "waiting for status answers: %s", strerror(errno));
			return -RING_EIO;
		}
		if (woken) {
			/* A signal cut the round short: its silent members
			 * may only be slow. Act on it and ask again. */
			if (signals(&w->t) == STOP)
				break;
			if (w->view->rounds)
				redraw(w);
			continue;
		}
		take_answers(w);
		redraw(w);
		round++;
		if (o->count && round >= o->count)
			break;
		/* To the next round's time, hearing signals meanwhile; a round
		 * late (a stopped process) starts the schedule again from now. */
		next += (uint64_t)o->interval_ms * 1000u;
		uint64_t now = ring_mono_us();
		if (next < now)
			next = now;
		if (!wait_until(w, next))
			break;
	}
	return 0;
}

int ring_watch_loop(const struct ring_conf *conf, const struct ring_watch_opts *o, int out_fd,
		    struct ring_watch_result *res, char *err, size_t errlen)
{
	static struct ring_watch view; /* large: not on the stack */
	static char buf[1 << 18];      /* the largest screen: 258 lines of 1023 */
	struct watch w = {.l = &conf->layout, .o = o, .view = &view, .buf = buf, .cap = sizeof buf};
	int rc = ring_status_poll_open(&w.p, w.l, ring_conf_poll_key(conf), err, errlen);
	if (rc < 0)
		return rc;
	if ((rc = open_pipe(err, errlen)) < 0) {
		ring_status_poll_close(w.p);
		return rc;
	}
	w.t = (struct term){.fd = out_fd, .tty = !o->plain && isatty(out_fd)};
	if (w.t.tty)
		term_size(&w.t);
	catch_signals();
	ring_watch_init(&view, w.l);
	view.authenticated = conf->auth == RING_AUTH_KEYED;
	term_enter(&w.t);

	uint64_t start = ring_mono_us();
	rc = run_rounds(&w, start, err, errlen);
	term_leave(&w.t);
	default_signals();
	close_pipe();
	if (res) {
		res->rounds = view.rounds;
		res->elapsed_us = ring_mono_us() - start;
		ring_status_poll_traffic(w.p, &res->traffic);
	}
	ring_status_poll_close(w.p);
	return rc;
}
