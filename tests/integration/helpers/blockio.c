/*
 * blockio.c - precise blocking-I/O probes for the sessionfs integration
 * tests (t24_blocking.sh). Compiled at test time.
 *
 *   blockio poll   FILE MS...   open FILE; for each MS: poll(2) for POLLIN
 *                               with timeout MS, then one read(2) if ready
 *   blockio select FILE MS...   the same with select(2)
 *   blockio intr   FILE         block in read(2) of FILE until a SIGINT
 *                               arrives (handler, no SA_RESTART)
 *
 * poll/select print one line per MS:
 *   timeout ELAPSED_MS
 *   ready ELAPSED_MS REVENTS NREAD DATA     (DATA escaped: \n, \xHH)
 *   error ELAPSED_MS WHAT ERRNO-TEXT
 * intr prints "blocked" once the file is open (just before read), then:
 *   eintr LATENCY_MS                        read returned EINTR, LATENCY_MS
 *                                           after the signal arrived
 *   read NREAD LATENCY_MS DATA              read returned data or EOF
 *                                           (LATENCY_MS -1: no signal seen)
 *   error WHAT ERRNO-TEXT
 * Exit status 0 unless the file cannot be opened or the usage is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void put_escaped(const char *b, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)b[i];

		if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\\')
			fputs("\\\\", stdout);
		else if (c < 0x20 || c >= 0x7f || c == ' ')
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static int do_wait(const char *mode, int fd, int argc, char **argv)
{
	char buf[65536];

	for (int i = 0; i < argc; i++) {
		int ms = atoi(argv[i]), rc, ev = 0;
		long long t0 = now_us();

		if (strcmp(mode, "poll") == 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			rc = poll(&p, 1, ms);
			ev = p.revents;
		} else {
			fd_set r;
			struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

			FD_ZERO(&r);
			FD_SET(fd, &r);
			rc = select(fd + 1, &r, NULL, NULL, &tv);
			if (rc > 0 && FD_ISSET(fd, &r))
				ev = POLLIN;
		}
		long long el = (now_us() - t0) / 1000;

		if (rc < 0) {
			printf("error %lld %s %s\n", el, mode, strerror(errno));
		} else if (rc == 0) {
			printf("timeout %lld\n", el);
		} else {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n < 0) {
				printf("error %lld read %s\n", el,
				       strerror(errno));
			} else {
				printf("ready %lld 0x%x %zd ", el, ev, n);
				put_escaped(buf, n);
				putchar('\n');
			}
		}
		fflush(stdout);
	}
	return 0;
}

static volatile sig_atomic_t got_sig;
static long long sig_us;

static void on_int(int sig)
{
	(void)sig;
	sig_us = now_us(); /* clock_gettime is async-signal-safe */
	got_sig = 1;
}

static int do_intr(int fd)
{
	struct sigaction sa;
	sigset_t set;
	char buf[65536];
	ssize_t n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_int;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: an interrupted read returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	printf("blocked\n");
	fflush(stdout);
	n = read(fd, buf, sizeof(buf));
	long long t = now_us();
	long long lat = got_sig ? (t - sig_us) / 1000 : -1;

	if (n < 0 && errno == EINTR) {
		printf("eintr %lld\n", lat);
	} else if (n < 0) {
		printf("error read %s\n", strerror(errno));
	} else {
		printf("read %zd %lld ", n, lat);
		put_escaped(buf, n);
		putchar('\n');
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int fd;

	if (argc < 3 || (strcmp(argv[1], "intr") && argc < 4)) {
		fprintf(stderr,
			"usage: blockio poll|select FILE MS... | intr FILE\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("error 0 open %s\n", strerror(errno));
		return 1;
	}
	if (strcmp(argv[1], "intr") == 0)
		return do_intr(fd);
	if (strcmp(argv[1], "poll") && strcmp(argv[1], "select")) {
		fprintf(stderr, "blockio: unknown mode %s\n", argv[1]);
		return 2;
	}
	return do_wait(argv[1], fd, argc - 3, argv + 3);
}
