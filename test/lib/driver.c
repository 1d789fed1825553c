/* Command-line helpers of the simulator drivers (lib/driver.h). */
#include "lib/driver.h"

#include <stdarg.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool driver_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

int driver_lookup(const char *s, const char *const names[], int n)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(s, names[k]))
			return k;
	return -1;
}

bool driver_seed_arg(struct driver_seeds *s, const char *a, const char *v, uint64_t min_first)
{
	if (!strcmp(a, "--seeds") && driver_parse_u64(v, &s->seeds) && s->seeds > 0) {
		s->have_seeds = true;
		return true;
	}
	if ((!strcmp(a, "--first") || !strcmp(a, "--seed")) && driver_parse_u64(v, &s->first) &&
	    s->first >= min_first) {
		s->have_seed |= !strcmp(a, "--seed");
		return true;
	}
	return false;
}

uint64_t driver_seed_count(const struct driver_seeds *s, uint64_t dflt)
{
	return s->have_seed ? 1 : s->have_seeds ? s->seeds : dflt;
}

double driver_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int driver_usage_error(void (*usage)(FILE *f), const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	usage(stderr);
	return 2;
}
