/* test_fdq.c - sessions/session/fdq.c with a limit of 64 descriptors: the bound per
 * user (EMFILE for her alone, none for root), the cut (ENFILE for every
 * user's descriptor, while the daemon's own opens still have the
 * reserve), what closes give back, the charges of processes (checked
 * with her open files, given back once), what an upgrade hands over,
 * and the defaults worked out
 * from the limit. Check forks each test, so each starts with a fresh module. */
#include <errno.h>
#include <sys/resource.h>
#include "unit.h"
#include "conf/conf.h"
#include "sessions/session/fdq.h"

#define SHE 1000
#define HE  1001

/* Limits this process to 64 descriptors, then starts the module. */
static void start(uint64_t reserve, uint64_t per_user)
{
	struct rlimit rl = { 64, 64 };

	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	conf.fd_reserve = reserve;
	conf.max_fds_per_user = per_user;
	ck_assert_int_eq(fdq_init(), 0);
}

static int null_fd(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

START_TEST(bound_per_user)
{
	int fds[3], fd;

	start(16, 3);
	ck_assert_uint_eq(fdq_cut(), 48);
	ck_assert_uint_eq(fdq_bound(), 3);
	for (int i = 0; i < 3; i++) {
		fds[i] = fdq_take(SHE, null_fd());
		ck_assert_int_ge(fds[i], 0);
	}
	ck_assert_uint_eq(fdq_held(), 3);
	ck_assert_int_eq(fdq_check(SHE), -EMFILE);
	fd = null_fd();
	ck_assert_int_eq(fdq_take(SHE, fd), -EMFILE);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1); /* closed again */
	ck_assert_int_eq(fdq_check(HE), 0);
	ck_assert_int_ge(fd = fdq_take(HE, null_fd()), 0);
	fdq_close(fd);
	for (int i = 0; i < 5; i++) /* root has no bound */
		ck_assert_int_ge(fdq_take(0, null_fd()), 0);
	ck_assert_uint_eq(fdq_held(), 8);
	fdq_close(fds[1]);
	ck_assert_int_eq(fdq_check(SHE), 0);
	ck_assert_int_ge(fds[1] = fdq_take(SHE, null_fd()), 0);
	ck_assert_uint_eq(fdq_refused(), 2);
}
END_TEST

START_TEST(released_without_close)
{
	int fd;

	start(16, 1);
	fd = fdq_take(SHE, null_fd());
	ck_assert_int_ge(fd, 0);
	fdq_release(fd); /* closedir's: the descriptor stays open */
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	ck_assert_uint_eq(fdq_held(), 0);
	ck_assert_int_ge(fdq_take(SHE, null_fd()), 0);
	close(fd);
	errno = ENOENT;
	ck_assert_int_eq(fdq_take(SHE, -1), -ENOENT); /* the open's errno */
}
END_TEST

START_TEST(cut_keeps_the_reserve)
{
	int fd, last = -1, own = 0, mine[64];

	start(16, 1000);
	while ((fd = fdq_take(SHE, null_fd())) >= 0)
		last = fd;
	ck_assert_int_eq(fd, -ENFILE);
	ck_assert_int_eq(last, 47); /* every number below the cut */
	ck_assert_int_eq(fdq_take(HE, null_fd()), -ENFILE);
	ck_assert_int_eq(fdq_take(0, null_fd()), -ENFILE);
	ck_assert_int_eq(fdq_keep(null_fd()), -ENFILE);
	while (own < 64 && (mine[own] = null_fd()) >= 0) /* the daemon's */
		own++;
	ck_assert_int_eq(errno, EMFILE);
	ck_assert_int_eq(own, 16); /* the reserve was all there */
	/* LeakSanitizer needs descriptors at exit */
	while (own > 0)
		close(mine[--own]);
}
END_TEST

START_TEST(charged_with_her_files)
{
	unsigned five = 5, two = 2, root = 40;
	int fd;

	start(16, 8);
	ck_assert_int_eq(fdq_charge(SHE, 5, 3), 0);
	ck_assert_uint_eq(fdq_held(), 5);
	ck_assert_int_eq(fdq_charge(SHE, 5, 3), -EMFILE); /* 10 > 8 */
	ck_assert_int_ge(fd = fdq_take(SHE, null_fd()), 0); /* 6 */
	ck_assert_int_eq(fdq_charge(SHE, 2, 3), 0);	   /* 8 */
	ck_assert_int_eq(fdq_check(SHE), -EMFILE);
	ck_assert_int_eq(fdq_charge(HE, 2, 48), -ENFILE); /* at the cut */
	ck_assert_int_eq(fdq_charge(0, root, 3), 0);	  /* no bound */
	ck_assert_uint_eq(fdq_refused(), 3);
	fdq_uncharge(SHE, &five);
	ck_assert_uint_eq(five, 0);
	fdq_uncharge(SHE, &five); /* given back once */
	ck_assert_uint_eq(fdq_held(), 43);
	ck_assert_int_eq(fdq_check(SHE), 0);
	fdq_uncharge(SHE, &two);
	fdq_uncharge(0, &root);
	fdq_close(fd);
	ck_assert_uint_eq(fdq_held(), 0);
	ck_assert_int_eq(fdq_charge(SHE, 8, 3), 0);
}
END_TEST

/* An upgrade's descriptors are hers again even past her bound now (her
 * processes' charges came back first), once each, and closes give them
 * back; one past the cut is not recorded. */
START_TEST(adopted_after_an_upgrade)
{
	int a = null_fd(), b = null_fd(), t = null_fd(), high;

	start(16, 2);
	ck_assert_int_eq(fdq_charge(SHE, 2, -1), 0);
	fdq_adopt(SHE, a);
	fdq_adopt(SHE, b);
	fdq_adopt(SHE, b); /* counted once */
	ck_assert_uint_eq(fdq_held(), 4);
	ck_assert_int_eq(fdq_check(SHE), -EMFILE);
	fdq_close(a);
	fdq_close(b);
	ck_assert_uint_eq(fdq_held(), 2);
	high = fcntl(t, F_DUPFD_CLOEXEC, 50); /* past the cut, 48 */
	close(t);
	ck_assert_int_ge(high, 48);
	fdq_adopt(SHE, high);
	ck_assert_uint_eq(fdq_held(), 2);
	fdq_adopt(SHE, -1);
	ck_assert_uint_eq(fdq_held(), 2);
}
END_TEST

START_TEST(defaults_from_the_limit)
{
	start(256, 0); /* the reserve is at most half the limit */
	ck_assert_uint_eq(fdq_cut(), 32);
	ck_assert_uint_eq(fdq_bound(), 8);
	ck_assert_int_ge(fdq_keep(null_fd()), 0);
	ck_assert_uint_eq(fdq_held(), 0); /* a files/ node is nobody's */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fdq");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, bound_per_user);
	tcase_add_test(tc, released_without_close);
	tcase_add_test(tc, cut_keeps_the_reserve);
	tcase_add_test(tc, charged_with_her_files);
	tcase_add_test(tc, adopted_after_an_upgrade);
	tcase_add_test(tc, defaults_from_the_limit);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
