/* Authenticated datagrams (libsodium): a trailer of a timestamp and a MAC
 * over every byte, keys from secret_file, and the replay window. The core
 * never sees a trailer: the daemon seals what it sends and opens what it
 * receives. docs/security.md has the threat model. */
#ifndef RING_AUTH_H
#define RING_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RING_AUTH_MAC 32                      /* crypto_auth_BYTES (HMAC-SHA-512-256) */
#define RING_AUTH_TRAILER (8 + RING_AUTH_MAC) /* sender's timestamp (us, UTC), MAC */
#define RING_AUTH_KEYS 4                      /* signing key + keys still accepted */
#define RING_AUTH_KEY_MIN 32                  /* bytes of key material per line */
#define RING_AUTH_FRESH_US (30 * 1000000ull)  /* clocks further apart are refused */
#define RING_AUTH_REORDER_US (2 * 1000000ull) /* older than newest seen by this much: replay */

struct ring_auth;

/* Reads the key file: one key per line, at least 32 bytes of text each
 * (printable ASCII; raw binary bytes are refused), the first signs and all
 * are accepted (rotation: docs/security.md). Refuses a file that group or
 * others may read. SLOTS is the number of senders to keep a
 * replay window for. Returns 0 or -RING_EAUTH / -RING_ENOMEM with ERR. */
int ring_auth_load(struct ring_auth **out, const char *path, size_t slots, char *err,
		   size_t errlen);

/* The same for the file NAME in the folder DIRFD (the auto key in
 * state_dir): opened without following a link, and refused unless it is
 * the effective uid's. PATH names it in messages. */
int ring_auth_load_at(struct ring_auth **out, int dirfd, const char *name, const char *path,
		      size_t slots, char *err, size_t errlen);

/* Reads PATH again (SIGHUP); on error the old keys stay. */
int ring_auth_reload(struct ring_auth *a, const char *path, char *err, size_t errlen);
int ring_auth_reload_at(struct ring_auth *a, int dirfd, const char *name, const char *path,
			char *err, size_t errlen);

void ring_auth_free(struct ring_auth *a);

/* The fingerprint of each key (first: the signing one) into OUT, at most
 * MAX: the first 8 bytes of BLAKE2b-256 over a label and the key, so that
 * two hosts can compare keys without showing them (`ringd --check`). Two
 * files whose lines give the same keys have the same fingerprints. Returns
 * the number of keys. */
size_t ring_auth_key_fingerprints(const struct ring_auth *a, uint64_t *out, size_t max);

/* Appends the trailer to the LEN bytes in BUF (of CAP). NOW_US: the wall
 * clock in microseconds. Returns the new length or -RING_ENOSPACE. */
int ring_auth_seal(struct ring_auth *a, uint8_t *buf, size_t len, size_t cap, uint64_t now_us);

/* Checks a datagram from sender SLOT: the MAC under any accepted key, a
 * timestamp within RING_AUTH_FRESH_US of NOW_US, and never seen before.
 * Returns the length without the trailer, or -RING_EAUTH (no or wrong MAC),
 * -RING_EREPLAY (stale, from the future, or a copy). */
int ring_auth_open(struct ring_auth *a, const uint8_t *buf, size_t len, size_t slot,
		   uint64_t now_us);

/* Writes a new random key file (64 hex characters) at PATH, mode 0600,
 * refusing to overwrite. Returns 0, or -RING_EIO with the reason in ERR. */
int ring_auth_keygen(const char *path, char *err, size_t errlen);

/* The auto key (docs/security.md, "The ring's own key"): makes the key
 * file NAME in the folder DIRFD, mode 0600, unless it exists. Safe when
 * several members start at once: each writes a key under a name of its
 * own and links it to NAME; exactly one link succeeds (*MADE is then
 * true), the others find the winner's whole key there. Returns 0, or
 * -RING_EIO with the reason (naming PATH) in ERR. */
int ring_auth_keygen_at(int dirfd, const char *name, const char *path, bool *made, char *err,
			size_t errlen);

#endif
