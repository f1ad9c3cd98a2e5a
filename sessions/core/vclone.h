/*
 * vclone.h - starting a child that shares the daemon's memory until it
 * execs (clone3 with CLONE_VM | CLONE_VFORK, on a stack of its own, made
 * by a spawner thread so that the loop never waits for a child a user
 * can stop), born in a cgroup when one is given.
 */
#ifndef SFS_VCLONE_H
#define SFS_VCLONE_H

#include <sys/types.h>

/* Runs fn(arg) in a new child, in the cgroup of the directory cgroup_fd
 * (none when it is negative), and returns once the child has called
 * vclone_report: its pid. arg is then the job's: the child reads it
 * until it has exec'd or exited, after which the spawner thread calls
 * done(arg) (which may free it; nothing else of the caller's may be
 * read by the child). On an error the caller keeps arg: -EBUSY while
 * the spawner still waits for an earlier child (stopped by its owner),
 * -ENOSYS where this build cannot, clone3's errors; the caller then
 * forks. Every signal is blocked in the child until fn unblocks them.
 * fn runs in the daemon's memory: it may only make system calls (no
 * malloc, no stdio, no write to what the daemon holds, no setuid family
 * of glibc, which would signal the daemon's threads), then execve or
 * _exit; its return value is the child's exit status. */
pid_t vclone_run(int cgroup_fd, int (*fn)(void *arg), void *arg,
		 void (*done)(void *arg));
/* In fn, first, while the child is still root (no user can stop it
 * before): tells vclone_run the child's pid. */
void vclone_report(void);

#endif
