/*
 * conf.h - the daemon's settings: built-in defaults, overridden by the
 * configuration file (libconfig syntax) and validated before mounting.
 */
#ifndef SFS_CONF_H
#define SFS_CONF_H

#include <stdbool.h>
#include <stdint.h>

struct conf {
	char *shell;	   /* path of bash */
	char **shell_args; /* arguments given before -c, NULL-terminated */
	char *workspace;   /* default cwd of sessions */
	char *runtime_dir; /* parent of this instance's spool directory */
	uint64_t default_timeout_ms; /* 0: none */
	uint64_t kill_grace_ms;
	uint64_t max_sessions;
	uint64_t max_sessions_per_user; /* of a user other than the mounter */
	uint64_t max_procs_per_session;
	uint64_t max_fds_per_user; /* held for open files; 0: a quarter */
	uint64_t fd_reserve;	   /* descriptors only the daemon's work uses */
	uint64_t max_command_bytes;
	uint64_t max_output_bytes;  /* per stream of a run; 0: no limit */
	uint64_t max_spool_bytes;   /* all output kept; 0: half of the
				     * runtime_dir filesystem */
	uint64_t json_output_bytes; /* stdout/stderr kept in result.json */
	uint64_t history;	    /* numbered runs kept per session */
	uint64_t shell_spin_us;	    /* a shell polls this long after a run */
	uint64_t cpu_poll_ms; /* idle CPUs poll this long after a request */

	/* a session's terminal (tty/) */
	uint64_t tty_scrollback_lines; /* lines of scrollback it keeps */
	bool tty_rc;		       /* its bash reads its rc files */

	bool default_session;
	bool keeper; /* a keeper process survives the server's crash */
	bool files_cache; /* files/ caches, invalidated by fanotify */
	int log_level; /* syslog level */
	char **env;    /* "NAME=value" every session starts with */
	size_t nenv;
};

extern struct conf conf;

/* Fills conf with the built-in defaults. */
void conf_defaults(void);
/* Reads settings from path over the current ones. Returns 0, or -EINVAL
 * after printing "FILE:LINE: message" to stderr. */
int conf_load(const char *path);
/* Adds NAME=value to conf.env. Returns 0 or -ENOMEM. */
int conf_add_env(const char *name, const char *value);
/* The file to read: -c or -o config= (arg), else $SESSIONFS_CONFIG, else
 * /etc/sessionfs.conf if it exists, else NULL (built-in defaults). */
const char *conf_path(const char *arg);

#endif
