/*
 * readme.c - the README at the root of the mount: how to use the tree,
 * made from the rows' docs as the tree walks them from the root (the
 * tree of sessionfs(7) is that text too, fs/treedump.c).
 */
#include <stdbool.h>
#include <string.h>
#include "readme.h"

/* The column the docs start at, after the indented names, and the
 * width the README's lines are wrapped at. */
#define DOC_COL 24
#define WIDTH	78

static const char example[] =
	"\n"
	"Example:\n"
	"  mkdir sessions/build\n"
	"  echo 'cd /tmp && export A=1' > sessions/build/cmd\n"
	"  echo 'echo $A from $PWD' > sessions/build/cmd\n"
	"  cat sessions/build/stdout    # 1 from /tmp\n"
	"  cat sessions/build/exit      # 0\n"
	"  rmdir sessions/build\n";

struct walk {
	struct strbuf *b;
	bool seen[FT_MAX]; /* a type shared by several tables is told once */
	size_t width;	   /* the docs' words wrapped at */
	size_t line;	   /* where the line being made starts */
};

/* The name a lookup's entry stands for: a run or a result is numbered. */
static const char *entry_name(const struct fent *fe)
{
	if (*fe->name)
		return fe->name;
	return fe->home == HOME_RUN || fe->home == HOME_CTXRUN ||
			       fe->home == HOME_CTXRES ?
		       "N" :
		       "NAME";
}

/* Ends the line of the names with their doc, its words wrapped. */
static void end_line(struct walk *w, const char *doc)
{
	size_t col = w->b->len - w->line;

	if (col + 2 > DOC_COL) {
		sb_addf(w->b, "\n");
		col = 0;
	}
	sb_addf(w->b, "%*s", (int)(DOC_COL - col), "");
	col = DOC_COL;
	while (*doc) {
		size_t n = strcspn(doc, " ");

		if (col > DOC_COL && col + 1 + n > w->width) {
			sb_addf(w->b, "\n%*s", DOC_COL, "");
			col = DOC_COL;
		} else if (col > DOC_COL) {
			sb_add(w->b, " ", 1);
			col++;
		}
		sb_add(w->b, doc, n);
		col += n;
		doc += n + strspn(doc + n, " ");
	}
	sb_add(w->b, "\n", 1);
}

static void walk_tab(struct walk *w, const struct fent *tab, int depth);

static void walk_row(struct walk *w, const struct fent *fe,
		     const struct fent *next, int depth)
{
	bool is_dir = S_ISDIR(fe->mode);
	bool joined = w->b->len > w->line;

	if (!fe->doc || fe->ft >= FT_MAX || w->seen[fe->ft])
		return;
	w->seen[fe->ft] = true;
	if (!joined) {
		w->line = w->b->len;
		sb_addf(w->b, "%*s", 2 + 2 * depth, "");
	}
	sb_addf(w->b, "%s%s%s", joined ? " " : "", entry_name(fe),
		is_dir ? "/" : "");
	if (next && next->name && next->doc && !is_dir &&
	    !strcmp(next->doc, fe->doc) && !w->seen[next->ft])
		return; /* the next row shares this line */
	end_line(w, fe->doc);
	w->line = w->b->len;
	if (is_dir && fe->ops) {
		walk_tab(w, fe->ops->tab, depth + 1);
		walk_tab(w, fe->ops->dyn, depth + 1);
	}
}

static void walk_tab(struct walk *w, const struct fent *tab, int depth)
{
	for (; tab && tab->name; tab++)
		walk_row(w, tab, tab + 1, depth);
}

void readme_tree(struct strbuf *b, const struct fent *root, size_t width)
{
	struct walk w = { .b = b, .line = b->len, .width = width };

	if (root->ops) {
		walk_tab(&w, root->ops->tab, 0);
		walk_tab(&w, root->ops->dyn, 0);
	}
}

void readme_text(struct strbuf *b, const struct fent *root)
{
	sb_addf(b, "sessionfs: persistent shell sessions as files\n\n");
	readme_tree(b, root, WIDTH);
	sb_add(b, example, strlen(example));
}
