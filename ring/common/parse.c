/* Strict parsing of numbers from outside (parse.h). */
#include "common/parse.h"

bool ring_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	if (!s || !*s)
		return false;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}
