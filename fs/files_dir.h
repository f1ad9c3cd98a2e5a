/*
 * files_dir.h - OPENDIR, READDIR and RELEASEDIR of files/ (fs/files.c's
 * operations table serves them from here).
 */
#ifndef SFS_FILES_DIR_H
#define SFS_FILES_DIR_H

#include <fuse_lowlevel.h>

void fdir_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fdir_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi);
void fdir_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

#endif
