/* The metrics over HTTP: GET (or HEAD) /metrics on a loopback address, for
 * Prometheus to scrape; other paths are 404, other methods 405. Off unless
 * the member's metrics_listen is set (docs/configuration.md); bounded in
 * connections, request size and time (docs/operations.md, Monitoring). */
#ifndef RING_METRICS_HTTP_H
#define RING_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "common/log.h"

struct ring_metrics_http;

/* Fills BUF with the exposition; returns its length like snprintf. */
typedef int (*ring_metrics_fn)(void *arg, char *buf, size_t len);

/* Listens on HOST (an address literal) and PORT on BASE and answers
 * GET /metrics with FN(ARG), one request per connection; what strangers
 * cause (connections turned away, clients dropped, accept errors) goes to
 * LOG at most once a second each. Returns 0, or -RING_ENOMEM, -RING_ECONFIG
 * (HOST is no address) or -RING_EIO (cannot listen) with the reason in ERR.
 * Free *OUT even after a failure. */
int ring_metrics_http_new(struct ring_metrics_http **out, struct event_base *base,
			  const char *host, uint16_t port, ring_metrics_fn fn, void *arg,
			  struct ring_log *log, char *err, size_t errlen);

/* Closes the listener and every connection. NULL does nothing. */
void ring_metrics_http_free(struct ring_metrics_http *h);

#endif
