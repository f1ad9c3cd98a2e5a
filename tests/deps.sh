#!/usr/bin/env bash
# deps.sh - which file of the core library (sessions/, conf/) calls which
# other file's public functions, read from the compiled objects, and a
# check that no two of them call each other, directly or around a longer
# cycle; also that sessions/ never includes fs/.
#
# Usage: tests/deps.sh [LIBSFSCORE]    (default: build/libsfscore.a)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$top/build/libsfscore.a}
[ -f "$lib" ] || { echo "deps.sh: no $lib (build first)" >&2; exit 2; }

# nm -A: "LIB:MEMBER:ADDR T name" for what a member defines, "LIB:MEMBER:
# U name" for what it uses; members are named like sessions_core_loop.c.o
# (no file name of the library has a "_").
edges=$(nm -A "$lib" | awk '
	{
		split($1, p, ":"); f = p[2]
		sub(/.*\//, "", f); sub(/\.o$/, "", f); sub(/_/, "/", f)
		if ($2 == "T") def[$3] = f
		else if ($2 == "U") { n++; uf[n] = f; us[n] = $3 }
	}
	END {
		for (i = 1; i <= n; i++) {
			g = def[us[i]]
			if (g != "" && g != uf[i]) calls[uf[i] " " g] = calls[uf[i] " " g] " " us[i]
		}
		for (e in calls) print e ":" calls[e]
	}' | sort)

echo "$edges" | sed 's/^\([^ ]*\) \([^:]*\):/\1 -> \2:/'
status=0
if ! echo "$edges" | cut -d: -f1 | tsort >/dev/null 2>"${TMPDIR:-/tmp}/deps.$$"; then
	echo "FAIL: calls go around a cycle:" >&2
	cat "${TMPDIR:-/tmp}/deps.$$" >&2
	status=1
fi
rm -f "${TMPDIR:-/tmp}/deps.$$"
if grep -l '#include "fs/' "$top"/sessions/*/*.[ch]; then
	echo "FAIL: sessions/ includes fs/" >&2
	status=1
fi
[ $status -ne 0 ] || echo "ok: no cycle; sessions/ does not include fs/"
exit $status
