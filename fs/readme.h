/*
 * readme.h - the text of the mount's README file, made from the rows.
 */
#ifndef SFS_README_H
#define SFS_README_H

#include "sessions/core/strbuf.h"
#include "tree.h"

/* Adds the README of the tree below root to b: each row's name,
 * indented by its depth, and its doc. */
void readme_text(struct strbuf *b, const struct fent *root);

#endif
