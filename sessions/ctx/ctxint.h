/*
 * ctxint.h - what the files of sessions/ctx/ give each other and not
 * fs/: a context made in two steps (ctx.c), the handlers that drive a
 * live interpreter (ctxrun.c), and a context as state (ctxstate.c), so
 * that an upgrade in place hands the interpreter's pid and descriptors
 * to the next program, which goes on driving it.
 */
#ifndef SFS_CTXINT_H
#define SFS_CTXINT_H

#include <stdint.h>
#include "sessions/ctx/ctx.h"

/* A context of s named name, in no list yet, with no cwd, variables,
 * cgroup or descriptors: its id is its first objs_add (so that an
 * upgrade gives it its old one with objs_reuse). NULL on ENOMEM. */
struct ctx *ctx_alloc(struct sess *s, const char *name);
/* Its cgroup below its session's (made, or found made). 0 or -errno. */
int ctx_contain(struct ctx *c);
/* c joins its session's contexts and parts. */
void ctx_attach(struct ctx *c);
/* c, never attached and running nothing, goes. */
void ctx_discard(struct ctx *c);

/* c->ans: the driver's frames. */
void ctx_on_answer(struct loop_watch *w, uint32_t events);
/* c->idle_o, c->idle_e: output between executions, dropped. */
void ctx_on_idle_output(struct loop_watch *w, uint32_t events);
/* c->reap: the interpreter's exit. */
void ctx_reaped(struct reap_watch *w, int wstatus);
/* c->timer again from the active execution's deadline or kill_at. */
void ctx_arm(struct ctx *c);

/* The key of a context's object in its session's state (part.h). */
#define CTX_PART_KEY 0x200
/* ctxpart.c's save: c as one object of CTX_PART_KEY (ctxstate.c). */
void ctx_save(struct ctx *c, struct state_w *w);

#endif
