/* The reference fenced resource (fence_file.h): FILE takes a line only under
 * a fence not older than the one recorded in FILE.fence, checked and moved
 * under a flock() of FILE.lock. */
#include "ctl/fence_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/parse.h"
#include "core/err.h"

/* "18446744073709551615\n" is 21 bytes; a longer FILE.fence is not a fence. */
#define FENCE_TEXT_MAX 21

struct paths {
	char *lock;  /* FILE.lock */
	char *fence; /* FILE.fence */
	char *tmp;   /* FILE.fence.tmp.PID */
	char *dir;   /* FILE's folder, to fsync its entries */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Reports a failed system call on PATH with errno's message; returns -RING_EIO. */
static int sys_err(char *err, size_t errlen, const char *path, const char *call)
{
	int e = errno;
	set_err(err, errlen, "%s: %s: %s", path, call, strerror(e));
	return -RING_EIO;
}

static char *concat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);
	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b, lb + 1);
	return s;
}

static void paths_free(struct paths *p)
{
	free(p->lock);
	free(p->fence);
	free(p->tmp);
	free(p->dir);
}

static int paths_make(struct paths *p, const char *file)
{
	char suffix[48];
	snprintf(suffix, sizeof suffix, ".fence.tmp.%ld", (long)getpid());
	p->lock = concat(file, ".lock");
	p->fence = concat(file, ".fence");
	p->tmp = concat(file, suffix);
	const char *slash = strrchr(file, '/');
	if (!slash)
		p->dir = concat(".", "");
	else if (slash == file)
		p->dir = concat("/", "");
	else if ((p->dir = malloc((size_t)(slash - file) + 1)) != NULL) {
		memcpy(p->dir, file, (size_t)(slash - file));
		p->dir[slash - file] = '\0';
	}
	if (!p->lock || !p->fence || !p->tmp || !p->dir)
		return -RING_ENOMEM;
	return 0;
}

/* Writes all of BUF, through short writes and signals. Leaves errno set on
 * failure. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) { /* not expected of a regular file; do not spin */
			errno = EIO;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Makes the entries of DIR (a new or renamed file) durable. */
static int sync_dir(const char *dir, char *err, size_t errlen)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sys_err(err, errlen, dir, "open");
	int rc = 0;
	if (fsync(fd) != 0)
		rc = sys_err(err, errlen, dir, "fsync");
	close(fd);
	return rc;
}

/* Reads the recorded fence into *HIGHEST (0 and *PRESENT false when the file
 * does not exist). A file that is there but is not a fence is an error, never
 * 0: reading it as 0 would let every stale holder back in. */
static int read_fence(const char *path, uint64_t *highest, bool *present,
		      char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		*highest = 0;
		*present = false;
		return 0;
	}
	if (fd < 0)
		return sys_err(err, errlen, path, "open");

	char buf[FENCE_TEXT_MAX + 2]; /* room to notice a file that is too long */
	size_t len = 0;
	while (len < sizeof buf - 1) {
		ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int rc = sys_err(err, errlen, path, "read");
			close(fd);
			return rc;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';

	/* The newline is what this file writes; tolerate a file written by
	 * hand without one. */
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (len > FENCE_TEXT_MAX - 1 || ring_fence_parse(buf, highest) != 0) {
		set_err(err, errlen, "%s: not a fence (expected a decimal number)", path);
		return -RING_EIO;
	}
	*present = true;
	return 0;
}

/* Replaces FILE.fence with FENCE: temp file, fsync, rename, fsync of the
 * folder, so that a crash leaves either the old fence or the new one. */
static int write_fence(const struct paths *p, uint64_t fence, char *err, size_t errlen)
{
	char text[FENCE_TEXT_MAX + 1];
	int len = snprintf(text, sizeof text, "%" PRIu64 "\n", fence);

	int fd = open(p->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return sys_err(err, errlen, p->tmp, "open");
	int rc = 0;
	if (write_all(fd, text, (size_t)len) != 0)
		rc = sys_err(err, errlen, p->tmp, "write");
	else if (fsync(fd) != 0)
		rc = sys_err(err, errlen, p->tmp, "fsync");
	if (close(fd) != 0 && rc == 0)
		rc = sys_err(err, errlen, p->tmp, "close");
	if (rc == 0 && rename(p->tmp, p->fence) != 0)
		rc = sys_err(err, errlen, p->fence, "rename");
	if (rc != 0) {
		unlink(p->tmp);
		return rc;
	}
	return sync_dir(p->dir, err, errlen);
}

/* Appends LINE (LEN bytes, newline included) to FILE and makes it durable. */
static int append_line(const char *file, const struct paths *p, const char *line,
		       size_t len, char *err, size_t errlen)
{
	bool created = false;
	int fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* Under the lock nobody else creates it, so EXCL only tells
		 * us that the folder's entry needs an fsync too. */
		fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		created = true;
	}
	if (fd < 0)
		return sys_err(err, errlen, file, "open");

	struct stat st;
	if (fstat(fd, &st) != 0) {
		int rc = sys_err(err, errlen, file, "fstat");
		close(fd);
		return rc;
	}
	int rc = 0;
	if (write_all(fd, line, len) != 0) {
		rc = sys_err(err, errlen, file, "write");
		/* A torn line would run into the next one; every fenced
		 * writer holds the lock, so the end is still where it was. */
		if (ftruncate(fd, st.st_size) != 0) {
			/* already failing; the write's error is the one to report */
		}
	} else if (fsync(fd) != 0) {
		rc = sys_err(err, errlen, file, "fsync");
	}
	if (close(fd) != 0 && rc == 0)
		rc = sys_err(err, errlen, file, "close");
	if (rc == 0 && created)
		rc = sync_dir(p->dir, err, errlen);
	return rc;
}

/* Refuses what cannot be a fenced append: a name that is not a file's, or
 * text of more than one line. */
static int check_request(const char *file, const char *text, char *err, size_t errlen)
{
	if (!file || !*file || file[strlen(file) - 1] == '/') {
		set_err(err, errlen, "not a file name: '%s'", file ? file : "");
		return -RING_EFIELD;
	}
	if (!text || strchr(text, '\n')) {
		set_err(err, errlen, "text must be one line (it holds a newline)");
		return -RING_EFIELD;
	}
	return 0;
}

/* Opens PATH (made if need be) and waits for its exclusive flock; the
 * descriptor, whose close releases it, or -RING_EIO. */
static int lock_file(const char *path, char *err, size_t errlen)
{
	int lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock < 0)
		return sys_err(err, errlen, path, "open");
	int rc;
	while ((rc = flock(lock, LOCK_EX)) != 0 && errno == EINTR)
		;
	if (rc != 0) {
		rc = sys_err(err, errlen, path, "flock");
		close(lock);
		return rc;
	}
	return lock;
}

/* Under the lock: LINE goes into FILE only if FENCE is not older than the
 * recorded one, which moves up to FENCE first. */
static int append_under_fence(const char *file, const struct paths *p, const char *line,
			      size_t len, uint64_t fence, uint64_t *highest, char *err,
			      size_t errlen)
{
	uint64_t h;
	bool present;
	int rc = read_fence(p->fence, &h, &present, err, errlen);
	if (rc != 0)
		return rc;
	if (fence < h) {
		set_err(err, errlen, "stale fence %" PRIu64 " < %" PRIu64, fence, h);
		if (highest)
			*highest = h;
		return -RING_ESTALE;
	}

	/* The fence moves forward, durably, before the line is written. In
	 * the other order a crash (or a failed fence write) after the line
	 * would leave FILE holding fence F's line while FILE.fence still said
	 * H < F, and a stale holder with a fence in [H, F) would then be let
	 * in after a newer one. In this order a crash in between leaves the
	 * fence ahead of the data, which refuses only fences below F: holders
	 * older than F's grant, stale anyway; F's own holder, told nothing
	 * succeeded, may retry with the same fence. */
	if (fence > h || !present) {
		rc = write_fence(p, fence, err, errlen);
		if (rc != 0)
			return rc;
	}
	rc = append_line(file, p, line, len, err, errlen);
	if (rc == 0 && highest)
		*highest = fence;
	return rc;
}

int ring_fenced_append(const char *file, const char *text, uint64_t fence,
		       uint64_t *highest, char *err, size_t errlen)
{
	set_err(err, errlen, "%s", "");
	int rc = check_request(file, text, err, errlen);
	if (rc != 0)
		return rc;

	size_t tlen = strlen(text);
	char *line = malloc(tlen + 2);
	struct paths p = { 0 };
	rc = line ? paths_make(&p, file) : -RING_ENOMEM;
	if (rc != 0) {
		set_err(err, errlen, "%s", ring_strerror(-RING_ENOMEM));
		free(line);
		paths_free(&p);
		return -RING_ENOMEM;
	}
	memcpy(line, text, tlen);
	line[tlen] = '\n';
	line[tlen + 1] = '\0';

	/* The lock file stays forever: removing it would let a writer that
	 * opened the old one and one that created a new one both hold "the"
	 * lock. */
	int lock = lock_file(p.lock, err, errlen);
	if (lock < 0) {
		rc = lock;
	} else {
		rc = append_under_fence(file, &p, line, tlen + 1, fence, highest, err, errlen);
		close(lock); /* releases the flock */
	}
	free(line);
	paths_free(&p);
	return rc;
}

int ring_fence_parse(const char *s, uint64_t *out)
{
	return ring_parse_u64(s, UINT64_MAX, out) ? 0 : -RING_EFIELD;
}
