/*
 * shell.c - spawning a session's bash and speaking its protocol.
 *
 * The protocol loop is not bash code: the shell loads the driver
 * sfsdrv.so (sessions/sfsdrv/sfsdrv.c) and the loop runs in C, where the
 * user's functions, aliases, variables, options and traps cannot reach
 * it. The module is found next to the daemon's executable (a build tree),
 * else in SFS_DRIVER_DIR (meson install); without it no shell starts
 * (shprog.c).
 * The daemon copies it once into a sealed memfd, which each shell gets on
 * SHELL_DRV_FD and loads as /proc/self/fd/SHELL_DRV_FD: a shell of
 * another user needs no access to the module's path (a build tree in a
 * 0700 home), and a module replaced on disk (an upgrade) changes nothing
 * for the running daemon. The driver closes that descriptor as it starts.
 *
 * Abandoning a run (kill, timeout): the daemon sends SHELL_ABORT_SIG to
 * the shell before it signals the other processes. The child here starts
 * bash with that signal ignored, so bash takes it as ignored on entry and
 * no `trap` of a command can catch, ignore or reset it; the driver handles
 * it: it sets noexec and breaks every loop, so bash unwinds functions,
 * eval and sourced files by itself without running one more command, and
 * the shell keeps its state (t33 ends loops in functions and eval that
 * way, the shell's pid and plain variables unchanged). Rather that than
 * a trap that returns from the sourced file (it left only the innermost
 * function, and a command could replace it), a longjmp to the top from
 * the handler (not safe in the middle of bash's work) or a new shell for
 * every kill (functions and plain variables lost). The daemon's
 * fallback stays for a shell that does not come back once its processes
 * are gone, a builtin blocked in a read say: it replaces the shell.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/core/creds.h"
#include "sessions/core/execerr.h"
#include "sessions/core/log.h"
#include "sessions/core/reap.h"
#include "sessions/session/shell.h"
#include "sessions/core/strbuf.h"
#include "sessions/core/vclone.h"

/* The shell only loads the driver (sessions/sfsdrv/sfsdrv.c, a bash
 * loadable builtin) and hands it the session's directory: the protocol
 * loop runs in C, where no function, alias, variable, option or trap of
 * the user's reaches it. $1 is SHELL_DRV_PATH, $2 the directory; the
 * driver clears both. A shell that cannot load it exits 126 before any
 * run. */
static const char boot[] =
	"builtin enable -f \"$1\" sfs_driver || builtin exit 126\n"
	"sfs_driver \"$2\"\n";

/* The frame head's end, from p to z: nothing, or " " and the run's key
 * in SHELL_KEY_LEN lower-case hex digits. */
static int parse_key(const char *p, const char *z, struct shell_frame *f)
{
	f->keyed = false;
	f->key = 0;
	if (p == z)
		return 0;
	if (*p++ != ' ' || z - p != SHELL_KEY_LEN)
		return -EINVAL;
	for (; p < z; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' :
			*p >= 'a' && *p <= 'f' ? *p - 'a' + 10 :
						 -1;

		if (d < 0)
			return -EINVAL;
		f->key = f->key << 4 | (uint64_t)d;
	}
	f->keyed = true;
	return 0;
}

ssize_t shell_parse_frame(const char *buf, size_t len, struct shell_frame *f)
{
	const char *z1, *z2, *z3;
	char *end;
	long v;

	if (len == 0)
		return 0;
	if (!memchr("RFXE", buf[0], 4))
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
	if (end == buf + 1 || !isdigit((unsigned char)buf[1]) || v < 0 ||
	    v > 255 || parse_key(end, z1, f) < 0)
		return -EINVAL;
	f->kind = buf[0];
	f->status = (int)v;
	f->pwd = z1 + 1;
	f->env = z2 + 1;
	f->env_len = (size_t)(z3 - f->env);
	return z3 + 1 - buf;
}

/* What the child needs, all of it made before it starts and copied into
 * one block: a child of vclone_run shares the daemon's memory, may only
 * make system calls, and may read this until it execs, after the daemon
 * has gone on (vclone.h). */
struct spawn {
	const char *bash;
	char **argv;
	struct creds_plan cr; /* its groups and envp point into vec */
	const struct contain *cg;
	bool enter;		 /* forked: moves itself into cg */
	char boot_err[PATH_MAX]; /* w->dir/SHELL_BOOT_ERR */
	const char *cwd;
	bool fallback;	       /* "/" when cwd cannot be entered */
	int ctl_r, res_w, drv; /* drv: the module's memfd */
	char *vec[];	       /* argv, envp, the groups, then the strings */
};

static size_t count(char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

static size_t text_size(char *const *v)
{
	size_t n = 0;

	for (; *v; v++)
		n += strlen(*v) + 1;
	return n;
}

/* Copies s to *at and moves *at past it. */
static char *put(char **at, const char *s)
{
	char *p = *at;
	size_t n = strlen(s) + 1;

	memcpy(p, s, n);
	*at += n;
	return p;
}

/* The block: argv's and envp's pointers at vec, their strings and the
 * rest after the groups. NULL without memory. */
static struct spawn *pack(const char *bash, char **argv,
			  const struct creds_plan *cr, const char *cwd)
{
	size_t na = count(argv), ne = count(cr->envp);
	size_t ng = cr->ngroups > 0 ? (size_t)cr->ngroups : 0;
	size_t ptrs = (na + 1 + ne + 1) * sizeof(char *);
	struct spawn *sp = malloc(sizeof(*sp) + ptrs + ng * sizeof(gid_t) +
				  text_size(argv) + text_size(cr->envp) +
				  strlen(bash) + strlen(cwd) + 2);
	char *at;

	if (!sp)
		return NULL;
	memset(sp, 0, sizeof(*sp));
	sp->cr = *cr;
	sp->cr.own = NULL;
	sp->argv = sp->vec;
	sp->cr.envp = sp->vec + na + 1;
	sp->cr.groups = (gid_t *)(sp->vec + na + 1 + ne + 1);
	if (ng)
		memcpy(sp->cr.groups, cr->groups, ng * sizeof(gid_t));
	at = (char *)(sp->cr.groups + ng);
	for (size_t i = 0; i < na; i++)
		sp->argv[i] = put(&at, argv[i]);
	sp->argv[na] = NULL;
	for (size_t i = 0; i < ne; i++)
		sp->cr.envp[i] = put(&at, cr->envp[i]);
	sp->cr.envp[ne] = NULL;
	sp->bash = put(&at, bash);
	sp->cwd = put(&at, cwd);
	sp->fallback = shell_cwd_fallback(cwd);
	return sp;
}

/* The shell's stderr until its driver runs: the file SHELL_BOOT_ERR,
 * which says why a shell that could not load or start its driver ended
 * (else /dev/null). Returns a descriptor above SHELL_RES_FD. */
static int boot_stderr(const struct spawn *sp, int null)
{
	int fd =
		open(sp->boot_err, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return null;
	return fcntl(fd, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
}

/* In the child, as the owner: the cwd, or a line in SHELL_BOOT_ERR
 * (its stderr) and the exit. No fallback to "/" but for the workspace,
 * which the owner did not choose (shell_cwd_fallback): a command meant
 * for a directory that is gone must not run elsewhere (strerrordesc_np:
 * no locale, no allocation). */
static int enter_cwd(const char *cwd, bool fallback)
{
	const char *why;

	if (chdir(cwd) == 0 || (fallback && chdir("/") == 0))
		return 0;
	why = strerrordesc_np(errno);
	if (!why)
		why = "error";
	(void)!write(2, "cwd ", 4);
	(void)!write(2, cwd, strlen(cwd));
	(void)!write(2, ": ", 2);
	(void)!write(2, why, strlen(why));
	(void)!write(2, "\n", 1);
	return -1;
}

/* In the child: everything that must hold before bash starts. System
 * calls only (see struct spawn); returns only to exit. */
static int child(void *arg)
{
	const struct spawn *sp = arg;
	int null, berr, ctl_r, res_w, drv;

	if (!sp->enter)
		vclone_report(); /* still root: nobody can stop it before */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* ignored on entry, bash lets no trap change it: the driver's own */
	creds_reset_signals(SHELL_ABORT_SIG);
	setsid();
	if ((sp->enter && contain_enter(sp->cg) < 0) || null < 0)
		return 126;
	/* Move them all above 201 first: one may sit on 0-2, 200 or 201
	 * already, and dup2 onto the same number would keep close-on-exec. */
	ctl_r = fcntl(sp->ctl_r, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
	res_w = fcntl(sp->res_w, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
	drv = fcntl(sp->drv, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
	null = fcntl(null, F_DUPFD_CLOEXEC, SHELL_RES_FD + 1);
	berr = boot_stderr(sp, null);
	if (ctl_r < 0 || res_w < 0 || drv < 0 || null < 0 ||
	    dup2(ctl_r, 0) < 0 || dup2(null, 1) < 0 || dup2(berr, 2) < 0 ||
	    dup2(drv, SHELL_DRV_FD) < 0 || dup2(res_w, SHELL_RES_FD) < 0)
		return 126;
	/* Nothing else of the daemon's (/dev/fuse above all, or of whatever
	 * started it) may reach the shell and its commands; the driver
	 * closes SHELL_DRV_FD once it is loaded. */
	close_range(3, SHELL_DRV_FD - 1, 0);
	close_range(SHELL_RES_FD + 1, ~0U, 0);
	/* No PR_SET_PDEATHSIG: it fires when the thread that made the
	 * child ends, and this child is the spawner thread's, which an
	 * upgrade's execve ends. A shell ends with its daemon anyway: its
	 * driver at the EOF of its control pipe, the rest of its session
	 * by the cgroup watchdog's kill. */
	if (creds_apply(&sp->cr) < 0)
		return 126;
	if (enter_cwd(sp->cwd, sp->fallback) < 0)
		return 126;
	execve(sp->bash, sp->argv, sp->cr.envp);
	return 127;
}

bool shell_cwd_fallback(const char *cwd)
{
	return conf.workspace && strcmp(cwd, conf.workspace) == 0;
}

/* bash's arguments: its options, then the boot script and its $1, $2. */
static void make_argv(char **argv, const char *dir)
{
	size_t n = 0;

	argv[n++] = "bash";
	argv[n++] = "--noprofile";
	argv[n++] = "--norc";
	for (char **a = conf.shell_args; a && *a && n < 58; a++)
		argv[n++] = *a;
	argv[n++] = "-c";
	argv[n++] = (char *)boot;
	argv[n++] = "bash";
	argv[n++] = SHELL_DRV_PATH;
	argv[n++] = (char *)dir;
	argv[n] = NULL;
}

/* Starts the child: without a copy of the daemon's memory where it can
 * (vclone.h; then sp is the spawner's to free), else forked (an older
 * kernel, another architecture, the spawner still held by a stopped
 * child). Returns its pid or -errno. */
static pid_t start_child(struct spawn *sp)
{
	pid_t pid = vclone_run(sp->cg->dfd, child, sp, free);

	if (pid >= 0)
		return pid;
	sp->enter = true;
	pid = contain_fork(sp->cg);
	if (pid == 0)
		_exit(child(sp));
	free(sp);
	return pid < 0 ? -errno : pid;
}

/* The files the driver leaves at exit, and the shell's stderr until the
 * driver runs, made here as the owner's: the directory is root's, so that
 * the daemon never works in a directory a user can change. */
static int make_exit_files(const struct shell_who *w)
{
	static const char *const names[] = { "env", "state", SHELL_BOOT_ERR };
	char path[PATH_MAX];
	int fd, rc = 0;

	for (size_t i = 0; i < 3 && rc == 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", w->dir, names[i]);
		/* made anew: a command run as root may have left anything
		 * there (a link, a fifo) */
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		fd = open(path,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd < 0 || fchown(fd, w->uid, w->gid) < 0)
			rc = -errno;
		if (fd >= 0)
			close(fd);
	}
	return rc;
}

/* Starts bash with the driver and its argument arg (the session's
 * directory, or DRV's template argument) on ctl_r and res_w. Returns its
 * pid or -errno. */
static pid_t spawn_on(const char *bash, const struct shell_who *w, char **envp,
		      const struct contain *cg, int ctl_r, int res_w,
		      const char *arg)
{
	int drv = shell_load_driver();
	struct creds_plan cr;
	struct spawn *sp;
	char *argv[64];
	pid_t pid;

	if (drv < 0)
		return drv;
	pid = make_exit_files(w);
	if (pid < 0)
		return pid;
	pid = creds_plan(&cr, w->uid, w->gid, envp);
	if (pid < 0)
		return pid;
	make_argv(argv, arg);
	bash = shell_program(bash, w->uid);
	sp = bash ? pack(bash, argv, &cr, w->cwd) : NULL;
	creds_plan_free(&cr);
	if (!sp)
		return bash ? -ENOMEM : -EIO;
	sp->cg = cg;
	snprintf(sp->boot_err, sizeof(sp->boot_err), "%s/" SHELL_BOOT_ERR,
		 w->dir);
	sp->ctl_r = ctl_r;
	sp->res_w = res_w;
	sp->drv = drv;
	return start_child(sp);
}

/* The driver of a shell of another user's opens its pipes again through
 * /proc after each run (sfsdrv/fds.c), which only a pipe of that user's
 * allows: they are made the owner's, with mode 0 until the driver has
 * made its shell not dumpable and then the pipes 0600, so that no other
 * process of the owner's can open them at any time, bash's start
 * included. */
static int give_pipe(int fd, const struct shell_who *w)
{
	if (w->uid != geteuid() &&
	    (fchown(fd, w->uid, w->gid) < 0 || fchmod(fd, 0) < 0))
		return -errno;
	return 0;
}

/* The control and result pipes of w's shell: cp[0] and rp[1] are the
 * shell's. */
static int make_pipes(const struct shell_who *w, int cp[2], int rp[2])
{
	int rc;

	if (pipe2(cp, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(rp, O_CLOEXEC) < 0) {
		rc = -errno;
		rp[0] = rp[1] = -1;
	} else {
		rc = give_pipe(cp[0], w);
		if (rc == 0)
			rc = give_pipe(rp[0], w);
	}
	if (rc == 0)
		return 0;
	for (int i = 0; i < 2; i++) {
		close(cp[i]);
		if (rp[i] >= 0)
			close(rp[i]);
	}
	return rc;
}

/* Keeps the daemon's ends of the pipes once the shell has its own. */
static pid_t keep_ends(pid_t pid, int cp[2], int rp[2], int *ctl, int *res)
{
	close(cp[0]);
	close(rp[1]);
	if (pid < 0) {
		close(cp[1]);
		close(rp[0]);
		return pid;
	}
	fcntl(rp[0], F_SETFL, O_NONBLOCK);
	*ctl = cp[1];
	*res = rp[0];
	return pid;
}

pid_t shell_spawn(const char *bash, const struct shell_who *w, char **envp,
		  const struct contain *cg, int *ctl, int *res)
{
	int cp[2], rp[2];
	pid_t pid = make_pipes(w, cp, rp);

	if (pid < 0)
		return pid;
	pid = spawn_on(bash, w, envp, cg, cp[0], rp[1], w->dir);
	return keep_ends(pid, cp, rp, ctl, res);
}

pid_t shell_spawn_template(const char *bash, const struct shell_who *w,
			   char **envp, const struct contain *cg, int *sock)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = spawn_on(bash, w, envp, cg, sv[1], sv[1], SHELL_TEMPLATE_ARG);
	close(sv[1]);
	if (pid < 0)
		close(sv[0]);
	else
		*sock = sv[0];
	return pid;
}

/* Sends the template the request for w's shell (sfsdrv/tmpl.c). */
static int send_request(int sock, const struct shell_who *w,
			const struct contain *cg, int ctl_r, int res_w)
{
	int fds[3] = { cg->dfd, ctl_r, res_w };
	char ctl[CMSG_SPACE(sizeof(fds))] = { 0 };
	struct iovec iov = { (void *)w->dir, strlen(w->dir) };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(sock, &m, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* The template's answer, within SHELL_TEMPLATE_MS: the pid of a child of
 * the daemon's (checked: nothing else may be taken for the shell), and
 * in *move whether it is to be moved into its cgroup ("PID m": a shell of
 * another user's may not clone into it, sfsdrv/tmpl.c). */
static pid_t take_answer(int sock, bool *move)
{
	char *end;
	struct pollfd p = { .fd = sock, .events = POLLIN };
	char buf[32];
	siginfo_t si = { 0 };
	ssize_t n;
	long pid;

	if (poll(&p, 1, SHELL_TEMPLATE_MS) <= 0)
		return -ETIMEDOUT;
	n = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n <= 0)
		return -EPIPE;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	*move = strcmp(end, " m") == 0;
	if (pid < 0)
		return pid < -4095 ? -EINVAL : (pid_t)pid;
	if (pid == 0 || waitid(P_PID, (id_t)pid, &si,
			       WEXITED | WSTOPPED | WNOHANG | WNOWAIT) < 0)
		return -ECHILD;
	return (pid_t)pid;
}

/* Whether pid may be the shell just forked for uid: a child of the
 * daemon's that nothing of the daemon's claims yet (not another
 * session's shell, a process, a context, the template) and uid's (not an
 * orphan of another user's: the daemon, their subreaper, has those as
 * children too). A session's own shell answers a fork (sfsdrv/fork.c),
 * and code its owner loaded into it (enable -f) can name any pid. */
static bool new_child_of(pid_t pid, uid_t uid)
{
	char path[64], line[256];
	unsigned r, e, s, f;
	bool ok = false;
	FILE *fp;

	if (reap_watched(pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if (!(fp = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &f) == 4) {
			ok = r == uid && e == uid && s == uid && f == uid;
			break;
		}
	fclose(fp);
	return ok;
}

pid_t shell_fork_from(int sock, const struct shell_who *w,
		      const struct contain *cg, int *ctl, int *res)
{
	int cp[2], rp[2];
	bool move = false;
	pid_t pid = make_exit_files(w);

	if (pid < 0)
		return pid;
	pid = make_pipes(w, cp, rp);
	if (pid < 0)
		return pid;
	pid = send_request(sock, w, cg, cp[0], rp[1]);
	if (pid == 0)
		pid = take_answer(sock, &move);
	if (pid > 0 && !new_child_of(pid, w->uid))
		pid = -ECHILD; /* not one to take, move or kill */
	if (pid > 0 && move && contain_add(cg, pid) < 0) {
		kill(pid, SIGKILL); /* reaped as any child of the daemon's */
		pid = -EPERM;
	}
	return keep_ends(pid, cp, rp, ctl, res);
}

int shell_write_prelude(int dirfd, const char *name, const struct shell_who *w,
			const struct envmap *set, const struct envmap *unset,
			const char *cwd)
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
	fd = openat(dirfd, name,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0 || fchown(fd, w->uid, w->gid) < 0 ||
	    write(fd, text, len) != (ssize_t)len)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	free(text);
	return rc;
}

void shell_exec_child(int why, uid_t uid, gid_t gid, const char *cwd,
		      char **argv, char **envp)
{
	int e;

	/* nothing of the daemon's, /dev/fuse above all, but why */
	why = fcntl(why, F_DUPFD_CLOEXEC, 3);
	close_range(3, (unsigned)why - 1, 0);
	close_range((unsigned)why + 1, ~0U, 0);
	envp = creds_envp(envp, uid);
	if (creds_become(uid, gid) < 0)
		_exit(126);
	/* after the change of uid, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (chdir(cwd) < 0 && !(shell_cwd_fallback(cwd) && chdir("/") == 0)) {
		e = errno;
		execerr_say(why, "cwd", cwd, e);
		dprintf(2, "cwd %s: %s\n", cwd, strerror(e));
		_exit(126);
	}
	execve(conf.shell, argv, envp);
	execerr_say(why, "cannot run", conf.shell, errno);
	_exit(127);
}
