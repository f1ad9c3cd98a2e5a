/*
 * runopts.h - the options of one named run (runs/NAME) or process
 * (procs/NAME), written before its cmd: variables set (or, written
 * empty, unset) for it alone, a cwd for it alone and, for a named run,
 * bytes for its stdin. The driver applies them around the run and puts
 * the shell back after it (sessions/sfsdrv/opts.c).
 */
#ifndef SFS_RUNOPTS_H
#define SFS_RUNOPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sessions/core/envmap.h"
#include "sessions/core/strbuf.h"

struct run;
struct state_w;
struct state_r;

/* The most bytes a run's stdin file takes. */
#define RUNOPTS_STDIN_MAX (16u << 20)

struct run_opts {
	struct envmap env; /* OBJ_RUNVAR, owner the run; "" unsets it */
	char *cwd;	   /* NULL: the session's */
	bool has_stdin;	   /* r<id>.in holds stdin_len bytes */
	uint64_t stdin_len;
	uint64_t charged; /* bytes of it in the spools' budget */
};

/* Whether r may still take options (its cmd is not written). */
bool runopts_open(const struct run *r);
/* r's variables (an empty set when it has none). */
const struct envmap *runopts_env(const struct run *r);
/* Sets (val, len bytes; "" unsets for the run) or forgets name. 0,
 * -EBUSY once its cmd is written, or -ENOMEM. */
int runopts_setenv(struct run *r, const char *name, const char *val,
		   size_t len);
int runopts_forget(struct run *r, const char *name);
/* Sets r's cwd to path (absolute: checked by the caller). */
int runopts_set_cwd(struct run *r, const char *path);
/* Writes size bytes at off (O_APPEND: at the end) of r's stdin file in
 * dirfd, made uid's; truncates it to len. 0, -EBUSY, -EFBIG or -errno. */
int runopts_write_stdin(struct run *r, int dirfd, uid_t uid, gid_t gid,
			const char *buf, size_t size, off_t off);
int runopts_truncate_stdin(struct run *r, int dirfd, uid_t uid, gid_t gid,
			   uint64_t len);
/* The letters of the driver's control line for r ("o": r<id>.opt, "i":
 * r<id>.in; "-": none), and r<id>.opt written as the prelude is, uid's. */
const char *runopts_flags(const struct run *r);
int runopts_write_file(struct run *r, int dirfd, uid_t uid, gid_t gid);
/* base with r's variables over it, for execve (free with
 * envmap_envp_free); NULL on ENOMEM. */
char **runopts_envp(const struct run *r, const struct envmap *base);
/* The lines "env NAME..." "cwd PATH" "stdin_bytes N" of status, and the
 * ",\"options\":{...}" of result.json; nothing without options. */
void runopts_status(const struct run *r, struct strbuf *b);
void runopts_json(const struct run *r, struct strbuf *b);
/* r has ended: its stdin file goes, and its room in the spools' budget
 * (the status keeps its size). */
void runopts_done(struct run *r);
void runopts_free(struct run *r);
/* An upgrade or a checkpoint: r's options as object key. */
void runopts_save(const struct run *r, struct state_w *w, uint16_t key);
void runopts_restore(struct run *r, const struct state_r *o, uint16_t key);

#endif
