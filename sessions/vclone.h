/*
 * vclone.h - starting a child that shares the daemon's memory until it
 * execs (clone3 with CLONE_VM | CLONE_VFORK, on a stack of its own),
 * born in a cgroup when one is given.
 */
#ifndef SFS_VCLONE_H
#define SFS_VCLONE_H

#include <sys/types.h>

/* Runs fn(arg) in a new child, in the cgroup of the directory cgroup_fd
 * (none when it is negative), and returns in the parent once the child
 * has exec'd or exited: its pid, or -errno (-ENOSYS where this build
 * cannot, and the errors of clone3, the caller then forks). Every signal
 * is blocked in the child until fn unblocks them. fn runs in the
 * daemon's memory: it may only make system calls (no malloc, no stdio,
 * no write to a global or to what the daemon holds, no setuid family of
 * glibc, which would signal the daemon's threads), then execve or
 * _exit; its return value is the child's exit status. */
pid_t vclone_run(int cgroup_fd, int (*fn)(void *arg), void *arg);

#endif
