/* The version string, from the Makefile. Only this file is compiled with
 * -DRING_VERSION, so a new revision recompiles it alone and relinks. */
#include "common/version.h"

#ifndef RING_VERSION
#error "RING_VERSION is set by the Makefile (VERSION, and the git revision)"
#endif

const char *ring_version(void)
{
	return RING_VERSION;
}
