/*
 * files_kill.c - the setuid and setgid bits that a write by another user
 * clears, as ext4 clears them.
 *
 * A write or truncate by a caller without CAP_FSETID makes the kernel
 * ask for the bits' removal before it sends the write: libfuse 3.14
 * never hands the kernel FUSE_HANDLE_KILLPRIV, so the kernel works out
 * the mode itself and sends a setattr of the mode without S_ISUID (and
 * without S_ISGID when the group may execute), or, for a setgid file the
 * group may not execute, a setattr of nothing at all. Both come with the
 * writer's credentials, and a writer who does not own the file may not
 * change its mode: the write failed with EPERM, where ext4 succeeds and
 * clears the bits.
 *
 * So such a setattr, from another user who may write the file and who
 * is not in a chmod(2) or chown(2) herself (her thread's current system
 * call, from /proc/PID/syscall), is done with the daemon's credentials:
 * it clears only what a write of hers clears on ext4 (S_ISUID; S_ISGID
 * when the group may execute, or when she is not in the file's group).
 * A chmod of hers goes her own way and fails as on ext4.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "files_kill.h"
#include "files_node.h"

#define NGROUPS_SEEN 256

/* True if the thread pid is in a chmod(2) or chown(2) of its own (or
 * cannot be seen: then nothing is done for it). */
static bool in_mode_call(pid_t pid)
{
	char p[64];
	long nr = -1;
	FILE *f;

	if (pid <= 0)
		return true;
	snprintf(p, sizeof(p), "/proc/%d/syscall", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return true;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr < 0 ||
#ifdef SYS_chmod
	       nr == SYS_chmod || nr == SYS_chown || nr == SYS_lchown ||
#endif
#ifdef SYS_fchmodat2
	       nr == SYS_fchmodat2 ||
#endif
	       nr == SYS_fchmod || nr == SYS_fchmodat || nr == SYS_fchown ||
	       nr == SYS_fchownat;
}

/* True if req's caller is in group gid (her own or a supplementary one). */
static bool in_group(fuse_req_t req, gid_t gid)
{
	gid_t groups[NGROUPS_SEEN];
	int n = fuse_req_getgroups(req, NGROUPS_SEEN, groups);

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	for (int i = 0; i < n && i < NGROUPS_SEEN; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * The mode a write of req's caller leaves on a file of stat st when the
 * setattr (attr, set) is the kernel's request for it, else st's own.
 * The kernel asks for its own reckoning only (without S_ISUID, and
 * without S_ISGID when the group may execute); ext4 also clears a
 * S_ISGID the group may not execute when the writer is not in the group.
 */
static mode_t killed_mode(fuse_req_t req, const struct stat *st,
			  const struct stat *attr, int set)
{
	mode_t cur = st->st_mode & 07777, k = cur & ~(mode_t)S_ISUID;

	if ((cur & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		k &= ~(mode_t)S_ISGID;
	if (!set)
		k = cur; /* with S_ISUID the kernel would have sent a mode */
	else if ((attr->st_mode & 07777) != k || k == cur)
		return cur;
	if ((k & S_ISGID) && !(k & S_IXGRP) && !in_group(req, st->st_gid))
		k &= ~(mode_t)S_ISGID;
	return k;
}

/* True if req's caller (switched to her credentials) may write p. */
static bool may_write(fuse_req_t req, const char *p)
{
	int sw = fnode_as_caller(req), ok;

	if (sw < 0)
		return false;
	ok = faccessat(AT_FDCWD, p, W_OK, AT_EACCESS) == 0;
	fnode_as_self(sw);
	return ok;
}

int fkill_setattr(fuse_req_t req, const struct fnode *n,
		  const struct stat *attr, int *set)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	struct stat st;
	mode_t want;
	char p[64];

	/* a truncate's mode comes with its size and times */
	if (c->uid == geteuid() || !S_ISREG(n->type) ||
	    (*set != 0 && !(*set & FUSE_SET_ATTR_MODE)) ||
	    (*set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		return 0;
	if (fstatat(n->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	want = killed_mode(req, &st, attr, *set);
	if (want == (st.st_mode & 07777))
		return 0;
	fnode_proc_path(p, sizeof(p), n->fd);
	if (in_mode_call(c->pid) || !may_write(req, p))
		return 0;
	if (chmod(p, want) < 0)
		return -errno;
	*set &= ~FUSE_SET_ATTR_MODE;
	return 0;
}
