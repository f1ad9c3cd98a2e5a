/*
 * upgrade.h - upgrade in place: the root ctl's `upgrade [PATH]` saves the
 * whole state into a memfd and execve's the new program in the same
 * process, which keeps the mount's /dev/fuse descriptor, every shell
 * and its pipes; the new program (started with --resume=FD) makes the
 * state again and serves on.
 *
 * libfuse 3.14 cannot start a session without the kernel's FUSE_INIT,
 * which a connection sends once: the first program keeps the INIT
 * request's bytes and the next one hands them to libfuse again
 * (fuse_session_process_buf) with a unique no request has, so that
 * libfuse negotiates exactly as before and the kernel drops the reply
 * (ENOENT, which libfuse ignores). Requests the old program had read but
 * not answered (parked ones, the upgrade's own write) are sent again by
 * the kernel after FUSE_NOTIFY_RESEND (Linux 6.9 and later; without it
 * an upgrade is refused with EOPNOTSUPP), and the write of `upgrade` is
 * answered first, from its saved unique.
 */
#ifndef SFS_UPGRADE_H
#define SFS_UPGRADE_H

#include <fuse_lowlevel.h>
#include <stdbool.h>
#include "sessions/core/state.h"

/* main.c: the session, the program's arguments (without --resume) and
 * the mount point, for the next program. */
void upgrade_setup(struct fuse_session *se, char **argv, const char *mnt);
/* main.c: each request before libfuse processes it (notes its unique,
 * and keeps the INIT request). */
void upgrade_saw(const struct fuse_buf *buf);
/* The root ctl's verb, written by uid: 0 once the reply is left to the
 * upgrade (FOPS_LATER for the caller), or -errno now. */
int upgrade_request(fuse_req_t req, size_t size, const char *path,
		    size_t plen, uid_t uid);

/* main.c, first: --check-state=FD and --upgrade MOUNTPOINT [PATH] are
 * carried out (the exit status is returned), --resume=FD is taken out
 * of argv into *resume_fd; else -1. */
int upgrade_args(int *argc, char **argv, int *resume_fd);
/* The next program's mount: the state of fd read, its /dev/fuse given
 * to se. Returns 0 or an exit status. */
int upgrade_attach(struct fuse_session *se, int fd, struct state_r *root);
/* The next program's unmount at its end (libfuse knows no mount point
 * of a session given a descriptor). */
void upgrade_unmount(void);

/* The next program. Reads and checks the state in fd (then closed):
 * 0 and *root, or -errno. The bytes stay until upgrade_done. */
int upgrade_load(int fd, struct state_r *root);
/* The /dev/fuse descriptor handed over, or -1. */
int upgrade_fuse_fd(const struct state_r *root);
/* After the layers are made again (sstate_restore): the open files,
 * then the INIT replay, the upgrade's reply and the resend. Returns 0
 * or -errno. */
int upgrade_finish(struct fuse_session *se, const struct state_r *root);
/* Frees the bytes of the state. */
void upgrade_done(void);
/* Whether this program was started by an upgrade (or by the keeper,
 * after a crash: then also upgrade_recovering). */
bool upgrade_resumed(void);
bool upgrade_recovering(void);
/* This program's file, as it was started. */
const char *upgrade_exe(void);
/* And the cwd it started in. */
const char *upgrade_cwd(void);
/* The number of upgrades this mount has had (metrics). */
unsigned long upgrade_count(void);

/* Root-level keys of the state. */
enum { UPK_LAYER = 1, UPK_FS, UPK_FH, UPK_FILES, UPK_PORTS };

#endif
