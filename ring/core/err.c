/* Names for the error codes of err.h. */
#include "core/err.h"

static const char *const messages[] = {
	"ok",
#define RING_ERR_MSG_(name, msg) msg,
	RING_ERRORS(RING_ERR_MSG_)
#undef RING_ERR_MSG_
};

const char *ring_strerror(int err)
{
	if (err < 0 && err > -RING_ERR_COUNT_)
		err = -err;
	if (err < 0 || err >= RING_ERR_COUNT_)
		return "unknown error";
	return messages[err];
}
