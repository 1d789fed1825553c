/* CUnit suite for the durable epoch (ring/daemon/epoch_store.c): what a restart
 * reads back, what it refuses to guess, and what a save leaves on disk. Each
 * test works in its own mkdtemp folder. */
#include <CUnit/CUnit.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/epoch_store.h"
#include "core/err.h"
#include "common/state_dir.h"
#include "lib/suites.h"
#include "lib/tmpdir.h"

struct tmp {
	char dir[256];
	char state[300]; /* DIR/state, the state_dir */
	char file[340];  /* DIR/state/node-7.epoch */
	struct ring_state_dir d; /* the state_dir, as ringd opens it */
	struct ring_epoch_store s;
	char err[512];
};

static bool tmp_open(struct tmp *t)
{
	const char *base = getenv("TMPDIR");
	snprintf(t->dir, sizeof t->dir, "%s/ring-epoch-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(t->dir))
		return false;
	snprintf(t->state, sizeof t->state, "%s/state", t->dir);
	snprintf(t->file, sizeof t->file, "%s/node-7.epoch", t->state);
	t->err[0] = 0;
	t->d.fd = t->s.dir.fd = t->s.spare_fd = -1;
	return true;
}

static void tmp_close(struct tmp *t)
{
	ring_epoch_store_close(&t->s);
	ring_state_dir_close(&t->d);
	chmod(t->state, 0700);
	tmpdir_remove(t->dir);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void read_file(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static int open_store(struct tmp *t)
{
	int rc = ring_state_dir_open(&t->d, t->state, RING_DIR_STATE, true, t->err, sizeof t->err);
	return rc < 0 ? rc : ring_epoch_store_open(&t->s, &t->d, 7, t->err, sizeof t->err);
}

static void test_open_creates_the_state_dir_private(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL(open_store(&t), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(t.state, &st), 0);
	CU_ASSERT(S_ISDIR(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	tmp_close(&t);
}

static void test_missing_file_is_epoch_0(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	uint32_t e = 99;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(e, 0);
	tmp_close(&t);
}

static void test_saved_epoch_is_loaded_by_a_new_store(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	CU_ASSERT_EQUAL(ring_epoch_store_save(&t.s, 41, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(ring_epoch_store_save(&t.s, UINT32_MAX, t.err, sizeof t.err), 0);
	ring_epoch_store_close(&t.s);
	/* As after a restart: a fresh store on the same folder. */
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	uint32_t e = 0;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(e, UINT32_MAX);
	tmp_close(&t);
}

static void test_save_leaves_the_file_0600_and_no_temp_file(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	CU_ASSERT_EQUAL(ring_epoch_store_save(&t.s, 5, t.err, sizeof t.err), 0);
	char text[64];
	read_file(t.file, text, sizeof text);
	CU_ASSERT_STRING_EQUAL(text, "epoch 5\n");
	struct stat st;
	CU_ASSERT_EQUAL(stat(t.file, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	char tmpname[400];
	snprintf(tmpname, sizeof tmpname, "%s.tmp", t.file);
	CU_ASSERT_NOT_EQUAL(access(tmpname, F_OK), 0);
	tmp_close(&t);
}

/* Anything but "epoch N" with N in 0..2^32-1 must stop the start (exit 78
 * in ringd), never read as 0: that could reuse epochs and fences. */
static void test_unreadable_contents_are_refused_not_guessed(void)
{
	static const char *const bad[] = {
		"",                  /* empty: a crash between create and write */
		"epo",               /* short */
		"epoch \n",          /* no number */
		"epoch -1\n",        /* a sign */
		"epoch 12x\n",       /* junk after it */
		"epoch 4294967296\n", /* past UINT32_MAX */
		"EPOCH 3\n",         /* wrong word */
		"\x01\x02\x03\x04",  /* binary */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tmp t;
		CU_ASSERT_FATAL(tmp_open(&t));
		CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
		write_file(t.file, bad[i]);
		uint32_t e = 77;
		CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), -RING_ECONFIG);
		CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "unreadable state"));
		CU_ASSERT_PTR_NOT_NULL(strstr(t.err, t.file));
		tmp_close(&t);
	}
}

static void test_file_without_newline_is_read(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	write_file(t.file, "epoch 12");
	uint32_t e = 0;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(e, 12);
	tmp_close(&t);
}

/* Root reads any file: the permission tests only mean something as a user. */
static bool as_root(void)
{
	return geteuid() == 0;
}

static void test_file_that_cannot_be_read_is_an_io_error(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	if (as_root()) {
		/* A folder where the file should be fails the same way for root. */
		CU_ASSERT_EQUAL_FATAL(mkdir(t.file, 0700), 0);
	} else {
		write_file(t.file, "epoch 3\n");
		chmod(t.file, 0);
	}
	uint32_t e = 5;
	int rc = ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err);
	if (as_root()) {
		/* fopen of a folder succeeds; reading it fails: never epoch 0. */
		CU_ASSERT(rc == -RING_EIO || rc == -RING_ECONFIG);
	} else {
		CU_ASSERT_EQUAL(rc, -RING_EIO);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, t.file));
	tmp_close(&t);
}

static void test_state_dir_that_cannot_be_created_is_an_io_error(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	/* A file in the way of the folder. */
	write_file(t.state, "x");
	CU_ASSERT_EQUAL(open_store(&t), -RING_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "state_dir"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, t.state));
	ring_epoch_store_close(&t.s);
	ring_state_dir_close(&t.d);
	unlink(t.state);
	tmpdir_remove(t.dir);
}

static void test_failed_save_names_the_file_and_keeps_the_old_epoch(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	CU_ASSERT_EQUAL_FATAL(ring_epoch_store_save(&t.s, 8, t.err, sizeof t.err), 0);
	/* The temp file's name taken by a folder: the write cannot happen, for
	 * root too. */
	char tmpname[400];
	snprintf(tmpname, sizeof tmpname, "%s.tmp", t.file);
	CU_ASSERT_EQUAL_FATAL(mkdir(tmpname, 0700), 0);
	CU_ASSERT_EQUAL(ring_epoch_store_save(&t.s, 9, t.err, sizeof t.err), -RING_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "cannot persist epoch to "));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, t.file));
	uint32_t e = 0;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(e, 8);
	tmp_close(&t);
}

/* A client flood can take every descriptor; the save must still happen,
 * on the one kept in reserve, and the reserve comes back after it. */
static void test_save_succeeds_when_descriptors_have_run_out(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	struct rlimit old;
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &old), 0);
	struct rlimit low = old;
	low.rlim_cur = 64;
	CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &low), 0);
	int fds[64], n = 0;
	while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		n++;
	CU_ASSERT(n < 64); /* the table is full now */
	int rc1 = ring_epoch_store_save(&t.s, 10, t.err, sizeof t.err);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	setrlimit(RLIMIT_NOFILE, &old);
	CU_ASSERT_EQUAL(rc1, 0);
	CU_ASSERT(t.s.spare_fd >= 0); /* taken again for the next flood */
	uint32_t e = 0;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(e, 10);
	tmp_close(&t);
}

static void test_error_fits_a_small_buffer(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	write_file(t.file, "nonsense\n");
	char small[8];
	memset(small, 'x', sizeof small);
	uint32_t e;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, small, sizeof small), -RING_ECONFIG);
	CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
	tmp_close(&t);
}


/* The temp file's name taken by a link another user planted (when the
 * folder was theirs, or an old one): the save replaces the link, never
 * writes through it. */
static void test_save_never_writes_through_a_link_at_the_temp_name(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	char victim[340], tmpname[400];
	snprintf(victim, sizeof victim, "%s/victim", t.dir);
	snprintf(tmpname, sizeof tmpname, "%s.tmp", t.file);
	write_file(victim, "precious\n");
	CU_ASSERT_EQUAL_FATAL(symlink(victim, tmpname), 0);
	CU_ASSERT_EQUAL(ring_epoch_store_save(&t.s, 4, t.err, sizeof t.err), 0);
	char buf[64];
	read_file(victim, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "precious\n");
	read_file(t.file, buf, sizeof buf);
	CU_ASSERT_STRING_EQUAL(buf, "epoch 4\n");
	struct stat st;
	CU_ASSERT_EQUAL(lstat(t.file, &st), 0);
	CU_ASSERT(S_ISREG(st.st_mode));
	tmp_close(&t);
}

/* An epoch file that is a link is refused, not followed: its target could
 * be anything (another member's epoch, a file of root's). */
static void test_epoch_file_that_is_a_link_is_refused(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	char target[340];
	snprintf(target, sizeof target, "%s/elsewhere", t.dir);
	write_file(target, "epoch 9\n");
	CU_ASSERT_EQUAL_FATAL(symlink(target, t.file), 0);
	uint32_t e = 5;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "symbolic link"));
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "node-7.epoch"));
	tmp_close(&t);
}

/* One that others may write, or another user's, is refused too. */
static void test_epoch_file_others_may_write_or_own_is_refused(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL_FATAL(open_store(&t), 0);
	write_file(t.file, "epoch 3\n");
	chmod(t.file, 0666);
	uint32_t e = 5;
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), -RING_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "mode 0666"));
	chmod(t.file, 0600);
	CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), 0);
	CU_ASSERT_EQUAL(e, 3);
	if (as_root()) {
		CU_ASSERT_EQUAL_FATAL(chown(t.file, 65534, 65534), 0);
		CU_ASSERT_EQUAL(ring_epoch_store_load(&t.s, &e, t.err, sizeof t.err), -RING_ECONFIG);
		CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "owned by uid 65534"));
	}
	tmp_close(&t);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_epoch_store_tests[] = {
	T_(test_open_creates_the_state_dir_private),
	T_(test_missing_file_is_epoch_0),
	T_(test_saved_epoch_is_loaded_by_a_new_store),
	T_(test_save_leaves_the_file_0600_and_no_temp_file),
	T_(test_unreadable_contents_are_refused_not_guessed),
	T_(test_file_without_newline_is_read),
	T_(test_file_that_cannot_be_read_is_an_io_error),
	T_(test_state_dir_that_cannot_be_created_is_an_io_error),
	T_(test_failed_save_names_the_file_and_keeps_the_old_epoch),
	T_(test_save_succeeds_when_descriptors_have_run_out),
	T_(test_error_fits_a_small_buffer),
	T_(test_save_never_writes_through_a_link_at_the_temp_name),
	T_(test_epoch_file_that_is_a_link_is_refused),
	T_(test_epoch_file_others_may_write_or_own_is_refused),
	CU_TEST_INFO_NULL,
};
#undef T_
