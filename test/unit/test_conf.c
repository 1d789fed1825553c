/* CUnit suite for the configuration file (ring/common/conf.c): SPEC's example,
 * defaults, path resolution, ring order, every error's FILE:LINE, the
 * report of ring_conf_describe, and the example files in conf/. */
#include <CUnit/CUnit.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/fingerprint.h"
#include "core/err.h"
#include "common/net.h"
#include "lib/suites.h"

/* ~110 KB: kept off the stack, and the tests run one at a time. */
static struct ring_conf conf;
static char err[1024];

/* Writes TEXT to a new file in /tmp; its name goes to PATH. */
static int write_tmp(const char *text, char *path, size_t size)
{
	snprintf(path, size, "/tmp/ring-conf-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* Loads TEXT from a temporary file, which is gone afterwards; the file's
 * name stays in PATH (when given) for checking the error's prefix. */
static int load_text(const char *text, char *path, size_t size)
{
	char tmp[64];
	if (!path) {
		path = tmp;
		size = sizeof tmp;
	}
	if (write_tmp(text, path, size) != 0) {
		CU_FAIL("cannot write a temporary file");
		return -1;
	}
	err[0] = '\0';
	int rc = ring_conf_load(path, &conf, err, sizeof err);
	unlink(path);
	return rc;
}

/* Checks that TEXT is refused with "FILE:LINE: " and a message holding
 * every one of WANT (up to three). Failures name the caller's line. */
static void expect_error_at(int at, const char *text, unsigned line, const char *want1,
			    const char *want2, const char *want3)
{
	char path[64], prefix[96];
	int rc = load_text(text, path, sizeof path);
	snprintf(prefix, sizeof prefix, "%s:%u: ", path, line);
	int ok = rc == -RING_ECONFIG && strncmp(err, prefix, strlen(prefix)) == 0 &&
		 strstr(err, want1) && (!want2 || strstr(err, want2)) &&
		 (!want3 || strstr(err, want3));
	if (!ok)
		fprintf(stderr, "\n  test_conf.c:%d: rc %d, want prefix \"%s\" and \"%s\", got \"%s\"\n",
			at, rc, prefix, want1, err);
	CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, (unsigned)at,
				"refused with the expected FILE:LINE: message", __FILE__, "", CU_FALSE);
}

#define EXPECT_ERROR(text, line, want) expect_error_at(__LINE__, text, line, want, NULL, NULL)
#define EXPECT_ERROR2(text, line, w1, w2) expect_error_at(__LINE__, text, line, w1, w2, NULL)
#define EXPECT_ERROR3(text, line, w1, w2, w3) expect_error_at(__LINE__, text, line, w1, w2, w3)

/* Two members, everything else default: the base most error cases extend. */
#define RING_MIN "[ring]\nname = t\n"
/* The same, for cases about something else whose hosts are not on
 * loopback: without a key such a ring must say it runs without one. */
#define RING_OPEN "[ring]\nname = t\nauthentication = off\n"
#define NODE(id, port) "[node." #id "]\nhost = 127.0.0.1\nport = " #port "\n"
#define TWO_NODES NODE(1, 7001) NODE(2, 7002)

static const char spec_example[] =
	"[ring]\n"
	"name = demo                 ; required; datagrams of another ring are dropped\n"
	"lease_ms = 5000             ; longest one visit may keep the token in the critical region\n"
	"ack_timeout_ms = 20         ; wait for a hop's ack before retransmitting the token\n"
	"retries = 3                 ; retransmits before the successor is declared dead and skipped\n"
	"heartbeat_ms = 100          ; while a member holds the token, it tells the others the token is alive\n"
	"loss_timeout_ms = 1000      ; silence (no token, no heartbeat) after which a member suspects loss\n"
	"idle_pass_ms = 0            ; how long an unwanted token rests before it is passed on (0 = at once)\n"
	"quorum = majority           ; majority | none: whether a regeneration needs a majority of members\n"
	"secret_file = demo.key      ; optional; when set every datagram is authenticated (HMAC)\n"
	"state_dir = /tmp/ring-demo  ; durable per-member state and control sockets\n"
	"allow_inject = false        ; whether `ringctl inject` may fault this member (tests and drills)\n"
	"\n"
	"[node.1]\n"
	"host = 127.0.0.1\n"
	"port = 7101\n"
	"successor = 2               ; optional; default: the next [node.*] section in file order, wrapping\n"
	"; control = /path/to.sock   ; optional; default <state_dir>/node-<id>.sock\n"
	"\n"
	"[node.2]\n"
	"host = 127.0.0.1\n"
	"port = 7102\n"
	"\n"
	"[node.3]\n"
	"host = ::1\n"
	"port = 7103\n"
	"control = /run/ring-3.sock\n";

static void test_spec_example_parses_with_every_value(void)
{
	CU_ASSERT_EQUAL_FATAL(load_text(spec_example, NULL, 0), 0);
	const struct ring_layout *l = &conf.layout;
	CU_ASSERT_STRING_EQUAL(l->name, "demo");
	CU_ASSERT_EQUAL(l->lease_ms, 5000);
	CU_ASSERT_EQUAL(l->ack_timeout_ms, 20);
	CU_ASSERT_EQUAL(l->retries, 3);
	CU_ASSERT_EQUAL(l->heartbeat_ms, 100);
	CU_ASSERT_EQUAL(l->loss_timeout_ms, 1000);
	CU_ASSERT_EQUAL(l->idle_pass_ms, 0);
	CU_ASSERT_EQUAL(l->quorum, RING_QUORUM_MAJORITY);
	CU_ASSERT_STRING_EQUAL(conf.secret_file, "/tmp/demo.key");
	CU_ASSERT_STRING_EQUAL(conf.state_dir, "/tmp/ring-demo");
	CU_ASSERT_FALSE(conf.allow_inject);
	CU_ASSERT_EQUAL_FATAL(l->n, 3);
	CU_ASSERT_EQUAL(l->members[0].id, 1);
	CU_ASSERT_EQUAL(l->members[1].id, 2);
	CU_ASSERT_EQUAL(l->members[2].id, 3);
	CU_ASSERT_STRING_EQUAL(l->members[0].host, "127.0.0.1");
	CU_ASSERT_STRING_EQUAL(l->members[2].host, "::1");
	CU_ASSERT_EQUAL(l->members[0].port, 7101);
	CU_ASSERT_EQUAL(l->members[1].port, 7102);
	CU_ASSERT_EQUAL(l->members[2].port, 7103);
	CU_ASSERT_STRING_EQUAL(conf.control[0], "/tmp/ring-demo/node-1.sock");
	CU_ASSERT_STRING_EQUAL(conf.control[1], "/tmp/ring-demo/node-2.sock");
	CU_ASSERT_STRING_EQUAL(conf.control[2], "/run/ring-3.sock");
	CU_ASSERT_EQUAL(strncmp(conf.path, "/tmp/ring-conf-", 15), 0);
}

static void test_defaults_applied(void)
{
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN TWO_NODES, NULL, 0), 0);
	struct ring_layout want;
	ring_layout_defaults(&want);
	CU_ASSERT_EQUAL(conf.layout.lease_ms, want.lease_ms);
	CU_ASSERT_EQUAL(conf.layout.ack_timeout_ms, want.ack_timeout_ms);
	CU_ASSERT_EQUAL(conf.layout.retries, want.retries);
	CU_ASSERT_EQUAL(conf.layout.heartbeat_ms, want.heartbeat_ms);
	CU_ASSERT_EQUAL(conf.layout.loss_timeout_ms, want.loss_timeout_ms);
	CU_ASSERT_EQUAL(conf.layout.idle_pass_ms, want.idle_pass_ms);
	CU_ASSERT_EQUAL(conf.layout.quorum, RING_QUORUM_MAJORITY);
	/* No secret_file on loopback: the ring's own key in state_dir. */
	CU_ASSERT_STRING_EQUAL(conf.secret_file, "/var/lib/ring/t/ring.key");
	CU_ASSERT(conf.auto_key);
	CU_ASSERT_STRING_EQUAL(conf.state_dir, "/var/lib/ring/t");
	CU_ASSERT_FALSE(conf.allow_inject);
	CU_ASSERT_STRING_EQUAL(conf.control[0], "/var/lib/ring/t/node-1.sock");
	CU_ASSERT_STRING_EQUAL(conf.control[1], "/var/lib/ring/t/node-2.sock");
}

/* The table's documented defaults are the layout's: docs and --help say
 * what the ring really uses. */
static void test_table_defaults_are_the_layout_defaults(void)
{
	struct ring_layout want;
	ring_layout_defaults(&want);
	const struct {
		const char *key;
		uint32_t value;
	} rows[] = {
		{ "lease_ms", want.lease_ms },         { "ack_timeout_ms", want.ack_timeout_ms },
		{ "retries", want.retries },           { "heartbeat_ms", want.heartbeat_ms },
		{ "loss_timeout_ms", want.loss_timeout_ms }, { "idle_pass_ms", want.idle_pass_ms },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		size_t k = 0;
		while (k < ring_conf_key_count && strcmp(ring_conf_keys[k].name, rows[r].key) != 0)
			k++;
		CU_ASSERT_FATAL(k < ring_conf_key_count);
		CU_ASSERT_EQUAL(strtoul(ring_conf_keys[k].def, NULL, 10), rows[r].value);
	}
}

/* A number's values text is its bounds, so messages and docs agree. */
static void test_table_values_text_matches_bounds(void)
{
	for (size_t k = 0; k < ring_conf_key_count; k++) {
		const struct ring_conf_key *row = &ring_conf_keys[k];
		char range[32];
		snprintf(range, sizeof range, "%u..%u", row->min, row->max);
		if (strstr(row->name, "_ms") || strcmp(row->name, "retries") == 0 ||
		    strcmp(row->name, "port") == 0)
			CU_ASSERT_STRING_EQUAL(row->values, range);
		CU_ASSERT_PTR_NOT_NULL(row->doc);
	}
}

static void test_relative_paths_resolve_against_the_files_folder(void)
{
	CU_ASSERT_EQUAL_FATAL(load_text("[ring]\nname = t\nstate_dir = state\n"
					"secret_file = ./keys/ring.key\n"
					"[node.1]\nhost = h1\nport = 1\ncontrol = sock/n1.sock\n"
					"[node.2]\nhost = h2\nport = 1\ncontrol = /abs/n2.sock\n",
					NULL, 0),
			      0);
	CU_ASSERT_STRING_EQUAL(conf.state_dir, "/tmp/state");
	CU_ASSERT_STRING_EQUAL(conf.secret_file, "/tmp/keys/ring.key");
	CU_ASSERT_STRING_EQUAL(conf.control[0], "/tmp/sock/n1.sock");
	CU_ASSERT_STRING_EQUAL(conf.control[1], "/abs/n2.sock");
}

/* A file named by a relative path: its folder is found from the working
 * directory, and what comes out is absolute. */
static void test_relative_config_path_gives_absolute_paths(void)
{
	char path[64], cwd[PATH_MAX], rel[PATH_MAX + 64] = "";
	CU_ASSERT_FATAL(getcwd(cwd, sizeof cwd) != NULL);
	CU_ASSERT_EQUAL_FATAL(write_tmp(RING_MIN "state_dir = st\n" TWO_NODES, path, sizeof path), 0);
	for (const char *p = cwd; *p; p++)
		if (*p == '/' && p[1])
			strcat(rel, "../");
	strcat(rel, path + 1); /* "tmp/ring-conf-..." */
	int rc = ring_conf_load(rel, &conf, err, sizeof err);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(conf.path, rel);
	CU_ASSERT_EQUAL(strncmp(conf.state_dir, cwd, strlen(cwd)), 0);
	size_t len = strlen(conf.state_dir);
	CU_ASSERT_FATAL(len > 7 && strcmp(conf.state_dir + len - 7, "/tmp/st") == 0);
	/* cwd/../../tmp is /tmp: the same directory. */
	char folder[PATH_MAX];
	struct stat a, b;
	snprintf(folder, sizeof folder, "%.*s", (int)(len - 3), conf.state_dir);
	CU_ASSERT_FATAL(stat(folder, &a) == 0 && stat("/tmp", &b) == 0);
	CU_ASSERT(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

static void test_default_successor_is_next_section_wrapping(void)
{
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN NODE(5, 1) NODE(3, 2) NODE(9, 3), NULL, 0), 0);
	CU_ASSERT_EQUAL_FATAL(conf.layout.n, 3);
	CU_ASSERT_EQUAL(conf.layout.members[0].id, 5);
	CU_ASSERT_EQUAL(conf.layout.members[1].id, 3);
	CU_ASSERT_EQUAL(conf.layout.members[2].id, 9);
	CU_ASSERT_EQUAL(conf.layout.members[1].port, 2);
	CU_ASSERT_STRING_EQUAL(conf.control[2], "/var/lib/ring/t/node-9.sock");
}

static void test_explicit_successors_give_ring_order(void)
{
	CU_ASSERT_EQUAL_FATAL(load_text(RING_OPEN
					"[node.1]\nhost = a\nport = 1\nsuccessor = 3\n"
					"[node.2]\nhost = b\nport = 1\nsuccessor = 4\n"
					"[node.3]\nhost = c\nport = 1\nsuccessor = 2\n"
					"[node.4]\nhost = d\nport = 1\nsuccessor = 1\n",
					NULL, 0),
			      0);
	const uint16_t want[] = { 1, 3, 2, 4 };
	CU_ASSERT_EQUAL_FATAL(conf.layout.n, 4);
	for (size_t i = 0; i < 4; i++) {
		CU_ASSERT_EQUAL(conf.layout.members[i].id, want[i]);
		/* control sockets follow their members into ring order */
		char sock[64];
		snprintf(sock, sizeof sock, "/var/lib/ring/t/node-%u.sock", want[i]);
		CU_ASSERT_STRING_EQUAL(conf.control[i], sock);
	}
	CU_ASSERT_STRING_EQUAL(conf.layout.members[1].host, "c");
}

/* Written successors and file order mix: 1 -> 3 and 3 -> 2 are written,
 * 2 is the last section and wraps to the first, 1. */
static void test_mixed_successors(void)
{
	CU_ASSERT_EQUAL_FATAL(load_text(RING_OPEN
					"[node.1]\nhost = a\nport = 1\nsuccessor = 3\n"
					"[node.3]\nhost = c\nport = 1\nsuccessor = 2\n"
					"[node.2]\nhost = b\nport = 1\n",
					NULL, 0),
			      0);
	CU_ASSERT_EQUAL(conf.layout.members[0].id, 1);
	CU_ASSERT_EQUAL(conf.layout.members[1].id, 3);
	CU_ASSERT_EQUAL(conf.layout.members[2].id, 2);
}

static void test_inline_comments_and_indentation(void)
{
	/* Two texts alike but for the lines between these two halves. */
#define COMMENTED_RING "; a comment\n# another\n"   \
		       "[ring] ; the ring\n"           \
		       "name = demo ; c\n"             \
		       "retries = 5\t; tab before\n"   \
		       "secret_file = ; empty: off\n"
#define INDENTED_NODES "[node.1]\n"                                  \
		       "   host = 10.0.0.1   ; indented keys are keys\n" \
		       "   port = 7001\n"                              \
		       "[node.2]\n"                                    \
		       "host = 10.0.0.2\n"                             \
		       "port = 7002\n"
	CU_ASSERT_EQUAL_FATAL(load_text(COMMENTED_RING
					"allow_inject = yes;\n" /* no blank before ';': not a comment */
					INDENTED_NODES,
					NULL, 0),
			      -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":7: allow_inject = \"yes;\" is not a boolean"));

	CU_ASSERT_EQUAL_FATAL(load_text(COMMENTED_RING
					"authentication = off ; across a network, said so\n"
					"allow_inject = yes ;\n"
					INDENTED_NODES,
					NULL, 0),
			      0);
#undef COMMENTED_RING
#undef INDENTED_NODES
	CU_ASSERT_STRING_EQUAL(conf.layout.name, "demo");
	CU_ASSERT_EQUAL(conf.layout.retries, 5);
	CU_ASSERT_STRING_EQUAL(conf.secret_file, "");
	CU_ASSERT_TRUE(conf.allow_inject);
	CU_ASSERT_STRING_EQUAL(conf.layout.members[0].host, "10.0.0.1");
	CU_ASSERT_EQUAL(conf.layout.members[0].port, 7001);
}

/* Without a key anyone who can reach a member's port can act as a member:
 * a ring beyond loopback needs secret_file, or says authentication = off. */
static void test_a_ring_beyond_loopback_needs_a_key_or_says_so(void)
{
#define REMOTE_NODES "[node.1]\nhost = 10.0.0.1\nport = 7001\n[node.2]\nhost = 10.0.0.2\nport = 7002\n"
	/* Refused at the first member that is not on loopback, naming the fix. */
	EXPECT_ERROR3(RING_MIN REMOTE_NODES, 4, "[node.1] host 10.0.0.1 is not a loopback address",
		      "`ringctl keygen t.key`", "secret_file = t.key");
	EXPECT_ERROR(RING_MIN REMOTE_NODES, 4, "authentication = off");
	EXPECT_ERROR(RING_MIN NODE(1, 7001) "[node.2]\nhost = 192.0.2.2\nport = 7002\n", 7,
		     "[node.2] host 192.0.2.2 is not a loopback address");
	/* Names are not looked up: localhost could be anything. */
	EXPECT_ERROR(RING_MIN NODE(1, 7001) "[node.2]\nhost = localhost\nport = 7002\n", 7,
		     "host localhost is not a loopback address");

	/* Said so: runs without, and says why. */
	CU_ASSERT_EQUAL_FATAL(load_text(RING_OPEN REMOTE_NODES, NULL, 0), 0);
	CU_ASSERT_EQUAL(conf.authentication, RING_CONF_AUTH_OFF);
	CU_ASSERT_EQUAL(conf.auth, RING_AUTH_OFF_CHOSEN);
	CU_ASSERT_PTR_NOT_NULL(strstr(ring_conf_auth_off_reason(&conf), "anyone who can reach"));
	uint64_t open_fp = ring_layout_fingerprint(&conf.layout);
	/* A key: authenticated, and the same fingerprint. Whether a ring
	 * authenticates is not in it: a keyed member refuses an unsealed
	 * datagram (auth_fail) and an unkeyed one a sealed datagram (too
	 * long: bad_packet) before any fingerprint is compared. */
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "secret_file = t.key\n" REMOTE_NODES, NULL, 0), 0);
	CU_ASSERT_EQUAL(conf.auth, RING_AUTH_KEYED);
	CU_ASSERT_PTR_NULL(ring_conf_auth_off_reason(&conf));
	CU_ASSERT_EQUAL(ring_layout_fingerprint(&conf.layout), open_fp);
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "authentication = on\nsecret_file = t.key\n" REMOTE_NODES,
					NULL, 0), 0);
	CU_ASSERT_EQUAL(conf.auth, RING_AUTH_KEYED);

	/* Loopback only, no secret_file: keyed all the same, by the ring's
	 * own key in state_dir (loopback is not private on a shared host). */
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN TWO_NODES, NULL, 0), 0);
	CU_ASSERT_EQUAL(conf.authentication, RING_CONF_AUTH_AUTO);
	CU_ASSERT_EQUAL(conf.auth, RING_AUTH_KEYED);
	CU_ASSERT(conf.auto_key);
	char want[RING_PATH_MAX + 16];
	snprintf(want, sizeof want, "%s/ring.key", conf.state_dir);
	CU_ASSERT_STRING_EQUAL(conf.secret_file, want);
	CU_ASSERT_PTR_NULL(ring_conf_auth_off_reason(&conf));
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "[node.1]\nhost = 127.9.8.7\nport = 1\n"
					"[node.2]\nhost = ::1\nport = 1\n"
					"[node.3]\nhost = ::ffff:127.0.0.1\nport = 1\n", NULL, 0), 0);
	CU_ASSERT_EQUAL(conf.auth, RING_AUTH_KEYED);
	CU_ASSERT(conf.auto_key);
	/* A secret_file named is used as named, never the auto key. */
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "secret_file = t.key\n" TWO_NODES, NULL, 0), 0);
	CU_ASSERT(!conf.auto_key);
	/* off on loopback: no key, and the reason says anyone may act. */
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "authentication = off\n" TWO_NODES, NULL, 0), 0);
	CU_ASSERT_EQUAL(conf.auth, RING_AUTH_OFF_CHOSEN);
	CU_ASSERT(!conf.auto_key);
	CU_ASSERT_STRING_EQUAL(conf.secret_file, "");

	/* on wants a key even on loopback; off and a key contradict. */
	EXPECT_ERROR2(RING_MIN "authentication = on\n" TWO_NODES, 3, "authentication = on needs a key",
		      "`ringctl keygen t.key`");
	EXPECT_ERROR2(RING_MIN "secret_file = t.key\nauthentication = off\n" TWO_NODES, 4,
		      "authentication = off, but secret_file is set (line 3)", "remove one");
	EXPECT_ERROR(RING_MIN "authentication = maybe\n" TWO_NODES, 3,
		     "authentication = \"maybe\" is not one of auto, on or off");
	CU_ASSERT_EQUAL(load_text(RING_MIN "authentication = OFF\n" REMOTE_NODES, NULL, 0), 0);
	/* A file error on an earlier line still comes first. */
	EXPECT_ERROR(RING_MIN "retries = x\n" REMOTE_NODES, 3, "not a decimal number");
#undef REMOTE_NODES

	CU_ASSERT_TRUE(ring_conf_host_is_loopback("127.0.0.1"));
	CU_ASSERT_TRUE(ring_conf_host_is_loopback("127.255.255.255"));
	CU_ASSERT_TRUE(ring_conf_host_is_loopback("::1"));
	CU_ASSERT_TRUE(ring_conf_host_is_loopback("::1%lo"));
	CU_ASSERT_FALSE(ring_conf_host_is_loopback("128.0.0.1"));
	CU_ASSERT_FALSE(ring_conf_host_is_loopback("0.0.0.0"));
	CU_ASSERT_FALSE(ring_conf_host_is_loopback("::2"));
	CU_ASSERT_FALSE(ring_conf_host_is_loopback("::ffff:10.0.0.1"));
	CU_ASSERT_FALSE(ring_conf_host_is_loopback("localhost"));
}

static void test_booleans_and_quorum_words(void)
{
	static const struct {
		const char *text;
		bool value;
	} words[] = { { "true", true }, { "false", false }, { "yes", true },
		      { "no", false },  { "1", true },      { "0", false } };
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, RING_MIN "allow_inject = %s\nquorum = none\n" TWO_NODES,
			 words[i].text);
		CU_ASSERT_EQUAL_FATAL(load_text(text, NULL, 0), 0);
		CU_ASSERT_EQUAL(conf.allow_inject, words[i].value);
		CU_ASSERT_EQUAL(conf.layout.quorum, RING_QUORUM_NONE);
	}
}

static void test_bounds_are_inclusive(void)
{
	CU_ASSERT_EQUAL(load_text("[ring]\nname = a.B_c-9\nauthentication = off\nlease_ms = 3600000\nack_timeout_ms = 60000\n"
				  "retries = 0\nheartbeat_ms = 1\nloss_timeout_ms = 3600000\n"
				  "idle_pass_ms = 60000\n"
				  "[node.1]\nhost = h\nport = 65535\n[node.65535]\nhost = h\nport = 1\n",
				  NULL, 0),
			0);
	CU_ASSERT_EQUAL(conf.layout.members[1].id, 65535);
	CU_ASSERT_EQUAL(conf.layout.idle_pass_ms, 60000);
	char name[80];
	memset(name, 'n', 63);
	name[63] = '\0';
	char text[256];
	snprintf(text, sizeof text, "[ring]\nname = %s\n" TWO_NODES, name);
	CU_ASSERT_EQUAL(load_text(text, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(conf.layout.name, name);
}

static void test_errors_in_sections(void)
{
	EXPECT_ERROR2(RING_MIN "[nodes]\n" TWO_NODES, 3, "unknown section [nodes]", "[node.ID]");
	EXPECT_ERROR(RING_MIN "[node.abc]\n" TWO_NODES, 3, "1..65535");
	EXPECT_ERROR(RING_MIN "[node.0]\nhost = a\nport = 3\n" TWO_NODES, 3, "1..65535");
	EXPECT_ERROR(RING_MIN "[node.65536]\nhost = a\nport = 3\n" TWO_NODES, 3, "1..65535");
	EXPECT_ERROR(RING_MIN "[node.-1]\n" TWO_NODES, 3, "1..65535");
	EXPECT_ERROR(RING_MIN "[node.]\n" TWO_NODES, 3, "unknown section [node.]");
	EXPECT_ERROR2(RING_MIN TWO_NODES "[node.2]\nhost = b\nport = 9\n", 9,
		      "duplicate section [node.2]", "line 6");
	EXPECT_ERROR2(RING_MIN TWO_NODES "[ring]\n", 9, "duplicate section [ring]", "line 1");
	EXPECT_ERROR(RING_MIN "[node.1\n" TWO_NODES, 3, "expected [section]");
	EXPECT_ERROR("name = t\n[ring]\n" TWO_NODES, 1, "before any section");
}

static void test_errors_in_keys(void)
{
	EXPECT_ERROR3(RING_MIN "lease = 5\n" TWO_NODES, 3, "unknown key lease in [ring]",
		      "lease_ms", "allow_inject");
	EXPECT_ERROR2(RING_MIN "[node.1]\nhost = a\nport = 1\naddress = b\n" NODE(2, 7002), 6,
		      "unknown key address in [node.1]", "successor");
	EXPECT_ERROR2(RING_MIN "lease_ms = 10\nlease_ms = 20\n" TWO_NODES, 4,
		      "duplicate key lease_ms in [ring]", "line 3");
	EXPECT_ERROR2(RING_MIN "[node.1]\nhost = a\nport = 1\nport = 2\n" NODE(2, 7002), 6,
		      "duplicate key port in [node.1]", "line 5");
	EXPECT_ERROR(RING_MIN "port 7001\n" TWO_NODES, 3, "expected [section], key = value");
}

static void test_errors_in_numbers(void)
{
	static const char *const bad[] = { "5s", "-5", "+5", "0x10", "1e3", "5 000", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[256];
		snprintf(text, sizeof text, RING_MIN "lease_ms = %s\n" TWO_NODES, bad[i]);
		EXPECT_ERROR2(text, 3, "lease_ms", "is not a decimal number (1..3600000)");
	}
	EXPECT_ERROR(RING_MIN "lease_ms = 0\n" TWO_NODES, 3, "lease_ms = 0 is out of range 1..3600000");
	EXPECT_ERROR(RING_MIN "lease_ms = 3600001\n" TWO_NODES, 3, "out of range 1..3600000");
	EXPECT_ERROR(RING_MIN "lease_ms = 99999999999999999999999\n" TWO_NODES, 3,
		     "out of range 1..3600000");
	EXPECT_ERROR(RING_MIN "ack_timeout_ms = 60001\n" TWO_NODES, 3, "out of range 1..60000");
	EXPECT_ERROR(RING_MIN "retries = 101\n" TWO_NODES, 3, "retries = 101 is out of range 0..100");
	EXPECT_ERROR(RING_MIN "heartbeat_ms = 0\n" TWO_NODES, 3, "out of range 1..60000");
	EXPECT_ERROR(RING_MIN "loss_timeout_ms = 0\n" TWO_NODES, 3, "out of range 1..3600000");
	EXPECT_ERROR(RING_MIN "idle_pass_ms = 60001\n" TWO_NODES, 3, "out of range 0..60000");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = a\nport = 0\n" NODE(2, 7002), 5,
		     "port = 0 is out of range 1..65535");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = a\nport = 65536\n" NODE(2, 7002), 5,
		     "out of range 1..65535");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = a\nport = 1\nsuccessor = two\n" NODE(2, 7002), 6,
		     "successor = \"two\" is not a decimal number");
}

static void test_errors_in_words(void)
{
	EXPECT_ERROR2(RING_MIN "allow_inject = maybe\n" TWO_NODES, 3,
		      "allow_inject = \"maybe\" is not a boolean", "true, false, yes");
	EXPECT_ERROR(RING_MIN "quorum = most\n" TWO_NODES, 3,
		     "quorum = \"most\" is neither majority nor none");
	EXPECT_ERROR(RING_MIN "name = x\n" TWO_NODES, 3, "duplicate key name");
	EXPECT_ERROR("[ring]\nname = de/mo\n" TWO_NODES, 2, "may only hold letters");
	EXPECT_ERROR("[ring]\nname = de mo\n" TWO_NODES, 2, "may only hold letters");
	EXPECT_ERROR("[ring]\nname =\n" TWO_NODES, 2, "name must be 1..63 characters long, not 0");
	EXPECT_ERROR("[ring]\nname = "
		     "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\n" TWO_NODES,
		     2, "1..63 characters long, not 64");
	EXPECT_ERROR(RING_MIN "state_dir =\n" TWO_NODES, 3, "state_dir must not be empty");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = a b\nport = 1\n" NODE(2, 7002), 4, "space");
	EXPECT_ERROR2(RING_MIN "[node.1]\nhost = [::1]\nport = 1\n" NODE(2, 7002), 4,
		      "host \"[::1]\"", "without brackets");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = 300.1.1.1\nport = 1\n" NODE(2, 7002), 4,
		     "not an IPv4 address");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = a..b\nport = 1\n" NODE(2, 7002), 4,
		     "not a host name");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = a/b\nport = 1\n" NODE(2, 7002), 4,
		     "not a host name");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost =\nport = 1\n" NODE(2, 7002), 4, "host \"\" is empty");
	/* Addresses the daemon can use. */
	CU_ASSERT_EQUAL(load_text(RING_OPEN "[node.1]\nhost = fe80::1%eth0\nport = 1\n"
					   "[node.2]\nhost = db-2.example.org.\nport = 1\n",
				  NULL, 0),
			0);
}

static void test_errors_in_required_keys(void)
{
	EXPECT_ERROR2("[ring]\nretries = 2\n" TWO_NODES, 1, "[ring] has no name", "required");
	EXPECT_ERROR(TWO_NODES, 0, "no [ring] section");
	EXPECT_ERROR("", 0, "no [ring] section");
	EXPECT_ERROR(RING_MIN "[node.1]\nport = 1\n" NODE(2, 7002), 3, "[node.1] has no host");
	EXPECT_ERROR(RING_MIN NODE(1, 7001) "\n[node.2]\nhost = b\n", 7, "[node.2] has no port");
	EXPECT_ERROR(RING_MIN NODE(1, 7001) "[node.2]\n", 6, "[node.2] has no host");
}

static void test_errors_in_membership(void)
{
	EXPECT_ERROR2(RING_MIN NODE(1, 7001), 3, "2..256 members", "has 1");
	EXPECT_ERROR2(RING_MIN, 1, "2..256 members", "has 0");
	EXPECT_ERROR3(RING_MIN NODE(1, 7001) NODE(2, 7001), 8, "[node.2] has the same address",
		      "127.0.0.1 port 7001", "[node.1] (line 3)");
	/* Host names compare without case. */
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = Db\nport = 1\n[node.2]\nhost = dB\nport = 1\n", 8,
		     "same address");

	/* 257 members: refused at the 257th header. */
	size_t size = 64 + 257 * 48;
	char *text = malloc(size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	size_t len = (size_t)snprintf(text, size, RING_OPEN);
	for (unsigned id = 1; id <= 257; id++)
		len += (size_t)snprintf(text + len, size - len, "[node.%u]\nhost = h\nport = %u\n",
					id, id);
	EXPECT_ERROR2(text, 4 + 256 * 3, "2..256 members", "[node.257] is member 257");
	/* ...and 256 are fine. */
	*strstr(text, "[node.257]") = '\0';
	CU_ASSERT_EQUAL(load_text(text, NULL, 0), 0);
	CU_ASSERT_EQUAL(conf.layout.n, 256);
	CU_ASSERT_EQUAL(conf.layout.members[255].id, 256);
	free(text);
}

/* Loads TEXT (which must load) and runs ring_net_check_conf on it: the
 * check ringd makes once host names are resolved. */
static int check_resolved(const char *text, char *path, size_t size)
{
	if (load_text(text, path, size) != 0) {
		fprintf(stderr, "\n  test_conf.c: does not load: %s\n", err);
		return 1;
	}
	err[0] = '\0';
	return ring_net_check_conf(&conf, err, sizeof err);
}

#define HOST_NODE(id, host, port) "[node." #id "]\nhost = " host "\nport = " #port "\n"

static void test_one_address_under_two_names_is_refused(void)
{
	char path[64], prefix[96];
	/* localhost is 127.0.0.1 in every /etc/hosts: one member twice. */
	int rc = check_resolved(RING_OPEN HOST_NODE(1, "127.0.0.1", 7301)
				HOST_NODE(2, "127.0.0.2", 7301) HOST_NODE(3, "localhost", 7301),
				path, sizeof path);
	snprintf(prefix, sizeof prefix, "%s:12: ", path);
	CU_ASSERT_EQUAL(rc, -RING_ECONFIG);
	CU_ASSERT_EQUAL(strncmp(err, prefix, strlen(prefix)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "[node.3] (host localhost, port 7301) is at 127.0.0.1:7301"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "as [node.1] (host 127.0.0.1, line 6)"));
	/* Said at the member written later in the file, whatever the ring
	 * order (successor puts node.2 first here). */
	rc = check_resolved(RING_OPEN HOST_NODE(1, "localhost", 7301) "successor = 2\n"
			    HOST_NODE(2, "127.0.0.1", 7301) "successor = 1\n",
			    path, sizeof path);
	snprintf(prefix, sizeof prefix, "%s:10: ", path);
	CU_ASSERT_EQUAL(rc, -RING_ECONFIG);
	CU_ASSERT_EQUAL(strncmp(err, prefix, strlen(prefix)), 0);
	/* An IPv4-mapped IPv6 address is the IPv4 one. */
	CU_ASSERT_EQUAL(check_resolved(RING_OPEN HOST_NODE(1, "127.0.0.1", 7301)
				       HOST_NODE(2, "::ffff:127.0.0.1", 7301), path, sizeof path),
			-RING_ECONFIG);
	/* Another port, or another address, is another member. */
	CU_ASSERT_EQUAL(check_resolved(RING_OPEN HOST_NODE(1, "127.0.0.1", 7301)
				       HOST_NODE(2, "localhost", 7302), NULL, 0), 0);
	CU_ASSERT_EQUAL(check_resolved(RING_OPEN HOST_NODE(1, "127.0.0.1", 7301)
				       HOST_NODE(2, "127.0.0.2", 7301), NULL, 0), 0);
	/* But not of another address family: a member speaks only its own
	 * address's, and the start refuses such a ring. */
	CU_ASSERT_EQUAL(check_resolved(RING_OPEN HOST_NODE(1, "127.0.0.1", 7301)
				       HOST_NODE(2, "::1", 7301), path, sizeof path),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is IPv6 only"));
	/* A host that does not resolve is ringd's start's to report. */
	CU_ASSERT_EQUAL(check_resolved(RING_OPEN HOST_NODE(1, "127.0.0.1", 7301)
				       HOST_NODE(2, "no-such-host.invalid", 7301), NULL, 0), 0);
}

static void test_errors_in_successors(void)
{
	/* Not a member: the successor key's line. */
	EXPECT_ERROR2(RING_MIN "[node.1]\nhost = a\nport = 1\nsuccessor = 7\n" NODE(2, 7002), 6,
		      "successor 7 of [node.1] is not a member", "no [node.7]");
	EXPECT_ERROR(RING_MIN "[node.1]\nhost = a\nport = 1\nsuccessor = 1\n" NODE(2, 7002), 6,
		     "[node.1] is its own successor");
	/* Two written successors meet: the later key's line. */
	EXPECT_ERROR3(RING_MIN "[node.1]\nhost = a\nport = 1\nsuccessor = 3\n"
			       "[node.2]\nhost = b\nport = 1\nsuccessor = 3\n" NODE(3, 7003),
		      10, "[node.1] and [node.2] both have successor 3", "one cycle",
		      "through all members");
	/* A written successor meets a file-order one: the written one's line. */
	EXPECT_ERROR2(RING_MIN NODE(1, 7001) NODE(2, 7002) NODE(3, 7003)
			       "[node.4]\nhost = d\nport = 1\nsuccessor = 3\n",
		      15, "[node.2] (by file order) and [node.4] both have successor 3", "cycle");
	/* A cycle that misses members: 1 -> 2 -> 1 leaves out 3 and 4. */
	EXPECT_ERROR3(RING_MIN "[node.1]\nhost = a\nport = 1\nsuccessor = 2\n"
			       "[node.2]\nhost = b\nport = 1\nsuccessor = 1\n"
			       "[node.3]\nhost = c\nport = 1\nsuccessor = 4\n"
			       "[node.4]\nhost = d\nport = 1\nsuccessor = 3\n",
		      10, "1 -> 2 -> 1 after 2 of 4 members", "missing members 3, 4", "one cycle");
	/* The closing successor is by file order: blame the last written one. */
	EXPECT_ERROR2(RING_MIN "[node.1]\nhost = a\nport = 1\nsuccessor = 3\n"
			       "[node.2]\nhost = b\nport = 1\nsuccessor = 2\n" /* own: caught first */
			       NODE(3, 7003),
		      10, "[node.2] is its own successor", "");
	EXPECT_ERROR2(RING_MIN "[node.1]\nhost = a\nport = 1\nsuccessor = 3\n"
			       "[node.2]\nhost = b\nport = 1\nsuccessor = 4\n"
			       "[node.4]\nhost = d\nport = 1\nsuccessor = 2\n" NODE(3, 7003),
		      6, "1 -> 3 -> 1 after 2 of 4", "missing members 2, 4");
}

static void test_errors_in_timings(void)
{
	/* ring_layout_check's rule, at the loss timeout's line... */
	EXPECT_ERROR2(RING_MIN "loss_timeout_ms = 300\nheartbeat_ms = 100\n" TWO_NODES, 3,
		      "loss_timeout_ms (300) must be at least 4 x heartbeat_ms (100)", "");
	/* ...or the heartbeat's when the loss timeout is the default. */
	EXPECT_ERROR(RING_MIN "idle_pass_ms = 5\nheartbeat_ms = 300\n" TWO_NODES, 4,
		     "must be at least 4 x heartbeat_ms");
	CU_ASSERT_EQUAL(load_text(RING_MIN "loss_timeout_ms = 400\nheartbeat_ms = 100\n" TWO_NODES,
				  NULL, 0),
			0);
}

static void test_errors_in_paths(void)
{
	char longdir[200], text[512];
	memset(longdir, 'd', 110);
	longdir[110] = '\0';
	/* A written control path: its own line. */
	snprintf(text, sizeof text, RING_MIN "[node.1]\nhost = a\nport = 1\ncontrol = /%s.sock\n" NODE(2, 7002),
		 longdir);
	EXPECT_ERROR2(text, 6, "control /dddd", "a Unix socket path has at most 107");
	/* A default one that a long state_dir pushes over: state_dir's line. */
	longdir[100] = '\0';
	snprintf(text, sizeof text, RING_MIN "state_dir = /%s\n" TWO_NODES, longdir);
	EXPECT_ERROR2(text, 3, "node-1.sock of [node.1]", "shorten state_dir or set control");
	/* 107 bytes fit, 108 do not. */
	memset(longdir, 'd', 101);
	longdir[101] = '\0';
	snprintf(text, sizeof text, RING_MIN "[node.1]\nhost = 127.0.0.1\nport = 1\ncontrol = /%s.sock\n" NODE(2, 7002),
		 longdir);
	CU_ASSERT_EQUAL(load_text(text, NULL, 0), 0);
	CU_ASSERT_EQUAL(strlen(conf.control[0]), RING_SOCK_MAX - 1);
	longdir[101] = 'd';
	longdir[102] = '\0';
	snprintf(text, sizeof text, RING_MIN "[node.1]\nhost = a\nport = 1\ncontrol = /%s.sock\n" NODE(2, 7002),
		 longdir);
	EXPECT_ERROR(text, 6, "is 108 bytes long");
}

static void test_errors_in_reading(void)
{
	err[0] = '\0';
	CU_ASSERT_EQUAL(ring_conf_load("/nonexistent/ring.ini", &conf, err, sizeof err), -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/ring.ini:0: No such file or directory"));
	CU_ASSERT_EQUAL(ring_conf_load("/tmp", &conf, err, sizeof err), -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/tmp:0: "));

	/* A line longer than inih can hold is refused, not cut. */
	char text[600];
	snprintf(text, sizeof text, RING_MIN "; %0500d\n" TWO_NODES, 0);
	EXPECT_ERROR(text, 3, "line longer than");
}

/* inih keeps going after an error; what is reported is the first one,
 * whoever found it. */
static void test_first_error_wins(void)
{
	EXPECT_ERROR("[ring]\nname = t\nnonsense\nlease = 1\n" TWO_NODES, 3, "expected [section]");
	EXPECT_ERROR("[ring]\nname = t\nlease = 1\nnonsense\n" TWO_NODES, 3, "unknown key lease");
	EXPECT_ERROR("[ring]\nname = t\n[bad]\nnonsense\n" TWO_NODES, 3, "unknown section [bad]");
	/* The keys of a refused section are not judged again. */
	EXPECT_ERROR(RING_MIN "[node.x]\nfoo = 1\n" TWO_NODES, 3, "[node.x]");
}

/* The error buffer may be small: the message is cut, never overrun. */
static void test_error_fits_a_small_buffer(void)
{
	char small[12];
	char path[64];
	CU_ASSERT_EQUAL_FATAL(write_tmp(RING_MIN "bogus = 1\n" TWO_NODES, path, sizeof path), 0);
	memset(small, 'x', sizeof small);
	CU_ASSERT_EQUAL(ring_conf_load(path, &conf, small, sizeof small), -RING_ECONFIG);
	CU_ASSERT_EQUAL(small[sizeof small - 1], '\0');
	CU_ASSERT_EQUAL(ring_conf_load(path, &conf, NULL, 0), -RING_ECONFIG);
	unlink(path);
}

/* What ring_conf_describe (ringd --check) prints for the loaded conf, in a
 * buffer the caller frees. */
static char *describe(void)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	ring_conf_describe(&conf, out);
	fclose(out);
	return buf;
}

/* Loads TEXT, which must load, and describes it; free it. */
static char *describe_text(const char *text)
{
	CU_ASSERT_EQUAL_FATAL(load_text(text, NULL, 0), 0);
	return describe();
}

static void test_describe_shows_members_and_timings(void)
{
	CU_ASSERT_EQUAL_FATAL(ring_conf_load("conf/local5.ini", &conf, err, sizeof err), 0);
	char *buf = describe();
	char fp[64], cwd[1024], sock1[1200], sock5[1200], key[1200], state[1200];
	snprintf(fp, sizeof fp, "fingerprint %016llx\n",
		 (unsigned long long)ring_layout_fingerprint(&conf.layout));
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	/* The demo keeps its state beside the file, not in /tmp. */
	snprintf(sock1, sizeof sock1, "      1      1  127.0.0.1:7101          2  %s/conf/demo-state/node-1.sock\n", cwd);
	snprintf(sock5, sizeof sock5, "      5      5  127.0.0.1:7105          1  %s/conf/demo-state/node-5.sock\n", cwd);
	snprintf(key, sizeof key, "authentication: on (the ring's own key %s/conf/demo-state/ring.key:", cwd);
	snprintf(state, sizeof state, "state_dir: %s/conf/demo-state; inject: allowed\n", cwd);
	const char *const want[] = {
		"ring \"demo\": 5 members, quorum majority (3), ",
		fp,
		"  order     id  address         successor  control\n",
		sock1,
		sock5,
		"timings: lease 2000 ms, ack timeout 20 ms x (1 + 3 retries), heartbeat 50 ms, loss timeout 600 ms, idle pass 0 ms\n",
		"an unwanted token parks after a rotation (heartbeats, a lap every 600 ms);\n"
		"a member whose client asks summons it\n",
		"a dead successor is skipped after 80 ms",
		"suspected after 600 ms",
		"regenerated after about 600 ms + one election round (<= 4 x 80 ms = 320 ms",
		"needs 3 of 5 members",
		key,
		state,
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (!strstr(buf, want[i])) {
			fprintf(stderr, "\n  describe lacks \"%s\" in:\n%s", want[i], buf);
			CU_FAIL("describe output");
		}
	free(buf);

	/* IPv6 addresses get brackets; a secret shows its file. */
	buf = describe_text(spec_example);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "[::1]:7103"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "authentication: on (/tmp/demo.key)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "inject: refused"));
	CU_ASSERT_PTR_NULL(strstr(buf, "warning: with 2 members"));
	free(buf);

	/* Two members under a majority: --check says the ring cannot lose one. */
	buf = describe_text("[ring]\nname = two\n" NODE(1, 9001) NODE(2, 9002));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "warning: with 2 members a majority is both"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "mints nothing until 1 other member answers it"));
	free(buf);

	/* A paced ring says what a request on an idle ring waits. */
	buf = describe_text("[ring]\nname = two\nidle_pass_ms = 10\n" NODE(1, 9001) NODE(2, 9002));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "rests 10 ms at each member and never parks"));
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "waits up to about 20 ms"));
	CU_ASSERT_PTR_NULL(strstr(buf, "parks after a rotation"));
	free(buf);
}

static void test_example_files_load(void)
{
	CU_ASSERT_EQUAL_FATAL(ring_conf_load("conf/local5.ini", &conf, err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(conf.layout.name, "demo");
	CU_ASSERT_EQUAL_FATAL(conf.layout.n, 5);
	for (size_t i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(conf.layout.members[i].id, i + 1);
		CU_ASSERT_STRING_EQUAL(conf.layout.members[i].host, "127.0.0.1");
		CU_ASSERT_EQUAL(conf.layout.members[i].port, 7101 + i);
	}
	/* Shipped examples keep their state out of folders others may write:
	 * the demo's beside the file, keyed by the ring's own key. */
	size_t slen = strlen(conf.state_dir);
	CU_ASSERT(slen > 16 && strcmp(conf.state_dir + slen - 16, "/conf/demo-state") == 0);
	/* (The absolute path may well start in /tmp: a checkout there. What
	 * matters is that the file names a folder beside itself.) */
	CU_ASSERT(conf.auto_key);
	CU_ASSERT_TRUE(conf.allow_inject);
	CU_ASSERT_EQUAL(conf.layout.quorum, RING_QUORUM_MAJORITY);

	CU_ASSERT_EQUAL_FATAL(ring_conf_load("conf/hosts5.ini", &conf, err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(conf.layout.name, "prod");
	CU_ASSERT_EQUAL_FATAL(conf.layout.n, 5);
	CU_ASSERT_STRING_EQUAL(conf.layout.members[0].host, "192.0.2.11");
	CU_ASSERT_STRING_EQUAL(conf.layout.members[4].host, "192.0.2.15");
	CU_ASSERT_STRING_EQUAL(conf.state_dir, "/var/lib/ring/prod");
	/* The multi-host example is the keyed setup (docs/security.md). */
	size_t klen = strlen(conf.secret_file);
	CU_ASSERT(klen > 14 && strcmp(conf.secret_file + klen - 14, "/conf/prod.key") == 0);
	CU_ASSERT_EQUAL(conf.auth, RING_AUTH_KEYED);
	CU_ASSERT_FALSE(conf.allow_inject);
}

/* control_group names a group of this host, looked up when the file is
 * read (root's group exists everywhere); unset, the socket is ringd's. */
static void test_control_group_is_looked_up(void)
{
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN TWO_NODES, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(conf.control_group.name, "");
	CU_ASSERT_EQUAL(conf.control_group.gid, (gid_t)-1);
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "control_group = root\n" TWO_NODES, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(conf.control_group.name, "root");
	CU_ASSERT_EQUAL(conf.control_group.gid, 0);
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "control_group =\n" TWO_NODES, NULL, 0), 0);
	CU_ASSERT_STRING_EQUAL(conf.control_group.name, "");

	EXPECT_ERROR2(RING_MIN "control_group = no-such-group-zz9\n" TWO_NODES, 3,
		      "control_group \"no-such-group-zz9\": no such group", "groupadd --system");
	EXPECT_ERROR(RING_MIN "control_group = ring users\n" TWO_NODES, 3, "is not a group name");
	EXPECT_ERROR(RING_MIN "control_group = -root\n" TWO_NODES, 3, "is not a group name");
	EXPECT_ERROR(RING_MIN "control_group = "
		     "a123456789012345678901234567890123456789012345678901234567890123\n" TWO_NODES,
		     3, "at most 63 characters");
}

/* `ringd --check` says who may take the lock. */
static void test_describe_says_who_may_take_the_lock(void)
{
	char *out = NULL;
	size_t size = 0;
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN "control_group = root\n" TWO_NODES, NULL, 0), 0);
	FILE *f = open_memstream(&out, &size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	ring_conf_describe(&conf, f);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "control sockets: mode 0660, group root (gid 0)"));
	free(out);
	CU_ASSERT_EQUAL_FATAL(load_text(RING_MIN TWO_NODES, NULL, 0), 0);
	f = open_memstream(&out, &size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	ring_conf_describe(&conf, f);
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "control sockets: mode 0600"));
	free(out);
}

/* Every key of the table is documented, with its bounds. */
static void test_docs_and_help_name_every_key(void)
{
	FILE *f = fopen("docs/configuration.md", "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	static char docs[65536];
	size_t len = fread(docs, 1, sizeof docs - 1, f);
	fclose(f);
	docs[len] = '\0';

	char *help = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&help, &size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	ring_conf_help(out);
	fclose(out);

	for (size_t k = 0; k < ring_conf_key_count; k++) {
		const struct ring_conf_key *row = &ring_conf_keys[k];
		char key[64];
		snprintf(key, sizeof key, "`%s`", row->name);
		if (!strstr(docs, key) || !strstr(docs, row->values) || !strstr(help, row->name)) {
			fprintf(stderr, "\n  key %s (%s) missing from docs or help\n", row->name,
				row->values);
			CU_FAIL("key documented");
		}
	}
	free(help);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_conf_tests[] = {
	T_(test_spec_example_parses_with_every_value),
	T_(test_defaults_applied),
	T_(test_table_defaults_are_the_layout_defaults),
	T_(test_table_values_text_matches_bounds),
	T_(test_relative_paths_resolve_against_the_files_folder),
	T_(test_relative_config_path_gives_absolute_paths),
	T_(test_default_successor_is_next_section_wrapping),
	T_(test_explicit_successors_give_ring_order),
	T_(test_mixed_successors),
	T_(test_inline_comments_and_indentation),
	T_(test_booleans_and_quorum_words),
	T_(test_a_ring_beyond_loopback_needs_a_key_or_says_so),
	T_(test_bounds_are_inclusive),
	T_(test_errors_in_sections),
	T_(test_errors_in_keys),
	T_(test_errors_in_numbers),
	T_(test_errors_in_words),
	T_(test_errors_in_required_keys),
	T_(test_errors_in_membership),
	T_(test_one_address_under_two_names_is_refused),
	T_(test_errors_in_successors),
	T_(test_errors_in_timings),
	T_(test_errors_in_paths),
	T_(test_errors_in_reading),
	T_(test_first_error_wins),
	T_(test_error_fits_a_small_buffer),
	T_(test_describe_shows_members_and_timings),
	T_(test_example_files_load),
	T_(test_docs_and_help_name_every_key),
	T_(test_control_group_is_looked_up),
	T_(test_describe_says_who_may_take_the_lock),
	CU_TEST_INFO_NULL,
};
#undef T_
