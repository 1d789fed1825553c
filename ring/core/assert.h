/* Assertions inside the protocol core: the preconditions, postconditions
 * and invariants one member can check about itself (issue 27). They catch
 * an inconsistency in the step that makes it, before it grows into a broken
 * invariant the simulator's checkers see from outside. */
#ifndef RING_CORE_ASSERT_H
#define RING_CORE_ASSERT_H

/* Whoever owns the process decides what a failed assertion does: ringd
 * (no hook) aborts, since a core that contradicts itself must not go on
 * granting; the harness and the simulator fail the step with its seed. */
typedef void (*ring_assert_hook)(void *arg, const char *file, int line, const char *expr);

void ring_assert_set_hook(ring_assert_hook hook, void *arg);

/* Called by RING_ASSERT only. Returns only when a hook is set. */
void ring_assert_failed(const char *file, int line, const char *expr);

#define RING_ASSERT(cond) \
	(__builtin_expect(!!(cond), 1) ? (void)0 : ring_assert_failed(__FILE__, __LINE__, #cond))

#endif
