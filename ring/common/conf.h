/* The configuration file: an INI file read with inih into the ring layout
 * plus what only the daemon and ringctl need (paths, switches). One key
 * table drives parsing, defaults, bounds and the reference in docs/. */
#ifndef RING_CONF_H
#define RING_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/layout.h"

#define RING_PATH_MAX 4096
#define RING_SOCK_MAX 108 /* sizeof(sockaddr_un.sun_path) on Linux */
#define RING_GROUP_MAX 64

/* control_group: the local group whose members may use the control
 * sockets besides ringd's user (docs/operations.md, "Let user X take the
 * lock"). NAME is "" when unset; GID is then (gid_t)-1. */
struct ring_conf_group {
	char name[RING_GROUP_MAX];
	gid_t gid; /* looked up when the file was read */
};

/* An address to listen on (metrics_listen); port 0: none. */
struct ring_listen {
	char host[48]; /* an address literal, IPv6 without brackets */
	uint16_t port;
};

/* The authentication key of [ring]: auto (the default) authenticates with
 * secret_file when it is set, with the ring's own key in state_dir when
 * every member is on loopback, and refuses a ring beyond loopback without
 * a secret_file; on always wants secret_file; off runs without, even
 * across a network. */
enum ring_conf_auth { RING_CONF_AUTH_AUTO, RING_CONF_AUTH_ON, RING_CONF_AUTH_OFF };

/* What ring_conf_load decided, and why: `ringd --check`, the auth_off log
 * line and `ringctl status` say it (docs/security.md, "Threat model"). */
enum ring_auth_decision {
	RING_AUTH_KEYED,      /* secret_file (or the auto key): every datagram is authenticated */
	RING_AUTH_OFF_CHOSEN, /* authentication = off */
};

/* The auto key's name in state_dir (docs/security.md, "The ring's own key"). */
#define RING_AUTO_KEY "ring.key"

struct ring_conf {
	struct ring_layout layout;            /* members in ring order */
	char path[RING_PATH_MAX];             /* the file, as given */
	char state_dir[RING_PATH_MAX];        /* resolved against the file's folder */
	char secret_file[RING_PATH_MAX];      /* "" when authentication is off */
	/* secret_file is STATE_DIR/ring.key, which ringd makes when missing:
	 * authentication = auto, no secret_file, every member on loopback. */
	bool auto_key;
	enum ring_conf_auth authentication;   /* as written */
	enum ring_auth_decision auth;         /* as decided */
	bool allow_inject;
	struct ring_conf_group control_group; /* the control sockets' group, when set */
	char control[RING_MAX_MEMBERS][RING_SOCK_MAX]; /* per ring index */
	struct ring_listen metrics[RING_MAX_MEMBERS];  /* per ring index */
	/* Per ring index: the line that set the member's port, for what is
	 * found wrong after loading (ring_net_check_conf). */
	unsigned port_line[RING_MAX_MEMBERS];
};

/* Reads and validates PATH into CONF. Returns 0, or -RING_ECONFIG with ERR
 * set to "PATH:LINE: what is wrong" (LINE 0 when the file cannot be read).
 * Also -RING_ENOMEM (ERR set the same way) when the parser's scratch space
 * cannot be allocated. CONF is only meaningful after a 0 return. */
int ring_conf_load(const char *path, struct ring_conf *conf, char *err, size_t errlen);

/* Why datagrams are not authenticated, one phrase for people and for the
 * auth_off log line; NULL when they are (secret_file or the auto key). */
const char *ring_conf_auth_off_reason(const struct ring_conf *conf);

/* The key ringctl's UDP status poll (ring, watch, lease-advice) seals
 * with: secret_file; NULL when there is none, or when it is the ring's
 * own key and no member has made it yet (nobody could answer anyway). */
const char *ring_conf_poll_key(const struct ring_conf *conf);

/* True when HOST is a loopback address literal (127.0.0.0/8, ::1, or
 * ::ffff:127.x.x.x). Names are not looked up, so "localhost" is not. */
bool ring_conf_host_is_loopback(const char *host);

/* Prints the effective ring for `ringd --check`: members in ring order with
 * their successors, addresses and control sockets, every timing, and the
 * loss-detection and recovery times they imply. */
void ring_conf_describe(const struct ring_conf *conf, FILE *out);

/* One row of the key table in conf.c, for help texts, the docs and tests.
 * MIN..MAX bound a number's value, or a string's length in bytes (0..0 for
 * words such as quorum and booleans). */
struct ring_conf_key {
	const char *section; /* "ring" or "node.ID" */
	const char *name;
	const char *def;     /* the default as documented; NULL when required */
	uint32_t min, max;
	const char *values;  /* what may be written, e.g. "1..60000" */
	const char *doc;     /* what it means, one sentence */
};

extern const struct ring_conf_key ring_conf_keys[];
extern const size_t ring_conf_key_count;

/* Prints every key with its section, default, allowed values and meaning:
 * the reference `ringd --help` can show. */
void ring_conf_help(FILE *out);

#endif
