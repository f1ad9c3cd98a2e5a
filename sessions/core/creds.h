/*
 * creds.h - what a forked child does before it runs a session owner's
 * code: default signals, the owner's credentials and passwd variables.
 */
#ifndef SFS_CREDS_H
#define SFS_CREDS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Every signal back to SIG_DFL and unblocked, but keep (if not 0),
 * which is left ignored. */
void creds_reset_signals(int keep);
/* Becomes uid:gid for good (groups from the group db, or none without a
 * passwd entry) and checks that uid 0 cannot be regained; nothing when
 * uid is already the process's. Returns 0 or -errno: the child exits. */
int creds_become(uid_t uid, gid_t gid);
/* envp with HOME, USER, LOGNAME and SHELL of uid's passwd entry in place
 * of the inherited ones; envp itself when uid is the process's (or on
 * ENOMEM or without an entry). For the child, which need not free it
 * (the array and the strings in it that are not envp's). */
char **creds_envp(char **envp, uid_t uid);

/* The same, worked out before the child starts, for a child that shares
 * the daemon's memory (vclone.h) and so may not look up the passwd and
 * group databases or allocate: creds_plan in the parent, creds_apply in
 * the child, creds_plan_free in the parent once the child has exec'd. */
struct creds_plan {
	bool change; /* uid:gid is not the process's */
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* the owner's supplementary groups */
	int ngroups;
	char **envp; /* creds_envp's, or the envp given */
	char **own;  /* the strings creds_plan allocated, NULL-ended */
};
/* Returns 0 or -errno; envp NULL: the credentials only. */
int creds_plan(struct creds_plan *p, uid_t uid, gid_t gid, char **envp);
/* In the child: creds_become by plan, with raw system calls only. */
int creds_apply(const struct creds_plan *p);
void creds_plan_free(struct creds_plan *p);

#endif
