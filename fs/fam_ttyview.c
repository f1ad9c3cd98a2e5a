/*
 * fam_ttyview.c - the views of a session's terminal in tty/: screen,
 * scrollback, cursor, title and status. Reading one starts nothing: a
 * terminal never started shows an empty screen at 1 1.
 */
#include <string.h>
#include "fam_tty.h"
#include "sessions/core/strbuf.h"
#include "sessions/tty/term.h"
#include "sessions/tty/tty.h"

static char *screen_text(const struct node *n, size_t *len)
{
	struct tty *t = n->s->tty;

	if (t && t->term)
		return term_screen(t->term, len);
	*len = 0;
	return strdup(""); /* never started: nothing */
}

const struct fops fam_ttyscreen_ops = { .text = screen_text };

static char *scrollback_text(const struct node *n, size_t *len)
{
	struct tty *t = n->s->tty;

	if (t && t->term)
		return term_scrollback(t->term, len);
	*len = 0;
	return strdup(""); /* never started: nothing */
}

const struct fops fam_ttyscrollback_ops = { .text = scrollback_text };

static char *cursor_text(const struct node *n, size_t *len)
{
	struct tty *t = n->s->tty;
	struct strbuf b = { 0 };
	int row = 1, col = 1;
	bool visible = true;

	if (t && t->term)
		term_cursor(t->term, &row, &col, &visible);
	sb_addf(&b, "%d %d %s\n", row, col, visible ? "visible" : "hidden");
	return sb_take(&b, len);
}

const struct fops fam_ttycursor_ops = { .text = cursor_text };

static char *title_text(const struct node *n, size_t *len)
{
	struct tty *t = n->s->tty;
	struct strbuf b = { 0 };
	const char *title = t && t->term ? term_title(t->term) : "";

	if (*title)
		sb_addf(&b, "%s\n", title);
	else
		sb_add(&b, "", 0);
	return sb_take(&b, len);
}

const struct fops fam_ttytitle_ops = { .text = title_text };

static char *status_text(const struct node *n, size_t *len)
{
	return tty_status(n->s->tty, len);
}

const struct fops fam_ttystatus_ops = { .text = status_text };
