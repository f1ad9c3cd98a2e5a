/*
 * fam_root.c - the root directory, README and the root ctl (killall).
 * health and metrics are fam_health.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "fam.h"
#include "fam_env.h"
#include "fam_health.h"
#include "fam_root.h"
#include "fam_sessions.h"
#include "files.h"
#include "readme.h"
#include "sessions/core/ctl.h"
#include "sessions/core/log.h"

static char *readme_file(const struct node *n, size_t *len)
{
	struct strbuf b = { 0 };

	(void)n;
	readme_text(&b, &fam_root);
	return sb_take(&b, len);
}

static const struct fops readme_ops = { .text = readme_file };

struct write_wait {
	fuse_req_t req;
	size_t size;
};

static void killall_done(void *arg)
{
	struct write_wait *w = arg;

	fuse_reply_write(w->req, w->size);
	free(w);
}

/* The root ctl's one verb; its write carries it out for all its lines at
 * once (the reply waits for the end of every process), not a row. */
static const struct ctl_verb ctl_verbs[] = {
	{ "killall", CTL_ARG_NONE, false, NULL },
	{ 0 },
};

/* True when every line of buf is killall (or empty), and whether any
 * is. */
static bool only_killall(const char *buf, size_t size, bool *any)
{
	struct ctl_args a;
	size_t start = 0;
	char usage[32];

	*any = false;
	for (size_t i = 0; i <= size; i++) {
		if (i < size && buf[i] != '\n')
			continue;
		if (i > start &&
		    !ctl_lookup(ctl_verbs, buf + start, i - start, &a)) {
			ctl_usage(ctl_verbs, usage, sizeof(usage));
			log_msg(LOG_WARNING, "ctl: '%.*s' is not %s",
				(int)(i - start > 80 ? 80 : i - start),
				buf + start, usage);
			return false;
		}
		*any |= i > start;
		start = i + 1;
	}
	return true;
}

/* The root ctl: `killall` (one per line) ends every run and process of
 * every session; the write returns once they are gone. */
static int ctl_write(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off)
{
	struct write_wait *w;
	bool killall;

	(void)off;
	(void)fh;
	(void)n;
	if (!only_killall(buf, size, &killall))
		return -EINVAL;
	w = killall ? malloc(sizeof(*w)) : NULL;
	if (!w)
		return 0;
	*w = (struct write_wait){ req, size };
	log_msg(LOG_NOTICE, "ctl: killall");
	sess_killall(killall_done, w);
	return FOPS_LATER;
}

static const struct fops ctl_ops = { .write = ctl_write };

static const struct fent root_tab[] = {
	{ "README", FT_README, FENT_RO, &readme_ops, 0, HOME_DIR, "this text" },
	{ "ctl", FT_ROOTCTL, FENT_WO, &ctl_ops, 0, HOME_DIR,
	  "write killall: ends every run and process of every session" },
	{ "env", FT_ROOTENV, FENT_DIR, &fam_rootenv_ops, 0, HOME_DIR,
	  "variables of every session, present and future" },
	{ "files", FT_FILES, FENT_DIR, &files_fops, 0, HOME_DIR,
	  "the workspace (the sessions' default cwd), passed through" },
	{ "health", FT_HEALTH, FENT_RO, &fam_health_ops, 0, HOME_DIR,
	  "\"ok\", then counts for probes, one key value a line" },
	{ "metrics", FT_METRICS, FENT_RO, &fam_metrics_ops, 0, HOME_DIR,
	  "the same counts and more in the Prometheus text format" },
	{ "sessions", FT_SESSIONS, FENT_SHARED_DIR, &fam_sessions_ops,
	  FENT_ANYONE, HOME_DIR, "the sessions" },
	{ 0 },
};

static const struct fops root_ops = { .tab = root_tab };

const struct fent fam_root = { "", FT_ROOT,  FENT_DIR,	 &root_ops,
			       0,  HOME_TOP, "the mount" };
