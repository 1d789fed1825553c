/* The local control protocol on each member's Unix socket: one command per
 * line, one reply per line (docs/control.md). Parsing and formatting only;
 * ctl_server.c owns the sockets. */
#ifndef RING_CONTROL_H
#define RING_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/layout.h"
#include "core/node.h"

#define RING_CTL_LINE_MAX 512 /* a longer line is refused and the client dropped */

enum ring_ctl_cmd {
	RING_CTL_ACQUIRE, /* ACQUIRE [timeout_ms] -> GRANTED fence epoch | TIMEOUT | ERR reason */
	RING_CTL_RELEASE, /* RELEASE -> OK | ERR reason */
	RING_CTL_STATUS,  /* STATUS -> one JSON line */
	RING_CTL_INJECT,  /* INJECT what [arg] -> OK | ERR reason */
	RING_CTL_METRICS, /* METRICS -> Prometheus text, lines up to RING_CTL_METRICS_END | ERR reason */
	RING_CTL_RENEW,   /* RENEW -> RENEWED fence ms_left | ERR not holding */
	RING_CTL_TRY,     /* TRY [timeout_ms] -> GRANTED fence epoch | BUSY | TIMEOUT | ERR reason */
};

/* The last line of a METRICS reply. A comment to Prometheus (format
 * 0.0.4), so the reply stays valid exposition text with it; and the end
 * marker of OpenMetrics, which a reader of either format knows. */
#define RING_CTL_METRICS_END "# EOF"

#define RING_INJECTS(X)                                        \
	X(DROP_TOKEN, "drop-token", false, "lose the next token it passes") \
	X(LOSS, "loss", true, "drop PERCENT of its outgoing datagrams")    \
	X(BLOCK, "block", true, "drop every datagram to and from member PEER") \
	X(UNBLOCK, "unblock", true, "undo block PEER")                       \
	X(PAUSE, "pause", true, "stall its event loop for MS milliseconds")  \
	X(CLEAR, "clear", false, "undo every fault")

enum ring_inject {
#define RING_INJECT_ENUM_(name, word, arg, help) RING_INJECT_##name,
	RING_INJECTS(RING_INJECT_ENUM_)
#undef RING_INJECT_ENUM_
};

struct ring_ctl_request {
	enum ring_ctl_cmd cmd;
	bool has_timeout;    /* ACQUIRE, TRY */
	uint64_t timeout_ms;
	enum ring_inject inject; /* INJECT */
	uint32_t arg;
};

/* Parses one line (without its newline). Returns 0, or -RING_EFIELD with a
 * reason for the client in ERR. */
int ring_ctl_parse(const char *line, struct ring_ctl_request *req, char *err, size_t errlen);

/* Parses the words of an inject ("loss 10", "drop-token") into REQ. */
int ring_ctl_parse_inject(const char *const *words, size_t n, struct ring_ctl_request *req,
			  char *err, size_t errlen);

/* The inject's word ("drop-token"), and a one-line help for --help. */
const char *ring_inject_name(enum ring_inject what);
void ring_inject_help(char *buf, size_t len);

/* The status as one JSON object (SPEC.md "Status"), with a newline, into
 * BUF; AUTHENTICATED says whether the member's datagrams are (the core
 * does not know: that is the daemon's key). Returns the length, truncated
 * like snprintf. */
int ring_ctl_status_json(char *buf, size_t len, const struct ring_layout *layout,
			 const struct ring_status *st, bool authenticated);

/* The largest metrics page a member serves (ringd's ring_metrics_format
 * always fits): what a reader of METRICS must make room for. */
#define RING_METRICS_MAX 32768

#endif
