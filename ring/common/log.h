/* One log call for the daemon: text lines for people or JSON lines for
 * tools, UTC timestamps with microseconds. The level is checked before
 * anything is formatted, so verbose events cost nothing when off. Lines are
 * kept in memory and written whole, many with one write(2), by
 * ring_log_flush: the daemon flushes once per loop iteration. */
#ifndef RING_LOG_H
#define RING_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "core/node.h"

enum ring_log_format { RING_LOG_TEXT, RING_LOG_JSON };

/* Lines waiting for a flush, in bytes. A contended loop iteration logs a
 * few lines, a -v one with a full receive batch some hundred; a line
 * longer than this is still written whole, on its own. */
#define RING_LOG_BUF 16384

struct ring_log {
	FILE *out;     /* written with write(2) on its descriptor, never stdio */
	bool own;      /* opened by ring_log_open: closed by ring_log_close */
	enum ring_log_format format;
	bool journal;  /* text lines to the journal: each starts with "<priority>" */
	bool verbose;
	uint16_t node;
	/* Whole lines not yet written. */
	char buf[RING_LOG_BUF];
	size_t len;
	/* The timestamp up to the seconds, formatted once a second: strftime
	 * and gmtime cost more than the rest of a line. */
	time_t ts_sec;
	char ts_text[32];
	size_t ts_len; /* 0: nothing formatted yet */
	/* Called after a line is buffered (see ring_log_on_pending). */
	void (*pending)(void *arg);
	void *pending_arg;
	/* The wall clock; NULL reads CLOCK_REALTIME. Tests set a fake one. */
	void (*clock)(struct timespec *ts);
};

enum ring_log_kind { RING_LF_NUM, RING_LF_STR, RING_LF_FENCE };

struct ring_log_field {
	const char *key;
	enum ring_log_kind kind;
	uint64_t num;
	const char *str;
};

#define RING_LF_N(k, v) ((struct ring_log_field){.key = (k), .kind = RING_LF_NUM, .num = (v)})
#define RING_LF_S(k, v) ((struct ring_log_field){.key = (k), .kind = RING_LF_STR, .str = (v)})

/* Logs to PATH (appending) or to stderr when PATH is NULL. Returns 0, or
 * -RING_EIO with "PATH: reason" in ERR. */
int ring_log_open(struct ring_log *lg, const char *path, enum ring_log_format format,
		  bool verbose, uint16_t node, char *err, size_t errlen);
/* Writes what is buffered, then closes a file ring_log_open opened. Closing
 * a closed (or zeroed) log does nothing. */
void ring_log_close(struct ring_log *lg);

/* Writes the buffered lines, whole, with as few write(2) calls as the
 * descriptor takes. A failed write drops them: logging never stops ringd. */
void ring_log_flush(struct ring_log *lg);

/* FN(ARG) is called after every emit that leaves lines in the buffer, so
 * that the event loop can flush once at the end of its iteration (daemon.c
 * activates an event). FN NULL: nobody is told; the buffer is still
 * written when it fills, on ring_log_flush and on close. */
void ring_log_on_pending(struct ring_log *lg, void (*fn)(void *arg), void *arg);

/* Whether FD is the stream systemd connected to the journal: JOURNAL_STREAM
 * is set and names FD's device and inode. */
bool ring_log_is_journal(int fd);

/* The syslog priority of EVENT with its fields: 3 err (the member stops, or
 * an operator's action failed), 4 warning (needs a look), 5 notice (the
 * ring recovering by itself), 6 info, 7 debug (token hops). */
int ring_log_priority(const char *event, const struct ring_log_field *fields, size_t n);

/* "text" or "json" into *format; returns false for anything else. */
bool ring_log_parse_format(const char *s, enum ring_log_format *format);

/* One event with its fields; VERBOSE events are dropped unless -v. The
 * line goes to the buffer; a full buffer is written first. */
void ring_log_emit(struct ring_log *lg, const char *event, bool verbose,
		   const struct ring_log_field *fields, size_t n);

/* A LOG action of the protocol core, with its fields named by
 * ring_log_info(): member ids as numbers, fences also as epoch:count in
 * text, error codes as their message. ADDR, when not NULL, is added as
 * "addr": the source (ip:port) of the datagram the event is about, which
 * the core never sees. */
void ring_log_core(struct ring_log *lg, const struct ring_action *action, const char *addr);

#endif
