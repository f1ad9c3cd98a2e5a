/*
 * sfsdrv.c - the session shell's driver: a bash loadable builtin
 * (sfsdrv.so, `sfs_driver DIR`) that runs the protocol of
 * sessions/session/shell.h from C, so that nothing a command does in its shell
 * (functions, aliases, variables, options, traps, closed descriptors)
 * can reach the protocol. This file has the loop: the control line, the
 * prelude, running a command and abandoning it. fds.c keeps the
 * protocol's descriptors out of the commands' reach, report.c makes the
 * frames and the files left at exit.
 *
 * Abandoning a run. SHELL_ABORT_SIG is ignored when bash starts, so bash
 * takes it as "ignored on entry": `trap` can neither catch nor reset it.
 * The handler here takes it over: during a run it sets noexec (`set -n`)
 * and breaks out of every loop, so bash unwinds the command normally
 * (functions, eval, sourced files, traps) without running one more
 * command of it. noexec and the loop state are reset before and after
 * each run, so a command's own `set -n` lasts only until its end.
 */
#include <config.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "builtins.h"
#include "shell.h"
#include "bashgetopt.h"
#include "common.h"
#include "variables.h"
#include "execute_cmd.h"
#include "sig.h"
#include "builtext.h"
#include "drv.h"

/* bash internals that its installed headers do not declare */
extern int read_but_dont_execute; /* set -n */
extern int trapped_signal_received;
extern void get_original_signal(int);
extern struct timeval shellstart; /* $SECONDS counts from it */
extern time_t shell_start_time;

/* one SPIN round of the control line: driver.c's SPIN_POLL_US */
#define ROUND_NS 4000

struct drv drv = { .res_fd = DRV_RES_FD };
static char in[256]; /* what came on the control pipe */
static size_t in_len;
static volatile sig_atomic_t in_run, in_traps, aborted;
/* the run going on, and one aborted before it began (see on_abort) */
static volatile uintptr_t run_id, abort_id;

/* ---- the control line ---- */

/* The shell's own CPU time: like the rounds of bash's `read -t 0` that
 * SPIN counted, it does not run out while an idle-class shell waits for
 * a CPU. */
static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Takes one line out of in into line. */
static bool take_line(char *line, size_t cap)
{
	char *nl = memchr(in, '\n', in_len);
	size_t n;

	if (!nl)
		return false;
	n = (size_t)(nl - in);
	if (n >= cap)
		n = cap - 1;
	memcpy(line, in, n);
	line[n] = '\0';
	in_len -= (size_t)(nl + 1 - in);
	memmove(in, nl + 1, in_len);
	return true;
}

/* Forgets what a command left that would keep the next ones from
 * running: noexec and the state of loops. */
static void clear_exec_state(void)
{
	read_but_dont_execute = 0;
	breaking = continuing = 0;
}

/* Traps that came between runs; an abort stops them as it stops a run. */
static int run_traps(void)
{
	int rc;

	clear_exec_state();
	in_traps = 1;
	rc = drv_run_traps();
	in_traps = 0;
	clear_exec_state();
	return rc;
}

/* Reads the next control line, polling for spin rounds (of its CPU
 * time) before it sleeps. The polling is poll(2), which looks at the
 * pipe without its lock: a read(2) that an idle-class shell is preempted
 * in would hold the lock, and the daemon's write of the next line would
 * wait for the shell to get a CPU again. Returns -1 at EOF (the daemon is
 * done with this shell). */
static int next_line(char *line, size_t cap, unsigned long long spin)
{
	int64_t until = cpu_ns() + (int64_t)(spin * ROUND_NS);
	int wait = 0;

	for (;;) {
		struct pollfd p = { .fd = drv_ctl_fd(), .events = POLLIN };
		ssize_t n;

		if (take_line(line, cap))
			return 0;
		if (in_len == sizeof(in))
			in_len = 0; /* not a line of ours */
		/* only a trap can move the descriptors */
		if (trapped_signal_received && run_traps() < 0)
			return -1;
		if (poll(&p, 1, wait) == 0) {
			if (wait == 0 && cpu_ns() >= until)
				wait = -1;
			continue;
		}
		n = read(p.fd, in + in_len, sizeof(in) - in_len);
		if (n > 0)
			in_len += (size_t)n;
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
	}
}

/* ---- a run ---- */

/* Stops what bash is running: a run, or traps run before one. */
static void stop_commands(void)
{
	read_but_dont_execute = 1;
	if (loop_level > 0)
		breaking = loop_level;
}

/* The daemon queues the abort with the id of the run it ends. That run
 * may not have started yet (the shell ran a trap meanwhile, its line
 * waits in the pipe): then it is noted, and the run never starts. A
 * plain kill(2) of the signal, with no run named, is not the daemon's. */
static void on_abort(int sig, siginfo_t *si, void *uc)
{
	uintptr_t id = (uintptr_t)si->si_value.sival_ptr;

	(void)sig;
	(void)uc;
	if (si->si_code != SI_QUEUE || !id)
		return;
	if (in_run && id == run_id) {
		aborted = 1;
		stop_commands();
		return;
	}
	abort_id = id;
	if (in_traps)
		stop_commands();
}

static void arm_abort(void)
{
	struct sigaction sa = { .sa_sigaction = on_abort,
				.sa_flags = SA_RESTART | SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(DRV_ABORT_SIG, &sa, NULL);
}

/* export NAME=VAL, the value taken literally */
/* Sets NAME to val as written: a nameref is not followed, and integer or
 * case attributes, which would evaluate or change the value, are
 * dropped first (an array becomes a plain variable). */
void drv_pre_set(char *name, char *val)
{
	SHELL_VAR *v = find_variable_noref(name);

	this_command_name = "export";
	if (v && readonly_p(v)) {
		builtin_error("%s: readonly variable", name);
		return;
	}
	if (v && (array_p(v) || assoc_p(v)))
		unbind_variable_noref(name);
	else if (v)
		VUNSETATTR(v, att_nameref | att_integer | att_uppercase |
				      att_lowercase | att_capcase);
	v = bind_variable(name, val, ASS_NOEVAL);
	if (v) {
		VSETATTR(v, att_exported);
		array_needs_making = 1;
		stupidly_hack_special_variables(name);
	}
}

/* Unsets NAME itself, not what a nameref of that name points to. */
static void pre_unset(char *name)
{
	SHELL_VAR *v = find_variable_noref(name);

	if (v && readonly_p(v)) {
		this_command_name = "unset";
		builtin_error("%s: readonly variable", name);
		return;
	}
	unbind_variable_noref(name);
	stupidly_hack_special_variables(name);
}

/* Why the run's prelude could not enter its cwd ("" when it did): the
 * run then ends as an error, its command not run. */
static char cd_failed[PATH_MAX + 128];

void drv_pre_cd(char *path, char *why, size_t cap)
{
	WORD_LIST *args;

	if (chdir(path) < 0) {
		snprintf(why, cap, "cwd %s: %s", path, strerror(errno));
		return;
	}
	args = make_word_list(make_word("--"),
			      make_word_list(make_word(path), NULL));
	this_command_name = "cd";
	cd_builtin(args);
	dispose_words(args);
}

static int prelude_record(char op, char *arg, char *val, void *ctx)
{
	(void)ctx;
	if (op == 'S')
		drv_pre_set(arg, val);
	else if (op == 'U')
		pre_unset(arg);
	else if (op == 'C')
		drv_pre_cd(arg, cd_failed, sizeof(cd_failed));
	return 0;
}

/* Applies rID.pre: records "S\0NAME\0VALUE\0", "U\0NAME\0", "C\0DIR\0"
 * (shell_write_prelude), every value taken literally. */
static void apply_prelude(const char *name)
{
	size_t len;
	char *p = drv_slurp(name, &len);

	if (!p)
		return;
	drv_records(p, len, prelude_record, NULL);
	free(p);
}

/* Runs the text of rID.cmd as if sourced (`return` ends it), under the
 * name "cmd" in bash's messages. Returns its status. */
static int run_text(const char *name)
{
	procenv_t saved;
	size_t len;
	char *text = drv_slurp(name, &len);
	int status, level;

	if (!text) {
		builtin_error("cannot read the command: %s", strerror(errno));
		return 126;
	}
	/* NUL bytes go, as `.` drops them: the text is a C string below */
	for (size_t i = 0, j = 0; i <= len; i++)
		if (text[i] || i == len)
			text[j++] = text[i];
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

/* A shell's $SECONDS counts from its first run, as one started for that
 * run would: a shell made ahead (forked from the template or started)
 * may wait long for it. */
static void start_clock(void)
{
	if (drv.clock_started)
		return;
	drv.clock_started = true;
	gettimeofday(&shellstart, NULL);
	shell_start_time = shellstart.tv_sec;
}

static int run_one(const char *id, const char *gen, char flag, const char *opts)
{
	char name[64];
	int status = 126;

	start_clock();
	arm_abort();
	clear_exec_state();
	aborted = 0;
	cd_failed[0] = '\0';
	run_id = (uintptr_t)strtoull(id, NULL, 10);
	in_run = 1;
	if (drv_run_fds(gen) == 0) {
		/* env/ and cwd writes are not the run's: they hold anyway */
		if (flag == 'p') {
			snprintf(name, sizeof(name), "r%s.pre", id);
			apply_prelude(name);
		}
		if (!cd_failed[0])
			drv_opts_apply(id, opts, cd_failed, sizeof(cd_failed));
		snprintf(name, sizeof(name), "r%s.cmd", id);
		/* ended before it began: none of it runs */
		if (abort_id == run_id)
			aborted = 1;
		else if (!cd_failed[0]) /* else drv_report says why */
			status = run_text(name);
	}
	in_run = 0;
	clear_exec_state();
	drv_opts_restore();
	/* noexec made what was left "succeed": the killed command's status */
	if (aborted)
		status = last_command_exit_value ? last_command_exit_value :
						   128 + SIGTERM;
	return status & 0xff;
}

/* ---- the builtin ---- */

/* What every shell of the driver sets up once (a template's children
 * inherit it). */
static void setup_shell(void)
{
	/* The daemon's copy of this module, loaded now: no command may
	 * inherit a descriptor of the daemon's. */
	close(DRV_MOD_FD);
	/* Other processes of the owner's (the commands' children) may not
	 * open this shell's /proc files, and so not the holder's pipes.
	 * Root's pass that check anyway. */
	if (geteuid() != 0)
		prctl(PR_SET_DUMPABLE, 0);
	/* The daemon starts bash with the abort signal ignored: bash then
	 * marks it "ignored on entry" (no trap may change it), and the
	 * handler here takes it over. */
	get_original_signal(DRV_ABORT_SIG);
	arm_abort();
	remember_args(NULL, 1); /* $1 and $2 were the module and DIR */
	shopt_setopt("expand_aliases", 1);
}

/* What is the session's: its directory, the protocol's descriptors (a
 * shell forked from another session's takes them again). */
static int setup_session(const char *dir)
{
	if (strlen(dir) >= sizeof(drv.dir))
		return -1;
	strcpy(drv.dir, dir);
	drv.pid = getpid();
	if (drv_fds_init() < 0)
		return -1;
	if (!drv.running)
		atexit(drv_save_state);
	drv.running = true;
	return 0;
}

/* The line "fork PATH": in a shell forked for another session, that
 * session is this driver's from now on. Returns -1 when that shell
 * cannot go on. */
static int fork_line(const char *path)
{
	char dir[PATH_MAX];
	int rc = drv_fork(path, dir, sizeof(dir));

	if (rc <= 0)
		return 0; /* this shell goes on; the daemon saw it fail */
	in_len = 0;	  /* nothing on the new control pipe was read yet */
	return setup_session(dir) < 0 || drv_idle_fds() < 0 ? -1 : 0;
}

/* Sets up the driver for the session in DIR, or, for DRV_TEMPLATE_ARG,
 * runs the template: returns 1 when it is done with, 0 in a shell forked
 * from it (its session's directory in dir), -1 on an error. */
static int setup(const char *arg, char *dir, size_t cap)
{
	bool tmpl = strcmp(arg, DRV_TEMPLATE_ARG) == 0;

	setup_shell();
	if (tmpl && drv_template(dir, cap) < 0)
		return 1;
	if (!tmpl)
		snprintf(dir, cap, "%s", arg);
	return setup_session(dir);
}

static int sfs_driver_builtin(WORD_LIST *list)
{
	char line[256], id[32], gen[32], flag, key[32], opts[8], dir[PATH_MAX];
	unsigned long long spin = 0;
	int n;

	if (drv.running || !list || list->next) {
		builtin_error("only the session's driver may run this");
		return EX_USAGE;
	}
	n = setup(list->word->word, dir, sizeof(dir));
	if (n > 0)
		return EXECUTION_SUCCESS; /* a template the daemon left */
	if (n < 0) {
		builtin_error("cannot set up the driver: %s", strerror(errno));
		return EXECUTION_FAILURE;
	}
	if (drv_idle_fds() < 0)
		return EXECUTION_FAILURE;
	while (next_line(line, sizeof(line), spin) == 0) {
		int status;

		if (strncmp(line, "fork ", 5) == 0) {
			if (fork_line(line + 5) < 0)
				return EXECUTION_FAILURE;
			continue;
		}
		key[0] = '\0';
		strcpy(opts, "-");
		n = sscanf(line, "%31s %31s %c %llu %31s %7s", id, gen, &flag,
			   &spin, key, opts);
		if (n < 4)
			break;
		status = run_one(id, gen, flag, opts);
		/* no way to report: the shell's exit status says it */
		if (drv_idle_fds() < 0 ||
		    drv_report(status, key, cd_failed) < 0)
			return status;
	}
	return EXECUTION_SUCCESS;
}

static char *sfs_driver_doc[] = {
	"The sessionfs session driver (see sessions/session/shell.h).",
	NULL,
};

struct builtin sfs_driver_struct = {
	"sfs_driver",	sfs_driver_builtin, BUILTIN_ENABLED,
	sfs_driver_doc, "sfs_driver DIR",   0,
};
