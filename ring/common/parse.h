/* Strict parsing of the numbers that come from outside: flags, control
 * lines, the epoch and fence files. */
#ifndef RING_PARSE_H
#define RING_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Strict decimal parsing: no sign, no junk, no overflow past MAX. */
bool ring_parse_u64(const char *s, uint64_t max, uint64_t *out);

#endif
