/* ringd: arguments, exit codes, and the only place that exits. Runs one
 * member of a ring until SIGTERM or SIGINT, then leaves gracefully. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/conf.h"
#include "common/control.h"
#include "daemon/daemon.h"
#include "core/err.h"
#include "common/parse.h"
#include "common/log.h"
#include "common/net.h"
#include "daemon/sd_notify.h"
#include "common/state_dir.h"
#include "common/version.h"

enum { EXIT_USAGE = 2, EXIT_CONFIG = 78 };

/* "<3>" before ringd's own last words when stderr is the journal, so that
 * journalctl -p err shows why a member stopped (docs/operations.md). */
static const char *err_prefix(void)
{
	return ring_log_is_journal(STDERR_FILENO) ? "<3>" : "";
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ringd -c CONFIG -n ID [--log-format text|json] [--log-file PATH] [-v]\n"
		"       ringd -c CONFIG [-n ID] --check [--no-local-checks]\n"
		"       ringd --version\n"
		"\n"
		"Runs member ID of the token ring described in CONFIG until SIGTERM or SIGINT,\n"
		"then leaves gracefully: hands on a token it holds, tells its neighbours to\n"
		"skip it at once, and exits 0.\n"
		"\n"
		"  -c, --config FILE     the ring's INI file (docs/configuration.md)\n"
		"  -n, --node ID         this member's id ([node.ID] in the file)\n"
		"      --check           validate CONFIG, print the effective ring, exit; with -n ID\n"
		"                        also what member ID's start needs of this host: its\n"
		"                        address is local, state_dir can be made or used\n"
		"      --no-local-checks with --check: skip what depends on this host (the\n"
		"                        address, state_dir, socket folders, a missing key file),\n"
		"                        to check a file meant for another host\n"
		"      --log-format FMT  text (default, for people) or json (one object a line)\n"
		"      --log-file PATH   append the log to PATH instead of stderr\n"
		"  -v, --verbose         also log every token hop (token_recv, token_pass)\n"
		"  -h, --help            this text\n"
		"      --version         print the version and exit\n"
		"\n"
		"Exit codes: 0 left gracefully, 1 failure, 2 usage, 78 configuration error\n"
		"(a bad file, or a state_dir, socket or key file ringd refuses: another\n"
		"user's, writable by others, or a symbolic link).\n");
}

/* --help: the synopsis, then every key of the file from the key table in
 * conf.c, so that the help cannot drift from what the parser accepts. */
static void help(void)
{
	usage(stdout);
	printf("\nThe configuration file's keys (docs/configuration.md has them at length):\n\n");
	ring_conf_help(stdout);
}

struct options {
	const char *config, *log_file;
	uint16_t id;
	bool check, verbose, have_id, not_here;
	enum ring_log_format format;
};

/* Whether the parsed command line O is whole; if not, says which argument
 * is missing before the synopsis: the synopsis alone leaves the reader to
 * find it. */
static bool usage_complete(const struct options *o, int argc, char **argv)
{
	if (optind != argc)
		fprintf(stderr, "ringd: unexpected argument '%s'\n", argv[optind]);
	else if (o->not_here && !o->check)
		fprintf(stderr, "ringd: --no-local-checks goes with --check\n");
	else if (!o->config)
		fprintf(stderr, "ringd: -c CONFIG is missing: which ring's file to read\n");
	else if (!o->check && !o->have_id)
		fprintf(stderr, "ringd: -n ID is missing: which member of %s to run "
			"(or --check to validate the file)\n", o->config);
	else
		return true;
	usage(stderr);
	return false;
}

/* Reads the command line into O. Returns -1 to go on, or the exit status
 * (0 after --help or --version). */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"node", required_argument, NULL, 'n'},
		{"check", no_argument, NULL, 'C'},
		{"no-local-checks", no_argument, NULL, 'H'},
		{"log-format", required_argument, NULL, 'F'},
		{"log-file", required_argument, NULL, 'L'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	uint64_t id;
	int c;
	while ((c = getopt_long(argc, argv, "c:n:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'n':
			if (!ring_parse_u64(optarg, 65535, &id) || id == 0) {
				fprintf(stderr, "ringd: -n wants a member id 1..65535, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			o->id = (uint16_t)id;
			o->have_id = true;
			break;
		case 'C':
			o->check = true;
			break;
		case 'H':
			o->not_here = true;
			break;
		case 'F':
			if (!ring_log_parse_format(optarg, &o->format)) {
				fprintf(stderr, "ringd: --log-format is text or json, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'L':
			o->log_file = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			help();
			return 0;
		case 'V':
			printf("ringd %s\n", ring_version());
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	return usage_complete(o, argc, argv) ? -1 : EXIT_USAGE;
}

/* What the start of member O->id needs of this host, checked as the start
 * would: its address is one of ours (the bind), state_dir and the folder
 * of each control socket set elsewhere (only member ID's with -n) are
 * usable or can be made. Nothing is created. Without -n, folders that
 * exist are checked, and a missing one passes: the file may be for
 * another host. Returns 0 or EXIT_CONFIG. */
static int check_folders(const struct options *o, const struct ring_conf *conf)
{
	char err[RING_PATH_MAX + 512];
	bool exists;
	int idx = o->have_id ? ring_layout_index(&conf->layout, o->id) : -1;
	char note[256];
	if (idx >= 0 &&
	    ring_net_check_local(&conf->layout.members[idx], note, sizeof note, err, sizeof err) < 0) {
		fprintf(stderr, "%s%s: %s\n", err_prefix(), o->config, err);
		return EXIT_CONFIG;
	}
	if (idx >= 0 && note[0])
		fprintf(stderr, "%s%s: note: %s\n", err_prefix(), o->config, note);
	if (ring_state_dir_check(conf->state_dir, RING_DIR_STATE, &exists, err, sizeof err) < 0 &&
	    (exists || o->have_id)) {
		fprintf(stderr, "%s%s: %s\n", err_prefix(), o->config, err);
		return EXIT_CONFIG;
	}
	for (size_t i = 0; i < conf->layout.n; i++) {
		char folder[RING_SOCK_MAX], name[RING_SOCK_MAX];
		if (o->have_id && conf->layout.members[i].id != o->id)
			continue;
		if (ring_path_split(conf->control[i], folder, sizeof folder, name, sizeof name) != 0)
			continue; /* the start says so */
		if (strcmp(folder, conf->state_dir) == 0)
			continue;
		if (ring_state_dir_check(folder, RING_DIR_SOCKET, &exists, err, sizeof err) < 0 &&
		    (exists || o->have_id)) {
			fprintf(stderr, "%s%s: member %u's %s\n", err_prefix(), o->config,
				conf->layout.members[i].id, err);
			return EXIT_CONFIG;
		}
	}
	return 0;
}

/* The key fingerprints line of --check: what two hosts compare to know
 * they hold the same key, without copying it. */
static void print_key_fingerprints(const struct ring_auth *a)
{
	uint64_t fp[RING_AUTH_KEYS];
	size_t n = ring_auth_key_fingerprints(a, fp, RING_AUTH_KEYS);
	printf("key fingerprint %016llx (signs)", (unsigned long long)fp[0]);
	for (size_t i = 1; i < n && i < RING_AUTH_KEYS; i++)
		printf(", %016llx (accepted)", (unsigned long long)fp[i]);
	printf("\n");
}

/* ringd --check: the effective ring on stdout. The key file is read as a
 * start would read it, so that `ExecStartPre=ringd --check` catches a
 * missing, open or short key before the start does; the ring's own key
 * may not exist yet (the first start makes it). state_dir is checked as a
 * start checks it: another user's, one others may write, or one that
 * cannot be made fails here; with -n, so does an address not of this
 * host. --no-local-checks skips what only the member's host can tell. */
static int check(const struct options *o, const struct ring_conf *conf)
{
	struct ring_auth *a = NULL;
	/* A file for another host may name a key that is only there. */
	bool key_here = access(conf->secret_file, F_OK) == 0;
	if (conf->secret_file[0] && !(conf->auto_key && !key_here) && (key_here || !o->not_here)) {
		char err[512];
		int rc = ring_auth_load(&a, conf->secret_file, 1, err, sizeof err);
		if (rc < 0) {
			fprintf(stderr, "%s%s: %s\n", err_prefix(), o->config, err);
			return EXIT_CONFIG;
		}
	}
	ring_conf_describe(conf, stdout);
	if (a)
		print_key_fingerprints(a);
	ring_auth_free(a);
	if (o->have_id && ring_layout_index(&conf->layout, o->id) < 0) {
		fprintf(stderr, "%s: no member %u\n", o->config, o->id);
		return EXIT_CONFIG;
	}
	if (o->not_here) {
		printf("not checked (--no-local-checks): %s, state_dir and socket folders%s\n",
		       o->have_id ? "the member's address" : "addresses",
		       conf->secret_file[0] && !key_here ? ", the key file (not on this host)" : "");
		return 0;
	}
	return check_folders(o, conf);
}

/* ringd's last words before it exits on an error. On stderr as a plain
 * "ringd: ..." line, which people and tests read; with --log-format json
 * also as a `fatal` event (`error`) in the log, so that whoever reads the
 * JSON log learns why the member stopped. When that JSON log is stderr and
 * no terminal watches it, the JSON line is all: every line stays JSON. A
 * text log in a file gets the event too, as its last line. */
static void say_fatal(struct ring_log *log, const struct options *o, const char *err)
{
	if (o->format == RING_LOG_JSON || o->log_file) {
		struct ring_log_field f = RING_LF_S("error", err);
		ring_log_emit(log, "fatal", false, &f, 1);
	}
	ring_log_flush(log); /* its lines before our message, on a shared stderr */
	if (o->format == RING_LOG_JSON && !o->log_file && !isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "%sringd: %s\n", err_prefix(), err);
}

/* Runs member O->id of CONF until it leaves or fails. */
static int run(const struct options *o, const struct ring_conf *conf)
{
	char err[512];
	struct ring_log log;
	int rc = ring_log_open(&log, o->log_file, o->format, o->verbose, o->id, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "ringd: cannot open log file %s\n", err);
		return 1;
	}
	struct ring_daemon *d;
	rc = ring_daemon_new(&d, conf, o->id, &log, err, sizeof err);
	if (rc < 0) {
		say_fatal(&log, o, err);
		ring_daemon_free(d);
		ring_log_close(&log);
		return rc == -RING_ECONFIG ? EXIT_CONFIG : 1;
	}
	/* systemd's environment (sd_notify(3)); absent, this does nothing. */
	uint64_t watchdog_usec;
	rc = ring_sd_watchdog_parse(getenv("WATCHDOG_USEC"), getenv("WATCHDOG_PID"), (long)getpid(),
				    &watchdog_usec);
	if (rc < 0)
		snprintf(err, sizeof err, "WATCHDOG_USEC or WATCHDOG_PID is not a number");
	else
		rc = ring_daemon_notify(d, getenv("NOTIFY_SOCKET"), watchdog_usec, err, sizeof err);
	if (rc < 0) {
		say_fatal(&log, o, err);
		ring_daemon_free(d);
		ring_log_close(&log);
		return 1;
	}
	/* Only once the member can start: a start that fails says why, not
	 * first that it would have run unauthenticated. */
	if (conf->auth != RING_AUTH_KEYED) {
		struct ring_log_field f = RING_LF_S("reason", ring_conf_auth_off_reason(conf));
		ring_log_emit(&log, "auth_off", false, &f, 1);
	} else {
		struct ring_log_field f[] = {RING_LF_S("secret_file", conf->secret_file),
					     RING_LF_S("source", ring_daemon_key_source(d))};
		ring_log_emit(&log, "auth_key", false, f, 2);
	}
	rc = ring_daemon_run(d, err, sizeof err);
	if (rc != 0)
		say_fatal(&log, o, err);
	ring_daemon_free(d);
	ring_log_close(&log);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o = {.format = RING_LOG_TEXT};
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	static struct ring_conf conf; /* large: not on the stack */
	char err[1024];
	if (ring_conf_load(o.config, &conf, err, sizeof err) < 0 ||
	    ring_net_check_conf(&conf, err, sizeof err) < 0) {
		fprintf(stderr, "%s%s\n", err_prefix(), err);
		return EXIT_CONFIG;
	}
	if (o.check)
		return check(&o, &conf);
	if (ring_layout_index(&conf.layout, o.id) < 0) {
		fprintf(stderr, "%s: no member %u in ring \"%s\"\n", o.config, o.id, conf.layout.name);
		return EXIT_CONFIG;
	}
	return run(&o, &conf);
}
