/* The control protocol's words: commands in, replies and the JSON status
 * out. Nothing here trusts its input: every line is bounded and parsed
 * strictly. */
#include "common/control.h"

#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "common/parse.h"

static const struct {
	const char *word;
	bool arg;
	const char *help;
} injects[] = {
#define RING_INJECT_ROW_(name, word, arg, help) {word, arg, help},
	RING_INJECTS(RING_INJECT_ROW_)
#undef RING_INJECT_ROW_
};
#define N_INJECTS (sizeof injects / sizeof injects[0])

const char *ring_inject_name(enum ring_inject what)
{
	return (size_t)what < N_INJECTS ? injects[what].word : "unknown";
}

void ring_inject_help(char *buf, size_t len)
{
	size_t off = 0;
	for (size_t i = 0; i < N_INJECTS && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "    %-11s%-8s %s\n", injects[i].word,
					injects[i].arg ? (i == RING_INJECT_LOSS    ? "PERCENT"
							  : i == RING_INJECT_PAUSE ? "MS"
										   : "PEER")
						       : "",
					injects[i].help);
}

int ring_ctl_parse_inject(const char *const *w, size_t n, struct ring_ctl_request *req,
			  char *err, size_t errlen)
{
	req->cmd = RING_CTL_INJECT;
	if (n == 0) {
		snprintf(err, errlen, "inject what?");
		return -RING_EFIELD;
	}
	for (size_t i = 0; i < N_INJECTS; i++) {
		if (strcmp(w[0], injects[i].word) != 0)
			continue;
		req->inject = (enum ring_inject)i;
		if (!injects[i].arg) {
			if (n != 1) {
				snprintf(err, errlen, "%s takes no argument", injects[i].word);
				return -RING_EFIELD;
			}
			return 0;
		}
		uint64_t max = i == RING_INJECT_LOSS ? 100 : i == RING_INJECT_PAUSE ? 600000 : 65535;
		uint64_t v;
		if (n != 2 || !ring_parse_u64(w[1], max, &v) ||
		    ((i == RING_INJECT_BLOCK || i == RING_INJECT_UNBLOCK) && v == 0)) {
			snprintf(err, errlen, "%s needs a number 0..%llu", injects[i].word,
				 (unsigned long long)max);
			return -RING_EFIELD;
		}
		req->arg = (uint32_t)v;
		return 0;
	}
	snprintf(err, errlen, "unknown inject '%.40s'", w[0]);
	return -RING_EFIELD;
}

int ring_ctl_parse(const char *line, struct ring_ctl_request *req, char *err, size_t errlen)
{
	char copy[RING_CTL_LINE_MAX];
	const char *words[4];
	size_t n = 0;
	memset(req, 0, sizeof *req);
	if (strlen(line) >= sizeof copy) {
		snprintf(err, errlen, "line too long");
		return -RING_EFIELD;
	}
	strcpy(copy, line);
	for (char *save = NULL, *w = strtok_r(copy, " \t\r", &save); w;
	     w = strtok_r(NULL, " \t\r", &save)) {
		if (n == sizeof words / sizeof words[0]) {
			snprintf(err, errlen, "too many words");
			return -RING_EFIELD;
		}
		words[n++] = w;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty command");
		return -RING_EFIELD;
	}
	if (strcmp(words[0], "ACQUIRE") == 0 || strcmp(words[0], "TRY") == 0) {
		req->cmd = words[0][0] == 'A' ? RING_CTL_ACQUIRE : RING_CTL_TRY;
		if (n == 1)
			return 0;
		if (n == 2 && ring_parse_u64(words[1], UINT32_MAX, &req->timeout_ms)) {
			req->has_timeout = true;
			return 0;
		}
		snprintf(err, errlen, "usage: %s [timeout_ms]", words[0]);
		return -RING_EFIELD;
	}
	if (strcmp(words[0], "RELEASE") == 0 || strcmp(words[0], "STATUS") == 0 ||
	    strcmp(words[0], "METRICS") == 0 || strcmp(words[0], "RENEW") == 0) {
		req->cmd = strcmp(words[0], "RELEASE") == 0  ? RING_CTL_RELEASE
			   : strcmp(words[0], "RENEW") == 0  ? RING_CTL_RENEW
			   : words[0][0] == 'S'		     ? RING_CTL_STATUS
							     : RING_CTL_METRICS;
		if (n == 1)
			return 0;
		snprintf(err, errlen, "%s takes no argument", words[0]);
		return -RING_EFIELD;
	}
	if (strcmp(words[0], "INJECT") == 0)
		return ring_ctl_parse_inject(words + 1, n - 1, req, err, errlen);
	snprintf(err, errlen, "unknown command '%.40s'", words[0]);
	return -RING_EFIELD;
}

#define ADD(...)                                                              \
	do {                                                                  \
		int k_ = snprintf(buf + (off < len ? off : len), off < len ? len - off : 0, \
				  __VA_ARGS__);                               \
		if (k_ > 0)                                                   \
			off += (size_t)k_;                                    \
	} while (0)

int ring_ctl_status_json(char *buf, size_t len, const struct ring_layout *layout,
			 const struct ring_status *st, bool authenticated)
{
	size_t off = 0;
	ADD("{\"node\":%u,\"ring\":\"%s\",\"epoch\":%u,\"state\":\"%s\",\"fence\":%llu,"
	    "\"successor\":%u,\"alive\":[",
	    st->node, layout->name, st->epoch, ring_state_name(st->state),
	    (unsigned long long)st->fence, st->successor);
	bool first = true;
	for (size_t i = 0; i < layout->n; i++) {
		if (!ring_set_has(&st->alive, i))
			continue;
		ADD("%s%u", first ? "" : ",", layout->members[i].id);
		first = false;
	}
	ADD("],\"token_seen_ms_ago\":");
	if (st->token_seen_ms_ago == UINT64_MAX)
		ADD("null");
	else
		ADD("%llu", (unsigned long long)st->token_seen_ms_ago);
	ADD(",\"has_token\":%s,\"parked\":%s,\"in_cs\":%s,\"queued\":%zu,\"authenticated\":%s",
	    st->has_token ? "true" : "false", st->parked ? "true" : "false",
	    st->granted ? "true" : "false", st->queued, authenticated ? "true" : "false");
#define RING_JSON_COUNTER_(name) ADD(",\"" #name "\":%llu", (unsigned long long)st->counters.name);
	RING_COUNTERS(RING_JSON_COUNTER_)
#undef RING_JSON_COUNTER_
	ADD("}\n");
	return (int)off;
}
