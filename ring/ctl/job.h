/* The job `ringctl run` runs: CMD as the leader of its own process group,
 * stopped as a whole (SIGTERM, SIGKILL after a grace), and a guard process
 * that kills the group if ringctl dies (SPEC.md, `run`). Linux only. */
#ifndef RING_JOB_H
#define RING_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ring_job {
	pid_t pgid;        /* CMD's pid, which is the group's id */
	pid_t guard;       /* the guard's pid; 0 once reaped */
	int life_fd;       /* our end of the guard's pipe; -1 once dismissed */
	int status;        /* CMD's wait status, once cmd_done */
	bool cmd_done;     /* CMD has exited and been reaped */
	bool subreaper;    /* the job's orphans come back to us (PR_SET_CHILD_SUBREAPER) */
	bool tty;          /* we gave the terminal's foreground to the group */
	uint32_t kill_after_ms;
	bool stopping;     /* ring_job_stop was called */
	bool killed;       /* SIGKILL was sent to the group */
	uint64_t kill_at;  /* when stopping and not killed: SIGKILL due (ms, caller's clock) */
	uint64_t killed_at;
};

/* Starts CMD (execvp) in a new process group with the NAME=VALUE strings of
 * ENV (NULL-terminated) added to its environment, and the guard. Neither
 * child keeps the NCLOSE descriptors of CLOSE_FDS (the control socket must
 * close when ringctl dies, whatever its children do). Signal dispositions
 * are the defaults in CMD. Returns 0, or -RING_EIO with ERR filled (nothing
 * is left running then). */
int ring_job_start(struct ring_job *j, char *const *cmd, char *const *env, const int *close_fds,
		   size_t nclose, uint32_t kill_after_ms, char *err, size_t errlen);

/* Reaps every child that has exited, noting CMD's status and the guard's
 * end; the job's orphans are our children too when subreaper is set. */
void ring_job_reap(struct ring_job *j);

/* Whether any process of the group is still alive (after ring_job_reap). */
bool ring_job_group_alive(struct ring_job *j);

/* Begins to stop the group at NOW (ms): SIG (SIGTERM, or the signal ringctl
 * received) and SIGCONT, so that a stopped member acts on it; SIGKILL at
 * once when kill_after_ms is 0, or when called again while stopping (a
 * second Ctrl-C). */
void ring_job_stop(struct ring_job *j, int sig, uint64_t now);

/* Sends SIGKILL to the group once kill_after_ms have passed since
 * ring_job_stop and something of it is still alive. */
void ring_job_tick(struct ring_job *j, uint64_t now);

/* Milliseconds until ring_job_tick has something to do, at most CAP. */
int ring_job_wait_ms(const struct ring_job *j, uint64_t now, int cap);

/* Once the group is gone (or given up on): dismisses the guard (so that it
 * does not kill a group id that may be reused), reaps it, and takes the
 * terminal back. */
void ring_job_end(struct ring_job *j);

#endif
