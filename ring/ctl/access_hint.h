/* What ringctl says when the kernel refuses it a member's control socket
 * (EACCES): who may use the socket, and what this user can do about it
 * (docs/operations.md, "Let user X take the lock"). */
#ifndef RING_ACCESS_HINT_H
#define RING_ACCESS_HINT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/conf.h"

/* What the message is made of, gathered by ring_access_hint. */
struct ring_access_facts {
	const char *sock;   /* the control socket's path */
	const char *conf;   /* the configuration file's path */
	const char *group;  /* control_group, "" when unset */
	const char *user;   /* the caller's user name */
	const char *owner;  /* the member's user: state_dir's owner */
	bool in_group_db;   /* the group database lists the caller in GROUP */
	bool in_session;    /* this process has GROUP (getgroups, or its gid) */
};

/* The message for F into OUT, one line without "ringctl: " or a newline:
 * the group to join and the command that does it, a new login for a
 * membership this session predates, or, without control_group, that the
 * socket is the member's user's alone and how to open it to a group. */
void ring_access_message(const struct ring_access_facts *f, char *out, size_t outlen);

/* ring_access_message for the control socket SOCK of CONF that this
 * process was refused, with the facts read from the system. */
void ring_access_hint(const struct ring_conf *conf, const char *sock, char *out, size_t outlen);

#endif
