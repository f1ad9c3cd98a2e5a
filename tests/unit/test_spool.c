/* test_spool.c - output spool files (append, splice from a pipe, max,
 * close) and output index. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "sessions/session/spool.h"
#include "unit.h"

/* One directory for the whole run (made and removed by the parent, so
 * that it goes even when a test fails) and one inside it per test. */
static char base[] = "/tmp/sfs-spool-XXXXXX";
static int dfd = -1;

static void base_setup(void)
{
	unit_mkbase(base, "/tmp/sfs-spool-XXXXXX");
}

static void base_teardown(void)
{
	unit_rmbase(base);
}

static void setup(void)
{
	char dir[64];

	dfd = unit_new_dir(base, dir, sizeof(dir));
}

static void teardown(void)
{
	close(dfd);
}

/* The whole file (malloc'd); *len its size. */
static char *slurp(const char *name, size_t *len)
{
	char *p = unit_slurp_at(dfd, name, len);

	ck_assert_msg(p != NULL, "cannot open %s", name);
	return p;
}

static void pattern(char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)((i * 131 + seed) ^ (i >> 8));
}

START_TEST(open_creates)
{
	struct spool sp = { .fd = -1, .size = 99, .truncated = true };
	struct stat st;

	ck_assert_int_eq(spool_open(&sp, dfd, "r1.out", 100), 0);
	ck_assert_int_ge(sp.fd, 0);
	ck_assert_uint_eq(sp.size, 0);
	ck_assert_uint_eq(sp.max, 100);
	ck_assert(!sp.truncated);
	ck_assert_int_eq(fstatat(dfd, "r1.out", &st, 0), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert(fcntl(sp.fd, F_GETFD) & FD_CLOEXEC);
	spool_close(&sp);
	ck_assert_int_eq(sp.fd, -1);
}
END_TEST

/* Opening an existing file empties it. */
START_TEST(open_empties)
{
	struct spool sp;
	size_t len;
	char *p;
	int fd = openat(dfd, "old", O_WRONLY | O_CREAT, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "leftover data", 13), 13);
	close(fd);
	ck_assert_int_eq(spool_open(&sp, dfd, "old", 0), 0);
	ck_assert_int_eq(spool_append(&sp, "new", 3), 3);
	spool_close(&sp);
	p = slurp("old", &len);
	ck_assert_uint_eq(len, 3);
	ck_assert_mem_eq(p, "new", 3);
	free(p);
}
END_TEST

START_TEST(open_fails)
{
	struct spool sp;

	ck_assert_int_eq(spool_open(&sp, dfd, "no/such/dir", 0), -ENOENT);
	ck_assert_int_lt(sp.fd, 0);
	ck_assert_int_eq(spool_open(&sp, -1, "relative", 0), -EBADF);
	ck_assert_int_eq(mkdirat(dfd, "isdir", 0700), 0);
	ck_assert_int_eq(spool_open(&sp, dfd, "isdir", 0), -EISDIR);
	spool_close(&sp); /* harmless on a failed open */
	ck_assert_int_eq(sp.fd, -1);
}
END_TEST

/* Appends of many sizes, unlimited: the file is their concatenation, and
 * each append returns the bytes it kept. */
START_TEST(append_sizes)
{
	static const size_t sizes[] = { 0,     1,     2,      7,       511,
					512,   4095,  4096,   4097,    65535,
					65536, 65537, 100000, 1 << 20, 3 };
	size_t total = 0, len;
	char *want, *got;
	struct spool sp;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
		total += sizes[i];
	want = malloc(total);
	ck_assert_ptr_nonnull(want);
	pattern(want, total, 7);
	ck_assert_int_eq(spool_open(&sp, dfd, "r2.out", 0), 0);
	for (size_t i = 0, off = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		ck_assert_int_eq(spool_append(&sp, want + off, sizes[i]),
				 (ssize_t)sizes[i]);
		off += sizes[i];
		ck_assert_uint_eq(sp.size, off);
	}
	ck_assert(!sp.truncated);
	spool_close(&sp);
	ck_assert_uint_eq(sp.size, total); /* size stays after close */
	got = slurp("r2.out", &len);
	ck_assert_uint_eq(len, total);
	ck_assert(memcmp(got, want, total) == 0);
	free(got);
	free(want);
}
END_TEST

/* NUL bytes and every other byte are kept. */
START_TEST(append_binary)
{
	char all[256], *got;
	struct spool sp;
	size_t len;

	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	ck_assert_int_eq(spool_open(&sp, dfd, "bin", 0), 0);
	ck_assert_int_eq(spool_append(&sp, "a\0b", 3), 3);
	ck_assert_int_eq(spool_append(&sp, all, sizeof(all)), 256);
	spool_close(&sp);
	got = slurp("bin", &len);
	ck_assert_uint_eq(len, 259);
	ck_assert_mem_eq(got, "a\0b", 3);
	ck_assert(memcmp(got + 3, all, 256) == 0);
	free(got);
}
END_TEST

/* A write that crosses max keeps what fits (and says how much) and sets
 * truncated. */
START_TEST(max_crossing)
{
	struct spool sp;
	size_t len;
	char *got;

	ck_assert_int_eq(spool_open(&sp, dfd, "m", 10), 0);
	ck_assert_int_eq(spool_append(&sp, "abcd", 4), 4);
	ck_assert(!sp.truncated);
	ck_assert_int_eq(spool_append(&sp, "efgh", 4), 4);
	ck_assert(!sp.truncated);
	ck_assert_int_eq(spool_append(&sp, "ijkl", 4), 2);
	ck_assert(sp.truncated);
	ck_assert_uint_eq(sp.size, 10);
	/* everything after is dropped, still without error */
	ck_assert_int_eq(spool_append(&sp, "mnop", 4), 0);
	ck_assert_int_eq(spool_append(&sp, "q", 1), 0);
	ck_assert_uint_eq(sp.size, 10);
	ck_assert(sp.truncated);
	spool_close(&sp);
	got = slurp("m", &len);
	ck_assert_uint_eq(len, 10);
	ck_assert_mem_eq(got, "abcdefghij", 10);
	free(got);
}
END_TEST

/* Filling max exactly is not truncation; one byte more is. */
START_TEST(max_exact)
{
	struct spool sp;
	size_t len;
	char *got;

	ck_assert_int_eq(spool_open(&sp, dfd, "e", 8), 0);
	ck_assert_int_eq(spool_append(&sp, "12345678", 8), 8);
	ck_assert_uint_eq(sp.size, 8);
	ck_assert(!sp.truncated);
	ck_assert_int_eq(spool_append(&sp, "", 0), 0);
	ck_assert(!sp.truncated);
	ck_assert_int_eq(spool_append(&sp, "9", 1), 0);
	ck_assert(sp.truncated);
	ck_assert_uint_eq(sp.size, 8);
	spool_close(&sp);
	got = slurp("e", &len);
	ck_assert_uint_eq(len, 8);
	ck_assert_mem_eq(got, "12345678", 8);
	free(got);
}
END_TEST

/* One write far larger than max. */
START_TEST(max_single_large)
{
	size_t n = 3 << 20, len;
	char *buf = malloc(n), *got;
	struct spool sp;

	ck_assert_ptr_nonnull(buf);
	pattern(buf, n, 3);
	ck_assert_int_eq(spool_open(&sp, dfd, "big", 1000000), 0);
	ck_assert_int_eq(spool_append(&sp, buf, n), 1000000);
	ck_assert_uint_eq(sp.size, 1000000);
	ck_assert(sp.truncated);
	spool_close(&sp);
	got = slurp("big", &len);
	ck_assert_uint_eq(len, 1000000);
	ck_assert(memcmp(got, buf, len) == 0);
	free(got);
	free(buf);
}
END_TEST

/* max 1: the smallest limit. */
START_TEST(max_one)
{
	struct spool sp;
	size_t len;
	char *got;

	ck_assert_int_eq(spool_open(&sp, dfd, "one", 1), 0);
	ck_assert_int_eq(spool_append(&sp, "xy", 2), 1);
	ck_assert(sp.truncated);
	ck_assert_uint_eq(sp.size, 1);
	spool_close(&sp);
	got = slurp("one", &len);
	ck_assert_uint_eq(len, 1);
	ck_assert_int_eq(got[0], 'x');
	free(got);
}
END_TEST

/* Reopening a spool struct resets size and truncated. */
START_TEST(reopen_resets)
{
	struct spool sp;

	ck_assert_int_eq(spool_open(&sp, dfd, "a", 2), 0);
	ck_assert_int_eq(spool_append(&sp, "abc", 3), 2);
	ck_assert(sp.truncated);
	spool_close(&sp);
	ck_assert_int_eq(spool_open(&sp, dfd, "a", 0), 0);
	ck_assert_uint_eq(sp.size, 0);
	ck_assert(!sp.truncated);
	ck_assert_uint_eq(sp.max, 0);
	ck_assert_int_eq(spool_append(&sp, "abc", 3), 3);
	ck_assert_uint_eq(sp.size, 3);
	ck_assert(!sp.truncated);
	spool_close(&sp);
}
END_TEST

START_TEST(close_twice)
{
	struct spool sp;
	int fd;

	ck_assert_int_eq(spool_open(&sp, dfd, "c", 0), 0);
	fd = sp.fd;
	spool_close(&sp);
	ck_assert_int_eq(sp.fd, -1);
	ck_assert_int_eq(fcntl(fd, F_GETFD), -1); /* really closed */
	spool_close(&sp);
	ck_assert_int_eq(sp.fd, -1);
	/* appending to a closed spool is an error, not a crash */
	ck_assert_int_eq(spool_append(&sp, "x", 1), -EBADF);
	ck_assert_uint_eq(sp.size, 0);
}
END_TEST

/* The budget bounds all spools together; each stream still keeps its
 * first SPOOL_FREE_BYTES, and a cut names its reason. */
START_TEST(budget_cut)
{
	static char big[SPOOL_FREE_BYTES * 2];
	struct spool a, b;
	uint64_t base = spool_used();

	spool_set_budget(base + 1000);
	ck_assert_int_eq(spool_open(&a, dfd, "a", 0), 0);
	ck_assert_int_eq(spool_open(&b, dfd, "b", 0), 0);
	ck_assert_int_eq(spool_append(&a, big, sizeof(big)), SPOOL_FREE_BYTES);
	ck_assert(a.truncated);
	ck_assert_int_eq(a.cut, SPOOL_BUDGET);
	ck_assert_str_eq(spool_cut_name(a.cut), "budget");
	/* spent: b still keeps its first SPOOL_FREE_BYTES, not more */
	ck_assert_int_eq(spool_append(&b, "x", 1), 1);
	ck_assert(!b.truncated);
	ck_assert_int_eq(spool_append(&b, big, sizeof(big)),
			 SPOOL_FREE_BYTES - 1);
	ck_assert_int_eq(b.cut, SPOOL_BUDGET);
	ck_assert_uint_eq(spool_used(), base + 2 * SPOOL_FREE_BYTES);
	/* released, the budget has room again */
	spool_release(&a);
	spool_release(&b);
	ck_assert_uint_eq(spool_used(), base);
	spool_close(&a);
	spool_close(&b);
	spool_set_budget(0);
}
END_TEST

/* The per-stream limit is the reason when it comes first. */
START_TEST(limit_reason)
{
	struct spool sp;

	ck_assert_int_eq(spool_open(&sp, dfd, "l", 4), 0);
	ck_assert_int_eq(sp.cut, SPOOL_KEPT);
	ck_assert_str_eq(spool_cut_name(sp.cut), "-");
	ck_assert_int_eq(spool_append(&sp, "123456", 6), 4);
	ck_assert_int_eq(sp.cut, SPOOL_LIMIT);
	ck_assert_str_eq(spool_cut_name(sp.cut), "limit");
	spool_release(&sp);
	spool_close(&sp);
}
END_TEST

/* A full filesystem (here /dev/full) is a cut, not an error: the bytes
 * are dropped and the reason is nospace with its errno. */
START_TEST(nospace)
{
	struct spool sp;

	ck_assert_int_eq(spool_open(&sp, dfd, "/dev/full", 0), 0);
	ck_assert_int_eq(spool_append(&sp, "abc", 3), 0);
	ck_assert(sp.truncated);
	ck_assert_int_eq(sp.cut, SPOOL_NOSPACE);
	ck_assert_int_eq(sp.err, ENOSPC);
	ck_assert_str_eq(spool_cut_name(sp.cut), "nospace");
	/* later output is dropped too, so what is kept stays a prefix */
	ck_assert_int_eq(spool_append(&sp, "d", 1), 0);
	ck_assert_uint_eq(sp.size, 0);
	spool_close(&sp);
}
END_TEST

/* A pipe with n bytes of pattern seed in it; fd[0] is its read end. */
static void filled_pipe(int fd[2], char *want, size_t n, unsigned seed)
{
	ck_assert_int_eq(pipe(fd), 0);
	ck_assert_int_ge(fcntl(fd[1], F_SETPIPE_SZ, 1 << 20), (int)n);
	pattern(want, n, seed);
	ck_assert_int_eq(write(fd[1], want, n), (ssize_t)n);
}

/* Output spliced from a pipe is kept as appended output is, after it. */
START_TEST(splice_keeps)
{
	static char want[300000];
	size_t len;
	struct spool sp;
	char *got;
	int fd[2];

	filled_pipe(fd, want + 3, sizeof(want) - 3, 7);
	ck_assert_int_eq(spool_open(&sp, dfd, "s", 0), 0);
	memcpy(want, "abc", 3);
	ck_assert_int_eq(spool_append(&sp, "abc", 3), 3);
	ck_assert_int_eq(spool_splice(&sp, fd[0], sizeof(want) - 3),
			 sizeof(want) - 3);
	ck_assert_uint_eq(sp.size, sizeof(want));
	ck_assert(!sp.truncated);
	/* an empty pipe gives nothing, and no cut */
	ck_assert_int_eq(spool_splice(&sp, fd[0], 100), 0);
	ck_assert(!sp.truncated);
	spool_close(&sp);
	got = slurp("s", &len);
	ck_assert_uint_eq(len, sizeof(want));
	ck_assert(memcmp(got, want, sizeof(want)) == 0);
	free(got);
	close(fd[0]);
	close(fd[1]);
}
END_TEST

/* A splice that crosses max keeps what fits and leaves the rest in the
 * pipe, for the caller to drop; later ones keep nothing. */
START_TEST(splice_max)
{
	char want[12];
	size_t len;
	struct spool sp;
	char *got;
	int fd[2], left = 0;

	filled_pipe(fd, want, sizeof(want), 1);
	ck_assert_int_eq(spool_open(&sp, dfd, "sm", 10), 0);
	ck_assert_int_eq(spool_splice(&sp, fd[0], sizeof(want)), 10);
	ck_assert(sp.truncated);
	ck_assert_int_eq(sp.cut, SPOOL_LIMIT);
	ck_assert_int_eq(ioctl(fd[0], FIONREAD, &left), 0);
	ck_assert_int_eq(left, 2);
	ck_assert_int_eq(spool_splice(&sp, fd[0], 2), 0);
	spool_close(&sp);
	got = slurp("sm", &len);
	ck_assert_uint_eq(len, 10);
	ck_assert(memcmp(got, want, 10) == 0);
	free(got);
	close(fd[0]);
	close(fd[1]);
}
END_TEST

/* A file that takes no splice (/dev/full) gets the bytes by copy: here
 * the full filesystem's cut, as spool_append makes it. */
START_TEST(splice_refused)
{
	char want[5];
	struct spool sp;
	int fd[2];

	filled_pipe(fd, want, sizeof(want), 2);
	ck_assert_int_eq(spool_open(&sp, dfd, "/dev/full", 0), 0);
	ck_assert_int_eq(spool_splice(&sp, fd[0], sizeof(want)), 0);
	ck_assert(sp.truncated);
	ck_assert_int_eq(sp.cut, SPOOL_NOSPACE);
	ck_assert_int_eq(sp.err, ENOSPC);
	ck_assert_uint_eq(sp.size, 0);
	spool_close(&sp);
	close(fd[0]);
	close(fd[1]);
}
END_TEST

/* A command's file is written whole, or not left at all. */
START_TEST(write_file)
{
	size_t len;
	char *got;
	uint64_t base = spool_used();

	ck_assert_int_eq(spool_write_file(dfd, "c.cmd", "echo hi\n", 8), 0);
	got = slurp("c.cmd", &len);
	ck_assert_uint_eq(len, 8);
	ck_assert_mem_eq(got, "echo hi\n", 8);
	free(got);
	ck_assert_uint_eq(spool_used(), base); /* not output */
	ck_assert_int_eq(spool_write_file(dfd, "no/such/x", "a", 1), -ENOENT);
}
END_TEST

/* Two spools of one run write independent files. */
START_TEST(two_spools)
{
	struct spool o, e;
	size_t lo, le;
	char *po, *pe;

	ck_assert_int_eq(spool_open(&o, dfd, "r9.out", 0), 0);
	ck_assert_int_eq(spool_open(&e, dfd, "r9.err", 0), 0);
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(spool_append(&o, "out\n", 4), 4);
		ck_assert_int_eq(spool_append(&e, "e", 1), 1);
	}
	spool_close(&o);
	spool_close(&e);
	po = slurp("r9.out", &lo);
	pe = slurp("r9.err", &le);
	ck_assert_uint_eq(lo, 4000);
	ck_assert_uint_eq(le, 1000);
	for (size_t i = 0; i < lo; i += 4)
		ck_assert_mem_eq(po + i, "out\n", 4);
	for (size_t i = 0; i < le; i++)
		ck_assert_int_eq(pe[i], 'e');
	free(po);
	free(pe);
}
END_TEST

/* The output index: pieces of two streams in arrival order. */
static void add(struct outidx *x, unsigned stream, uint64_t src, uint64_t len)
{
	ck_assert_int_eq(outidx_add(x, stream, src, len), 0);
}

static void want_rec(int fd, uint64_t i, uint64_t off, uint64_t src,
		     uint64_t len, uint64_t stream)
{
	struct outrec r;

	ck_assert_int_eq(outidx_get(fd, i, &r), 0);
	ck_assert_uint_eq(r.off, off);
	ck_assert_uint_eq(r.src, src);
	ck_assert_uint_eq(r.len, len);
	ck_assert_uint_eq(r.stream, stream);
}

START_TEST(idx_records)
{
	struct outidx x;
	struct stat st;
	int fd;

	ck_assert_int_eq(outidx_open(&x, dfd, "r1.idx"), 0);
	ck_assert_int_ge(x.fd, 0);
	ck_assert_uint_eq(x.size, 0);
	ck_assert_uint_eq(x.nrec, 0);
	add(&x, 1, 0, 0); /* empty pieces make no record */
	ck_assert_uint_eq(x.nrec, 0);
	add(&x, 1, 0, 5);
	add(&x, 1, 5, 3); /* same stream, contiguous: one record */
	ck_assert_uint_eq(x.nrec, 1);
	add(&x, 2, 0, 4);
	add(&x, 1, 8, 2);
	add(&x, 1, 10, 0);
	add(&x, 2, 4, 1);
	add(&x, 2, 5, 6);
	ck_assert_uint_eq(x.nrec, 4);
	ck_assert_uint_eq(x.size, 21);
	outidx_close(&x);
	ck_assert_int_eq(x.fd, -1);
	outidx_close(&x);

	ck_assert_int_eq(fstatat(dfd, "r1.idx", &st, 0), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_size, 4 * sizeof(struct outrec));
	fd = openat(dfd, "r1.idx", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	want_rec(fd, 0, 0, 0, 8, 1);
	want_rec(fd, 1, 8, 0, 4, 2);
	want_rec(fd, 2, 12, 8, 2, 1);
	want_rec(fd, 3, 14, 4, 7, 2);
	{
		struct outrec r;

		ck_assert_int_eq(outidx_get(fd, 4, &r), -EIO);
		ck_assert_int_eq(outidx_get(fd, 1000, &r), -EIO);
		ck_assert_int_eq(outidx_get(-1, 0, &r), -EBADF);
	}
	close(fd);
}
END_TEST

/* A gap in one stream (its spool dropped bytes) starts a new record. */
START_TEST(idx_gap)
{
	struct outidx x;
	int fd;

	ck_assert_int_eq(outidx_open(&x, dfd, "gap.idx"), 0);
	add(&x, 1, 0, 4);
	add(&x, 1, 10, 4);
	ck_assert_uint_eq(x.nrec, 2);
	outidx_close(&x);
	fd = openat(dfd, "gap.idx", O_RDONLY | O_CLOEXEC);
	want_rec(fd, 0, 0, 0, 4, 1);
	want_rec(fd, 1, 4, 10, 4, 1);
	close(fd);
}
END_TEST

START_TEST(idx_find)
{
	struct outidx x;
	struct outrec r;
	uint64_t i = 99;
	int fd;

	ck_assert_int_eq(outidx_open(&x, dfd, "f.idx"), 0);
	fd = openat(dfd, "f.idx", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(outidx_find(fd, 0, &r, &i), -ENOENT);
	add(&x, 1, 0, 8);
	add(&x, 2, 0, 4);
	add(&x, 1, 8, 2);
	for (uint64_t off = 0; off < 14; off++) {
		uint64_t want = off < 8 ? 0 : off < 12 ? 1 : 2;

		ck_assert_int_eq(outidx_find(fd, off, &r, &i), 0);
		ck_assert_uint_eq(i, want);
		ck_assert(r.off <= off && off < r.off + r.len);
	}
	ck_assert_int_eq(outidx_find(fd, 14, &r, &i), -ENOENT);
	ck_assert_int_eq(outidx_find(fd, UINT64_MAX, &r, &i), -ENOENT);
	ck_assert_int_eq(outidx_find(-1, 0, &r, &i), -EBADF);
	outidx_close(&x);
	close(fd);
}
END_TEST

/*
 * Thousands of pieces of both streams, as a run's fifos would deliver
 * them: the two spools plus the index give back the interleaved output
 * byte for byte, from any offset.
 */
START_TEST(idx_rebuild)
{
	enum { PIECES = 4000 };
	struct spool sp[3];
	struct outidx x;
	size_t cap = PIECES * 64, total = 0;
	char *want = malloc(cap), *got = malloc(cap), *so, *se;
	unsigned seed = 12345;
	size_t lo, le;
	int fd;

	ck_assert(want && got);
	ck_assert_int_eq(spool_open(&sp[1], dfd, "r5.out", 0), 0);
	ck_assert_int_eq(spool_open(&sp[2], dfd, "r5.err", 0), 0);
	ck_assert_int_eq(outidx_open(&x, dfd, "r5.idx"), 0);
	for (int p = 0; p < PIECES; p++) {
		unsigned stream, len;
		char buf[64];
		uint64_t at;

		seed = seed * 1103515245u + 12345u;
		stream = (seed >> 16) % 3 ? 1 : 2; /* runs of one stream too */
		len = 1 + (seed >> 8) % 63;
		for (unsigned k = 0; k < len; k++)
			buf[k] = (char)(stream == 1 ? 'a' + (p + k) % 26 :
						      'A' + (p + k) % 26);
		at = sp[stream].size;
		ck_assert_int_eq(spool_append(&sp[stream], buf, len),
				 (ssize_t)len);
		add(&x, stream, at, len);
		memcpy(want + total, buf, len);
		total += len;
	}
	ck_assert_uint_eq(x.size, total);
	ck_assert_uint_lt(x.nrec, PIECES);
	spool_close(&sp[1]);
	spool_close(&sp[2]);
	outidx_close(&x);

	so = slurp("r5.out", &lo);
	se = slurp("r5.err", &le);
	ck_assert_uint_eq(lo + le, total);
	fd = openat(dfd, "r5.idx", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	/* sequential, the way a reader walks it */
	{
		struct outrec r;
		uint64_t i, off = 0;

		ck_assert_int_eq(outidx_find(fd, 0, &r, &i), 0);
		do {
			const char *src = r.stream == 1 ? so : se;

			ck_assert_uint_eq(r.off, off);
			ck_assert_uint_le(r.src + r.len,
					  r.stream == 1 ? lo : le);
			memcpy(got + off, src + r.src, r.len);
			off += r.len;
		} while (outidx_get(fd, ++i, &r) == 0);
		ck_assert_uint_eq(off, total);
		ck_assert(memcmp(got, want, total) == 0);
	}
	/* random offsets */
	for (int k = 0; k < 2000; k++) {
		uint64_t off = (uint64_t)(k * 7877) % total, i;
		struct outrec r;
		const char *src;

		ck_assert_int_eq(outidx_find(fd, off, &r, &i), 0);
		src = r.stream == 1 ? so : se;
		ck_assert(r.off <= off && off < r.off + r.len);
		ck_assert_int_eq(src[r.src + (off - r.off)], want[off]);
	}
	close(fd);
	free(so);
	free(se);
	free(want);
	free(got);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("spool");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, open_creates);
	tcase_add_test(tc, open_empties);
	tcase_add_test(tc, open_fails);
	tcase_add_test(tc, append_sizes);
	tcase_add_test(tc, append_binary);
	tcase_add_test(tc, max_crossing);
	tcase_add_test(tc, max_exact);
	tcase_add_test(tc, max_single_large);
	tcase_add_test(tc, max_one);
	tcase_add_test(tc, reopen_resets);
	tcase_add_test(tc, close_twice);
	tcase_add_test(tc, two_spools);
	tcase_add_test(tc, budget_cut);
	tcase_add_test(tc, limit_reason);
	tcase_add_test(tc, nospace);
	tcase_add_test(tc, write_file);
	tcase_add_test(tc, splice_keeps);
	tcase_add_test(tc, splice_max);
	tcase_add_test(tc, splice_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("outidx");
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, idx_records);
	tcase_add_test(tc, idx_gap);
	tcase_add_test(tc, idx_find);
	tcase_add_test(tc, idx_rebuild);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
