/* The folders ringd keeps its files in, opened so that no other local user
 * can steer them (docs/security.md, "Local users"): state_dir, and the
 * folder of a control socket set elsewhere with `control`. A folder is
 * opened once, without following its last component, and must belong to
 * ringd's user and be writable by nobody else; every file in it is then
 * reached relative to that descriptor, never by following a link. Also
 * the client's side: whose member a control socket is (ringctl). */
#ifndef RING_STATE_DIR_H
#define RING_STATE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/conf.h"

struct ring_state_dir {
	int fd; /* the folder, O_DIRECTORY; -1 when closed */
	char path[RING_PATH_MAX]; /* as configured, for messages */
};

/* What a folder is for, in messages and in who may own it: STATE_DIR must
 * be ringd's own; a control socket's FOLDER may also be root's (/run). */
enum ring_dir_role { RING_DIR_STATE, RING_DIR_SOCKET };

/* Opens PATH into D: created mode 0700 when missing and CREATE is set
 * (its parent must exist); its last component must not be a symbolic
 * link (earlier ones may, /var/run -> /run); then it must be a folder
 * owned by the effective uid (for RING_DIR_SOCKET, or by root) that
 * neither group nor others may write. Returns 0; -RING_ECONFIG when the
 * folder is refused (a link, a stranger's, writable by others); -RING_EIO
 * when a call fails (missing, not a folder). The reason, naming PATH, in
 * ERR. Close D even after a failure. */
int ring_state_dir_open(struct ring_state_dir *d, const char *path, enum ring_dir_role role,
			bool create, char *err, size_t errlen);

/* control_group (docs/operations.md, "Let user X take the lock"): lets
 * group GID (named GROUP, for messages) reach the control socket in D. A
 * folder of ours is given to GID and made g+x (never g+r or g+w); root's
 * folder (a control socket's, /run) is left as it is and must let the
 * group through already (o+x, or g+x with group GID). Returns 0;
 * -RING_EIO when chown or chmod fail (ringd's user is not in GROUP);
 * -RING_ECONFIG when root's folder is closed to it. The reason in ERR. */
int ring_state_dir_share(const struct ring_state_dir *d, gid_t gid, const char *group,
			 char *err, size_t errlen);

/* `ringd --check`: the same checks on PATH without creating it. *EXISTS
 * says whether it is there. A missing state_dir is 0 when ringd could make
 * it (its parent is a folder we may write); a missing socket folder, or a
 * state_dir that cannot be made, is -RING_EIO as the start would fail,
 * with the way out in ERR. */
int ring_state_dir_check(const char *path, enum ring_dir_role role, bool *exists, char *err,
			 size_t errlen);

void ring_state_dir_close(struct ring_state_dir *d);

/* Opens NAME in D with FLAGS (O_NOFOLLOW and O_CLOEXEC added; with
 * O_CREAT, mode MODE), then checks it is a regular file owned by the
 * effective uid that neither group nor others may write. Returns the
 * descriptor; -RING_ECONFIG when refused (a link, a stranger's file, one
 * others may write, not a regular file), -RING_EIO when open fails (errno
 * kept: ENOENT for a missing file); the reason in ERR. */
int ring_state_dir_openat(const struct ring_state_dir *d, const char *name, int flags,
			  mode_t mode, char *err, size_t errlen);

/* Before binding a control socket NAME in D: 0 when nothing has that
 * name, 1 when a socket file of ours does (left by a crash, or a running
 * member's: the caller asks it), -RING_ECONFIG when anything else does (a
 * regular file, a link, a stranger's socket), which is never removed. */
int ring_state_dir_socket_check(const struct ring_state_dir *d, const char *name, char *err,
				size_t errlen);

/* "/proc/self/fd/N/NAME": NAME in D as a path that bind() and connect()
 * resolve through D's descriptor, so a folder swapped since it was
 * checked is not the one used. Returns 0, or -1 when it does not fit. */
int ring_state_dir_at_path(const struct ring_state_dir *d, const char *name, char *out,
			   size_t outlen);

/* Splits PATH into its folder (OUT_DIR, "." when none) and last
 * component (OUT_NAME). Returns 0, or -1 when either does not fit or PATH
 * ends in a slash. */
int ring_path_split(const char *path, char *out_dir, size_t dirlen, char *out_name,
		    size_t namelen);

/* ringctl: whose member the control socket SOCK of a ring with STATE_DIR
 * is. The member's user is the owner of state_dir (ringd refuses one
 * that is not its own), which must be a folder, not a link, that group
 * and others cannot write; a stranger's state_dir (not ours, not root's)
 * counts only when its parent folder is closed to others too, since in a
 * folder such as /tmp anyone could have made it. SOCK must be a socket
 * owned by that user, in a folder others cannot write; the caller need
 * not be that user (control_group). Sets *UID. Returns 0; -RING_EIO when
 * state_dir or SOCK is missing (the member is not running) or out of the
 * caller's reach (errno EACCES); -RING_ECONFIG when refused. The reason
 * in ERR. */
int ring_state_dir_member_uid(const char *state_dir, const char *sock, uid_t *uid, char *err,
			      size_t errlen);

/* ringctl: connects *FD to the control socket SOCK after the checks of
 * ring_state_dir_member_uid, then refuses a peer (SO_PEERCRED) that is
 * neither the member's user nor root. Returns 0; -RING_EIO when the
 * member is not there, or the caller may not reach it (errno is then
 * EACCES: the socket is ringd's user's, or control_group's, and the
 * caller is neither); -RING_ECONFIG when refused. The reason in ERR. */
int ring_state_dir_connect(const char *state_dir, const char *sock, int *fd, char *err,
			   size_t errlen);

#endif
