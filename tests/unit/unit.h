/* unit.h - small helpers shared by the Check unit tests. */
#ifndef SFS_UNIT_H
#define SFS_UNIT_H

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
