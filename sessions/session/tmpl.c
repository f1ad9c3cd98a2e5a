/*
 * tmpl.c - the template shell's life (see tmpl.h): started when the first
 * shell it can serve is wanted, in a cgroup and a runtime directory of
 * its own, ended at shutdown, when it fails, or when a new session would
 * no longer start with its environment. After a failure the shells are
 * started for TMPL_RETRY_MS before the template is tried again.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sessions/session/env.h"
#include "sessions/core/log.h"
#include "sessions/core/loop.h"
#include "sessions/core/reap.h"
#include "sessions/session/rtdir.h"
#include "sessions/session/tmpl.h"

#define TMPL_NAME     "tmpl"
#define TMPL_RETRY_MS 10000

static struct {
	pid_t pid; /* 0: none */
	int sock;
	struct contain cg;
	int dirfd;
	char dir[4096];
	char **envp; /* what it was started with */
	char *cwd;
	unsigned long gen; /* env_base_gen() then */
	struct reap_watch reap;
	int64_t retry_at;
} t = { .sock = -1, .dirfd = -1, .cg = { .dfd = -1 } };

/* Frees what the template had, once it is gone. */
static void cleanup(void)
{
	if (t.sock >= 0)
		close(t.sock);
	t.sock = -1;
	t.pid = 0;
	contain_free(&t.cg);
	if (t.dirfd >= 0) {
		close(t.dirfd);
		rtdir_remove(TMPL_NAME);
	}
	t.dirfd = -1;
	envmap_envp_free(t.envp);
	t.envp = NULL;
	free(t.cwd);
	t.cwd = NULL;
}

static void on_gone(struct reap_watch *w, int wstatus)
{
	(void)w;
	if (t.sock >= 0) { /* not ended by us */
		log_msg(LOG_NOTICE, "the template shell ended (status %#x)",
			wstatus);
		t.retry_at = loop_now_ms() + TMPL_RETRY_MS;
	}
	cleanup();
}

/* Ends it; the reaper frees the rest. */
static void end(int64_t retry_after_ms)
{
	if (!t.pid)
		return;
	close(t.sock);
	t.sock = -1;
	kill(t.pid, SIGKILL);
	t.retry_at = loop_now_ms() + retry_after_ms;
}

static char **copy_envp(char **envp)
{
	size_t n = 0;
	char **c;

	while (envp[n])
		n++;
	c = calloc(n + 1, sizeof(*c));
	for (size_t i = 0; c && i < n; i++)
		if (!(c[i] = strdup(envp[i]))) {
			envmap_envp_free(c);
			return NULL;
		}
	return c;
}

static int start(const char *bash, const struct shell_who *w, char **envp)
{
	struct shell_who tw = *w;
	pid_t pid;
	int rc;

	/* the directory of a template an upgrade in place left (it ended
	 * with the old program, which the state does not carry it over) */
	rtdir_remove(TMPL_NAME);
	t.dirfd = rtdir_make(TMPL_NAME, t.dir, sizeof(t.dir));
	if (t.dirfd < 0)
		return t.dirfd;
	tw.dir = t.dir;
	rc = contain_new(&t.cg, TMPL_NAME);
	t.envp = copy_envp(envp);
	t.cwd = strdup(w->cwd);
	if (rc == 0 && (!t.envp || !t.cwd))
		rc = -ENOMEM;
	pid = rc < 0 ? rc :
		       shell_spawn_template(bash, &tw, envp, &t.cg, &t.sock);
	if (pid < 0) {
		cleanup();
		return (int)pid;
	}
	t.pid = pid;
	t.gen = env_base_gen();
	reap_add(&t.reap, pid, on_gone, NULL);
	log_msg(LOG_DEBUG, "template shell %ld started", (long)pid);
	return 0;
}

/* Whether a shell of w with envp is what the template would fork. */
static bool same(const struct shell_who *w, char **envp)
{
	size_t i = 0;

	if (strcmp(w->cwd, t.cwd) != 0)
		return false;
	for (; envp[i] && t.envp[i]; i++)
		if (strcmp(envp[i], t.envp[i]) != 0)
			return false;
	return !envp[i] && !t.envp[i];
}

pid_t tmpl_spawn(const char *bash, const struct shell_who *w, char **envp,
		 const struct contain *cg, bool fresh, int *ctl, int *res)
{
	pid_t pid;
	int rc;

	if (w->uid != geteuid() || w->gid != getegid() || cg->dfd < 0 ||
	    loop_now_ms() < t.retry_at)
		return -ENOENT;
	if (t.pid && !same(w, envp) && t.gen != env_base_gen())
		end(0); /* root env/ changed: a template of the new one */
	if (fresh && !t.pid && t.sock < 0 && t.dirfd < 0) {
		rc = start(bash, w, envp);
		if (rc < 0) {
			t.retry_at = loop_now_ms() + TMPL_RETRY_MS;
			return rc;
		}
	}
	if (!t.pid || t.sock < 0 || !same(w, envp))
		return -ENOENT;
	pid = shell_fork_from(t.sock, w, cg, ctl, res);
	if (pid < 0) {
		log_msg(LOG_NOTICE,
			"the template shell could not fork a shell (%s); "
			"starting them for %d s",
			strerror((int)-pid), TMPL_RETRY_MS / 1000);
		end(TMPL_RETRY_MS);
	}
	return pid;
}

void tmpl_stop(void)
{
	end(0);
	t.retry_at = INT64_MAX; /* none from now on */
}

void tmpl_fini(void)
{
	if (t.pid) {
		kill(t.pid, SIGKILL);
		waitpid(t.pid, NULL, 0);
		reap_del(&t.reap);
	}
	cleanup();
}
