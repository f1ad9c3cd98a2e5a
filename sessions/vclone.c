/*
 * vclone.c - the one child started without a copy of the daemon's
 * memory (see vclone.h). A fork copies the daemon's page tables (17 MiB
 * of memory with 1,000 sessions) and the daemon then faults on every
 * page it writes: a shell start spent most of the daemon's time there.
 * With CLONE_VFORK the daemon waits, as for vfork(2), until the child
 * execs, so one stack serves every child. The child starts in assembly
 * on that stack: a C caller of a raw clone3 would return into frames the
 * parent still uses.
 */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "vclone.h"

#if defined(__x86_64__) && defined(SYS_clone3)

#define CHILD_STACK (64 * 1024)

static char child_stack[CHILD_STACK] __attribute__((aligned(64)));

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

pid_t vclone_run(int cgroup_fd, int (*fn)(void *arg), void *arg)
{
	struct clone_args a = { .flags = CLONE_VM | CLONE_VFORK,
				.exit_signal = SIGCHLD,
				.stack = (uint64_t)(uintptr_t)child_stack,
				.stack_size = CHILD_STACK };
	sigset_t all, old;
	long pid;

	if (cgroup_fd >= 0) {
		a.flags |= CLONE_INTO_CGROUP;
		a.cgroup = (uint64_t)cgroup_fd;
	}
	/* no handler of the daemon's may run in the child (its memory is
	 * the daemon's): fn resets them before it unblocks */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone3_call(&a, fn, arg);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return (pid_t)pid; /* or -errno, as the system call returns it */
}

#else

pid_t vclone_run(int cgroup_fd, int (*fn)(void *arg), void *arg)
{
	(void)cgroup_fd;
	(void)fn;
	(void)arg;
	return -ENOSYS;
}

#endif
