/*
 * vtsize.c - the bytes that set libvterm 0.1.4's state right after a
 * resize (see vtsize.h): its screen.c pushes the lines below the cursor
 * off the top without looking whether the cursor goes with them, and
 * its state.c bounds a scroll region's bottom by the new height but not
 * its top. (Left and right margins are bounded the same way, but every
 * use of a left side past the right one is either guarded or erases
 * nothing.)
 */
#include <stdio.h>
#include <string.h>
#include "sessions/tty/vtsize.h"

/* Whether the region set by DECSTBM is still one in the new height. */
static bool region_fits(const struct vtskip *s)
{
	int bottom =
		s->bottom > -1 && s->bottom < s->rows ? s->bottom : s->rows;

	return s->top >= 0 && s->top < bottom;
}

size_t vtsize_fix(const struct vtskip *s, VTerm *vt, int rows, char *out)
{
	bool tb = s->tb_margins && s->rows < rows && !region_fits(s);
	size_t n = 0;
	VTermPos at;

	vterm_state_get_cursorpos(vterm_obtain_state(vt), &at);
	if (!tb && at.row >= 0)
		return 0;
	if (s->state != VTSKIP_GROUND)
		out[n++] = 0x18;
	if (tb) {
		memcpy(out + n, "\033[r", 3);
		n += 3;
	}
	n += (size_t)snprintf(out + n, VTSIZE_FIX_MAX - n, "\033[%d;%dH",
			      (at.row < 0 ? 0 : at.row) + 1, at.col + 1);
	return n;
}
