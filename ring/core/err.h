/* Error codes for the whole project, from one table: functions return 0 or a
 * negative RING_E* code, and ring_strerror() names it.
 *
 * The one convention: a function returns 0 (or a count) on success and a
 * negative RING_E* code on failure, never -errno. A failed system call is
 * -RING_EIO; what failed and errno's text go into the caller's buffer (the
 * char *err, size_t errlen pair of setup functions, as redis's anetSetError).
 * Only main() prints such a message or exits. */
#ifndef RING_ERR_H
#define RING_ERR_H

#define RING_ERRORS(X)                                                   \
	X(ESHORT, "datagram truncated")                                  \
	X(ELONG, "datagram longer than its type")                        \
	X(EMAGIC, "not a ring datagram")                                 \
	X(EVERSION, "unknown protocol version")                          \
	X(ETYPE, "unknown message type")                                 \
	X(EFIELD, "field out of range")                                  \
	X(ENOSPACE, "buffer too small")                                  \
	X(ENOTMEMBER, "sender is not a member")                          \
	X(ESPOOF, "sender id does not match its address")                \
	X(EMISMATCH, "ring layout fingerprint differs")                  \
	X(ENOTFORME, "datagram addressed to another member")             \
	X(EFULL, "client queue full")                                    \
	X(EBUSY, "client already waiting or holding")                    \
	X(ELEAVING, "member is leaving")                                 \
	X(ECONFIG, "bad configuration")                                  \
	X(ENOMEM, "out of memory")                                       \
	X(ESTALE, "stale fence")                                         \
	X(EIO, "input/output error") /* any failed system call */ \
	X(EAUTH, "missing or wrong authentication") \
	X(EREPLAY, "replayed or stale datagram") \
	X(EJUMP, "epoch too far ahead of ours") \
	X(EEXHAUSTED, "epoch space exhausted") \
	X(EOVERFLOW, "too many actions in one step") \
	X(ECONFLICT, "another client holds the region or waits for it") \
	X(ENOTHOLDING, "not holding")

enum {
	RING_OK = 0,
#define RING_ERR_ENUM_(name, msg) RING_##name,
	RING_ERR_FIRST_ = 0, /* codes start at 1 */
	RING_ERRORS(RING_ERR_ENUM_)
#undef RING_ERR_ENUM_
	RING_ERR_COUNT_
};

/* Error codes are returned negated: -RING_ESHORT and so on. */
const char *ring_strerror(int err);

#endif
