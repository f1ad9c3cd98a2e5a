/* test_shell.c - shell report frames, the prelude, and a real session bash. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>
#include "sessions/core/envmap.h"
#include "sessions/session/shell.h"
#include "unit.h"

/* The owner of the test's shells and files: the test itself. */
#define ME ((struct shell_who){ .uid = getuid(), .gid = getgid() })

#define BASH "/bin/bash"

static ssize_t parse_guarded(const char *buf, size_t len, struct shell_frame *f)
{
	struct guarded g;
	ssize_t n = shell_parse_frame(guard_copy(&g, buf, len), len, f);

	/* pwd and env point into the copy: keep what the tests look at */
	if (n > 0) {
		static char pwd[4096], env[65536];

		ck_assert_uint_lt(strlen(f->pwd), sizeof(pwd));
		ck_assert_uint_lt(f->env_len, sizeof(env));
		strcpy(pwd, f->pwd);
		memcpy(env, f->env, f->env_len);
		f->pwd = pwd;
		f->env = env;
	}
	guard_free(&g);
	return n;
}

#define FRAME(s) s, sizeof(s) - 1

/* ---- frames ---- */

/* A run's key after the status. */
START_TEST(frame_keyed)
{
	struct shell_frame f;

	ck_assert_int_gt(
		parse_guarded(FRAME("E0 fedcba9876543210\0/x\0\0"), &f), 0);
	ck_assert(f.kind == 'E' && f.status == 0 && f.keyed);
	ck_assert(f.key == 0xfedcba9876543210ULL);
	ck_assert_str_eq(f.pwd, "/x");
	ck_assert_int_gt(parse_guarded(FRAME("R12\0/\0\0"), &f), 0);
	ck_assert(!f.keyed && f.status == 12);
}
END_TEST

START_TEST(frame_basic)
{
	static const char fr[] = "R0\0/home/u\0declare -x A=\"1\"\n\0";
	struct shell_frame f;

	ck_assert_int_eq(parse_guarded(FRAME(fr), &f), sizeof(fr) - 1);
	ck_assert_int_eq(f.kind, 'R');
	ck_assert_int_eq(f.status, 0);
	ck_assert_str_eq(f.pwd, "/home/u");
	ck_assert_uint_eq(f.env_len, strlen("declare -x A=\"1\"\n"));
	ck_assert_mem_eq(f.env, "declare -x A=\"1\"\n", f.env_len);
}
END_TEST

START_TEST(frame_exit_kind)
{
	struct shell_frame f;

	ck_assert_int_eq(parse_guarded(FRAME("X0\0/\0\0"), &f), 6);
	ck_assert_int_eq(f.kind, 'X');
	ck_assert_int_eq(f.status, 0);
	ck_assert_str_eq(f.pwd, "/");
	ck_assert_uint_eq(f.env_len, 0);
}
END_TEST

START_TEST(frame_status)
{
	struct shell_frame f;

	ck_assert_int_gt(parse_guarded(FRAME("R1\0/\0\0"), &f), 0);
	ck_assert_int_eq(f.status, 1);
	ck_assert_int_gt(parse_guarded(FRAME("R127\0/\0\0"), &f), 0);
	ck_assert_int_eq(f.status, 127);
	ck_assert_int_gt(parse_guarded(FRAME("R255\0/\0\0"), &f), 0);
	ck_assert_int_eq(f.status, 255);
	ck_assert_int_gt(parse_guarded(FRAME("R007\0/\0\0"), &f), 0);
	ck_assert_int_eq(f.status, 7);
}
END_TEST

/* An empty pwd or env is still a frame. */
START_TEST(frame_empty_fields)
{
	struct shell_frame f;

	ck_assert_int_eq(parse_guarded(FRAME("R2\0\0\0"), &f), 5);
	ck_assert_int_eq(f.status, 2);
	ck_assert_str_eq(f.pwd, "");
	ck_assert_uint_eq(f.env_len, 0);
}
END_TEST

/* A run that could not start: its reason where the variables would be. */
START_TEST(frame_not_started)
{
	struct shell_frame f;

	ck_assert_int_eq(parse_guarded(FRAME("F126\0/a\0cwd /x: gone\0"), &f),
			 21);
	ck_assert_int_eq(f.kind, 'F');
	ck_assert_int_eq(f.status, 126);
	ck_assert_str_eq(f.pwd, "/a");
	ck_assert_str_eq(f.env, "cwd /x: gone");
}
END_TEST

/* Frames back to back: each call takes exactly one. */
START_TEST(frame_sequence)
{
	static const char two[] = "R3\0/a\0E1\0X0\0/b\0E2\0R4\0/c";
	struct shell_frame f;
	const char *p = two;
	size_t left = sizeof(two) - 1;
	ssize_t n;

	n = parse_guarded(p, left, &f);
	ck_assert_int_eq(n, 9);
	ck_assert_int_eq(f.kind, 'R');
	ck_assert_int_eq(f.status, 3);
	ck_assert_str_eq(f.pwd, "/a");
	ck_assert_mem_eq(f.env, "E1", 2);
	p += n, left -= (size_t)n;
	n = parse_guarded(p, left, &f);
	ck_assert_int_eq(n, 9);
	ck_assert_int_eq(f.kind, 'X');
	ck_assert_str_eq(f.pwd, "/b");
	p += n, left -= (size_t)n;
	/* the third is cut: incomplete, not malformed */
	ck_assert_int_eq(parse_guarded(p, left, &f), 0);
}
END_TEST

/* Every proper prefix of a frame is incomplete, never an error. */
START_TEST(frame_prefixes)
{
	static const char fr[] =
		"R42\0/some/dir\0declare -x A=\"1\"\ndeclare -x B=$'\\n'\n\0";
	struct shell_frame f;

	for (size_t len = 0; len < sizeof(fr) - 1; len++)
		ck_assert_msg(parse_guarded(fr, len, &f) == 0,
			      "prefix of %zu bytes", len);
	ck_assert_int_eq(parse_guarded(fr, sizeof(fr) - 1, &f), sizeof(fr) - 1);
	ck_assert_int_eq(f.status, 42);
	/* bytes after it are left for the next call */
	{
		char more[sizeof(fr) + 8];

		memcpy(more, fr, sizeof(fr) - 1);
		memcpy(more + sizeof(fr) - 1, "R0\0/\0", 5);
		ck_assert_int_eq(parse_guarded(more, sizeof(fr) + 4, &f),
				 sizeof(fr) - 1);
	}
}
END_TEST

START_TEST(frame_malformed)
{
	static const struct {
		const char *s;
		size_t len;
	} bad[] = {
		{ FRAME("r0\0/\0\0") },
		{ FRAME("Z0\0/\0\0") },
		{ FRAME("\0") },
		{ FRAME("0\0/\0\0") },
		{ FRAME("R\0/\0\0") },
		{ FRAME("Rx\0/\0\0") },
		{ FRAME("R1x\0/\0\0") },
		{ FRAME("R-1\0/\0\0") },
		{ FRAME("R256\0/\0\0") },
		{ FRAME("R99999999999999999999\0/\0\0") },
		{ FRAME("R0x1\0/\0\0") },
		{ FRAME("R1.0\0/\0\0") },
		{ FRAME("R+1\0/\0\0") },
		{ FRAME("R 1\0/\0\0") },
		{ FRAME("R0 \0/\0\0") },
		{ FRAME("R0 0123\0/\0\0") },
		{ FRAME("R0 0123456789ABCDEF\0/\0\0") },
		{ FRAME("R0  123456789abcdef\0/\0\0") },
		{ FRAME("R0 0123456789abcdef0\0/\0\0") },
		{ FRAME("R0 0123456789abcdeg\0/\0\0") },
		{ FRAME("R0_0123456789abcdef\0/\0\0") },
		{ FRAME("Z") },
		{ FRAME("garbage") },
		{ FRAME("declare -x A=\"1\"\n\0") },
	};
	struct shell_frame f;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(parse_guarded(bad[i].s, bad[i].len, &f) ==
				      -EINVAL,
			      "bad frame %zu accepted", i);
}
END_TEST

/* ---- the prelude file ---- */

static char base[] = "/tmp/sfs-shell-XXXXXX";

static void base_setup(void)
{
	unit_mkbase(base, "/tmp/sfs-shell-XXXXXX");
}

static void base_teardown(void)
{
	unit_rmbase(base);
}

static void set_s(struct envmap *m, const char *name, const char *val)
{
	ck_assert_int_eq(envmap_set(m, name, val, strlen(val)), 0);
}

START_TEST(prelude_records)
{
	static const char want[] = "U\0GONE\0"
				   "S\0A\0one\0"
				   "S\0B\0l1\nl2 $(x) `y` \"q\" \\\0"
				   "S\0E\0\0"
				   "C\0/some where\0";
	struct envmap set, unset;
	char dir[64];
	struct stat st;
	size_t len;
	char *got;
	int dfd = unit_new_dir(base, dir, sizeof(dir));

	envmap_init(&set, OBJ_NONE, NULL);
	envmap_init(&unset, OBJ_NONE, NULL);
	set_s(&set, "B", "l1\nl2 $(x) `y` \"q\" \\");
	set_s(&set, "A", "one");
	set_s(&set, "E", "");
	set_s(&unset, "GONE", "");
	ck_assert_int_eq(shell_write_prelude(dfd, "r1.pre", &ME, &set, &unset,
					     "/some where"),
			 0);
	got = unit_slurp_at(dfd, "r1.pre", &len);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(len, sizeof(want) - 1);
	ck_assert_mem_eq(got, want, len);
	ck_assert_int_eq(fstatat(dfd, "r1.pre", &st, 0), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	free(got);

	/* rewriting replaces; nothing to do: an empty file */
	envmap_free(&set);
	envmap_free(&unset);
	ck_assert_int_eq(
		shell_write_prelude(dfd, "r1.pre", &ME, &set, &unset, NULL), 0);
	got = unit_slurp_at(dfd, "r1.pre", &len);
	ck_assert_uint_eq(len, 0);
	free(got);
	ck_assert_int_lt(
		shell_write_prelude(dfd, "no/dir", &ME, &set, &unset, NULL), 0);
	close(dfd);
}
END_TEST

/* ---- a real shell ---- */

struct sh {
	pid_t pid;
	int ctl, res, dfd;
	char dir[64];
	char buf[1 << 20];
	size_t len;
};

struct report {
	char kind;
	int status;
	bool keyed, e_keyed; /* the R frame's key, and whether E had it */
	uint64_t key, e_key;
	char pwd[4096];
	struct envmap env;
};

static char *sh_envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/",
			   "LC_ALL=C", NULL };

static void sh_start(struct sh *s)
{
	struct contain cg = { .dfd = -1 };

	s->dfd = unit_new_dir(base, s->dir, sizeof(s->dir));
	s->len = 0;
	shell_set_driver(SFS_TEST_DRIVER);
	s->pid = shell_spawn(
		BASH, &(struct shell_who){ s->dir, s->dir, getuid(), getgid() },
		sh_envp, &cg, &s->ctl, &s->res);
	ck_assert_int_gt(s->pid, 0);
	ck_assert(fcntl(s->res, F_GETFL) & O_NONBLOCK);
	ck_assert(fcntl(s->ctl, F_GETFD) & FD_CLOEXEC);
	ck_assert(fcntl(s->res, F_GETFD) & FD_CLOEXEC);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The variables of a report: inline in an 'E' frame, or left by the
 * EXIT trap in the file "env" beside its 'X' frame. */
static void report_env(struct sh *s, struct report *r,
		       const struct shell_frame *f)
{
	size_t len = f->env_len;
	char *file = NULL;
	const char *text = f->env;

	if (f->kind != 'E') {
		file = unit_slurp_at(s->dfd, "env", &len);
		ck_assert_msg(file != NULL, "no env file beside the report");
		text = file;
	}
	envmap_init(&r->env, OBJ_NONE, NULL);
	ck_assert_int_eq(envmap_parse_export(&r->env, text, len), 0);
	free(file);
}

/* Sends run id (its command already written) and waits for its report.
 * Returns 0 with *r filled, or -1 when the shell closed the result pipe
 * first. */
static int sh_wait(struct sh *s, struct report *r, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	struct shell_frame f;

	for (;;) {
		ssize_t n = shell_parse_frame(s->buf, s->len, &f);
		struct pollfd p = { .fd = s->res, .events = POLLIN };
		int left = (int)(end - now_ms());

		ck_assert_int_ge(n, 0);
		if (n > 0 && f.kind == 'E') {
			/* the variables of the run just reported are ready */
			ck_assert_int_eq(r->kind, 'R');
			r->e_keyed = f.keyed;
			r->e_key = f.key;
			report_env(s, r, &f);
			memmove(s->buf, s->buf + n, s->len - (size_t)n);
			s->len -= (size_t)n;
			return 0;
		}
		if (n > 0) {
			r->kind = f.kind;
			r->status = f.status;
			r->keyed = f.keyed;
			r->key = f.key;
			ck_assert_uint_lt(strlen(f.pwd), sizeof(r->pwd));
			strcpy(r->pwd, f.pwd);
			memmove(s->buf, s->buf + n, s->len - (size_t)n);
			s->len -= (size_t)n;
			continue;
		}
		ck_assert_msg(left > 0, "no report in %d ms", timeout_ms);
		if (poll(&p, 1, left) <= 0)
			continue;
		ck_assert_uint_lt(s->len, sizeof(s->buf));
		n = read(s->res, s->buf + s->len, sizeof(s->buf) - s->len);
		if (n == 0)
			return -1;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		ck_assert_int_gt(n, 0);
		s->len += (size_t)n;
	}
}

/* Sends run id, after which the shell polls spin times for the next. */
static void sh_send_spin(struct sh *s, unsigned id, char flag, const char *cmd,
			 unsigned spin)
{
	char name[32], line[48];
	int n;

	snprintf(name, sizeof(name), "r%u.cmd", id);
	unit_put_at(s->dfd, name, cmd, strlen(cmd));
	/* the run's fifos are named after it here: f<id>.o, f<id>.e */
	n = snprintf(line, sizeof(line), "%u %u %c %u\n", id, id, flag, spin);
	ck_assert_int_eq(write(s->ctl, line, (size_t)n), n);
}

/* Sends run id with the daemon's fifth field, the run's key. */
static void sh_send_key(struct sh *s, unsigned id, const char *cmd,
			const char *key)
{
	char name[32], line[80];
	int n;

	snprintf(name, sizeof(name), "r%u.cmd", id);
	unit_put_at(s->dfd, name, cmd, strlen(cmd));
	n = snprintf(line, sizeof(line), "%u %u n 0 %s\n", id, id, key);
	ck_assert_int_eq(write(s->ctl, line, (size_t)n), n);
}

/* The daemon's abort of run id: the signal queued with the run's id. */
static void sh_abort(struct sh *s, unsigned id)
{
	union sigval v = { .sival_ptr = (void *)(uintptr_t)id };

	ck_assert_int_eq(sigqueue(s->pid, SHELL_ABORT_SIG, v), 0);
}

static void sh_send(struct sh *s, unsigned id, char flag, const char *cmd)
{
	sh_send_spin(s, id, flag, cmd, 0);
}

static int sh_run(struct sh *s, unsigned id, const char *cmd, struct report *r)
{
	sh_send(s, id, 'n', cmd);
	return sh_wait(s, r, 10000);
}

/* What run id wrote to stdout ("o") or stderr ("e"); "" if nothing. */
static char *sh_out(struct sh *s, unsigned id, const char *sfx, size_t *len)
{
	char name[32];
	char *p;

	snprintf(name, sizeof(name), "f%u.%s", id, sfx);
	p = unit_slurp_at(s->dfd, name, len);
	if (!p) {
		p = calloc(1, 1);
		*len = 0;
	}
	return p;
}

static void want_out(struct sh *s, unsigned id, const char *sfx,
		     const char *want)
{
	size_t len;
	char *got = sh_out(s, id, sfx, &len);

	ck_assert_msg(len == strlen(want) && memcmp(got, want, len) == 0,
		      "f%u.%s is '%s', want '%s'", id, sfx, got, want);
	free(got);
}

/* Waits for the shell to end; returns its wait status. */
static int sh_reap(struct sh *s, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	int st;

	for (;;) {
		pid_t w = waitpid(s->pid, &st, WNOHANG);

		ck_assert_int_ge(w, 0);
		if (w == s->pid)
			break;
		ck_assert_msg(now_ms() < end, "shell still running");
		usleep(10000);
	}
	kill(-s->pid, SIGKILL); /* whatever it left in its group */
	s->pid = 0;
	return st;
}

/* Ends the shell the way the daemon does when it is done with it. */
static int sh_stop(struct sh *s)
{
	int st = 0;

	close(s->ctl);
	if (s->pid)
		st = sh_reap(s, 5000);
	close(s->res);
	close(s->dfd);
	return st;
}

static void free_report(struct report *r)
{
	envmap_free(&r->env);
}

START_TEST(bash_echo)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1, "echo hi\n", &r), 0);
	ck_assert_int_eq(r.kind, 'R');
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.pwd, s.dir);
	want_out(&s, 1, "o", "hi\n");
	want_out(&s, 1, "e", "");
	ck_assert_ptr_nonnull(envmap_get(&r.env, "PATH"));
	free_report(&r);
	/* no trailing newline, output on both streams, a NUL byte */
	ck_assert_int_eq(sh_run(&s, 2, "printf 'a\\0b'; echo err >&2", &r), 0);
	ck_assert_int_eq(r.status, 0);
	{
		size_t len;
		char *o = sh_out(&s, 2, "o", &len);

		ck_assert_uint_eq(len, 3);
		ck_assert_mem_eq(o, "a\0b", 3);
		free(o);
	}
	want_out(&s, 2, "e", "err\n");
	free_report(&r);
	ck_assert_int_eq(WEXITSTATUS(sh_stop(&s)), 0);
}
END_TEST

/* cd, exported and plain variables, functions and aliases persist. */
START_TEST(bash_state)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(
		sh_run(&s, 1,
		       "cd /tmp\nexport A=1\nB=2\n"
		       "f() { echo \"f$B\"; }\nalias hello='echo hey'\n",
		       &r),
		0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.pwd, "/tmp");
	ck_assert_ptr_nonnull(envmap_get(&r.env, "A"));
	ck_assert_str_eq(envmap_get(&r.env, "A")->value, "1");
	ck_assert_ptr_null(envmap_get(&r.env, "B"));
	free_report(&r);
	ck_assert_int_eq(sh_run(&s, 2, "f; echo $A; pwd; hello\n", &r), 0);
	ck_assert_int_eq(r.status, 0);
	want_out(&s, 2, "o", "f2\n1\n/tmp\nhey\n");
	free_report(&r);
	ck_assert_int_eq(sh_run(&s, 3, "unset A; cd /\n", &r), 0);
	ck_assert_ptr_null(envmap_get(&r.env, "A"));
	ck_assert_str_eq(r.pwd, "/");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* Each failure is that run's status; the shell goes on. */
START_TEST(bash_statuses)
{
	static const struct {
		const char *cmd;
		int status;
	} t[] = {
		{ "false\n", 1 },
		{ "(exit 7)\n", 7 },
		{ "return 4\n", 4 },
		{ "(exit 300)\n", 44 },
		{ "nosuchcommand_sfs\n", 127 },
		{ "fi\n", 2 },
		{ "echo 'unterminated\n", 2 },
		{ "if true; then\n", 2 },
		{ "true\n", 0 },
		{ "", 0 },
		{ "# only a comment", 0 },
		{ "echo no newline at end", 0 },
		{ "sh -c 'kill -9 $$'\n", 137 },
	};
	static struct sh s;
	struct report r;

	sh_start(&s);
	for (unsigned i = 0; i < sizeof(t) / sizeof(*t); i++) {
		ck_assert_msg(sh_run(&s, i + 1, t[i].cmd, &r) == 0,
			      "shell gone after '%s'", t[i].cmd);
		ck_assert_msg(r.status == t[i].status, "'%s': %d, want %d",
			      t[i].cmd, r.status, t[i].status);
		free_report(&r);
	}
	{
		size_t len;
		char *e = sh_out(&s, 5, "e", &len);

		ck_assert_ptr_nonnull(strstr(e, "not found"));
		free(e);
	}
	ck_assert_int_eq(sh_run(&s, 99, "echo alive\n", &r), 0);
	want_out(&s, 99, "o", "alive\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* Many runs in a row: reports stay in step with runs. */
START_TEST(bash_many_runs)
{
	static struct sh s;
	struct report r;
	char cmd[64], want[32];

	sh_start(&s);
	for (unsigned i = 1; i <= 200; i++) {
		snprintf(cmd, sizeof(cmd), "echo run%u; (exit %u)\n", i,
			 i % 256);
		ck_assert_int_eq(sh_run(&s, i, cmd, &r), 0);
		ck_assert_int_eq(r.status, (int)(i % 256));
		snprintf(want, sizeof(want), "run%u\n", i);
		want_out(&s, i, "o", want);
		free_report(&r);
	}
	sh_stop(&s);
}
END_TEST

/* stdin is empty: readers end at once. */
START_TEST(bash_stdin_empty)
{
	static struct sh s;
	struct report r;
	int64_t t0;

	sh_start(&s);
	t0 = now_ms();
	ck_assert_int_eq(sh_run(&s, 1,
				"cat; read x; echo \"read=$?\"; "
				"grep x; echo \"grep=$?\"\n",
				&r),
			 0);
	ck_assert_int_lt(now_ms() - t0, 3000);
	want_out(&s, 1, "o", "read=1\ngrep=1\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* Whether fd n of process pid is the same file as our fd. */
static bool same_file(pid_t pid, int n, int fd)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)pid, n);
	return stat(path, &a) == 0 && fstat(fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* A command and what it starts see none of the protocol's descriptors:
 * the idle shell has them on its stdin and fd 201, a run has /dev/null
 * and its fifos on 0-2 and 201 closed, and a process it starts has
 * nothing else. */
START_TEST(bash_fds_closed)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1,
				"sleep 5 & p=$!\n"
				"sleep 0.3\n" /* until it has exec'd */
				"ls /proc/$p/fd | tr '\\n' ' '\n"
				"kill $p\n"
				"readlink /proc/$BASHPID/fd/0\n",
				&r),
			 0);
	want_out(&s, 1, "o", "0 1 2 /dev/null\n");
	free_report(&r);
	/* the idle shell has them, for the next run */
	ck_assert(same_file(s.pid, 0, s.ctl));
	ck_assert(same_file(s.pid, SHELL_RES_FD, s.res));
	ck_assert_int_eq(sh_run(&s, 2, "echo ok\n", &r), 0);
	want_out(&s, 2, "o", "ok\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* Output that looks like a report is only output. */
START_TEST(bash_no_fake)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1,
				"printf 'R0\\0/fake\\0declare -x FAKE=\"1\"\\n"
				"\\0'\n"
				"printf 'R0\\0/fake\\0\\0' >&2\nfalse\n",
				&r),
			 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.pwd, s.dir);
	ck_assert_ptr_null(envmap_get(&r.env, "FAKE"));
	free_report(&r);
	ck_assert_int_eq(sh_run(&s, 2, "true\n", &r), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(s.len, 0);
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* The prelude sets, unsets and changes directory before the command,
 * taking every value literally. */
START_TEST(bash_prelude)
{
	static const struct {
		const char *name, *val;
	} v[] = {
		{ "Q", "it's \"quoted\"" },
		{ "SUB", "$(whoami)" },
		{ "BT", "`date`" },
		{ "NL", "line1\nline2\n" },
		{ "BS", "back\\slash\\" },
		{ "EMPTY", "" },
		{ "STAR", "*" },
		{ "DASH", "-n" },
		{ "HIGH", "\xc3\xa9\xff\x01\x7f\033" },
		{ "SPACES", "  a  b  " },
		{ "EQ", "a=b=c" },
	};
	static struct sh s;
	struct envmap set, unset;
	struct report r;
	char cwd[128], pre[64];

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1, "export OLD=1 KEEP=2\n", &r), 0);
	ck_assert_ptr_nonnull(envmap_get(&r.env, "OLD"));
	free_report(&r);

	snprintf(cwd, sizeof(cwd), "%s/-a dir $x", s.dir);
	ck_assert_int_eq(mkdir(cwd, 0700), 0);
	envmap_init(&set, OBJ_NONE, NULL);
	envmap_init(&unset, OBJ_NONE, NULL);
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		ck_assert_int_eq(
			envmap_set(&set, v[i].name, v[i].val, strlen(v[i].val)),
			0);
	ck_assert_int_eq(envmap_set(&unset, "OLD", "", 0), 0);
	snprintf(pre, sizeof(pre), "r2.pre");
	ck_assert_int_eq(
		shell_write_prelude(s.dfd, pre, &ME, &set, &unset, cwd), 0);
	sh_send(&s, 2, 'p', "printf '%s|' \"$Q\" \"$NL\" \"$DASH\" \"$PWD\"\n");
	ck_assert_int_eq(sh_wait(&s, &r, 10000), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.pwd, cwd);
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
		struct envvar *e = envmap_get(&r.env, v[i].name);

		ck_assert_msg(e != NULL, "%s not exported", v[i].name);
		ck_assert_msg(e->len == strlen(v[i].val) &&
				      memcmp(e->value, v[i].val, e->len) == 0,
			      "%s is '%s'", v[i].name, e->value);
	}
	ck_assert_ptr_null(envmap_get(&r.env, "OLD"));
	ck_assert_ptr_nonnull(envmap_get(&r.env, "KEEP"));
	/* the prelude's own variables are gone */
	ck_assert_ptr_null(envmap_get(&r.env, "__sfs_n"));
	free_report(&r);
	{
		char want[512];

		snprintf(want, sizeof(want),
			 "it's \"quoted\"|line1\nline2\n|"
			 "-n|%s|",
			 cwd);
		want_out(&s, 2, "o", want);
	}
	ck_assert_int_eq(sh_run(&s, 3,
				"[[ -v __sfs_op || -v __sfs_n || -v __sfs_v ]]"
				" && echo leak; echo \"$SUB\"\n",
				&r),
			 0);
	want_out(&s, 3, "o", "$(whoami)\n");
	free_report(&r);
	envmap_free(&set);
	envmap_free(&unset);
	sh_stop(&s);
}
END_TEST

/* Functions and aliases named like builtins do not break the protocol. */
START_TEST(bash_shadowing)
{
	static struct sh s;
	struct envmap set, unset;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1,
				"printf() { echo evil; }\n"
				"export() { echo evil; }\n"
				"read() { echo evil; }\n"
				"cd() { echo evil; }\n"
				"unset() { echo evil; }\n"
				"source() { echo evil; }\n"
				"alias printf='echo evil' export='echo evil'\n"
				"command export VIA_CMD=1\n",
				&r),
			 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(envmap_get(&r.env, "VIA_CMD"));
	free_report(&r);
	envmap_init(&set, OBJ_NONE, NULL);
	envmap_init(&unset, OBJ_NONE, NULL);
	ck_assert_int_eq(envmap_set(&set, "P", "from prelude", 12), 0);
	ck_assert_int_eq(envmap_set(&unset, "VIA_CMD", "", 0), 0);
	ck_assert_int_eq(
		shell_write_prelude(s.dfd, "r2.pre", &ME, &set, &unset, "/"),
		0);
	sh_send(&s, 2, 'p', "echo \"$P\"\n");
	ck_assert_int_eq(sh_wait(&s, &r, 10000), 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.pwd, "/");
	ck_assert_ptr_nonnull(envmap_get(&r.env, "P"));
	ck_assert_ptr_null(envmap_get(&r.env, "VIA_CMD"));
	want_out(&s, 2, "o", "from prelude\n");
	free_report(&r);
	envmap_free(&set);
	envmap_free(&unset);
	sh_stop(&s);
}
END_TEST

/* A background job does not hold the run open. */
START_TEST(bash_background)
{
	static struct sh s;
	struct report r;
	int64_t t0;

	sh_start(&s);
	t0 = now_ms();
	ck_assert_int_eq(sh_run(&s, 1, "sleep 30 &\necho started\n", &r), 0);
	ck_assert_int_lt(now_ms() - t0, 3000);
	ck_assert_int_eq(r.status, 0);
	want_out(&s, 1, "o", "started\n");
	free_report(&r);
	sh_stop(&s); /* kills the sleep with the group */
}
END_TEST

/* A large script, heredocs included. */
START_TEST(bash_large_script)
{
	static struct sh s;
	struct report r;
	size_t n = 0, cap = 1 << 21;
	char *cmd = malloc(cap);

	ck_assert_ptr_nonnull(cmd);
	n += (size_t)sprintf(cmd + n, "x=0\ncat <<'EOF'\n$HOME `q`\nEOF\n"
				      "cat <<EOF\n$((1+2))\nEOF\n");
	while (n < (1 << 20))
		n += (size_t)sprintf(cmd + n, "x=$((x+1)) # padding padding\n");
	sprintf(cmd + n, "echo $x\n");
	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1, cmd, &r), 0);
	ck_assert_int_eq(r.status, 0);
	{
		size_t len;
		char *o = sh_out(&s, 1, "o", &len);
		long x;

		ck_assert(strncmp(o, "$HOME `q`\n3\n", 12) == 0);
		x = strtol(o + 12, NULL, 10);
		ck_assert_int_gt(x, 30000);
		free(o);
	}
	free_report(&r);
	free(cmd);
	sh_stop(&s);
}
END_TEST

/* The frame in "state" that the EXIT trap leaves. */
static int read_state(struct sh *s, struct report *r)
{
	size_t len;
	char *p = unit_slurp_at(s->dfd, "state", &len);
	struct shell_frame f;
	ssize_t n;

	if (!p)
		return -1;
	n = shell_parse_frame(p, len, &f);
	ck_assert_int_eq(n, (ssize_t)len);
	r->kind = f.kind;
	r->status = f.status;
	strcpy(r->pwd, f.pwd);
	report_env(s, r, &f);
	free(p);
	return 0;
}

/* A command that ends the shell: no report, the exit status, and the
 * state it left, including what that last command changed. */
static void ends_shell(const char *setup, const char *cmd, int code)
{
	static struct sh s;
	struct report r;
	int st;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1, "export EARLY=1\n", &r), 0);
	free_report(&r);
	if (setup) {
		ck_assert_int_eq(sh_run(&s, 2, setup, &r), 0);
		free_report(&r);
	}
	ck_assert_int_eq(sh_run(&s, 3, cmd, &r), -1);
	st = sh_reap(&s, 5000);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), code);
	ck_assert_msg(read_state(&s, &r) == 0, "no state file after '%s'", cmd);
	ck_assert_int_eq(r.kind, 'X');
	ck_assert_str_eq(r.pwd, "/");
	ck_assert_ptr_nonnull(envmap_get(&r.env, "EARLY"));
	ck_assert_ptr_nonnull(envmap_get(&r.env, "LATE"));
	ck_assert_str_eq(envmap_get(&r.env, "LATE")->value, "9 9");
	free_report(&r);
	sh_stop(&s);
}

START_TEST(bash_exit)
{
	ends_shell(NULL, "export LATE='9 9'; cd /; exit 3\n", 3);
}
END_TEST

START_TEST(bash_set_e)
{
	ends_shell(NULL, "export LATE='9 9'; cd /; set -e; false\n", 1);
}
END_TEST

/* The state letter of pid in /proc (R, S, ...). */
static char proc_state(pid_t pid)
{
	char path[64], buf[256] = "", *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')');
	ck_assert_ptr_nonnull(p);
	return p[2];
}

/* After a run the shell polls its stdin for the number of rounds the line
 * gave: a command sent meanwhile starts at once, and once the rounds are
 * over the shell sleeps. */
START_TEST(bash_spin)
{
	static struct sh s;
	struct report r;
	int64_t t0;

	sh_start(&s);
	sh_send_spin(&s, 1, 'n', "true\n", 10000000); /* some 40 s */
	ck_assert_int_eq(sh_wait(&s, &r, 10000), 0);
	free_report(&r);
	usleep(50000);
	ck_assert_int_eq(proc_state(s.pid), 'R'); /* polling */
	t0 = now_ms();
	ck_assert_int_eq(sh_run(&s, 2, "echo next\n", &r), 0);
	ck_assert_int_lt(now_ms() - t0, 2000);
	want_out(&s, 2, "o", "next\n");
	free_report(&r);
	/* that run gave no rounds: the shell sleeps at once */
	t0 = now_ms();
	while (proc_state(s.pid) != 'S') {
		ck_assert_int_lt(now_ms() - t0, 2000);
		usleep(10000);
	}
	sh_stop(&s);
}
END_TEST

/* Closing its stdin (the control pipe) ends the shell cleanly. */
START_TEST(bash_eof_ends)
{
	static struct sh s;
	struct report r;
	int st;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1, "cd /tmp; export K=v\n", &r), 0);
	free_report(&r);
	st = sh_stop(&s);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
}
END_TEST

/* SHELL_ABORT_SIG while the command waits for a process: once that
 * process is gone, the rest of the script does not run. */
START_TEST(bash_abort)
{
	static struct sh s;
	struct report r;
	int64_t t0;
	size_t len;
	char *pid = NULL;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1, "export KEEP=1\n", &r), 0);
	free_report(&r);
	sh_send(&s, 2, 'n',
		"sh -c 'echo $$ > sleeper.pid; exec sleep 20'\n"
		"echo not-reached\n");
	t0 = now_ms();
	while (!(pid = unit_slurp_at(s.dfd, "sleeper.pid", &len)) || len == 0) {
		free(pid);
		ck_assert_int_lt(now_ms() - t0, 5000);
		usleep(10000);
	}
	sh_abort(&s, 2);
	usleep(100000);
	ck_assert_int_eq(kill((pid_t)atol(pid), SIGKILL), 0);
	free(pid);
	t0 = now_ms();
	ck_assert_int_eq(sh_wait(&s, &r, 5000), 0);
	ck_assert_int_lt(now_ms() - t0, 3000);
	ck_assert_int_ne(r.status, 0);
	ck_assert_ptr_nonnull(envmap_get(&r.env, "KEEP"));
	want_out(&s, 2, "o", "");
	free_report(&r);
	/* the shell works as before */
	ck_assert_int_eq(sh_run(&s, 3, "echo a; echo b\n", &r), 0);
	ck_assert_int_eq(r.status, 0);
	want_out(&s, 3, "o", "a\nb\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* The abort signal between runs is harmless. */
START_TEST(bash_abort_idle)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1, "true\n", &r), 0);
	free_report(&r);
	ck_assert_int_eq(kill(s.pid, SHELL_ABORT_SIG), 0);
	usleep(100000);
	ck_assert_int_eq(sh_run(&s, 2, "echo still\n", &r), 0);
	ck_assert_int_eq(r.status, 0);
	want_out(&s, 2, "o", "still\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* Waits for the pid a command wrote to DIR/name; returns it. */
static pid_t wait_pid_file(struct sh *s, const char *name)
{
	int64_t t0 = now_ms();
	size_t len;
	char *p;
	pid_t pid;

	while (!(p = unit_slurp_at(s->dfd, name, &len)) || len == 0) {
		free(p);
		ck_assert_int_lt(now_ms() - t0, 5000);
		usleep(10000);
	}
	pid = (pid_t)atol(p);
	free(p);
	return pid;
}

/* No trap of a command's can keep the abort signal from ending the
 * script, and the shell it ran in stays. */
START_TEST(bash_abort_untrappable)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1,
				"trap '' RTMIN+3; trap 'echo caught' RTMIN+3\n"
				"PLAIN=kept\n",
				&r),
			 0);
	free_report(&r);
	sh_send(&s, 2, 'n',
		"sh -c 'echo $$ > sleeper.pid; exec sleep 20'\n"
		"echo not-reached\n");
	ck_assert_int_eq(kill(wait_pid_file(&s, "sleeper.pid"), 0), 0);
	sh_abort(&s, 2);
	usleep(100000);
	ck_assert_int_eq(kill(wait_pid_file(&s, "sleeper.pid"), SIGKILL), 0);
	ck_assert_int_eq(sh_wait(&s, &r, 5000), 0);
	ck_assert_int_ne(r.status, 0);
	want_out(&s, 2, "o", "");
	free_report(&r);
	ck_assert_int_eq(sh_run(&s, 3, "echo \"$PLAIN\"\n", &r), 0);
	want_out(&s, 3, "o", "kept\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* A loop of builtins in a function ends at the abort signal alone. */
START_TEST(bash_abort_loop)
{
	static struct sh s;
	struct report r;
	int64_t t0;

	sh_start(&s);
	sh_send(&s, 1, 'n',
		"f() { while :; do for ((;;)); do :; done; done; }\n"
		"f\necho not-reached\n");
	usleep(200000);
	sh_abort(&s, 1);
	t0 = now_ms();
	ck_assert_int_eq(sh_wait(&s, &r, 5000), 0);
	ck_assert_int_lt(now_ms() - t0, 3000);
	want_out(&s, 1, "o", "");
	free_report(&r);
	ck_assert_int_eq(sh_run(&s, 2, "echo a\n", &r), 0);
	want_out(&s, 2, "o", "a\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* The run's key from the control line comes back in both its frames. */
START_TEST(bash_keyed)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	sh_send_key(&s, 1, "echo k\n", "00112233445566ff");
	ck_assert_int_eq(sh_wait(&s, &r, 10000), 0);
	ck_assert(r.keyed && r.e_keyed);
	ck_assert(r.key == 0x00112233445566ffULL && r.e_key == r.key);
	free_report(&r);
	ck_assert_int_eq(sh_run(&s, 2, "true\n", &r), 0);
	ck_assert(!r.keyed && !r.e_keyed); /* a line without one */
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* The abort signal sent by anyone but with kill(2), no run named, is not
 * the daemon's: the run goes on. */
START_TEST(bash_abort_plain)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	sh_send(&s, 1, 'n', "sleep 0.3; echo done\n");
	usleep(100000);
	ck_assert_int_eq(kill(s.pid, SHELL_ABORT_SIG), 0);
	ck_assert_int_eq(sh_wait(&s, &r, 10000), 0);
	ck_assert_int_eq(r.status, 0);
	want_out(&s, 1, "o", "done\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* The abort of a run whose line waits while the shell runs a trap: the
 * trap stops, the run's command never runs, and the shell goes on. */
START_TEST(bash_abort_before)
{
	static struct sh s;
	struct report r;

	sh_start(&s);
	ck_assert_int_eq(sh_run(&s, 1,
				"trap 'echo t > trap.on; while :; do :; done' "
				"USR1\n",
				&r),
			 0);
	free_report(&r);
	ck_assert_int_eq(kill(s.pid, SIGUSR1), 0);
	wait_pid_file(&s, "trap.on"); /* "t": the trap is running */
	sh_send(&s, 2, 'n', "echo ran > ran.txt\n");
	sh_abort(&s, 2);
	ck_assert_int_eq(sh_wait(&s, &r, 5000), 0);
	ck_assert_int_ne(r.status, 0);
	ck_assert_int_eq(faccessat(s.dfd, "ran.txt", F_OK, 0), -1);
	free_report(&r);
	ck_assert_int_eq(sh_run(&s, 3, "echo after\n", &r), 0);
	ck_assert_int_eq(r.status, 0);
	want_out(&s, 3, "o", "after\n");
	free_report(&r);
	sh_stop(&s);
}
END_TEST

/* set -n, functions named like builtins, every descriptor closed and a
 * low ulimit -n: each run reports its own status, and the idle shell has
 * its protocol descriptors again. */
START_TEST(bash_hostile)
{
	static const struct {
		const char *cmd;
		int status;
	} t[] = {
		{ "builtin() { :; }; read() { :; }; printf() { :; }\n", 0 },
		{ "set -n\nexit 9\n", 0 },
		{ "for f in $(ls /proc/$$/fd); do\n"
		  "  [ \"$f\" -gt 2 ] && eval \"exec $f>&-\"; done\n"
		  "(exit 7)\n",
		  7 },
		{ "ulimit -n 50; (exit 6)\n", 6 },
		{ "for v in $(compgen -v); do unset $v; done 2>/dev/null\n"
		  "(exit 5)\n",
		  5 },
		{ "echo alive\n", 0 },
	};
	static struct sh s;
	struct report r;

	sh_start(&s);
	for (unsigned i = 0; i < sizeof(t) / sizeof(*t); i++) {
		ck_assert_msg(sh_run(&s, i + 1, t[i].cmd, &r) == 0,
			      "shell gone after '%s'", t[i].cmd);
		ck_assert_msg(r.status == t[i].status, "'%s': %d, want %d",
			      t[i].cmd, r.status, t[i].status);
		free_report(&r);
		want_out(&s, i + 1, "e", "");
		ck_assert(same_file(s.pid, 0, s.ctl));
	}
	want_out(&s, sizeof(t) / sizeof(*t), "o", "alive\n");
	sh_stop(&s);
}
END_TEST

/* The daemon's copy of the driver: the module's bytes in a memfd that is
 * close-on-exec and sealed (nothing can write, grow or shrink it), made
 * once. */
START_TEST(driver_sealed)
{
	struct stat a, b;
	int fd, seals;

	shell_set_driver(SFS_TEST_DRIVER);
	fd = shell_load_driver();
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(shell_load_driver(), fd);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	seals = fcntl(fd, F_GET_SEALS);
	ck_assert_int_eq(seals, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
					F_SEAL_SEAL);
	ck_assert_int_eq(stat(SFS_TEST_DRIVER, &a), 0);
	ck_assert_int_eq(fstat(fd, &b), 0);
	ck_assert_int_eq(a.st_size, b.st_size);
	ck_assert_int_eq(pwrite(fd, "x", 1, 0), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(ftruncate(fd, 0), -1);
	ck_assert_int_eq(errno, EPERM);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("shell");
	TCase *tc = tcase_create("frame");

	tcase_add_test(tc, frame_basic);
	tcase_add_test(tc, frame_keyed);
	tcase_add_test(tc, frame_exit_kind);
	tcase_add_test(tc, frame_status);
	tcase_add_test(tc, frame_empty_fields);
	tcase_add_test(tc, frame_not_started);
	tcase_add_test(tc, frame_sequence);
	tcase_add_test(tc, frame_prefixes);
	tcase_add_test(tc, frame_malformed);
	suite_add_tcase(s, tc);
	tc = tcase_create("prelude");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_test(tc, prelude_records);
	suite_add_tcase(s, tc);
	tc = tcase_create("driver");
	tcase_add_test(tc, driver_sealed);
	suite_add_tcase(s, tc);
	tc = tcase_create("bash");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, bash_echo);
	tcase_add_test(tc, bash_state);
	tcase_add_test(tc, bash_statuses);
	tcase_add_test(tc, bash_many_runs);
	tcase_add_test(tc, bash_stdin_empty);
	tcase_add_test(tc, bash_fds_closed);
	tcase_add_test(tc, bash_spin);
	tcase_add_test(tc, bash_no_fake);
	tcase_add_test(tc, bash_prelude);
	tcase_add_test(tc, bash_shadowing);
	tcase_add_test(tc, bash_background);
	tcase_add_test(tc, bash_large_script);
	tcase_add_test(tc, bash_exit);
	tcase_add_test(tc, bash_set_e);
	tcase_add_test(tc, bash_eof_ends);
	tcase_add_test(tc, bash_abort);
	tcase_add_test(tc, bash_abort_idle);
	tcase_add_test(tc, bash_abort_untrappable);
	tcase_add_test(tc, bash_abort_loop);
	tcase_add_test(tc, bash_abort_plain);
	tcase_add_test(tc, bash_abort_before);
	tcase_add_test(tc, bash_keyed);
	tcase_add_test(tc, bash_hostile);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
