/* The reference fenced resource: a text file that takes appended lines only
 * from holders whose fence is not older than the newest it has seen (SPEC.md,
 * `ringctl fenced-append`), and the parsing of fences given on a command line. */
#ifndef RING_FENCE_FILE_H
#define RING_FENCE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Appends TEXT and a newline to FILE when FENCE >= the highest fence FILE has
 * accepted; an equal fence is accepted, so one grant may write several lines.
 * The highest fence is kept in FILE.fence (decimal and a newline; missing
 * means 0), and the check and both writes happen under an exclusive flock()
 * of FILE.lock, which is created 0644 and never removed. On return both the
 * line and the fence are on disk (fsync).
 *
 * Returns 0 and sets *HIGHEST to FENCE; -RING_ESTALE, sets *HIGHEST to the
 * newer fence and says "stale fence F < H"; -RING_EFIELD when TEXT holds a
 * newline or FILE is not a file name; -RING_EIO when FILE.fence is not a
 * number or a system call fails; -RING_ENOMEM. Every error fills ERR.
 * HIGHEST may be NULL. */
int ring_fenced_append(const char *file, const char *text, uint64_t fence,
		       uint64_t *highest, char *err, size_t errlen);

/* Parses S as a fence: decimal digits only (no sign, no spaces, no junk),
 * at most UINT64_MAX. Returns 0 and sets *OUT, or -RING_EFIELD. */
int ring_fence_parse(const char *s, uint64_t *out);

#endif
