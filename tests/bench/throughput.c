/*
 * throughput: how fast a large output goes through sessionfs, against a
 * shell writing the same output to a file and reading it back.
 *
 * It creates the session MNT/sessions/bench-tp-PID and runs
 * `head -c ${MiB}M /dev/zero` through its cmd file; the time from the open
 * of cmd to the return of its close (the run has ended then) is the produce
 * time. It checks that exit is "0\n", then reads stdout to the end with
 * 1 MiB read() calls and checks the byte count (the read time, open to
 * close). The baseline, in the same run: fork/exec
 * `bash -c 'head -c ${MiB}M /dev/zero > FILE'`, FILE in a temporary directory
 * where the daemon spools output by default ($XDG_RUNTIME_DIR if set, else
 * the first tmpfs of /run and /dev/shm, else /tmp), then FILE is read back with 1 MiB reads and
 * removed. It prints the throughput of both (MiB over produce + read time)
 * and the ratio sessionfs/baseline (the target is >= 0.5), and removes the
 * session.
 *
 * The exit status is 0 whether the target is met or not (this is a
 * measurement); it is 1 on any error, and the session and file are
 * removed then too.
 *
 * Build: meson (tests/bench/meson.build), or
 *	gcc -std=gnu11 -Wall -Wextra -Werror -O2 -o throughput throughput.c
 * Run on a mounted sessionfs (tests/bench/run.sh BUILD_DIR does it all):
 *	throughput MNT [MiB]		(MiB defaults to 1024)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB	    (1024 * 1024)
#define DEFAULT_MIB 1024
#define MAX_MIB	    (1024L * 1024)

static char session[PATH_MAX];
static char tmpdir[PATH_MAX];
static char tmpfile_path[PATH_MAX];
static int session_made;
static int tmpdir_made;
static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

/* Removes what is still there: on every exit() path. */
static void clean_up(void)
{
	if (session_made) {
		session_made = 0;
		if (rmdir(session) < 0)
			fprintf(stderr, "throughput: rmdir %s: %s\n", session,
				strerror(errno));
	}
	if (tmpdir_made) {
		tmpdir_made = 0;
		if (unlink(tmpfile_path) < 0 && errno != ENOENT)
			fprintf(stderr, "throughput: unlink %s: %s\n",
				tmpfile_path, strerror(errno));
		if (rmdir(tmpdir) < 0)
			fprintf(stderr, "throughput: rmdir %s: %s\n", tmpdir,
				strerror(errno));
	}
}

static void die(const char *what, const char *path)
{
	if (path)
		fprintf(stderr, "throughput: %s %s: %s\n", what, path,
			strerror(errno));
	else
		fprintf(stderr, "throughput: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check_stopped(void)
{
	if (stopped) {
		fprintf(stderr, "throughput: interrupted\n");
		exit(1);
	}
}

static double now_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		die("clock_gettime", NULL);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void join(char *dst, const char *dir, const char *name)
{
	int n = snprintf(dst, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX) {
		fprintf(stderr, "throughput: path too long: %s/%s\n", dir,
			name);
		exit(1);
	}
}

static void write_all(int fd, const char *buf, size_t len, const char *path)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR && !stopped)
				continue;
			die("write", path);
		}
		buf += n;
		len -= n;
	}
}

/* Reads path to its end with 1 MiB reads; the count must be expected. */
static void read_all(const char *path, char *buf, uint64_t expected)
{
	uint64_t total = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open", path);
	for (;;) {
		n = read(fd, buf, MIB);
		if (n < 0) {
			if (errno == EINTR && !stopped)
				continue;
			die("read", path);
		}
		if (n == 0)
			break;
		total += n;
	}
	if (close(fd) < 0)
		die("close", path);
	if (total != expected) {
		fprintf(stderr,
			"throughput: read %llu bytes from %s, expected %llu\n",
			(unsigned long long)total, path,
			(unsigned long long)expected);
		exit(1);
	}
}

/* Reads a small file whole; it must hold exactly want. */
static void expect_file(const char *path, const char *want)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open", path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		die("read", path);
	if (close(fd) < 0)
		die("close", path);
	buf[n] = '\0';
	if (strcmp(buf, want) != 0) {
		fprintf(stderr,
			"throughput: %s holds \"%s\", expected \"%s\"\n", path,
			buf, want);
		exit(1);
	}
}

/* The run through sessionfs; gives the produce and read times. */
static void through_fs(const char *mnt, long mib, char *buf, double *produce,
		       double *readback)
{
	char name[64], path[PATH_MAX], text[64];
	uint64_t bytes = (uint64_t)mib * MIB;
	struct stat st;
	double t0, t1;
	int fd;

	snprintf(name, sizeof(name), "sessions/bench-tp-%ld", (long)getpid());
	join(session, mnt, name);
	if (mkdir(session, 0755) < 0)
		die("mkdir", session);
	session_made = 1;

	snprintf(text, sizeof(text), "head -c %ldM /dev/zero\n", mib);
	join(path, session, "cmd");
	t0 = now_s();
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		die("open", path);
	write_all(fd, text, strlen(text), path);
	if (close(fd) < 0)
		die("close", path);
	t1 = now_s();
	*produce = t1 - t0;
	check_stopped();

	join(path, session, "exit");
	expect_file(path, "0\n");

	join(path, session, "stdout");
	if (stat(path, &st) < 0)
		die("stat", path);
	if ((uint64_t)st.st_size != bytes)
		fprintf(stderr,
			"throughput: warning: stat %s: size %lld, "
			"expected %llu\n",
			path, (long long)st.st_size, (unsigned long long)bytes);
	t0 = now_s();
	read_all(path, buf, bytes);
	t1 = now_s();
	*readback = t1 - t0;

	session_made = 0;
	if (rmdir(session) < 0)
		die("rmdir", session);
}

static int is_tmpfs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/*
 * Makes the baseline's directory where the daemon spools by default
 * (conf/conf.c): $XDG_RUNTIME_DIR when set, else the first tmpfs of /run
 * and /dev/shm, else /tmp.
 */
static const char *make_tmpdir(void)
{
	const char *bases[] = { getenv("XDG_RUNTIME_DIR"), "/run", "/dev/shm",
				"/tmp" };
	size_t i;

	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (!bases[i] || bases[i][0] != '/')
			continue;
		if (i > 0 && i < 3 && !is_tmpfs(bases[i]))
			continue;
		if (access(bases[i], W_OK) < 0)
			continue;
		join(tmpdir, bases[i], "sessionfs-bench-XXXXXX");
		if (!mkdtemp(tmpdir))
			continue;
		tmpdir_made = 1;
		join(tmpfile_path, tmpdir, "out");
		return bases[i];
	}
	fprintf(stderr, "throughput: no writable directory for the baseline\n");
	exit(1);
}

static const char *fs_type(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		die("statfs", path);
	switch (sf.f_type) {
	case 0x01021994:
		return "tmpfs";
	case 0xef53:
		return "ext4";
	case 0x58465342:
		return "xfs";
	case 0x9123683e:
		return "btrfs";
	case 0x794c7630:
		return "overlayfs";
	default:
		return "other";
	}
}

/* bash -c 'head -c NM /dev/zero > FILE'; it must exit 0. */
static void spawn_to_file(long mib)
{
	char script[PATH_MAX + 64];
	char *argv[] = { "bash", "-c", script, NULL };
	int n, status;
	pid_t pid;

	n = snprintf(script, sizeof(script), "head -c %ldM /dev/zero > '%s'",
		     mib, tmpfile_path);
	if (n < 0 || (size_t)n >= sizeof(script)) {
		fprintf(stderr, "throughput: path too long: %s\n",
			tmpfile_path);
		exit(1);
	}
	pid = fork();
	if (pid < 0)
		die("fork", NULL);
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR || stopped)
			die("waitpid", NULL);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "throughput: bash -c '%s': status 0x%x\n",
			script, status);
		exit(1);
	}
}

/* The baseline; gives the produce and read times and the directory. */
static const char *to_file(long mib, char *buf, double *produce,
			   double *readback)
{
	const char *base = make_tmpdir();
	double t0, t1;

	t0 = now_s();
	spawn_to_file(mib);
	t1 = now_s();
	*produce = t1 - t0;
	check_stopped();

	t0 = now_s();
	read_all(tmpfile_path, buf, (uint64_t)mib * MIB);
	t1 = now_s();
	*readback = t1 - t0;
	return base;
}

static long parse_mib(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 1 || n > MAX_MIB) {
		fprintf(stderr, "throughput: MiB must be 1 to %ld: %s\n",
			MAX_MIB, s);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	double fs_prod, fs_read, b_prod, b_read, fs_rate, b_rate;
	long mib = DEFAULT_MIB;
	struct sigaction sa;
	const char *base;
	char *buf;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: throughput MNT [MiB]\n");
		return 2;
	}
	if (argc == 3)
		mib = parse_mib(argv[2]);

	buf = malloc(MIB);
	if (!buf)
		die("malloc", NULL);

	/* No SA_RESTART: a signal interrupts the call, then we clean up. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGHUP, &sa, NULL) < 0)
		die("sigaction", NULL);
	if (atexit(clean_up) != 0) {
		fprintf(stderr, "throughput: atexit failed\n");
		return 1;
	}

	through_fs(argv[1], mib, buf, &fs_prod, &fs_read);
	check_stopped();
	base = to_file(mib, buf, &b_prod, &b_read);

	if (unlink(tmpfile_path) < 0)
		die("unlink", tmpfile_path);
	tmpdir_made = 0;
	if (rmdir(tmpdir) < 0)
		die("rmdir", tmpdir);

	fs_rate = mib / (fs_prod + fs_read);
	b_rate = mib / (b_prod + b_read);
	printf("throughput: detail: sessionfs produce %.3f s read %.3f s | "
	       "baseline produce %.3f s read %.3f s, file in %s (%s)\n",
	       fs_prod, fs_read, b_prod, b_read, base, fs_type(base));
	printf("throughput: sessionfs %ld MiB in %.2f s (%.0f MiB/s) | "
	       "bash -c to file in %s %.2f s (%.0f MiB/s) | "
	       "ratio %.2f (target >= 0.5)\n",
	       mib, fs_prod + fs_read, fs_rate, base, b_prod + b_read, b_rate,
	       fs_rate / b_rate);
	free(buf);
	if (fflush(stdout) == EOF)
		die("stdout", NULL);
	return 0;
}
