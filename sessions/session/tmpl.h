/*
 * tmpl.h - the template shell: one bash with the driver loaded, of the
 * daemon's own user, from which the shells of that user's sessions are
 * forked instead of started (sessions/sfsdrv/tmpl.c is its side).
 */
#ifndef SFS_TMPL_H
#define SFS_TMPL_H

#include <stdbool.h>
#include <sys/types.h>
#include "sessions/core/contain.h"
#include "sessions/session/shell.h"

/* Starts w's shell (as shell_spawn would) by a fork of the template.
 * Only for the daemon's own uid and gid, with cgroups, and an
 * environment and cwd that are the template's. A fresh shell (a new
 * session's, nothing written to its env/ or cwd yet) starts the
 * template if there is none, or a new one after a change of root env/.
 * Returns the pid or -errno: the caller then starts bash. */
pid_t tmpl_spawn(const char *bash, const struct shell_who *w, char **envp,
		 const struct contain *cg, bool fresh, int *ctl, int *res);
/* Ends the template (shutdown); tmpl_fini waits for it if it is left. */
void tmpl_stop(void);
void tmpl_fini(void);

#endif
