/* One log call for the daemon: text lines for people or JSON lines for
 * tools, UTC timestamps with microseconds. The level is checked before
 * anything is formatted, so verbose events cost nothing when off. */
#ifndef RING_LOG_H
#define RING_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "node.h"

enum ring_log_format { RING_LOG_TEXT, RING_LOG_JSON };

struct ring_log {
	FILE *out;
	bool own;      /* opened by ring_log_open: closed by ring_log_close */
	enum ring_log_format format;
	bool verbose;
	uint16_t node;
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
void ring_log_close(struct ring_log *lg);

/* "text" or "json" into *format; returns false for anything else. */
bool ring_log_parse_format(const char *s, enum ring_log_format *format);

/* One event with its fields; VERBOSE events are dropped unless -v. */
void ring_log_emit(struct ring_log *lg, const char *event, bool verbose,
		   const struct ring_log_field *fields, size_t n);

/* A LOG action of the protocol core, with its fields named by
 * ring_log_info(): member ids as numbers, fences also as epoch:count in
 * text, error codes as their message. */
void ring_log_core(struct ring_log *lg, const struct ring_action *action);

#endif
