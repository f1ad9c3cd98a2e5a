/*
 * readme.h - the text of the mount's README file, made from the rows.
 */
#ifndef SFS_README_H
#define SFS_README_H

#include "sessions/core/strbuf.h"
#include "tree.h"

/* Adds the README of the tree below root to b: a title, the tree and
 * an example. */
void readme_text(struct strbuf *b, const struct fent *root);
/* Adds the tree below root to b, a line per row (or per rows next to
 * each other with one doc): its name, indented by its depth, and its
 * doc, its words wrapped at width columns (the README's are 78). */
void readme_tree(struct strbuf *b, const struct fent *root, size_t width);

#endif
