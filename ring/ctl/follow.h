/* `ringctl follow`: the members' JSON logs merged into one column per
 * member, events in time order, token hops sampled, following the files
 * as they grow (the live view of make demo). */
#ifndef RING_FOLLOW_H
#define RING_FOLLOW_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ring_follow_opts {
	const uint16_t *members; /* the columns, in order; NULL: the ids the logs name */
	size_t nmembers;
	unsigned hops;    /* show every Nth token_pass; 0 none */
	bool all;         /* every event, not only the ones people watch */
	bool once;        /* print what the files hold and return */
	bool color;       /* ANSI colours (the caller decides: a tty) */
	unsigned poll_ms; /* how often a followed file is looked at again */
	volatile sig_atomic_t *stop; /* set by a signal: print what is complete, return */
};

/* Prints FILES merged to OUT, then (unless once) follows them until *STOP.
 * A file that does not exist yet is waited for when following. Returns 0,
 * or -RING_EIO / -RING_ENOMEM with ERR set. *SKIPPED (when not NULL)
 * counts the garbage and truncated lines passed over. */
int ring_follow(const char *const *files, size_t n, const struct ring_follow_opts *opts,
		FILE *out, size_t *skipped, char *err, size_t errlen);

#endif
