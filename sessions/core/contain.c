/*
 * contain.c - per-session cgroups (v2) with a /proc-walking fallback.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sessions/core/contain.h"
#include "sessions/core/state.h"
#include "sessions/core/dirtree.h"
#include "sessions/core/log.h"

static int base_fd = -1; /* this instance's parent cgroup */
static char base_path[4096];
static int watchdog_fd = -1; /* its end of the watchdog's pipe */

/* The cgroup2 mount point, from mountinfo (hybrid hosts mount it at
 * /sys/fs/cgroup/unified). */
static int find_cgroup2(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc != 0 && fgets(line, sizeof(line), f)) {
		char mnt[4096], *dash = strstr(line, " - cgroup2 ");

		if (dash && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(out, len, "%s", mnt);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* This process's own cgroup v2 path ("0::/path"). */
static int own_cgroup(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (rc != 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line + 3);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

static void write_file(int dfd, const char *name, const char *text)
{
	int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			log_msg(LOG_DEBUG, "write %s: %m", name);
		close(fd);
	}
}

/* Each cgroup of the tree is killed before its children go. */
static void kill_cgroup(int dfd)
{
	write_file(dfd, "cgroup.kill", "1");
}

/* Kills and removes a leftover cgroup and its descendants (instance,
 * session and process levels). */
static void remove_stale(int parent, const char *name)
{
	static const struct dirtree_how how = { .enter = kill_cgroup,
						.depth = 3,
						.busy_tries = 50 };

	dirtree_remove(parent, name, &how);
	if (faccessat(parent, name, F_OK, 0) < 0)
		log_msg(LOG_NOTICE, "removed leftover cgroup %s", name);
}

bool contain_setup(void)
{
	char root[2048], own[2048], name[64];
	int parent;

	if (find_cgroup2(root, sizeof(root)) < 0 ||
	    own_cgroup(own, sizeof(own)) < 0)
		return false;
	snprintf(base_path, sizeof(base_path), "%s%s", root,
		 strcmp(own, "/") ? own : "");
	parent = open(base_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		return false;
	dirtree_sweep_stale(parent, "sessionfs.", remove_stale);
	snprintf(name, sizeof(name), "sessionfs.%ld", (long)getpid());
	if (mkdirat(parent, name, 0755) == 0 || errno == EEXIST)
		base_fd = openat(parent, name,
				 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(parent);
	if (base_fd < 0) {
		log_msg(LOG_NOTICE,
			"no cgroup v2 under %s (%m): containment "
			"falls back to process sessions",
			base_path);
		return false;
	}
	strncat(base_path, "/", sizeof(base_path) - strlen(base_path) - 1);
	strncat(base_path, name, sizeof(base_path) - strlen(base_path) - 1);
	log_msg(LOG_INFO, "sessions are contained in %s", base_path);
	return true;
}

/* The watchdog: waits for EOF on fd (the daemon's end closes when it
 * dies, however it dies), then kills what is left of the instance. */
static void watchdog_main(int fd, const char *name)
{
	char c;
	int parent;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	parent = open(base_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		_exit(0); /* a clean exit removed it already */
	close(parent);
	*strrchr(base_path, '/') = '\0';
	parent = open(base_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent >= 0)
		remove_stale(parent, name);
	_exit(0);
}

void contain_watchdog(void)
{
	char name[64];
	int p[2];
	pid_t pid;

	if (base_fd < 0 || pipe2(p, O_CLOEXEC) < 0)
		return;
	snprintf(name, sizeof(name), "%s", strrchr(base_path, '/') + 1);
	pid = fork();
	if (pid == 0) {
		dup2(p[0], 3);
		close_range(4, ~0U, 0); /* above all, /dev/fuse */
		setsid();
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		watchdog_main(3, name);
	}
	close(p[0]);
	if (pid < 0)
		close(p[1]);
	else
		watchdog_fd = p[1];
	/* p[1] stays open, close-on-exec, for the daemon's whole life (and
	 * across an upgrade in place, which hands it over). */
}

void contain_teardown(void)
{
	if (base_fd < 0)
		return;
	close(base_fd);
	base_fd = -1;
	if (rmdir(base_path) < 0)
		log_msg(LOG_WARNING, "rmdir %s: %m", base_path);
}

int contain_new(struct contain *c, const char *tag)
{
	c->dfd = -1;
	c->nested = false;
	c->leader = c->sid = 0;
	c->parent_dfd = base_fd;
	snprintf(c->name, sizeof(c->name), "%s", tag);
	if (base_fd < 0)
		return 0;
	if (mkdirat(base_fd, c->name, 0755) < 0 && errno != EEXIST)
		return -errno;
	c->dfd = openat(base_fd, c->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return c->dfd < 0 ? -errno : 0;
}

int contain_new_in(struct contain *c, const struct contain *parent,
		   const char *tag)
{
	c->dfd = -1;
	c->nested = false;
	c->leader = c->sid = 0;
	snprintf(c->name, sizeof(c->name), "%s", tag);
	c->parent_dfd = parent->dfd;
	if (parent->dfd < 0)
		return 0;
	if (mkdirat(parent->dfd, c->name, 0755) < 0 && errno != EEXIST)
		return -errno;
	c->nested = true;
	return 0;
}

/* Whether c is a cgroup (else the fallback's session id walk). */
static bool in_cgroup(const struct contain *c)
{
	return c->dfd >= 0 || c->nested;
}

/* c's directory for one use: the one kept, or a nested one opened now
 * (-1 with errno when that fails, or without a cgroup). */
static int cg_open(const struct contain *c)
{
	if (!c->nested) {
		errno = ENOENT;
		return c->dfd;
	}
	return openat(c->parent_dfd, c->name,
		      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void cg_done(const struct contain *c, int fd)
{
	if (fd >= 0 && fd != c->dfd)
		close(fd);
}

/* In a child that contain_fork started in its cgroup: nothing to move. */
static bool born_inside;
/* clone3 with CLONE_INTO_CGROUP failed for want of support: fork. */
static bool no_clone3;

/* Moving a process into a cgroup (a write of cgroup.procs) waits for an
 * RCU grace period under cgroup_threadgroup_rwsem: 0.1 to 10 ms here,
 * most of a new session's first run. A child cloned into the cgroup
 * (clone3, Linux 5.7) never moves. The daemon is one thread, so the
 * child of a raw clone3 is what fork would make. */
pid_t contain_fork(const struct contain *c)
{
	int dfd = no_clone3 ? -1 : cg_open(c);
	struct clone_args a = { .flags = CLONE_INTO_CGROUP,
				.exit_signal = SIGCHLD,
				.cgroup = (uint64_t)dfd };
	long pid = -1;

	if (dfd >= 0)
		pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0)
		born_inside = true;
	if (pid >= 0) {
		cg_done(c, dfd);
		return (pid_t)pid;
	}
	if (dfd >= 0 && (errno == ENOSYS || errno == E2BIG ||
			 errno == EINVAL || errno == EOPNOTSUPP))
		no_clone3 = true;
	cg_done(c, dfd);
	/* Where the directory could not be opened, contain_add fails and
	 * the child's contain_enter refuses to go on outside its cgroup. */
	pid = fork();
	if (pid > 0)
		contain_add(c, (pid_t)pid); /* before anyone can signal it */
	return (pid_t)pid;
}

int contain_enter(const struct contain *c)
{
	return born_inside ? 0 : contain_add(c, getpid());
}

int contain_add(const struct contain *c, pid_t who)
{
	char pid[32];
	int dfd, fd, rc = 0;

	if (!in_cgroup(c))
		return 0;
	dfd = cg_open(c);
	if (dfd < 0)
		return -errno;
	snprintf(pid, sizeof(pid), "%ld", (long)who);
	fd = openat(dfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	cg_done(c, dfd);
	return rc;
}

/* What is done to each process found: fn(pid, arg), which says whether
 * it counts. */
struct each {
	bool (*fn)(pid_t pid, void *arg);
	void *arg;
};

/* Calls how->fn for every process of the cgroup but except. */
static int cgroup_each(int dfd, pid_t except, const struct each *how)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	long pid;
	int n = 0;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (fscanf(f, "%ld", &pid) == 1)
		if ((pid_t)pid != except && how->fn((pid_t)pid, how->arg))
			n++;
	fclose(f);
	return n;
}

/* Reads ppid and sid of pid from /proc/PID/stat. */
static int proc_stat(long pid, long *ppid, long *sid)
{
	char path[64], buf[1024], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %ld %*d %ld", ppid, sid) != 2)
		return -1;
	return 0;
}

/* Fallback: processes in the leader's session, or below the leader. */
static int proc_each(const struct contain *c, pid_t except,
		     const struct each *how)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long pid, ppid, sid, up, usid;
	int n = 0;

	if (!d || (c->leader <= 0 && c->sid <= 0)) {
		if (d)
			closedir(d);
		return 0;
	}
	while ((e = readdir(d))) {
		bool mine;
		int depth = 0;

		if (sscanf(e->d_name, "%ld", &pid) != 1 || pid == except ||
		    proc_stat(pid, &ppid, &sid) < 0)
			continue;
		mine = (c->sid > 0 && sid == c->sid) ||
		       (c->leader > 0 && pid == c->leader);
		for (up = ppid;
		     !mine && c->leader > 0 && up > 1 && depth++ < 64;
		     up = ppid) {
			mine = up == c->leader;
			if (proc_stat(up, &ppid, &usid) < 0)
				break;
		}
		if (mine && how->fn((pid_t)pid, how->arg))
			n++;
	}
	closedir(d);
	return n;
}

/* A nested cgroup that cannot be opened now is reached through its
 * leader's session, as without cgroups. */
static int each(const struct contain *c, pid_t except, const struct each *how)
{
	int dfd = cg_open(c), n;

	if (dfd < 0)
		return proc_each(c, except, how);
	n = cgroup_each(dfd, except, how);
	cg_done(c, dfd);
	return n;
}

static bool signal_one(pid_t pid, void *arg)
{
	return kill(pid, *(int *)arg) == 0;
}

int contain_signal(const struct contain *c, int sig, pid_t except)
{
	struct each how = { signal_one, &sig };

	return each(c, except, &how);
}

/* Appends pid to the growing list *arg (a struct contain_pids). */
static bool collect(pid_t pid, void *arg)
{
	struct contain_pids *l = arg;
	pid_t *p;

	if (l->n == l->cap) {
		p = realloc(l->pid, (l->cap ? l->cap * 2 : 16) * sizeof(*p));
		if (!p)
			return false;
		l->pid = p;
		l->cap = l->cap ? l->cap * 2 : 16;
	}
	l->pid[l->n++] = pid;
	return true;
}

int contain_pids(const struct contain *c, pid_t except, struct contain_pids *l)
{
	struct each how = { collect, l };

	*l = (struct contain_pids){ 0 };
	each(c, except, &how);
	return l->n;
}

/* The processes of cgroup dfd and of the cgroups below it, to depth
 * levels down (a session's procs, terminal and contexts are its child
 * cgroups, and a program may make more). */
static void tree_each(int dfd, int depth, const struct each *how)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	cgroup_each(dfd, 0, how);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (depth > 0 && (e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
		    (sub = openat(dfd, e->d_name,
				  O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			tree_each(sub, depth - 1, how);
			close(sub);
		}
	closedir(d);
}

int contain_pids_tree(const struct contain *c, struct contain_pids *l)
{
	struct each how = { collect, l };
	int dfd = cg_open(c);

	*l = (struct contain_pids){ 0 };
	if (dfd < 0)
		return contain_pids(c, 0, l);
	tree_each(dfd, 8, &how);
	cg_done(c, dfd);
	return l->n;
}

void contain_kill(const struct contain *c)
{
	int dfd = cg_open(c);

	if (dfd >= 0)
		write_file(dfd, "cgroup.kill", "1");
	else
		contain_signal(c, SIGKILL, 0);
	cg_done(c, dfd);
}

bool contain_empty(const struct contain *c)
{
	char buf[256];
	int dfd = cg_open(c), fd;
	ssize_t n;

	if (dfd < 0)
		return contain_signal(c, 0, 0) == 0;
	fd = openat(dfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	cg_done(c, dfd);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, "populated 0") != NULL;
}

void contain_free(struct contain *c)
{
	if (!in_cgroup(c))
		return;
	if (c->dfd >= 0)
		close(c->dfd);
	c->dfd = -1;
	c->nested = false;
	if (unlinkat(c->parent_dfd, c->name, AT_REMOVEDIR) < 0)
		log_msg(LOG_WARNING, "rmdir cgroup %s: %m", c->name);
}

void contain_adopt(struct contain *c, int dfd, const char *tag)
{
	char name[sizeof(c->name)];

	snprintf(name, sizeof(name), "%s", tag);
	if (dfd < 0) { /* a checkpoint's: a cgroup of this instance */
		contain_new(c, name);
		return;
	}
	c->dfd = dfd;
	c->parent_dfd = base_fd;
	c->nested = false;
	c->leader = c->sid = 0;
	memcpy(c->name, name, sizeof(name));
}

enum { CK_BASE_FD = 1, CK_BASE_PATH, CK_WATCHDOG };

void contain_save(struct state_w *w)
{
	state_put_fd(w, CK_BASE_FD, base_fd);
	state_put_str(w, CK_BASE_PATH, base_path);
	state_put_fd(w, CK_WATCHDOG, watchdog_fd);
}

void contain_restore(const struct state_r *o)
{
	base_fd = state_get_fd(o, CK_BASE_FD);
	watchdog_fd = state_get_fd(o, CK_WATCHDOG);
	state_get_buf(o, CK_BASE_PATH, base_path, sizeof(base_path));
	if (base_fd >= 0 && watchdog_fd < 0)
		contain_watchdog();
}

void contain_remove_left(const char *name)
{
	if (base_fd >= 0)
		remove_stale(base_fd, name);
}
