/*
 * files_xattr.h - the extended attributes and inode flags of files/
 * (fs/files_xattr.c): the getxattr, listxattr, setxattr, removexattr and
 * ioctl operations of files_ops, with libfuse's arguments.
 */
#ifndef SFS_FILES_XATTR_H
#define SFS_FILES_XATTR_H

#include <fuse_lowlevel.h>

void fxattr_get(fuse_req_t req, fuse_ino_t ino, const char *name,
		size_t size);
void fxattr_list(fuse_req_t req, fuse_ino_t ino, size_t size);
void fxattr_set(fuse_req_t req, fuse_ino_t ino, const char *name,
		const char *value, size_t size, int flags);
void fxattr_remove(fuse_req_t req, fuse_ino_t ino, const char *name);
void fxattr_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		  struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		  size_t in_bufsz, size_t out_bufsz);

#endif
