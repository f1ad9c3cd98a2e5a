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
 * the first tmpfs of /run and /dev/shm, else /tmp), then FILE is read back
 * with 1 MiB reads and removed. It prints the throughput of both (MiB over
 * produce + read time) and the ratio sessionfs/baseline (the target is
 * >= 0.5), and removes the session.
 *
 * The exit status is 0 whether the target is met or not (this is a
 * measurement); it is 1 on any error, and the session and file are
 * removed then too.
 *
 * Build: meson (tests/bench/meson.build), or
 *	gcc -std=gnu11 -Wall -Wextra -Werror -O2 -o throughput throughput.c \
 *		bench.c
 * Run on a mounted sessionfs (tests/bench/run.sh BUILD_DIR does it all):
 *	throughput MNT [MiB]		(MiB defaults to 1024)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define MIB	    (1024 * 1024)
#define DEFAULT_MIB 1024
#define MAX_MIB	    (1024L * 1024)

static struct bench_session session;
static char tmpdir[PATH_MAX];
static char tmpfile_path[PATH_MAX];
static int tmpdir_made;

/* Removes what is still there: on every exit() path. */
static void clean_up(void)
{
	bench_remove_session(&session);
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

/* The monotonic clock in seconds. */
static double now_s(void)
{
	return bench_now_us() / 1e6;
}

static void write_all(int fd, const char *buf, size_t len, const char *path)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR && !bench_stopped)
				continue;
			bench_die("write", path);
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
		bench_die("open", path);
	for (;;) {
		n = read(fd, buf, MIB);
		if (n < 0) {
			if (errno == EINTR && !bench_stopped)
				continue;
			bench_die("read", path);
		}
		if (n == 0)
			break;
		total += n;
	}
	if (close(fd) < 0)
		bench_die("close", path);
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
		bench_die("open", path);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		bench_die("read", path);
	if (close(fd) < 0)
		bench_die("close", path);
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
	char path[PATH_MAX], text[64];
	uint64_t bytes = (uint64_t)mib * MIB;
	struct stat st;
	double t0, t1;
	int fd;

	bench_make_session(&session, mnt, "tp", NULL);

	snprintf(text, sizeof(text), "head -c %ldM /dev/zero\n", mib);
	bench_join(path, session.path, "cmd");
	t0 = now_s();
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		bench_die("open", path);
	write_all(fd, text, strlen(text), path);
	if (close(fd) < 0)
		bench_die("close", path);
	t1 = now_s();
	*produce = t1 - t0;
	bench_check_stopped();

	bench_join(path, session.path, "exit");
	expect_file(path, "0\n");

	bench_join(path, session.path, "stdout");
	if (stat(path, &st) < 0)
		bench_die("stat", path);
	if ((uint64_t)st.st_size != bytes)
		fprintf(stderr,
			"throughput: warning: stat %s: size %lld, "
			"expected %llu\n",
			path, (long long)st.st_size, (unsigned long long)bytes);
	t0 = now_s();
	read_all(path, buf, bytes);
	t1 = now_s();
	*readback = t1 - t0;

	if (bench_remove_session(&session) < 0)
		exit(1);
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
		bench_join(tmpdir, bases[i], "sessionfs-bench-XXXXXX");
		if (!mkdtemp(tmpdir))
			continue;
		tmpdir_made = 1;
		bench_join(tmpfile_path, tmpdir, "out");
		return bases[i];
	}
	fprintf(stderr, "throughput: no writable directory for the baseline\n");
	exit(1);
}

static const char *fs_type(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		bench_die("statfs", path);
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
	int n, status;

	n = snprintf(script, sizeof(script), "head -c %ldM /dev/zero > '%s'",
		     mib, tmpfile_path);
	if (n < 0 || (size_t)n >= sizeof(script)) {
		fprintf(stderr, "throughput: path too long: %s\n",
			tmpfile_path);
		exit(1);
	}
	status = bench_spawn_bash(script);
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
	bench_check_stopped();

	t0 = now_s();
	read_all(tmpfile_path, buf, (uint64_t)mib * MIB);
	t1 = now_s();
	*readback = t1 - t0;
	return base;
}

int main(int argc, char **argv)
{
	double fs_prod, fs_read, b_prod, b_read, fs_rate, b_rate;
	long mib = DEFAULT_MIB;
	const char *base;
	char *buf;

	bench_init("throughput");
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: throughput MNT [MiB]\n");
		return 2;
	}
	if (argc == 3)
		mib = bench_parse_count("MiB", argv[2], 1, MAX_MIB);

	buf = malloc(MIB);
	if (!buf)
		bench_die("malloc", NULL);

	bench_trap(clean_up);

	through_fs(argv[1], mib, buf, &fs_prod, &fs_read);
	bench_check_stopped();
	base = to_file(mib, buf, &b_prod, &b_read);

	if (unlink(tmpfile_path) < 0)
		bench_die("unlink", tmpfile_path);
	tmpdir_made = 0;
	if (rmdir(tmpdir) < 0)
		bench_die("rmdir", tmpdir);

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
		bench_die("stdout", NULL);
	return 0;
}
