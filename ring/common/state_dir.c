/* Opening state_dir, and a control socket's folder, so that no other local
 * user can plant or swap what ringd reads and writes there; and ringctl's
 * check of whose socket it is about to talk to (SPEC.md "Hostile input"). */
#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include "common/state_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/err.h"

#define PLANT "another local user could plant files in it"

int ring_path_split(const char *path, char *out_dir, size_t dirlen, char *out_name,
		    size_t namelen)
{
	size_t len = strlen(path);
	if (len == 0 || path[len - 1] == '/')
		return -1;
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t dl = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	if (dl >= dirlen || strlen(name) >= namelen)
		return -1;
	if (!slash)
		memcpy(out_dir, ".", 2);
	else {
		memcpy(out_dir, path, dl);
		out_dir[dl] = '\0';
	}
	memcpy(out_name, name, strlen(name) + 1);
	return 0;
}

/* PATH without the slashes it may end in ("state/" -> "state"): a
 * trailing slash would make the kernel follow a last link after all. */
static int trim(const char *path, char *out, size_t outlen)
{
	size_t len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len == 0 || len >= outlen)
		return -1;
	memcpy(out, path, len);
	out[len] = '\0';
	return 0;
}

static const char *role_name(enum ring_dir_role role)
{
	return role == RING_DIR_STATE ? "state_dir" : "control socket folder";
}

/* The owner and mode rules of a folder, on its stat ST. */
static int check_folder(const struct stat *st, const char *path, enum ring_dir_role role,
			char *err, size_t errlen)
{
	uid_t me = geteuid();
	if (!S_ISDIR(st->st_mode)) {
		snprintf(err, errlen, "%s %s: not a directory", role_name(role), path);
		return -RING_EIO;
	}
	if (st->st_uid != me && !(role == RING_DIR_SOCKET && st->st_uid == 0)) {
		snprintf(err, errlen, "%s %s: owned by uid %u, not %u (ringd's user); refusing (" PLANT ")",
			 role_name(role), path, (unsigned)st->st_uid, (unsigned)me);
		return -RING_ECONFIG;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s %s: mode %04o lets %s write it; refusing (" PLANT "): chmod go-w %s",
			 role_name(role), path, (unsigned)(st->st_mode & 07777),
			 st->st_mode & S_IWOTH ? "others" : "its group", path);
		return -RING_ECONFIG;
	}
	return 0;
}

static int refuse_link(const char *what, const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s %s: a symbolic link; refusing to follow it (name the real folder)",
		 what, path);
	return -RING_ECONFIG;
}

int ring_state_dir_open(struct ring_state_dir *d, const char *path, enum ring_dir_role role,
			bool create, char *err, size_t errlen)
{
	d->fd = -1;
	snprintf(d->path, sizeof d->path, "%s", path);
	char p[RING_PATH_MAX], parent[RING_PATH_MAX], name[RING_PATH_MAX];
	if (trim(path, p, sizeof p) != 0 ||
	    (strcmp(p, "/") != 0 && ring_path_split(p, parent, sizeof parent, name, sizeof name) != 0)) {
		snprintf(err, errlen, "%s %s: not a usable path", role_name(role), path);
		return -RING_ECONFIG;
	}
	if (strcmp(p, "/") == 0) {
		memcpy(parent, "/", 2);
		memcpy(name, ".", 2);
	}
	/* The parent is followed (it may be a link, /var/run -> /run); the
	 * last component is made and opened relative to it, never followed. */
	int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		snprintf(err, errlen, "cannot open %s's folder %s: %s", role_name(role), parent,
			 strerror(errno));
		return -RING_EIO;
	}
	if (create && mkdirat(pfd, name, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s %s: %s", role_name(role), path, strerror(errno));
		close(pfd);
		return -RING_EIO;
	}
	d->fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	struct stat st;
	bool is_link = d->fd < 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		       S_ISLNK(st.st_mode);
	close(pfd);
	if (is_link)
		return refuse_link(role_name(role), path, err, errlen);
	if (d->fd < 0) {
		snprintf(err, errlen, "cannot open %s %s: %s", role_name(role), path, strerror(e));
		return -RING_EIO;
	}
	if (fstat(d->fd, &st) != 0) {
		snprintf(err, errlen, "cannot stat %s %s: %s", role_name(role), path, strerror(errno));
		return -RING_EIO;
	}
	return check_folder(&st, path, role, err, errlen);
}

/* Whether group GID may pass through a folder of mode and owner ST. */
static bool group_passes(const struct stat *st, gid_t gid)
{
	return (st->st_mode & S_IXOTH) || (st->st_gid == gid && (st->st_mode & S_IXGRP));
}

int ring_state_dir_share(const struct ring_state_dir *d, gid_t gid, const char *group,
			 char *err, size_t errlen)
{
	struct stat st;
	if (fstat(d->fd, &st) != 0) {
		snprintf(err, errlen, "cannot stat %s: %s", d->path, strerror(errno));
		return -RING_EIO;
	}
	if (st.st_uid != geteuid()) {
		/* Root's folder (/run): not ours to change; it must let the group in. */
		if (group_passes(&st, gid))
			return 0;
		snprintf(err, errlen, "control socket folder %s: mode %04o, group %u, keeps group %s "
			 "(control_group) out; chgrp %s %s && chmod g+x %s", d->path,
			 (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid, group, group, d->path,
			 d->path);
		return -RING_ECONFIG;
	}
	/* The group may search the folder, to reach the socket by name, and
	 * no more: no listing (g+r), never g+w. Through the descriptor, so it
	 * is the folder checked. */
	if (st.st_gid != gid && fchown(d->fd, (uid_t)-1, gid) != 0) {
		snprintf(err, errlen, "cannot give %s to group %s (control_group): %s; ringd's user "
			 "must be a member of it (usermod -aG %s USER), or run ringd with that group",
			 d->path, group, strerror(errno), group);
		return -RING_EIO;
	}
	if (!(st.st_mode & S_IXGRP) && fchmod(d->fd, (st.st_mode & 07777) | S_IXGRP) != 0) {
		snprintf(err, errlen, "cannot chmod g+x %s (control_group): %s", d->path,
			 strerror(errno));
		return -RING_EIO;
	}
	return 0;
}

/* --check of a folder that is not there yet: ring_state_dir_open would
 * open its parent (following links) and mkdirat the last component, so
 * the parent must be a folder this process may write and search. Nothing
 * is created. 0, or -RING_EIO with what the start would say, and why. */
static int check_creatable(const char *p, const char *path, enum ring_dir_role role, char *err,
			   size_t errlen)
{
	char parent[RING_PATH_MAX], name[RING_PATH_MAX];
	if (ring_path_split(p, parent, sizeof parent, name, sizeof name) != 0) {
		snprintf(err, errlen, "%s %s: not a usable path", role_name(role), path);
		return -RING_ECONFIG;
	}
	struct stat st;
	int e = stat(parent, &st) != 0 ? errno : 0;
	if (e || !S_ISDIR(st.st_mode)) {
		bool ours = strcmp(parent, "/var/lib/ring") == 0;
		snprintf(err, errlen, "cannot open %s's folder %s: %s; ringd makes only the last "
			 "component of %s (make the folder first: install -d %s%s)", role_name(role),
			 parent, e ? strerror(e) : "not a folder", path, parent,
			 ours ? ", or install the package, which makes it" : "");
		return -RING_EIO;
	}
	if (faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) != 0) {
		snprintf(err, errlen, "cannot create %s %s: %s: %s (uid %u); make it, owned by "
			 "ringd's user, or run ringd as a user that may", role_name(role), path,
			 parent, strerror(errno), (unsigned)geteuid());
		return -RING_EIO;
	}
	return 0;
}

int ring_state_dir_check(const char *path, enum ring_dir_role role, bool *exists, char *err,
			 size_t errlen)
{
	char p[RING_PATH_MAX];
	struct stat st;
	*exists = false;
	if (trim(path, p, sizeof p) != 0) {
		snprintf(err, errlen, "%s %s: not a usable path", role_name(role), path);
		return -RING_ECONFIG;
	}
	if (lstat(p, &st) != 0) {
		/* The start makes state_dir, never a control socket's folder
		 * (ring_daemon_new: a folder elsewhere is the operator's). */
		if (errno == ENOENT && role == RING_DIR_STATE)
			return check_creatable(p, path, role, err, errlen);
		if (errno == ENOENT) {
			snprintf(err, errlen, "%s %s does not exist, and ringd does not make it "
				 "(install -d -m 0700 %s, as ringd's user)", role_name(role), path, path);
			return -RING_EIO;
		}
		snprintf(err, errlen, "cannot stat %s %s: %s", role_name(role), path, strerror(errno));
		return -RING_EIO;
	}
	*exists = true;
	if (S_ISLNK(st.st_mode))
		return refuse_link(role_name(role), path, err, errlen);
	return check_folder(&st, path, role, err, errlen);
}

void ring_state_dir_close(struct ring_state_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int ring_state_dir_openat(const struct ring_state_dir *d, const char *name, int flags,
			  mode_t mode, char *err, size_t errlen)
{
	int fd = openat(d->fd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		int e = errno;
		struct stat st;
		if (e == ELOOP && fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s/%s: a symbolic link; refusing to follow it", d->path,
				 name);
			return -RING_ECONFIG;
		}
		snprintf(err, errlen, "%s/%s: %s", d->path, name, strerror(e));
		errno = e;
		return -RING_EIO;
	}
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s/%s: %s", d->path, name, strerror(errno));
		rc = -RING_EIO;
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s/%s: not a regular file; refusing it", d->path, name);
		rc = -RING_ECONFIG;
	} else if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s/%s: owned by uid %u, not %u (ringd's user); refusing it",
			 d->path, name, (unsigned)st.st_uid, (unsigned)geteuid());
		rc = -RING_ECONFIG;
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen, "%s/%s: mode %04o lets others write it; refusing it", d->path,
			 name, (unsigned)(st.st_mode & 07777));
		rc = -RING_ECONFIG;
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int ring_state_dir_socket_check(const struct ring_state_dir *d, const char *name, char *err,
				size_t errlen)
{
	struct stat st;
	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "control socket %s/%s: %s", d->path, name, strerror(errno));
		return -RING_EIO;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control socket %s/%s: %s, not a socket; refusing to remove it",
			 d->path, name, S_ISLNK(st.st_mode) ? "a symbolic link"
					: S_ISREG(st.st_mode) ? "a regular file" : "something else");
		return -RING_ECONFIG;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "control socket %s/%s: owned by uid %u, not %u (ringd's user); "
			 "refusing to remove it", d->path, name, (unsigned)st.st_uid,
			 (unsigned)geteuid());
		return -RING_ECONFIG;
	}
	return 1;
}

int ring_state_dir_at_path(const struct ring_state_dir *d, const char *name, char *out,
			   size_t outlen)
{
	/* Through /proc when it shows this very folder (a sandbox without
	 * /proc gets the plain path, which is as safe while nobody else may
	 * write the folder: they cannot swap entries in it). */
	char via[64];
	struct stat a, b;
	snprintf(via, sizeof via, "/proc/self/fd/%d", d->fd);
	int n;
	if (stat(via, &a) == 0 && fstat(d->fd, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		n = snprintf(out, outlen, "%s/%s", via, name);
	else
		n = snprintf(out, outlen, "%s/%s", d->path, name);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* ---- ringctl's side ---- */

int ring_state_dir_member_uid(const char *state_dir, const char *sock, uid_t *uid, char *err,
			      size_t errlen)
{
	char p[RING_PATH_MAX], parent[RING_PATH_MAX], name[RING_PATH_MAX];
	struct stat st;
	if (trim(state_dir, p, sizeof p) != 0 ||
	    ring_path_split(p, parent, sizeof parent, name, sizeof name) != 0) {
		snprintf(err, errlen, "state_dir %s: not a usable path", state_dir);
		return -RING_ECONFIG;
	}
	if (lstat(p, &st) != 0) {
		int e = errno;
		snprintf(err, errlen, "state_dir %s: %s (has the member ever run?)", state_dir,
			 strerror(e));
		errno = e; /* EACCES: the caller's to explain (control_group) */
		return -RING_EIO;
	}
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen, "state_dir %s: %s; refusing to trust its control sockets ("
			 "another local user could have planted them)", state_dir,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : !S_ISDIR(st.st_mode)
			 ? "not a directory" : "group or others may write it");
		return -RING_ECONFIG;
	}
	uid_t member = st.st_uid;
	if (member != geteuid() && member != 0) {
		/* Not ours, not root's: ringd's own user (ring) made it, unless
		 * anyone could have: in a folder open to others (/tmp). */
		struct stat ps;
		if (stat(parent, &ps) != 0 || (ps.st_mode & (S_IWGRP | S_IWOTH))) {
			snprintf(err, errlen, "state_dir %s: owned by uid %u and in %s, which others may "
				 "write, so anyone could have made it; refusing to trust its control "
				 "sockets (docs/security.md)", state_dir, (unsigned)member, parent);
			return -RING_ECONFIG;
		}
	}
	if (lstat(sock, &st) != 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", sock, strerror(e));
		errno = e;
		return -RING_EIO;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: %s, not a socket; refusing it", sock,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "not a socket file");
		return -RING_ECONFIG;
	}
	if (st.st_uid != member) {
		snprintf(err, errlen, "%s: owned by uid %u, not %u (the owner of state_dir %s, the "
			 "member's user); refusing it", sock, (unsigned)st.st_uid, (unsigned)member,
			 state_dir);
		return -RING_ECONFIG;
	}
	char sdir[RING_PATH_MAX];
	if (ring_path_split(sock, sdir, sizeof sdir, name, sizeof name) != 0 || stat(sdir, &st) != 0) {
		snprintf(err, errlen, "%s: its folder cannot be read", sock);
		return -RING_EIO;
	}
	if ((st.st_uid != member && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen, "%s: its folder %s is not the member's user's alone; refusing "
			 "it (another local user could swap the socket)", sock, sdir);
		return -RING_ECONFIG;
	}
	*uid = member;
	return 0;
}

int ring_state_dir_connect(const char *state_dir, const char *sock, int *fd, char *err,
			   size_t errlen)
{
	*fd = -1;
	uid_t member;
	int rc = ring_state_dir_member_uid(state_dir, sock, &member, err, errlen);
	if (rc < 0)
		return rc;
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sun, sizeof sun) != 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", sock, strerror(e));
		if (s >= 0)
			close(s);
		errno = e; /* EACCES: a socket of control_group's, or ringd's user's alone */
		return -RING_EIO;
	}
	/* Who listens, as the kernel saw it: the checks above were of names,
	 * this is of the process that answers, whatever happened between. */
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
	    (cred.uid != member && cred.uid != 0)) {
		snprintf(err, errlen, "%s: answered by uid %u, not %u (the member's user); refusing it",
			 sock, (unsigned)cred.uid, (unsigned)member);
		close(s);
		return -RING_ECONFIG;
	}
	*fd = s;
	return 0;
}
