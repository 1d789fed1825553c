/* Command-line helpers of the simulator drivers (test/driver.h). */
#include "driver.h"

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

double driver_wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
