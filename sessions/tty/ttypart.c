/*
 * ttypart.c - a session's terminal as one of its parts (part.h): what
 * the session's deletion, killall, end and an upgrade ask of it.
 */
#include <signal.h>
#include "sessions/session/part.h"
#include "sessions/tty/tty.h"

static struct tty *tty_in(const struct sess_part *p)
{
	return list_entry(p, struct tty, part);
}

static void hangup(struct sess_part *p)
{
	tty_hangup(tty_in(p));
}

/* killall: HUP first, as bash -i ignores TERM. */
static void stop(struct sess_part *p)
{
	if (tty_kill(tty_in(p), SIGHUP) == 0)
		tty_kill(tty_in(p), SIGTERM);
}

static void kill_all(struct sess_part *p)
{
	tty_kill(tty_in(p), SIGKILL);
}

static bool alive(const struct sess_part *p)
{
	return tty_alive(tty_in(p));
}

static void save(struct sess_part *p, struct state_w *w)
{
	tty_save(tty_in(p), w);
}

static void free_part(struct sess_part *p)
{
	tty_free(tty_in(p)->s);
}

const struct sess_part_ops tty_part_ops = {
	.hangup = hangup,
	.stop = stop,
	.kill = kill_all,
	.alive = alive,
	.busy = alive, /* killall waits for its shell to be reaped */
	.free = free_part,
	.save = save,
};
