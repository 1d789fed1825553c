/* The configuration file (SPEC.md "Configuration"): inih splits the INI
 * lines, the key table CONF_KEYS gives every key's section, field, default,
 * bounds and meaning, and the checks after reading put members in ring order. */
#include "common/conf.h"
#include "common/fingerprint.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/err.h"

/* The key table. X(section, key, kind, field, how, default, min, max,
 * values, meaning): section RING or NODE; kind says how the value is read;
 * field is where it lands (in struct ring_conf for [ring], in struct
 * conf_node for [node.ID]); how is REQUIRED, LITERAL (the default is a
 * value, read like one from the file) or COMPUTED (the default depends on
 * other keys and is filled in after reading); min..max bound a number, or
 * a string's length. docs/configuration.md explains each key at length. */
#define CONF_KEYS(X)                                                                   \
	X(RING, name, NAME, R_(layout.name), REQUIRED, NULL, 1, 63,                    \
	  "1..63 characters: A-Z a-z 0-9 . _ -",                                                \
	  "the ring's name; datagrams of another ring are dropped")                    \
	X(RING, lease_ms, U32, R_(layout.lease_ms), LITERAL, "5000", 1, 3600000,       \
	  "1..3600000", "longest one visit may keep the token in the critical region") \
	X(RING, ack_timeout_ms, U32, R_(layout.ack_timeout_ms), LITERAL, "20", 1,      \
	  60000, "1..60000", "wait for a hop's ack before retransmitting the token")   \
	X(RING, retries, U32, R_(layout.retries), LITERAL, "3", 0, 100, "0..100",      \
	  "retransmits before the successor is declared dead and skipped")             \
	X(RING, heartbeat_ms, U32, R_(layout.heartbeat_ms), LITERAL, "100", 1, 60000,  \
	  "1..60000", "while a member holds the token, it tells the others so")        \
	X(RING, loss_timeout_ms, U32, R_(layout.loss_timeout_ms), LITERAL, "1000", 1,  \
	  3600000, "1..3600000",                                                       \
	  "silence (no token, no heartbeat) after which a member suspects loss")       \
	X(RING, idle_pass_ms, U32, R_(layout.idle_pass_ms), LITERAL, "0", 0, 60000,    \
	  "0..60000", "0: an unwanted token parks; more: it rests this long, then moves") \
	X(RING, max_hold_ms, U32, R_(layout.max_hold_ms), LITERAL, "0", 0, 86400000,   \
	  "0..86400000",                                                                \
	  "bound on one visit however often renewed; 0: none, else >= lease_ms")      \
	X(RING, quorum, QUORUM, R_(layout.quorum), LITERAL, "majority", 0, 0,          \
	  "majority or none", "whether a regeneration needs a majority of members")     \
	X(RING, secret_file, PATH, R_(secret_file), LITERAL, "", 0, RING_PATH_MAX - 1, \
	  "a path, or empty", "when set, every datagram is authenticated (HMAC)")      \
	X(RING, authentication, AUTH, R_(authentication), LITERAL, "auto", 0, 0,       \
	  "auto, on or off",                                                           \
	  "auto: secret_file, or on loopback the ring's own key in state_dir; on: secret_file; off: never") \
	X(RING, state_dir, PATH, R_(state_dir), COMPUTED, "/var/lib/ring/<name>", 1,   \
	  RING_PATH_MAX - 1, "a path",                                                 \
	  "durable per-member state (epoch) and control sockets")                      \
	X(RING, allow_inject, BOOL, R_(allow_inject), LITERAL, "false", 0, 0,          \
	  "true, false, yes, no, 1 or 0",                                           \
	  "whether `ringctl inject` may fault this member (tests and drills)")         \
	X(RING, control_group, GROUP, R_(control_group), LITERAL, "", 0,               \
	  RING_GROUP_MAX - 1, "empty, or a group name of this host",                   \
	  "who else may take the lock: the control socket is then 0660 and this group's") \
	X(NODE, host, HOST, N_(host), REQUIRED, NULL, 1, RING_HOST_MAX - 1,            \
	  "IPv4, IPv6 or host name", "where the member listens (UDP)")                 \
	X(NODE, port, U16, N_(port), REQUIRED, NULL, 1, 65535, "1..65535",             \
	  "the member's UDP port")                                                     \
	X(NODE, successor, U16, N_(successor), COMPUTED,                               \
	  "the next [node.*] in the file, wrapping", 1, 65535, "a member id",          \
	  "the member the token goes to next")                                         \
	X(NODE, control, SOCK, N_(control), COMPUTED, "<state_dir>/node-<ID>.sock", 1, \
	  RING_SOCK_MAX - 1, "a path of at most 107 bytes",                            \
	  "the member's local control socket (ringctl)")                               \
	X(NODE, metrics_listen, LISTEN, N_(metrics), LITERAL, "", 0, 0,                \
	  "empty, or 127.x.x.x:PORT or [::1]:PORT",                                    \
	  "where the member serves GET /metrics over HTTP (Prometheus); empty: off")

enum conf_key {
#define KEY_ENUM_(sec, key, ...) KEY_##key,
	CONF_KEYS(KEY_ENUM_)
#undef KEY_ENUM_
	KEY_COUNT_
};

enum conf_section { SEC_RING, SEC_NODE };
enum conf_kind { KIND_NAME, KIND_U32, KIND_U16, KIND_QUORUM, KIND_AUTH, KIND_BOOL, KIND_PATH,
		 KIND_HOST, KIND_SOCK, KIND_LISTEN, KIND_GROUP };
enum conf_how { HOW_REQUIRED, HOW_LITERAL, HOW_COMPUTED };

/* A [node.ID] section as read, before the ring order is known. */
struct conf_node {
	uint16_t id;
	uint16_t port;
	uint16_t successor;          /* 0 when not given */
	unsigned header_line;
	unsigned line[KEY_COUNT_];   /* where each key was set, 0 when not */
	char host[RING_HOST_MAX];
	char control[RING_SOCK_MAX]; /* "" when not given */
	struct ring_listen metrics;  /* port 0 when not given */
};

/* Where the parser is. inih calls read_line() for a line and then the
 * handler for it, so LINE is the handler's line too. */
struct conf_parse {
	const char *path;
	FILE *file;
	unsigned line;
	char folder[RING_PATH_MAX]; /* absolute: relative paths are resolved against it */
	struct ring_conf *conf;
	char *err;
	size_t errlen;
	unsigned err_line;
	bool failed;
	enum { AT_NONE, AT_RING, AT_NODE, AT_BAD } at; /* the current section */
	struct conf_node *node;                          /* when AT_NODE */
	unsigned ring_line;                              /* of [ring], 0 when none */
	unsigned ring_key_line[KEY_COUNT_];
	size_t nnodes;
	struct conf_node nodes[RING_MAX_MEMBERS]; /* in file order */
};

#define R_(field) offsetof(struct ring_conf, field)
#define N_(field) offsetof(struct conf_node, field)

const struct ring_conf_key ring_conf_keys[] = {
#define KEY_ROW_(sec, key, kind, off, how, def, min, max, values, doc) \
	{ SEC_##sec == SEC_RING ? "ring" : "node.ID", #key, def, min, max, values, doc },
	CONF_KEYS(KEY_ROW_)
#undef KEY_ROW_
};
const size_t ring_conf_key_count = KEY_COUNT_;

/* What only this file needs of each key. */
static const struct {
	enum conf_section sec;
	enum conf_kind kind;
	enum conf_how how;
	size_t off;
} keys[] = {
#define KEY_IMPL_(sec, key, kind, off, how, ...) { SEC_##sec, KIND_##kind, HOW_##how, off },
	CONF_KEYS(KEY_IMPL_)
#undef KEY_IMPL_
};

#undef R_
#undef N_

_Static_assert(63 == RING_NAME_MAX - 1, "name's bound in CONF_KEYS follows RING_NAME_MAX");
_Static_assert(RING_SOCK_MAX - 1 == 107, "control's text in CONF_KEYS says 107 bytes");

/* Keeps the first error only: it is the one at the lowest line, since
 * lines are read in order and the checks after reading come last. */
__attribute__((format(printf, 3, 4)))
static int fail(struct conf_parse *st, unsigned line, const char *fmt, ...)
{
	if (st->failed)
		return -RING_ECONFIG;
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (st->errlen > 0)
		snprintf(st->err, st->errlen, "%s:%u: %s", st->path, line, msg);
	st->failed = true;
	st->err_line = line;
	return -RING_ECONFIG;
}

/* Decimal digits only: no sign, no spaces, no 0x, nothing after. Values
 * above UINT32_MAX saturate so that any bound check refuses them. */
static int parse_decimal(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (*s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v <= UINT32_MAX)
			v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

/* NULL when H is an address or a host name the daemon can look up,
 * otherwise what is wrong with it. */
static const char *host_problem(const char *h)
{
	size_t len = strlen(h);
	if (len == 0)
		return "is empty";
	if (len >= RING_HOST_MAX)
		return "is longer than 255 characters";
	for (size_t i = 0; i < len; i++)
		if (isspace((unsigned char)h[i]) || iscntrl((unsigned char)h[i]))
			return "contains a space or a control character";
	if (strchr(h, ':')) {
		/* IPv6, with an optional %zone for link-local addresses. */
		char addr[INET6_ADDRSTRLEN];
		struct in6_addr a6;
		size_t alen = strcspn(h, "%");
		if (alen >= sizeof addr)
			return "is not an IPv6 address";
		memcpy(addr, h, alen);
		addr[alen] = '\0';
		if (inet_pton(AF_INET6, addr, &a6) != 1)
			return "is not an IPv6 address (write it without brackets)";
		const char *zone = h[alen] ? h + alen + 1 : NULL;
		if (zone && (!*zone || strspn(zone, "0123456789abcdefghijklmnopqrstuvwxyz"
					    "ABCDEFGHIJKLMNOPQRSTUVWXYZ._-") != strlen(zone)))
			return "has a bad IPv6 zone (after '%')";
		return NULL;
	}
	if (strspn(h, "0123456789.") == len) {
		struct in_addr a4;
		if (inet_pton(AF_INET, h, &a4) != 1)
			return "is not an IPv4 address";
		return NULL;
	}
	/* A host name: dot-separated labels of letters, digits, '-' and '_',
	 * with an optional final dot. */
	size_t label = 0;
	for (size_t i = 0; i < len; i++) {
		if (h[i] == '.') {
			if (label == 0)
				return "is not a host name (an empty label)";
			label = 0;
		} else if (isalnum((unsigned char)h[i]) || h[i] == '-' || h[i] == '_') {
			if (++label > 63)
				return "is not a host name (a label longer than 63)";
		} else {
			return "is not a host name (letters, digits, '-', '_' and '.' only)";
		}
	}
	return NULL;
}

/* "127.0.0.1:9101" or "[::1]:9101" into L; empty is off (port 0). NULL,
 * or what is wrong. Loopback only: the page has no authentication and
 * tells where the token is (docs/operations.md, "Metrics"). */
static const char *parse_listen(const char *v, struct ring_listen *l)
{
	*l = (struct ring_listen){.port = 0};
	if (!*v)
		return NULL;
	const char *colon = strrchr(v, ':');
	if (!colon)
		return "is not ADDRESS:PORT";
	const char *host = v;
	size_t hlen = (size_t)(colon - v);
	if (v[0] == '[') {
		if (hlen < 2 || v[hlen - 1] != ']')
			return "is not [IPv6]:PORT";
		host++;
		hlen -= 2;
	}
	uint64_t port;
	if (hlen == 0 || hlen >= sizeof l->host || parse_decimal(colon + 1, &port) != 0 ||
	    port < 1 || port > 65535)
		return "is not ADDRESS:PORT with a port 1..65535";
	memcpy(l->host, host, hlen);
	l->host[hlen] = '\0';
	struct in_addr a4;
	struct in6_addr a6;
	bool loop = v[0] == '['
		? inet_pton(AF_INET6, l->host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6)
		: inet_pton(AF_INET, l->host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
	if (!loop)
		return "is not a loopback address (127.x.x.x or [::1]); the metrics page has no "
		       "authentication";
	l->port = (uint16_t)port;
	return NULL;
}

bool ring_conf_host_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	char addr[INET6_ADDRSTRLEN];
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	size_t alen = strcspn(host, "%"); /* ::1%lo: the zone does not matter */
	if (alen >= sizeof addr)
		return false;
	memcpy(addr, host, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET6, addr, &a6) != 1)
		return false; /* a host name: not looked up here, so not known to be loopback */
	return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
}

/* Makes VALUE absolute against the file's folder. Returns -1 when the
 * result does not fit OUTLEN. */
static int resolve(const struct conf_parse *st, const char *value, char *out, size_t outlen)
{
	int n;
	if (value[0] == '/' || value[0] == '\0') {
		n = snprintf(out, outlen, "%s", value);
	} else {
		while (value[0] == '.' && value[1] == '/') {
			value += 2;
			while (*value == '/')
				value++;
		}
		size_t flen = strlen(st->folder);
		const char *sep = flen > 0 && st->folder[flen - 1] == '/' ? "" : "/";
		n = snprintf(out, outlen, "%s%s%s", st->folder, sep, value);
	}
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* The folder the file is in, made absolute with the working directory so
 * that resolved paths survive a later chdir. */
static int find_folder(struct conf_parse *st)
{
	const char *slash = strrchr(st->path, '/');
	char dir[RING_PATH_MAX];
	if (!slash) {
		dir[0] = '\0';
	} else {
		size_t len = slash == st->path ? 1 : (size_t)(slash - st->path);
		memcpy(dir, st->path, len); /* fits: the path itself does */
		dir[len] = '\0';
	}
	if (dir[0] == '/') {
		memcpy(st->folder, dir, strlen(dir) + 1);
		return 0;
	}
	char cwd[RING_PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		return fail(st, 0, "cannot find the working directory: %s", strerror(errno));
	const char *rel = strcmp(dir, ".") == 0 ? "" : dir;
	int n = snprintf(st->folder, sizeof st->folder, "%s%s%s", cwd,
			 rel[0] && strcmp(cwd, "/") != 0 ? "/" : "", rel);
	if (n < 0 || (size_t)n >= sizeof st->folder)
		return fail(st, 0, "the file's folder is longer than %d bytes", RING_PATH_MAX - 1);
	return 0;
}

/* "name, lease_ms, ..." for the keys of section SEC. */
static void key_list(enum conf_section sec, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < KEY_COUNT_; k++) {
		if (keys[k].sec != sec)
			continue;
		int n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", ring_conf_keys[k].name);
		if (n < 0 || (size_t)n >= size - len)
			return;
		len += (size_t)n;
	}
}

/* "1, 2, 3" (or "1 -> 2 -> 1") in BUF, cut short with "..." when it does not fit. */
static void id_list(const uint16_t *ids, size_t n, const char *sep, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + len, size - len, "%s%u", i ? sep : "", ids[i]);
		if (w < 0 || (size_t)w >= size - len) {
			size_t at = len + 4 <= size ? len : size - 4;
			memcpy(buf + at, "...", 4);
			return;
		}
		len += (size_t)w;
	}
}

static const char *section_of(const struct conf_parse *st, char *buf, size_t size)
{
	if (st->at == AT_NODE)
		snprintf(buf, size, "[node.%u]", st->node->id);
	else
		snprintf(buf, size, "[ring]");
	return buf;
}

/* The readers of set_key(), one per kind of value: each reads VALUE into
 * FIELD, key K's place, or fails with the key's own bounds and words. */

static int set_name(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	const struct ring_conf_key *row = &ring_conf_keys[k];
	size_t len = strlen(value);
	if (len < row->min || len > row->max)
		return fail(st, st->line, "%s must be %u..%u characters long, not %zu",
			    row->name, row->min, row->max, len);
	for (size_t i = 0; i < len; i++)
		if (!is_name_char(value[i]))
			return fail(st, st->line,
				    "%s \"%s\" may only hold letters, digits, '.', '_' and '-'",
				    row->name, value);
	memcpy(field, value, len + 1);
	return 0;
}

static int set_number(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	const struct ring_conf_key *row = &ring_conf_keys[k];
	uint64_t v;
	if (parse_decimal(value, &v) != 0)
		return fail(st, st->line, "%s = \"%s\" is not a decimal number (%s)",
			    row->name, value, row->values);
	if (v < row->min || v > row->max)
		return fail(st, st->line, "%s = %s is out of range %u..%u", row->name, value,
			    row->min, row->max);
	if (keys[k].kind == KIND_U32)
		*(uint32_t *)field = (uint32_t)v;
	else
		*(uint16_t *)field = (uint16_t)v;
	return 0;
}

static int set_quorum(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	if (strcasecmp(value, "majority") == 0)
		*(enum ring_quorum *)field = RING_QUORUM_MAJORITY;
	else if (strcasecmp(value, "none") == 0)
		*(enum ring_quorum *)field = RING_QUORUM_NONE;
	else
		return fail(st, st->line, "%s = \"%s\" is neither majority nor none",
			    ring_conf_keys[k].name, value);
	return 0;
}

static int set_auth(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	if (strcasecmp(value, "auto") == 0)
		*(enum ring_conf_auth *)field = RING_CONF_AUTH_AUTO;
	else if (strcasecmp(value, "on") == 0)
		*(enum ring_conf_auth *)field = RING_CONF_AUTH_ON;
	else if (strcasecmp(value, "off") == 0)
		*(enum ring_conf_auth *)field = RING_CONF_AUTH_OFF;
	else
		return fail(st, st->line, "%s = \"%s\" is not one of %s", ring_conf_keys[k].name,
			    value, ring_conf_keys[k].values);
	return 0;
}

static int set_bool(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	if (strcasecmp(value, "true") == 0 || strcasecmp(value, "yes") == 0 ||
	    strcmp(value, "1") == 0)
		*(bool *)field = true;
	else if (strcasecmp(value, "false") == 0 || strcasecmp(value, "no") == 0 ||
		 strcmp(value, "0") == 0)
		*(bool *)field = false;
	else
		return fail(st, st->line, "%s = \"%s\" is not a boolean (%s)", ring_conf_keys[k].name,
			    value, ring_conf_keys[k].values);
	return 0;
}

/* A path or a socket's path, made absolute against the file's folder. */
static int set_path(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	const struct ring_conf_key *row = &ring_conf_keys[k];
	char path[RING_PATH_MAX];
	if (strlen(value) < row->min)
		return fail(st, st->line, "%s must not be empty", row->name);
	if (resolve(st, value, path, sizeof path) != 0)
		return fail(st, st->line, "%s: the path is longer than %d bytes", row->name,
			    RING_PATH_MAX - 1);
	size_t plen = strlen(path);
	if (keys[k].kind == KIND_SOCK && plen > row->max)
		return fail(st, st->line,
			    "%s %s is %zu bytes long; a Unix socket path has at most %u",
			    row->name, path, plen, row->max);
	memcpy(field, path, plen + 1);
	return 0;
}

static int set_listen(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	const char *why = parse_listen(value, field);
	if (why)
		return fail(st, st->line, "%s \"%s\" %s", ring_conf_keys[k].name, value, why);
	return 0;
}

static int set_host(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	const char *why = host_problem(value);
	if (why)
		return fail(st, st->line, "%s \"%s\" %s", ring_conf_keys[k].name, value, why);
	memcpy(field, value, strlen(value) + 1);
	return 0;
}

/* control_group: a group of this host, looked up now so that a name
 * misspelt is FILE:LINE at start rather than a socket nobody may use. */
static int set_group(struct conf_parse *st, enum conf_key k, const char *value, void *field)
{
	const struct ring_conf_key *row = &ring_conf_keys[k];
	struct ring_conf_group *g = field;
	size_t len = strlen(value);
	*g = (struct ring_conf_group){.gid = (gid_t)-1};
	if (len == 0)
		return 0;
	if (len > row->max)
		return fail(st, st->line, "%s must be at most %u characters long, not %zu", row->name,
			    row->max, len);
	for (size_t i = 0; i < len; i++)
		if (!is_name_char(value[i]) || value[0] == '-')
			return fail(st, st->line, "%s \"%s\" is not a group name (letters, digits, '.', "
				    "'_' and '-', not first)", row->name, value);
	struct group grp, *found = NULL;
	char buf[16384];
	int e = getgrnam_r(value, &grp, buf, sizeof buf, &found);
	if (!found)
		return fail(st, st->line, "%s \"%s\": %s on this host (make it with: groupadd --system "
			    "%s)", row->name, value, e ? strerror(e) : "no such group", value);
	memcpy(g->name, value, len + 1);
	g->gid = grp.gr_gid;
	return 0;
}

/* The reader of each kind of value. */
static int (*const readers[])(struct conf_parse *, enum conf_key, const char *, void *) = {
	[KIND_NAME] = set_name,     [KIND_U32] = set_number,  [KIND_U16] = set_number,
	[KIND_QUORUM] = set_quorum, [KIND_AUTH] = set_auth,   [KIND_BOOL] = set_bool,
	[KIND_PATH] = set_path,     [KIND_SOCK] = set_path,   [KIND_HOST] = set_host,
	[KIND_LISTEN] = set_listen, [KIND_GROUP] = set_group,
};

/* Reads VALUE into key K of BASE (the conf or a node). Defaults come
 * through here too, so they obey the same bounds as the file's values. */
static int set_key(struct conf_parse *st, enum conf_key k, const char *value, void *base)
{
	enum conf_kind kind = keys[k].kind;
	if (kind >= sizeof readers / sizeof readers[0] || !readers[kind])
		return fail(st, st->line, "%s: no reader for this key", ring_conf_keys[k].name);
	return readers[kind](st, k, value, (char *)base + keys[k].off);
}

/* Called by read_line() for a "[NAME]" line: inih's handler only sees
 * keys, and an empty or refused section must be known too. */
static void open_section(struct conf_parse *st, const char *name, size_t len)
{
	st->at = AT_BAD; /* until the header is known good: its keys are then ignored */
	st->node = NULL;
	if (len == 4 && memcmp(name, "ring", 4) == 0) {
		if (st->ring_line) {
			fail(st, st->line, "duplicate section [ring] (first on line %u)", st->ring_line);
			return;
		}
		st->ring_line = st->line;
		st->at = AT_RING;
		return;
	}
	if (len > 5 && memcmp(name, "node.", 5) == 0) {
		char idtext[16];
		uint64_t id;
		size_t idlen = len - 5;
		if (idlen >= sizeof idtext) {
			fail(st, st->line, "[%.*s]: a member id is a decimal number 1..65535", (int)len, name);
			return;
		}
		memcpy(idtext, name + 5, idlen);
		idtext[idlen] = '\0';
		if (parse_decimal(idtext, &id) != 0 || id < 1 || id > 65535) {
			fail(st, st->line, "[%.*s]: a member id is a decimal number 1..65535", (int)len, name);
			return;
		}
		for (size_t i = 0; i < st->nnodes; i++)
			if (st->nodes[i].id == id) {
				fail(st, st->line, "duplicate section [node.%u] (first on line %u)",
				     st->nodes[i].id, st->nodes[i].header_line);
				return;
			}
		if (st->nnodes == RING_MAX_MEMBERS) {
			fail(st, st->line, "a ring has %d..%d members; [node.%u] is member %d",
			     RING_MIN_MEMBERS, RING_MAX_MEMBERS, (unsigned)id, RING_MAX_MEMBERS + 1);
			return;
		}
		struct conf_node *node = &st->nodes[st->nnodes++];
		node->id = (uint16_t)id;
		node->header_line = st->line;
		st->node = node;
		st->at = AT_NODE;
		return;
	}
	fail(st, st->line, "unknown section [%.*s]; sections are [ring] and [node.ID]", (int)len, name);
}

/* Consumes the rest of a line fgets() could not hold; true when it was
 * only blanks (the newline itself, or "\r\n"). */
static bool rest_is_blank(FILE *f)
{
	bool blank = true;
	int c;
	while ((c = getc(f)) != EOF && c != '\n')
		if (!isspace(c))
			blank = false;
	return blank;
}

/* inih's reader, fgets() plus: the line count the handler reports,
 * sections noticed as they come, a refusal of lines longer than inih's
 * buffer (it would cut them silently), and two rewrites so that
 * behaviour does not depend on how inih was built:
 * - leading blanks are dropped, so an indented key is a key and never a
 *   continuation of the previous value (INI_ALLOW_MULTILINE);
 * - "; comment" after a blank is cut, as Debian's inih (built with
 *   INI_ALLOW_INLINE_COMMENTS) does too; SPEC's example relies on it, so
 *   a build without it must not change what the file means. */
static char *read_line(char *str, int num, void *stream)
{
	struct conf_parse *st = stream;
	if (!fgets(str, num, st->file))
		return NULL;
	st->line++;
	size_t len = strlen(str);
	if (len > 0 && str[len - 1] != '\n' && !rest_is_blank(st->file)) {
		fail(st, st->line, "line longer than %d characters", num - 1);
		str[0] = '\0';
		return str;
	}
	char *s = str;
	if (st->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3; /* a UTF-8 byte order mark */
	while (isspace((unsigned char)*s))
		s++;
	memmove(str, s, strlen(s) + 1);
	if (str[0] != ';' && str[0] != '#')
		for (char *p = str; *p; p++)
			if (*p == ';' && p > str && isspace((unsigned char)p[-1])) {
				*p = '\0';
				break;
			}
	if (str[0] == '[') {
		char *end = strchr(str, ']');
		if (end)
			open_section(st, str + 1, (size_t)(end - str - 1));
		else
			st->at = AT_BAD; /* inih refuses the line; keep its keys out */
	}
	return str;
}

/* Handles one key = value line: 0, or -RING_ECONFIG with the error kept. */
static int key_line(struct conf_parse *st, const char *name, const char *value)
{
	char where[32];
	if (!value)
		return fail(st, st->line, "%s has no value", name);
	if (st->at == AT_NONE)
		return fail(st, st->line, "key %s before any section; start with [ring]", name);
	if (st->at == AT_BAD)
		return 0; /* its header was refused already */
	enum conf_section sec = st->at == AT_RING ? SEC_RING : SEC_NODE;
	size_t k = 0;
	while (k < KEY_COUNT_ && !(keys[k].sec == sec && strcmp(ring_conf_keys[k].name, name) == 0))
		k++;
	if (k == KEY_COUNT_) {
		char list[256];
		key_list(sec, list, sizeof list);
		return fail(st, st->line, "unknown key %s in %s; its keys are %s", name,
			    section_of(st, where, sizeof where), list);
	}
	unsigned *line = sec == SEC_RING ? &st->ring_key_line[k] : &st->node->line[k];
	if (*line)
		return fail(st, st->line, "duplicate key %s in %s (first set on line %u)", name,
			    section_of(st, where, sizeof where), *line);
	*line = st->line;
	void *base = sec == SEC_RING ? (void *)st->conf : (void *)st->node;
	return set_key(st, (enum conf_key)k, value, base);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct conf_parse *st = user;
	(void)section; /* read_line() tracks sections, empty ones included */
	if (!name || st->failed)
		return 1; /* a section start, or past the error that will be reported */
	return key_line(st, name, value) == 0;
}

/* The line to blame for a successor: its key when written, else the
 * node's header (the successor came from file order). */
static unsigned successor_line(const struct conf_node *n)
{
	return n->line[KEY_successor] ? n->line[KEY_successor] : n->header_line;
}

/* Each member's successor as an index into st->nodes: the written one, or
 * the next in file order. */
static int find_successors(struct conf_parse *st, size_t *succ)
{
	size_t n = st->nnodes;
	for (size_t i = 0; i < n; i++) {
		const struct conf_node *node = &st->nodes[i];
		succ[i] = (i + 1) % n;
		if (!node->successor)
			continue;
		if (node->successor == node->id)
			return fail(st, node->line[KEY_successor], "[node.%u] is its own successor",
				    node->id);
		size_t j = 0;
		while (j < n && st->nodes[j].id != node->successor)
			j++;
		if (j == n)
			return fail(st, node->line[KEY_successor],
				    "successor %u of [node.%u] is not a member (no [node.%u])",
				    node->successor, node->id, node->successor);
		succ[i] = j;
	}
	return 0;
}

/* Two members handing to the same one leave some member unreached. */
static int check_one_predecessor(struct conf_parse *st, const size_t *succ)
{
	int pred[RING_MAX_MEMBERS];
	for (size_t i = 0; i < st->nnodes; i++)
		pred[i] = -1;
	for (size_t i = 0; i < st->nnodes; i++) {
		const struct conf_node *a = &st->nodes[i];
		if (pred[succ[i]] < 0) {
			pred[succ[i]] = (int)i;
			continue;
		}
		const struct conf_node *b = &st->nodes[pred[succ[i]]];
		const struct conf_node *blame = a->successor ? a : b;
		return fail(st, successor_line(blame),
			    "[node.%u]%s and [node.%u]%s both have successor %u; the ring order must be one cycle through all members",
			    b->id, b->successor ? "" : " (by file order)", a->id,
			    a->successor ? "" : " (by file order)", st->nodes[succ[i]].id);
	}
	return 0;
}

/* The cycle through the first member, ORDER[0..LEN), is shorter than the
 * ring: name the cycle and the members it misses. */
static int fail_short_cycle(struct conf_parse *st, const size_t *order, size_t len)
{
	size_t n = st->nnodes;
	bool in_cycle[RING_MAX_MEMBERS] = { false };
	uint16_t cycle[RING_MAX_MEMBERS + 1], missed[RING_MAX_MEMBERS];
	size_t nmissed = 0;
	for (size_t c = 0; c < len; c++) {
		cycle[c] = st->nodes[order[c]].id;
		in_cycle[order[c]] = true;
	}
	cycle[len] = st->nodes[0].id;
	for (size_t m = 0; m < n; m++)
		if (!in_cycle[m])
			missed[nmissed++] = st->nodes[m].id;
	/* Blame the successor that closes the cycle if it is written;
	 * else the last written one on the cycle. */
	const struct conf_node *last = &st->nodes[order[len - 1]];
	unsigned line = last->line[KEY_successor];
	for (size_t c = 0; c < len && !line; c++)
		if (st->nodes[order[c]].line[KEY_successor] > line)
			line = st->nodes[order[c]].line[KEY_successor];
	char ctext[200], mtext[200];
	id_list(cycle, len + 1, " -> ", ctext, sizeof ctext);
	id_list(missed, nmissed, ", ", mtext, sizeof mtext);
	return fail(st, line ? line : last->header_line,
		    "successors close the ring %s after %zu of %zu members, missing member%s %s; the ring order must be one cycle through all members",
		    ctext, len, n, nmissed > 1 ? "s" : "", mtext);
}

/* The ring order: ORDER[r] is the index into st->nodes of the member at
 * ring position r, starting with the first in the file. Refuses successors
 * that do not make one cycle through all members. */
static int order_ring(struct conf_parse *st, size_t *order)
{
	size_t succ[RING_MAX_MEMBERS];
	int rc = find_successors(st, succ);
	if (rc != 0 || (rc = check_one_predecessor(st, succ)) != 0)
		return rc;
	/* Now every member has one predecessor: the successors are cycles. */
	size_t len = 0, i = 0;
	do {
		order[len++] = i;
		i = succ[i];
	} while (i != 0);
	return len < st->nnodes ? fail_short_cycle(st, order, len) : 0;
}

/* The layout's members in ring ORDER, and each one's control socket path:
 * the written one, or STATE_DIR/node-ID.sock. */
static int fill_members(struct conf_parse *st, const size_t *order)
{
	struct ring_conf *conf = st->conf;
	size_t n = st->nnodes;
	conf->layout.n = n;
	for (size_t r = 0; r < n; r++) {
		const struct conf_node *node = &st->nodes[order[r]];
		struct ring_member *m = &conf->layout.members[r];
		m->id = node->id;
		m->port = node->port;
		memcpy(m->host, node->host, sizeof m->host);
		conf->metrics[r] = node->metrics;
		conf->port_line[r] = node->line[KEY_port];
		if (node->control[0]) {
			memcpy(conf->control[r], node->control, sizeof conf->control[r]);
			continue;
		}
		int w = snprintf(conf->control[r], sizeof conf->control[r], "%s/node-%u.sock",
				 conf->state_dir, node->id);
		if (w < 0 || (size_t)w >= sizeof conf->control[r]) {
			unsigned line = st->ring_key_line[KEY_state_dir];
			return fail(st, line ? line : st->ring_line,
				    "control socket %s/node-%u.sock of [node.%u] would be %d bytes long; a Unix socket path has at most %d: shorten state_dir or set control",
				    conf->state_dir, node->id, node->id, w, RING_SOCK_MAX - 1);
		}
	}
	return 0;
}

/* Whether the ring authenticates, decided once for ringd, ringctl and
 * --check. Without a key anyone who can send to a member's port can act as
 * a member (docs/security.md, "Threat model"), and on a host with other
 * users that includes loopback: any local user may bind a down member's
 * port. So a loopback ring without secret_file gets the ring's own key,
 * made by the first ringd in the state_dir every member shares (readable
 * by ringd's user alone); a ring that spans a network needs a key copied
 * to every host, or the words authentication = off. */
static int decide_authentication(struct conf_parse *st)
{
	struct ring_conf *conf = st->conf;
	unsigned aline = st->ring_key_line[KEY_authentication];
	unsigned kline = st->ring_key_line[KEY_secret_file];
	bool keyed = conf->secret_file[0] != '\0';
	if (conf->authentication == RING_CONF_AUTH_OFF) {
		if (keyed)
			return fail(st, aline,
				    "authentication = off, but secret_file is set (line %u): remove one of the two",
				    kline);
		conf->auth = RING_AUTH_OFF_CHOSEN;
		return 0;
	}
	if (keyed) {
		conf->auth = RING_AUTH_KEYED;
		return 0;
	}
	if (conf->authentication == RING_CONF_AUTH_ON)
		return fail(st, aline,
			    "authentication = on needs a key: make one with `ringctl keygen %s.key` beside this "
			    "file and set secret_file = %s.key",
			    conf->layout.name, conf->layout.name);
	for (size_t i = 0; i < st->nnodes; i++) {
		const struct conf_node *node = &st->nodes[i];
		if (ring_conf_host_is_loopback(node->host))
			continue;
		return fail(st, node->line[KEY_host],
			    "[node.%u] host %s is not a loopback address and the ring has no key, so anyone "
			    "who can reach its ports could act as a member; make one with `ringctl keygen "
			    "%s.key` beside this file, copy it to every host and set secret_file = %s.key "
			    "in [ring], or set authentication = off to run without (docs/security.md)",
			    node->id, node->host, conf->layout.name, conf->layout.name);
	}
	int w = snprintf(conf->secret_file, sizeof conf->secret_file, "%s/" RING_AUTO_KEY,
			 conf->state_dir);
	if (w < 0 || (size_t)w >= sizeof conf->secret_file) {
		unsigned line = st->ring_key_line[KEY_state_dir];
		return fail(st, line ? line : st->ring_line,
			    "state_dir is too long to hold the ring's key (%s)", RING_AUTO_KEY);
	}
	conf->auto_key = true;
	conf->auth = RING_AUTH_KEYED;
	return 0;
}

const char *ring_conf_poll_key(const struct ring_conf *conf)
{
	if (!conf->secret_file[0] || (conf->auto_key && access(conf->secret_file, F_OK) != 0 &&
				      errno == ENOENT))
		return NULL;
	return conf->secret_file;
}

const char *ring_conf_auth_off_reason(const struct ring_conf *conf)
{
	switch (conf->auth) {
	case RING_AUTH_KEYED:
		break;
	case RING_AUTH_OFF_CHOSEN:
		return "authentication = off: anyone who can reach these ports can act as a member";
	}
	return NULL;
}

/* The checks that need the whole file: required keys, member count,
 * distinct addresses, the ring order, and the protocol's timing rules. */
static int finish(struct conf_parse *st)
{
	struct ring_conf *conf = st->conf;
	size_t n = st->nnodes;

	if (!st->ring_line)
		return fail(st, 0, "no [ring] section; it holds the ring's name, which is required");
	if (!st->ring_key_line[KEY_name])
		return fail(st, st->ring_line, "[ring] has no name (required)");
	if (!st->ring_key_line[KEY_state_dir]) {
		int w = snprintf(conf->state_dir, sizeof conf->state_dir, "/var/lib/ring/%s",
				 conf->layout.name);
		if (w < 0 || (size_t)w >= sizeof conf->state_dir)
			return fail(st, st->ring_line, "state_dir does not fit"); /* cannot happen: name <= 63 */
	}
	for (size_t i = 0; i < n; i++) {
		const struct conf_node *node = &st->nodes[i];
		if (!node->line[KEY_host])
			return fail(st, node->header_line, "[node.%u] has no host (required)", node->id);
		if (!node->line[KEY_port])
			return fail(st, node->header_line, "[node.%u] has no port (required)", node->id);
	}
	if (n < RING_MIN_MEMBERS)
		return fail(st, n ? st->nodes[0].header_line : st->ring_line,
			    "a ring has %d..%d members ([node.ID] sections), this one has %zu",
			    RING_MIN_MEMBERS, RING_MAX_MEMBERS, n);
	for (size_t j = 1; j < n; j++)
		for (size_t i = 0; i < j; i++) {
			const struct conf_node *a = &st->nodes[i], *b = &st->nodes[j];
			if (a->port == b->port && strcasecmp(a->host, b->host) == 0)
				return fail(st, b->line[KEY_port],
					    "[node.%u] has the same address %s port %u as [node.%u] (line %u)",
					    b->id, b->host, b->port, a->id, a->header_line);
		}
	size_t order[RING_MAX_MEMBERS];
	int rc = order_ring(st, order);
	if (rc != 0 || (rc = fill_members(st, order)) != 0)
		return rc;

	char why[256];
	if (ring_layout_check(&conf->layout, why, sizeof why) != 0) {
		/* Every rule left to it is about timings, and the loss timeout
		 * is the one they are measured against. */
		unsigned line = st->ring_key_line[KEY_loss_timeout_ms];
		if (!line)
			line = st->ring_key_line[KEY_heartbeat_ms];
		return fail(st, line ? line : st->ring_line, "%s", why);
	}
	return decide_authentication(st);
}

static int load(struct conf_parse *st)
{
	struct ring_conf *conf = st->conf;
	size_t plen = strlen(st->path);
	if (plen == 0 || plen >= sizeof conf->path)
		return fail(st, 0, "a configuration path is 1..%d bytes long", RING_PATH_MAX - 1);
	memcpy(conf->path, st->path, plen + 1);
	if (find_folder(st) != 0)
		return -RING_ECONFIG;
	for (size_t k = 0; k < KEY_COUNT_; k++)
		if (keys[k].how == HOW_LITERAL && keys[k].sec == SEC_RING &&
		    set_key(st, (enum conf_key)k, ring_conf_keys[k].def, conf) != 0)
			return -RING_ECONFIG; /* a bad default in CONF_KEYS; tests catch it */

	st->file = fopen(st->path, "r");
	if (!st->file)
		return fail(st, 0, "%s", strerror(errno));
	int rc = ini_parse_stream(read_line, st, handler, st);
	int read_errno = ferror(st->file) ? errno : 0;
	fclose(st->file);
	st->file = NULL;
	if (read_errno)
		return fail(st, 0, "%s", strerror(read_errno));
	if (rc < 0)
		return fail(st, 0, "%s", strerror(ENOMEM)); /* inih's -2: no line buffer */
	/* inih's own refusals (a line that is neither a section, a key nor a
	 * comment) win when they come first. */
	if (rc > 0 && (!st->failed || (unsigned)rc < st->err_line)) {
		st->failed = false;
		return fail(st, (unsigned)rc,
			    "expected [section], key = value, or a comment (; or #)");
	}
	if (st->failed)
		return -RING_ECONFIG;
	return finish(st);
}

int ring_conf_load(const char *path, struct ring_conf *conf, char *err, size_t errlen)
{
	memset(conf, 0, sizeof *conf);
	ring_layout_defaults(&conf->layout);
	if (errlen > 0)
		err[0] = '\0';
	/* The nodes as read take ~100 KB: too much for a daemon's stack. */
	struct conf_parse *st = calloc(1, sizeof *st);
	if (!st) {
		if (errlen > 0)
			snprintf(err, errlen, "%s:0: %s", path, strerror(ENOMEM));
		return -RING_ENOMEM;
	}
	st->path = path;
	st->conf = conf;
	st->err = err;
	st->errlen = errlen;
	int rc = load(st);
	free(st);
	return rc;
}

static void format_address(const struct ring_member *m, char *buf, size_t size)
{
	if (strchr(m->host, ':'))
		snprintf(buf, size, "[%s]:%u", m->host, m->port);
	else
		snprintf(buf, size, "%s:%u", m->host, m->port);
}

/* The ring's name, size and fingerprint, then a table of its members in
 * ring order. */
static void describe_members(const struct ring_conf *conf, FILE *out)
{
	const struct ring_layout *l = &conf->layout;
	char addr[RING_HOST_MAX + 16];
	int width = (int)strlen("address");

	fprintf(out, "ring \"%s\": %zu members, quorum ", l->name, l->n);
	if (l->quorum == RING_QUORUM_MAJORITY)
		fprintf(out, "majority (%zu)", ring_layout_quorum(l));
	else
		fprintf(out, "none");
	fprintf(out, ", fingerprint %016" PRIx64 "\n", ring_layout_fingerprint(l));

	for (size_t i = 0; i < l->n; i++) {
		format_address(&l->members[i], addr, sizeof addr);
		if ((int)strlen(addr) > width)
			width = (int)strlen(addr);
	}
	fprintf(out, "  %5s  %5s  %-*s  %9s  %s\n", "order", "id", width, "address", "successor",
		"control");
	for (size_t i = 0; i < l->n; i++) {
		format_address(&l->members[i], addr, sizeof addr);
		fprintf(out, "  %5zu  %5u  %-*s  %9u  %s\n", i + 1, l->members[i].id, width, addr,
			l->members[(i + 1) % l->n].id, conf->control[i]);
	}
}

/* What the timings and the quorum mean for a dead member, a lost token,
 * an idle ring and a partition. */
static void describe_timings(const struct ring_layout *l, FILE *out)
{
	/* A hop is retried RETRIES times, ack_timeout_ms apart, before the
	 * successor is skipped (PROTOCOL.md §3.2); an election hop costs the
	 * same, and only dead members make it wait (§6.1). */
	uint64_t skip = (uint64_t)l->ack_timeout_ms * (1 + (uint64_t)l->retries);
	size_t dead = l->n > 0 ? l->n - 1 : 0;
	fprintf(out,
		"timings: lease %u ms, ack timeout %u ms x (1 + %u retries), heartbeat %u ms, loss timeout %u ms, idle pass %u ms\n",
		l->lease_ms, l->ack_timeout_ms, l->retries, l->heartbeat_ms, l->loss_timeout_ms,
		l->idle_pass_ms);
	if (l->max_hold_ms)
		fprintf(out, "a grant lasts %u ms unless renewed (RENEW, ringctl run), and at most %u ms however often\n"
			     "it is renewed (max_hold_ms)\n", l->lease_ms, l->max_hold_ms);
	else
		fprintf(out, "a grant lasts %u ms unless renewed (RENEW, ringctl run); renewed, it has no bound\n"
			     "(max_hold_ms = 0)\n", l->lease_ms);
	fprintf(out, "a dead successor is skipped after %" PRIu64 " ms; a lost token is suspected after %u ms and\n",
		skip, l->loss_timeout_ms);
	fprintf(out, "regenerated after about %u ms + one election round (<= %zu x %" PRIu64 " ms = %" PRIu64 " ms with dead members)\n",
		l->loss_timeout_ms, dead, skip, (uint64_t)dead * skip);
	/* PROTOCOL.md §3.4: parked, or paced. */
	if (l->idle_pass_ms == 0)
		fprintf(out, "an unwanted token parks after a rotation (heartbeats, a lap every %u ms);\n"
			     "a member whose client asks summons it\n", l->loss_timeout_ms);
	else
		fprintf(out, "an unwanted token rests %u ms at each member and never parks: a request on an idle\n"
			     "ring waits up to about %" PRIu64 " ms for it\n", l->idle_pass_ms,
			(uint64_t)l->idle_pass_ms * l->n);
	if (l->quorum == RING_QUORUM_MAJORITY)
		fprintf(out, "a regeneration needs %zu of %zu members; a smaller side of a partition waits\n",
			ring_layout_quorum(l), l->n);
	if (l->quorum == RING_QUORUM_MAJORITY && l->n == 2)
		fprintf(out, "warning: with 2 members a majority is both: the ring stops granting when either one\n"
			     "  crashes or is stopped, even gracefully; use 3 members, or quorum = none (PROTOCOL.md §6.3)\n");
	/* PROTOCOL.md §5.3: an empty state_dir is proven by n - n/2 others. */
	if (l->quorum == RING_QUORUM_MAJORITY)
		fprintf(out, "a member with an empty state_dir (first start, or wiped) mints nothing until %zu other member%s answer%s it\n",
			l->n - l->n / 2, l->n - l->n / 2 == 1 ? "" : "s", l->n - l->n / 2 == 1 ? "s" : "");
	if (l->quorum != RING_QUORUM_MAJORITY)
		fprintf(out, "any member may regenerate (quorum none): both sides of a partition may hold a token; fencing keeps the resource safe\n");
}

/* Whether datagrams are authenticated, with which key, and what the ring
 * is open to when they are not. */
static void describe_authentication(const struct ring_conf *conf, FILE *out)
{
	const struct ring_layout *l = &conf->layout;
	if (conf->auto_key)
		fprintf(out, "authentication: on (the ring's own key %s: every member is on loopback and\n"
			     "  shares this state_dir; the first ringd makes it, ringctl ring and watch read it)\n",
			conf->secret_file);
	else if (conf->auth == RING_AUTH_KEYED)
		fprintf(out, "authentication: on (%s)\n", conf->secret_file);
	else
		fprintf(out, "authentication: off (%s)\n", ring_conf_auth_off_reason(conf));
	if (conf->auth != RING_AUTH_KEYED) {
		bool loopback = true;
		for (size_t i = 0; i < l->n; i++)
			loopback = loopback && ring_conf_host_is_loopback(l->members[i].host);
		fprintf(out, "warning: the ring has no key: %s can join it by binding a down member's\n"
			     "  port, and forge tokens and epochs; %s (docs/security.md)\n",
			loopback ? "any local user (loopback is not private on a shared host)"
				 : "anyone who can reach these ports",
			loopback ? "remove authentication = off to get the ring's own key"
				 : "set secret_file");
	}
}

/* What each member keeps or serves on its own host. */
static void describe_local(const struct ring_conf *conf, FILE *out)
{
	const struct ring_layout *l = &conf->layout;
	fprintf(out, "state_dir: %s; inject: %s\n", conf->state_dir,
		conf->allow_inject ? "allowed" : "refused");
	if (conf->control_group.name[0])
		fprintf(out, "control sockets: mode 0660, group %s (gid %u): its members may take the "
			     "lock\n", conf->control_group.name, (unsigned)conf->control_group.gid);
	else
		fprintf(out, "control sockets: mode 0600: only ringd's user and root may take the lock "
			     "(control_group unset)\n");
	for (size_t i = 0; i < l->n; i++)
		if (conf->metrics[i].port)
			fprintf(out, "metrics_listen: member %u serves http://%s%s%s:%u/metrics\n",
				l->members[i].id, strchr(conf->metrics[i].host, ':') ? "[" : "",
				conf->metrics[i].host, strchr(conf->metrics[i].host, ':') ? "]" : "",
				conf->metrics[i].port);
}

void ring_conf_describe(const struct ring_conf *conf, FILE *out)
{
	describe_members(conf, out);
	describe_timings(&conf->layout, out);
	describe_authentication(conf, out);
	describe_local(conf, out);
}

void ring_conf_help(FILE *out)
{
	const char *sec = "";
	for (size_t k = 0; k < ring_conf_key_count; k++) {
		const struct ring_conf_key *row = &ring_conf_keys[k];
		if (strcmp(sec, row->section) != 0) {
			sec = row->section;
			fprintf(out, "%s[%s]\n", k ? "\n" : "", sec);
		}
		fprintf(out, "  %-16s %s\n", row->name, row->doc);
		fprintf(out, "  %-16s values: %s; default: %s\n", "", row->values,
			!row->def ? "none, required" : row->def[0] ? row->def : "empty");
	}
}
