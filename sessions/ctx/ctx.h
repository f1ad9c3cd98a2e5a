/*
 * ctx.h - code interpreter contexts of a session (contexts/NAME): a
 * persistent python3 or node running a driver of the project
 * (sessions/ctx/ctxdrv/), its executions queued one at a time like a
 * session's runs. An execution is a struct run (its code file, its
 * stdout and stderr spools) with the record of what it produced
 * (ctxproto.h). ctx.c has the objects, their settings and reports;
 * ctxrun.c the interpreters' life and the queue (from ctx_submit on).
 */
#ifndef SFS_CTX_H
#define SFS_CTX_H

#include <stdbool.h>
#include <stdint.h>
#include "sessions/core/contain.h"
#include "sessions/ctx/ctxproto.h"
#include "sessions/core/envmap.h"
#include "sessions/core/list.h"
#include "sessions/core/loop.h"
#include "sessions/core/names.h"
#include "sessions/core/reap.h"
#include "sessions/session/part.h"
#include "sessions/session/run.h"
#include "sessions/core/strbuf.h"

struct sess;

/* typescript runs in node's driver too, each cell made javascript */
enum ctx_lang { CTX_PYTHON, CTX_JAVASCRIPT, CTX_TYPESCRIPT };
enum ctx_state { CTX_IDLE, CTX_RUNNING, CTX_INTERRUPTED, CTX_DEAD };

struct ctx {
	uint64_t id; /* object id (OBJ_CTX) */
	char name[NAME_MAX_LEN + 1];
	struct sess *sess;
	struct list link; /* in its session's contexts */
	enum ctx_lang lang;
	bool locked; /* it has had code: language, cwd and env are set */
	char *cwd;
	struct envmap env; /* OBJ_CTXVAR, owner: this context */
	uint64_t timeout_ms;
	enum ctx_state state;
	char *why; /* why it is dead */

	pid_t pid; /* the interpreter, 0: none */
	unsigned fd_charge; /* its descriptors, counted as the owner's */
	int start_err;	    /* what code fails with while it is dead: EIO,
			     * EMFILE or ENFILE when its start was refused */
	int64_t started_wall;
	struct reap_watch reap;
	struct contain cg;
	int req_fd;	       /* requests (a fifo, read and write) */
	struct loop_watch ans; /* answers (a fifo's read end) */
	struct strbuf abuf;    /* answer bytes not yet parsed */
	int out_fd, err_fd;    /* read ends of its stdout and stderr */
	struct loop_watch idle_o, idle_e; /* drop output between runs */
	bool idle_said;	  /* that output was dropped, said since the last run */
	unsigned gen;	  /* names its fifos */
	unsigned count;	  /* execution_count */
	bool interrupted; /* the active execution was */
	char key[CTX_KEY_LEN + 1]; /* the active execution's */
	size_t kept; /* bytes of the formats and errors of its executions */
	bool restart;		   /* start again once reaped */
	bool ready, intr_pending;  /* the driver said ready; SIGINT waits */

	struct run *active;
	struct list queue; /* executions waiting (run qlink) */
	struct list execs; /* every execution kept, oldest first */
	unsigned next_no, nexecs;
	struct loop_timer timer; /* the timeout, its kill, rmdir's wait */
	int kill_stage;		 /* 0, 1 (interrupted), 2 (killed) */
	bool by_ctl; /* stage 1 is ctl interrupt's, not a timeout's */
	int64_t kill_at;
	void (*gone_cb)(void *arg);
	void *gone_arg;
	struct sess_part part; /* in its session's parts */
};

/* mkdir contexts/NAME: -EINVAL (bad name), -EEXIST, -ENOENT (dying
 * session), -ENOSPC (too many) or -ENOMEM. */
int ctx_new(struct sess *s, const char *name, struct ctx **out);
struct ctx *ctx_find(struct sess *s, const char *name);
/* Settings before the first code: -EBUSY after it, -EINVAL for a bad
 * value (one line in the session's error file either way). */
int ctx_set_language(struct ctx *c, const char *v, size_t len);
int ctx_set_cwd(struct ctx *c, const char *path);
int ctx_setenv(struct ctx *c, const char *name, const char *val, size_t len);
int ctx_unsetenv(struct ctx *c, const char *name);
void ctx_set_timeout(struct ctx *c, uint64_t ms);
const char *ctx_lang_name(enum ctx_lang l);
const char *ctx_state_name(const struct ctx *c);
/* Queues an execution of code (len bytes). Returns it, or NULL (*err).
 * A dead context's execution ends at once with an error (start_err
 * -EIO). */
struct run *ctx_submit(struct ctx *c, const char *code, size_t len, int *err);
/* ctl: interrupt (the state stays), restart (a fresh interpreter), kill. */
int ctx_interrupt(struct ctx *c);
int ctx_restart(struct ctx *c);
int ctx_kill(struct ctx *c);
/* The writer of r's code was interrupted: r is canceled or interrupted. */
void ctx_interrupt_exec(struct ctx *c, struct run *r);
/* rmdir: ends the interpreter and whatever it started, drops c, then
 * calls cb(arg). */
int ctx_remove(struct ctx *c, void (*cb)(void *), void *arg);
/* What its session asks of a context (part.h, ctxpart.c): at the
 * session's deletion its queue is canceled and its interpreter gets
 * KILL (ctx_hangup); when the session is freed it goes (ctx_free). */
extern const struct sess_part_ops ctx_part_ops;
void ctx_hangup(struct ctx *c);
void ctx_free(struct ctx *c);
/* An upgrade in place (part.h, ctxstate.c): the kind that makes a
 * context saved by its part's save again, with its interpreter. */
const struct sess_part_kind *ctx_part_kind(void);
/* A reader's copy of result.json as state, and made again for the
 * reader of r: the same bytes (a finished execution's are made again
 * from its record and spools, others are saved). NULL: none (the next
 * read makes one) or ENOMEM. */
void ctx_json_save(const struct ctx_json *j, struct state_w *w);
struct ctx_json *ctx_json_restore(struct run *r, const struct state_r *o);
/* An execution's record goes with its run (run part_free). */
void ctx_exec_release(struct run *r);
struct run *ctx_latest(struct ctx *c);
/* A frame of the active execution's answer, applied to its record. A
 * format or an error text is kept within CTX_KEEP_MAX with those kept
 * of the context (the oldest executions' are freed for it); a format
 * that does not fit is dropped, and what a record cuts or drops is
 * said, each with a line in the session's error file. Returns 0,
 * -EINVAL or -ENOMEM (ctx_exec_frame). */
int ctx_keep_frame(struct ctx *c, const struct ctxproto_frame *f);
/* A daemon-made error of r's record (ctx_exec_fail), counted. */
void ctx_fail_record(struct ctx *c, struct run *r, const char *name,
		     const char *value);
/* r leaves c's executions: its record's bytes are no longer c's. */
void ctx_forget_record(struct ctx *c, struct run *r);
struct run *ctx_exec_by_name(struct ctx *c, const char *name);
/* status: the context's (r NULL) or an execution's key value lines. */
char *ctx_format_status(const struct ctx *c, const struct run *r, size_t *len);
/* result.json of execution r (made from its record and its spools),
 * taken: one copy for every reader of a finished execution, until the
 * last one puts it back (it is made again once its record changed). */
struct ctx_json *ctx_json_get(struct run *r);
void ctx_json_put(void *j);

#endif
