/*
 * upgrade.c - upgrade in place (upgrade.h): the old program's save and
 * execve, and the new program's taking over of the connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <linux/close_range.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "conf/conf.h"
#include "fam.h"
#include "fam_ports.h"
#include "files.h"
#include "sessions/core/contain.h"
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "sessions/session/rtdir.h"
#include "sessions/session/sess.h"
#include "sessions/session/sstate.h"
#include "keeper.h"
#include "upgrade.h"

extern char **environ;

#ifndef FUSE_NOTIFY_RESEND
#define FUSE_NOTIFY_RESEND 7
#endif
#define HAS_RESEND_BIT2 (1u << 7) /* FUSE_HAS_RESEND, bit 39, in flags2 */
/* The unique of the replayed INIT: none of the kernel's (they count up
 * from 1 in steps of 2, and bit 63 marks a resent one). */
#define REPLAY_UNIQUE 0x7ffffffffffffff0ULL
#define CHECK_MS      5000 /* the new program's check of the state */
#define BUSY_WAIT_MS  30000 /* a kill's grace (kill_grace_ms) and more */
#define BUSY_POLL_MS  20
#define LEFT_MS	      1000 /* what the old program left goes this much later */

enum { F_FUSE = 1, F_INIT, F_UNIQUE, F_SIZE, F_COUNT, F_KEEPER, F_RECOVERIES,
       F_STARTED, F_WORKSPACE, F_RUNTIME_DIR, F_AHEAD, F_CWD, F_LEFT,
       F_BEGAN };

static struct {
	struct fuse_session *se;
	char **argv;
	const char *mnt;
	char exe[4096];	 /* this program's file, as it was started */
	char cwd[4096];	 /* and its first cwd, for relative arguments */
	uint64_t unique; /* of the request being processed */
	void *init;	 /* the kernel's INIT request */
	size_t init_len;
	fuse_req_t req; /* the write of `upgrade`, while it is carried out */
	uint64_t req_unique;
	size_t req_size;
	char path[4096];
	struct loop_timer timer;
	struct loop_timer left_timer;
	/* the upgrade's steps (monotonic ms) */
	int64_t asked, began, saved, checked;
	/* the sessions made ahead by the programs before ("sID sID"), whose
	 * cgroups and directories are still to go */
	char left[512];
	bool resumed;
	bool recovering; /* started by the keeper after a crash */
	unsigned long count;
	void *bytes; /* the next program: the state, mapped */
	size_t bytes_len;
} up;

void upgrade_setup(struct fuse_session *se, char **argv, const char *mnt)
{
	ssize_t n = readlink("/proc/self/exe", up.exe, sizeof(up.exe) - 1);

	if (!getcwd(up.cwd, sizeof(up.cwd)))
		snprintf(up.cwd, sizeof(up.cwd), "/");
	up.se = se;
	up.argv = argv;
	up.mnt = mnt;
	up.exe[n > 0 ? n : 0] = '\0';
	/* replaced by a package upgrade: the file at the path is the new */
	if (n > 10 && strcmp(up.exe + n - 10, " (deleted)") == 0)
		up.exe[n - 10] = '\0';
}

/* What the keeper hands a server started after a crash: the note (the
 * connection's INIT and where the runtime directory is) with
 * /dev/fuse and the runtime directory's descriptors. */
static void note_keeper(void)
{
	int fds[KEEPER_FDS_MAX], fd, rc = 0;
	struct state_w w;
	size_t n = 1;

	state_w_init(&w);
	state_open(&w, UPK_FS);
	state_put_fd(&w, F_FUSE, fuse_session_fd(up.se));
	state_put(&w, F_INIT, up.init, up.init_len);
	state_close(&w);
	sstate_save_dirs(&w);
	fd = state_w_memfd(&w, "sessionfs-note", MFD_CLOEXEC);
	if (fd < 0)
		rc = fd;
	fds[0] = fd;
	for (size_t i = 0; rc == 0 && i < w.nfds && n < KEEPER_FDS_MAX; i++)
		fds[n++] = w.fds[i];
	if (rc == 0)
		rc = keeper_hold(fds, n);
	if (rc < 0)
		log_msg(LOG_ERR, "keeper: cannot hand it the connection: %s",
			strerror(-rc));
	if (fd >= 0)
		close(fd);
	state_w_free(&w);
}

void upgrade_saw(const struct fuse_buf *buf)
{
	const struct fuse_in_header *h = buf->mem;

	if ((buf->flags & FUSE_BUF_IS_FD) || buf->size < sizeof(*h))
		return;
	up.unique = h->unique;
	if (h->opcode == FUSE_INIT && !up.init && (up.init = malloc(buf->size))) {
		memcpy(up.init, buf->mem, buf->size);
		up.init_len = buf->size;
		if (keeper_fd() >= 0)
			note_keeper();
	}
}

/* Whether the kernel said, in its INIT, that it resends requests. */
static bool kernel_resends(void)
{
	const struct fuse_init_in *in;

	if (!up.init ||
	    up.init_len < sizeof(struct fuse_in_header) + sizeof(*in))
		return false;
	in = (const void *)((const char *)up.init +
			    sizeof(struct fuse_in_header));
	return (in->flags & FUSE_INIT_EXT) && (in->flags2 & HAS_RESEND_BIT2);
}

static void fail(int rc, const char *what)
{
	log_msg(LOG_ERR, "upgrade to %s: %s: %s; this program goes on", up.path,
		what, strerror(-rc));
	fuse_reply_err(up.req, -rc);
	up.req = NULL;
}

/* The directory this program works in ("/" once daemonized): the next
 * one, which is started where the first was (for its relative arguments),
 * goes back there, and does not hold that directory for good. */
static void put_cwd(struct state_w *w)
{
	char cwd[4096];

	if (getcwd(cwd, sizeof(cwd)))
		state_put_str(w, F_CWD, cwd);
}

static void go_back(const struct state_r *fs)
{
	char *cwd = state_get_str(fs, F_CWD);

	if (cwd && chdir(cwd) < 0)
		log_msg(LOG_WARNING, "upgrade: cd %s: %m", cwd);
	free(cwd);
}

/* The whole state, in a memfd that the next program inherits. */
static int save(struct state_w *w)
{
	int rc;

	state_w_init(w);
	sstate_save(w); /* UPK_LAYER */
	state_open(w, UPK_FS);
	state_put_fd(w, F_FUSE, fuse_session_fd(up.se));
	state_put(w, F_INIT, up.init, up.init_len);
	state_put_u64(w, F_UNIQUE, up.req_unique);
	state_put_u64(w, F_SIZE, up.req_size);
	state_put_u64(w, F_COUNT, up.count + 1);
	state_put_fd(w, F_KEEPER, keeper_fd());
	state_put_u64(w, F_RECOVERIES, keeper_recoveries());
	state_put_i64(w, F_STARTED, loop_started_ms());
	state_put_str(w, F_WORKSPACE, conf.workspace);
	state_put_str(w, F_RUNTIME_DIR, conf.runtime_dir);
	state_put_u64(w, F_AHEAD, sess_ahead_id());
	state_put_i64(w, F_BEGAN, up.began);
	if (up.left_timer.armed) /* upgraded again before they went */
		state_put_str(w, F_LEFT, up.left);
	put_cwd(w);
	state_close(w);
	fh_save_all(w, UPK_FH);
	/* UPK_FILES, which pauses files/' notifier (EBUSY when it cannot) */
	rc = files_save(w);
	if (rc < 0)
		return rc;
	fam_ports_save(w, UPK_PORTS);
	/* not close-on-exec: the next program inherits it */
	return state_w_memfd(w, "sessionfs-state", 0);
}

/* Runs the new program on the state (--check-state): 0 when it can read
 * it, else -errno (-ENOEXEC: it refused it or died). */
static int check(int fd)
{
	char arg[32];
	char *argv[] = { up.path, arg, NULL };
	int st = 0, rc;
	pid_t pid;

	snprintf(arg, sizeof(arg), "--check-state=%d", fd);
	/* posix_spawn: a vfork, not a copy of the daemon's page tables
	 * (megabytes with a thousand sessions) in the upgrade's pause */
	rc = posix_spawn(&pid, up.path, NULL, NULL, argv, environ);
	if (rc != 0)
		return -rc; /* ENOENT, EACCES: its exec failed */
	for (int ms = 0; ms < CHECK_MS; ms++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 :
			       WIFEXITED(st) && WEXITSTATUS(st) == 127 ?
								-ENOENT :
								-ENOEXEC;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -ETIMEDOUT;
}

/* The arguments of the next program: this one's, then --resume=FD. */
static char **next_argv(int fd)
{
	size_t n = 0;
	char **v;

	while (up.argv[n])
		n++;
	v = calloc(n + 2, sizeof(*v));
	if (!v || asprintf(&v[n], "--resume=%d", fd) < 0) {
		free(v);
		return NULL;
	}
	memcpy(v, up.argv, n * sizeof(*v));
	return v;
}

/* Hands over: only returns when the execve failed. */
static int hand_over(struct state_w *w, int fd)
{
	int fuse_fd = fuse_session_fd(up.se), fl = fcntl(fuse_fd, F_GETFD);
	char **argv = next_argv(fd), now[4096];
	size_t n = 0;
	int rc;

	if (!argv)
		return -ENOMEM;
	/* the arguments are read again where they were first (a relative
	 * mount point, -c FILE) */
	if (!getcwd(now, sizeof(now)) || chdir(up.cwd) < 0)
		snprintf(now, sizeof(now), "/");
	fh_wake_polls();
	state_w_keep_fds(w, true);
	fcntl(fuse_fd, F_SETFD, fl & ~FD_CLOEXEC);
	log_msg(LOG_NOTICE,
		"upgrade: handing over to %s (state saved in %lld ms, checked "
		"by it in %lld ms)",
		up.path, (long long)(up.saved - up.began),
		(long long)(up.checked - up.saved));
	execv(up.path, argv);
	rc = -errno;
	if (chdir(now) < 0)
		log_msg(LOG_WARNING, "upgrade: cd %s: %m", now);
	fcntl(fuse_fd, F_SETFD, fl);
	state_w_keep_fds(w, false);
	while (argv[n + 1])
		n++;
	free(argv[n]); /* the --resume argument, the only one made here */
	free(argv);
	return rc;
}

static void do_upgrade(struct loop_timer *t)
{
	struct state_w w;
	int fd, rc;

	(void)t;
	up.began = loop_now_ms();
	rc = sstate_busy();
	/* a deletion or a kill in progress ends within its grace: wait */
	if (rc < 0 && up.began - up.asked < BUSY_WAIT_MS) {
		loop_timer_add(&up.timer, up.began + BUSY_POLL_MS, do_upgrade,
			       NULL);
		return;
	}
	if (rc < 0) {
		fail(rc, "a session is being deleted or killed");
		return;
	}
	fd = save(&w);
	if (fd < 0) {
		fail(fd, "saving the state");
		state_w_free(&w);
		return;
	}
	up.saved = loop_now_ms();
	rc = check(fd);
	up.checked = loop_now_ms();
	if (rc == 0)
		rc = hand_over(&w, fd);
	fail(rc, rc == -ENOEXEC ? "the new program refused the state" :
				  "starting the new program");
	close(fd);
	state_w_free(&w);
}

int upgrade_request(fuse_req_t req, size_t size, const char *path,
		    size_t plen, uid_t uid)
{
	if (uid != 0 && uid != geteuid())
		return -EPERM;
	if (up.req)
		return -EALREADY;
	if (!kernel_resends())
		return -EOPNOTSUPP;
	if (plen == 0)
		snprintf(up.path, sizeof(up.path), "%s", up.exe);
	else if (path[0] != '/' || plen >= sizeof(up.path))
		return -EINVAL;
	else
		snprintf(up.path, sizeof(up.path), "%.*s", (int)plen, path);
	if (access(up.path, X_OK) < 0)
		return -errno;
	up.req = req;
	up.asked = loop_now_ms();
	up.req_unique = up.unique;
	up.req_size = size;
	/* at the loop's next turn: no other request is half done then */
	loop_timer_add(&up.timer, loop_now_ms(), do_upgrade, NULL);
	return 0;
}

int upgrade_load(int fd, struct state_r *root)
{
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : 0;

	if (rc == 0 && (st.st_size < 16 || st.st_size > (1LL << 32)))
		rc = -EINVAL;
	/* mapped, not read: megabytes not copied in the upgrade's pause
	 * (the old program sealed the memfd against writes) */
	if (rc == 0) {
		up.bytes = mmap(NULL, (size_t)st.st_size, PROT_READ,
				MAP_PRIVATE, fd, 0);
		rc = up.bytes == MAP_FAILED ? -errno : 0;
		up.bytes_len = rc == 0 ? (size_t)st.st_size : 0;
		if (rc < 0)
			up.bytes = NULL;
	}
	close(fd);
	if (rc == 0)
		rc = state_check(up.bytes, up.bytes_len, root);
	if (rc < 0) {
		upgrade_done();
		return rc;
	}
	up.resumed = true;
	return 0;
}

/* A setting that cannot change without losing something (the sessions'
 * spools, files/'s inodes) keeps the value it had, said in the log. */
static void keep_setting(const struct state_r *fs, uint16_t key,
			 const char *name, char **val)
{
	char *old = state_get_str(fs, key);

	if (!old)
		return;
	if (*val && strcmp(old, *val) != 0)
		log_msg(LOG_WARNING,
			"upgrade: %s stays %s (the new setting, %s, would "
			"lose the sessions' files; it takes effect at the next "
			"start)",
			name, old, *val);
	free(*val);
	*val = old;
}

int upgrade_fuse_fd(const struct state_r *root)
{
	struct state_r fs;

	return state_obj(root, UPK_FS, &fs) ? state_get_fd(&fs, F_FUSE) : -1;
}

/* INIT again, to libfuse only: the kernel drops the reply. */
static int replay_init(struct fuse_session *se, const struct state_r *fs)
{
	const void *p;
	size_t len;
	struct fuse_in_header *h;
	struct fuse_buf b = { 0 };

	if (!state_get(fs, F_INIT, &p, &len) || len < sizeof(*h) ||
	    !(up.init = malloc(len)))
		return -EPROTO;
	memcpy(up.init, p, len);
	up.init_len = len;
	if (!(b.mem = malloc(len)))
		return -ENOMEM;
	memcpy(b.mem, p, len);
	h = b.mem;
	if (h->opcode != FUSE_INIT) {
		free(b.mem);
		return -EPROTO;
	}
	h->unique = REPLAY_UNIQUE;
	b.size = len;
	fuse_session_process_buf(se, &b);
	free(b.mem);
	return 0;
}

/* The write of `upgrade`, answered as done; then every request the old
 * program read and did not answer comes again. */
static void answer_and_resend(int fd, const struct state_r *fs)
{
	struct {
		struct fuse_out_header h;
		struct fuse_write_out w;
	} ok = { { sizeof(ok), 0, state_get_u64(fs, F_UNIQUE, 0) },
		 { (uint32_t)state_get_u64(fs, F_SIZE, 0), 0 } };
	struct fuse_out_header rs = { sizeof(rs), FUSE_NOTIFY_RESEND, 0 };

	if (ok.h.unique && write(fd, &ok, sizeof(ok)) < 0)
		log_msg(LOG_WARNING, "upgrade: the reply to its write: %m");
	if (write(fd, &rs, sizeof(rs)) < 0)
		log_msg(LOG_ERR, "upgrade: FUSE_NOTIFY_RESEND: %m");
}

/* The session the old program had made ahead is not carried over: its
 * shell ends with the old program (its pipes were close-on-exec), and its
 * cgroup and directory go a moment later, out of the upgrade's pause. */
static void remove_left(struct loop_timer *t)
{
	char *save = NULL;

	(void)t;
	for (char *n = strtok_r(up.left, " ", &save); n;
	     n = strtok_r(NULL, " ", &save)) {
		contain_remove_left(n);
		rtdir_remove(n);
	}
	up.left[0] = '\0';
}

static void remove_left_later(const struct state_r *fs)
{
	uint64_t id = state_get_u64(fs, F_AHEAD, 0);
	char *before = state_get_str(fs, F_LEFT);
	size_t len;

	/* names of the form sID only: rtdir_remove takes a name */
	snprintf(up.left, sizeof(up.left), "%s",
		 before && strspn(before, "s0123456789 ") == strlen(before) ?
			 before :
			 "");
	free(before);
	len = strlen(up.left);
	if (id && !sess_get(id) && len + 24 < sizeof(up.left))
		snprintf(up.left + len, sizeof(up.left) - len, "%ss%llu",
			 len ? " " : "", (unsigned long long)id);
	if (up.left[0])
		loop_timer_add(&up.left_timer, loop_now_ms() + LEFT_MS,
			       remove_left, NULL);
}

int upgrade_finish(struct fuse_session *se, const struct state_r *root)
{
	struct state_r fs;
	unsigned lost;
	int rc;

	if (!state_obj(root, UPK_FS, &fs))
		return -EPROTO;
	up.count = state_get_u64(&fs, F_COUNT, up.recovering ? 0 : 1);
	if (!up.recovering) {
		loop_set_started_ms(state_get_i64(&fs, F_STARTED, 0));
		keeper_adopt((int)state_get_i64(&fs, F_KEEPER, -1));
		keeper_set_recoveries(state_get_u64(&fs, F_RECOVERIES, 0));
	}
	lost = fh_restore_all(root, UPK_FH);
	if (lost)
		log_msg(LOG_WARNING, "upgrade: %u open files not kept", lost);
	fam_ports_restore(root, UPK_PORTS);
	rc = replay_init(se, &fs);
	if (rc < 0)
		return rc;
	/* a descriptor handed over that nothing took (a part that could not
	 * be made again) must not reach a child: close-on-exec, all */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	answer_and_resend(fuse_session_fd(se), &fs);
	remove_left_later(&fs);
	if (up.recovering)
		log_msg(LOG_NOTICE, "recovered after a crash (%lu of this "
				    "mount): serving",
			keeper_recoveries());
	else
		log_msg(LOG_NOTICE, "upgrade: serving (upgrade %lu of this "
				    "mount), %lld ms after it began",
			up.count,
			(long long)(loop_now_ms() -
				    state_get_i64(&fs, F_BEGAN, loop_now_ms())));
	return 0;
}

void upgrade_done(void)
{
	if (up.bytes)
		munmap(up.bytes, up.bytes_len);
	up.bytes = NULL;
	up.bytes_len = 0;
}

bool upgrade_resumed(void)
{
	return up.resumed;
}

bool upgrade_recovering(void)
{
	return up.recovering;
}

const char *upgrade_exe(void)
{
	return up.exe;
}

const char *upgrade_cwd(void)
{
	return up.cwd;
}

unsigned long upgrade_count(void)
{
	return up.count;
}

/* `sessionfs --upgrade MOUNTPOINT [PATH]`: the root ctl's verb, from the
 * command line. Returns the exit status. */
static int upgrade_cli(const char *mnt, const char *path)
{
	char ctl[4096], line[4200];
	int fd, n;

	snprintf(ctl, sizeof(ctl), "%s/ctl", mnt);
	n = snprintf(line, sizeof(line), "upgrade%s%s\n", path ? " " : "",
		     path ? path : "");
	fd = open(ctl, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, line, (size_t)n) != n) {
		fprintf(stderr, "sessionfs: upgrade of %s: %s\n", mnt,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	return 0;
}

/* --check-state=FD: whether this program can read the state in FD. */
static int check_state(const char *arg)
{
	struct state_r root, fs;
	int rc = upgrade_load(atoi(arg), &root);

	if (rc == 0 && (!state_obj(&root, UPK_FS, &fs) ||
			!state_obj(&root, UPK_LAYER, &fs)))
		rc = -EPROTO;
	if (rc < 0)
		fprintf(stderr, "sessionfs: the state handed over: %s\n",
			strerror(-rc));
	upgrade_done();
	return rc < 0 ? 1 : 0;
}

/* --recover=NOTE,SOCK,COUNT (the keeper's): its socket and count. */
static void take_recover(const char *arg)
{
	const char *c1, *c2;

	if (strncmp(arg, "--recover=", 10) != 0)
		return;
	up.recovering = true;
	c1 = strchr(arg, ',');
	c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	if (c1)
		keeper_adopt(atoi(c1 + 1));
	keeper_set_recoveries(c2 ? strtoul(c2 + 1, NULL, 10) : 1);
}

int upgrade_args(int *argc, char **argv, int *resume_fd)
{
	*resume_fd = -1;
	if (*argc >= 2 && strncmp(argv[1], "--check-state=", 14) == 0)
		return check_state(argv[1] + 14);
	if (*argc >= 3 && strcmp(argv[1], "--upgrade") == 0)
		return upgrade_cli(argv[2], *argc >= 4 ? argv[3] : NULL);
	if (*argc >= 2 && strcmp(argv[1], "--upgrade") == 0) {
		fprintf(stderr, "usage: sessionfs --upgrade MOUNTPOINT [PATH]\n");
		return 2;
	}
	for (int i = 1; i < *argc; i++)
		if (strncmp(argv[i], "--resume=", 9) == 0 ||
		    strncmp(argv[i], "--recover=", 10) == 0) {
			take_recover(argv[i]);
			*resume_fd = atoi(strchr(argv[i], '=') + 1);
			memmove(argv + i, argv + i + 1,
				(size_t)(*argc - i) * sizeof(*argv));
			(*argc)--;
			break;
		}
	return -1;
}

int upgrade_attach(struct fuse_session *se, int fd, struct state_r *root)
{
	struct state_r fs;
	char dev[32];
	int rc = upgrade_load(fd, root), fuse_fd;

	if (rc < 0) {
		log_msg(LOG_ERR, "upgrade: the state handed over: %s",
			strerror(-rc));
		return 1;
	}
	fuse_fd = upgrade_fuse_fd(root);
	if (state_obj(root, UPK_FS, &fs)) {
		keep_setting(&fs, F_WORKSPACE, "workspace", &conf.workspace);
		keep_setting(&fs, F_RUNTIME_DIR, "runtime_dir",
			     &conf.runtime_dir);
		go_back(&fs);
	}
	snprintf(dev, sizeof(dev), "/dev/fd/%d", fuse_fd);
	if (fuse_fd < 0 || fuse_session_mount(se, dev) != 0) {
		log_msg(LOG_ERR, "upgrade: no /dev/fuse handed over");
		return 1;
	}
	return 0;
}

void upgrade_unmount(void)
{
	pid_t pid;

	if (geteuid() == 0) {
		/* EINVAL: unmounted already (the end came from an unmount) */
		if (umount2(up.mnt, MNT_DETACH) < 0 && errno != EINVAL &&
		    errno != ENOENT)
			log_msg(LOG_WARNING, "unmount %s: %m", up.mnt);
		return;
	}
	pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-uqz", "--", up.mnt,
		       (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}
