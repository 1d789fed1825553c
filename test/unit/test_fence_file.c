/* CUnit suite for the reference fenced resource (ring/ctl/fence_file.c): what is
 * accepted and refused, what is left on disk, fence parsing, and concurrent
 * appenders in separate processes. Each test works in its own mkdtemp folder. */
#include <CUnit/CUnit.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "ctl/fence_file.h"
#include "lib/suites.h"

struct tmp {
	char dir[256];
	char file[300];  /* DIR/data */
	char fence[320]; /* DIR/data.fence */
	char lock[320];  /* DIR/data.lock */
};

static bool tmp_open(struct tmp *t)
{
	const char *base = getenv("TMPDIR");
	snprintf(t->dir, sizeof t->dir, "%s/ring-fence-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(t->dir))
		return false;
	snprintf(t->file, sizeof t->file, "%s/data", t->dir);
	snprintf(t->fence, sizeof t->fence, "%s.fence", t->file);
	snprintf(t->lock, sizeof t->lock, "%s.lock", t->file);
	return true;
}

/* Removes everything the test left in its folder, then the folder. */
static void tmp_close(struct tmp *t)
{
	DIR *d = opendir(t->dir);
	if (d) {
		struct dirent *e;
		char path[600];
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", t->dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(t->dir);
}

static size_t entries(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* The whole of PATH as a string in BUF, or "<missing>". */
static const char *slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(buf, cap, "<missing>");
		return buf;
	}
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL(f);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static int append(const struct tmp *t, const char *text, uint64_t fence, uint64_t *highest)
{
	char err[128] = "";
	int rc = ring_fenced_append(t->file, text, fence, highest, err, sizeof err);
	/* A refusal always says why; a success says nothing. */
	if (rc != 0) {
		CU_ASSERT(err[0] != '\0');
	} else {
		CU_ASSERT_STRING_EQUAL(err, "");
	}
	return rc;
}

static void test_first_append_creates_the_file_and_its_fence(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char buf[256];
	uint64_t h = 99;
	CU_ASSERT_EQUAL(append(&t, "hello", 3, &h), 0);
	CU_ASSERT_EQUAL(h, 3);
	CU_ASSERT_STRING_EQUAL(slurp(t.file, buf, sizeof buf), "hello\n");
	CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), "3\n");
	tmp_close(&t);
}

static void test_first_append_with_fence_0_records_it(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char buf[256];
	CU_ASSERT_EQUAL(append(&t, "zero", 0, NULL), 0);
	CU_ASSERT_STRING_EQUAL(slurp(t.file, buf, sizeof buf), "zero\n");
	CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), "0\n");
	tmp_close(&t);
}

static void test_equal_fence_is_accepted(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char buf[256];
	uint64_t h = 0;
	CU_ASSERT_EQUAL(append(&t, "one", 7, &h), 0);
	CU_ASSERT_EQUAL(append(&t, "two", 7, &h), 0);
	CU_ASSERT_EQUAL(h, 7);
	CU_ASSERT_STRING_EQUAL(slurp(t.file, buf, sizeof buf), "one\ntwo\n");
	CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), "7\n");
	tmp_close(&t);
}

static void test_higher_fence_is_accepted_and_moves_the_fence(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char buf[256];
	uint64_t h = 0;
	CU_ASSERT_EQUAL(append(&t, "a", 5, &h), 0);
	CU_ASSERT_EQUAL(append(&t, "b", 7, &h), 0);
	CU_ASSERT_EQUAL(h, 7);
	CU_ASSERT_EQUAL(append(&t, "c", UINT64_MAX, &h), 0);
	CU_ASSERT_EQUAL(h, UINT64_MAX);
	CU_ASSERT_STRING_EQUAL(slurp(t.file, buf, sizeof buf), "a\nb\nc\n");
	CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), "18446744073709551615\n");
	tmp_close(&t);
}

static void test_lower_fence_is_refused_and_changes_nothing(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char buf[256];
	uint64_t h = 0;
	CU_ASSERT_EQUAL(append(&t, "new", 7, &h), 0);

	char err[64] = "";
	h = 0;
	CU_ASSERT_EQUAL(ring_fenced_append(t.file, "old", 5, &h, err, sizeof err), -RING_ESTALE);
	CU_ASSERT_STRING_EQUAL(err, "stale fence 5 < 7");
	CU_ASSERT_EQUAL(h, 7);
	CU_ASSERT_STRING_EQUAL(slurp(t.file, buf, sizeof buf), "new\n");
	CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), "7\n");
	tmp_close(&t);
}

static void test_unparseable_fence_file_is_an_error_and_appends_nothing(void)
{
	/* Each would let stale holders back in if it were read as 0. */
	static const char *const bad[] = {
		"", "\n", "abc\n", "-1\n", " 7\n", "7 \n", "7\n\n", "0x10\n",
		"18446744073709551616\n", "99999999999999999999999\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tmp t;
		CU_ASSERT_FATAL(tmp_open(&t));
		char buf[256];
		put(t.fence, bad[i]);
		char err[128] = "";
		uint64_t h = 42;
		int rc = ring_fenced_append(t.file, "x", 100, &h, err, sizeof err);
		CU_ASSERT_EQUAL(rc, -RING_EIO);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a fence"));
		CU_ASSERT_EQUAL(h, 42);
		CU_ASSERT_FALSE(exists(t.file));
		CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), bad[i]);
		tmp_close(&t);
	}
}

static void test_fence_file_without_a_newline_is_read(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	put(t.fence, "7");
	uint64_t h = 0;
	CU_ASSERT_EQUAL(append(&t, "x", 6, &h), -RING_ESTALE);
	CU_ASSERT_EQUAL(h, 7);
	CU_ASSERT_EQUAL(append(&t, "y", 7, &h), 0);
	tmp_close(&t);
}

static void test_text_with_a_newline_is_refused_before_touching_anything(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char err[128] = "";
	CU_ASSERT_EQUAL(ring_fenced_append(t.file, "two\nlines", 1, NULL, err, sizeof err),
			-RING_EFIELD);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "newline"));
	CU_ASSERT_EQUAL(ring_fenced_append(t.file, "trailing\n", 1, NULL, err, sizeof err),
			-RING_EFIELD);
	CU_ASSERT_EQUAL(entries(t.dir), 0);
	tmp_close(&t);
}

static void test_bad_file_names_are_refused(void)
{
	char err[128] = "";
	CU_ASSERT_EQUAL(ring_fenced_append("", "x", 1, NULL, err, sizeof err), -RING_EFIELD);
	CU_ASSERT_EQUAL(ring_fenced_append("/tmp/", "x", 1, NULL, err, sizeof err), -RING_EFIELD);
	CU_ASSERT(err[0] != '\0');
}

static void test_lock_file_stays_and_no_temp_file_is_left(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL(append(&t, "a", 1, NULL), 0);
	CU_ASSERT_EQUAL(append(&t, "b", 2, NULL), 0);
	CU_ASSERT_EQUAL(append(&t, "c", 1, NULL), -RING_ESTALE);
	CU_ASSERT_TRUE(exists(t.lock));
	/* data, data.fence, data.lock and nothing else */
	CU_ASSERT_EQUAL(entries(t.dir), 3);
	mode_t mask = umask(0);
	umask(mask);
	struct stat st;
	CU_ASSERT_EQUAL(stat(t.lock, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0644 & ~mask);
	CU_ASSERT_EQUAL(stat(t.fence, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0644 & ~mask);
	tmp_close(&t);
}

static void test_missing_folder_is_an_io_error_with_its_reason(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char file[400];
	snprintf(file, sizeof file, "%s/nowhere/data", t.dir);
	char err[256] = "";
	uint64_t h = 42;
	CU_ASSERT_EQUAL(ring_fenced_append(file, "x", 1, &h, err, sizeof err), -RING_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, strerror(ENOENT)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nowhere/data.lock"));
	CU_ASSERT_EQUAL(h, 42);
	tmp_close(&t);
}

/* The fence moves before the line is written (see fence_file.c): when the
 * line then fails, the fence stays ahead, which refuses only older holders,
 * and the same fence may try again. */
static void test_failed_line_leaves_the_fence_ahead_and_the_same_fence_retries(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	char buf[256];
	CU_ASSERT_EQUAL(mkdir(t.file, 0755), 0); /* the line cannot be written */
	char err[256] = "";
	CU_ASSERT_EQUAL(ring_fenced_append(t.file, "a", 5, NULL, err, sizeof err), -RING_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, strerror(EISDIR)));
	CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), "5\n");
	CU_ASSERT_EQUAL(rmdir(t.file), 0);

	CU_ASSERT_EQUAL(ring_fenced_append(t.file, "b", 4, NULL, err, sizeof err), -RING_ESTALE);
	CU_ASSERT_STRING_EQUAL(err, "stale fence 4 < 5");
	CU_ASSERT_EQUAL(append(&t, "c", 5, NULL), 0);
	CU_ASSERT_STRING_EQUAL(slurp(t.file, buf, sizeof buf), "c\n");
	tmp_close(&t);
}

static void test_error_fits_a_small_buffer(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	CU_ASSERT_EQUAL(append(&t, "a", 700, NULL), 0);
	char err[8];
	memset(err, 'x', sizeof err);
	CU_ASSERT_EQUAL(ring_fenced_append(t.file, "b", 5, NULL, err, sizeof err), -RING_ESTALE);
	CU_ASSERT_STRING_EQUAL(err, "stale f");
	/* And no buffer at all is allowed. */
	CU_ASSERT_EQUAL(ring_fenced_append(t.file, "b", 5, NULL, NULL, 0), -RING_ESTALE);
	tmp_close(&t);
}

static void test_fence_parse_accepts_decimal_u64(void)
{
	uint64_t v = 1;
	CU_ASSERT_EQUAL(ring_fence_parse("0", &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(ring_fence_parse("42", &v), 0);
	CU_ASSERT_EQUAL(v, 42);
	CU_ASSERT_EQUAL(ring_fence_parse("007", &v), 0);
	CU_ASSERT_EQUAL(v, 7);
	CU_ASSERT_EQUAL(ring_fence_parse("18446744073709551615", &v), 0);
	CU_ASSERT_EQUAL(v, UINT64_MAX);
	CU_ASSERT_EQUAL(ring_fence_parse("18446744073709551610", &v), 0);
	CU_ASSERT_EQUAL(v, UINT64_MAX - 5);
}

static void test_fence_parse_rejects_signs_junk_and_overflow(void)
{
	static const char *const bad[] = {
		"", "-1", "+1", "1x", " 1", "1 ", "1\n", "0x10", "1.5",
		"18446744073709551616", "18446744073709551620", "99999999999999999999",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t v = 123;
		CU_ASSERT_EQUAL(ring_fence_parse(bad[i], &v), -RING_EFIELD);
		CU_ASSERT_EQUAL(v, 123); /* untouched on refusal */
	}
	uint64_t v = 123;
	CU_ASSERT_EQUAL(ring_fence_parse(NULL, &v), -RING_EFIELD);
}

#define WRITERS 4
#define LINES_EACH 200
#define DEADLINE_S 60

/* One writer process: LINES_EACH appends with fences K, K+WRITERS, ...
 * Exits with how many were accepted, or 255 on anything but success or a
 * correct stale refusal. */
static void writer(const char *file, unsigned k, int start)
{
	alarm(DEADLINE_S + 5); /* never outlive the test, even if the parent dies */
	/* Wait for the start: all writers begin together, or the first one
	 * forked would write most of its lines alone. */
	char c;
	while (read(start, &c, 1) < 0 && errno == EINTR)
		;
	close(start);
	int accepted = 0;
	for (unsigned i = 0; i < LINES_EACH; i++) {
		uint64_t f = k + (uint64_t)i * WRITERS;
		char text[64], err[128];
		snprintf(text, sizeof text, "fence %" PRIu64 " writer %u line %u", f, k, i);
		uint64_t h = 0;
		int rc = ring_fenced_append(file, text, f, &h, err, sizeof err);
		if (rc == 0 && h == f)
			accepted++;
		else if (rc != -RING_ESTALE || h <= f)
			_exit(255);
	}
	_exit(accepted);
}

static void test_concurrent_writers_never_accept_an_older_fence(void)
{
	struct tmp t;
	CU_ASSERT_FATAL(tmp_open(&t));
	fflush(NULL); /* children leave with _exit; nothing buffered is doubled */

	int start[2];
	CU_ASSERT_FATAL(pipe(start) == 0);
	pid_t pids[WRITERS];
	size_t started = 0;
	for (unsigned k = 1; k <= WRITERS; k++) {
		pid_t pid = fork();
		if (pid == 0) {
			close(start[1]);
			writer(t.file, k, start[0]);
		}
		CU_ASSERT(pid > 0);
		if (pid < 0)
			break;
		pids[started++] = pid;
	}
	close(start[0]);
	close(start[1]); /* end of file: go */

	/* Collect them within the deadline; kill whatever is left. */
	long accepted_total = 0;
	bool all_ok = true;
	size_t done = 0;
	bool reaped[WRITERS] = { false };
	time_t deadline = time(NULL) + DEADLINE_S;
	while (done < started && time(NULL) < deadline) {
		for (size_t i = 0; i < started; i++) {
			int status;
			if (reaped[i] || waitpid(pids[i], &status, WNOHANG) != pids[i])
				continue;
			reaped[i] = true;
			done++;
			if (WIFEXITED(status) && WEXITSTATUS(status) != 255)
				accepted_total += WEXITSTATUS(status);
			else
				all_ok = false;
		}
		struct timespec nap = { 0, 10 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	for (size_t i = 0; i < started; i++)
		if (!reaped[i]) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
			all_ok = false;
		}
	CU_ASSERT_EQUAL(done, WRITERS);
	CU_ASSERT_TRUE(all_ok);

	/* Every accepted line is there, whole, and their fences never go
	 * down; the fence file holds the last of them. */
	FILE *f = fopen(t.file, "r");
	CU_ASSERT_PTR_NOT_NULL(f);
	long lines = 0;
	uint64_t last = 0;
	bool ordered = true, parsed = true;
	char line[128];
	while (f && fgets(line, sizeof line, f)) {
		uint64_t fence;
		unsigned k, i;
		if (sscanf(line, "fence %" SCNu64 " writer %u line %u", &fence, &k, &i) != 3 ||
		    line[strlen(line) - 1] != '\n' || fence != k + (uint64_t)i * WRITERS) {
			parsed = false;
			continue;
		}
		if (lines > 0 && fence < last)
			ordered = false;
		last = fence;
		lines++;
	}
	if (f)
		fclose(f);
	CU_ASSERT_TRUE(parsed);
	CU_ASSERT_TRUE(ordered);
	CU_ASSERT(lines > 0);
	CU_ASSERT_EQUAL(lines, accepted_total);

	char buf[64], want[64];
	snprintf(want, sizeof want, "%" PRIu64 "\n", last);
	CU_ASSERT_STRING_EQUAL(slurp(t.fence, buf, sizeof buf), want);
	CU_ASSERT_EQUAL(entries(t.dir), 3); /* no temp file left behind */
	tmp_close(&t);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_fence_file_tests[] = {
	T_(test_first_append_creates_the_file_and_its_fence),
	T_(test_first_append_with_fence_0_records_it),
	T_(test_equal_fence_is_accepted),
	T_(test_higher_fence_is_accepted_and_moves_the_fence),
	T_(test_lower_fence_is_refused_and_changes_nothing),
	T_(test_unparseable_fence_file_is_an_error_and_appends_nothing),
	T_(test_fence_file_without_a_newline_is_read),
	T_(test_text_with_a_newline_is_refused_before_touching_anything),
	T_(test_bad_file_names_are_refused),
	T_(test_lock_file_stays_and_no_temp_file_is_left),
	T_(test_missing_folder_is_an_io_error_with_its_reason),
	T_(test_failed_line_leaves_the_fence_ahead_and_the_same_fence_retries),
	T_(test_error_fits_a_small_buffer),
	T_(test_fence_parse_accepts_decimal_u64),
	T_(test_fence_parse_rejects_signs_junk_and_overflow),
	T_(test_concurrent_writers_never_accept_an_older_fence),
	CU_TEST_INFO_NULL,
};
#undef T_
