/*
 * throughput: how fast a large output goes through sessionfs, against a
 * shell writing the same output to a file and reading it back; then N
 * sessions printing at once against one printing as much alone, and how
 * fast another session answers while one prints flat out.
 *
 * 1. It creates the session MNT/sessions/bench-tp-PID and runs
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
 * >= 0.8), and removes the session.
 *
 * 2. N sessions (made, and each run `true` once, before the clock starts)
 * print PAR_MiB each at once, each read back by a thread of its own as in
 * 1, against one session printing N * PAR_MiB and read back alone: the
 * time until the last of the N has read its stdout over the time of the
 * one (the target is <= 1.5).
 *
 * 3. While a session prints MiB flat out, another answers: a listing of
 * its directory with a read of its status, and a run of `true` in it
 * (cmd, then exit), each timed, against the same with nothing printing.
 *
 * The exit status is 0 whether the targets are met or not (this is a
 * measurement); it is 1 on any error, and the sessions and file are
 * removed then too.
 *
 * Build: meson (tests/bench/meson.build), or
 *	gcc -std=gnu11 -Wall -Wextra -Werror -O2 -pthread -o throughput \
 *		throughput.c bench.c
 * Run on a mounted sessionfs (tests/bench/run.sh BUILD_DIR does it all):
 *	throughput MNT [MiB [N PAR_MiB]]	(1024, 8 and 256 by default)
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
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
#define MAX_PAR	    64	/* sessions printing at once, at most */
#define SAMPLES	    200 /* timings of each kind in part 3, at most */

static struct bench_session session;
/* part 2: the N sessions, then the one alone; part 3: the printer and the
 * other */
static struct bench_session par[MAX_PAR + 1];
static struct bench_session flood, other;
static pthread_t par_threads[MAX_PAR];
static char tmpdir[PATH_MAX];
static char tmpfile_path[PATH_MAX];
static int tmpdir_made;

/* Removes what is still there: on every exit() path. */
static void clean_up(void)
{
	bench_remove_session(&session);
	for (int i = 0; i <= MAX_PAR; i++)
		bench_remove_session(&par[i]);
	bench_remove_session(&flood);
	bench_remove_session(&other);
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

/* Runs head -c MiB in s: returns when the run has ended. */
static void head_in(const struct bench_session *s, long mib)
{
	char path[PATH_MAX], text[64];
	int fd;

	snprintf(text, sizeof(text), "head -c %ldM /dev/zero\n", mib);
	bench_join(path, s->path, "cmd");
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		bench_die("open", path);
	write_all(fd, text, strlen(text), path);
	if (close(fd) < 0)
		bench_die("close", path);
}

/* head -c MiB through s's cmd, then its stdout read back; gives the
 * produce and read times (buf: 1 MiB of this thread's). */
static void print_in(const struct bench_session *s, long mib, char *buf,
		     double *produce, double *readback)
{
	char path[PATH_MAX];
	uint64_t bytes = (uint64_t)mib * MIB;
	struct stat st;
	double t0 = now_s();

	head_in(s, mib);
	*produce = now_s() - t0;
	bench_check_stopped();

	bench_join(path, s->path, "exit");
	expect_file(path, "0\n");

	bench_join(path, s->path, "stdout");
	if (stat(path, &st) < 0)
		bench_die("stat", path);
	if ((uint64_t)st.st_size != bytes)
		fprintf(stderr,
			"throughput: warning: stat %s: size %lld, "
			"expected %llu\n",
			path, (long long)st.st_size, (unsigned long long)bytes);
	t0 = now_s();
	read_all(path, buf, bytes);
	*readback = now_s() - t0;
}

/* Part 1 through sessionfs; gives the produce and read times. */
static void through_fs(const char *mnt, long mib, char *buf, double *produce,
		       double *readback)
{
	bench_make_session(&session, mnt, "tp", NULL);
	print_in(&session, mib, buf, produce, readback);
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

/* Makes par[i] and runs `true` in it once, so that its shell is up. */
static void warm_session(const char *mnt, int i, const char *tag)
{
	char name[32];

	snprintf(name, sizeof(name), "%s%d", tag, i);
	bench_make_session(&par[i], mnt, "tp", name);
	bench_round_trip_in(&par[i]);
	bench_round_trip();
}

struct printer {
	int i;	     /* its session, par[i] */
	long mib;    /* what it prints */
	double t0;   /* when all started */
	double done; /* seconds from t0 to the end of its read */
};

static void *printer_main(void *arg)
{
	struct printer *p = arg;
	double produce, readback;
	char *buf = malloc(MIB);

	if (!buf)
		bench_die("malloc", NULL);
	print_in(&par[p->i], p->mib, buf, &produce, &readback);
	p->done = now_s() - p->t0;
	free(buf);
	return NULL;
}

/* Part 2: n sessions printing mib each at once, then one printing
 * n * mib alone; gives both times (the slowest of the n) and the
 * quickest of the n in *first. */
static void at_once(const char *mnt, int n, long mib, char *buf, double *many,
		    double *first, double *alone)
{
	struct printer ps[MAX_PAR];
	double produce, readback, t0;

	for (int i = 0; i < n; i++)
		warm_session(mnt, i, "p");
	t0 = now_s();
	for (int i = 0; i < n; i++) {
		ps[i] = (struct printer){ .i = i, .mib = mib, .t0 = t0 };
		if (pthread_create(&par_threads[i], NULL, printer_main,
				   &ps[i]) != 0)
			bench_die("pthread_create", NULL);
	}
	*many = 0;
	*first = 1e9;
	for (int i = 0; i < n; i++) {
		pthread_join(par_threads[i], NULL);
		*many = ps[i].done > *many ? ps[i].done : *many;
		*first = ps[i].done < *first ? ps[i].done : *first;
	}
	for (int i = 0; i < n; i++)
		if (bench_remove_session(&par[i]) < 0)
			exit(1);
	bench_check_stopped();
	warm_session(mnt, MAX_PAR, "one");
	print_in(&par[MAX_PAR], n * mib, buf, &produce, &readback);
	*alone = produce + readback;
	if (bench_remove_session(&par[MAX_PAR]) < 0)
		exit(1);
}

/* A listing of other's directory and a read of its status (µs). */
static double list_other(void)
{
	char path[PATH_MAX];
	double t0 = bench_now_us();
	DIR *d = opendir(other.path);
	char text[4096];
	ssize_t n;
	int fd;

	if (!d)
		bench_die("opendir", other.path);
	errno = 0;
	while (readdir(d))
		;
	if (errno)
		bench_die("readdir", other.path);
	closedir(d);
	bench_join(path, other.path, "status");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		bench_die("open", path);
	n = read(fd, text, sizeof(text));
	if (n <= 0 || close(fd) < 0)
		bench_die("read", path);
	return bench_now_us() - t0;
}

/* A run of `true` in other (µs). */
static double run_other(void)
{
	double t0 = bench_now_us();

	bench_round_trip();
	return bench_now_us() - t0;
}

struct flooder {
	long mib;
	int done; /* set (atomically) when its close of cmd returned */
};

static void *flood_main(void *arg)
{
	struct flooder *f = arg;

	head_in(&flood, f->mib);
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Times listings into l[] and runs into r[], 5 ms apart, n of each or
 * until *stop is set; returns how many. */
static long sample(double *l, double *r, long n, const int *stop)
{
	long k;

	for (k = 0; k < n; k++) {
		if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			break;
		l[k] = list_other();
		r[k] = run_other();
		usleep(5000);
	}
	bench_check_stopped();
	return k;
}

/* Waits (at most 10 s) until the flood's stdout holds 1 MiB. */
static void wait_printing(void)
{
	char path[PATH_MAX];
	struct stat st;

	bench_join(path, flood.path, "stdout");
	for (int i = 0; i < 10000; i++) {
		if (stat(path, &st) == 0 && st.st_size >= MIB)
			return;
		usleep(1000);
	}
	fprintf(stderr, "throughput: %s: nothing printed in 10 s\n", path);
	exit(1);
}

static void report(const char *when, double *l, double *r, long n)
{
	double lm, l90, rm, r90;

	if (n == 0) {
		printf("throughput: %s: no sample\n", when);
		return;
	}
	bench_stats(l, n, &lm, &l90);
	bench_stats(r, n, &rm, &r90);
	printf("throughput: %s: listing + status %.0f us (p90 %.0f, max "
	       "%.0f), run of true %.0f us (p90 %.0f, max %.0f), %ld of "
	       "each\n",
	       when, lm, l90, l[n - 1], rm, r90, r[n - 1], n);
}

/* Part 3: another session answers while one prints mib flat out. */
static void while_printing(const char *mnt, long mib)
{
	static double ql[SAMPLES], qr[SAMPLES], fl[SAMPLES], fr[SAMPLES];
	struct flooder f = { .mib = mib };
	char when[64];
	long nq, nf;
	pthread_t t;

	bench_make_session(&flood, mnt, "tp", "flood");
	bench_make_session(&other, mnt, "tp", "other");
	bench_round_trip_in(&flood);
	bench_round_trip();
	bench_round_trip_in(&other);
	bench_round_trip();
	nq = sample(ql, qr, 50, NULL);
	if (pthread_create(&t, NULL, flood_main, &f) != 0)
		bench_die("pthread_create", NULL);
	wait_printing();
	nf = sample(fl, fr, SAMPLES, &f.done);
	pthread_join(t, NULL);
	if (bench_remove_session(&flood) < 0 ||
	    bench_remove_session(&other) < 0)
		exit(1);
	report("another session, quiet", ql, qr, nq);
	snprintf(when, sizeof(when), "another session while one prints %ld MiB",
		 mib);
	report(when, fl, fr, nf);
}

/* Part 1, sessionfs then the baseline, and its lines. */
static void against_file(const char *mnt, long mib, char *buf)
{
	double fs_prod, fs_read, b_prod, b_read, fs_rate, b_rate;
	const char *base;

	through_fs(mnt, mib, buf, &fs_prod, &fs_read);
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
	       "ratio %.2f (target >= 0.8)\n",
	       mib, fs_prod + fs_read, fs_rate, base, b_prod + b_read, b_rate,
	       fs_rate / b_rate);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	long mib = DEFAULT_MIB, n = 8, par_mib = 256;
	double many, first, alone;
	char *buf;

	bench_init("throughput");
	if (argc != 2 && argc != 3 && argc != 5) {
		fprintf(stderr, "usage: throughput MNT [MiB [N PAR_MiB]]\n");
		return 2;
	}
	if (argc >= 3)
		mib = bench_parse_count("MiB", argv[2], 1, MAX_MIB);
	if (argc == 5) {
		n = bench_parse_count("N", argv[3], 1, MAX_PAR);
		par_mib = bench_parse_count("PAR_MiB", argv[4], 1, MAX_MIB / n);
	}

	buf = malloc(MIB);
	if (!buf)
		bench_die("malloc", NULL);

	bench_trap(clean_up);

	against_file(argv[1], mib, buf);
	at_once(argv[1], (int)n, par_mib, buf, &many, &first, &alone);
	printf("throughput: %ld sessions printing %ld MiB each at once, read "
	       "back at once: %.2f s (the first done in %.2f s) | one session "
	       "printing %ld MiB: %.2f s | ratio %.2f (target <= 1.5)\n",
	       n, par_mib, many, first, n * par_mib, alone, many / alone);
	fflush(stdout);
	while_printing(argv[1], mib);
	free(buf);
	if (fflush(stdout) == EOF)
		bench_die("stdout", NULL);
	return 0;
}
