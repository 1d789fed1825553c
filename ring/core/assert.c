/* What a failed RING_ASSERT does: the process's hook, or abort (assert.h). */
#include "core/assert.h"

#include <stdio.h>
#include <stdlib.h>

static ring_assert_hook hook_fn;
static void *hook_arg;

void ring_assert_set_hook(ring_assert_hook hook, void *arg)
{
	hook_fn = hook;
	hook_arg = arg;
}

void ring_assert_failed(const char *file, int line, const char *expr)
{
	if (hook_fn) {
		hook_fn(hook_arg, file, line, expr);
		return;
	}
	/* The one print below the top level: there is no caller left to
	 * return an error to, and the core dump alone would not say why. */
	fprintf(stderr, "ring core: assertion failed at %s:%d: %s\n", file, line, expr);
	abort();
}
