/*
 * bench: the helpers the sessionfs benchmarks share (see bench.h). It owns
 * the program name in messages, the stop flag and its signal handlers, the
 * paths of the session the round trip uses, and the warm-up count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define WARMUP 50

volatile sig_atomic_t bench_stopped;

static const char *prog = "bench";
static char cmd_path[PATH_MAX];
static char exit_path[PATH_MAX];

void bench_init(const char *name)
{
	prog = name;
}

void bench_die(const char *what, const char *path)
{
	if (path)
		fprintf(stderr, "%s: %s %s: %s\n", prog, what, path,
			strerror(errno));
	else
		fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

void bench_check_stopped(void)
{
	if (bench_stopped) {
		fprintf(stderr, "%s: interrupted\n", prog);
		exit(1);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	bench_stopped = 1;
}

void bench_trap(void (*clean_up)(void))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGHUP, &sa, NULL) < 0)
		bench_die("sigaction", NULL);
	if (atexit(clean_up) != 0) {
		fprintf(stderr, "%s: atexit failed\n", prog);
		exit(1);
	}
}

double bench_now_us(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		bench_die("clock_gettime", NULL);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void bench_join(char *dst, const char *dir, const char *name)
{
	int n = snprintf(dst, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX) {
		fprintf(stderr, "%s: path too long: %s/%s\n", prog, dir, name);
		exit(1);
	}
}

long bench_parse_count(const char *what, const char *s, long min, long max)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < min || n > max) {
		fprintf(stderr, "%s: %s must be %ld to %ld: %s\n", prog, what,
			min, max, s);
		exit(2);
	}
	return n;
}

void bench_make_session(struct bench_session *s, const char *mnt,
			const char *kind, const char *tag)
{
	char name[96];

	if (tag)
		snprintf(name, sizeof(name), "sessions/bench-%s-%ld-%s", kind,
			 (long)getpid(), tag);
	else
		snprintf(name, sizeof(name), "sessions/bench-%s-%ld", kind,
			 (long)getpid());
	bench_join(s->path, mnt, name);
	if (mkdir(s->path, 0755) < 0)
		bench_die("mkdir", s->path);
	s->made = 1;
}

int bench_remove_session(struct bench_session *s)
{
	if (!s->made)
		return 0;
	s->made = 0;
	if (rmdir(s->path) < 0) {
		fprintf(stderr, "%s: rmdir %s: %s\n", prog, s->path,
			strerror(errno));
		return -1;
	}
	return 0;
}

void bench_round_trip_in(const struct bench_session *s)
{
	bench_join(cmd_path, s->path, "cmd");
	bench_join(exit_path, s->path, "exit");
}

void bench_round_trip(void)
{
	static const char text[] = "true\n";
	char status[64];
	ssize_t n;
	int fd;

	fd = open(cmd_path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		bench_die("open", cmd_path);
	n = write(fd, text, sizeof(text) - 1);
	if (n < 0)
		bench_die("write", cmd_path);
	if (n != (ssize_t)sizeof(text) - 1) {
		fprintf(stderr, "%s: short write to %s: %zd\n", prog, cmd_path,
			n);
		exit(1);
	}
	if (close(fd) < 0)
		bench_die("close", cmd_path);

	fd = open(exit_path, O_RDONLY);
	if (fd < 0)
		bench_die("open", exit_path);
	n = read(fd, status, sizeof(status) - 1);
	if (n < 0)
		bench_die("read", exit_path);
	if (close(fd) < 0)
		bench_die("close", exit_path);
	status[n] = '\0';
	if (strcmp(status, "0\n") != 0) {
		fprintf(stderr, "%s: %s holds \"%s\", not \"0\\n\"\n", prog,
			exit_path, status);
		exit(1);
	}
}

int bench_spawn_bash(const char *script)
{
	char *argv[] = { "bash", "-c", (char *)script, NULL };
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		bench_die("fork", NULL);
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR || bench_stopped)
			bench_die("waitpid", NULL);
	}
	return status;
}

void bench_measure(void (*fn)(void), double *us, long n)
{
	long i;

	for (i = 0; i < WARMUP; i++) {
		bench_check_stopped();
		fn();
	}
	for (i = 0; i < n; i++) {
		double t0;

		bench_check_stopped();
		t0 = bench_now_us();
		fn();
		us[i] = bench_now_us() - t0;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stats(double *us, long n, double *median, double *p90)
{
	long rank;

	qsort(us, n, sizeof(*us), cmp_double);
	if (n % 2)
		*median = us[n / 2];
	else
		*median = (us[n / 2 - 1] + us[n / 2]) / 2;
	rank = (9 * n + 9) / 10; /* ceil(0.9 n), 1 <= rank <= n */
	*p90 = us[rank - 1];
}
