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
 * which the child posts first thing, still root: no user can stop it
 * until then. Both waits are on futexes in the one memory the three
 * share (a pipe for each job cost two more system calls and a descriptor
 * pair). While the spawner still waits for a stopped child, vclone_run
 * says EBUSY and the caller forks instead. The handover is within the
 * noise of the shells a user's session starts per second (`echo exit >
 * cmd` in a loop as a non-root owner on the 2-CPU VM: medians of five
 * 520/s with the clone3 in the loop, 514/s with the spawner); a fork
 * would cost far more with many sessions.
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
#include <linux/futex.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sessions/core/vclone.h"

#if defined(__x86_64__) && defined(SYS_clone3)

#define CHILD_STACK (64 * 1024)

static char child_stack[CHILD_STACK] __attribute__((aligned(64)));

/* The job in hand: written by the loop while the spawner is idle, read
 * by the spawner and its child while busy (the child sets reported). */
static struct {
	int cgroup_fd;
	int (*fn)(void *arg);
	void *arg;
	void (*done)(void *arg);
	bool reported; /* the child posted its pid */
} job;

/* Futex words, shared by the loop, the spawner and the child (one
 * memory): kick counts the jobs handed over, answer is 0 until the job's
 * pid or -errno is posted. */
static _Atomic int kick, answer;
static atomic_bool busy;
static bool started; /* the loop's own */

static void wake(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits until *word is no longer old. */
static void wait_change(_Atomic int *word, int old)
{
	while (atomic_load(word) == old)
		syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, old, NULL, NULL,
			0);
}

/* The job's answer, once: true when v is it. */
static bool post(int v)
{
	int none = 0;

	if (!atomic_compare_exchange_strong(&answer, &none, v))
		return false;
	wake(&answer);
	return true;
}

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
	if (post((int)syscall(SYS_getpid)))
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
	if (pid >= 0 && job.reported)
		job.done(job.arg);
	else /* no child, or one killed before it posted (only root can):
	      * the loop keeps the job's data */
		post(pid < 0 ? (int)pid : -ECHILD);
	atomic_store(&busy, false);
}

/* The spawner: every signal blocked for good (the children start so). */
static void *spawner(void *unused)
{
	int seen = 0;

	(void)unused;
	for (;;) {
		wait_change(&kick, seen);
		seen = atomic_load(&kick);
		run_job();
	}
	return NULL; /* never: it lives as long as the daemon */
}

/* Starts the spawner once: 0 or -errno. */
static int start_spawner(void)
{
	sigset_t all, old;
	pthread_t t;
	int rc;

	if (started)
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&t, NULL, spawner, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc == 0) {
		pthread_detach(t);
		started = true;
	}
	return rc;
}

pid_t vclone_run(int cgroup_fd, int (*fn)(void *arg), void *arg,
		 void (*done)(void *arg))
{
	int rc = start_spawner();

	if (rc < 0)
		return rc;
	if (atomic_load(&busy))
		return -EBUSY; /* a child of the last job is stopped */
	job.cgroup_fd = cgroup_fd;
	job.fn = fn;
	job.arg = arg;
	job.done = done;
	job.reported = false;
	atomic_store(&answer, 0);
	atomic_store(&busy, true);
	atomic_fetch_add(&kick, 1);
	wake(&kick);
	wait_change(&answer, 0);
	return (pid_t)atomic_load(&answer);
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
