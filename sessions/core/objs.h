/*
 * objs.h - the table of live objects by id. Inode numbers are built from
 * these ids (fs/tree.c), so an id is never reused while the daemon runs and
 * a stale inode simply finds nothing.
 */
#ifndef SFS_OBJS_H
#define SFS_OBJS_H

#include <stddef.h>
#include <stdint.h>

enum obj_kind {
	OBJ_NONE,
	OBJ_SESS,
	OBJ_RUN,
	OBJ_ENVVAR,
	OBJ_ROOTENV,
	OBJ_FILE,   /* an inode under files/ (fs/files.c) */
	OBJ_CTX,    /* a code context (sessions/ctx/ctx.h) */
	OBJ_CTXVAR, /* a context's variable (struct envvar) */
	OBJ_CTXRES, /* a result of an execution (struct ctx_result) */
	OBJ_FH,	    /* an open file of the tree (fs/fam.h): its fi->fh */
	OBJ_WATCH,  /* a watch of the workspace (fs/watch.h) */
	OBJ_RUNVAR, /* a variable of a run's options (runopts.h) */
};

/* Returns a fresh id (never 0) registered for ptr. */
uint64_t objs_add(enum obj_kind kind, void *ptr);
/* The next objs_add returns id (an upgrade makes each object again with
 * the id its inodes carry); ids after the restore start above every id
 * seen. */
void objs_reuse(uint64_t id);
/* The next fresh id (a checkpoint keeps it: the program after a crash
 * starts far above, past the ids made after the checkpoint). */
uint64_t objs_next(void);
/* Room for n more objects at once (a restore knows how many come), and
 * how many there are. */
void objs_reserve(size_t n);
size_t objs_live(void);
/* In the next program of an upgrade: no fresh id below id, the old
 * program's next one (an id it gave to an object since deleted, whose
 * inode the kernel may still know, is not given again to another). */
void objs_floor(uint64_t id);
void objs_del(uint64_t id);
/* Gives id another kind and object (an object made under OBJ_NONE, that
 * no lookup finds, becomes what it is). */
void objs_set(uint64_t id, enum obj_kind kind, void *ptr);
/* Returns the object of that id and kind, or NULL. */
void *objs_get(uint64_t id, enum obj_kind kind);
enum obj_kind objs_kind(uint64_t id);

#endif
