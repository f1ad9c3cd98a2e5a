/*
 * parked: the cost of blocked readers to everybody else. A read of `exit`
 * or `stream` while a run is active is a parked reply in the daemon (no
 * thread is held), so a thousand of them should leave a round trip on an
 * idle session about as fast as with none.
 *
 * It creates the session MNT/sessions/bench-park-PID-idle and times N runs
 * of `true` on it after 50 warm-up runs, each one being, as in
 * exec_latency: open(cmd, O_WRONLY|O_TRUNC), write "true\n", close (which
 * returns when the run has ended); open(exit), read, close, and a check
 * that the status is "0\n". That is the round trip with no blocked reader.
 *
 * Then it creates up to 50 sessions MNT/sessions/bench-park-PID-K, starts
 * `sleep 600` in each (from a forked child, since the close of cmd only
 * returns when the run ends) and waits until each status says "state
 * running". It forks READERS children, the even ones reading `exit` and
 * the odd ones `stream`, children 2j and 2j+1 of session j mod 50: a child
 * opens its file, writes one byte to a shared pipe, closes the pipe and
 * calls read(), which blocks until the run ends. Once every child has
 * written its byte, it waits until /proc/PID/syscall shows each of them in
 * read() (if /proc lets it look). Then it times N round trips on the idle
 * session again, after the same warm-up, checks that no reader returned
 * and that every sleep still runs, and prints both medians and 90th
 * percentiles in microseconds and the ratio of the medians, with readers
 * over without (the target is <= 1.2).
 *
 * Cleanup, on every exit() path and after SIGINT, SIGTERM or SIGHUP: it
 * sends SIGKILL to every child by its pid and reaps them (the kernel
 * interrupts their parked requests, and the time the daemon takes to let
 * them go is printed), writes "kill" to the ctl of each sleeping session,
 * reaps what is left and removes every session it made. Children die with
 * the parent (PR_SET_PDEATHSIG) if it is killed with SIGKILL; the sessions
 * are left then.
 *
 * The exit status is 0 whether the target is met or not (this is a
 * measurement); it is 1 on any error, and everything is removed then too.
 *
 * Build: meson (tests/bench/meson.build), or
 *	gcc -std=gnu11 -Wall -Wextra -Werror -O2 -o parked parked.c bench.c
 * Run on a mounted sessionfs (tests/bench/run.sh BUILD_DIR does it all):
 *	parked MNT [READERS] [N]	(READERS and N default to 1000)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define DEFAULT_READERS	 1000
#define DEFAULT_N	 1000
#define MAX_READERS	 30000L
#define MAX_N		 10000000L
#define PARK_SESSIONS	 50
#define RUNNING_WAIT_MS	 30000 /* for every sleep to be running */
#define READY_WAIT_MS	 30000 /* with no new ready byte */
#define IN_READ_WAIT_MS	 30000 /* for every reader to be in read() */
#define RELEASE_WAIT_MS	 5000  /* for SIGKILLed children to be reaped */
#define LEFTOVER_WAIT_MS 30000 /* for the rest, after ctl kill */
#define SLEEP_CMD	 "sleep 600\n"

struct sess {
	struct bench_session dir;
	int started; /* its writer was forked: kill its run */
};

static struct bench_session idle;
static struct sess parked[PARK_SESSIONS];
static int nparked;
/* Children: kids[k] writes the cmd of parked[k] (k < nparked), then the
 * readers; 0 once reaped. */
static pid_t *kids;
static long nkids;
static long live_kids;
static pid_t parent;
static int cleaned;
static double release_ms = -1;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL); /* EINTR: the caller looks at bench_stopped */
}

/* Writes text to dir/name in one open/write/close; returns 0 or an errno. */
static int write_file(const char *dir, const char *name, const char *text)
{
	size_t len = strlen(text);
	char path[PATH_MAX];
	ssize_t n;
	int fd, err = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= PATH_MAX)
		return ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return errno;
	n = write(fd, text, len);
	if (n < 0)
		err = errno;
	else if ((size_t)n != len)
		err = EIO;
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

/* Forgets a child that was reaped. */
static void forget(pid_t pid)
{
	long i;

	for (i = 0; i < nkids; i++) {
		if (kids[i] == pid) {
			kids[i] = 0;
			live_kids--;
			return;
		}
	}
}

/* Reaps children for up to ms milliseconds; returns how many are left. */
static long reap(long ms)
{
	double end = bench_now_us() + ms * 1e3;

	while (live_kids > 0) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);
		long i;

		if (pid < 0 && errno == ECHILD) {
			/* Nothing left to wait for, whatever we counted. */
			for (i = 0; i < nkids; i++)
				kids[i] = 0;
			live_kids = 0;
			break;
		}
		if (pid > 0) {
			forget(pid);
			continue;
		}
		if (bench_now_us() >= end)
			break;
		sleep_ms(1);
	}
	return live_kids;
}

/*
 * Kills and reaps every child, ends the sleeps, removes every session made.
 * Runs once; returns the number of things that went wrong.
 */
static int cleanup(void)
{
	int errs = 0;
	double t0;
	long i;
	int k, err;

	if (cleaned || getpid() != parent)
		return 0;
	cleaned = 1;

	t0 = bench_now_us();
	for (i = 0; i < nkids; i++) {
		if (kids[i] > 0 && kill(kids[i], SIGKILL) < 0 &&
		    errno != ESRCH) {
			fprintf(stderr, "parked: kill %ld: %s\n", (long)kids[i],
				strerror(errno));
			errs++;
		}
	}
	/* A killed child waits in the kernel until the daemon answers the
	 * interrupt of its parked request. */
	if (reap(RELEASE_WAIT_MS) == 0)
		release_ms = (bench_now_us() - t0) / 1e3;
	else
		fprintf(stderr,
			"parked: %ld children still blocked %d ms after "
			"SIGKILL; killing the runs\n",
			live_kids, RELEASE_WAIT_MS);

	for (k = 0; k < nparked; k++) {
		if (!parked[k].started)
			continue;
		err = write_file(parked[k].dir.path, "ctl", "kill\n");
		if (err && err != ESRCH) { /* ESRCH: nothing runs */
			fprintf(stderr, "parked: kill > %s/ctl: %s\n",
				parked[k].dir.path, strerror(err));
			errs++;
		}
	}
	if (reap(LEFTOVER_WAIT_MS) > 0) {
		fprintf(stderr, "parked: %ld children left unreaped\n",
			live_kids);
		errs++;
	}

	for (k = 0; k < nparked; k++) {
		if (bench_remove_session(&parked[k].dir) < 0)
			errs++;
	}
	if (bench_remove_session(&idle) < 0)
		errs++;
	return errs;
}

static void cleanup_at_exit(void)
{
	cleanup();
}

/* In a child: default signals, and die with the parent. */
static void child_setup(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
}

static pid_t fork_kid(void)
{
	pid_t pid = fork();

	if (pid < 0)
		bench_die("fork", NULL);
	if (pid > 0) {
		kids[nkids++] = pid;
		live_kids++;
	}
	return pid;
}

/* Starts `sleep 600` in s from a child, whose close of cmd blocks. */
static void start_sleep(struct sess *s)
{
	int err;

	if (fork_kid() > 0) {
		s->started = 1;
		return;
	}
	child_setup();
	err = write_file(s->dir.path, "cmd", SLEEP_CMD);
	if (err)
		dprintf(2, "parked: sleep 600 > %s/cmd: %s\n", s->dir.path,
			strerror(err));
	_exit(err ? 1 : 0);
}

/* Reads the status of parked[k] into buf; true if it says running. */
static int sleep_running(int k, char *buf, size_t size)
{
	static const char want[] = "state running\n";
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	bench_join(path, parked[k].dir.path, "status");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		bench_die("open", path);
	n = read(fd, buf, size - 1);
	if (n < 0)
		bench_die("read", path);
	if (close(fd) < 0)
		bench_die("close", path);
	buf[n] = '\0';
	return strncmp(buf, want, sizeof(want) - 1) == 0;
}

/* Waits until the status of parked[k] says "state running". */
static void wait_running(int k, double deadline)
{
	char buf[512];

	for (;;) {
		bench_check_stopped();
		if (sleep_running(k, buf, sizeof(buf)))
			return;
		if (strncmp(buf, "state none\n", 11) != 0 &&
		    strncmp(buf, "state queued\n", 13) != 0) {
			fprintf(stderr, "parked: %s: the sleep is over:\n%s",
				parked[k].dir.path, buf);
			exit(1);
		}
		if (kids[k] > 0 && waitpid(kids[k], NULL, WNOHANG) == kids[k]) {
			forget(kids[k]);
			fprintf(stderr, "parked: the writer of %s/cmd exited\n",
				parked[k].dir.path);
			exit(1);
		}
		if (bench_now_us() >= deadline) {
			fprintf(stderr,
				"parked: %s: not running after %d ms:\n%s",
				parked[k].dir.path, RUNNING_WAIT_MS, buf);
			exit(1);
		}
		sleep_ms(1);
	}
}

/* Forks reader i: open, a byte to ready_w, then a read() that blocks. */
static void start_reader(long i, int ready_r, int ready_w)
{
	const char *file = i % 2 ? "stream" : "exit";
	char path[PATH_MAX];
	char buf[64];
	int fd;

	if (fork_kid() > 0)
		return;
	child_setup();
	close(ready_r);
	snprintf(path, sizeof(path), "%s/%s",
		 parked[(i / 2) % nparked].dir.path, file);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		dprintf(2, "parked: open %s: %s\n", path, strerror(errno));
		_exit(1);
	}
	if (write(ready_w, "r", 1) != 1) {
		dprintf(2, "parked: ready pipe: %s\n", strerror(errno));
		_exit(1);
	}
	close(ready_w);
	if (read(fd, buf, sizeof(buf)) < 0)
		_exit(1);
	_exit(0);
}

/* Reads what is in the (nonblocking) ready pipe; returns -1 at EOF. */
static long drain(int fd)
{
	char buf[4096];
	long got = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			got += n;
			continue;
		}
		if (n == 0)
			return got ? got : -1;
		if (errno == EAGAIN || errno == EINTR)
			return got;
		bench_die("read", "ready pipe");
	}
}

/* Forks the readers and waits for every ready byte; returns the time. */
static double fork_readers(long readers)
{
	double t0 = bench_now_us();
	long ready = 0, got, i;
	struct pollfd pfd;
	int p[2];

	if (pipe(p) < 0)
		bench_die("pipe", NULL);
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
		bench_die("fcntl", "ready pipe");
	for (i = 0; i < readers; i++) {
		bench_check_stopped();
		start_reader(i, p[0], p[1]);
		/* The pipe holds 64 KiB: do not let the readers fill it. */
		got = drain(p[0]);
		if (got > 0)
			ready += got;
	}
	if (close(p[1]) < 0)
		bench_die("close", "ready pipe");

	/* EOF once every reader has written its byte and closed the pipe,
	 * or died before. */
	pfd.fd = p[0];
	pfd.events = POLLIN;
	for (;;) {
		int rc;

		bench_check_stopped();
		rc = poll(&pfd, 1, READY_WAIT_MS);
		if (rc < 0 && errno != EINTR)
			bench_die("poll", "ready pipe");
		if (rc == 0) {
			fprintf(stderr,
				"parked: %ld of %ld readers ready, none more "
				"in %d ms\n",
				ready, readers, READY_WAIT_MS);
			exit(1);
		}
		if (rc < 0)
			continue;
		got = drain(p[0]);
		if (got < 0)
			break;
		ready += got;
	}
	close(p[0]);
	if (ready != readers) {
		fprintf(stderr, "parked: only %ld of %ld readers got ready\n",
			ready, readers);
		exit(1);
	}
	return (bench_now_us() - t0) / 1e3;
}

/* 1: pid is blocked in read(); 0: not (yet); -1: /proc does not say. */
static int in_read(pid_t pid)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/syscall", (long)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (strncmp(buf, "running", 7) == 0)
		return 0;
	return strtol(buf, NULL, 10) == SYS_read;
}

/* Waits until /proc shows every reader in read(); false if it cannot. */
static int wait_in_read(void)
{
	double deadline = bench_now_us() + IN_READ_WAIT_MS * 1e3;
	long i = nparked;

	while (i < nkids) {
		int rc;

		bench_check_stopped();
		rc = in_read(kids[i]);
		if (rc < 0)
			return 0;
		if (rc > 0) {
			i++;
			continue;
		}
		if (bench_now_us() >= deadline) {
			fprintf(stderr,
				"parked: reader %ld not in read() after %d "
				"ms\n",
				(long)kids[i], IN_READ_WAIT_MS);
			exit(1);
		}
		sleep_ms(1);
	}
	return 1;
}

/* After the measurement: every child still blocked, every sleep running. */
static void check_still_parked(void)
{
	char buf[512];
	pid_t pid;
	int k;

	pid = waitpid(-1, NULL, WNOHANG);
	if (pid > 0) {
		forget(pid);
		fprintf(stderr,
			"parked: child %ld returned during the measurement\n",
			(long)pid);
		exit(1);
	}
	for (k = 0; k < nparked; k++) {
		if (!sleep_running(k, buf, sizeof(buf))) {
			fprintf(stderr,
				"parked: %s: the sleep ended during the "
				"measurement:\n%s",
				parked[k].dir.path, buf);
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	double idle_med, idle_p90, busy_med, busy_p90, fork_ms, deadline;
	long readers = DEFAULT_READERS, n = DEFAULT_N, on_exit;
	double *idle_us, *busy_us;
	char tag[16], released[64];
	int k, checked;

	bench_init("parked");
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: parked MNT [READERS] [N]\n");
		return 2;
	}
	if (argc >= 3)
		readers = bench_parse_count("READERS", argv[2], 1, MAX_READERS);
	if (argc == 4)
		n = bench_parse_count("N", argv[3], 1, MAX_N);
	/* Two readers (exit, stream) a session while there are few. */
	nparked = (readers + 1) / 2 < PARK_SESSIONS ? (int)(readers + 1) / 2 :
						      PARK_SESSIONS;

	idle_us = calloc(n, sizeof(*idle_us));
	busy_us = calloc(n, sizeof(*busy_us));
	kids = calloc(readers + nparked, sizeof(*kids));
	if (!idle_us || !busy_us || !kids)
		bench_die("calloc", NULL);

	parent = getpid();
	bench_trap(cleanup_at_exit);
	/* Nothing buffered may be copied into the children. */
	if (fflush(stdout) == EOF)
		bench_die("stdout", NULL);

	/* The round trip with no blocked reader. */
	bench_make_session(&idle, argv[1], "park", "idle");
	bench_round_trip_in(&idle);
	bench_measure(bench_round_trip, idle_us, n);

	/* The sleeps, then the readers blocked on them. */
	for (k = 0; k < nparked; k++) {
		bench_check_stopped();
		snprintf(tag, sizeof(tag), "%d", k);
		bench_make_session(&parked[k].dir, argv[1], "park", tag);
		start_sleep(&parked[k]);
	}
	deadline = bench_now_us() + RUNNING_WAIT_MS * 1e3;
	for (k = 0; k < nparked; k++)
		wait_running(k, deadline);
	fork_ms = fork_readers(readers);
	checked = wait_in_read();

	/* The same round trip with them. */
	bench_measure(bench_round_trip, busy_us, n);
	check_still_parked();

	if (cleanup() != 0)
		exit(1);

	bench_stats(idle_us, n, &idle_med, &idle_p90);
	bench_stats(busy_us, n, &busy_med, &busy_p90);
	on_exit = (readers + 1) / 2; /* the even ones */
	if (release_ms >= 0)
		snprintf(released, sizeof(released),
			 "SIGKILL let them go in %.1f ms", release_ms);
	else
		snprintf(released, sizeof(released),
			 "SIGKILL did not let them go (ctl kill did)");
	printf("parked: %d sessions in sleep 600, %ld readers blocked on exit "
	       "and %ld on stream (%s), forked in %.0f ms; %s\n",
	       nparked, on_exit, readers - on_exit,
	       checked ? "each seen in read()" : "not checked in /proc",
	       fork_ms, released);
	printf("parked: %ld blocked readers | round trip median %.1f us "
	       "p90 %.1f us (idle median %.1f us p90 %.1f us) | "
	       "ratio %.3f (target <= 1.2)\n",
	       readers, busy_med, busy_p90, idle_med, idle_p90,
	       busy_med / idle_med);
	free(idle_us);
	free(busy_us);
	free(kids);
	if (fflush(stdout) == EOF)
		bench_die("stdout", NULL);
	return 0;
}
