/* ringctl metrics: asks a member's control socket for METRICS and copies the
 * Prometheus text to a stream, without the reply's end marker. */
#ifndef RING_METRICS_FETCH_H
#define RING_METRICS_FETCH_H

#include <stddef.h>
#include <stdio.h>

/* Asks METRICS on FD, connected to the control socket at PATH (named in
 * ERR), and writes the reply up to its end marker to OUT; closes FD.
 * Waits at most TIMEOUT_MS in all. Returns 0; -RING_EIO when the member
 * went away (ERR says which); -RING_EFIELD when the member answered ERR
 * or the reply was cut short or too long (ERR holds it). */
int ring_metrics_fetch(int fd, const char *path, FILE *out, int timeout_ms, char *err,
		       size_t errlen);

#endif
