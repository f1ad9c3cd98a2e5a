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
#include "fam_watch.h"
#include "files.h"
#include "readme.h"
#include "sessions/core/ctl.h"
#include "upgrade.h"
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

/* The root ctl's verbs; a write carries them out for all its lines at
 * once (the reply waits for the end of every process, or for the next
 * program), not a row each. */
static const struct ctl_verb ctl_verbs[] = {
	{ "killall", CTL_ARG_NONE, false, NULL },
	{ "upgrade", CTL_ARG_PATH, false, NULL },
	{ 0 },
};

/* Checks every line of buf: true when all are verbs (or empty); *any
 * counts the killall lines, *upgrade the upgrade lines, and *up gets an
 * upgrade line's arguments. */
static bool parse_lines(const char *buf, size_t size, unsigned *any,
			struct ctl_args *up, unsigned *upgrade)
{
	struct ctl_args a;
	size_t start = 0;
	char usage[64];

	*any = 0;
	*upgrade = 0;
	for (size_t i = 0; i <= size; i++) {
		const struct ctl_verb *v;

		if (i < size && buf[i] != '\n')
			continue;
		v = i > start ? ctl_lookup(ctl_verbs, buf + start, i - start,
					   &a) :
				NULL;
		if (i > start && !v) {
			ctl_usage(ctl_verbs, usage, sizeof(usage));
			log_msg(LOG_WARNING, "ctl: '%.*s' is not %s",
				(int)(i - start > 80 ? 80 : i - start),
				buf + start, usage);
			return false;
		}
		if (v && v == &ctl_verbs[1]) {
			(*upgrade)++;
			*up = a;
		} else if (v) {
			(*any)++;
		}
		start = i + 1;
	}
	return true;
}

/* The root ctl: `killall` (one per line) ends every run and process of
 * every session, and the write returns once they are gone; `upgrade
 * [PATH]`, alone in its write, replaces the program (upgrade.h). */
static int ctl_write(fuse_req_t req, struct fh *fh, struct node *n,
		     const char *buf, size_t size, off_t off)
{
	struct write_wait *w;
	struct ctl_args up;
	unsigned killall, upgrade;
	int rc;

	(void)off;
	(void)n;
	if (!parse_lines(buf, size, &killall, &up, &upgrade))
		return -EINVAL;
	/* one program replaces this one: a second upgrade, or a killall
	 * that the first would cut short, has no meaning in the same write */
	if (upgrade && (killall || upgrade > 1)) {
		log_msg(LOG_WARNING, "ctl: upgrade must be alone in its write");
		return -EINVAL;
	}
	if (upgrade) {
		log_msg(LOG_NOTICE, "ctl: upgrade%s%.*s", up.plen ? " " : "",
			(int)up.plen, up.path ? up.path : "");
		rc = upgrade_request(req, size, up.path, up.plen, fh->uid);
		return rc < 0 ? rc : FOPS_LATER;
	}
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
	  "write killall: ends every run and process of every session; "
	  "upgrade [PATH]: replaces the program, keeping every session" },
	{ "env", FT_ROOTENV, FENT_DIR, &fam_rootenv_ops, 0, HOME_DIR,
	  "variables of every session, present and future" },
	{ "files", FT_FILES, FENT_DIR, &files_fops, 0, HOME_DIR,
	  "the workspace, passed through (sessions work in the directory itself)" },
	{ "health", FT_HEALTH, FENT_RO, &fam_health_ops, 0, HOME_DIR,
	  "\"ok\", then counts for probes, one key value a line" },
	{ "metrics", FT_METRICS, FENT_RO, &fam_metrics_ops, 0, HOME_DIR,
	  "the same counts and more in the Prometheus text format" },
	{ "sessions", FT_SESSIONS, FENT_SHARED_DIR, &fam_sessions_ops,
	  FENT_ANYONE, HOME_DIR, "the sessions" },
	{ "watches", FT_WATCHES, FENT_SHARED_DIR, &fam_watches_ops,
	  FENT_ANYONE, HOME_DIR, "watches of the workspace: what changes in files/" },
	{ 0 },
};

static const struct fops root_ops = { .tab = root_tab };

const struct fent fam_root = { "", FT_ROOT,  FENT_DIR,	 &root_ops,
			       0,  HOME_TOP, "the mount" };
