/*
 * pattern.h - the patterns users write to an expect file (a terminal's,
 * a run's, a process's): an extended regex and an optional timeout,
 * bounded so that matching stays cheap, and the search of a growing
 * file's lines for the first one a pattern matches.
 */
#ifndef SFS_PATTERN_H
#define SFS_PATTERN_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a pattern may be: glibc's matcher takes time exponential in its
 * back-references and proportional to the size of its automaton, in
 * which an interval {m,n} copies its atom n times. */
#define PATTERN_MAX	 1024  /* bytes */
#define PATTERN_COST_MAX 256   /* atoms that intervals add */
#define PATTERN_LINE_MAX 65536 /* a longer line is matched on its start */

/* 0 when the extended regex pat (len bytes) is cheap enough to match;
 * -ENOTSUP for a back-reference (\1..\9), -E2BIG when too long or when
 * its intervals add too many atoms. */
int pattern_check(const char *pat, size_t len);
/* "PATTERN TIMEOUT_MS": when the last word is a number (9 digits at
 * most) after a space, *ms is set to it and *len cut before the space. */
void pattern_split_timeout(const char *p, size_t *len, uint64_t *ms);
/* Checks and compiles pat (len bytes) into re (REG_EXTENDED|REG_NOSUB).
 * Returns 0, or -EINVAL with why (a phrase) set, or -ENOMEM. */
int pattern_compile(const char *pat, size_t len, regex_t *re, char *why,
		    size_t wlen);

/* A search of a file's lines, resumed where it stopped: off is where
 * the next line starts; skip is set while the rest of a line longer than
 * PATTERN_LINE_MAX (matched on its start already) is passed over. */
struct pattern_scan {
	uint64_t off;
	bool skip;
};
/* The first line of fd from s->off to end that re matches, malloc'd with
 * its newline; a line that has none yet is tried only when final (the
 * file grows no more). NULL when none: s->off is then where the next
 * search goes on. *err is 0, or -errno of a read error (NULL). A NUL
 * byte ends what is matched of its line. */
char *pattern_scan_fd(struct pattern_scan *s, int fd, uint64_t end, bool final,
		      const regex_t *re, int *err);

#endif
