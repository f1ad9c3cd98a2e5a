/*
 * fam.h - what the file families share (fs/fam_*.c): the open file, the
 * replies of text, spool files, streams and directory listings, written
 * bytes gathered until they are applied, and parked answers. Families
 * call these; this module calls no family.
 */
#ifndef SFS_FAM_H
#define SFS_FAM_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include "park.h"
#include "sessions/core/objs.h"
#include "sessions/core/strbuf.h"
#include "tree.h"

#define FAM_ENTRY_TTL 60.0 /* names that never change meaning */
/* The folder of a named run's files, in error lines: runs/ or procs/. */
#define FAM_RUN_DIR(r) ((r)->is_proc ? "procs" : "runs")

/* An open file. */
struct state_w;
struct state_r;

struct fh {
	uint64_t id;	       /* fi->fh: an object id, kept by an upgrade */
	const struct fent *fe; /* its row */
	uint64_t sid;	       /* its session's id (0: none) */
	uint64_t cid;	       /* its code context's id (0: none) */
	struct run *r;	       /* the run it reads, or that its cmd started */
	char *var;	       /* env/NAME: the name */
	struct {
		char *val; /* env/NAME: its value when opened to be written */
		size_t len;
		bool set;
	} before;
	int fd;		    /* spool (or output index) read end, lazily */
	int fd_out, fd_err; /* for output and stream: the two spools */
	uint64_t cursor;    /* stream: the end of its latest read (poll) */
	char *text;	    /* snapshot of a generated file */
	size_t tlen;
	struct strbuf w;	    /* bytes written since open */
	struct fuse_pollhandle *ph; /* a poll waiting for readability */
	struct park *poll_watch;    /* its record on the run */
	bool dirty;		    /* cmd bytes not yet submitted */
	bool started;		    /* cmd: its opener's close started it */
	bool created;		    /* made by create(2), not found */
	bool trunc;		    /* opened with O_TRUNC, not yet applied */
	int werr;		    /* sticky write error */
	bool lost; /* made again after a crash: what it wrote is gone */
	unsigned ctl_lines;	    /* a ctl file's lines carried out so far */
	int flags;		    /* open flags, as of the latest request */
	pid_t opener;		    /* who opened it (0: not visible) */
	uid_t uid;		    /* and as whom */
	gid_t gid;
	struct list link; /* every open file (fh_free_all) */
	void *priv;	  /* a family's own state of the open file */
	void (*priv_free)(void *priv);
	/* Writes priv's fields into the open object of the open file, for
	 * its row's priv_restore in the next program (tree.h). NULL: priv
	 * is not kept (the restored file has none). */
	void (*priv_save)(const void *priv, struct state_w *w);
};

/* The open file of fi, or NULL when there is none of that id (a
 * handle an upgrade could not keep). */
static inline struct fh *fh_of(const struct fuse_file_info *fi)
{
	return objs_get(fi->fh, OBJ_FH);
}

/* An open file of n (it holds n's run). NULL on ENOMEM. */
struct fh *fh_new(const struct node *n);
/* Notes who opened fh and how (the request of its open or create). */
void fh_opened(struct fh *fh, fuse_req_t req, const struct fuse_file_info *fi);
void fh_free(struct fh *fh);
/* Frees the files still open when the daemon exits: the kernel sends no
 * release for them once the connection is gone. */
void fh_free_all(void);
/* The open file after fh (NULL: the first), NULL after the last. */
struct fh *fh_next(struct fh *fh);
/* fh, made again by an upgrade, joins the open files. */
void fh_track(struct fh *fh);
/* An upgrade in place: every open file as an object of key, and made
 * again (fh_restore_all returns how many could not be). */
void fh_save_all(struct state_w *w, uint16_t key);
unsigned fh_restore_all(const struct state_r *o, uint16_t key);
/* Wakes every poll that waits (before an upgrade: the kernel asks the
 * next program again). */
void fh_wake_polls(void);
/* Makes r (may be NULL) the run fh holds. */
void fh_set_run(struct fh *fh, struct run *r);
/* Drops fh's poll watch. */
void fh_unwatch(struct fh *fh);
/* Opens (once) fh's run's spool file with that suffix into *slot,
 * counted as its opener's (sessions/session/fdq.c); returns the descriptor, or -errno
 * for its read to fail with (EMFILE, ENFILE, ENOMEM, EIO), said in the
 * session's error file. */
int fh_spool(struct fh *fh, int *slot, const char *suffix);

/* Replies with text[off..] (at most size bytes). */
void fam_reply_text(fuse_req_t req, const char *text, size_t len, size_t size,
		    off_t off);
/* Replies with size bytes of fd at off (fewer at its end). */
void fam_reply_fd(fuse_req_t req, int fd, size_t size, uint64_t off);
/* Replies with up to size bytes at off of fh's spool file with that
 * suffix, which is end bytes long; a spool that cannot be opened is an
 * error, never an empty read. */
void fam_reply_spool(fuse_req_t req, struct fh *fh, const char *suffix,
		     uint64_t end, size_t size, off_t off);
/* Replies with up to size output bytes from off, gathered from the
 * records of fh's run that hold them; returns how many it sent. */
size_t fam_reply_output(fuse_req_t req, struct fh *fh, size_t size,
			uint64_t off);
/* Answers now if try can, else parks the request in the list that
 * waiters gives (asked only then). */
void fam_answer_or_park(fuse_req_t req, struct fh *fh,
			struct list *(*waiters)(struct fh *fh), size_t size,
			off_t off, bool (*try)(struct park *));

/* Like fam_answer_or_park for a read: EAGAIN instead of parking when
 * fh is O_NONBLOCK. */
void fam_read_or_park(fuse_req_t req, struct fh *fh,
		      struct list *(*waiters)(struct fh *fh), size_t size,
		      off_t off, bool (*try)(struct park *));
/* What a blocked request on a run's file waits on: the run's changes
 * (park_wake). Asked only when it would block, so when fh has a run that
 * is active. */
struct list *fam_run_waiters(struct fh *fh);
/* A stream (a run's, a process's, the terminal's): fh's run's output, a
 * read at its end waiting for more until the run ends, then EOF; with no
 * run, EOF at once. Its poll: readable past the end of the latest read. */
void fam_stream_read(fuse_req_t req, struct fh *fh, size_t size, off_t off);
bool fam_stream_readable(const struct fh *fh);
/* True when req (a close) comes from the process that opened fh, or
 * when either is not visible to the daemon (pid 0). */
bool fam_by_opener(fuse_req_t req, const struct fh *fh);

/* Adds buf to what was written to fh (E2BIG past max_command_bytes).
 * Returns 0 or -errno. */
int fam_gather(struct fh *fh, struct sess *s, const char *buf, size_t size);
/* Writes buf at off of what was written to fh, as a regular file holds
 * it: a gap before off is NUL bytes; with O_APPEND at the end (E2BIG
 * past max_command_bytes). Returns 0 or -errno. */
int fam_write_at(struct fh *fh, struct sess *s, const char *buf, size_t size,
		 off_t off);
/* Cuts what was written to fh to size bytes, or extends it with NULs. */
int fam_resize(struct fh *fh, struct sess *s, off_t size);

/* A command file (a session's, runs/NAME's, procs/NAME's cmd, a
 * context's code): its size and read (the run's command, empty before
 * it); a write at off, EBUSY once the command has started; ftruncate
 * through the open file (fh NULL: a truncate(2), which changes nothing);
 * and whether a close (req) or the release (req NULL) starts the command
 * now: only the opener's close, once something was written, or the
 * release of bytes no close started. */
off_t fam_cmd_size(const struct node *n);
void fam_cmd_read(fuse_req_t req, struct fh *fh, size_t size, off_t off);
int fam_cmd_write(fuse_req_t req, struct fh *fh, struct node *n,
		  const char *buf, size_t size, off_t off);
int fam_cmd_truncate(const struct node *n, struct fh *fh, off_t size);
bool fam_cmd_starts(fuse_req_t req, struct fh *fh);
/* The open of a run's cmd: a writer of the session's makes a run of its
 * own; runs/NAME/cmd and procs/NAME/cmd take one command (EBUSY). */
int fam_cmd_open(struct fh *fh, struct node *n, struct fuse_file_info *fi);
/* The ops every command file has (its open, flush and release are its
 * family's). */
#define FAM_CMD_FOPS                                                           \
	.size = fam_cmd_size, .read = fam_cmd_read, .write = fam_cmd_write,    \
	.truncate = fam_cmd_truncate
/* The flush of a command file whose close waits for what it started: at
 * the opener's close, start(fh) queues it as fh->r; the reply is parked
 * on the run until retry answers it (interrupted: Ctrl-C of the closer).
 * Returns -errno or FOPS_LATER. */
int fam_cmd_flush(fuse_req_t req, struct fh *fh, int (*start)(struct fh *),
		  bool (*retry)(struct park *),
		  void (*interrupted)(struct park *));
/* The value written to a small file, less one trailing newline. */
size_t fam_value_len(const struct strbuf *w);
/* The complete lines written to fh (and the rest too when all), all or
 * nothing: line checks each of them (apply false) and, only when every
 * one is valid, carries them out (apply true); a last line without its
 * newline waits. A refusal drops what was written, and the open file
 * refuses every later write (tools write a line at a time: bash's
 * printf 'bogus\nkill\n' is two writes). */
typedef int fam_line_fn(struct fh *fh, struct sess *s, const char *l,
			size_t len, bool apply);
int fam_lines(struct fh *fh, struct sess *s, bool all, fam_line_fn *line);
/* A ctl file's table: its verbs (sessions/core/ctl.h), the folder its error
 * lines name it in ("procs/": procs/NAME/ctl), and the owner of the
 * lines written to fh with its name (NULL where the folder has one ctl),
 * or NULL when it is gone (the line fails with -gone). */
struct ctl_verb;
struct fam_ctl {
	const char *dir;
	const struct ctl_verb *verbs;
	void *(*owner)(struct fh *fh, struct sess *s, const char **name);
	int gone;
};
/* A ctl file's write (its complete lines are checked against its table,
 * then carried out by their rows; a line none of them takes is refused,
 * -EINVAL, with an error line that names the verbs) and close (a last
 * line without a newline is carried out then): a ctl row's ops are
 * FAM_CTL_OPS(its table). */
int fam_ctl_write(fuse_req_t req, struct fh *fh, struct node *n,
		  const char *buf, size_t size, off_t off);
int fam_ctl_flush(fuse_req_t req, struct fh *fh);
#define FAM_CTL_OPS(tab)                                                       \
	{                                                                      \
		.write = fam_ctl_write, .flush = fam_ctl_flush, .ctl = &(tab)  \
	}

/* What mkdir in runs/ or procs/ answers: the new run's inode (made with
 * rc, never kept by the kernel). */
int fam_made_run(int rc, const struct run *r, ft_t ft, fuse_ino_t *ino,
		 double *ttl);

/* Directory listings, built for each readdir call. */
struct dirbuf {
	char *p;
	size_t len, cap, count;
	off_t from;
	size_t max;
	fuse_req_t req;
};

void fam_dir_add(struct dirbuf *d, const char *name, fuse_ino_t ino,
		 mode_t mode);
/* Lists the runs of a session's list (runs/ or procs/), as ft dirs. */
void fam_list_runs(struct dirbuf *d, const struct list *runs, ft_t ft);

#endif
