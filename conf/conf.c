/*
 * conf.c - built-in defaults of the settings.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "conf.h"
#include "sessions/core/log.h"

struct conf conf;

/* /workspace if it exists, else the mounting user's home, else "/". */
static char *default_workspace(void)
{
	struct stat st;
	const char *home = getenv("HOME");

	if (stat("/workspace", &st) == 0 && S_ISDIR(st.st_mode))
		return strdup("/workspace");
	if (home && stat(home, &st) == 0 && S_ISDIR(st.st_mode))
		return strdup(home);
	return strdup("/");
}

static bool is_noexec(const char *path)
{
	struct statvfs sv;

	return statvfs(path, &sv) == 0 && (sv.f_flag & ST_NOEXEC);
}

/* A tmpfs that allows exec: the shells of other users (allow_other) run
 * a copy of bash kept in the runtime directory, which a noexec one (say
 * podman's /dev/shm) makes fail at once; said in the log when skipped. */
static bool is_exec_tmpfs(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) != 0 || sf.f_type != TMPFS_MAGIC)
		return false;
	if (!is_noexec(path))
		return true;
	log_msg(LOG_NOTICE, "%s is mounted noexec: not the runtime directory",
		path);
	return false;
}

/* The first tmpfs that allows exec of $XDG_RUNTIME_DIR, /run (root only)
 * and /dev/shm, else $XDG_RUNTIME_DIR when set and not noexec, else /tmp.
 * Spool files are created for every run, and on a disk file system a
 * create costs ten times what it costs on tmpfs. */
static char *default_runtime_dir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	bool has_xdg = xdg && xdg[0] == '/';

	if (has_xdg && is_exec_tmpfs(xdg))
		return strdup(xdg);
	if (geteuid() == 0 && is_exec_tmpfs("/run"))
		return strdup("/run");
	if (is_exec_tmpfs("/dev/shm"))
		return strdup("/dev/shm");
	return strdup(has_xdg && !is_noexec(xdg) ? xdg : "/tmp");
}

/* What earlier defaults or a file set (a unit test loads many times). */
static void free_settings(void)
{
	for (char **a = conf.shell_args; a && *a; a++)
		free(*a);
	free(conf.shell_args);
	free(conf.shell);
	free(conf.workspace);
	free(conf.runtime_dir);
	for (size_t i = 0; i < conf.nenv; i++)
		free(conf.env[i]);
	free(conf.env);
	conf.env = NULL;
	conf.nenv = 0;
}

void conf_defaults(void)
{
	free_settings();
	conf.shell = strdup("/bin/bash");
	conf.shell_args = calloc(1, sizeof(char *));
	conf.workspace = default_workspace();
	conf.runtime_dir = default_runtime_dir();
	conf.default_timeout_ms = 0;
	conf.kill_grace_ms = 2000;
	conf.max_sessions = 1024;
	conf.max_sessions_per_user = 64;
	conf.max_procs_per_session = 256;
	conf.max_fds_per_user = 0;
	conf.fd_reserve = 256;
	conf.max_command_bytes = 16 << 20;
	conf.max_output_bytes = 4ULL << 30;
	conf.max_spool_bytes = 0;
	conf.json_output_bytes = 1 << 20;
	conf.history = 100;
	conf.shell_spin_us = 0;
	conf.cpu_poll_ms = 10;
	conf.tty_scrollback_lines = 1000;
	conf.tty_rc = false;
	conf.default_session = true;
	conf.keeper = true;
	conf.files_cache = true;
	conf.log_level = LOG_INFO;
}

int conf_add_env(const char *name, const char *value)
{
	char **nv = realloc(conf.env, (conf.nenv + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	conf.env = nv;
	if (asprintf(&conf.env[conf.nenv], "%s=%s", name, value) < 0)
		return -ENOMEM;
	conf.nenv++;
	return 0;
}

const char *conf_path(const char *arg)
{
	const char *env = getenv("SESSIONFS_CONFIG");

	if (arg)
		return arg;
	if (env && env[0])
		return env;
	return access("/etc/sessionfs.conf", F_OK) == 0 ?
		       "/etc/sessionfs.conf" :
		       NULL;
}
