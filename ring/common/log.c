/* Log lines: text aligned for reading at a glance, or one JSON object per
 * line with ts, node, event and the event's fields. Lines are formatted
 * straight into the log's buffer and written whole by ring_log_flush. */
#include "common/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"

int ring_log_open(struct ring_log *lg, const char *path, enum ring_log_format format,
		  bool verbose, uint16_t node, char *err, size_t errlen)
{
	memset(lg, 0, sizeof *lg);
	lg->format = format;
	lg->verbose = verbose;
	lg->node = node;
	if (!path) {
		lg->out = stderr;
	} else {
		lg->out = fopen(path, "a");
		if (!lg->out) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -RING_EIO;
		}
		lg->own = true;
	}
	/* JSON lines stay JSON: a prefix would break every reader of them. */
	lg->journal = format == RING_LOG_TEXT && ring_log_is_journal(fileno(lg->out));
	/* No stdio buffering to set: lines go out by write(2) on the
	 * descriptor, whole, when the loop flushes (tools tail the file). */
	return 0;
}

/* Every byte of BUF, across short writes and signals. */
static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a full disk or a closed pipe: the lines are lost */
		buf += w;
		len -= (size_t)w;
	}
}

void ring_log_flush(struct ring_log *lg)
{
	if (lg->out && lg->len > 0)
		write_all(fileno(lg->out), lg->buf, lg->len);
	lg->len = 0;
}

void ring_log_on_pending(struct ring_log *lg, void (*fn)(void *arg), void *arg)
{
	lg->pending = fn;
	lg->pending_arg = arg;
}

void ring_log_close(struct ring_log *lg)
{
	ring_log_flush(lg);
	if (lg->own && lg->out)
		fclose(lg->out);
	lg->out = NULL;
	lg->own = false;
}

bool ring_log_is_journal(int fd)
{
	/* systemd.exec(5): JOURNAL_STREAM is "DEVICE:INODE" of the stream
	 * it connected; a descriptor redirected since is no longer it. */
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	int used = 0;
	struct stat st;
	if (!env || sscanf(env, "%llu:%llu%n", &dev, &ino, &used) != 2 || env[used] != '\0' ||
	    fd < 0 || fstat(fd, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* Events that need a look (warning) or mean the member stopped or an
 * operator's action failed (err); the rest is notice or info, and token
 * hops are debug. docs/operations.md lists them for journalctl -p. */
static const struct {
	const char *event;
	int priority;
} priorities[] = {
	{"epoch_exhausted", 3},   {"keys_reload_failed", 3},   {"fatal", 3},
	{"loss_suspect", 4},      {"successor_skip", 4},       {"token_stale_drop", 4},
	{"bad_packet", 4},        {"bad_packet_unlogged", 4},  {"auth_fail", 4},
	{"config_mismatch", 4},   {"config_mismatch_unlogged", 4}, {"pause_detected", 4},
	{"version_mismatch", 4},  {"version_mismatch_unlogged", 4},
	{"lease_expired", 4},     {"no_quorum", 4},            {"leave_timeout", 4},
	{"control_accept_error", 4}, {"auth_off", 4},   {"epoch_out_of_reach", 4},
	{"metrics_accept_error", 4}, {"metrics_busy", 4},   {"metrics_client_dropped", 4},
	{"retransmit", 5},        {"election_start", 5},       {"election_won", 5},
	{"token_regen", 5},       {"epoch_adopt", 5},          {"member_leave", 5},
	{"member_rejoin", 5},     {"inject", 5},
	{"token_recv", 7},        {"token_pass", 7},
};

int ring_log_priority(const char *event, const struct ring_log_field *f, size_t n)
{
	if (strcmp(event, "node_stop") == 0)
		for (size_t i = 0; i < n; i++)
			if (strcmp(f[i].key, "reason") == 0 && f[i].kind == RING_LF_STR && f[i].str &&
			    strcmp(f[i].str, "error") == 0)
				return 3;
	for (size_t i = 0; i < sizeof priorities / sizeof priorities[0]; i++)
		if (strcmp(event, priorities[i].event) == 0)
			return priorities[i].priority;
	return 6;
}

bool ring_log_parse_format(const char *s, enum ring_log_format *format)
{
	if (strcmp(s, "text") == 0)
		*format = RING_LOG_TEXT;
	else if (strcmp(s, "json") == 0)
		*format = RING_LOG_JSON;
	else
		return false;
	return true;
}

/* ---- formatting into a bounded area ----
 *
 * By hand rather than with stdio: under contention the log's fprintf and
 * strftime were about half of ringd's user-space instructions. The bytes
 * are printf's, "%-5u" and "%-17s" included (test/unit/test_log.c). */

/* Where a line is formatted. LEN counts every byte asked for, also past
 * CAP, so that a line that did not fit knows how much room it needs. */
struct line {
	char *p;
	size_t len, cap;
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->len + n <= l->cap)
		memcpy(l->p + l->len, s, n);
	l->len += n;
}

static void put_c(struct line *l, char c)
{
	put(l, &c, 1);
}

static void put_s(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* S, then spaces up to WIDTH: printf's %-*s. */
static void put_left(struct line *l, const char *s, size_t n, size_t width)
{
	put(l, s, n);
	for (; n < width; n++)
		put_c(l, ' ');
}

/* V in decimal, then spaces up to WIDTH: printf's %-*llu. */
static void put_u64(struct line *l, uint64_t v, size_t width)
{
	char d[20];
	size_t n = sizeof d;
	do {
		d[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_left(l, d + n, sizeof d - n, width);
}

static void put_json_string(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	put_c(l, '"');
	const unsigned char *p = (const unsigned char *)s;
	for (;;) {
		/* The run of characters that need no escape, copied at once. */
		const unsigned char *q = p;
		while (*q >= 0x20 && *q != '"' && *q != '\\')
			q++;
		put(l, (const char *)p, (size_t)(q - p));
		if (!*q)
			break;
		if (*q == '"' || *q == '\\') {
			char e[2] = {'\\', (char)*q};
			put(l, e, 2);
		} else {
			char e[6] = {'\\', 'u', '0', '0', hex[*q >> 4], hex[*q & 15]};
			put(l, e, 6);
		}
		p = q + 1;
	}
	put_c(l, '"');
}

/* "2024-05-01T12:00:00.123456Z" into BUF (32 bytes); returns its length.
 * The part up to the seconds is formatted again only when the second
 * changes. */
static size_t timestamp(struct ring_log *lg, char *buf)
{
	struct timespec ts;
	if (lg->clock)
		lg->clock(&ts);
	else
		clock_gettime(CLOCK_REALTIME, &ts);
	if (lg->ts_len == 0 || ts.tv_sec != lg->ts_sec) {
		struct tm tm;
		gmtime_r(&ts.tv_sec, &tm);
		lg->ts_len = strftime(lg->ts_text, sizeof lg->ts_text - 9, "%Y-%m-%dT%H:%M:%S", &tm);
		lg->ts_sec = ts.tv_sec;
	}
	size_t n = lg->ts_len;
	memcpy(buf, lg->ts_text, n);
	long us = ts.tv_nsec / 1000;
	buf[n++] = '.';
	for (int k = 5; k >= 0; k--, us /= 10)
		buf[n + (size_t)k] = (char)('0' + us % 10);
	n += 6;
	buf[n++] = 'Z';
	return n;
}

static void format_json(const struct ring_log *lg, struct line *l, const char *ts, size_t tn,
			const char *event, const struct ring_log_field *f, size_t n)
{
	put_s(l, "{\"ts\":\"");
	put(l, ts, tn);
	put_s(l, "\",\"node\":");
	put_u64(l, lg->node, 0);
	put_s(l, ",\"event\":");
	put_json_string(l, event);
	for (size_t i = 0; i < n; i++) {
		put_c(l, ',');
		put_json_string(l, f[i].key);
		put_c(l, ':');
		if (f[i].kind == RING_LF_STR)
			put_json_string(l, f[i].str ? f[i].str : "");
		else
			put_u64(l, f[i].num, 0);
	}
	put(l, "}\n", 2);
}

static void format_text(const struct ring_log *lg, struct line *l, const char *ts, size_t tn,
			const char *event, const struct ring_log_field *f, size_t n)
{
	if (lg->journal) {
		/* sd-daemon(3): "<N>" starts a line the journal stores at
		 * priority N, so that journalctl -p warning finds it. */
		char p[3] = {'<', (char)('0' + ring_log_priority(event, f, n)), '>'};
		put(l, p, 3);
	}
	put(l, ts, tn);
	put_s(l, "  node ");
	put_u64(l, lg->node, 5);
	put_c(l, ' ');
	put_left(l, event, strlen(event), 17);
	for (size_t i = 0; i < n; i++) {
		put_c(l, ' ');
		put_s(l, f[i].key);
		put_c(l, '=');
		if (f[i].kind == RING_LF_STR) {
			put_s(l, f[i].str ? f[i].str : "");
		} else if (f[i].kind == RING_LF_FENCE) {
			put_u64(l, f[i].num >> 32, 0);
			put_c(l, ':');
			put_u64(l, f[i].num & 0xffffffffu, 0);
		} else {
			put_u64(l, f[i].num, 0);
		}
	}
	put_c(l, '\n');
}

static void format_line(const struct ring_log *lg, struct line *l, const char *ts, size_t tn,
			const char *event, const struct ring_log_field *f, size_t n)
{
	if (lg->format == RING_LOG_JSON)
		format_json(lg, l, ts, tn, event, f, n);
	else
		format_text(lg, l, ts, tn, event, f, n);
}

void ring_log_emit(struct ring_log *lg, const char *event, bool verbose,
		   const struct ring_log_field *f, size_t n)
{
	if (!lg->out || (verbose && !lg->verbose))
		return;
	char ts[32];
	size_t tn = timestamp(lg, ts);
	struct line l = {lg->buf + lg->len, 0, sizeof lg->buf - lg->len};
	format_line(lg, &l, ts, tn, event, f, n);
	if (l.len > l.cap) {
		/* It did not fit behind the lines waiting: they go out first,
		 * whole, and the line is formatted again into the empty buffer,
		 * or, longer than the buffer, on its own and written at once. */
		ring_log_flush(lg);
		size_t need = l.len;
		l = (struct line){lg->buf, 0, sizeof lg->buf};
		if (need > l.cap) {
			l = (struct line){malloc(need), 0, need};
			if (!l.p)
				return; /* out of memory: this line is lost */
			format_line(lg, &l, ts, tn, event, f, n);
			write_all(fileno(lg->out), l.p, l.len);
			free(l.p);
			return;
		}
		format_line(lg, &l, ts, tn, event, f, n);
	}
	lg->len += l.len;
	if (lg->pending)
		lg->pending(lg->pending_arg);
}

void ring_log_core(struct ring_log *lg, const struct ring_action *a, const char *addr)
{
	const struct ring_log_info *info = ring_log_info(a->u.log.event);
	if (!lg->out || (info->verbose && !lg->verbose))
		return;
	struct ring_log_field f[4];
	size_t n = 0;
	for (size_t i = 0; i < 3 && info->field[i]; i++) {
		const char *key = info->field[i];
		uint64_t v = a->u.log.field[i];
		if (strcmp(key, "reason") == 0)
			f[n++] = RING_LF_S(key, ring_strerror(-(int)v));
		else if (strcmp(key, "fence") == 0)
			f[n++] = (struct ring_log_field){.key = key, .kind = RING_LF_FENCE, .num = v};
		else
			f[n++] = RING_LF_N(key, v);
	}
	if (addr)
		f[n++] = RING_LF_S("addr", addr);
	ring_log_emit(lg, info->name, info->verbose, f, n);
}
