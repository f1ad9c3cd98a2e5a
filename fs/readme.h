/*
 * readme.h - the text of the mount's README file.
 */
#ifndef SFS_README_H
#define SFS_README_H

extern const char fsn_readme[];

#endif
