/* The metrics' HTTP listener on evhttp: one path, GET and HEAD only, small
 * limits, so that a stray client on the host cannot make the member work
 * for it beyond formatting one page. */
#include "metrics_http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "err.h"
#include "metrics.h"

struct ring_metrics_http {
	struct evhttp *http;
	ring_metrics_fn fn;
	void *arg;
};

static void request_cb(struct evhttp_request *req, void *arg)
{
	struct ring_metrics_http *h = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	if (!path || strcmp(path, "/metrics") != 0) {
		evhttp_send_error(req, HTTP_NOTFOUND, "only /metrics is here");
		return;
	}
	struct evbuffer *body = evbuffer_new();
	char *buf = malloc(RING_METRICS_MAX);
	int n = buf ? h->fn(h->arg, buf, RING_METRICS_MAX) : -1;
	if (!body || n <= 0 || n >= RING_METRICS_MAX || evbuffer_add(body, buf, (size_t)n) != 0) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
	} else {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
				  "text/plain; version=0.0.4; charset=utf-8");
		evhttp_send_reply(req, HTTP_OK, "OK", body);
	}
	free(buf);
	if (body)
		evbuffer_free(body);
}

int ring_metrics_http_new(struct ring_metrics_http **out, struct event_base *base,
			  const char *host, uint16_t port, ring_metrics_fn fn, void *arg, char *err,
			  size_t errlen)
{
	struct ring_metrics_http *h = calloc(1, sizeof *h);
	*out = h;
	if (!h || !(h->http = evhttp_new(base))) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	h->fn = fn;
	h->arg = arg;
	/* Other methods get 405 from evhttp itself; a request is a line and
	 * a few headers, and a client that stalls is dropped. */
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h->http, 8192);
	evhttp_set_max_body_size(h->http, 1024);
	evhttp_set_timeout(h->http, 10);
	evhttp_set_gencb(h->http, request_cb, h);
	if (!evhttp_bind_socket_with_handle(h->http, host, port)) {
		snprintf(err, errlen, "cannot listen for metrics on %s%s%s:%u: %s",
			 strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port,
			 strerror(errno));
		return -RING_EIO;
	}
	return 0;
}

void ring_metrics_http_free(struct ring_metrics_http *h)
{
	if (!h)
		return;
	if (h->http)
		evhttp_free(h->http);
	free(h);
}
