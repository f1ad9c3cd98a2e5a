/* test_cpulat.c - the CPU latency hold of cpulat.c against a file in place
 * of /dev/cpu_dma_latency: 0 written at the first request, nothing more
 * while requests keep coming, "no constraint" once they stop for the hold
 * time, and a device that is missing or refuses a write. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include "sessions/core/cpulat.h"
#include "sessions/core/loop.h"
#include "unit.h"

static char path[64];
static struct loop_timer stop_t;

static void on_stop(struct loop_timer *t)
{
	(void)t;
	loop_stop();
}

/* Runs the loop (and so cpulat's timer) for ms. */
static void run_for(int64_t ms)
{
	loop_timer_add(&stop_t, loop_now_ms() + ms, on_stop, NULL);
	ck_assert_int_eq(loop_run(), 0);
}

/* The values written to the file so far, in *v; returns their count. */
static size_t written(int32_t *v, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, v, cap * sizeof(*v));
	close(fd);
	ck_assert_int_ge(n, 0);
	ck_assert_int_eq(n % (ssize_t)sizeof(*v), 0);
	return (size_t)n / sizeof(*v);
}

static void setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/sfs-cpulat.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(loop_init(), 0);
}

static void teardown(void)
{
	cpulat_fini();
	unlink(path);
}

START_TEST(hold_then_let_go)
{
	int32_t v[8];

	ck_assert_int_eq(cpulat_init(path, 40), 0);
	ck_assert_uint_eq(written(v, 8), 0); /* opening holds nothing */
	cpulat_touch();
	ck_assert_uint_eq(written(v, 8), 1);
	ck_assert_int_eq(v[0], 0);
	cpulat_touch(); /* held already: no second write */
	ck_assert_uint_eq(written(v, 8), 1);
	ck_assert_uint_eq(cpulat_holds(), 1);
	run_for(120);
	ck_assert_uint_eq(written(v, 8), 2);
	ck_assert_int_eq(v[1], CPULAT_NONE);
	cpulat_touch(); /* a request after the quiet time holds again */
	ck_assert_uint_eq(written(v, 8), 3);
	ck_assert_int_eq(v[2], 0);
	ck_assert_uint_eq(cpulat_holds(), 2);
}
END_TEST

START_TEST(requests_keep_it_held)
{
	int32_t v[8];

	/* a hold time that a loaded machine cannot overrun between two
	 * touches 50 ms apart */
	ck_assert_int_eq(cpulat_init(path, 2000), 0);
	cpulat_touch();
	for (int i = 0; i < 4; i++) {
		run_for(50);
		cpulat_touch();
	}
	ck_assert_uint_eq(written(v, 8), 1);
	run_for(2500);
	ck_assert_uint_eq(written(v, 8), 2);
	ck_assert_int_eq(v[1], CPULAT_NONE);
	ck_assert_uint_eq(cpulat_holds(), 1);
}
END_TEST

START_TEST(off_when_zero)
{
	int32_t v[8];

	ck_assert_int_eq(cpulat_init(path, 0), 0);
	cpulat_touch();
	run_for(20);
	ck_assert_uint_eq(written(v, 8), 0);
	ck_assert_uint_eq(cpulat_holds(), 0);
}
END_TEST

START_TEST(missing_device)
{
	ck_assert_int_eq(cpulat_init("/nonexistent/cpu_dma_latency", 10), 0);
	cpulat_touch();
	run_for(30);
	ck_assert_uint_eq(cpulat_holds(), 0);
}
END_TEST

/* A write that fails (ENOSPC) lets the request go with its descriptor:
 * nothing is held, and later requests do not try again. */
START_TEST(refused_write)
{
	ck_assert_int_eq(cpulat_init("/dev/full", 10), 0);
	cpulat_touch();
	cpulat_touch();
	run_for(30);
	ck_assert_uint_eq(cpulat_holds(), 0);
}
END_TEST

/* Whether this process has path open. */
static bool have_open(const char *p)
{
	char fdp[64], target[sizeof(path) + 16];
	bool found = false;

	for (int i = 0; i < 1024 && !found; i++) {
		ssize_t n;

		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", i);
		n = readlink(fdp, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			found = strcmp(target, p) == 0;
		}
	}
	return found;
}

/* A release that cannot be written (EPIPE: a fifo whose reader went)
 * closes the descriptor, which is what lets the kernel's request go:
 * nothing stays held, and later requests do not hold again. */
START_TEST(refused_release)
{
	char fifo[sizeof(path) + 8];
	int32_t v;
	int rd;

	snprintf(fifo, sizeof(fifo), "%s.fifo", path);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	signal(SIGPIPE, SIG_IGN);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	ck_assert_int_eq(cpulat_init(fifo, 20), 0);
	cpulat_touch();
	ck_assert_uint_eq(cpulat_holds(), 1);
	ck_assert_int_eq(read(rd, &v, sizeof(v)), sizeof(v));
	ck_assert_int_eq(v, 0);
	close(rd);
	ck_assert(have_open(fifo));
	run_for(80);
	ck_assert(!have_open(fifo)); /* the request went with it */
	cpulat_touch();
	ck_assert_uint_eq(cpulat_holds(), 1);
	unlink(fifo);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpulat");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, hold_then_let_go);
	tcase_add_test(tc, requests_keep_it_held);
	tcase_add_test(tc, off_when_zero);
	tcase_add_test(tc, missing_device);
	tcase_add_test(tc, refused_write);
	tcase_add_test(tc, refused_release);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
