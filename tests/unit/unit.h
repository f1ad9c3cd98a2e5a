/* unit.h - small helpers shared by the Check unit tests. */
#ifndef SFS_UNIT_H
#define SFS_UNIT_H

#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Copies len bytes so that they end exactly where an inaccessible page
 * begins: a parser that reads one byte past len crashes (and Check
 * reports the test as an error) instead of reading garbage silently.
 */
struct guarded {
	char *map;
	size_t maplen;
	char *p;
};

static inline const char *guard_copy(struct guarded *g, const void *src,
				     size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t data = (len + pg - 1) / pg * pg;

	if (data == 0)
		data = pg;
	g->maplen = data + pg;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(g->map, MAP_FAILED);
	ck_assert_int_eq(mprotect(g->map + data, pg, PROT_NONE), 0);
	g->p = g->map + data - len;
	if (len)
		memcpy(g->p, src, len);
	return g->p;
}

static inline void guard_free(struct guarded *g)
{
	munmap(g->map, g->maplen);
}

/*
 * Scratch directories: one base for the whole run (made and removed by
 * the parent in an unchecked fixture, so that it goes even when a test
 * fails) and a fresh one inside it per test.
 */
static inline void unit_mkbase(char *base, const char *tmpl)
{
	strcpy(base, tmpl);
	if (!mkdtemp(base))
		abort();
}

static inline void unit_rmbase(const char *base)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", base);
}

/* A fresh directory under base (its name in path); an fd open on it. */
static inline int unit_new_dir(const char *base, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/t-XXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(path));
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

/*
 * The whole file name in dfd (malloc'd, with a NUL after it); *len its
 * size. NULL if it cannot be opened.
 */
static inline char *unit_slurp_at(int dfd, const char *name, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *p;

	if (fd < 0)
		return NULL;
	ck_assert_int_eq(fstat(fd, &st), 0);
	p = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(pread(fd, p, (size_t)st.st_size, 0), st.st_size);
	p[st.st_size] = '\0';
	close(fd);
	*len = (size_t)st.st_size;
	return p;
}

/* Creates (or truncates) name in dfd holding len bytes text. */
static inline void unit_put_at(int dfd, const char *name, const char *text,
			       size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* Runs one suite with CK_NORMAL output; the exit status of main. */
static inline int unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
