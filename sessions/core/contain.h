/*
 * contain.h - keeping track of every process a session starts, so that
 * all of them can be signalled and none escapes a kill.
 *
 * With a writable cgroup v2 hierarchy each session gets its own cgroup
 * (cgroup.kill, cgroup.procs). Without one, the fallback is the shell's
 * session id plus its descendants found in /proc; it cannot catch a
 * process that both calls setsid and loses its parent before the kill.
 */
#ifndef SFS_CONTAIN_H
#define SFS_CONTAIN_H

#include <stdbool.h>
#include <sys/types.h>

struct contain {
	int dfd;	/* the cgroup directory kept open (a session's), or -1 */
	int parent_dfd; /* the directory it is in (not owned) */
	bool nested;	/* a child cgroup in parent_dfd, opened only for
			 * each use (so that a context or proc a user makes
			 * keeps no descriptor of the daemon's) */
	pid_t leader;	/* the live session leader (the shell), or 0 */
	pid_t sid;	/* the session id it made (kept after it dies) */
	char name[32];
};

/* Finds the cgroup2 mount and makes this instance's parent cgroup,
 * removing leftovers of instances that died. Returns true when cgroups
 * are in use. */
bool contain_setup(void);
/* Starts a small watchdog process that, should this daemon die without
 * cleaning up (SIGKILL), kills and removes this instance's cgroups. */
void contain_watchdog(void);
/* Removes this instance's parent cgroup (all children must be empty). */
void contain_teardown(void);
/* Prepares containment for one session. Returns 0 or -errno. */
int contain_new(struct contain *c, const char *tag);
/* Containment for a process of a session: a child cgroup of parent's (a
 * session's, from contain_new), so that killing the parent's subtree
 * reaches it but signalling the parent's own processes does not. Its
 * directory is opened only while it is used; where that open fails (the
 * daemon's descriptors at their limit), a child refuses to start
 * (contain_enter) and signals reach the leader's session instead. */
int contain_new_in(struct contain *c, const struct contain *parent,
		   const char *tag);
/* In the parent, right after fork: moves pid into c, so that a signal
 * sent as soon as the caller returns reaches it. */
int contain_add(const struct contain *c, pid_t pid);
/* fork(), with the child in c from its start (or, where clone3 cannot
 * do that, moved there before this returns in the parent). */
pid_t contain_fork(const struct contain *c);
/* In a forked child: moves the calling process into c (nothing to do in
 * a child of contain_fork). */
int contain_enter(const struct contain *c);
/* Sends sig to every process of c but `except`; returns how many. */
int contain_signal(const struct contain *c, int sig, pid_t except);
/* The processes of c at one moment (pid[0..n-1]; free pid). */
struct contain_pids {
	pid_t *pid;
	int n, cap;
};
/* Lists every process of c but `except` into *l. Returns how many. */
int contain_pids(const struct contain *c, pid_t except, struct contain_pids *l);
/* Lists the processes of c and of the cgroups made below it (without
 * cgroups: those of c). Returns how many. */
int contain_pids_tree(const struct contain *c, struct contain_pids *l);
/* SIGKILL to every process of c. */
void contain_kill(const struct contain *c);
/* True when no process of c is left. */
bool contain_empty(const struct contain *c);
void contain_free(struct contain *c);

/* An upgrade in place: this instance's cgroup and its watchdog, handed
 * to the next program (which then does not call contain_setup). */
struct state_w;
struct state_r;
void contain_save(struct state_w *w);
void contain_restore(const struct state_r *o);
/* A session's cgroup tag handed over as dfd (made anew when dfd is -1,
 * after a crash). */
void contain_adopt(struct contain *c, int dfd, const char *tag);
/* Kills what is left in the instance's cgroup name and removes it (what
 * the previous program of an upgrade left). */
void contain_remove_left(const char *name);

#endif
