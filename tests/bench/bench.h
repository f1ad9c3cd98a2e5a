/*
 * bench: what the sessionfs benchmarks (exec_latency, throughput, parked)
 * share: the program name in messages, dying on errors, the stop signals
 * and the exit cleanup, the clock, paths, counts on the command line, the
 * sessions they make and remove, the round trip of `true` through cmd and
 * exit, spawning `bash -c`, and the warm-up, measurement and statistics.
 */
#ifndef BENCH_H
#define BENCH_H

#include <limits.h>
#include <signal.h>

/* Set by SIGINT, SIGTERM and SIGHUP once bench_trap() has caught them. */
extern volatile sig_atomic_t bench_stopped;

/* A session directory; made is set once mkdir succeeded. */
struct bench_session {
	char path[PATH_MAX];
	int made;
};

/* Sets the program name that starts every message; call it first. */
void bench_init(const char *name);
/* Prints "NAME: what [path]: strerror(errno)" and exits 1. */
void bench_die(const char *what, const char *path);
/* Exits 1 with "NAME: interrupted" if a stop signal came. */
void bench_check_stopped(void);
/*
 * Catches SIGINT, SIGTERM and SIGHUP without SA_RESTART (a signal
 * interrupts the call, then the program cleans up) and has clean_up run
 * on every exit() path.
 */
void bench_trap(void (*clean_up)(void));
/* The monotonic clock in microseconds. */
double bench_now_us(void);
/* dst = dir/name (PATH_MAX bytes); exits 1 if that is too long. */
void bench_join(char *dst, const char *dir, const char *name);
/* s as a count from min to max; exits 2 with a message naming what. */
long bench_parse_count(const char *what, const char *s, long min, long max);

/* mkdir MNT/sessions/bench-KIND-PID (-TAG if tag is not NULL). */
void bench_make_session(struct bench_session *s, const char *mnt,
			const char *kind, const char *tag);
/* rmdir s if it was made (and forgets it); -1 after a message if it fails. */
int bench_remove_session(struct bench_session *s);

/* The session whose cmd and exit bench_round_trip() uses. */
void bench_round_trip_in(const struct bench_session *s);
/* One run of `true` through the files; the status read must be "0\n". */
void bench_round_trip(void);
/* fork + execvp("bash", "-c", script) + waitpid; gives the wait status. */
int bench_spawn_bash(const char *script);
/* 50 warm-up calls of fn, then n timed ones into us[] (microseconds). */
void bench_measure(void (*fn)(void), double *us, long n);
/* Sorts us[] and gives its median and 90th percentile (nearest rank). */
void bench_stats(double *us, long n, double *median, double *p90);

#endif
