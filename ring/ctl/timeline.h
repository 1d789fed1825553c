/* `ringctl timeline`: members' JSON logs drawn as one self-contained SVG,
 * one lane per member on a shared time axis: holding, critical regions,
 * recoveries, crashes; dense stretches aggregated per pixel column. */
#ifndef RING_TIMELINE_H
#define RING_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the picture starts or ends: microseconds after the first event, or
 * (absolute) a UTC time in microseconds since 1970. */
struct ring_timeline_bound {
	bool set;
	bool absolute;
	uint64_t us;
};

struct ring_timeline_opts {
	struct ring_timeline_bound from, to;
	const char *title; /* NULL: "ring timeline" */
};

struct ring_timeline_result {
	size_t members, events, skipped, marks;
	uint64_t span_us;  /* of the window drawn */
	size_t bytes;      /* of the SVG written */
	bool aggregated;   /* some lane was too dense to draw event by event */
};

/* "12.5" (seconds after the first event) or "2026-01-02T03:04:05[.ffffff]Z"
 * into *B. Returns 0, or -1 for anything else. */
int ring_timeline_parse_bound(const char *s, struct ring_timeline_bound *b);

/* Reads FILES twice, streaming (the first pass finds the time span and the
 * members, the second draws), and writes the SVG to OUT. Returns 0, or
 * -RING_EIO / -RING_ENOMEM with ERR set. RES may be NULL. */
int ring_timeline_write(const char *const *files, size_t n, const struct ring_timeline_opts *opts,
			const char *out, struct ring_timeline_result *res, char *err, size_t errlen);

#endif
