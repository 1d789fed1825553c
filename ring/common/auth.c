/* Datagram authentication with libsodium's crypto_auth (HMAC-SHA-512-256)
 * and a replay window per sender: a timestamp must be fresh, not much older
 * than the newest one seen from that sender, and not one seen already. */
#include "common/auth.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "core/bytes.h"
#include "core/err.h"

#define RECENT 64 /* timestamps remembered per sender for exact copies */

struct replay {
	uint64_t newest;
	uint64_t recent[RECENT];
	size_t next;
};

struct ring_auth {
	unsigned char key[RING_AUTH_KEYS][crypto_auth_KEYBYTES];
	size_t nkeys;
	uint64_t last_sealed;
	size_t slots;
	struct replay win[];
};

/* Whether the N bytes at BUF are text a key line may hold: printable
 * ASCII, blanks and line ends. Raw random bytes (corosync-keygen's authkey)
 * are refused whole, always: split at whatever newline bytes they happen to
 * hold they would work or fail by chance. Sets *AT to the first other byte. */
static bool key_text(const char *buf, size_t n, size_t *at)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if ((c < 0x20 || c > 0x7e) && c != '\t' && c != '\n' && c != '\r') {
			*at = i;
			return false;
		}
	}
	return true;
}

/* The largest key file read: RING_AUTH_KEYS lines of text fit well within. */
#define KEY_FILE_MAX 4096

/* Opens the key file and checks that it may hold a secret: a regular file
 * that only its owner reads (and, in a folder of ours, that owner is us).
 * The open descriptor, or -RING_EAUTH with ERR filled. */
static int open_key_file(int dirfd, const char *name, const char *path, char *err,
			 size_t errlen)
{
	/* In a folder of ours (the auto key in state_dir) the file is ours
	 * and never reached through a link; a secret_file the operator
	 * named may be a link they made. */
	bool in_ours = dirfd != AT_FDCWD;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | (in_ours ? O_NOFOLLOW : 0));
	if (fd < 0) {
		snprintf(err, errlen, "secret_file %s: %s", path,
			 in_ours && errno == ELOOP ? "a symbolic link; refusing to follow it" : strerror(errno));
		return -RING_EAUTH;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "secret_file %s: not a regular file", path);
		return -RING_EAUTH;
	}
	if (in_ours && st.st_uid != geteuid()) {
		close(fd);
		snprintf(err, errlen, "secret_file %s: owned by uid %u, not %u (ringd's user); refusing it",
			 path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -RING_EAUTH;
	}
	if (st.st_mode & 077) {
		close(fd);
		/* Say whom the mode lets in: a 0640 file is the group's, not
		 * everyone's, and the fix may be the group as much as the mode. */
		mode_t who = st.st_mode & 007 ? 007 : 070;
		snprintf(err, errlen, "secret_file %s is %s by %s (mode %04o): chmod 600 %s", path,
			 st.st_mode & who & 044 ? "readable" : "writable",
			 who == 007 ? "others" : "its group", (unsigned)(st.st_mode & 07777), path);
		return -RING_EAUTH;
	}
	return fd;
}

/* Reads all of FD (and closes it) into BUF of KEY_FILE_MAX bytes as one
 * string, refusing a file too large or not text. 0, or -RING_EAUTH. */
static int read_key_text(int fd, const char *path, char *buf, char *err, size_t errlen)
{
	ssize_t n = read(fd, buf, KEY_FILE_MAX);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "secret_file %s: %s", path, strerror(errno));
		return -RING_EAUTH;
	}
	if ((size_t)n == KEY_FILE_MAX) {
		snprintf(err, errlen, "secret_file %s: larger than %zu bytes; a key file holds at "
			 "most %d lines of text (ringctl keygen makes one)", path,
			 (size_t)KEY_FILE_MAX - 1, RING_AUTH_KEYS);
		return -RING_EAUTH;
	}
	size_t at;
	if (!key_text(buf, (size_t)n, &at)) {
		snprintf(err, errlen, "secret_file %s: byte %zu is not text: keys are lines of text, "
			 "not raw bytes; make one with `ringctl keygen FILE`, or write a binary key "
			 "as one line with `base64 -w0 KEY > FILE`", path, at + 1);
		return -RING_EAUTH;
	}
	buf[n] = 0;
	return 0;
}

/* One key in KEY for each non-empty line of TEXT (cut up in place). */
static int hash_key_lines(char *text, const char *path,
			  unsigned char key[][crypto_auth_KEYBYTES], size_t *nkeys, char *err,
			  size_t errlen)
{
	*nkeys = 0;
	size_t lineno = 0;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		size_t len = strcspn(line, "\r");
		if (len == 0)
			continue;
		if (len < RING_AUTH_KEY_MIN) {
			snprintf(err, errlen, "secret_file %s: key on line %zu has %zu bytes, "
				 "at least %d are needed (ringctl keygen makes one)",
				 path, lineno, len, RING_AUTH_KEY_MIN);
			return -RING_EAUTH;
		}
		if (*nkeys == RING_AUTH_KEYS) {
			snprintf(err, errlen, "secret_file %s: at most %d keys", path, RING_AUTH_KEYS);
			return -RING_EAUTH;
		}
		crypto_generichash(key[*nkeys], crypto_auth_KEYBYTES, (const unsigned char *)line,
				   len, NULL, 0);
		(*nkeys)++;
	}
	if (*nkeys == 0) {
		snprintf(err, errlen, "secret_file %s: no key in it (ringctl keygen makes one)", path);
		return -RING_EAUTH;
	}
	return 0;
}

/* Keys from PATH into KEY; the key is BLAKE2b of the line, so any text line
 * of at least 32 bytes (hex, base64, a passphrase) serves. */
static int read_keys(int dirfd, const char *name, const char *path,
		     unsigned char key[][crypto_auth_KEYBYTES], size_t *nkeys, char *err,
		     size_t errlen)
{
	int fd = open_key_file(dirfd, name, path, err, errlen);
	if (fd < 0)
		return fd;
	char buf[KEY_FILE_MAX];
	int rc = read_key_text(fd, path, buf, err, errlen);
	if (rc == 0)
		rc = hash_key_lines(buf, path, key, nkeys, err, errlen);
	/* The file's text is the secret itself: it leaves no copy behind. */
	sodium_memzero(buf, sizeof buf);
	return rc;
}

int ring_auth_load(struct ring_auth **out, const char *path, size_t slots, char *err,
		   size_t errlen)
{
	return ring_auth_load_at(out, AT_FDCWD, path, path, slots, err, errlen);
}

int ring_auth_load_at(struct ring_auth **out, int dirfd, const char *name, const char *path,
		      size_t slots, char *err, size_t errlen)
{
	*out = NULL;
	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium failed to initialise");
		return -RING_EAUTH;
	}
	struct ring_auth *a = calloc(1, sizeof *a + slots * sizeof a->win[0]);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -RING_ENOMEM;
	}
	a->slots = slots;
	int rc = read_keys(dirfd, name, path, a->key, &a->nkeys, err, errlen);
	if (rc < 0) {
		ring_auth_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

int ring_auth_reload(struct ring_auth *a, const char *path, char *err, size_t errlen)
{
	return ring_auth_reload_at(a, AT_FDCWD, path, path, err, errlen);
}

int ring_auth_reload_at(struct ring_auth *a, int dirfd, const char *name, const char *path,
			char *err, size_t errlen)
{
	unsigned char key[RING_AUTH_KEYS][crypto_auth_KEYBYTES];
	size_t n;
	int rc = read_keys(dirfd, name, path, key, &n, err, errlen);
	if (rc == 0) {
		memcpy(a->key, key, sizeof key);
		a->nkeys = n;
	}
	sodium_memzero(key, sizeof key);
	return rc;
}

void ring_auth_free(struct ring_auth *a)
{
	if (!a)
		return;
	sodium_memzero(a->key, sizeof a->key);
	free(a);
}

size_t ring_auth_key_fingerprints(const struct ring_auth *a, uint64_t *out, size_t max)
{
	/* A label first, so that the value is of no other use: not the MAC
	 * key, not a hash anything else in ring computes. */
	static const char label[] = "ring key fingerprint v1";
	for (size_t i = 0; i < a->nkeys && i < max; i++) {
		unsigned char h[crypto_generichash_BYTES];
		crypto_generichash_state st;
		crypto_generichash_init(&st, NULL, 0, sizeof h);
		crypto_generichash_update(&st, (const unsigned char *)label, sizeof label);
		crypto_generichash_update(&st, a->key[i], sizeof a->key[i]);
		crypto_generichash_final(&st, h, sizeof h);
		out[i] = ring_get_be64(h);
	}
	return a->nkeys;
}

int ring_auth_seal(struct ring_auth *a, uint8_t *buf, size_t len, size_t cap, uint64_t now_us)
{
	if (cap < len || cap - len < RING_AUTH_TRAILER)
		return -RING_ENOSPACE;
	/* Strictly increasing even if the clock steps back: receivers refuse
	 * a timestamp they have seen. */
	uint64_t ts = now_us > a->last_sealed ? now_us : a->last_sealed + 1;
	a->last_sealed = ts;
	ring_put_be64(buf + len, ts);
	crypto_auth(buf + len + 8, buf, len + 8, a->key[0]);
	return (int)(len + RING_AUTH_TRAILER);
}

int ring_auth_open(struct ring_auth *a, const uint8_t *buf, size_t len, size_t slot,
		   uint64_t now_us)
{
	if (len < RING_AUTH_TRAILER || slot >= a->slots)
		return -RING_EAUTH;
	size_t body = len - RING_AUTH_TRAILER;
	bool ok = false;
	for (size_t k = 0; k < a->nkeys && !ok; k++)
		ok = crypto_auth_verify(buf + body + 8, buf, body + 8, a->key[k]) == 0;
	if (!ok)
		return -RING_EAUTH;
	uint64_t ts = ring_get_be64(buf + body);
	uint64_t skew = ts > now_us ? ts - now_us : now_us - ts;
	if (skew > RING_AUTH_FRESH_US)
		return -RING_EREPLAY; /* an old capture, or clocks far apart */
	struct replay *w = &a->win[slot];
	if (ts + RING_AUTH_REORDER_US < w->newest)
		return -RING_EREPLAY;
	/* Within the window: never a copy of one remembered, and once the
	 * memory is full, never older than the oldest remembered either (a
	 * copy of one forgotten would pass otherwise). */
	uint64_t oldest = UINT64_MAX;
	for (size_t i = 0; i < RECENT; i++) {
		if (w->recent[i] == ts)
			return -RING_EREPLAY;
		if (w->recent[i] < oldest)
			oldest = w->recent[i];
	}
	if (oldest != 0 && ts < oldest)
		return -RING_EREPLAY;
	w->recent[w->next] = ts;
	w->next = (w->next + 1) % RECENT;
	if (ts > w->newest)
		w->newest = ts;
	return (int)body;
}

/* A new key line (64 hex characters and a newline) into LINE. */
static size_t new_key_line(char line[66])
{
	unsigned char raw[32];
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(line, 65, raw, sizeof raw);
	sodium_memzero(raw, sizeof raw);
	line[64] = '\n';
	return 65;
}

/* Writes the LEN bytes of LINE to FD and syncs them; 0 or errno. */
static int write_all(int fd, const char *line, size_t len)
{
	ssize_t w = write(fd, line, len);
	int e = w == (ssize_t)len ? 0 : (w < 0 ? errno : EIO);
	if (!e && fsync(fd) != 0)
		e = errno;
	return e;
}

int ring_auth_keygen(const char *path, char *err, size_t errlen)
{
	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium failed to initialise");
		return -RING_EAUTH;
	}
	char hex[66];
	size_t len = new_key_line(hex);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s%s", path, strerror(e),
			 e == EEXIST ? " (not overwriting a key)" : "");
		sodium_memzero(hex, sizeof hex);
		return -RING_EIO;
	}
	int e = write_all(fd, hex, len);
	close(fd);
	sodium_memzero(hex, sizeof hex);
	if (e) {
		unlink(path);
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -RING_EIO;
	}
	return 0;
}

int ring_auth_keygen_at(int dirfd, const char *name, const char *path, bool *made, char *err,
			size_t errlen)
{
	*made = false;
	if (sodium_init() < 0) {
		snprintf(err, errlen, "libsodium failed to initialise");
		return -RING_EAUTH;
	}
	/* Whole under a name of our own first, then linked to NAME, which
	 * fails when NAME exists: of members starting at once exactly one
	 * key wins, and nobody ever reads a key half written. */
	char tmp[64];
	snprintf(tmp, sizeof tmp, ".%s.%ld.tmp", name, (long)getpid());
	unlinkat(dirfd, tmp, 0); /* one of an earlier process with our pid */
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write a key beside %s: %s", path, strerror(errno));
		return -RING_EIO;
	}
	char hex[66];
	size_t len = new_key_line(hex);
	int e = write_all(fd, hex, len);
	sodium_memzero(hex, sizeof hex);
	close(fd);
	if (!e && linkat(dirfd, tmp, dirfd, name, 0) == 0)
		*made = true;
	else if (!e && errno != EEXIST)
		e = errno;
	unlinkat(dirfd, tmp, 0);
	if (!e && *made && fsync(dirfd) != 0)
		e = errno;
	if (e) {
		snprintf(err, errlen, "cannot make the ring's key %s: %s", path, strerror(e));
		return -RING_EIO;
	}
	return 0;
}
