/*
 * treedump.c - prints the mount's tree from its rows, one path a line
 * (a directory ends with '/', an entry its lookup finds is '*'), so that
 * tests can hold the man page's tree against the rows (tests/tree_doc.sh);
 * with --types, each path after its file type's number (the numbers a
 * new family must not take); with --readme, the mount's README made from
 * them; with --man PAGE.in, that page with its line @TREE@ replaced by the
 * README's tree (the build makes sessionfs(7) so). It only walks the
 * tables: it mounts nothing and starts nothing.
 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "fam_root.h"
#include "readme.h"

/* Deep enough for the tree (it has six levels); a longer path is cut. */
#define DEPTH 16

static bool types; /* --types */

/* The line of a man page that the tree replaces, and the width of the
 * tree's lines there: with the page's indent of 7, 80 columns. */
#define MAN_MARK  "@TREE@"
#define MAN_WIDTH 72

static void walk(const struct fent *fe, const char *dir, int depth);

static void walk_tab(const struct fent *tab, const char *dir, int depth)
{
	for (; tab && tab->name; tab++)
		walk(tab, dir, depth);
}

static void walk(const struct fent *fe, const char *dir, int depth)
{
	char path[1024];
	bool is_dir = S_ISDIR(fe->mode);

	snprintf(path, sizeof(path), "%s%s%s", dir, *fe->name ? fe->name : "*",
		 is_dir ? "/" : "");
	if (types)
		printf("%3u %s\n", fe->ft, depth > 0 ? path : "/");
	else if (depth > 0)
		printf("%s\n", path);
	if (!is_dir || !fe->ops || depth >= DEPTH)
		return;
	walk_tab(fe->ops->tab, depth > 0 ? path : "", depth + 1);
	walk_tab(fe->ops->dyn, depth > 0 ? path : "", depth + 1);
}

static int readme(void)
{
	struct strbuf b = { 0 };
	size_t len;
	char *text;

	readme_text(&b, &fam_root);
	text = sb_take(&b, &len);
	if (!text)
		return 1;
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

/* The tree as the lines of a roff .nf block: the README's below
 * MOUNT/, the characters roff would change escaped. */
static int man_tree(void)
{
	struct strbuf b = { 0 };
	size_t len;
	char *text;

	readme_tree(&b, &fam_root, MAN_WIDTH);
	text = sb_take(&b, &len);
	if (!text)
		return -1;
	fputs("MOUNT/\n", stdout);
	for (size_t i = 0; i < len; i++) {
		const char *esc = text[i] == '\\' ? "\\[rs]" :
				  text[i] == '"'  ? "\\[dq]" :
				  text[i] == '\'' ? "\\[aq]" :
				  text[i] == '`'  ? "\\[ga]" :
						    NULL;

		if (esc)
			fputs(esc, stdout);
		else
			putchar(text[i]);
	}
	free(text);
	return 0;
}

/* Prints the man page in, its line MAN_MARK (once) replaced by the
 * tree. Returns the exit status. */
static int man_page(const char *in)
{
	FILE *f = fopen(in, "r");
	char *line = NULL;
	size_t cap = 0;
	int marks = 0, rc = 0;

	if (!f) {
		fprintf(stderr, "sfs-treedump: %s: %m\n", in);
		return 1;
	}
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		if (strcmp(line, MAN_MARK "\n") != 0)
			fputs(line, stdout);
		else if (marks++ == 0)
			rc = man_tree();
	}
	if (ferror(f) || rc < 0 || marks != 1) {
		fprintf(stderr, "sfs-treedump: %s: %s\n", in,
			marks != 1 ? "not one " MAN_MARK " line" :
				     "cannot be read");
		rc = 1;
	}
	free(line);
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	types = argc > 1 && !strcmp(argv[1], "--types");
	if (argc > 1 && !strcmp(argv[1], "--readme"))
		rc = readme();
	else if (argc > 2 && !strcmp(argv[1], "--man"))
		rc = man_page(argv[2]);
	else
		walk(&fam_root, "", 0);
	return fflush(stdout) || rc ? 1 : 0;
}
