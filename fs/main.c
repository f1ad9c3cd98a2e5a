/**
 * @file main.c - sessionfs: persistent shell sessions as files.
 *
 * Run it as:
 *
 *     sessionfs [-f] [-d] [-o OPT[,OPT...]] MOUNTPOINT
 *     mkdir MOUNTPOINT/sessions/build
 *     echo 'echo hi' > MOUNTPOINT/sessions/build/cmd
 *     cat MOUNTPOINT/sessions/build/stdout
 *     fusermount3 -u MOUNTPOINT
 *
 * This file owns the command line, the mount, the daemon's signals and
 * the one event loop that serves /dev/fuse beside the sessions' pipes,
 * child exits and timers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "conf/conf.h"
#include "sessions/session/fdq.h"
#include "files.h"
#include "files_settle.h"
#include "files_watch.h"
#include "mountpoint.h"
#include "ops.h"
#include "park.h"
#include "sessions/core/cpulat.h"
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "sessions/session/sess.h"
#include "sessions/session/shell.h"
#include "sessions/session/sstate.h"
#include "keeper.h"
#include "upgrade.h"

#ifndef SFS_VERSION
#define SFS_VERSION "0"
#endif

static struct fuse_session *se;
static struct fuse_buf fbuf;
static struct loop_watch fuse_w, sig_w;
static bool stopping;
static bool others; /* -o allow_other: other users reach the mount */

static void shutdown_done(void *arg)
{
	(void)arg;
	loop_stop();
}

/* Ends every session, then leaves the loop. */
static void begin_shutdown(const char *why)
{
	if (stopping)
		return;
	stopping = true;
	sstate_checkpoints(false); /* what ends now is not to come back */
	log_msg(LOG_INFO, "%s: ending every session", why);
	sess_shutdown(shutdown_done, NULL);
}

static void on_fuse(struct loop_watch *w, uint32_t events)
{
	(void)events;
	for (int i = 0; i < 32; i++) {
		int res = fuse_session_receive_buf(se, &fbuf);

		if (res == -EINTR || res == -EAGAIN)
			break;
		if (res <= 0 || fuse_session_exited(se)) {
			loop_del(w);
			begin_shutdown("unmounted");
			return;
		}
		upgrade_saw(&fbuf);
		fuse_session_process_buf(se, &fbuf);
	}
	/* after the replies: they need not wait for it */
	cpulat_touch();
}

/* SIGTERM and SIGINT end sessionfs cleanly. SIGHUP, SIGUSR1 and SIGUSR2
 * would otherwise kill it without unmounting (or, for SIGHUP, end every
 * session when a terminal closes): sessions are worth more, and there is
 * neither a log file to reopen nor settings to reload, so they are noted
 * and ignored. They are blocked rather than SIG_IGN, which the sessions'
 * shells would inherit. */
static void on_signal(struct loop_watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	(void)events;
	while (read(w->fd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGTERM || sig == SIGINT)
			begin_shutdown(strsignal(sig));
		else
			log_msg(LOG_INFO, "%s (from pid %u): ignored",
				strsignal(sig), si.ssi_pid);
	}
}

static void usage(const char *prog)
{
	printf("usage: %s [options] MOUNTPOINT\n\n"
	       "Persistent shell sessions as files.\n\n"
	       "    -c FILE            configuration file (libconfig syntax)\n"
	       "    -o config=FILE     the same, as a mount option\n"
	       "    -f                 stay in the foreground, log to stderr\n"
	       "    -d                 debug: foreground and FUSE tracing\n"
	       "    -s                 accepted; sessionfs is one event loop\n"
	       "    -o OPT[,OPT...]    FUSE mount options (allow_other, which\n"
	       "                       adds default_permissions, ...)\n"
	       "    -h, --help         this help\n"
	       "    -V, --version      the version\n\n"
	       "Without -c, $SESSIONFS_CONFIG or /etc/sessionfs.conf is read "
	       "when present.\n\n",
	       prog);
}

struct opts {
	char *config;
	char *mountpoint; /* the last non-option argument */
	bool max_read;	  /* the user gave -o max_read= */
	bool shared;	  /* the user gave -o allow_other */
};

enum { KEY_MAX_READ = 1, KEY_ALLOW_OTHER };

/* mount.fuse3 runs "sessionfs SOURCE MOUNTPOINT -o ...": the source
 * ("none") is dropped and only the last non-option is kept. A user's
 * max_read stays for libfuse and is noted for init. */
static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct opts *o = data;

	(void)outargs;
	if (key == KEY_MAX_READ) {
		o->max_read = true;
		fsn_max_read =
			(unsigned)strtoul(arg + strlen("max_read="), NULL, 10);
	}
	if (key == KEY_ALLOW_OTHER)
		o->shared = true;
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	free(o->mountpoint);
	o->mountpoint = strdup(arg);
	return 0;
}

static const struct fuse_opt opt_spec[] = {
	{ "config=%s", offsetof(struct opts, config), 0 },
	{ "-c %s", offsetof(struct opts, config), 0 },
	FUSE_OPT_KEY("max_read=", KEY_MAX_READ),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_END
};

/* Takes sessionfs's own options out of args and loads the settings.
 * Returns 0, or 2 (the exit status) on a bad configuration. */
static int configure(struct fuse_args *args)
{
	struct opts o = { 0 };
	const char *path;
	int rc = 0;

	if (fuse_opt_parse(args, &o, opt_spec, opt_proc) < 0)
		return 2;
	/* Shown in /proc/mounts as "sessionfs ... fuse.sessionfs"; a user's
	 * own -o fsname= or subtype= comes later and wins. */
	if (fuse_opt_insert_arg(args, 1,
				"-ofsname=sessionfs,subtype=sessionfs") < 0)
		rc = 2;
	/* When replies were spliced, libfuse spliced one only when it fit
	 * its pipe (1 MiB with the header) and copied a larger one through
	 * a fresh buffer: 1 GiB in 1 MiB reads took 1.0-1.3 s, and 0.3-0.4 s
	 * as pairs of 512 KiB requests. Read into fam.c's buffer now, both
	 * measure the same. libfuse wants init to repeat it. */
	if (!o.max_read) {
		char opt[32];

		snprintf(opt, sizeof(opt), "-omax_read=%u", FSN_MAX_READ);
		if (fuse_opt_insert_arg(args, 1, opt) < 0)
			rc = 2;
	}
	/* Other users: the kernel checks the modes and owners as well as
	 * the handlers (fs/ops.c), which answer for a user's sessions. */
	if (o.shared &&
	    fuse_opt_insert_arg(args, 1, "-odefault_permissions") < 0)
		rc = 2;
	files_posix_acl = o.shared;
	others = o.shared;
	if (o.mountpoint && fuse_opt_add_arg(args, o.mountpoint) < 0)
		rc = 2;
	free(o.mountpoint);
	path = conf_path(o.config);
	if (rc == 0 && path && conf_load(path) < 0)
		rc = 2;
	log_set_level(conf.log_level);
	free(o.config);
	return rc;
}

/* Blocked from before the mount on, so that none of them can kill
 * sessionfs between the mount and the loop; the loop reads them. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	sigprocmask(SIG_BLOCK, set, NULL);
}

static int watch_signals(void)
{
	sigset_t set;

	block_signals(&set);
	sig_w.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	sig_w.fn = on_signal;
	return sig_w.fd < 0 ? -errno : loop_add(&sig_w, EPOLLIN);
}

static int make_default_session(void)
{
	struct sess *s;
	int rc;

	if (!conf.default_session)
		return 0;
	rc = sess_create("default", getuid(), getgid(), &s);
	if (rc == 0)
		sess_set_default(s);
	return rc;
}

/* The sessions an upgrade handed over in layer, or after a crash those
 * of the latest checkpoint (none: a fresh start, said in the log). */
static int restore_sessions(const struct state_r *layer)
{
	struct state_r ckpt;
	void *bytes;
	int rc;

	if (!upgrade_recovering())
		return sstate_restore(layer);
	rc = sstate_read_checkpoint(&ckpt, &bytes);
	if (rc == 0)
		rc = sstate_restore(&ckpt);
	free(bytes);
	if (rc == 0)
		return 0;
	log_msg(LOG_ERR, "recovery: no checkpoint to restore (%s): no session "
			 "is kept",
		strerror(-rc));
	return make_default_session();
}

/* Everything after the mount (root: the state an upgrade handed over, or
 * NULL): returns the exit status. */
static int serve(const struct state_r *root)
{
	struct state_r layer, files, *lp = NULL;
	int rc = loop_init();

	if (root && state_obj(root, UPK_LAYER, &layer))
		lp = &layer;
	if (root && !lp)
		rc = -EPROTO;
	if (rc == 0)
		rc = watch_signals();
	if (rc == 0)
		rc = cpulat_init(CPULAT_DEVICE, conf.cpu_poll_ms);
	if (rc == 0 && lp)
		rc = sstate_restore_dirs(lp);
	if (rc == 0)
		rc = sess_init(lp != NULL);
	sess_quiet_hook = sstate_checkpoint_quiet;
	/* once, before any shell: the module of this start, whatever later
	 * replaces the file (logged when it is missing) */
	shell_load_driver();
	if (rc == 0)
		rc = shell_copy_program(others);
	if (rc == 0) /* after sess_init, which raises RLIMIT_NOFILE */
		rc = fdq_init();
	if (rc == 0 && lp)
		rc = restore_sessions(lp);
	else if (rc == 0)
		rc = make_default_session();
	if (rc == 0 && root && state_obj(root, UPK_FILES, &files))
		files_restore(&files);
	else if (rc == 0 && files_init(conf.workspace) < 0)
		log_msg(LOG_WARNING, "files/: cannot open %s", conf.workspace);
	run_changed_hook = fsettle_run_changed;
	fsn_ops_init();
	if (rc == 0 && root)
		rc = upgrade_finish(se, root);
	upgrade_done();
	if (rc == 0) /* the INIT replayed: notifications can be sent */
		fwatch_start(se, upgrade_recovering());
	/* after upgrade_finish, which takes the keeper's socket over */
	sstate_checkpoints(keeper_fd() >= 0);
	loop_set_idle(park_idle);
	fuse_w.fd = fuse_session_fd(se);
	fuse_w.fn = on_fuse;
	fcntl(fuse_w.fd, F_SETFL, fcntl(fuse_w.fd, F_GETFL) | O_NONBLOCK);
	if (rc == 0)
		rc = loop_add_first(&fuse_w, EPOLLIN);
	if (rc == 0)
		rc = loop_run();
	if (rc < 0)
		log_msg(LOG_ERR, "%s", strerror(-rc));
	fsettle_fini();
	fsn_ops_fini();
	sess_fini();
	cpulat_fini();
	return rc < 0 ? 1 : 0;
}

/* Mounts on mountpoint once it is fit for that: 0, or the exit status. */
static int mount_at(const char *mountpoint)
{
	sigset_t sigs;
	int rc = mountpoint_prepare(mountpoint);

	if (rc < 0)
		return rc == -EBUSY || rc == -ENOTDIR ? 2 : 1;
	block_signals(&sigs);
	if (fuse_session_mount(se, mountpoint) != 0)
		return 1;
	return 0;
}

/* The mount, a new one or the one an upgrade handed over, and the
 * service. Returns the exit status. */
static int mount_and_serve(const struct fuse_cmdline_opts *opts, char **argv,
			   int resume_fd)
{
	struct state_r root;
	int status;

	upgrade_setup(se, argv, opts->mountpoint); /* before a daemon's cd */
	status = resume_fd >= 0 ? upgrade_attach(se, resume_fd, &root) :
				  mount_at(opts->mountpoint);
	if (status != 0)
		return status;
	if (resume_fd < 0)
		fuse_daemonize(opts->foreground);
	if (!opts->foreground)
		log_use_syslog();
	/* the first start: this process becomes the keeper, its child the
	 * server (keeper.h) */
	if (resume_fd < 0 && conf.keeper &&
	    keeper_start(fuse_session_fd(se), upgrade_exe(), upgrade_cwd(),
			 argv) < 0)
		log_msg(LOG_WARNING, "no keeper: a crash will end the mount");
	status = serve(resume_fd >= 0 ? &root : NULL);
	if (upgrade_resumed())
		upgrade_unmount();
	else
		fuse_session_unmount(se);
	return status;
}

int main(int argc, char *argv[])
{
	struct fuse_args args;
	struct fuse_cmdline_opts opts;
	int resume_fd;
	int status = upgrade_args(&argc, argv, &resume_fd);

	if (status >= 0)
		return status;
	args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	conf_defaults();
	if (configure(&args) != 0) {
		fuse_opt_free_args(&args);
		return 2;
	}
	if (fuse_parse_cmdline(&args, &opts) != 0)
		return 2;
	if (opts.show_help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		status = 0;
		goto out_args;
	}
	if (opts.show_version) {
		printf("sessionfs version %s\n", SFS_VERSION);
		fuse_lowlevel_version();
		status = 0;
		goto out_args;
	}
	if (!opts.mountpoint) {
		fprintf(stderr, "%s: no mountpoint (see --help)\n", argv[0]);
		status = 2;
		goto out_args;
	}
	signal(SIGPIPE, SIG_IGN);
	/* A daemon of a user's own serves sessions of that user: their
	 * commands may not open its /proc files (/dev/fuse, every shell's
	 * pipes). */
	if (geteuid() != 0)
		prctl(PR_SET_DUMPABLE, 0);
	se = fuse_session_new(&args, &fsn_ops, sizeof(fsn_ops), NULL);
	if (!se) {
		status =
			2; /* an unknown or malformed option (libfuse said which) */
		goto out_args;
	}
	status = mount_and_serve(&opts, argv, resume_fd);
	fuse_session_destroy(se);
out_args:
	free(fbuf.mem);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return status;
}
