/*
 * vclone.c - the one child started without a copy of the daemon's
 * memory (see vclone.h). A fork copies the daemon's page tables (17 MiB
 * of memory with 1,000 sessions) and the daemon then faults on every
 * page it writes: a shell start spent most of the daemon's time there.
 *
 * With CLONE_VFORK the caller of clone3 waits, as for vfork(2), until
 * the child execs, so one stack serves every child. That caller is not
 * the daemon's loop: a child that has become a user's can be stopped by
 * her (kill(-1, SIGSTOP) between its change of uid and its exec), and
 * the loop, which alone answers the mount, would wait with it. So the
 * clone3 is made by a spawner thread of its own, which lives as long as
 * the daemon (PR_SET_PDEATHSIG fires when the thread that made a child
 * ends). The loop hands it one job and waits only for the child's pid,
 * which the child writes to the job's pipe first thing, still root: no
 * user can stop it until then. While the spawner still waits for a
 * stopped child, vclone_run says EBUSY and the caller forks instead.
 * The child runs on the spawner's stack and thread-local storage (its
 * errno), which nothing uses while the spawner is suspended in clone3;
 * CLONE_VM without CLONE_VFORK, on a stack of its own, would have the
 * child's system calls write the loop's errno while the loop runs. What
 * the child reads belongs to the job (vclone.h), not to the loop, until
 * clone3 returns: the spawner frees it then. The child starts in
 * assembly: a C caller of a raw clone3 would return into frames the
 * parent still uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "vclone.h"

#if defined(__x86_64__) && defined(SYS_clone3)

#define CHILD_STACK (64 * 1024)

static char child_stack[CHILD_STACK] __attribute__((aligned(64)));

/* The job in hand: written by the loop while the spawner is idle, read
 * by the spawner and its child while busy. */
static struct {
	int cgroup_fd;
	int (*fn)(void *arg);
	void *arg;
	void (*done)(void *arg);
	int report_w;  /* the child's pid, or clone3's error, goes there */
	bool reported; /* the child wrote its pid */
} job;

static atomic_bool busy;
static int kick_w = -1; /* a byte there: the job is ready */
static int kick_r = -1;

/* clone3(a, size); the child calls fn(arg) on its stack, then exit(2)s
 * with what fn returns. Returns what clone3 returns in the parent. */
static long clone3_call(struct clone_args *a, int (*fn)(void *), void *arg)
{
	register void *r12 __asm__("r12") = (void *)fn;
	register void *r13 __asm__("r13") = arg;
	long ret;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "mov %%r13, %%rdi\n\t"
			 "call *%%r12\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[exit], %%eax\n\t"
			 "syscall\n\t"
			 "hlt\n"
			 "1:"
			 : "=a"(ret)
			 : "a"((long)SYS_clone3), "D"(a), "S"(sizeof(*a)),
			   "r"(r12), "r"(r13), [exit] "i"(SYS_exit)
			 : "rcx", "r11", "memory");
	return ret;
}

void vclone_report(void)
{
	int pid = (int)syscall(SYS_getpid);

	if (write(job.report_w, &pid, sizeof(pid)) == sizeof(pid))
		job.reported = true;
}

/* One job: the clone3, then the job's data freed once the child no
 * longer reads it. */
static void run_job(void)
{
	struct clone_args a = { .flags = CLONE_VM | CLONE_VFORK,
				.exit_signal = SIGCHLD,
				.stack = (uint64_t)(uintptr_t)child_stack,
				.stack_size = CHILD_STACK };
	long pid;

	if (job.cgroup_fd >= 0) {
		a.flags |= CLONE_INTO_CGROUP;
		a.cgroup = (uint64_t)job.cgroup_fd;
	}
	pid = clone3_call(&a, job.fn, job.arg);
	if (pid < 0) {
		int err = (int)pid;

		/* a failed write leaves the loop an EOF: an error as well */
		(void)!write(job.report_w, &err, sizeof(err));
	} else if (job.reported) {
		job.done(job.arg);
	}
	/* not reported (killed before it wrote, which only root can): the
	 * loop reads EOF and keeps the job's data */
	close(job.report_w);
	atomic_store(&busy, false);
}

/* The spawner: every signal blocked for good (the children start so). */
static void *spawner(void *unused)
{
	char c;

	(void)unused;
	for (;;) {
		ssize_t n = read(kick_r, &c, 1);

		if (n == 1)
			run_job();
		else if (n == 0 || errno != EINTR)
			return NULL;
	}
}

/* Starts the spawner once: 0 or -errno. */
static int start_spawner(void)
{
	sigset_t all, old;
	pthread_t t;
	int p[2], rc;

	if (kick_w >= 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	kick_r = p[0];
	kick_w = p[1];
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&t, NULL, spawner, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_detach(t);
	else {
		close(kick_r);
		close(kick_w);
		kick_r = kick_w = -1;
	}
	return rc;
}

/* The first int of the job's pipe: the child's pid or -errno. */
static pid_t wait_report(int fd)
{
	int v;
	ssize_t n;

	do
		n = read(fd, &v, sizeof(v));
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == sizeof(v) ? (pid_t)v : -ECHILD;
}

pid_t vclone_run(int cgroup_fd, int (*fn)(void *arg), void *arg,
		 void (*done)(void *arg))
{
	int p[2], rc = start_spawner();

	if (rc < 0)
		return rc;
	if (atomic_load(&busy))
		return -EBUSY; /* a child of the last job is stopped */
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	job.cgroup_fd = cgroup_fd;
	job.fn = fn;
	job.arg = arg;
	job.done = done;
	job.report_w = p[1];
	job.reported = false;
	atomic_store(&busy, true);
	if (write(kick_w, "", 1) != 1) {
		rc = -errno;
		atomic_store(&busy, false);
		close(p[0]);
		close(p[1]);
		return rc;
	}
	return wait_report(p[0]);
}

#else

void vclone_report(void)
{
}

pid_t vclone_run(int cgroup_fd, int (*fn)(void *arg), void *arg,
		 void (*done)(void *arg))
{
	(void)cgroup_fd;
	(void)fn;
	(void)arg;
	(void)done;
	return -ENOSYS;
}

#endif
