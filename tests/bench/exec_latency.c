/*
 * exec_latency: the cost of one command run through sessionfs, against the
 * cost of spawning a shell for it.
 *
 * It creates the session MNT/sessions/bench-lat-PID, warms it up with 50
 * runs, then times N runs of `true` through the files, each one being:
 * open(cmd, O_WRONLY|O_TRUNC), write "true\n", close (which returns when the
 * run has ended); open(exit), read, close, and a check that the status is
 * "0\n". Then it times N spawns of `bash -c true` (fork, execvp, waitpid),
 * after the same warm-up. It prints the median and 90th percentile of each
 * in microseconds and the ratio of the medians, sessionfs/spawn (the target
 * is <= 0.25), and removes the session.
 *
 * The exit status is 0 whether the target is met or not (this is a
 * measurement); it is 1 on any error, and the session is removed then too.
 *
 * Build: meson (tests/bench/meson.build), or
 *	gcc -std=gnu11 -Wall -Wextra -Werror -O2 -o exec_latency exec_latency.c
 * Run on a mounted sessionfs (tests/bench/run.sh BUILD_DIR does it all):
 *	exec_latency MNT [N]		(N defaults to 2000)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WARMUP	  50
#define DEFAULT_N 2000
#define MAX_N	  10000000L

static char session[PATH_MAX];
static char cmd_path[PATH_MAX];
static char exit_path[PATH_MAX];
static int session_made;
static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

/* Removes the session if it is still there: on every exit() path. */
static void remove_session(void)
{
	if (!session_made)
		return;
	session_made = 0;
	if (rmdir(session) < 0)
		fprintf(stderr, "exec_latency: rmdir %s: %s\n", session,
			strerror(errno));
}

static void die(const char *what, const char *path)
{
	if (path)
		fprintf(stderr, "exec_latency: %s %s: %s\n", what, path,
			strerror(errno));
	else
		fprintf(stderr, "exec_latency: %s: %s\n", what,
			strerror(errno));
	exit(1);
}

static void check_stopped(void)
{
	if (stopped) {
		fprintf(stderr, "exec_latency: interrupted\n");
		exit(1);
	}
}

static double now_us(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		die("clock_gettime", NULL);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void join(char *dst, const char *dir, const char *name)
{
	int n = snprintf(dst, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX) {
		fprintf(stderr, "exec_latency: path too long: %s/%s\n", dir,
			name);
		exit(1);
	}
}

/* One run of `true` through the files; the status read must be "0\n". */
static void run_through_fs(void)
{
	static const char text[] = "true\n";
	char status[64];
	ssize_t n;
	int fd;

	fd = open(cmd_path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		die("open", cmd_path);
	n = write(fd, text, sizeof(text) - 1);
	if (n < 0)
		die("write", cmd_path);
	if (n != (ssize_t)sizeof(text) - 1) {
		fprintf(stderr, "exec_latency: short write to %s: %zd\n",
			cmd_path, n);
		exit(1);
	}
	if (close(fd) < 0)
		die("close", cmd_path);

	fd = open(exit_path, O_RDONLY);
	if (fd < 0)
		die("open", exit_path);
	n = read(fd, status, sizeof(status) - 1);
	if (n < 0)
		die("read", exit_path);
	if (close(fd) < 0)
		die("close", exit_path);
	status[n] = '\0';
	if (strcmp(status, "0\n") != 0) {
		fprintf(stderr, "exec_latency: %s holds \"%s\", not \"0\\n\"\n",
			exit_path, status);
		exit(1);
	}
}

/* One fork + execvp("bash", "-c", "true") + waitpid; it must exit 0. */
static void spawn_bash(void)
{
	static char *const argv[] = { "bash", "-c", "true", NULL };
	int status;
	pid_t pid;

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
		fprintf(stderr, "exec_latency: bash -c true: status 0x%x\n",
			status);
		exit(1);
	}
}

static void measure(void (*fn)(void), double *us, long n)
{
	long i;

	for (i = 0; i < WARMUP; i++) {
		check_stopped();
		fn();
	}
	for (i = 0; i < n; i++) {
		double t0;

		check_stopped();
		t0 = now_us();
		fn();
		us[i] = now_us() - t0;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts us[] and gives its median and 90th percentile (nearest rank). */
static void stats(double *us, long n, double *median, double *p90)
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

static long parse_count(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || end == s || *end || n < 1 || n > MAX_N) {
		fprintf(stderr, "exec_latency: N must be 1 to %ld: %s\n", MAX_N,
			s);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	double fs_med, fs_p90, sp_med, sp_p90;
	struct sigaction sa;
	double *fs_us, *sp_us;
	char name[64];
	long n = DEFAULT_N;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: exec_latency MNT [N]\n");
		return 2;
	}
	if (argc == 3)
		n = parse_count(argv[2]);

	fs_us = calloc(n, sizeof(*fs_us));
	sp_us = calloc(n, sizeof(*sp_us));
	if (!fs_us || !sp_us)
		die("calloc", NULL);

	/* No SA_RESTART: a signal interrupts the call, then we clean up. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 ||
	    sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGHUP, &sa, NULL) < 0)
		die("sigaction", NULL);
	if (atexit(remove_session) != 0) {
		fprintf(stderr, "exec_latency: atexit failed\n");
		return 1;
	}

	snprintf(name, sizeof(name), "sessions/bench-lat-%ld", (long)getpid());
	join(session, argv[1], name);
	join(cmd_path, session, "cmd");
	join(exit_path, session, "exit");
	if (mkdir(session, 0755) < 0)
		die("mkdir", session);
	session_made = 1;

	measure(run_through_fs, fs_us, n);
	measure(spawn_bash, sp_us, n);

	session_made = 0;
	if (rmdir(session) < 0)
		die("rmdir", session);

	stats(fs_us, n, &fs_med, &fs_p90);
	stats(sp_us, n, &sp_med, &sp_p90);
	printf("exec_latency: sessionfs median %.1f us p90 %.1f us | "
	       "bash -c spawn median %.1f us p90 %.1f us | "
	       "ratio %.3f (target <= 0.25)\n",
	       fs_med, fs_p90, sp_med, sp_p90, fs_med / sp_med);
	free(fs_us);
	free(sp_us);
	if (fflush(stdout) == EOF)
		die("stdout", NULL);
	return 0;
}
