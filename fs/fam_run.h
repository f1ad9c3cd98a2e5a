/*
 * fam_run.h - a run's files (cmd, stdout, stderr, output, stream, exit,
 * status, result.json, timeout), runs/ with runs/N and latest. The rows
 * of a run's output and state are the same in the session directory,
 * runs/N and procs/NAME: the macros below are those rows.
 */
#ifndef SFS_FAM_RUN_H
#define SFS_FAM_RUN_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include "tree.h"

/* A run's types (their numbers never move: fs/tree.h; the gaps are
 * other families' numbers). */
#define FT_BLOCK_RUN 9
enum {
	FT_CMD = FT_BLOCK_RUN,
	FT_STDOUT,
	FT_STDERR,
	FT_OUTPUT,
	FT_STREAM,
	FT_EXIT,
	FT_STATUS,
	FT_RESULT,
	FT_TIMEOUT = 19,
	FT_RUNS = 22,
	FT_LATEST,
	FT_RUN,		 /* runs/N */
	FT_EXPECT = 100, /* past the other families' blocks */
};

extern const struct fops fam_cmd_ops, fam_stdout_ops, fam_stderr_ops,
	fam_output_ops, fam_stream_ops, fam_exit_ops, fam_status_ops,
	fam_result_ops, fam_timeout_ops, fam_runs_ops, fam_runexp_ops;

/* The pattern of an expect file (a run's, a process's, the terminal's):
 * checks and compiles pat (len bytes) into re, else one line in s's
 * error naming file. 0, -EINVAL or -ENOMEM (fs/fam_runexp.c). */
struct sess;
int fam_expect_compile(struct sess *s, const char *file, const char *pat,
		       size_t len, regex_t *re);
/* The write gathered in fh ("PATTERN [MS]", ms when it gives none),
 * checked, into *slot and *slot_ms (the old pattern freed); the
 * gathered bytes are emptied either way. 0, -EINVAL or -ENOMEM. */
struct fh;
int fam_expect_take(struct fh *fh, struct sess *s, const char *file,
		    uint64_t ms, char **slot, uint64_t *slot_ms);

#define FAM_RUN_CMD_ROW                                                        \
	{                                                                      \
		"cmd", FT_CMD, FENT_RW, &fam_cmd_ops, FENT_RUN, HOME_DIR,      \
			"write a command; it runs when the process that "      \
			"opened it closes it, and that close returns when it " \
			"has ended"                                            \
	}

/* stdout, stderr, output and stream: a run's and a context's execution's */
#define FAM_RUN_STREAM_ROWS                                                    \
	{ "stdout",                                                            \
	  FT_STDOUT,                                                           \
	  FENT_RO,                                                             \
	  &fam_stdout_ops,                                                     \
	  FENT_RUN,                                                            \
	  HOME_DIR,                                                            \
	  "the latest run's output so far" },                                  \
		{ "stderr",                                                    \
		  FT_STDERR,                                                   \
		  FENT_RO,                                                     \
		  &fam_stderr_ops,                                             \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "the latest run's output so far" },                          \
		{ "output",                                                    \
		  FT_OUTPUT,                                                   \
		  FENT_RO,                                                     \
		  &fam_output_ops,                                             \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "stdout and stderr in arrival order" },                      \
	{                                                                      \
		"stream", FT_STREAM, FENT_RO, &fam_stream_ops, FENT_RUN,       \
			HOME_DIR,                                              \
			"the latest run's output as it arrives (tail -f "      \
			"works)"                                               \
	}

/* stdout, stderr, output, stream, exit, status and expect */
#define FAM_RUN_OUT_ROWS                                                       \
	FAM_RUN_STREAM_ROWS,                                                   \
		{ "expect",                                                    \
		  FT_EXPECT,                                                   \
		  FENT_RW,                                                     \
		  &fam_runexp_ops,                                             \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "write an extended regex [and a timeout in ms]; a read "     \
		  "waits for the first line of the output it matches" },       \
		{ "exit",                                                      \
		  FT_EXIT,                                                     \
		  FENT_RO,                                                     \
		  &fam_exit_ops,                                               \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "its exit status (a read waits while it runs)" },            \
	{                                                                      \
		"status", FT_STATUS, FENT_RO, &fam_status_ops, FENT_RUN,       \
			HOME_DIR, "the latest run, as key value lines / JSON"  \
	}

#define FAM_RUN_RESULT_ROW                                                     \
	{                                                                      \
		"result.json", FT_RESULT, FENT_RO, &fam_result_ops, FENT_RUN,  \
			HOME_DIR, "the latest run, as key value lines / JSON"  \
	}

#define FAM_RUN_TIMEOUT_ROW                                                    \
	{                                                                      \
		"timeout", FT_TIMEOUT, FENT_RW, &fam_timeout_ops, FENT_RUN,    \
			HOME_DIR,                                              \
			"default command timeout in ms (0: none, at most "     \
			"31536000000: 365 days)"                               \
	}

#endif
