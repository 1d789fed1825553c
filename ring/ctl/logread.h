/* Reading ringd's JSON log lines back (--log-format json): one record per
 * line, files streamed in bounded chunks, garbage and a half-written last
 * line skipped and counted, several files merged in time order. */
#ifndef RING_LOGREAD_H
#define RING_LOGREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

/* A line longer than this is not one ringd wrote: skipped as garbage. */
#define RING_LOGREAD_LINE_MAX 65536

/* One parsed line. OBJ is the whole object (owned by the record, released
 * by ring_logrec_clear); EVENT points into it. */
struct ring_logrec {
	uint64_t ts;       /* microseconds since 1970, UTC */
	uint32_t node;     /* 0 when the line names no member (a script's note) */
	const char *event;
	json_t *obj;
};

/* Parses one line (without its newline) into REC. Returns 0, or -1 for
 * anything but a JSON object with a valid "ts" string and an "event"
 * string ("node", when present, must be a member id 1..65535). */
int ring_logrec_parse(const char *line, size_t len, struct ring_logrec *rec);
void ring_logrec_clear(struct ring_logrec *rec);
/* Field KEY as an unsigned number into *V; false when absent or not one. */
bool ring_logrec_num(const struct ring_logrec *rec, const char *key, uint64_t *v);
/* Field KEY as a string, or NULL. */
const char *ring_logrec_str(const struct ring_logrec *rec, const char *key);

/* "2026-11-30T09:12:27.609673Z" (the microseconds optional) into
 * microseconds since 1970; false when it is not such a time. */
bool ring_log_parse_ts(const char *s, uint64_t *us);
/* The inverse, into BUF (at least 32 bytes). */
void ring_log_format_ts(uint64_t us, char *buf, size_t len);

/* One log file read as a stream. Only complete lines are returned: a line
 * still being written waits for its newline, unless the reader is told
 * the file is final, when it is counted as truncated and dropped. */
struct ring_logreader {
	char *path;
	int fd;            /* -1 while the file does not exist (yet) */
	dev_t dev;
	ino_t ino;
	off_t off;         /* bytes consumed from the file */
	char *buf;         /* bytes read, not yet returned */
	size_t len, cap, pos;
	bool skipping;     /* inside an overlong line: drop up to its newline */
	size_t lines, garbage, truncated, reopened;
};

/* Opens PATH. With MAY_BE_MISSING a file that does not exist yet is not an
 * error (follow waits for it). Returns 0, or -RING_EIO / -RING_ENOMEM with
 * "PATH: reason" in ERR. */
int ring_logreader_open(struct ring_logreader *r, const char *path, bool may_be_missing,
			char *err, size_t errlen);
void ring_logreader_close(struct ring_logreader *r);

/* The next record into REC: returns 1, or 0 when no complete line is left
 * now (at the end of what the file holds), or -RING_EIO on a read error.
 * FINAL: the file will not grow, so a last line without its newline is a
 * truncated one (counted, skipped). Garbage lines are counted and skipped;
 * at most one read(2) of a bounded chunk happens per call. */
int ring_logreader_next(struct ring_logreader *r, struct ring_logrec *rec, bool final);

/* For following a file: reopens it when it was replaced (another inode)
 * or starts over when it shrank (truncated in place), as tail -F does;
 * opens it when it appeared. Returns true when anything changed. */
bool ring_logreader_recheck(struct ring_logreader *r);

/* Several readers merged in time order: each file's next record is kept at
 * hand and the earliest one is returned. A file whose next line has not
 * been written yet is passed over (follow calls again later). */
struct ring_logmerge {
	struct ring_logreader *r;
	struct ring_logrec *head;
	bool *has;
	size_t n;
};

/* Opens every one of PATHS. Returns 0, or an error as ring_logreader_open. */
int ring_logmerge_open(struct ring_logmerge *m, const char *const *paths, size_t n,
		       bool may_be_missing, char *err, size_t errlen);
void ring_logmerge_close(struct ring_logmerge *m);
/* The earliest next record of all files into REC (the caller clears it):
 * 1, or 0 when no file has a complete line now, or -RING_EIO. */
int ring_logmerge_next(struct ring_logmerge *m, struct ring_logrec *rec, bool final);
/* Totals over the files. */
size_t ring_logmerge_garbage(const struct ring_logmerge *m);

#endif
