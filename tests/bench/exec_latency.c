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
 * is <= 0.15), and removes the session.
 *
 * With -i it then also measures them interleaved: N rounds of one run
 * through the files followed by one spawn, after 50 warm-up rounds, and
 * prints that ratio too. In separate phases each side has the CPUs as it
 * left them (the daemon and the shell spinning, caches warm); interleaved,
 * each run follows a spawn, as in a client that does both.
 *
 * The exit status is 0 whether the target is met or not (this is a
 * measurement); it is 1 on any error, and the session is removed then too.
 *
 * Build: meson (tests/bench/meson.build), or
 *	gcc -std=gnu11 -Wall -Wextra -Werror -O2 -o exec_latency exec_latency.c \
 *		bench.c
 * Run on a mounted sessionfs (tests/bench/run.sh BUILD_DIR does it all):
 *	exec_latency [-i] MNT [N]	(N defaults to 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench.h"

#define DEFAULT_N 2000
#define MAX_N	  10000000L
#define WARMUP	  50

static struct bench_session session;

/* Removes the session if it is still there: on every exit() path. */
static void remove_session(void)
{
	bench_remove_session(&session);
}

/* One spawn of `bash -c true`; it must exit 0. */
static void spawn_bash(void)
{
	int status = bench_spawn_bash("true");

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "exec_latency: bash -c true: status 0x%x\n",
			status);
		exit(1);
	}
}

/* One round trip and one spawn, n times, each timed into fs_us, sp_us. */
static void measure_interleaved(double *fs_us, double *sp_us, long n)
{
	double t0;
	long i;

	for (i = 0; i < WARMUP; i++) {
		bench_check_stopped();
		bench_round_trip();
		spawn_bash();
	}
	for (i = 0; i < n; i++) {
		bench_check_stopped();
		t0 = bench_now_us();
		bench_round_trip();
		fs_us[i] = bench_now_us() - t0;
		t0 = bench_now_us();
		spawn_bash();
		sp_us[i] = bench_now_us() - t0;
	}
}

/* Sorts both samples and prints one line about them, named how. */
static void report(const char *how, double *fs_us, double *sp_us, long n)
{
	double fs_med, fs_p90, sp_med, sp_p90;

	bench_stats(fs_us, n, &fs_med, &fs_p90);
	bench_stats(sp_us, n, &sp_med, &sp_p90);
	printf("exec_latency: %ssessionfs median %.1f us p90 %.1f us | "
	       "bash -c spawn median %.1f us p90 %.1f us | "
	       "ratio %.3f (target <= 0.15)\n",
	       how, fs_med, fs_p90, sp_med, sp_p90, fs_med / sp_med);
}

int main(int argc, char **argv)
{
	double *fs_us, *sp_us, *fs2_us = NULL, *sp2_us = NULL;
	long n = DEFAULT_N;
	int interleave = argc > 1 && strcmp(argv[1], "-i") == 0;

	bench_init("exec_latency");
	argc -= interleave;
	argv += interleave;
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: exec_latency [-i] MNT [N]\n");
		return 2;
	}
	if (argc == 3)
		n = bench_parse_count("N", argv[2], 1, MAX_N);

	fs_us = calloc(n, sizeof(*fs_us));
	sp_us = calloc(n, sizeof(*sp_us));
	if (!fs_us || !sp_us)
		bench_die("calloc", NULL);

	bench_trap(remove_session);

	bench_make_session(&session, argv[1], "lat", NULL);
	bench_round_trip_in(&session);

	bench_measure(bench_round_trip, fs_us, n);
	bench_measure(spawn_bash, sp_us, n);
	if (interleave) {
		fs2_us = calloc(n, sizeof(*fs2_us));
		sp2_us = calloc(n, sizeof(*sp2_us));
		if (!fs2_us || !sp2_us)
			bench_die("calloc", NULL);
		measure_interleaved(fs2_us, sp2_us, n);
	}

	if (bench_remove_session(&session) < 0)
		exit(1);

	report(interleave ? "separate phases: " : "", fs_us, sp_us, n);
	if (interleave)
		report("interleaved: ", fs2_us, sp2_us, n);
	free(fs_us);
	free(sp_us);
	free(fs2_us);
	free(sp2_us);
	if (fflush(stdout) == EOF)
		bench_die("stdout", NULL);
	return 0;
}
