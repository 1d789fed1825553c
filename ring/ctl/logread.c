/* Reading ringd's JSON log lines back: parsing one line (jansson), streaming
 * one file in bounded chunks (a file being written, a garbage line, a huge
 * file), and merging several files in time order. No output here: the
 * counts say what was skipped, the callers say it to people. */
#include "ctl/logread.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"

/* Bytes asked of read(2) at a time: large enough that a big file streams
 * fast, small enough that one call stays short. */
#define CHUNK 65536

/* ---- one line ---- */

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int y, int mo, int d)
{
	int yy = y - (mo <= 2);
	int era = (yy >= 0 ? yy : yy - 399) / 400;
	unsigned yoe = (unsigned)(yy - era * 400);
	unsigned doy = (unsigned)((153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1);
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (int64_t)era * 146097 + (int64_t)doe - 719468;
}

bool ring_log_parse_ts(const char *s, uint64_t *us)
{
	int y, mo, d, h, mi, sec, n = 0;
	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
	    n != 19)
		return false;
	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 60 || h < 0 || mi < 0 || sec < 0)
		return false;
	const char *p = s + 19;
	uint64_t frac = 0;
	if (*p == '.') {
		/* Up to six digits count; more are allowed and ignored. */
		int k = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, k++)
			if (k < 6)
				frac = frac * 10 + (uint64_t)(*p - '0');
		if (k == 0)
			return false;
		for (; k < 6; k++)
			frac *= 10;
	}
	if (strcmp(p, "Z") != 0)
		return false;
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	*us = (uint64_t)t * 1000000u + frac;
	return true;
}

void ring_log_format_ts(uint64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000u);
	struct tm tm;
	gmtime_r(&t, &tm);
	char day[24];
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06uZ", day, (unsigned)(us % 1000000u));
}

int ring_logrec_parse(const char *line, size_t len, struct ring_logrec *rec)
{
	memset(rec, 0, sizeof *rec);
	json_error_t jerr;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return -1;
	const char *ts = json_string_value(json_object_get(o, "ts"));
	const char *ev = json_string_value(json_object_get(o, "event"));
	json_t *node = json_object_get(o, "node");
	if (!json_is_object(o) || !ev || !ring_log_parse_ts(ts, &rec->ts) ||
	    (node && (!json_is_integer(node) || json_integer_value(node) < 1 ||
		      json_integer_value(node) > 65535))) {
		json_decref(o);
		memset(rec, 0, sizeof *rec);
		return -1;
	}
	rec->node = node ? (uint32_t)json_integer_value(node) : 0;
	rec->event = ev;
	rec->obj = o;
	return 0;
}

void ring_logrec_clear(struct ring_logrec *rec)
{
	json_decref(rec->obj);
	memset(rec, 0, sizeof *rec);
}

bool ring_logrec_num(const struct ring_logrec *rec, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(rec->obj, key);
	if (!json_is_integer(j) || json_integer_value(j) < 0) {
		/* jansson reads integers as signed 64 bits: a fence of 2^63 or
		 * more arrives as a real. Refuse it rather than guess. */
		return false;
	}
	*v = (uint64_t)json_integer_value(j);
	return true;
}

const char *ring_logrec_str(const struct ring_logrec *rec, const char *key)
{
	return json_string_value(json_object_get(rec->obj, key));
}

/* ---- one file ---- */

static int open_file(struct ring_logreader *r)
{
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	r->fd = fd;
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->off = 0;
	r->len = r->pos = 0;
	r->skipping = false;
	return 0;
}

int ring_logreader_open(struct ring_logreader *r, const char *path, bool may_be_missing,
			char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->path = strdup(path);
	r->cap = CHUNK;
	r->buf = malloc(r->cap);
	if (!r->path || !r->buf) {
		ring_logreader_close(r);
		snprintf(err, errlen, "%s: out of memory", path);
		return -RING_ENOMEM;
	}
	if (open_file(r) < 0 && !(may_be_missing && errno == ENOENT)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ring_logreader_close(r);
		return -RING_EIO;
	}
	return 0;
}

void ring_logreader_close(struct ring_logreader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->path);
	free(r->buf);
	memset(r, 0, sizeof *r);
	r->fd = -1;
}

/* Moves the unreturned bytes to the front and reads one more chunk.
 * Returns the bytes read, 0 at the end of the file, -1 on an error. */
static ssize_t fill(struct ring_logreader *r)
{
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->cap - r->len < CHUNK) {
		/* Only while a line is still under RING_LOGREAD_LINE_MAX: the
		 * buffer never passes that plus a chunk. */
		size_t cap = r->cap * 2;
		char *b = realloc(r->buf, cap);
		if (!b)
			return -1;
		r->buf = b;
		r->cap = cap;
	}
	ssize_t n;
	do
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		r->len += (size_t)n;
		r->off += n;
	}
	return n;
}

int ring_logreader_next(struct ring_logreader *r, struct ring_logrec *rec, bool final)
{
	memset(rec, 0, sizeof *rec);
	if (r->fd < 0)
		return 0;
	/* Each turn either returns, consumes a line, or reads a chunk; the
	 * chunks are bounded by the file's size, and the count bounds the
	 * rest (a file of nothing but newlines). */
	for (size_t turn = 0; turn < 1000000; turn++) {
		char *start = r->buf + r->pos;
		char *nl = memchr(start, '\n', r->len - r->pos);
		if (nl) {
			size_t n = (size_t)(nl - start);
			r->pos += n + 1;
			if (r->skipping) {
				r->skipping = false;
				continue;
			}
			r->lines++;
			if (n == 0)
				continue; /* an empty line: nothing to count */
			if (ring_logrec_parse(start, n, rec) == 0)
				return 1;
			r->garbage++;
			continue;
		}
		if (r->len - r->pos > RING_LOGREAD_LINE_MAX) {
			/* No newline in all that: not a line of ringd's. */
			if (!r->skipping)
				r->garbage++;
			r->skipping = true;
			r->pos = r->len;
		}
		ssize_t got = fill(r);
		if (got < 0)
			return -RING_EIO;
		if (got > 0)
			continue;
		if (final && r->len > r->pos) {
			/* The last line lacks its newline: written half, or cut. */
			if (!r->skipping)
				r->truncated++;
			r->pos = r->len;
			r->skipping = false;
		}
		return 0;
	}
	return 0;
}

bool ring_logreader_recheck(struct ring_logreader *r)
{
	struct stat st;
	if (stat(r->path, &st) < 0)
		return false; /* gone for now: keep reading what we have open */
	if (r->fd >= 0 && st.st_dev == r->dev && st.st_ino == r->ino) {
		if (st.st_size >= r->off)
			return false;
		/* Shrunk in place: it was truncated; read it again from the top. */
		if (lseek(r->fd, 0, SEEK_SET) < 0)
			return false;
		r->off = 0;
		r->len = r->pos = 0;
		r->skipping = false;
		r->reopened++;
		return true;
	}
	int old = r->fd;
	if (open_file(r) < 0)
		return false;
	if (old >= 0) {
		close(old);
		r->reopened++;
	}
	return true;
}

/* ---- several files ---- */

int ring_logmerge_open(struct ring_logmerge *m, const char *const *paths, size_t n,
		       bool may_be_missing, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	m->r = calloc(n ? n : 1, sizeof *m->r);
	m->head = calloc(n ? n : 1, sizeof *m->head);
	m->has = calloc(n ? n : 1, sizeof *m->has);
	if (!m->r || !m->head || !m->has) {
		ring_logmerge_close(m);
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = ring_logreader_open(&m->r[i], paths[i], may_be_missing, err, errlen);
		if (rc < 0) {
			ring_logmerge_close(m);
			return rc;
		}
		m->n++;
	}
	return 0;
}

void ring_logmerge_close(struct ring_logmerge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->has[i])
			ring_logrec_clear(&m->head[i]);
		ring_logreader_close(&m->r[i]);
	}
	free(m->r);
	free(m->head);
	free(m->has);
	memset(m, 0, sizeof *m);
}

int ring_logmerge_next(struct ring_logmerge *m, struct ring_logrec *rec, bool final)
{
	size_t best = m->n;
	for (size_t i = 0; i < m->n; i++) {
		if (!m->has[i]) {
			int rc = ring_logreader_next(&m->r[i], &m->head[i], final);
			if (rc < 0)
				return rc;
			m->has[i] = rc == 1;
		}
		if (m->has[i] && (best == m->n || m->head[i].ts < m->head[best].ts))
			best = i;
	}
	if (best == m->n)
		return 0;
	*rec = m->head[best];
	m->has[best] = false;
	memset(&m->head[best], 0, sizeof m->head[best]);
	return 1;
}

size_t ring_logmerge_garbage(const struct ring_logmerge *m)
{
	size_t g = 0;
	for (size_t i = 0; i < m->n; i++)
		g += m->r[i].garbage + m->r[i].truncated;
	return g;
}
