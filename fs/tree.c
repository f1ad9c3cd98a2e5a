/*
 * tree.c - the declaration of every file: one table per directory.
 */
#include <errno.h>
#include "tree.h"

#define DIR_MODE (S_IFDIR | 0755)
#define RO	 (S_IFREG | 0444)
#define RW	 (S_IFREG | 0644)
#define WO	 (S_IFREG | 0200)

static const struct fent root_tab[] = {
	{ "README", FT_README, RO },	       { "ctl", FT_ROOTCTL, WO },
	{ "env", FT_ROOTENV, DIR_MODE },       { "files", FT_FILES, DIR_MODE },
	{ "sessions", FT_SESSIONS, DIR_MODE },
};

static const struct fent sessions_tab[] = {
	{ "clone", FT_CLONE, RO },
};

static const struct fent sess_tab[] = {
	{ "cmd", FT_CMD, RW },		 { "stdout", FT_STDOUT, RO },
	{ "stderr", FT_STDERR, RO },	 { "output", FT_OUTPUT, RO },
	{ "stream", FT_STREAM, RO },	 { "exit", FT_EXIT, RO },
	{ "status", FT_STATUS, RO },	 { "result.json", FT_RESULT, RO },
	{ "cwd", FT_CWD, RW },		 { "env", FT_ENVDIR, DIR_MODE },
	{ "timeout", FT_TIMEOUT, RW },	 { "error", FT_ERROR, RO },
	{ "ctl", FT_CTL, WO },		 { "runs", FT_RUNS, DIR_MODE },
	{ "procs", FT_PROCS, DIR_MODE },
};

static const struct fent run_tab[] = {
	{ "cmd", FT_CMD, RW },	       { "stdout", FT_STDOUT, RO },
	{ "stderr", FT_STDERR, RO },   { "output", FT_OUTPUT, RO },
	{ "stream", FT_STREAM, RO },   { "exit", FT_EXIT, RO },
	{ "status", FT_STATUS, RO },   { "result.json", FT_RESULT, RO },
	{ "timeout", FT_TIMEOUT, RW },
};

static const struct fent proc_tab[] = {
	{ "cmd", FT_CMD, RW },	     { "stdout", FT_STDOUT, RO },
	{ "stderr", FT_STDERR, RO }, { "output", FT_OUTPUT, RO },
	{ "stream", FT_STREAM, RO }, { "exit", FT_EXIT, RO },
	{ "status", FT_STATUS, RO }, { "pid", FT_PID, RO },
	{ "stdin", FT_STDIN, WO },   { "ctl", FT_CTL, WO },
};

/* Types that are not in any fixed table. */
static const struct fent loose[] = {
	{ "", FT_ROOT, DIR_MODE },
	{ "", FT_SESS, DIR_MODE },
	{ "", FT_RUN, DIR_MODE },
	{ "", FT_PROC, DIR_MODE },
	{ "latest", FT_LATEST, S_IFLNK | 0777 },
	{ "", FT_ENVVAR, RW },
	{ "", FT_ROOTENVVAR, RW },
	{ "", FT_FILE, RW }, /* its real mode comes from fs/files.c */
};

#define LEN(a) (sizeof(a) / sizeof(*(a)))

const struct fent *tree_table(enum ft dir, size_t *n)
{
	switch (dir) {
	case FT_ROOT:
		*n = LEN(root_tab);
		return root_tab;
	case FT_SESSIONS:
		*n = LEN(sessions_tab);
		return sessions_tab;
	case FT_SESS:
		*n = LEN(sess_tab);
		return sess_tab;
	case FT_RUN:
		*n = LEN(run_tab);
		return run_tab;
	case FT_PROC:
		*n = LEN(proc_tab);
		return proc_tab;
	default:
		*n = 0;
		return NULL;
	}
}

const struct fent *tree_fent(enum ft ft)
{
	static const struct fent *const tabs[] = { root_tab, sessions_tab,
						   sess_tab, proc_tab, loose };
	static const size_t lens[] = { LEN(root_tab), LEN(sessions_tab),
				       LEN(sess_tab), LEN(proc_tab),
				       LEN(loose) };

	for (size_t t = 0; t < LEN(tabs); t++)
		for (size_t i = 0; i < lens[t]; i++)
			if (tabs[t][i].ft == ft)
				return &tabs[t][i];
	return NULL;
}

bool tree_is_run_file(enum ft ft)
{
	for (size_t i = 0; i < LEN(run_tab); i++)
		if (run_tab[i].ft == ft)
			return true;
	return ft == FT_PID || ft == FT_STDIN;
}

/* True when ft names a file (or the directory) of a run or a process. */
static bool fits_run(enum ft ft, const struct run *r)
{
	size_t n;
	const struct fent *tab = tree_table(r->is_proc ? FT_PROC : FT_RUN, &n);

	if (ft == (r->is_proc ? FT_PROC : FT_RUN))
		return true;
	for (size_t i = 0; i < n; i++)
		if (tab[i].ft == ft)
			return true;
	return false;
}

/* Resolves a file that lives in a session dir or in runs/N. */
static int resolve_in_run(struct node *n)
{
	enum obj_kind k = objs_kind(n->id);

	if (k == OBJ_SESS) {
		n->s = sess_get(n->id);
		n->r = tree_is_run_file(n->ft) ? sess_latest(n->s) : NULL;
		return 0;
	}
	if (k == OBJ_RUN && fits_run(n->ft, objs_get(n->id, OBJ_RUN))) {
		n->r = objs_get(n->id, OBJ_RUN);
		n->s = n->r->sess;
		n->run_level = true;
		return n->s ? 0 : -ENOENT;
	}
	return -ENOENT;
}

int tree_resolve(fuse_ino_t ino, struct node *n)
{
	*n = (struct node){ .ft = (enum ft)(ino & 0xff), .id = ino >> 8 };
	if (n->ft == FT_NONE || n->ft >= FT_MAX)
		return -ENOENT;
	switch (n->ft) {
	case FT_ROOT:
	case FT_README:
	case FT_ROOTCTL:
	case FT_ROOTENV:
	case FT_SESSIONS:
	case FT_CLONE:
	case FT_FILES:
		return n->id == 0 ? 0 : -ENOENT;
	case FT_ROOTENVVAR:
		n->var = objs_get(n->id, OBJ_ROOTENV);
		return n->var ? 0 : -ENOENT;
	case FT_ENVVAR:
		n->var = objs_get(n->id, OBJ_ENVVAR);
		n->s = n->var ? n->var->owner : NULL;
		return n->var ? 0 : -ENOENT;
	default:
		return resolve_in_run(n);
	}
}
