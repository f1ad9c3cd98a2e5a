/*
 * fam_tty.h - a session's tty/: its terminal as files.
 */
#ifndef SFS_FAM_TTY_H
#define SFS_FAM_TTY_H

#include "tree.h"

extern const struct fops fam_tty_ops;

#endif
