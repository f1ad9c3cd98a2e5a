/*
 * vtsize.h - what libvterm 0.1.4 leaves wrong after a resize of the
 * screen (vterm_set_size), and the bytes that, fed after it, set it
 * right: term.c feeds them as if the program had printed them.
 */
#ifndef SFS_VTSIZE_H
#define SFS_VTSIZE_H

#include <stddef.h>
#include <vterm.h>
#include "sessions/tty/vtskip.h"

#define VTSIZE_FIX_MAX 32 /* the most vtsize_fix writes */

/*
 * s: the scanner after the bytes fed so far and vtskip_size to the new
 * size; vt: libvterm right after vterm_set_size; rows: the height
 * before. Into out (VTSIZE_FIX_MAX bytes), its length (0 if nothing is
 * wrong):
 * - fewer rows with lines below the cursor that are not blank: libvterm
 *   pushes them up (into scrollback), and the cursor with them, above
 *   the screen (row < 0), where the next character is written;
 * - fewer rows with a scroll region that no longer fits (libvterm cuts
 *   its bottom, not its top: a line feed then moves a negative count of
 *   lines): the region is reset (DECSTBM);
 * then the cursor is put back where it was (row 0 if above the screen).
 * A sequence that the resize cut is ended first (CAN).
 */
size_t vtsize_fix(const struct vtskip *s, VTerm *vt, int rows, char *out);

#endif
