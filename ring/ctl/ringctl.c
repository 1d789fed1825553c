/* ringctl: the client and tools. Talks to one member over its control
 * socket (status, run, inject), to every member over UDP (ring), or to no
 * member at all (fenced-append, the reference fenced resource). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl/access_hint.h"
#include "common/auth.h"
#include "common/clock.h"
#include "common/conf.h"
#include "common/control.h"
#include "core/err.h"
#include "common/parse.h"
#include "ctl/fence_file.h"
#include "ctl/metrics_fetch.h"
#include "ctl/follow.h"
#include "ctl/job.h"
#include "ctl/lease_advice.h"
#include "common/net.h"
#include "core/node.h"
#include "common/state_dir.h"
#include "ctl/status_poll.h"
#include "ctl/timeline.h"
#include "ctl/trace.h"
#include "common/version.h"
#include "ctl/watch_loop.h"
#include "core/wire.h"

enum {
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_STALE = 3,
	EXIT_UNREACHABLE = 69,
	EXIT_LEASE_LOST = 70,
	EXIT_TIMEOUT = 75,
	EXIT_CONFIG = 78,
};

#define RUN_USAGE "run [-t MS] [--try] [--kill-after MS] [--conflict-exit-code N] -- CMD [ARG...]"

/* Each command's synopsis (the lines of usage(), "ringctl ..." and their
 * continuations) and what it does, if more needs saying: `ringctl --help`
 * prints them all, `ringctl CMD --help` its own. */
static const struct help {
	const char *name;
	const char *synopsis;
	const char *details;
} helps[] = {
	{"status", "ringctl -c CONFIG -n ID status [--json]       this member's state\n", NULL},
	{"ring", "ringctl -c CONFIG ring [--json]               every member's state, over UDP\n", NULL},
	{"lease-advice",
	 "ringctl -c CONFIG lease-advice [--json]       hold times, pauses and the lease\n"
	 "                            they imply, from every member over UDP\n",
	 "lease-advice: asks every member over UDP for the hold times of its clients\n"
	 "(GRANTED to release: p50, p99, p99.9, max) and the longest pause it detected,\n"
	 "and advises lease_ms >= 3 x the longest pause and >= 1.5 x the highest p99.9,\n"
	 "max_hold_ms >= 2 x the longest hold, each rounded up to a 1-2-5 step, with one\n"
	 "line of reasoning each; fewer than 20 holds in all: not enough data. Down\n"
	 "members are shown as down; exit 69 when none answers.\n"},
	{"watch",
	 "ringctl -c CONFIG watch [--interval MS] [--count N] [--plain] [--stats]\n"
	 "                            live view of every member, over UDP\n",
	 "watch: asks every member for its status every MS milliseconds (default 500,\n"
	 "50..60000) and shows who holds the lock (the member whose client is in the\n"
	 "critical region, its fence and for how long; or free), where the token is,\n"
	 "and one line per member: state, the token (parked or not), epoch, fence,\n"
	 "queue, grants/s, hops/s, and the retransmits, skips and elections counted\n"
	 "since the member started; a member silent for a round is down. On a\n"
	 "terminal it draws a screen (an alternate one, given back on exit or\n"
	 "Ctrl-Z); elsewhere, or with --plain, it writes one line per round. Ends on\n"
	 "Ctrl-C (exit 0) or after --count N rounds. --stats tells on stderr at the\n"
	 "end what it sent and received. A footer (the end of each line with\n"
	 "--plain) gives lease-advice's advice, asked every 10 rounds.\n"},
	{"run",
	 "ringctl -c CONFIG -n ID " RUN_USAGE "\n"
	 "                            run CMD inside the critical region at member ID\n",
	 "run: waits (at most MS milliseconds with -t) for the critical region, runs CMD\n"
	 "in its own process group with RING_FENCE, RING_EPOCH, RING_NODE, RING_LEASE_MS\n"
	 "and RING_DEADLINE_MS (Unix ms when the first lease ends) set, renews the grant\n"
	 "every lease_ms/3 while CMD runs (up to max_hold_ms where the ring sets it),\n"
	 "releases when CMD exits and exits with its status. --try fails at once when\n"
	 "another client holds the region or waits for it, and otherwise takes it\n"
	 "wherever the token rests. \"Not granted\" (-t ran out, or --try lost) exits 75,\n"
	 "or N with --conflict-exit-code N. If the grant ends first, the group gets\n"
	 "SIGTERM, SIGKILL --kill-after MS later (default lease_ms/10, at most 1000;\n"
	 "0: SIGKILL at once), and run exits 70. Processes CMD leaves behind are\n"
	 "stopped the same way before the release. SIGINT, SIGTERM and SIGHUP are\n"
	 "passed on to the group (a second one kills it); if run dies, so does the job.\n"},
	{"fenced-append",
	 "ringctl fenced-append FILE TEXT [--fence N]   the reference fenced resource\n",
	 "fenced-append: appends TEXT as one line to FILE only if the fence (--fence or\n"
	 "$RING_FENCE) is not older than the newest fence FILE has accepted; otherwise\n"
	 "prints 'stale fence F < H' and exits 3.\n"},
	{"inject", "ringctl -c CONFIG -n ID inject WHAT [ARG]     fault drills (allow_inject = true)\n",
	 "inject WHAT:\n"},
	{"trace",
	 "ringctl trace [--json] [--allow-overlap] [--gap MS] LOG...\n"
	 "                            check members' JSON logs: mutual exclusion, fencing\n",
	 "trace: merges logs written with --log-format json (-v adds the token's path)\n"
	 "and a lab's faults.log; reports fences granted twice or going backwards, grants\n"
	 "under an old epoch, overlapping critical regions (violations unless\n"
	 "--allow-overlap), stretches with no token, and recovery after each fault.\n"
	 "Exits 1 on a violation.\n"},
	{"follow",
	 "ringctl [-c CONFIG] follow [--hops N] [--all] [--once] [--color|--no-color] LOG...\n"
	 "                            merged per-member lanes of JSON logs, following them\n",
	 "follow: one column per member (the config's members with -c, else the ids\n"
	 "the logs name), the events people watch in time order, every Nth token hop\n"
	 "(--hops, default 10; 0 none; hops are logged with ringd -v), --all for every\n"
	 "event. Follows the files as they grow until SIGINT/SIGTERM; --once prints\n"
	 "what they hold and exits. Colour when stdout is a terminal.\n"},
	{"timeline",
	 "ringctl timeline LOG... -o FILE.svg [--from T] [--to T] [--title TEXT]\n"
	 "                            a picture (SVG) of what the JSON logs tell\n",
	 "timeline: one lane per member on a shared time axis; --from/--to take seconds\n"
	 "after the first event (12.5) or UTC times (2026-01-02T03:04:05.5Z).\n"},
	{"keygen", "ringctl keygen FILE                           write a new secret_file (mode 0600)\n",
	 NULL},
	{"metrics",
	 "ringctl -c CONFIG -n ID metrics               Prometheus text of member ID's metrics\n",
	 NULL},
	{"socket", "ringctl -c CONFIG -n ID socket                member ID's control socket path\n",
	 NULL},
};

#define EXIT_CODES_HELP                                                                  \
	"Exit codes: 0 ok, 1 failure, 2 usage, 3 stale fence, 69 member unreachable,\n"   \
	"70 lease lost, 75 not granted (-t ran out, --try found it taken; or N with\n"   \
	"--conflict-exit-code N), 78 configuration error.\n"

/* H's synopsis, each line after FIRST ("usage: ") or the indent under it. */
static void help_synopsis(FILE *out, const struct help *h, const char **first)
{
	for (const char *l = h->synopsis; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		fprintf(out, "%s%.*s\n", *first, (int)len, l);
		*first = "       ";
		l += len + (nl != NULL);
	}
}

/* H's details; inject's words come from the one table of them. */
static void help_details(FILE *out, const struct help *h)
{
	if (!h->details)
		return;
	fputs(h->details, out);
	if (strcmp(h->name, "inject") == 0) {
		char injects[1024];
		ring_inject_help(injects, sizeof injects);
		fputs(injects, out);
	}
}

static void usage(FILE *out)
{
	const size_t n = sizeof helps / sizeof helps[0];
	const char *first = "usage: ";
	for (size_t k = 0; k < n; k++)
		help_synopsis(out, &helps[k], &first);
	fprintf(out, "%sringctl --version                             print the version and exit\n",
		first);
	fputs("ringctl CMD --help tells what CMD does.\n", out);
	for (size_t k = 0; k < n; k++) {
		if (!helps[k].details)
			continue;
		fputc('\n', out);
		help_details(out, &helps[k]);
	}
	fprintf(out, "\n%s", EXIT_CODES_HELP);
}

/* `ringctl CMD --help`: CMD's synopsis and what it does, on stdout. */
static int command_help(const char *name)
{
	for (size_t k = 0; k < sizeof helps / sizeof helps[0]; k++) {
		if (strcmp(helps[k].name, name) != 0)
			continue;
		const char *first = "usage: ";
		help_synopsis(stdout, &helps[k], &first);
		if (helps[k].details) {
			putchar('\n');
			help_details(stdout, &helps[k]);
		}
		printf("\n%s", EXIT_CODES_HELP);
		return 0;
	}
	fprintf(stderr, "ringctl: no help for '%s'\n", name);
	return EXIT_USAGE;
}

static int load_conf(const char *path, struct ring_conf *conf)
{
	char err[512];
	if (!path) {
		fprintf(stderr, "ringctl: this command needs -c CONFIG\n");
		return EXIT_USAGE;
	}
	if (ring_conf_load(path, conf, err, sizeof err) < 0 ||
	    ring_net_check_conf(conf, err, sizeof err) < 0) {
		fprintf(stderr, "%s\n", err);
		return EXIT_CONFIG;
	}
	return 0;
}

/* ---- the control socket ---- */

/* Member ID's ring index into *IDX. Returns 0, or EXIT_CONFIG having said
 * that the file has no such member. */
static int member_index(const struct ring_conf *conf, uint16_t id, int *idx)
{
	*idx = ring_layout_index(&conf->layout, id);
	if (*idx < 0) {
		fprintf(stderr, "ringctl: %s has no member %u\n", conf->path, id);
		return EXIT_CONFIG;
	}
	return 0;
}

/* Connects to member ID's control socket into *FD. Returns 0, or the exit
 * status having said why. */
static int control_connect(const struct ring_conf *conf, uint16_t id, int *fd)
{
	int idx;
	if (member_index(conf, id, &idx) != 0)
		return EXIT_CONFIG;
	/* Only to the member's own socket: a socket another local user
	 * planted could answer GRANTED with any fence (docs/security.md). */
	char err[2 * RING_PATH_MAX + 256];
	int rc = ring_state_dir_connect(conf->state_dir, conf->control[idx], fd, err, sizeof err);
	if (rc == -RING_EIO && errno == EACCES) {
		/* Not a member that is away: one this user may not use, which
		 * 69 would have sent them looking for on the network. */
		ring_access_hint(conf, conf->control[idx], err, sizeof err);
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_FAIL;
	}
	if (rc == -RING_ECONFIG) {
		fprintf(stderr, "ringctl: member %u: %s\n", id, err);
		return EXIT_UNREACHABLE;
	}
	if (rc < 0) {
		fprintf(stderr, "ringctl: member %u unreachable: %s\n", id, err);
		return EXIT_UNREACHABLE;
	}
	return 0;
}

static int send_line(int fd, const char *line)
{
	size_t len = strlen(line), off = 0;
	while (off < len) {
		ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* Reads one reply line into BUF; returns its length, 0 on EOF, -1 on error,
 * -2 when interrupted (EINTR) so the caller can look at its signals. */
struct line_reader {
	char buf[1024];
	size_t len;
};

static int read_line(int fd, struct line_reader *r, char *out, size_t outlen)
{
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		if (nl) {
			size_t n = (size_t)(nl - r->buf);
			snprintf(out, outlen, "%.*s", (int)n, r->buf);
			memmove(r->buf, nl + 1, r->len - n - 1);
			r->len -= n + 1;
			return (int)n + 1;
		}
		if (r->len == sizeof r->buf)
			return -1; /* a line this long is no reply of ours */
		ssize_t got = recv(fd, r->buf + r->len, sizeof r->buf - r->len, 0);
		if (got < 0 && errno == EINTR)
			return -2;
		if (got <= 0)
			return got == 0 ? 0 : -1;
		r->len += (size_t)got;
	}
}

/* ---- status ---- */

/* One status field for people: a fence as epoch:count, the way the text
 * logs and `ringctl ring` show it, with the integer RING_FENCE holds. */
static void print_status_field(const char *key, size_t klen, const char *val, size_t vlen)
{
	unsigned long long fence;
	char num[32];
	if (klen == 5 && memcmp(key, "fence", 5) == 0 && vlen < sizeof num) {
		memcpy(num, val, vlen);
		num[vlen] = 0;
		if (sscanf(num, "%llu", &fence) == 1 && fence != 0) {
			printf("  %-18.*s %llu:%llu (%s)\n", (int)klen, key, fence >> 32,
			       fence & 0xffffffffull, num);
			return;
		}
	}
	printf("  %-18.*s %.*s\n", (int)klen, key, (int)vlen, val);
}

static void print_status(const struct ring_layout *l, uint16_t id, const char *json_line,
			 bool json)
{
	if (json) {
		printf("%s\n", json_line);
		return;
	}
	/* The human form is the JSON with its fields one per line: no second
	 * formatter to keep in step with the first. The member and the ring head it,
	 * so their fields are not repeated. Values are numbers, booleans, null,
	 * plain strings (no commas or escapes: names are [A-Za-z0-9._-]) or
	 * arrays of numbers. */
	printf("member %u of ring \"%s\"\n", id, l->name);
	const char *p = json_line;
	if (*p == '{')
		p++;
	while (*p && *p != '}') {
		if (*p != '"')
			break; /* not the JSON we write: stop rather than guess */
		const char *key = ++p;
		while (*p && *p != '"')
			p++;
		size_t klen = (size_t)(p - key);
		if (*p)
			p++;
		if (*p == ':')
			p++;
		const char *val = p;
		int depth = 0;
		while (*p && !(depth == 0 && (*p == ',' || *p == '}'))) {
			depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
			p++;
		}
		size_t vlen = (size_t)(p - val);
		if (vlen >= 2 && val[0] == '"' && val[vlen - 1] == '"') {
			val++;
			vlen -= 2;
		} else if (vlen >= 2 && val[0] == '[' && val[vlen - 1] == ']') {
			val++; /* alive: 1,2,3 as `ringctl ring` shows it */
			vlen -= 2;
		}
		if (!(klen == 4 && memcmp(key, "ring", 4) == 0) &&
		    !(klen == 4 && memcmp(key, "node", 4) == 0))
			print_status_field(key, klen, val, vlen);
		if (*p == ',')
			p++;
	}
}

static int cmd_status(const struct ring_conf *conf, uint16_t id, bool json)
{
	int fd, rc = control_connect(conf, id, &fd);
	if (rc)
		return rc;
	struct line_reader r = {.len = 0};
	char line[1024];
	int n;
	if (send_line(fd, "STATUS\n") < 0 || (n = read_line(fd, &r, line, sizeof line)) <= 0) {
		fprintf(stderr, "ringctl: member %u closed the control socket\n", id);
		close(fd);
		return EXIT_UNREACHABLE;
	}
	close(fd);
	if (strncmp(line, "ERR", 3) == 0) {
		fprintf(stderr, "ringctl: member %u: %s\n", id, line);
		return EXIT_FAIL;
	}
	print_status(&conf->layout, id, line, json);
	return 0;
}

static uint64_t mono_ms(void)
{
	return ring_mono_us() / 1000u;
}

/* ---- ring: every member over UDP (status_poll.c) ---- */

static struct ring_status status_of(const struct ring_member *m,
				    const struct ring_msg_status_resp *r)
{
	return (struct ring_status){
		.node = m->id,
		.state = (enum ring_state)r->state,
		.epoch = r->epoch,
		.fence = r->fence,
		.successor = r->successor,
		.alive = r->alive,
		.token_seen_ms_ago = r->seen_ms == UINT32_MAX ? UINT64_MAX : r->seen_ms,
		.has_token = r->flags & RING_STATUS_HAS_TOKEN,
		.parked = r->flags & RING_STATUS_PARKED,
		.queued = r->queued,
		.counters = r->counters,
	};
}

/* One row of the table for member M, which answered R. */
static void print_ring_row(const struct ring_layout *l, const struct ring_member *m,
			   const char *where, const struct ring_msg_status_resp *r)
{
	char fence[32], seen[24], alive[1024] = "";
	snprintf(fence, sizeof fence, "%llu:%llu", (unsigned long long)(r->fence >> 32),
		 (unsigned long long)(r->fence & 0xffffffffu));
	if (r->seen_ms == UINT32_MAX)
		snprintf(seen, sizeof seen, "never");
	else
		snprintf(seen, sizeof seen, "%u ms", r->seen_ms);
	size_t off = 0;
	for (size_t k = 0; k < l->n && off < sizeof alive; k++)
		if (ring_set_has(&r->alive, k))
			off += (size_t)snprintf(alive + off, sizeof alive - off, "%s%u",
						off ? "," : "", l->members[k].id);
	printf("  %5u  %-22s %-10s %10u %16s %9u %10s  %s\n", m->id, where,
	       ring_state_name((enum ring_state)r->state), r->epoch, fence, r->successor, seen,
	       alive);
}

/* What is wrong with a member that answered in a way we cannot keep, as
 * the table's state and a sentence. */
static const char *problem_state(enum ring_poll_problem what)
{
	switch (what) {
	case RING_POLL_AUTH_FAILS:
	case RING_POLL_AUTH_REFUSED:
	case RING_POLL_CLOCK_APART:
		return "auth fails";
	case RING_POLL_WRONG_ADDRESS:
	case RING_POLL_WRONG_ID:
		return "wrong address";
	case RING_POLL_OTHER_CONFIG:
		return "other file";
	case RING_POLL_OK:
		break;
	}
	return "down";
}

static void problem_text(const struct ring_member *m, const char *where,
			 const struct ring_poll_note *n, uint64_t fp, char *buf, size_t len)
{
	char from[80];
	ring_net_format(&n->from, from, sizeof from);
	switch (n->problem) {
	case RING_POLL_AUTH_FAILS:
		snprintf(buf, len, "member %u answers from %s, but its answer does not authenticate "
			 "with this file's key: one side has another key (compare the key "
			 "fingerprints `ringd --check` prints on each host)", m->id, from);
		break;
	case RING_POLL_AUTH_REFUSED:
		/* Its refusal authenticated here, so the clocks are within 30 s
		 * and it has our key among its keys for answers: either it lacks
		 * the key we seal with, or its one replay window for every
		 * ringctl saw newer timestamps than ours. */
		snprintf(buf, len, "member %u answers from %s that our request does not authenticate "
			 "there: none of its keys is the one this file seals with (its first; compare "
			 "`ringd --check`'s key fingerprints), or a ringctl on a host whose clock runs "
			 "ahead of this one's asked it in the last seconds (members keep one replay "
			 "window for every ringctl: compare the hosts' clocks)", m->id, from);
		break;
	case RING_POLL_CLOCK_APART:
		snprintf(buf, len, "member %u answers from %s, but its clock is more than 30 s from "
			 "this host's: each side refuses the other's timestamps (compare the hosts' "
			 "clocks; the members log auth_fail, replayed or stale datagram)", m->id, from);
		break;
	case RING_POLL_WRONG_ADDRESS:
		snprintf(buf, len, "member %u answers from %s, not from %s as the file says: its "
			 "host or port differs from the file (its peers log bad_packet with that addr)",
			 m->id, from, where);
		break;
	case RING_POLL_WRONG_ID:
		snprintf(buf, len, "%s, member %u's address in the file, answers as member %u: "
			 "the file and that member's own file disagree on who is where",
			 where, m->id, n->as_id);
		break;
	case RING_POLL_OTHER_CONFIG:
		snprintf(buf, len, "member %u answers from %s with another file (fingerprint %016llx, "
			 "this one's %016llx): compare `ringd --check` on both hosts",
			 m->id, from, (unsigned long long)n->fingerprint, (unsigned long long)fp);
		break;
	case RING_POLL_OK:
		snprintf(buf, len, "no answer");
		break;
	}
}

/* The row of member M that gave no answer we keep: "down", or what its
 * answer said is wrong (note N), with the reason on a line of its own
 * (a "problem" and "detail" in JSON; "state" stays "down" there). */
static void print_ring_silent(const struct ring_layout *l, const struct ring_status_poll *p,
			      size_t i, const char *where, bool json)
{
	const struct ring_member *m = &l->members[i];
	const struct ring_poll_note *n = ring_status_poll_note(p, i);
	char why[600];
	if (n)
		problem_text(m, where, n, ring_status_poll_fingerprint(p), why, sizeof why);
	if (json) {
		printf("%s{\"node\":%u,\"ring\":\"%s\",\"state\":\"down\"", i ? "," : "", m->id,
		       l->name);
		if (n) {
			char from[80];
			ring_net_format(&n->from, from, sizeof from);
			printf(",\"problem\":\"%s\",\"addr\":\"%s\",\"detail\":\"%s\"",
			       problem_state(n->problem), from, why);
		}
		printf("}");
		return;
	}
	printf("  %5u  %-22s %-10s\n", m->id, where, n ? problem_state(n->problem) : "down");
	if (n)
		printf("         ^ %s\n", why);
}

/* Whether the answers were authenticated is known here, not sent: with a
 * key every request and answer is sealed and checked (a member without
 * it cannot answer us, nor we it), without one none is. So a flag in
 * STATUS_RESP, which older ringctl would refuse as an unknown bit, is not
 * needed. */
static void print_ring(const struct ring_conf *conf, const struct ring_status_poll *p, bool json)
{
	const struct ring_layout *l = &conf->layout;
	bool keyed = conf->auth == RING_AUTH_KEYED;
	if (!json) {
		printf("ring \"%s\": %zu of %zu members answer, ", l->name, ring_status_poll_answered(p),
		       l->n);
		if (keyed)
			printf("datagrams authenticated (%s%s)\n",
			       conf->auto_key ? "the ring's own key " : "", conf->secret_file);
		else
			printf("datagrams NOT authenticated (%s)\n", ring_conf_auth_off_reason(conf));
		printf("  %5s  %-22s %-10s %10s %16s %9s %10s  %s\n", "id", "address", "state", "epoch",
		       "fence", "successor", "token seen", "alive");
	} else {
		printf("[");
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct ring_member *m = &l->members[i];
		const struct ring_msg_status_resp *r = ring_status_poll_answer(p, i);
		char where[300];
		if (strchr(m->host, ':')) /* an IPv6 literal */
			snprintf(where, sizeof where, "[%s]:%u", m->host, m->port);
		else
			snprintf(where, sizeof where, "%s:%u", m->host, m->port);
		if (!r) {
			print_ring_silent(l, p, i, where, json);
		} else if (json) {
			struct ring_status st = status_of(m, r);
			char buf[4096];
			ring_ctl_status_json(buf, sizeof buf, l, &st, keyed);
			buf[strcspn(buf, "\n")] = 0;
			printf("%s%s", i ? "," : "", buf);
		} else {
			print_ring_row(l, m, where, r);
		}
	}
	if (json)
		printf("]\n");
}

/* Opens the status poll for CONF's ring; returns 0 or the exit status,
 * having said why. */
static int open_poll(const struct ring_conf *conf, struct ring_status_poll **p)
{
	char err[1024];
	int rc = ring_status_poll_open(p, &conf->layout, ring_conf_poll_key(conf), err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "ringctl: %s\n", err);
	return rc == 0 ? 0 : rc == -RING_ECONFIG ? EXIT_CONFIG : EXIT_FAIL;
}

/* A member ignores a status request of another file or key, silently:
 * say which log line to look for. */
static void no_answer_hint(const struct ring_conf *conf, uint64_t fp)
{
	if (conf->secret_file[0])
		fprintf(stderr, "ringctl: no member answered. Are they running, and do they use this "
			"same file (fingerprint %016llx) and key (%s)? A member with another key "
			"shows as `auth fails` and logs auth_fail; one with another file as `other "
			"file`, logging config_mismatch.\n",
			(unsigned long long)fp, conf->secret_file);
	else
		fprintf(stderr, "ringctl: no member answered. Are they running, and do they use this "
			"same file (fingerprint %016llx)? A member with another file shows as "
			"`other file` and logs config_mismatch.\n", (unsigned long long)fp);
}

static int cmd_ring(const struct ring_conf *conf, bool json)
{
	struct ring_status_poll *p;
	int rc = open_poll(conf, &p);
	if (rc)
		return rc;
	/* Ask, wait, ask again the silent ones: three tries of 250 ms. */
	int got = ring_status_poll_round(p, 3, 250, -1, NULL);
	print_ring(conf, p, json);
	if (got <= 0)
		no_answer_hint(conf, ring_status_poll_fingerprint(p));
	ring_status_poll_close(p);
	return got < 0 ? EXIT_FAIL : got > 0 ? 0 : EXIT_UNREACHABLE;
}

/* ---- lease-advice: every member's hold times and pauses over UDP ---- */

static int cmd_lease_advice(const struct ring_conf *conf, bool json)
{
	struct ring_status_poll *p;
	int rc = open_poll(conf, &p);
	if (rc)
		return rc;
	ring_status_poll_ask(p, RING_POLL_ADVICE);
	int got = ring_status_poll_round(p, 3, 250, -1, NULL); /* as `ring` asks */
	const struct ring_msg_advice_resp *ans[RING_MAX_MEMBERS];
	for (size_t i = 0; i < conf->layout.n; i++)
		ans[i] = ring_status_poll_advice(p, i);
	if (got > 0 && ring_lease_advice_print(stdout, &conf->layout, ans, json) < 0) {
		fprintf(stderr, "ringctl: writing the report failed\n");
		got = -1;
	}
	if (got == 0)
		no_answer_hint(conf, ring_status_poll_fingerprint(p));
	ring_status_poll_close(p);
	return got < 0 ? EXIT_FAIL : got > 0 ? 0 : EXIT_UNREACHABLE;
}

/* ---- run ---- */

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	if (write(sig_pipe[1], &b, 1) < 0) {
		/* full pipe: a signal is pending anyway (an if, not a (void)
		 * cast: the package's fortified build warns of an ignored result) */
	}
	errno = saved;
}

static int exit_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAIL;
}

/* SIGINT, SIGTERM, SIGHUP and SIGCHLD become bytes on sig_pipe, for poll.
 * The write end does not block: a burst of SIGCHLD from a job's many
 * children must not hang the handler on a full pipe (one byte wakes us). */
static int catch_signals(void)
{
	if (pipe(sig_pipe) != 0) {
		perror("ringctl: pipe");
		return EXIT_FAIL;
	}
	fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK);
	fcntl(sig_pipe[0], F_SETFD, FD_CLOEXEC);
	fcntl(sig_pipe[1], F_SETFD, FD_CLOEXEC);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	return 0;
}

/* After a TIMEOUT: what the member's state says about why, asked on the
 * same connection (it is idle again). A member on the minority side of a
 * partition waits in no-quorum, and a timeout there is not bad luck. */
static const char *why_not_granted(int fd, uint16_t id, struct line_reader *r)
{
	static char why[256];
	char line[1024];
	why[0] = 0;
	if (send_line(fd, "STATUS\n") < 0 || read_line(fd, r, line, sizeof line) <= 0)
		return why;
	if (strstr(line, "\"state\":\"no-quorum\""))
		snprintf(why, sizeof why,
			 ": member %u has no quorum (too few members took part in its last "
			 "election: it is on the smaller side of a partition, or most members "
			 "are down)", id);
	else if (strstr(line, "\"state\":\"electing\""))
		snprintf(why, sizeof why, ": member %u is in an election (a lost token is being "
			 "regenerated)", id);
	return why;
}

/* What `run` was asked for on its command line. */
struct run_opts {
	bool has_t;
	uint64_t t_ms;
	bool try_lock;        /* --try: TRY, which yields to a client that holds or waits */
	bool has_kill_after;
	uint32_t kill_after_ms;
	int conflict_code;    /* exit code of "not granted": 75, or --conflict-exit-code */
};

/* Asks member ID for the lock on FD and waits for its answer; a signal
 * meanwhile gives up (closing the socket cancels the request at the
 * member). Returns 0 with the grant's fence and epoch, or an exit code. */
static int wait_grant(int fd, uint16_t id, const struct run_opts *o, struct line_reader *r,
		      unsigned long long *fence, unsigned *epoch)
{
	char req[64], line[1024];
	const char *verb = o->try_lock ? "TRY" : "ACQUIRE";
	if (o->has_t)
		snprintf(req, sizeof req, "%s %llu\n", verb, (unsigned long long)o->t_ms);
	else
		snprintf(req, sizeof req, "%s\n", verb);
	if (send_line(fd, req) < 0) {
		fprintf(stderr, "ringctl: member %u closed the control socket\n", id);
		return EXIT_UNREACHABLE;
	}
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = sig_pipe[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return EXIT_FAIL;
		if (p[1].revents & POLLIN) {
			unsigned char s;
			if (read(sig_pipe[0], &s, 1) == 1 && (s == SIGINT || s == SIGTERM)) {
				close(fd);
				return 128 + s;
			}
		}
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		int n = read_line(fd, r, line, sizeof line);
		if (n == -2)
			continue;
		if (n <= 0) {
			fprintf(stderr, "ringctl: member %u went away while we waited\n", id);
			return EXIT_UNREACHABLE;
		}
		break;
	}
	if (strcmp(line, "TIMEOUT") == 0) {
		fprintf(stderr, "ringctl: not granted within %llu ms%s\n",
			(unsigned long long)o->t_ms, why_not_granted(fd, id, r));
		return o->conflict_code;
	}
	if (strcmp(line, "BUSY") == 0) {
		fprintf(stderr, "ringctl: not granted (--try): another client holds the critical "
			"region or waits for it\n");
		return o->conflict_code;
	}
	if (sscanf(line, "GRANTED %llu %u", fence, epoch) != 2) {
		fprintf(stderr, "ringctl: member %u: %s\n", id, line);
		return EXIT_FAIL;
	}
	return 0;
}

/* What CMD is told of its grant, in its environment (SPEC.md, `run`). */
struct grant {
	unsigned long long fence;
	unsigned epoch;
	uint16_t node;
	uint32_t lease_ms;
	uint64_t lease_end;   /* CLOCK_MONOTONIC ms: our own timer ends the grant here */
	uint64_t deadline_ms; /* the first lease's end on the wall clock, Unix ms */
	uint64_t granted_at;  /* CLOCK_MONOTONIC ms */
	uint32_t max_hold_ms; /* the ring's bound on the whole grant, 0: none */
	/* Renewal: RENEW every renew_every ms, the next at renew_at; the
	 * last one sent at renew_sent (0: none unanswered). */
	uint64_t renew_every, renew_at, renew_sent;
	bool revoked; /* the member said REVOKED, or went away */
};

/* Starts CMD as a job (job.c) with RING_FENCE, RING_EPOCH, RING_NODE,
 * RING_LEASE_MS and RING_DEADLINE_MS. The deadline is when ringctl's own
 * timer ends the grant at the latest (the member may end it a little
 * sooner: its lease started when it granted, ours when the grant reached
 * us): SIGTERM comes then, SIGKILL kill_after_ms later. */
static int start_job(struct ring_job *j, char **cmd, int fd, const struct grant *g,
		     uint32_t kill_after_ms)
{
	char fence[48], epoch[32], node[24], lease[32], deadline[48], err[256];
	snprintf(fence, sizeof fence, "RING_FENCE=%llu", g->fence);
	snprintf(epoch, sizeof epoch, "RING_EPOCH=%u", g->epoch);
	snprintf(node, sizeof node, "RING_NODE=%u", g->node);
	snprintf(lease, sizeof lease, "RING_LEASE_MS=%u", g->lease_ms);
	snprintf(deadline, sizeof deadline, "RING_DEADLINE_MS=%llu",
		 (unsigned long long)g->deadline_ms);
	char *env[] = {fence, epoch, node, lease, deadline, NULL};
	const int keep_out[] = {fd, sig_pipe[0], sig_pipe[1]};
	if (ring_job_start(j, cmd, env, keep_out, 3, kill_after_ms, err, sizeof err) < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return -1;
	}
	return 0;
}

/* The grant is over before the job is: stop its whole group. */
static void grant_over(struct ring_job *j, const char *why, const char *name, uint64_t now)
{
	if (j->stopping)
		return; /* already on its way down, on its own clock */
	if (j->kill_after_ms)
		fprintf(stderr, "ringctl: %s; stopping %s (SIGTERM to its process group, SIGKILL "
			"after %u ms)\n", why, name, j->kill_after_ms);
	else
		fprintf(stderr, "ringctl: %s; killing %s's process group\n", why, name);
	ring_job_stop(j, SIGTERM, now);
}

/* Takes in what the member says while the job runs: a renewal moves our
 * own end of the lease. Returns whether the grant is over: REVOKED, or the
 * member went away. */
static bool member_says(int fd, struct line_reader *r, struct grant *g, char *why,
			size_t whylen)
{
	char line[1024];
	for (;;) {
		int n = read_line(fd, r, line, sizeof line);
		if (n == -2)
			return false;
		if (n <= 0) {
			snprintf(why, whylen, "lease lost (member went away)");
			g->revoked = true;
			return true;
		}
		unsigned long long fence, left;
		if (sscanf(line, "RENEWED %llu %llu", &fence, &left) == 2 && fence == g->fence &&
		    g->renew_sent) {
			/* Counted from when we asked, not when the answer came:
			 * the member's lease began no sooner, so ours ends first. */
			g->lease_end = g->renew_sent + left;
			g->renew_sent = 0;
			if (!memchr(r->buf, '\n', r->len))
				return false; /* read no further: the socket blocks */
			continue;
		}
		if (strncmp(line, "REVOKED", 7) == 0) {
			g->revoked = true;
			uint64_t held = mono_ms() - g->granted_at;
			if (g->max_hold_ms && held + 50 >= g->max_hold_ms)
				snprintf(why, whylen, "lease lost (%s: max_hold_ms = %u reached)", line,
					 g->max_hold_ms);
			else
				snprintf(why, whylen, "lease lost (%s)", line);
			return true;
		}
		/* ERR not holding: a RENEW that crossed the REVOKED. */
		if (!memchr(r->buf, '\n', r->len))
			return false;
	}
}

/* Sends the next RENEW when it is due. A renewal is asked for every third
 * of a lease, so that a loaded machine that runs us late still renews in
 * time; a ringctl that is stopped or stalled renews nothing and loses the
 * grant within one lease, as it should. */
static void renew_due(int fd, struct grant *g, uint64_t now)
{
	if (now < g->renew_at)
		return;
	g->renew_at = now + g->renew_every;
	if (send_line(fd, "RENEW\n") == 0 && !g->renew_sent)
		g->renew_sent = now;
}

/* Runs the job to its end: until CMD has exited and no process of its
 * group is left. The group is stopped when the grant ends first, when
 * ringctl gets SIGINT, SIGTERM or SIGHUP (passed on to the group; a second
 * one kills it), and when CMD exits leaving processes behind, since once
 * we release they would work without the lock. Returns whether the grant
 * ended before CMD exited. */
static bool watch_job(struct grant *g, int fd, struct line_reader *r, struct ring_job *j,
		      const char *name)
{
	bool lost = false, over = false;
	char why[1100];
	for (;;) {
		ring_job_reap(j);
		bool alive = ring_job_group_alive(j);
		uint64_t now = mono_ms();
		if (j->cmd_done && !alive)
			break;
		if (j->killed && now - j->killed_at >= 2000) {
			fprintf(stderr, "ringctl: process group %ld still has processes 2 s after "
				"SIGKILL; giving up on them\n", (long)j->pgid);
			break;
		}
		if (j->cmd_done && !j->stopping) {
			fprintf(stderr, "ringctl: %s exited, leaving processes in its group; stopping "
				"them before releasing\n", name);
			ring_job_stop(j, SIGTERM, now);
		}
		if (!over && now >= g->lease_end) {
			/* Our clock ends the lease too: a member stalled past it (a
			 * pause) cannot send REVOKED in time. */
			over = true;
			lost = !j->cmd_done;
			snprintf(why, sizeof why, "lease of %u ms is over", g->lease_ms);
			grant_over(j, why, name, now);
		}
		ring_job_tick(j, now);
		if (!over && !j->cmd_done)
			renew_due(fd, g, now);
		int wait_ms = ring_job_wait_ms(j, now, 1000);
		if (!over && g->lease_end - now < (uint64_t)wait_ms)
			wait_ms = (int)(g->lease_end - now);
		if (!over && !j->cmd_done && g->renew_at - now < (uint64_t)wait_ms)
			wait_ms = (int)(g->renew_at - now);
		struct pollfd p[2] = {{.fd = fd, .events = over ? 0 : POLLIN},
				      {.fd = sig_pipe[0], .events = POLLIN}};
		if (poll(p, 2, wait_ms) < 0 && errno != EINTR)
			continue; /* bounded anyway: the timers above still run */
		unsigned char s;
		if ((p[1].revents & POLLIN) && read(sig_pipe[0], &s, 1) == 1 &&
		    (s == SIGINT || s == SIGTERM || s == SIGHUP)) {
			/* Passed on to the whole group, since CMD is no longer in
			 * ours; a second one while it stops kills it. */
			ring_job_stop(j, s, mono_ms());
		}
		if (!over && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    member_says(fd, r, g, why, sizeof why)) {
			over = true;
			lost = !j->cmd_done;
			grant_over(j, why, name, mono_ms());
		}
	}
	return lost;
}

/* Releases and waits for the member's word, bounded: the release must not
 * be lost to an early close, though closing releases too. */
static void release(int fd, struct line_reader *r)
{
	char line[1024];
	if (send_line(fd, "RELEASE\n") != 0)
		return;
	uint64_t until = mono_ms() + 2000;
	while (mono_ms() < until) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 200) <= 0)
			continue;
		int n = read_line(fd, r, line, sizeof line);
		if (n == -2)
			continue;
		if (n <= 0 || strcmp(line, "OK") == 0 || strncmp(line, "ERR", 3) == 0)
			break;
		/* REVOKED: the lease ended as CMD did; it still ran to its end. */
	}
}

/* Our own clock ended the grant (it runs a RENEW's transit ahead of the
 * member's): wait a little for the member's REVOKED before closing, so
 * that the member ends the grant by its lease (lease_expired) rather than
 * by our hanging up. A member that is stalled does not answer: bounded. */
static void await_revoked(int fd, struct line_reader *r)
{
	char line[1024];
	uint64_t until = mono_ms() + 250;
	while (mono_ms() < until) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 50) <= 0)
			continue;
		int n = read_line(fd, r, line, sizeof line);
		if (n == -2)
			continue;
		if (n <= 0 || strncmp(line, "REVOKED", 7) == 0)
			return;
	}
}

static int cmd_run(const struct ring_conf *conf, uint16_t id, const struct run_opts *o,
		   char **cmd)
{
	int fd, rc = catch_signals();
	if (rc || (rc = control_connect(conf, id, &fd)))
		return rc;
	struct line_reader r = {.len = 0};
	unsigned long long fence;
	unsigned epoch;
	if ((rc = wait_grant(fd, id, o, &r, &fence, &epoch)) != 0)
		return rc;
	uint32_t lease_ms = conf->layout.lease_ms, kill_after_ms = o->kill_after_ms;
	uint64_t now = mono_ms();
	struct grant g = {.fence = fence, .epoch = epoch, .node = id, .lease_ms = lease_ms,
			  .lease_end = now + lease_ms,
			  .deadline_ms = ring_wall_us() / 1000u + lease_ms,
			  .granted_at = now, .max_hold_ms = conf->layout.max_hold_ms,
			  .renew_every = lease_ms / 3 ? lease_ms / 3 : 1};
	g.renew_at = now + g.renew_every;
	/* The default grace: a tenth of the lease, at most a second. The next
	 * holder may be granted as soon as the member revokes, so whatever of
	 * the job outlives that is a second writer: the grace must be short
	 * next to the lease, yet long enough for a prompt cleanup. */
	if (!o->has_kill_after)
		kill_after_ms = lease_ms / 10 < 1000 ? lease_ms / 10 : 1000;
	struct ring_job job;
	if (start_job(&job, cmd, fd, &g, kill_after_ms) < 0) {
		send_line(fd, "RELEASE\n");
		return EXIT_FAIL;
	}
	bool lost = watch_job(&g, fd, &r, &job, cmd[0]);
	ring_job_end(&job);
	if (lost) {
		if (!g.revoked)
			await_revoked(fd, &r);
		close(fd);
		return EXIT_LEASE_LOST;
	}
	release(fd, &r);
	close(fd);
	return job.cmd_done ? exit_status(job.status) : EXIT_FAIL;
}

/* ---- fenced-append ---- */

static int cmd_fenced_append(int argc, char **argv)
{
	const char *fence_arg = NULL, *file = NULL, *text = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--fence") == 0 && i + 1 < argc)
			fence_arg = argv[++i];
		else if (strncmp(argv[i], "--fence=", 8) == 0)
			fence_arg = argv[i] + 8;
		else if (!file)
			file = argv[i];
		else if (!text)
			text = argv[i];
		else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!file || !text) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!fence_arg)
		fence_arg = getenv("RING_FENCE");
	uint64_t fence, highest = 0;
	if (!fence_arg || ring_fence_parse(fence_arg, &fence) < 0) {
		fprintf(stderr, "ringctl: fenced-append needs a fence: --fence N or $RING_FENCE%s%s\n",
			fence_arg ? ", not " : "", fence_arg ? fence_arg : "");
		return EXIT_USAGE;
	}
	char err[512];
	int rc = ring_fenced_append(file, text, fence, &highest, err, sizeof err);
	if (rc == -RING_ESTALE) {
		fprintf(stderr, "%s\n", err);
		return EXIT_STALE;
	}
	if (rc < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_FAIL;
	}
	return 0;
}

/* ---- trace ---- */

/* A word of trace, follow or timeline that is none of their options: a log
 * file into FILES, or an unknown option (false, the usage printed). */
static bool log_file_arg(const char *arg, const char **files, size_t *n)
{
	if (arg[0] == '-') {
		usage(stderr);
		return false;
	}
	files[(*n)++] = arg;
	return true;
}

static int cmd_trace(int argc, char **argv)
{
	struct ring_trace_opts opts = {.gap_ms = 1000};
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	size_t n = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			opts.json = true;
		else if (strcmp(argv[i], "--allow-overlap") == 0)
			opts.allow_overlap = true;
		else if (strcmp(argv[i], "--gap") == 0 && i + 1 < argc &&
			 ring_parse_u64(argv[i + 1], UINT32_MAX, &opts.gap_ms))
			i++;
		else if (!log_file_arg(argv[i], files, &n)) {
			free(files);
			return EXIT_USAGE;
		}
	}
	if (n == 0) {
		free(files);
		fprintf(stderr, "ringctl: trace needs at least one log file\n");
		return EXIT_USAGE;
	}
	char err[512];
	int rc = ring_trace_check(files, n, &opts, stdout, NULL, err, sizeof err);
	free(files);
	if (rc < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_FAIL;
	}
	return rc == 0 ? 0 : EXIT_FAIL;
}

/* ---- inject ---- */

static int cmd_inject(const struct ring_conf *conf, uint16_t id, int argc, char **argv)
{
	struct ring_ctl_request req;
	char err[128], line[256];
	if (ring_ctl_parse_inject((const char *const *)argv, (size_t)argc, &req, err,
				  sizeof err) < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_USAGE;
	}
	snprintf(line, sizeof line, "INJECT %s%s%s\n", argv[0], argc > 1 ? " " : "",
		 argc > 1 ? argv[1] : "");
	int fd, rc = control_connect(conf, id, &fd);
	if (rc)
		return rc;
	struct line_reader r = {.len = 0};
	int n = -1;
	if (send_line(fd, line) == 0)
		do
			n = read_line(fd, &r, line, sizeof line);
		while (n == -2);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "ringctl: member %u closed the control socket\n", id);
		return EXIT_UNREACHABLE;
	}
	if (strcmp(line, "OK") != 0) {
		fprintf(stderr, "ringctl: member %u: %s\n", id, line);
		return EXIT_FAIL;
	}
	return 0;
}

/* ---- the command table ---- */

/* The options before the command. */
struct globals {
	const char *config;
	uint16_t id;
};

static struct ring_conf conf; /* large: not on the stack */

static int main_fenced_append(const struct globals *g, int argc, char **argv)
{
	(void)g;
	return cmd_fenced_append(argc, argv);
}

static int main_trace(const struct globals *g, int argc, char **argv)
{
	(void)g;
	return cmd_trace(argc, argv);
}

/* follow and timeline read logs only; -c CONFIG, when given, names
 * follow's columns in ring order. */
static volatile sig_atomic_t follow_stop;

static void on_follow_signal(int sig)
{
	(void)sig;
	follow_stop = 1;
}

static int main_follow(const struct globals *g, int argc, char **argv)
{
	struct ring_follow_opts o = {.hops = 10, .color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR"),
				     .poll_ms = 100, .stop = &follow_stop};
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	size_t n = 0;
	uint64_t v;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--hops") == 0 && i + 1 < argc &&
		    ring_parse_u64(argv[i + 1], UINT32_MAX, &v)) {
			o.hops = (unsigned)v;
			i++;
		} else if (strcmp(argv[i], "--poll") == 0 && i + 1 < argc &&
			   ring_parse_u64(argv[i + 1], 10000, &v) && v > 0) {
			o.poll_ms = (unsigned)v;
			i++;
		} else if (strcmp(argv[i], "--once") == 0) {
			o.once = true;
		} else if (strcmp(argv[i], "--all") == 0) {
			o.all = true;
		} else if (strcmp(argv[i], "--color") == 0 || strcmp(argv[i], "--no-color") == 0) {
			o.color = argv[i][2] == 'c';
		} else if (!log_file_arg(argv[i], files, &n)) {
			free(files);
			return EXIT_USAGE;
		}
	}
	if (n == 0) {
		free(files);
		fprintf(stderr, "ringctl: follow needs at least one log file\n");
		return EXIT_USAGE;
	}
	uint16_t ids[RING_MAX_MEMBERS];
	if (g->config) {
		int rc = load_conf(g->config, &conf);
		if (rc) {
			free(files);
			return rc;
		}
		for (size_t k = 0; k < conf.layout.n; k++)
			ids[k] = conf.layout.members[k].id;
		o.members = ids;
		o.nmembers = conf.layout.n;
	}
	struct sigaction sa = {.sa_handler = on_follow_signal}; /* no SA_RESTART: the poll wakes */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	char err[512];
	size_t skipped = 0;
	int rc = ring_follow(files, n, &o, stdout, &skipped, err, sizeof err);
	free(files);
	if (rc < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_FAIL;
	}
	if (skipped)
		fprintf(stderr, "ringctl: follow skipped %zu line(s) that were not log records\n", skipped);
	return 0;
}

static int main_timeline(const struct globals *g, int argc, char **argv)
{
	(void)g;
	struct ring_timeline_opts o = {.title = NULL};
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	const char *out = NULL;
	size_t n = 0;
	char err[512] = "";
	for (int i = 0; i < argc; i++) {
		bool more = i + 1 < argc;
		if (strcmp(argv[i], "-o") == 0 && more) {
			out = argv[++i];
		} else if (strcmp(argv[i], "--title") == 0 && more) {
			o.title = argv[++i];
		} else if ((strcmp(argv[i], "--from") == 0 || strcmp(argv[i], "--to") == 0) && more) {
			struct ring_timeline_bound *b = argv[i][2] == 'f' ? &o.from : &o.to;
			if (ring_timeline_parse_bound(argv[i + 1], b) < 0) {
				fprintf(stderr, "ringctl: %s wants seconds after the first event or a UTC "
						"time such as 2026-01-02T03:04:05Z, not '%s'\n",
					argv[i], argv[i + 1]);
				free(files);
				return EXIT_USAGE;
			}
			i++;
		} else if (!log_file_arg(argv[i], files, &n)) {
			free(files);
			return EXIT_USAGE;
		}
	}
	if (n == 0 || !out) {
		free(files);
		fprintf(stderr, "ringctl: timeline needs LOG... and -o FILE.svg\n");
		return EXIT_USAGE;
	}
	struct ring_timeline_result res;
	int rc = ring_timeline_write(files, n, &o, out, &res, err, sizeof err);
	free(files);
	if (rc < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_FAIL;
	}
	printf("%s: %zu members, %zu events, %.3f s, %zu bytes%s\n", out, res.members, res.events,
	       (double)res.span_us / 1e6, res.bytes, res.aggregated ? " (dense parts aggregated)" : "");
	if (res.skipped)
		fprintf(stderr, "ringctl: timeline skipped %zu line(s) that were not log records\n",
			res.skipped);
	return 0;
}

static int main_keygen(const struct globals *g, int argc, char **argv)
{
	(void)g;
	if (argc != 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	char err[512];
	if (ring_auth_keygen(argv[0], err, sizeof err) < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return EXIT_FAIL;
	}
	printf("wrote a new key to %s (mode 0600); copy it to every member's host\n", argv[0]);
	return 0;
}

/* For a command whose only argument may be --json: reads it into *JSON
 * and loads the conf. 0, or the exit code (usage, or the conf's). */
static int json_command(const struct globals *g, int argc, char **argv, bool *json)
{
	*json = argc == 1 && strcmp(argv[0], "--json") == 0;
	if (argc != 0 && !*json) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return load_conf(g->config, &conf);
}

static int main_ring(const struct globals *g, int argc, char **argv)
{
	bool json;
	int rc = json_command(g, argc, argv, &json);
	return rc ? rc : cmd_ring(&conf, json);
}

static int main_lease_advice(const struct globals *g, int argc, char **argv)
{
	bool json;
	int rc = json_command(g, argc, argv, &json);
	return rc ? rc : cmd_lease_advice(&conf, json);
}

static int main_watch(const struct globals *g, int argc, char **argv)
{
	struct ring_watch_opts o = {.interval_ms = RING_WATCH_INTERVAL_DEFAULT};
	bool stats = false;
	uint64_t v;
	for (int i = 0; i < argc; i++) {
		bool more = i + 1 < argc;
		if (strcmp(argv[i], "--interval") == 0 && more) {
			if (!ring_parse_u64(argv[++i], RING_WATCH_INTERVAL_MAX, &v) ||
			    v < RING_WATCH_INTERVAL_MIN) {
				fprintf(stderr, "ringctl: --interval wants milliseconds, %u..%u\n",
					RING_WATCH_INTERVAL_MIN, RING_WATCH_INTERVAL_MAX);
				return EXIT_USAGE;
			}
			o.interval_ms = (unsigned)v;
		} else if (strcmp(argv[i], "--count") == 0 && more) {
			if (!ring_parse_u64(argv[++i], UINT32_MAX, &v) || v == 0) {
				fprintf(stderr, "ringctl: --count wants a number of rounds, at least 1\n");
				return EXIT_USAGE;
			}
			o.count = v;
		} else if (strcmp(argv[i], "--plain") == 0) {
			o.plain = true;
		} else if (strcmp(argv[i], "--stats") == 0) {
			stats = true;
		} else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	int rc = load_conf(g->config, &conf);
	if (rc)
		return rc;
	char err[1024];
	struct ring_watch_result res;
	rc = ring_watch_loop(&conf, &o, STDOUT_FILENO, &res, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "ringctl: %s\n", err);
		return rc == -RING_ECONFIG ? EXIT_CONFIG : EXIT_FAIL;
	}
	if (stats) {
		double s = (double)res.elapsed_us / 1e6;
		const struct ring_status_poll_traffic *t = &res.traffic;
		fprintf(stderr,
			"watch: %llu rounds in %.1f s; sent %llu requests (%llu bytes), received "
			"%llu datagrams (%llu bytes, %llu kept); %.1f datagrams/s each way\n",
			(unsigned long long)res.rounds, s, (unsigned long long)t->sent,
			(unsigned long long)t->sent_bytes, (unsigned long long)t->received,
			(unsigned long long)t->received_bytes, (unsigned long long)t->kept,
			s > 0 ? (double)t->sent / s : 0.0);
	}
	return 0;
}

static int main_status(const struct globals *g, int argc, char **argv)
{
	bool json;
	int rc = json_command(g, argc, argv, &json);
	return rc ? rc : cmd_status(&conf, g->id, json);
}

/* Reads run's options up to "--" or CMD into O. Returns the index of CMD,
 * or -1 after a message. */
static int run_options(int argc, char **argv, struct run_opts *o)
{
	int k = 0;
	for (; k < argc && strcmp(argv[k], "--") != 0; k++) {
		uint64_t v;
		const char *next = k + 1 < argc ? argv[k + 1] : NULL;
		if (strcmp(argv[k], "-t") == 0 && next && ring_parse_u64(next, UINT32_MAX, &o->t_ms)) {
			o->has_t = true;
			k++;
		} else if (strcmp(argv[k], "--try") == 0) {
			o->try_lock = true;
		} else if (strcmp(argv[k], "--kill-after") == 0) {
			if (!next || !ring_parse_u64(next, 3600000, &v)) {
				fprintf(stderr, "ringctl: --kill-after wants milliseconds, 0..3600000\n");
				return -1;
			}
			o->has_kill_after = true;
			o->kill_after_ms = (uint32_t)v;
			k++;
		} else if (strcmp(argv[k], "--conflict-exit-code") == 0) {
			if (!next || !ring_parse_u64(next, 255, &v)) {
				fprintf(stderr, "ringctl: --conflict-exit-code wants 0..255\n");
				return -1;
			}
			o->conflict_code = (int)v;
			k++;
		} else {
			break;
		}
	}
	if (k < argc && strcmp(argv[k], "--") == 0)
		k++;
	if (k >= argc) {
		fprintf(stderr, "ringctl: run needs a command: " RUN_USAGE "\n");
		return -1;
	}
	return k;
}

static int main_run(const struct globals *g, int argc, char **argv)
{
	struct run_opts o = {.conflict_code = EXIT_TIMEOUT};
	int k = run_options(argc, argv, &o);
	if (k < 0)
		return EXIT_USAGE;
	int rc = load_conf(g->config, &conf);
	return rc ? rc : cmd_run(&conf, g->id, &o, argv + k);
}

static int main_inject(const struct globals *g, int argc, char **argv)
{
	if (argc < 1 || argc > 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	int rc = load_conf(g->config, &conf);
	return rc ? rc : cmd_inject(&conf, g->id, argc, argv);
}

/* A command of member g->id that takes no argument: the file loaded, the
 * member's index into *IDX. Returns 0, or the exit status having said why. */
static int member_command(const struct globals *g, int argc, int *idx)
{
	if (argc != 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	int rc = load_conf(g->config, &conf);
	return rc ? rc : member_index(&conf, g->id, idx);
}

static int main_metrics(const struct globals *g, int argc, char **argv)
{
	(void)argv;
	int idx, rc = member_command(g, argc, &idx);
	if (rc)
		return rc;
	int fd;
	if ((rc = control_connect(&conf, g->id, &fd)) != 0)
		return rc;
	char err[RING_SOCK_MAX + 256];
	rc = ring_metrics_fetch(fd, conf.control[idx], stdout, 5000, err, sizeof err);
	if (rc < 0)
		fprintf(stderr, "ringctl: member %u: %s\n", g->id, err);
	return rc == 0 ? 0 : rc == -RING_EIO ? EXIT_UNREACHABLE : EXIT_FAIL;
}

/* The path of member ID's control socket, for programs that speak the
 * protocol themselves (docs/control.md, "Where it is"): no connection. */
static int main_socket(const struct globals *g, int argc, char **argv)
{
	(void)argv;
	int idx, rc = member_command(g, argc, &idx);
	if (rc)
		return rc;
	printf("%s\n", conf.control[idx]);
	return 0;
}

static const struct command {
	const char *name;
	bool needs_id; /* -n ID: the command talks to one member */
	int (*main)(const struct globals *g, int argc, char **argv);
} commands[] = {
	{"status", true, main_status},
	{"ring", false, main_ring},
	{"watch", false, main_watch},
	{"lease-advice", false, main_lease_advice},
	{"run", true, main_run},
	{"inject", true, main_inject},
	{"fenced-append", false, main_fenced_append},
	{"trace", false, main_trace},
	{"follow", false, main_follow},
	{"timeline", false, main_timeline},
	{"keygen", false, main_keygen},
	{"metrics", true, main_metrics},
	{"socket", true, main_socket},
};

/* Reads the global options; returns the index of the command, or -1 having
 * set *CODE, the exit status (0 for --help). */
static int parse_globals(int argc, char **argv, struct globals *g, bool *have_id, int *code)
{
	int i = 1;
	/* Global options come before the command; the command's own follow. */
	for (; i < argc && argv[i][0] == '-'; i++) {
		uint64_t id;
		if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc) {
			g->config = argv[++i];
		} else if ((strcmp(argv[i], "-n") == 0 || strcmp(argv[i], "--node") == 0) &&
			   i + 1 < argc) {
			if (!ring_parse_u64(argv[++i], 65535, &id) || id == 0) {
				fprintf(stderr, "ringctl: -n wants a member id 1..65535\n");
				*code = EXIT_USAGE;
				return -1;
			}
			g->id = (uint16_t)id;
			*have_id = true;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			*code = 0;
			return -1;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("ringctl %s\n", ring_version());
			*code = 0;
			return -1;
		} else {
			usage(stderr);
			*code = EXIT_USAGE;
			return -1;
		}
	}
	if (i == argc) {
		usage(stderr);
		*code = EXIT_USAGE;
		return -1;
	}
	return i;
}

int main(int argc, char **argv)
{
	struct globals g = {.config = NULL};
	bool have_id = false;
	int rc, i = parse_globals(argc, argv, &g, &have_id, &rc);
	if (i < 0)
		return rc;
	const char *name = argv[i];
	for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
		const struct command *c = &commands[k];
		if (strcmp(name, c->name) != 0)
			continue;
		if (i + 1 < argc && (strcmp(argv[i + 1], "--help") == 0 || strcmp(argv[i + 1], "-h") == 0))
			return command_help(name);
		if (c->needs_id && !have_id) {
			fprintf(stderr, "ringctl: %s needs -n ID\n", name);
			return EXIT_USAGE;
		}
		return c->main(&g, argc - i - 1, argv + i + 1);
	}
	fprintf(stderr, "ringctl: unknown command '%s'\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
