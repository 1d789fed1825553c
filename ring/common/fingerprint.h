/* The ring layout's fingerprint: BLAKE2b (libsodium) of the bytes the core
 * says two members must agree on (ring_layout_digest), cut to 64 bits. */
#ifndef RING_FINGERPRINT_H
#define RING_FINGERPRINT_H

#include <stdint.h>

#include "core/layout.h"

/* The first 8 bytes, big-endian, of BLAKE2b-256 over ring_layout_digest()'s
 * bytes. A change of one port changes about every hex digit, so two
 * fingerprints compared by eye differ plainly. Ignores LAYOUT->fingerprint
 * and ->keyed. */
uint64_t ring_layout_fingerprint(const struct ring_layout *layout);

#endif
