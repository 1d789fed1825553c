/* The ring layout's fingerprint: the core decides which bytes describe the
 * ring (core/layout.c), this file hashes them with libsodium's BLAKE2b,
 * which the core may not link (the simulator links the core alone). */
#include "common/fingerprint.h"

#include <sodium.h>

#include "core/bytes.h"

static void feed_blake2b(void *ctx, const void *data, size_t len)
{
	crypto_generichash_update(ctx, data, len);
}

uint64_t ring_layout_fingerprint(const struct ring_layout *layout)
{
	/* sodium_init() picks the fastest BLAKE2b for this CPU; without it
	 * (it failed) the portable one gives the same value. */
	static int init = 1;
	if (init > 0)
		init = sodium_init();
	crypto_generichash_state st;
	unsigned char out[crypto_generichash_BYTES];
	crypto_generichash_init(&st, NULL, 0, sizeof out);
	ring_layout_digest(layout, feed_blake2b, &st);
	crypto_generichash_final(&st, out, sizeof out);
	return ring_get_be64(out);
}
