/* The durable epoch of one member in state_dir (PROTOCOL.md §4.2): the only
 * code that reads or writes node-ID.epoch. */
#include "daemon/epoch_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/control.h"
#include "core/err.h"
#include "common/parse.h"
#include "common/state_dir.h"

static int sys_fail(char *err, size_t errlen, const char *what, const char *path, int e)
{
	snprintf(err, errlen, "%s%s: %s", what, path, strerror(e));
	return -RING_EIO;
}

int ring_epoch_store_open(struct ring_epoch_store *s, const struct ring_state_dir *dir,
			  uint16_t id, char *err, size_t errlen)
{
	s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	snprintf(s->name, sizeof s->name, "node-%u.epoch", id);
	snprintf(s->tmp, sizeof s->tmp, "%s.tmp", s->name);
	snprintf(s->dir.path, sizeof s->dir.path, "%s", dir->path);
	snprintf(s->path, sizeof s->path, "%s/%s", dir->path, s->name);
	/* Our own descriptor of the folder the caller checked: every file is
	 * reached through it (openat, O_NOFOLLOW), never by its path. */
	s->dir.fd = fcntl(dir->fd, F_DUPFD_CLOEXEC, 0);
	if (s->dir.fd < 0)
		return sys_fail(err, errlen, "cannot open state_dir ", dir->path, errno);
	return 0;
}

int ring_epoch_store_load(struct ring_epoch_store *s, uint32_t *epoch, char *err, size_t errlen)
{
	*epoch = 0;
	int fd = ring_state_dir_openat(&s->dir, s->name, O_RDONLY, 0, err, errlen);
	if (fd < 0) {
		if (fd == -RING_EIO && errno == ENOENT)
			return 0; /* never ran */
		return fd; /* a link, a stranger's file: refused, reason in ERR */
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return sys_fail(err, errlen, "", s->path, errno);
	}
	char line[64] = "";
	char *ok = fgets(line, sizeof line, f);
	int read_errno = ferror(f) ? errno : 0;
	fclose(f);
	if (read_errno)
		return sys_fail(err, errlen, "", s->path, read_errno);
	uint64_t v;
	line[strcspn(line, "\n")] = 0;
	if (!ok || strncmp(line, "epoch ", 6) != 0 || !ring_parse_u64(line + 6, UINT32_MAX, &v)) {
		/* Never guess: starting from 0 could reuse epochs and fences. */
		snprintf(err, errlen, "%s: unreadable state (want \"epoch N\"); "
			 "refusing to start rather than risk reusing epochs", s->path);
		return -RING_ECONFIG;
	}
	*epoch = (uint32_t)v;
	return 0;
}

/* The temp file, made afresh (O_EXCL, never through a link): one left by
 * a crash is removed first. */
static int create_tmp(struct ring_epoch_store *s)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(s->dir.fd, s->tmp, flags, 0600);
	if (fd < 0 && errno == EEXIST && unlinkat(s->dir.fd, s->tmp, 0) == 0)
		fd = openat(s->dir.fd, s->tmp, flags, 0600);
	return fd;
}

static int open_tmp(struct ring_epoch_store *s)
{
	int fd = create_tmp(s);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && s->spare_fd >= 0) {
		/* Out of descriptors (a client flood): the one kept in
		 * reserve is for exactly this write, which must not fail. */
		close(s->spare_fd);
		s->spare_fd = -1;
		fd = create_tmp(s);
	}
	return fd;
}

/* write temp, fsync, rename, fsync the folder: after this returns the epoch
 * survives a crash of the process or the machine. */
int ring_epoch_store_save(struct ring_epoch_store *s, uint32_t epoch, char *err, size_t errlen)
{
	char buf[32];
	int len = snprintf(buf, sizeof buf, "epoch %u\n", epoch);
	int e = 0;
	int fd = open_tmp(s);
	if (fd < 0) {
		e = errno;
	} else {
		ssize_t w = write(fd, buf, (size_t)len);
		e = w == len ? 0 : (w < 0 ? errno : EIO);
		if (!e && fsync(fd) != 0)
			e = errno;
		close(fd);
	}
	if (!e && renameat(s->dir.fd, s->tmp, s->dir.fd, s->name) != 0)
		e = errno;
	if (!e && fsync(s->dir.fd) != 0)
		e = errno;
	if (s->spare_fd < 0)
		s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return e ? sys_fail(err, errlen, "cannot persist epoch to ", s->path, e) : 0;
}

void ring_epoch_store_close(struct ring_epoch_store *s)
{
	ring_state_dir_close(&s->dir);
	if (s->spare_fd >= 0)
		close(s->spare_fd);
	s->spare_fd = -1;
}
