/*
 * ctxpart.c - a code context as one of its session's parts (part.h):
 * what the session's deletion, killall and end ask of it, and an
 * upgrade in place (ctxstate.c).
 */
#include "sessions/ctx/ctx.h"
#include "sessions/ctx/ctxint.h"
#include "sessions/session/part.h"

static struct ctx *ctx_in(const struct sess_part *p)
{
	return list_entry(p, struct ctx, part);
}

static void part_hangup(struct sess_part *p)
{
	ctx_hangup(ctx_in(p));
}

/* killall: an execution is interrupted, its interpreter killed if it does
 * not stop within the grace; the context's state stays. */
static void part_stop(struct sess_part *p)
{
	if (ctx_in(p)->state == CTX_RUNNING)
		ctx_interrupt(ctx_in(p));
}

static bool part_busy(const struct sess_part *p)
{
	return ctx_in(p)->state == CTX_RUNNING;
}

static void part_free(struct sess_part *p)
{
	ctx_free(ctx_in(p));
}

static void part_save(struct sess_part *p, struct state_w *w)
{
	ctx_save(ctx_in(p), w);
}

/* Its interpreter is in a cgroup below the session's, which the session
 * kills and waits for: no kill or alive of its own. */
const struct sess_part_ops ctx_part_ops = {
	.hangup = part_hangup,
	.stop = part_stop,
	.busy = part_busy,
	.free = part_free,
	.save = part_save,
};
