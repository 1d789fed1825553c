/* CUnit suite for datagram authentication (ring/common/auth.c): keys, seals,
 * forgeries, replays and rotation. */
#include <CUnit/CUnit.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/auth.h"
#include "core/err.h"
#include "lib/suites.h"

#define NOW 1800000000000000ull /* some wall-clock microseconds */
#define K1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define K2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define K1_FINGERPRINT 0xe1121f2071940f98ull /* see the key fingerprint test */

static char dir[64];

int ring_test_auth_init(void)
{
	snprintf(dir, sizeof dir, "/tmp/ring-auth-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

int ring_test_auth_cleanup(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *key_file(const char *name, const char *text, mode_t mode)
{
	static char path[8][128];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 128, "%s/%s", dir, name);
	unlink(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	chmod(p, mode);
	return p;
}

static struct ring_auth *load(const char *path)
{
	struct ring_auth *a = NULL;
	char err[256];
	CU_ASSERT_EQUAL(ring_auth_load(&a, path, 4, err, sizeof err), 0);
	return a;
}

static size_t sealed(struct ring_auth *a, uint8_t *buf, uint64_t now)
{
	memcpy(buf, "RG\x01\x03hello, ring", 16);
	int n = ring_auth_seal(a, buf, 16, 16 + RING_AUTH_TRAILER, now);
	CU_ASSERT_EQUAL(n, 16 + RING_AUTH_TRAILER);
	return n > 0 ? (size_t)n : 0;
}

static void test_sealed_datagram_opens_to_its_body(void)
{
	struct ring_auth *a = load(key_file("k", K1 "\n", 0600));
	uint8_t buf[128];
	size_t n = sealed(a, buf, NOW);
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 1, NOW + 1000), 16);
	ring_auth_free(a);
}

static void test_every_flipped_bit_is_refused(void)
{
	struct ring_auth *a = load(key_file("k", K1 "\n", 0600));
	uint8_t buf[128];
	size_t n = sealed(a, buf, NOW);
	for (size_t i = 0; i < n * 8; i++) {
		buf[i / 8] ^= (uint8_t)(1u << (i % 8));
		CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 1, NOW), -RING_EAUTH);
		buf[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n - 1, 1, NOW), -RING_EAUTH);
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, 10, 1, NOW), -RING_EAUTH);
	ring_auth_free(a);
}

static void test_another_key_is_refused(void)
{
	struct ring_auth *a = load(key_file("k", K1 "\n", 0600));
	struct ring_auth *b = load(key_file("k2", K2 "\n", 0600));
	uint8_t buf[128];
	size_t n = sealed(b, buf, NOW);
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 1, NOW), -RING_EAUTH);
	ring_auth_free(a);
	ring_auth_free(b);
}

static void test_a_copy_is_a_replay(void)
{
	struct ring_auth *a = load(key_file("k", K1 "\n", 0600));
	uint8_t buf[128];
	size_t n = sealed(a, buf, NOW);
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 2, NOW), 16);
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 2, NOW), -RING_EREPLAY);
	/* Another sender's window is its own. */
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 3, NOW), 16);
	ring_auth_free(a);
}

static void test_old_and_future_timestamps_are_refused(void)
{
	struct ring_auth *a = load(key_file("k", K1 "\n", 0600));
	uint8_t buf[128];
	size_t n = sealed(a, buf, NOW - RING_AUTH_FRESH_US - 1);
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 1, NOW), -RING_EREPLAY);
	n = sealed(a, buf, NOW + RING_AUTH_FRESH_US + 10);
	CU_ASSERT_EQUAL(ring_auth_open(a, buf, n, 1, NOW), -RING_EREPLAY);
	ring_auth_free(a);
}

static void test_reordering_within_the_window_is_accepted(void)
{
	struct ring_auth *a = load(key_file("k", K1 "\n", 0600));
	uint8_t first[128], second[128];
	size_t n1 = sealed(a, first, NOW);
	size_t n2 = sealed(a, second, NOW + 1000);
	CU_ASSERT_EQUAL(ring_auth_open(a, second, n2, 1, NOW + 2000), 16);
	CU_ASSERT_EQUAL(ring_auth_open(a, first, n1, 1, NOW + 2000), 16);
	/* Far older than the newest seen: a replay. */
	uint8_t old[128];
	size_t n3 = sealed(a, old, NOW + 5 * RING_AUTH_REORDER_US);
	CU_ASSERT_EQUAL(ring_auth_open(a, old, n3, 1, NOW + 5 * RING_AUTH_REORDER_US), 16);
	CU_ASSERT_EQUAL(ring_auth_open(a, first, n1, 1, NOW + 5 * RING_AUTH_REORDER_US),
			-RING_EREPLAY);
	ring_auth_free(a);
}

static void test_seals_never_repeat_a_timestamp(void)
{
	struct ring_auth *a = load(key_file("k", K1 "\n", 0600));
	uint8_t x[128], y[128];
	size_t n1 = sealed(a, x, NOW);
	size_t n2 = sealed(a, y, NOW - 5); /* the clock stepped back */
	CU_ASSERT_EQUAL(ring_auth_open(a, x, n1, 1, NOW), 16);
	CU_ASSERT_EQUAL(ring_auth_open(a, y, n2, 1, NOW), 16);
	ring_auth_free(a);
}

/* A key file's mode is refused saying whom it lets in: its group (0640,
 * 0620) or everyone (0604, 0644), not "others" for both. */
static void test_an_open_key_file_says_whom_it_is_open_to(void)
{
	static const struct {
		mode_t mode;
		const char *says;
	} cases[] = {
		{0640, "readable by its group (mode 0640)"}, {0620, "writable by its group (mode 0620)"},
		{0604, "readable by others (mode 0604)"},    {0644, "readable by others (mode 0644)"},
		{0602, "writable by others (mode 0602)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ring_auth *a = NULL;
		char err[256] = "";
		CU_ASSERT_EQUAL(ring_auth_load(&a, key_file("mode", K1 "\n", cases[i].mode), 2, err,
					       sizeof err),
				-RING_EAUTH);
		if (!strstr(err, cases[i].says))
			printf("\n  mode %04o: '%s'\n", (unsigned)cases[i].mode, err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].says));
	}
}

/* Key fingerprints: one per key, the same for the same key on any host
 * (whatever else the line ends with: \r), different for another key, and
 * the pinned value of K1: BLAKE2b-256 over the label
 * "ring key fingerprint v1" with its NUL, then the 32-byte key (itself
 * BLAKE2b-256 of the line), first 8 bytes (Python's hashlib). */
static void test_key_fingerprints_compare_keys_without_showing_them(void)
{
	struct ring_auth *a = load(key_file("fp1", K1 "\n" K2 "\n", 0600));
	struct ring_auth *b = load(key_file("fp2", K1 "\r\n", 0600));
	struct ring_auth *c = load(key_file("fp3", K2 "\n", 0600));
	uint64_t fa[RING_AUTH_KEYS], fb[RING_AUTH_KEYS], fc[RING_AUTH_KEYS];
	CU_ASSERT_EQUAL(ring_auth_key_fingerprints(a, fa, RING_AUTH_KEYS), 2);
	CU_ASSERT_EQUAL(ring_auth_key_fingerprints(b, fb, RING_AUTH_KEYS), 1);
	CU_ASSERT_EQUAL(ring_auth_key_fingerprints(c, fc, RING_AUTH_KEYS), 1);
	CU_ASSERT_EQUAL(fa[0], fb[0]);
	CU_ASSERT_EQUAL(fa[1], fc[0]);
	CU_ASSERT_NOT_EQUAL(fa[0], fc[0]);
	CU_ASSERT_EQUAL(fa[0], K1_FINGERPRINT);
	ring_auth_free(a);
	ring_auth_free(b);
	ring_auth_free(c);
}

static void test_bad_key_files_are_refused(void)
{
	struct ring_auth *a = NULL;
	char err[256];
	CU_ASSERT_EQUAL(ring_auth_load(&a, key_file("open", K1 "\n", 0644), 2, err, sizeof err),
			-RING_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "readable by others"));
	CU_ASSERT_EQUAL(ring_auth_load(&a, key_file("short", "too short\n", 0600), 2, err,
				       sizeof err),
			-RING_EAUTH);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "at least 32"));
	CU_ASSERT_EQUAL(ring_auth_load(&a, key_file("empty", "\n\n", 0600), 2, err, sizeof err),
			-RING_EAUTH);
	CU_ASSERT_EQUAL(ring_auth_load(&a, "/nonexistent/key", 2, err, sizeof err), -RING_EAUTH);
	CU_ASSERT_PTR_NULL(a);
}

/* What corosync-keygen users will try: raw random bytes. Whether or not
 * the bytes happen to hold a newline (which used to split them into a
 * short line, refused, or leave one long line, accepted), they are
 * refused, and the message says how to make a key. */
static void test_binary_key_files_are_always_refused(void)
{
	unsigned char with_nl[40], without_nl[40];
	for (size_t i = 0; i < sizeof without_nl; i++)
		with_nl[i] = without_nl[i] = (unsigned char)(0x80 + 3 * i); /* no NUL, no newline */
	with_nl[10] = '\n';
	const unsigned char *keys[] = {with_nl, without_nl};
	for (size_t k = 0; k < 2; k++) {
		char path[128], err[256] = "";
		snprintf(path, sizeof path, "%s/binary%zu", dir, k);
		unlink(path);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_FATAL(write(fd, keys[k], 40) == 40);
		close(fd);
		struct ring_auth *a = NULL;
		CU_ASSERT_EQUAL(ring_auth_load(&a, path, 2, err, sizeof err), -RING_EAUTH);
		CU_ASSERT_PTR_NULL(a);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "ringctl keygen"));
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "not text"));
		ring_auth_free(a);
	}
	/* Text keys still pass: blanks, CRLF line ends, a base64 line. */
	struct ring_auth *a = load(key_file("text", "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy\r\n"
					       "a passphrase\twith blanks, long enough!\n", 0600));
	CU_ASSERT_PTR_NOT_NULL(a);
	ring_auth_free(a);
}

static void test_rotation_accepts_both_keys_and_signs_with_the_first(void)
{
	struct ring_auth *old = load(key_file("old", K1 "\n", 0600));
	struct ring_auth *both = load(key_file("both", K2 "\n" K1 "\n", 0600));
	struct ring_auth *new = load(key_file("new", K2 "\n", 0600));
	uint8_t buf[128];
	size_t n = sealed(old, buf, NOW);
	CU_ASSERT_EQUAL(ring_auth_open(both, buf, n, 1, NOW), 16);
	n = sealed(both, buf, NOW + 10);
	CU_ASSERT_EQUAL(ring_auth_open(new, buf, n, 1, NOW + 10), 16);
	CU_ASSERT_EQUAL(ring_auth_open(old, buf, n, 1, NOW + 10), -RING_EAUTH);
	/* Reload: the old-key member learns the new key without a restart. */
	char err[256];
	CU_ASSERT_EQUAL(ring_auth_reload(old, key_file("old", K2 "\n", 0600), err, sizeof err), 0);
	CU_ASSERT_EQUAL(ring_auth_open(old, buf, n, 1, NOW + 10), 16);
	ring_auth_free(old);
	ring_auth_free(both);
	ring_auth_free(new);
}

static void test_keygen_writes_a_private_key_once(void)
{
	char path[128], err[256];
	snprintf(path, sizeof path, "%s/gen.key", dir);
	CU_ASSERT_EQUAL(ring_auth_keygen(path, err, sizeof err), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(st.st_size, 65);
	CU_ASSERT(ring_auth_keygen(path, err, sizeof err) < 0);
	struct ring_auth *a = load(path);
	CU_ASSERT_PTR_NOT_NULL(a);
	ring_auth_free(a);
}

#define T_(f) {#f, f}
CU_TestInfo ring_test_auth_tests[] = {
	T_(test_sealed_datagram_opens_to_its_body),
	T_(test_an_open_key_file_says_whom_it_is_open_to),
	T_(test_key_fingerprints_compare_keys_without_showing_them),
	T_(test_every_flipped_bit_is_refused),
	T_(test_another_key_is_refused),
	T_(test_a_copy_is_a_replay),
	T_(test_old_and_future_timestamps_are_refused),
	T_(test_reordering_within_the_window_is_accepted),
	T_(test_seals_never_repeat_a_timestamp),
	T_(test_bad_key_files_are_refused),
	T_(test_binary_key_files_are_always_refused),
	T_(test_rotation_accepts_both_keys_and_signs_with_the_first),
	T_(test_keygen_writes_a_private_key_once),
	CU_TEST_INFO_NULL,
};
#undef T_
