/*
 * treedump.c - prints the mount's tree from its rows, one path a line
 * (a directory ends with '/', an entry its lookup finds is '*'), so that
 * tests can hold the man page's tree against the rows (tests/tree_doc.sh);
 * with --types, each path after its file type's number (the numbers a
 * new family must not take); with --readme, the mount's README made from
 * them. It only walks the tables: it mounts nothing and starts nothing.
 */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "fam_root.h"
#include "readme.h"

/* Deep enough for the tree (it has six levels); a longer path is cut. */
#define DEPTH 16

static bool types; /* --types */

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

int main(int argc, char **argv)
{
	int rc = 0;

	types = argc > 1 && !strcmp(argv[1], "--types");
	if (argc > 1 && !strcmp(argv[1], "--readme"))
		rc = readme();
	else
		walk(&fam_root, "", 0);
	return fflush(stdout) || rc ? 1 : 0;
}
