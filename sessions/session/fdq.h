/*
 * fdq.h - the descriptors the daemon holds for users' open files and
 * for the processes they start (procs/, contexts/): a bound per user
 * (max_fds_per_user) and a reserve (fd_reserve) that only the daemon's
 * own work may use.
 */
#ifndef SFS_FDQ_H
#define SFS_FDQ_H

#include <sys/types.h>

/* Reads the daemon's RLIMIT_NOFILE (once sess_init has raised it) and
 * works out the cut (the limit less the reserve) and the bound per user.
 * Returns 0 or -errno. */
int fdq_init(void);
/* Whether uid may have one more descriptor held for her: 0, or -EMFILE
 * when she holds her bound (the mounter and root have none). */
int fdq_check(uid_t uid);
/* fd was just opened for an open file of uid's (-1: the open failed,
 * errno says why). Returns fd, now counted as hers, or -errno: her bound
 * (EMFILE) or the cut (ENFILE) close fd again. */
int fdq_take(uid_t uid, int fd);
/* An upgrade in place: fd, counted as uid's in the previous program, is
 * hers again, whatever her bound or the cut are now (refusing it would
 * lose a file the kernel holds open). One past the cut cannot be
 * recorded and is not counted. */
void fdq_adopt(uid_t uid, int fd);
/* fd was just opened for the daemon's files/ nodes (nobody's own, kept
 * while the kernel remembers the inode): returns fd, or -errno (ENFILE
 * past the cut, which closes fd). */
int fdq_keep(int fd);
/* A process of uid's starts (a proc, a context's interpreter) for which
 * the daemon keeps n descriptors while it lives (pipes, spools), top the
 * highest of those opened so far: 0, now counted as hers, or -EMFILE
 * past her bound (the mounter and root have none), -ENFILE when top is
 * at or past the cut. */
int fdq_charge(uid_t uid, unsigned n, int top);
/* Those *n descriptors are closed: they no longer count, and *n is 0
 * (so that they are never given back twice). */
void fdq_uncharge(uid_t uid, unsigned *n);
/* One line saying why rc (EMFILE, ENFILE from here) refused uid, into
 * buf; anything else as strerror. Returns buf. */
const char *fdq_why(uid_t uid, int rc, char *buf, size_t len);
/* fd (counted by fdq_take, or not) is about to be closed by its owner
 * (closedir): it no longer counts. */
void fdq_release(int fd);
/* fdq_release, then close (nothing for fd < 0). */
void fdq_close(int fd);

/* For the metrics: descriptors held for open files and processes now, the bound per
 * user, the cut, and the opens refused since the start. */
unsigned long fdq_held(void);
unsigned long fdq_bound(void);
unsigned long fdq_cut(void);
unsigned long fdq_refused(void);

#endif
