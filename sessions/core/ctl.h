/*
 * ctl.h - the language of ctl files: one command per line.
 *   kill [SIGNAL]   signal the running run's processes (default TERM)
 *   SIGNAL          the same, as a bare name (TERM, HUP, ...)
 *   reset           a fresh shell with the same cwd and exported variables
 *   timeout MS      set the session's default timeout
 *   eof             close a process's stdin
 *   killall         (root ctl) end every process of every session
 */
#ifndef SFS_CTL_H
#define SFS_CTL_H

#include <stddef.h>
#include <stdint.h>

enum ctl_op { CTL_KILL, CTL_RESET, CTL_TIMEOUT, CTL_EOF, CTL_KILLALL };

struct ctl_cmd {
	enum ctl_op op;
	int sig;     /* CTL_KILL */
	uint64_t ms; /* CTL_TIMEOUT */
};

/* Parses one line (without its newline). Returns 0 or -EINVAL. */
int ctl_parse(const char *line, size_t len, struct ctl_cmd *c);
/* Signal number of a name ("TERM", "SIGTERM", "term", "15"), or -1. */
int ctl_signal(const char *name, size_t len);

#endif
