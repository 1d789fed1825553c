/* CUnit suite for ring/common/state_dir.c: which state_dir and control socket
 * folders ringd refuses (another user's, writable by others, a link), what
 * it refuses to find in them, whose socket ringctl agrees to talk to, and
 * the ring's own key made once when members start together. Each test
 * works in its own mkdtemp folder; the ones about other users chown as
 * root and are skipped (passing) otherwise. */
#define _GNU_SOURCE /* struct ucred in state_dir.h's users */
#include <CUnit/CUnit.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/auth.h"
#include "core/err.h"
#include "common/state_dir.h"
#include "lib/suites.h"
#include "lib/tmpdir.h"

#define STRANGER 65534 /* nobody */
#define SHARED_GID 4242 /* control_group's gid in the tests run as root (need not exist) */

struct tmp {
	char dir[256];
	char state[300]; /* DIR/state */
	struct ring_state_dir d;
	char err[1024];
};

static bool tmp_open(struct tmp *t)
{
	const char *base = getenv("TMPDIR");
	snprintf(t->dir, sizeof t->dir, "%s/ring-sd-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(t->dir))
		return false;
	snprintf(t->state, sizeof t->state, "%s/state", t->dir);
	t->d.fd = -1;
	t->err[0] = 0;
	return true;
}

static void tmp_close(struct tmp *t)
{
	ring_state_dir_close(&t->d);
	tmpdir_remove(t->dir);
}

static bool as_root(void)
{
	return geteuid() == 0;
}

static int open_state(struct tmp *t)
{
	return ring_state_dir_open(&t->d, t->state, RING_DIR_STATE, true, t->err, sizeof t->err);
}

/* A listening Unix socket at PATH; its descriptor (the caller closes). */
static int listen_at(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	CU_ASSERT_EQUAL_FATAL(listen(fd, 4), 0);
	return fd;
}

static void test_missing_state_dir_is_made_0700_and_opened(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL(open_state(&t), 0);
	CU_ASSERT(t.d.fd >= 0);
	struct stat st;
	CU_ASSERT_EQUAL(lstat(t.state, &st), 0);
	CU_ASSERT(S_ISDIR(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	/* Opened again, as at a restart: the same checks pass. */
	ring_state_dir_close(&t.d);
	CU_ASSERT_EQUAL(open_state(&t), 0);
	tmp_close(&t);
}

/* An existing private folder of ours is fine, 0755 too (others may read
 * the folder, not write it). */
static void test_existing_folder_of_ours_closed_to_writers_is_accepted(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(mkdir(t.state, 0755), 0);
	chmod(t.state, 0755);
	CU_ASSERT_EQUAL(open_state(&t), 0);
	tmp_close(&t);
}

static void test_state_dir_others_may_write_is_refused(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(mkdir(t.state, 0700), 0);
	chmod(t.state, 0777);
	CU_ASSERT_EQUAL(open_state(&t), -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, t.state));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "mode 0777"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "refusing"));
	ring_state_dir_close(&t.d);
	chmod(t.state, 0770); /* its group: refused too */
	CU_ASSERT_EQUAL(open_state(&t), -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "its group"));
	ring_state_dir_close(&t.d);
	chmod(t.state, 01777); /* sticky, as /tmp: still refused */
	CU_ASSERT_EQUAL(open_state(&t), -RING_ECONFIG);
	tmp_close(&t);
}

static void test_state_dir_of_another_user_is_refused(void)
{
	if (!as_root())
		return; /* only root can make a folder another user's */
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(mkdir(t.state, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(chown(t.state, STRANGER, STRANGER), 0);
	CU_ASSERT_EQUAL(open_state(&t), -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "owned by uid 65534, not 0 (ringd's user)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "another local user could plant files in it"));
	bool exists;
	CU_ASSERT_EQUAL(ring_state_dir_check(t.state, RING_DIR_STATE, &exists, t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT(exists);
	/* A socket folder of another user is refused; root's is not. */
	ring_state_dir_close(&t.d);
	CU_ASSERT_EQUAL(ring_state_dir_open(&t.d, t.state, RING_DIR_SOCKET, false, t.err,
					    sizeof t.err), -RING_ECONFIG);
	ring_state_dir_close(&t.d);
	CU_ASSERT_EQUAL(chown(t.state, 0, 0), 0);
	CU_ASSERT_EQUAL(ring_state_dir_open(&t.d, t.state, RING_DIR_SOCKET, false, t.err,
					    sizeof t.err), 0);
	tmp_close(&t);
}

/* The last component a link: refused, with or without a trailing slash;
 * an earlier component may be one (/var/run -> /run). */
static void test_state_dir_that_is_a_link_is_refused_a_parent_link_is_not(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char real[320], link[320], via[400];
	snprintf(real, sizeof real, "%s/real", t.dir);
	snprintf(link, sizeof link, "%s/link", t.dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(real, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(symlink(real, link), 0);
	CU_ASSERT_EQUAL(ring_state_dir_open(&t.d, link, RING_DIR_STATE, true, t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "symbolic link"));
	ring_state_dir_close(&t.d);
	snprintf(via, sizeof via, "%s/", link);
	CU_ASSERT_EQUAL(ring_state_dir_open(&t.d, via, RING_DIR_STATE, true, t.err, sizeof t.err),
			-RING_ECONFIG);
	ring_state_dir_close(&t.d);
	bool exists;
	CU_ASSERT_EQUAL(ring_state_dir_check(link, RING_DIR_STATE, &exists, t.err, sizeof t.err),
			-RING_ECONFIG);
	/* Through a link to a parent: fine, and the folder is made there. */
	snprintf(via, sizeof via, "%s/inner", link);
	CU_ASSERT_EQUAL(ring_state_dir_open(&t.d, via, RING_DIR_STATE, true, t.err, sizeof t.err), 0);
	struct stat st;
	snprintf(via, sizeof via, "%s/inner", real);
	CU_ASSERT_EQUAL(lstat(via, &st), 0);
	tmp_close(&t);
}

static void test_check_of_a_missing_state_dir_passes_and_makes_nothing(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	bool exists = true;
	CU_ASSERT_EQUAL(ring_state_dir_check(t.state, RING_DIR_STATE, &exists, t.err, sizeof t.err), 0);
	CU_ASSERT(!exists);
	struct stat st;
	CU_ASSERT_NOT_EQUAL(lstat(t.state, &st), 0);
	tmp_close(&t);
}

/* Files in the folder: never through a link, never another user's. */
static void test_openat_refuses_links_and_files_others_may_write(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	char path[400];
	snprintf(path, sizeof path, "%s/victim", t.dir);
	int v = open(path, O_WRONLY | O_CREAT, 0600);
	CU_ASSERT_FATAL(v >= 0);
	close(v);
	snprintf(path, sizeof path, "%s/a.link", t.state);
	CU_ASSERT_EQUAL_FATAL(symlink("../victim", path), 0);
	CU_ASSERT_EQUAL(ring_state_dir_openat(&t.d, "a.link", O_RDONLY, 0, t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "symbolic link"));
	int fd = ring_state_dir_openat(&t.d, "new", O_WRONLY | O_CREAT | O_EXCL, 0600, t.err,
				       sizeof t.err);
	CU_ASSERT(fd >= 0);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof path, "%s/new", t.state);
	chmod(path, 0622);
	CU_ASSERT_EQUAL(ring_state_dir_openat(&t.d, "new", O_RDONLY, 0, t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_EQUAL(ring_state_dir_openat(&t.d, "none", O_RDONLY, 0, t.err, sizeof t.err),
			-RING_EIO);
	tmp_close(&t);
}

/* What may stand where the control socket goes: nothing, or a socket of
 * ours; a file or a link planted there is left alone and stops the start. */
static void test_socket_name_taken_by_a_file_or_link_is_refused(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	CU_ASSERT_EQUAL(ring_state_dir_socket_check(&t.d, "node-1.sock", t.err, sizeof t.err), 0);
	char path[400];
	snprintf(path, sizeof path, "%s/node-1.sock", t.state);
	int f = open(path, O_WRONLY | O_CREAT, 0600);
	CU_ASSERT_FATAL(f >= 0);
	close(f);
	CU_ASSERT_EQUAL(ring_state_dir_socket_check(&t.d, "node-1.sock", t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "a regular file, not a socket; refusing to remove it"));
	struct stat st;
	CU_ASSERT_EQUAL(lstat(path, &st), 0); /* still there */
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(symlink("/etc/passwd", path), 0);
	CU_ASSERT_EQUAL(ring_state_dir_socket_check(&t.d, "node-1.sock", t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "symbolic link"));
	unlink(path);
	int l = listen_at(path);
	CU_ASSERT_EQUAL(ring_state_dir_socket_check(&t.d, "node-1.sock", t.err, sizeof t.err), 1);
	if (as_root()) {
		CU_ASSERT_EQUAL(lchown(path, STRANGER, STRANGER), 0);
		CU_ASSERT_EQUAL(ring_state_dir_socket_check(&t.d, "node-1.sock", t.err, sizeof t.err),
				-RING_ECONFIG);
		CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "owned by uid 65534"));
	}
	close(l);
	tmp_close(&t);
}

/* The path bind() gets resolves through the folder's descriptor. */
static void test_at_path_reaches_the_folder_opened(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	char sock[108], path[400];
	CU_ASSERT_EQUAL(ring_state_dir_at_path(&t.d, "s", sock, sizeof sock), 0);
	int l = listen_at(sock);
	snprintf(path, sizeof path, "%s/s", t.state);
	struct stat st;
	CU_ASSERT_EQUAL(lstat(path, &st), 0);
	CU_ASSERT(S_ISSOCK(st.st_mode));
	close(l);
	tmp_close(&t);
}

static void test_path_split(void)
{
	char d[64], n[64];
	CU_ASSERT_EQUAL(ring_path_split("/a/b/c.sock", d, sizeof d, n, sizeof n), 0);
	CU_ASSERT_STRING_EQUAL(d, "/a/b");
	CU_ASSERT_STRING_EQUAL(n, "c.sock");
	CU_ASSERT_EQUAL(ring_path_split("/c", d, sizeof d, n, sizeof n), 0);
	CU_ASSERT_STRING_EQUAL(d, "/");
	CU_ASSERT_EQUAL(ring_path_split("c", d, sizeof d, n, sizeof n), 0);
	CU_ASSERT_STRING_EQUAL(d, ".");
	CU_ASSERT_EQUAL(ring_path_split("/a/", d, sizeof d, n, sizeof n), -1);
}

/* ringctl's side: a socket of the state_dir's owner in that state_dir. */
static void test_member_uid_is_the_state_dirs_owner(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	char sock[400];
	snprintf(sock, sizeof sock, "%s/node-1.sock", t.state);
	uid_t uid = 12345;
	CU_ASSERT_EQUAL(ring_state_dir_member_uid(t.state, sock, &uid, t.err, sizeof t.err),
			-RING_EIO); /* nobody listens: unreachable, not refused */
	int l = listen_at(sock);
	CU_ASSERT_EQUAL(ring_state_dir_member_uid(t.state, sock, &uid, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(uid, geteuid());
	int fd;
	CU_ASSERT_EQUAL(ring_state_dir_connect(t.state, sock, &fd, t.err, sizeof t.err), 0);
	if (fd >= 0)
		close(fd);
	/* A regular file where the socket should be. */
	close(l);
	unlink(sock);
	int f = open(sock, O_WRONLY | O_CREAT, 0600);
	close(f);
	CU_ASSERT_EQUAL(ring_state_dir_member_uid(t.state, sock, &uid, t.err, sizeof t.err),
			-RING_ECONFIG);
	/* A state_dir others may write: nothing in it is trusted. */
	unlink(sock);
	l = listen_at(sock);
	chmod(t.state, 0777);
	CU_ASSERT_EQUAL(ring_state_dir_member_uid(t.state, sock, &uid, t.err, sizeof t.err),
			-RING_ECONFIG);
	chmod(t.state, 0700);
	close(l);
	tmp_close(&t);
}

/* The attack of issue 26: a stranger makes the state_dir in a folder
 * everyone may write (/tmp) and listens where ringctl looks. The owner of
 * state_dir is not the member's user then: anyone could have made it. */
static void test_strangers_state_dir_in_an_open_folder_is_refused(void)
{
	if (!as_root())
		return;
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	chmod(t.dir, 01777);
	CU_ASSERT_EQUAL_FATAL(mkdir(t.state, 0700), 0);
	char sock[400];
	snprintf(sock, sizeof sock, "%s/node-1.sock", t.state);
	int l = listen_at(sock);
	CU_ASSERT_EQUAL_FATAL(chown(t.state, STRANGER, STRANGER), 0);
	CU_ASSERT_EQUAL_FATAL(lchown(sock, STRANGER, STRANGER), 0);
	uid_t uid;
	CU_ASSERT_EQUAL(ring_state_dir_member_uid(t.state, sock, &uid, t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "anyone could have made it"));
	int fd;
	CU_ASSERT_EQUAL(ring_state_dir_connect(t.state, sock, &fd, t.err, sizeof t.err),
			-RING_ECONFIG);
	/* The same folders in a parent closed to others: that user is the
	 * member's (ringd running as `ring` in /var/lib/ring). But the peer
	 * must then be that user, and here it is root: still accepted. */
	chmod(t.dir, 0755);
	CU_ASSERT_EQUAL(ring_state_dir_member_uid(t.state, sock, &uid, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(uid, STRANGER);
	/* A socket of another user than state_dir's owner. */
	CU_ASSERT_EQUAL_FATAL(lchown(sock, 0, 0), 0);
	CU_ASSERT_EQUAL(ring_state_dir_member_uid(t.state, sock, &uid, t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "the member's user"));
	close(l);
	tmp_close(&t);
}

/* The peer's credentials decide in the end: a stranger's listener behind
 * a socket file that passes every name check (as if swapped in between)
 * is refused. */
static void test_connect_refuses_a_peer_of_another_user(void)
{
	if (!as_root())
		return;
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	chmod(t.dir, 0755);
	CU_ASSERT_EQUAL_FATAL(mkdir(t.state, 0777), 0);
	chmod(t.state, 0777); /* for the stranger's bind, closed again below */
	char sock[400];
	snprintf(sock, sizeof sock, "%s/node-1.sock", t.state);
	int up[2], hold[2];
	CU_ASSERT_EQUAL_FATAL(pipe(up), 0);
	CU_ASSERT_EQUAL_FATAL(pipe(hold), 0);
	pid_t pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		close(up[0]);
		close(hold[1]);
		if (setgid(STRANGER) != 0 || setuid(STRANGER) != 0)
			_exit(1);
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		memcpy(sun.sun_path, sock, strlen(sock) < sizeof sun.sun_path ? strlen(sock) : sizeof sun.sun_path - 1);
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0 || listen(fd, 4) != 0)
			_exit(1);
		(void)!write(up[1], "x", 1);
		char c;
		(void)!read(hold[0], &c, 1); /* until the parent is done */
		_exit(0);
	}
	close(up[1]);
	close(hold[0]);
	char c;
	CU_ASSERT_EQUAL_FATAL(read(up[0], &c, 1), 1);
	chmod(t.state, 0755);
	CU_ASSERT_EQUAL(lchown(sock, 0, 0), 0); /* the name now says root's */
	int fd;
	CU_ASSERT_EQUAL(ring_state_dir_connect(t.state, sock, &fd, t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "answered by uid 65534"));
	close(hold[1]);
	close(up[0]);
	int status;
	waitpid(pid, &status, 0);
	tmp_close(&t);
}

/* control_group: the folder is given to the group with g+x only, and
 * the checks still accept it (group-searchable) and still refuse it
 * once the group may write it. */
static void test_share_lets_the_group_search_the_folder_and_no_more(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	gid_t gid = as_root() ? SHARED_GID : getegid(); /* others can only give their own */
	CU_ASSERT_EQUAL(ring_state_dir_share(&t.d, gid, "g", t.err, sizeof t.err), 0);
	struct stat st;
	CU_ASSERT_EQUAL_FATAL(lstat(t.state, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0710);
	CU_ASSERT_EQUAL(st.st_gid, gid);
	/* Again, as at a restart: nothing changes, and the folder is accepted. */
	CU_ASSERT_EQUAL(ring_state_dir_share(&t.d, gid, "g", t.err, sizeof t.err), 0);
	ring_state_dir_close(&t.d);
	CU_ASSERT_EQUAL(open_state(&t), 0);
	CU_ASSERT_EQUAL_FATAL(lstat(t.state, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0710);
	ring_state_dir_close(&t.d);
	/* A folder the group may also read keeps g+r; g+w is never added
	 * and, set by hand, still refused. */
	chmod(t.state, 0750);
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	CU_ASSERT_EQUAL(ring_state_dir_share(&t.d, gid, "g", t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL_FATAL(lstat(t.state, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0750);
	ring_state_dir_close(&t.d);
	chmod(t.state, 0770);
	CU_ASSERT_EQUAL(open_state(&t), -RING_ECONFIG);
	tmp_close(&t);
}

/* A folder that is not ours (root's /run, as ringd's user sees it) is
 * not changed: it must let the group through already. */
static void test_share_of_a_folder_not_ours_only_checks_it(void)
{
	if (!as_root())
		return;
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	CU_ASSERT_EQUAL_FATAL(chown(t.state, STRANGER, 0), 0); /* after the open: no longer ours */
	chmod(t.state, 0700);
	CU_ASSERT_EQUAL(ring_state_dir_share(&t.d, SHARED_GID, "g", t.err, sizeof t.err),
			-RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "keeps group g (control_group) out"));
	struct stat st;
	CU_ASSERT_EQUAL_FATAL(lstat(t.state, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0700);
	CU_ASSERT_EQUAL(st.st_gid, 0);
	chmod(t.state, 0711);
	CU_ASSERT_EQUAL(ring_state_dir_share(&t.d, SHARED_GID, "g", t.err, sizeof t.err), 0);
	chmod(t.state, 0710);
	CU_ASSERT_EQUAL_FATAL(chown(t.state, STRANGER, SHARED_GID), 0);
	CU_ASSERT_EQUAL(ring_state_dir_share(&t.d, SHARED_GID, "g", t.err, sizeof t.err), 0);
	tmp_close(&t);
}

/* In a child that is STRANGER, with GROUPS (N of them): what connect
 * says, as the exit status: 0 connected, 1 EACCES, 2 anything else. */
static int connect_as_stranger(const char *state, const char *sock, const gid_t *groups,
			       size_t n)
{
	pid_t pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		if (setgroups(n, groups) != 0 || setgid(STRANGER) != 0 || setuid(STRANGER) != 0)
			_exit(3);
		char err[1024];
		int fd, rc = ring_state_dir_connect(state, sock, &fd, err, sizeof err);
		_exit(rc == 0 ? 0 : rc == -RING_EIO && errno == EACCES ? 1 : 2);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ringctl as a member of control_group, not the socket's owner: every
 * check passes (they are of the member's user, not the caller), and a
 * user outside the group is told EACCES, not "unreachable". */
static void test_a_group_member_connects_and_others_get_eacces(void)
{
	if (!as_root())
		return;
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	chmod(t.dir, 0755);
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	CU_ASSERT_EQUAL_FATAL(ring_state_dir_share(&t.d, SHARED_GID, "g", t.err, sizeof t.err), 0);
	char sock[400];
	snprintf(sock, sizeof sock, "%s/node-1.sock", t.state);
	int l = listen_at(sock);
	CU_ASSERT_EQUAL_FATAL(lchown(sock, (uid_t)-1, SHARED_GID), 0);
	chmod(sock, 0660);
	const gid_t in[] = {SHARED_GID};
	CU_ASSERT_EQUAL(connect_as_stranger(t.state, sock, in, 1), 0);
	CU_ASSERT_EQUAL(connect_as_stranger(t.state, sock, NULL, 0), 1); /* the folder stops it */
	chmod(t.state, 0711);
	CU_ASSERT_EQUAL(connect_as_stranger(t.state, sock, NULL, 0), 1); /* the socket does */
	chmod(sock, 0600);
	CU_ASSERT_EQUAL(connect_as_stranger(t.state, sock, in, 1), 1); /* 0600: ringd's alone */
	close(l);
	tmp_close(&t);
}

/* Five members starting at once: one key is made, all read the same. */
static void test_auto_key_made_once_when_members_start_together(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_state(&t), 0);
	char key[400];
	snprintf(key, sizeof key, "%s/ring.key", t.state);
	pid_t kids[5];
	for (int i = 0; i < 5; i++) {
		kids[i] = fork();
		CU_ASSERT_FATAL(kids[i] >= 0);
		if (kids[i] == 0) {
			bool made;
			char err[512];
			int rc = ring_auth_keygen_at(t.d.fd, "ring.key", key, &made, err, sizeof err);
			struct ring_auth *a = NULL;
			if (rc == 0)
				rc = ring_auth_load_at(&a, t.d.fd, "ring.key", key, 2, err, sizeof err);
			ring_auth_free(a);
			_exit(rc != 0 ? 2 : made ? 1 : 0);
		}
	}
	int made = 0, failed = 0;
	for (int i = 0; i < 5; i++) {
		int status;
		waitpid(kids[i], &status, 0);
		int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
		made += rc == 1;
		failed += rc == 2;
	}
	CU_ASSERT_EQUAL(made, 1);
	CU_ASSERT_EQUAL(failed, 0);
	struct stat st;
	CU_ASSERT_EQUAL(lstat(key, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(st.st_size, 65);
	/* Nothing else left behind (the temp files). */
	DIR *d = opendir(t.state);
	int entries = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		entries += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
	if (d)
		closedir(d);
	CU_ASSERT_EQUAL(entries, 1);
	/* A link planted at the key's name is not followed. */
	unlink(key);
	CU_ASSERT_EQUAL_FATAL(symlink("/etc/hostname", key), 0);
	struct ring_auth *a = NULL;
	bool m;
	CU_ASSERT_EQUAL(ring_auth_keygen_at(t.d.fd, "ring.key", key, &m, t.err, sizeof t.err), 0);
	CU_ASSERT(!m);
	CU_ASSERT_EQUAL(ring_auth_load_at(&a, t.d.fd, "ring.key", key, 2, t.err, sizeof t.err),
			-RING_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "symbolic link"));
	ring_auth_free(a);
	tmp_close(&t);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_state_dir_tests[] = {
	T_(test_missing_state_dir_is_made_0700_and_opened),
	T_(test_existing_folder_of_ours_closed_to_writers_is_accepted),
	T_(test_state_dir_others_may_write_is_refused),
	T_(test_state_dir_of_another_user_is_refused),
	T_(test_state_dir_that_is_a_link_is_refused_a_parent_link_is_not),
	T_(test_check_of_a_missing_state_dir_passes_and_makes_nothing),
	T_(test_openat_refuses_links_and_files_others_may_write),
	T_(test_socket_name_taken_by_a_file_or_link_is_refused),
	T_(test_at_path_reaches_the_folder_opened),
	T_(test_path_split),
	T_(test_member_uid_is_the_state_dirs_owner),
	T_(test_strangers_state_dir_in_an_open_folder_is_refused),
	T_(test_connect_refuses_a_peer_of_another_user),
	T_(test_auto_key_made_once_when_members_start_together),
	T_(test_share_lets_the_group_search_the_folder_and_no_more),
	T_(test_share_of_a_folder_not_ours_only_checks_it),
	T_(test_a_group_member_connects_and_others_get_eacces),
	CU_TEST_INFO_NULL,
};
#undef T_
