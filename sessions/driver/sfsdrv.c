/*
 * sfsdrv.c - the session shell's driver: a bash loadable builtin
 * (sfsdrv.so, `sfs_driver DIR`) that runs the protocol of
 * sessions/shell.h from C, so that nothing a command does in its shell
 * (functions, aliases, variables, options, traps, closed descriptors)
 * can reach the protocol.
 *
 * Descriptors. Between runs the control pipe is on fd 0 and the result
 * pipe on fd 201 (stdout and stderr are /dev/null); a run has /dev/null
 * and its fifos on 0-2 and no protocol descriptor at all. A holder
 * thread with a file table of its own (unshare(CLONE_FILES)) keeps both
 * pipes open for the life of the shell and is their source: after each
 * run (and whenever fd 0 or 201 is not the pipe it was) they are opened
 * again through /proc/self/task/TID/fd/N, whatever the command closed or
 * however low it set `ulimit -n`. The holder dies with the process, so
 * the daemon still sees the result pipe close when the shell ends.
 *
 * Abandoning a run. SHELL_ABORT_SIG is ignored when bash starts, so bash
 * takes it as "ignored on entry": `trap` can neither catch nor reset it.
 * This module then handles it itself: during a run the handler sets
 * noexec (`set -n`) and breaks out of every loop, so bash unwinds the
 * command normally (functions, sourced files, traps) without running one
 * more command of it. noexec and the loop state are reset before and after
 * each run, so a command's own `set -n` lasts only until its end.
 *
 * The report (status, real cwd from getcwd, exported variables) is made
 * here; the exported variables are written in the `declare -x NAME="..."`
 * form of `export -p`, which the daemon's envmap parser reads. When the
 * shell exits (exit, set -e, EOF on the control pipe), an atexit handler
 * leaves them in DIR/env and the frame in DIR/state, whatever EXIT trap
 * the command set.
 */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "builtins.h"
#include "shell.h"
#include "bashgetopt.h"
#include "common.h"
#include "variables.h"
#include "execute_cmd.h"
#include "sig.h"
#include "builtext.h"

/* bash internals that its installed headers do not declare */
extern int read_but_dont_execute; /* set -n */
extern int trapped_signal_received;
extern void run_pending_traps(void);
extern void get_original_signal(int);

#define CTL_FD	 0
#define RES_FD	 201  /* SHELL_RES_FD */
#define ROUND_NS 4000 /* one SPIN round of the control line (sess.c) */

struct chan {
	int fd, want; /* where it is, where it belongs */
	int flags;    /* open(2) flags through /proc */
	dev_t dev;
	ino_t ino;
	char path[64]; /* /proc/self/task/TID/fd/N of the holder */
};

static struct {
	char dir[PATH_MAX];
	pid_t pid;
	bool running;
	struct chan ctl, res;
	char in[256];
	size_t in_len;
	sem_t holder_ready;
	pid_t holder_tid;
} d;

static volatile sig_atomic_t in_run, aborted;

/* ---- growing buffers ---- */

struct buf {
	char *p;
	size_t len, cap;
	bool err;
};

static void buf_add(struct buf *b, const void *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s) + 1);
}

/* ---- the report ---- */

/* The exported variables as `export -p` shows them. */
static void add_exports(struct buf *b)
{
	SHELL_VAR **list = all_exported_variables();

	for (SHELL_VAR **v = list; v && *v; v++) {
		const char *val = value_cell(*v);

		if (invisible_p(*v) || array_p(*v) || assoc_p(*v) ||
		    function_p(*v) || !val)
			continue;
		buf_add(b, "declare -x ", 11);
		buf_add(b, (*v)->name, strlen((*v)->name));
		buf_add(b, "=\"", 2);
		for (const char *c = val; *c; c++) {
			if (strchr("\"\\$`", *c))
				buf_add(b, "\\", 1);
			buf_add(b, c, 1);
		}
		buf_add(b, "\"\n", 2);
	}
	free(list);
}

/* The real working directory ("" when it has none: the daemon keeps
 * the one it knew). */
static void add_cwd(struct buf *b)
{
	char cwd[PATH_MAX];

	buf_str(b, getcwd(cwd, sizeof(cwd)) && cwd[0] == '/' ? cwd : "");
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_file(const char *name, const struct buf *b)
{
	char path[PATH_MAX + 16];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s", d.dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	rc = b->err ? -1 : write_all(fd, b->p, b->len);
	close(fd);
	return rc;
}

/* The shell is exiting: its variables in "env", its frame in "state". */
static void save_state(void)
{
	struct buf env = { 0 }, st = { 0 };

	if (getpid() != d.pid || !d.running)
		return;
	add_exports(&env);
	buf_add(&st, "X0", 3);
	add_cwd(&st);
	buf_add(&st, "", 1);
	if (write_file("env", &env) == 0)
		write_file("state", &st);
	free(env.p);
	free(st.p);
}

/* ---- the protocol descriptors ---- */

static void *holder(void *arg)
{
	(void)arg;
	/* its own file table, with only the two pipes in it */
	if (unshare(CLONE_FILES) == 0) {
		close_range(1, RES_FD - 1, 0);
		close_range(RES_FD + 1, ~0U, 0);
		d.holder_tid = (pid_t)syscall(SYS_gettid);
	}
	sem_post(&d.holder_ready);
	for (;;)
		pause(); /* every signal is blocked here */
	return NULL;
}

static int start_holder(void)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int rc;

	sem_init(&d.holder_ready, 0, 0);
	sigfillset(&all);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 65536);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, &at, holder, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (rc != 0)
		return -1;
	while (sem_wait(&d.holder_ready) < 0 && errno == EINTR)
		;
	return d.holder_tid ? 0 : -1;
}

static int chan_init(struct chan *c, int fd, int flags)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	c->fd = c->want = fd;
	c->flags = flags;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	snprintf(c->path, sizeof(c->path), "/proc/self/task/%ld/fd/%d",
		 (long)d.holder_tid, fd);
	return 0;
}

static bool chan_ok(const struct chan *c)
{
	struct stat st;

	return c->fd >= 0 && fstat(c->fd, &st) == 0 && st.st_dev == c->dev &&
	       st.st_ino == c->ino;
}

/* Puts c back on its descriptor (or on any one, if that is out of
 * reach). Returns -1 when the pipe cannot be opened any more. */
static int chan_get(struct chan *c)
{
	int fd;

	if (chan_ok(c))
		return 0;
	fd = open(c->path, c->flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fd != c->want && dup3(fd, c->want, O_CLOEXEC) == c->want) {
		close(fd);
		fd = c->want;
	}
	c->fd = fd;
	return 0;
}

/* Takes c out of the shell's file table. */
static void chan_drop(struct chan *c, int null)
{
	if (c->fd == CTL_FD && null >= 0)
		dup2(null, CTL_FD);
	else if (c->fd >= 0 && chan_ok(c))
		close(c->fd);
	c->fd = -1;
}

static int chans_get(void)
{
	return chan_get(&d.ctl) == 0 && chan_get(&d.res) == 0 ? 0 : -1;
}

/* fd, moved above 2 (close-on-exec) so that placing it cannot clobber
 * another one of 0-2. */
static int high(int fd)
{
	int h;

	if (fd < 0 || fd > 2)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return h;
}

/* Makes fds 0-2 be in, out and err (and closes those). */
static int place(int in, int out, int err)
{
	int fds[3] = { high(in), high(out), high(err) }, rc = 0;

	for (int i = 0; i < 3; i++) {
		if (fds[i] < 0 || dup2(fds[i], i) < 0)
			rc = -1;
	}
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

static int open_null(void)
{
	return open("/dev/null", O_RDWR | O_CLOEXEC);
}

/* Between runs: stdin the control pipe, stdout and stderr /dev/null. */
static int idle_fds(void)
{
	int null = open_null();

	fflush(stdout);
	fflush(stderr);
	if (place(null, dup(null), dup(null)) < 0)
		return -1;
	d.ctl.fd = -1; /* fd 0 is /dev/null now */
	return chans_get();
}

/* The pending traps of signals that came between runs, with the
 * protocol out of their reach. */
static void run_traps(void)
{
	int null = open_null();

	chan_drop(&d.ctl, null);
	chan_drop(&d.res, null);
	if (null >= 0)
		close(null);
	run_pending_traps();
	trapped_signal_received = 0;
	idle_fds();
}

/* ---- the control line ---- */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Takes one line out of d.in into line. */
static bool take_line(char *line, size_t cap)
{
	char *nl = memchr(d.in, '\n', d.in_len);
	size_t n;

	if (!nl)
		return false;
	n = (size_t)(nl - d.in);
	if (n >= cap)
		n = cap - 1;
	memcpy(line, d.in, n);
	line[n] = '\0';
	d.in_len -= (size_t)(nl + 1 - d.in);
	memmove(d.in, nl + 1, d.in_len);
	return true;
}

/* Reads the next control line, polling for spin rounds before it
 * sleeps. Returns -1 at EOF (the daemon is done with this shell). */
static int next_line(char *line, size_t cap, unsigned long long spin)
{
	int64_t until = now_ns() + (int64_t)(spin * ROUND_NS);

	for (;;) {
		struct pollfd p = { .events = POLLIN };
		ssize_t n;

		if (take_line(line, cap))
			return 0;
		if (d.in_len == sizeof(d.in))
			d.in_len = 0; /* not a line of ours */
		if (trapped_signal_received)
			run_traps();
		if (chans_get() < 0)
			return -1;
		n = read(d.ctl.fd, d.in + d.in_len, sizeof(d.in) - d.in_len);
		if (n > 0) {
			d.in_len += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
		if (errno == EINTR || now_ns() < until)
			continue;
		p.fd = d.ctl.fd;
		poll(&p, 1, -1);
	}
}

/* ---- a run ---- */

static void on_abort(int sig)
{
	(void)sig;
	if (!in_run)
		return;
	aborted = 1;
	read_but_dont_execute = 1;
	if (loop_level > 0)
		breaking = loop_level;
}

static void arm_abort(void)
{
	struct sigaction sa = { .sa_handler = on_abort,
				.sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN + 3, &sa, NULL);
}

/* Forgets what a command left that would keep the next ones from
 * running: noexec and the state of loops. */
static void clear_exec_state(void)
{
	read_but_dont_execute = 0;
	breaking = continuing = 0;
}

static char *slurp(const char *name, size_t *len)
{
	char path[PATH_MAX + 16];
	struct buf b = { 0 };
	char chunk[65536];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d.dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)n);
	close(fd);
	buf_add(&b, "", 1);
	if (b.err || n < 0) {
		free(b.p);
		return NULL;
	}
	*len = b.len - 1;
	return b.p;
}

static void pre_set(char *name, char *val)
{
	SHELL_VAR *v = find_variable(name);

	if (v && readonly_p(v)) {
		builtin_error("%s: readonly variable", name);
		return;
	}
	this_command_name = "export";
	v = bind_variable(name, val, 0);
	if (v) {
		VSETATTR(v, att_exported);
		array_needs_making = 1;
		stupidly_hack_special_variables(name);
	}
}

static void pre_cd(char *path)
{
	WORD_LIST *args = make_word_list(make_word(path), NULL);

	args = make_word_list(make_word("--"), args);
	this_command_name = "cd";
	cd_builtin(args);
	dispose_words(args);
}

/* Applies rID.pre: records "S\0NAME\0VALUE\0", "U\0NAME\0", "C\0DIR\0"
 * (shell_write_prelude), every value taken literally. */
static void apply_prelude(const char *name)
{
	size_t len;
	char *p = slurp(name, &len), *end;

	if (!p)
		return;
	end = p + len;
	for (char *r = p; r < end;) {
		char *op = r, *arg = op + strlen(op) + 1, *val;

		if (arg >= end)
			break;
		val = arg + strlen(arg) + 1;
		r = val;
		if (op[0] == 'S' && val < end) {
			pre_set(arg, val);
			r = val + strlen(val) + 1;
		} else if (op[0] == 'U') {
			builtin_unbind_variable(arg);
			stupidly_hack_special_variables(arg);
		} else if (op[0] == 'C') {
			pre_cd(arg);
		}
	}
	free(p);
}

/* Runs the text of rID.cmd as if sourced (`return` ends it), under the
 * name "cmd" in bash's messages. Returns its status. */
static int run_text(const char *name)
{
	procenv_t saved;
	size_t len;
	char *text = slurp(name, &len);
	int status, level;

	if (!text) {
		builtin_error("cannot read the command: %s", strerror(errno));
		return 126;
	}
	memcpy(saved, return_catch, sizeof(procenv_t));
	level = indirection_level;
	indirection_level = 0; /* set -x shows "+ cmd", as at top level */
	return_catch_flag++;
	if (setjmp_nosigs(return_catch)) {
		parse_and_execute_cleanup(-1);
		status = return_catch_value;
	} else {
		/* parse_and_execute frees text */
		status = parse_and_execute(text, "cmd",
					   SEVAL_NOHIST | SEVAL_RESETLINE);
	}
	return_catch_flag--;
	indirection_level = level;
	memcpy(return_catch, saved, sizeof(procenv_t));
	return status;
}

/* Gives the run its descriptors: /dev/null and the fifos fGEN.o/.e. */
static int run_fds(const char *gen)
{
	char o[PATH_MAX + 32], e[PATH_MAX + 32];
	int null = open_null();

	snprintf(o, sizeof(o), "%s/f%s.o", d.dir, gen);
	snprintf(e, sizeof(e), "%s/f%s.e", d.dir, gen);
	chan_drop(&d.ctl, null);
	chan_drop(&d.res, null);
	return place(null,
		     open(o, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600),
		     open(e, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
}

static int run_one(const char *id, const char *gen, char flag)
{
	char name[64];
	int status = 126;

	arm_abort();
	clear_exec_state();
	aborted = 0;
	in_run = 1;
	if (run_fds(gen) == 0) {
		if (flag == 'p') {
			snprintf(name, sizeof(name), "r%s.pre", id);
			apply_prelude(name);
		}
		snprintf(name, sizeof(name), "r%s.cmd", id);
		status = run_text(name);
	}
	in_run = 0;
	clear_exec_state();
	/* noexec made what was left "succeed": the killed command's status */
	if (aborted)
		status = last_command_exit_value ? last_command_exit_value :
						   128 + SIGTERM;
	return status & 0xff;
}

/* Sends "R<status>\0<cwd>\0\0", then "E0\0<cwd>\0<exports>\0". */
static int report(int status)
{
	struct buf b = { 0 };
	char head[16];
	int rc;

	snprintf(head, sizeof(head), "R%d", status);
	buf_str(&b, head);
	add_cwd(&b);
	buf_add(&b, "", 1);
	rc = b.err ? -1 : write_all(d.res.fd, b.p, b.len);
	b.len = 0;
	buf_add(&b, "E0", 3);
	add_cwd(&b);
	add_exports(&b);
	buf_add(&b, "", 1);
	if (rc == 0)
		rc = b.err ? -1 : write_all(d.res.fd, b.p, b.len);
	free(b.p);
	return rc;
}

/* ---- the builtin ---- */

static int setup(const char *dir)
{
	if (strlen(dir) >= sizeof(d.dir))
		return -1;
	strcpy(d.dir, dir);
	d.pid = getpid();
	/* The daemon starts bash with the abort signal ignored: bash then
	 * marks it "ignored on entry" (no trap may change it), and the
	 * handler here takes it over. */
	get_original_signal(SIGRTMIN + 3);
	arm_abort();
	remember_args(NULL, 1); /* $1 and $2 were the module and DIR */
	shopt_setopt("expand_aliases", 1);
	if (start_holder() < 0 ||
	    chan_init(&d.ctl, CTL_FD, O_RDONLY | O_NONBLOCK) < 0 ||
	    chan_init(&d.res, RES_FD, O_WRONLY) < 0)
		return -1;
	d.running = true;
	atexit(save_state);
	return 0;
}

static int sfs_driver_builtin(WORD_LIST *list)
{
	char line[256], id[32], gen[32], flag;
	unsigned long long spin = 0;

	if (d.running || !list || list->next) {
		builtin_error("only the session's driver may run this");
		return EX_USAGE;
	}
	if (setup(list->word->word) < 0) {
		builtin_error("cannot set up the driver: %s", strerror(errno));
		return EXECUTION_FAILURE;
	}
	if (idle_fds() < 0)
		return EXECUTION_FAILURE;
	while (next_line(line, sizeof(line), spin) == 0) {
		int status;

		if (sscanf(line, "%31s %31s %c %llu", id, gen, &flag, &spin) !=
		    4)
			break;
		status = run_one(id, gen, flag);
		if (idle_fds() < 0 || report(status) < 0)
			break;
	}
	return EXECUTION_SUCCESS;
}

static char *sfs_driver_doc[] = {
	"The sessionfs session driver (see sessions/shell.h).",
	NULL,
};

struct builtin sfs_driver_struct = {
	"sfs_driver",	sfs_driver_builtin, BUILTIN_ENABLED,
	sfs_driver_doc, "sfs_driver DIR",   0,
};
