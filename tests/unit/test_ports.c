/* test_ports.c - the sockets of a group of processes, read from /proc:
 * this test's own process, as a group without a cgroup (its leader). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "sessions/session/ports.h"
#include "unit.h"

/* A socket of family and type bound to addr (loopback) port 0; listening
 * when listen; its port in *port. */
static int bound(int family, int type, bool listen_too, unsigned *port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = family == AF_INET ? sizeof(*a4) : sizeof(*a6);
	int fd = socket(family, type | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		a6->sin6_addr = in6addr_loopback;
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&ss, len), 0);
	if (listen_too)
		ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	*port = ntohs(family == AF_INET ? a4->sin_port : a6->sin6_port);
	return fd;
}

/* This process's sockets as ports lists them. */
static char *mine(void)
{
	struct contain c = { .dfd = -1, .parent_dfd = -1, .leader = getpid() };
	struct strbuf b = { 0 };
	struct ports l;
	size_t len;

	ck_assert_int_eq(ports_of(&c, &l), 0);
	ports_format(&l, &b);
	ports_free(&l);
	return sb_take(&b, &len);
}

static bool has(const char *text, const char *proto, const char *addr,
		unsigned port)
{
	char line[128];

	snprintf(line, sizeof(line), "%s %s %u %d\n", proto, addr, port,
		 (int)getpid());
	return strstr(text, line) != NULL;
}

START_TEST(listed)
{
	unsigned t4, t6, u4, u6, bare, conn;
	int fds[6];
	char *text;

	fds[0] = bound(AF_INET, SOCK_STREAM, true, &t4);
	fds[1] = bound(AF_INET6, SOCK_STREAM, true, &t6);
	fds[2] = bound(AF_INET, SOCK_DGRAM, false, &u4);
	fds[3] = bound(AF_INET6, SOCK_DGRAM, false, &u6);
	fds[4] = bound(AF_INET, SOCK_STREAM, false, &bare); /* not listening */
	fds[5] = bound(AF_INET, SOCK_DGRAM, false, &conn);
	{
		struct sockaddr_in to = { .sin_family = AF_INET,
					  .sin_port = htons((uint16_t)u4),
					  .sin_addr.s_addr =
						  htonl(INADDR_LOOPBACK) };

		ck_assert_int_eq(connect(fds[5], (struct sockaddr *)&to,
					 sizeof(to)),
				 0);
	}
	text = mine();
	ck_assert_msg(has(text, "tcp", "127.0.0.1", t4), "%s", text);
	ck_assert_msg(has(text, "tcp6", "::1", t6), "%s", text);
	ck_assert_msg(has(text, "udp", "127.0.0.1", u4), "%s", text);
	ck_assert_msg(has(text, "udp6", "::1", u6), "%s", text);
	ck_assert_msg(!has(text, "tcp", "127.0.0.1", bare),
		      "a socket that does not listen: %s", text);
	ck_assert_msg(!has(text, "udp", "127.0.0.1", conn),
		      "a connected udp socket: %s", text);
	free(text);
	for (int i = 0; i < 6; i++)
		close(fds[i]);
	text = mine();
	ck_assert_msg(!has(text, "tcp", "127.0.0.1", t4), "closed: %s", text);
	free(text);
}
END_TEST

/* A batch gives the same lines, and sees nothing new until it ends. */
START_TEST(batch)
{
	unsigned p1, p2;
	int a = bound(AF_INET, SOCK_STREAM, true, &p1), b;
	char *before = mine(), *during, *late, *after;

	ports_batch(true);
	during = mine();
	b = bound(AF_INET, SOCK_STREAM, true, &p2);
	late = mine();
	ports_batch(false);
	after = mine();
	ck_assert_str_eq(before, during);
	ck_assert_str_eq(during, late);
	ck_assert_msg(has(after, "tcp", "127.0.0.1", p2), "%s", after);
	free(before);
	free(during);
	free(late);
	free(after);
	close(a);
	close(b);
}
END_TEST

/* Sorted by port; empty for a group with no process. */
START_TEST(order_and_none)
{
	struct contain none = { .dfd = -1, .parent_dfd = -1 };
	unsigned p[3];
	int fd[3];
	struct ports l;

	for (int i = 0; i < 3; i++)
		fd[i] = bound(AF_INET, SOCK_STREAM, true, &p[i]);
	ck_assert_int_eq(ports_of(&(struct contain){ .dfd = -1,
						     .parent_dfd = -1,
						     .leader = getpid() },
				  &l),
			 0);
	for (size_t i = 1; i < l.n; i++)
		ck_assert_uint_le(l.v[i - 1].port, l.v[i].port);
	ck_assert(ports_has(&l, p[0]) && ports_has(&l, p[2]));
	ck_assert(!ports_has(&l, 0));
	ports_free(&l);
	ck_assert_int_eq(ports_of(&none, &l), 0);
	ck_assert_uint_eq(l.n, 0);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ports");
	TCase *tc = tcase_create("proc");

	tcase_add_test(tc, listed);
	tcase_add_test(tc, batch);
	tcase_add_test(tc, order_and_none);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
