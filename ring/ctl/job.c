/* The job `ringctl run` runs: CMD as the leader of its own process group,
 * stopped as a whole, and a guard that kills the group if ringctl dies.
 *
 * Why a guard: PR_SET_PDEATHSIG reaches only the direct child (CMD), so a
 * grandchild in CMD's group would survive a `kill -9` of ringctl while the
 * member, seeing the control connection close, has already released the
 * grant. The guard is a second child of ringctl, outside the group; it
 * blocks reading a pipe whose only writer is ringctl. When ringctl dies by
 * any means the pipe reads EOF (a state, not an event: no race with an
 * early death) and the guard kills the whole group. When ringctl ends
 * normally it writes one byte first, and the guard just exits. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "ctl/job.h"

static void close_all(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void set_handlers(void (*h)(int), const int *sigs, size_t n)
{
	struct sigaction sa = {.sa_handler = h};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < n; i++)
		sigaction(sigs[i], &sa, NULL);
}

/* Reads one byte from FD, riding out signals. Returns what read did. */
static ssize_t read_byte(int fd)
{
	char b;
	ssize_t n;
	while ((n = read(fd, &b, 1)) < 0 && errno == EINTR)
		;
	return n;
}

/* In the child that becomes CMD. */
static void exec_cmd(char *const *cmd, char *const *env, int go_rd, pid_t parent,
		     const int *close_fds, size_t nclose)
{
	/* Our own group, made here and in the parent: whichever runs first,
	 * it exists before either relies on it. */
	setpgid(0, 0);
	/* CMD dies with ringctl. PDEATHSIG fires when the thread that forked
	 * us ends (ringctl has one thread); a parent that died before the
	 * prctl is caught by getppid. The rest of the group is the guard's. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	close_all(close_fds, nclose);
	const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGTTOU, SIGPIPE};
	set_handlers(SIG_DFL, sigs, sizeof sigs / sizeof sigs[0]);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Wait for ringctl's word: by then the guard knows our group and the
	 * terminal is ours. EOF means it gave up, or died. */
	if (read_byte(go_rd) != 1)
		_exit(127);
	close(go_rd);
	for (size_t i = 0; env[i]; i++) {
		char kv[256];
		snprintf(kv, sizeof kv, "%s", env[i]);
		char *eq = strchr(kv, '=');
		if (eq) {
			*eq = 0;
			setenv(kv, eq + 1, 1);
		}
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "ringctl: cannot run %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

/* In the guard child: waits for ringctl's end; see the top of the file. */
static void guard(pid_t pgid, int life_rd)
{
	/* Signals meant for ringctl (Ctrl-C reaches its whole group, so does
	 * a supervisor's SIGTERM) must not take the guard away while ringctl
	 * is still stopping the job: the guard ends when ringctl does. */
	const int ign[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	set_handlers(SIG_IGN, ign, sizeof ign / sizeof ign[0]);
	const int dfl[] = {SIGCHLD};
	set_handlers(SIG_DFL, dfl, 1);
	/* Not a reader's writer: $(ringctl run ...) must not wait for us. */
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	prctl(PR_SET_NAME, "ringctl-guard");
	if (read_byte(life_rd) == 1)
		_exit(0);
	/* ringctl is gone, and its control connection with it: the member has
	 * released the grant and another host may hold it already. No grace
	 * period then, since every moment the job runs on is a second writer.
	 * (The group's id is not someone else's: while ringctl lives it keeps
	 * every process of the group, orphans included, as its child until the
	 * group is empty, and only then dismisses us; it died just now, and an
	 * id is reused only after the pids have wrapped around.) */
	kill(-pgid, SIGKILL);
	fprintf(stderr, "ringctl: run ended before its job; killed process group %ld\n",
		(long)pgid);
	_exit(0);
}

static int fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s: %s", what, strerror(errno));
	return -RING_EIO;
}

/* Gives the terminal's foreground to the group when it is ours to give,
 * so that an interactive CMD can read it (a background group reading its
 * terminal is stopped by SIGTTIN) and Ctrl-C reaches the job directly. */
static void give_terminal(struct ring_job *j)
{
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp())
		j->tty = tcsetpgrp(STDIN_FILENO, j->pgid) == 0;
}

int ring_job_start(struct ring_job *j, char *const *cmd, char *const *env, const int *close_fds,
		   size_t nclose, uint32_t kill_after_ms, char *err, size_t errlen)
{
	*j = (struct ring_job){.life_fd = -1, .kill_after_ms = kill_after_ms};
	/* Orphans of the job come back to us, so we reap them and know when
	 * its group is empty; that also keeps its id from being reused while
	 * we may still signal it. */
	j->subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
	int go[2], life[2];
	if (pipe(go) != 0)
		return fail(err, errlen, "pipe");
	fcntl(go[1], F_SETFD, FD_CLOEXEC);
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0) {
		close(go[0]);
		close(go[1]);
		return fail(err, errlen, "fork");
	}
	if (child == 0) {
		close(go[1]);
		exec_cmd(cmd, env, go[0], parent, close_fds, nclose);
	}
	setpgid(child, child); /* EACCES/ESRCH: the child did it, or died */
	close(go[0]);
	j->pgid = child;
	/* The guard's pipe is made after CMD's fork, so that no process of the
	 * job can hold its write end open. */
	bool piped = pipe(life) == 0;
	if (piped && (j->guard = fork()) == 0) {
		close(go[1]);
		close(life[1]);
		close_all(close_fds, nclose);
		guard(child, life[0]);
	}
	if (j->guard <= 0) {
		int saved = errno;
		if (piped) {
			close(life[0]);
			close(life[1]);
		}
		kill(child, SIGKILL);
		close(go[1]); /* the child reads EOF and exits */
		waitpid(child, NULL, 0);
		errno = saved;
		return fail(err, errlen, "cannot start the job's guard");
	}
	close(life[0]);
	fcntl(life[1], F_SETFD, FD_CLOEXEC);
	j->life_fd = life[1];
	give_terminal(j);
	if (write(go[1], "g", 1) != 1) {
		close(go[1]);
		return fail(err, errlen, "cannot start the job");
	}
	close(go[1]);
	return 0;
}

static void note_exit(struct ring_job *j, pid_t w, int st)
{
	if (w == j->pgid && !j->cmd_done) {
		j->status = st;
		j->cmd_done = true;
	} else if (w == j->guard) {
		j->guard = 0;
	}
}

void ring_job_reap(struct ring_job *j)
{
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG);
		if (w > 0)
			note_exit(j, w, st);
		else if (w < 0 && errno == EINTR)
			continue;
		else
			return;
	}
}

bool ring_job_group_alive(struct ring_job *j)
{
	if (!j->subreaper)
		return kill(-j->pgid, 0) == 0 || errno == EPERM;
	/* Every process of the group is CMD or a descendant of it, hence
	 * our child once orphaned: no child of ours left in it, none left. */
	for (;;) {
		int st;
		pid_t w = waitpid(-j->pgid, &st, WNOHANG);
		if (w == 0)
			return true;
		if (w > 0)
			note_exit(j, w, st);
		else if (errno != EINTR)
			return false; /* ECHILD */
	}
}

static void kill_group(struct ring_job *j, uint64_t now)
{
	kill(-j->pgid, SIGKILL);
	j->killed = true;
	j->killed_at = now;
}

void ring_job_stop(struct ring_job *j, int sig, uint64_t now)
{
	if (j->killed)
		return;
	if (j->stopping || j->kill_after_ms == 0) {
		j->stopping = true;
		kill_group(j, now);
		return;
	}
	kill(-j->pgid, sig);
	kill(-j->pgid, SIGCONT);
	j->stopping = true;
	j->kill_at = now + j->kill_after_ms;
}

void ring_job_tick(struct ring_job *j, uint64_t now)
{
	if (j->stopping && !j->killed && now >= j->kill_at)
		kill_group(j, now);
}

int ring_job_wait_ms(const struct ring_job *j, uint64_t now, int cap)
{
	if (!j->stopping || j->killed)
		return cap;
	if (now >= j->kill_at)
		return 0;
	uint64_t left = j->kill_at - now;
	return left < (uint64_t)cap ? (int)left : cap;
}

void ring_job_end(struct ring_job *j)
{
	if (j->tty) {
		/* From a background group tcsetpgrp raises SIGTTOU unless blocked. */
		sigset_t ttou, old;
		sigemptyset(&ttou);
		sigaddset(&ttou, SIGTTOU);
		sigprocmask(SIG_BLOCK, &ttou, &old);
		tcsetpgrp(STDIN_FILENO, getpgrp());
		sigprocmask(SIG_SETMASK, &old, NULL);
		j->tty = false;
	}
	if (j->life_fd >= 0) {
		(void)!write(j->life_fd, "d", 1);
		close(j->life_fd);
		j->life_fd = -1;
	}
	/* The guard exits on that byte; wait for it, bounded. */
	for (int i = 0; j->guard > 0 && i < 200; i++) {
		int st;
		pid_t w = waitpid(j->guard, &st, WNOHANG);
		if (w == j->guard || (w < 0 && errno != EINTR))
			j->guard = 0;
		else
			nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
	}
	if (j->guard > 0) {
		kill(j->guard, SIGKILL);
		waitpid(j->guard, NULL, 0);
		j->guard = 0;
	}
}
