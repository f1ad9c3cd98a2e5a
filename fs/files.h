/*
 * files.h - files/: the workspace directory (conf.workspace) passed
 * through with ordinary file semantics. Its inodes are FT_FILES (the
 * root, object id 0) and FT_FILE (object id of an OBJ_FILE that holds an
 * O_PATH descriptor and a lookup count); every operation works relative
 * to those descriptors (openat, fstatat, ...), so no path from a request
 * is ever resolved from "/", and nothing escapes the workspace through
 * the FUSE layer.
 */
#ifndef SFS_FILES_H
#define SFS_FILES_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include "tree.h"

/* Their types (their numbers never move: fs/tree.h). */
#define FT_BLOCK_FILES 30
enum {
	FT_FILES = FT_BLOCK_FILES, /* files/, the workspace root */
	FT_FILE, /* anything below it: the id is an OBJ_FILE's */
};

/* Opens the workspace root. Returns 0 or -errno (files/ then answers
 * ENOENT below its root). */
int files_init(const char *workspace);

/* An upgrade in place (fs/files_state.c). files_save writes files/ as
 * one object of key UPK_FILES (fs/upgrade.h) into the root of w: the
 * workspace root, every node the kernel knows and every open file and
 * directory (with its listing's position), their descriptors with
 * state_put_fd; it changes nothing, and pauses the notifier for the
 * execve that follows (-EBUSY, nothing written, when the notifier is
 * stuck in the kernel: fs/files_inval.h). In the next program, after fdq_init
 * and before the first request, files_restore(o) takes that object's
 * body, in place of files_init (a root files_init opened is replaced):
 * every inode and handle of files/ the kernel holds names the same file
 * again, its descriptor counted as before (sessions/session/fdq.h). A
 * node or open file whose descriptor is missing answers ESTALE until
 * the kernel lets it go; without the root's descriptor (a state written
 * after a crash) the configured workspace is opened again and all of
 * them are stale. Each case is one line of the log. Returns 0, or -errno
 * when no root could be had (files/ is then as after a failed
 * files_init). */
struct state_w;
struct state_r;
int files_save(struct state_w *w);
int files_restore(const struct state_r *o);
/* True for inodes that files_ops serves. */
bool files_is(fuse_ino_t ino);

/* Set before the mount when the kernel checks permissions itself
 * (default_permissions): files_conn_init then asks the kernel to
 * evaluate the files' POSIX ACLs too (FUSE_CAP_POSIX_ACL), and to leave
 * the umask to the daemon (FUSE_CAP_DONT_MASK), which lets the backing
 * filesystem apply it, or a directory's default ACL instead. The
 * tree's own creations ignore the mode they are asked for. */
extern bool files_posix_acl;
void files_conn_init(struct fuse_conn_info *conn);

extern const struct fuse_lowlevel_ops files_ops;
/* The row handlers of files/ (one row in the root's table): files_ops
 * serves its inodes. */
extern const struct fops files_fops;

#endif
