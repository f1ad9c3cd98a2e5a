/*
 * shell.c - spawning a session's bash and speaking its protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "conf/conf.h"
#include "shell.h"
#include "strbuf.h"

/* The shell's main loop. Its stdin is the daemon's control pipe, its
 * stdout /dev/null and fd 201 the result pipe. A command runs with its
 * standard descriptors redirected and 201 closed, so nothing it starts
 * can reach the protocol (bash keeps the originals close-on-exec
 * meanwhile; the sourced command itself is the user's own shell). Each
 * report is written by one command with its own redirection: what the
 * shell prints between commands (a user's trap on DEBUG or CHLD, say)
 * goes to /dev/null and never into a frame. Every word that a user's
 * function or alias could shadow is called through `builtin` or is a
 * keyword.
 *
 * To abandon a command (kill, timeout) the daemon sends SHELL_ABORT_SIG
 * (RTMIN+3) before it signals the command's processes: the trap returns
 * from the sourced file, so the rest of the script does not run once its
 * foreground process is gone. A function only returns from itself; when
 * that leaves the shell busy with no process left, the daemon replaces
 * the shell (kill.c). The EXIT trap may run inside a command's
 * redirections, so it writes to files. */
static const char boot[] =
	"__sfs_d=$1\n"
	"shift\n"
	"shopt -s expand_aliases\n"
	"trap 'builtin return 2>/dev/null' RTMIN+3\n"
	"__sfs_pre() {\n"
	"  while IFS= builtin read -r -d '' __sfs_op; do\n"
	"    IFS= builtin read -r -d '' __sfs_n\n"
	"    case $__sfs_op in\n"
	"    S) IFS= builtin read -r -d '' __sfs_v\n"
	"       builtin export -- \"$__sfs_n=$__sfs_v\" ;;\n"
	"    U) builtin unset -v -- \"$__sfs_n\" ;;\n"
	"    C) builtin cd -- \"$__sfs_n\" ;;\n"
	"    esac\n"
	"  done <\"$1\"\n"
	"  builtin unset -v __sfs_op __sfs_n __sfs_v\n"
	"}\n"
	"trap 'builtin export -p >\"$__sfs_d/env\"; "
	"builtin printf \"X0\\0%s\\0\\0\" \"$PWD\" >\"$__sfs_d/state\"' EXIT\n"
	"while IFS=' ' builtin read -r __sfs_id __sfs_g __sfs_f __sfs_s; do\n"
	"  {\n"
	"    [[ $__sfs_f == p ]] && __sfs_pre \"$__sfs_d/r$__sfs_id.pre\"\n"
	"    builtin . \"$__sfs_d/r$__sfs_id.cmd\"\n"
	"  } 0</dev/null 1>\"$__sfs_d/f$__sfs_g.o\" "
	"2>\"$__sfs_d/f$__sfs_g.e\" 201>&-\n"
	"  builtin printf 'R%s\\0%s\\0\\0' $? \"$PWD\" >&201\n"
	"  builtin printf 'E0\\0%s\\0' \"$PWD\" >&201\n"
	"  builtin export -p >&201\n"
	"  builtin printf '\\0' >&201\n"
	"  __sfs_i=0\n"
	"  while ((__sfs_i++ < __sfs_s)); do builtin read -t 0 && break; done\n"
	"done\n";

ssize_t shell_parse_frame(const char *buf, size_t len, struct shell_frame *f)
{
	const char *z1, *z2, *z3;
	char *end;
	long v;

	if (len == 0)
		return 0;
	if (buf[0] != 'R' && buf[0] != 'X' && buf[0] != 'E')
		return -EINVAL;
	z1 = memchr(buf, '\0', len);
	if (!z1)
		return 0;
	z2 = memchr(z1 + 1, '\0', len - (size_t)(z1 + 1 - buf));
	if (!z2)
		return 0;
	z3 = memchr(z2 + 1, '\0', len - (size_t)(z2 + 1 - buf));
	if (!z3)
		return 0;
	v = strtol(buf + 1, &end, 10);
	if (end != z1 || end == buf + 1 || v < 0 || v > 255)
		return -EINVAL;
	f->kind = buf[0];
	f->status = (int)v;
	f->pwd = z1 + 1;
	f->env = z2 + 1;
	f->env_len = (size_t)(z3 - f->env);
	return z3 + 1 - buf;
}

/* In the child: everything that must hold before bash starts. */
static void child(const char *bash, const char *dir, const char *cwd,
		  char **envp, const struct contain *cg, int ctl_r, int res_w)
{
	char *argv[64] = { "bash", "--noprofile", "--norc" };
	size_t n = 3;
	sigset_t none;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (contain_enter(cg) < 0 || null < 0)
		_exit(126);
	/* Move all three above 201 first: one may sit on 0-2 or 201
	 * already, and dup2 onto the same number would keep close-on-exec. */
	ctl_r = fcntl(ctl_r, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
	res_w = fcntl(res_w, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
	null = fcntl(null, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
	if (ctl_r < 0 || res_w < 0 || null < 0 || dup2(ctl_r, 0) < 0 ||
	    dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(res_w, SHELL_RES_FD) < 0)
		_exit(126);
	/* Nothing else of the daemon's (or of whatever started it) may
	 * reach the shell and its commands. */
	close_range(3, SHELL_RES_FD - 1, 0);
	close_range(SHELL_RES_FD + 1, ~0U, 0);
	for (char **a = conf.shell_args; a && *a && n < 58; a++)
		argv[n++] = *a;
	argv[n++] = "-c";
	argv[n++] = (char *)boot;
	argv[n++] = "bash";
	argv[n++] = (char *)dir;
	argv[n] = NULL;
	if (chdir(cwd) < 0 && chdir("/") < 0)
		_exit(126);
	execve(bash, argv, envp);
	_exit(127);
}

pid_t shell_spawn(const char *bash, const char *dir, const char *cwd,
		  char **envp, const struct contain *cg, int *ctl, int *res)
{
	int cp[2], rp[2];
	pid_t pid;

	if (pipe2(cp, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(rp, O_CLOEXEC) < 0) {
		close(cp[0]);
		close(cp[1]);
		return -errno;
	}
	pid = fork();
	if (pid == 0)
		child(bash, dir, cwd, envp, cg, cp[0], rp[1]);
	close(cp[0]);
	close(rp[1]);
	if (pid < 0) {
		pid = -errno;
		close(cp[1]);
		close(rp[0]);
		return pid;
	}
	fcntl(rp[0], F_SETFL, O_NONBLOCK);
	*ctl = cp[1];
	*res = rp[0];
	return pid;
}

int shell_write_prelude(int dirfd, const char *name, const struct envmap *set,
			const struct envmap *unset, const char *cwd)
{
	struct strbuf b = { 0 };
	size_t len;
	char *text;
	int fd, rc = 0;

	for (size_t i = 0; i < unset->n; i++)
		sb_addf(&b, "U%c%s%c", 0, unset->v[i]->name, 0);
	for (size_t i = 0; i < set->n; i++) {
		sb_addf(&b, "S%c%s%c", 0, set->v[i]->name, 0);
		sb_add(&b, set->v[i]->value, set->v[i]->len);
		sb_add(&b, "", 1);
	}
	if (cwd)
		sb_addf(&b, "C%c%s%c", 0, cwd, 0);
	text = sb_take(&b, &len);
	if (!text)
		return -ENOMEM;
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	free(text);
	return rc;
}
