/*
 * creds.h - what a forked child does before it runs a session owner's
 * code: default signals, the owner's credentials and passwd variables.
 */
#ifndef SFS_CREDS_H
#define SFS_CREDS_H

#include <signal.h>
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
 * ENOMEM or without an entry). For the child only: never freed. */
char **creds_envp(char **envp, uid_t uid);

#endif
