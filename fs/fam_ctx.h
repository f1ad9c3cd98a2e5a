/*
 * fam_ctx.h - contexts/ of a session (fs/fam_ctx.c: the contexts, their
 * settings, env/, ctl, status, runs/) and the files of an execution
 * (fs/fam_ctxout.c: code, result, results/, error, result.json), which
 * are the same rows in contexts/NAME (the newest execution) and in
 * contexts/NAME/runs/N: FAM_CTX_EXEC_ROWS.
 */
#ifndef SFS_FAM_CTX_H
#define SFS_FAM_CTX_H

#include "fam_run.h"
#include "tree.h"

/* The types of contexts/ (their numbers never move: fs/tree.h). */
#define FT_BLOCK_CTX 51
enum {
	FT_CTXS = FT_BLOCK_CTX,
	FT_CTX,
	FT_CTXLANG,
	FT_CTXCWD,
	FT_CTXTIMEOUT,
	FT_CTXENV,
	FT_CTXVAR,
	FT_CTXCTL,
	FT_CTXSTATUS,
	FT_CTXRUNS,
	FT_CTXRUN,
	FT_CODE,
	FT_CTXRESULT,
	FT_CTXERROR,
	FT_CTXJSON,
	FT_CTXRESULTS,
	FT_CTXRES,  /* results/N */
	FT_CTXMAIN, /* results/N/main */
	/* results/N/FORMAT: FT_CTXFMT + its index, CTX_NFMT types
	 * (sessions/ctx/ctxproto.h), up to 79 */
	FT_CTXFMT,
};

extern const struct fops fam_ctxs_ops, fam_code_ops, fam_ctxresult_ops,
	fam_ctxresults_ops, fam_ctxerror_ops, fam_ctxjson_ops,
	fam_ctxstatus_ops;

/* code, stdout, stderr, output, stream, result, results, error,
 * result.json, status */
#define FAM_CTX_EXEC_ROWS                                                      \
	{ "code",                                                              \
	  FT_CODE,                                                             \
	  FENT_RW,                                                             \
	  &fam_code_ops,                                                       \
	  FENT_RUN,                                                            \
	  HOME_DIR,                                                            \
	  "write code: it runs at the close, which returns when it has "       \
	  "ended; stdout, stderr, output and stream as for a run" },           \
		FAM_RUN_STREAM_ROWS,                                           \
		{ "result",                                                    \
		  FT_CTXRESULT,                                                \
		  FENT_RO,                                                     \
		  &fam_ctxresult_ops,                                          \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "the last expression's value as text" },                     \
		{ "results",                                                   \
		  FT_CTXRESULTS,                                               \
		  FENT_DIR,                                                    \
		  &fam_ctxresults_ops,                                         \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "the rich outputs of the latest execution" },                \
		{ "error",                                                     \
		  FT_CTXERROR,                                                 \
		  FENT_RO,                                                     \
		  &fam_ctxerror_ops,                                           \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "the error as JSON (name, value, traceback), or empty" },    \
		{ "result.json",                                               \
		  FT_CTXJSON,                                                  \
		  FENT_RO,                                                     \
		  &fam_ctxjson_ops,                                            \
		  FENT_RUN,                                                    \
		  HOME_DIR,                                                    \
		  "results, logs and error of the latest execution, as "       \
		  "JSON" },                                                    \
	{                                                                      \
		"status", FT_CTXSTATUS, FENT_RO, &fam_ctxstatus_ops, FENT_RUN, \
			HOME_DIR,                                              \
			"state (idle running interrupted dead), "              \
			"execution_count, pid..."                              \
	}

#endif
