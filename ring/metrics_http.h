/* The metrics over HTTP (libevent's evhttp): GET /metrics on a loopback
 * address, for Prometheus to scrape; anything else is 404. Off unless the
 * member's metrics_listen is set (docs/configuration.md). */
#ifndef RING_METRICS_HTTP_H
#define RING_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

struct ring_metrics_http;

/* Fills BUF with the exposition; returns its length like snprintf. */
typedef int (*ring_metrics_fn)(void *arg, char *buf, size_t len);

/* Listens on HOST (an address literal) and PORT on BASE and answers
 * GET /metrics with FN(ARG). Returns 0, or -RING_ENOMEM or -RING_EIO
 * (cannot listen) with the reason in ERR. Free *OUT even after a failure. */
int ring_metrics_http_new(struct ring_metrics_http **out, struct event_base *base,
			  const char *host, uint16_t port, ring_metrics_fn fn, void *arg, char *err,
			  size_t errlen);

/* Closes the listener and every connection. NULL does nothing. */
void ring_metrics_http_free(struct ring_metrics_http *h);

#endif
