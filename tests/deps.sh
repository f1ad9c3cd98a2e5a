#!/usr/bin/env bash
# deps.sh - which file of the core library (sessions/, conf/) calls which
# other file's public functions, read from the compiled objects, and the
# checks of the layers (sessions/ARCHITECTURE.md): no two files call each
# other, directly or around a longer cycle; and calls and includes go
# only downwards, core <- conf <- session <- {tty, ctx} <- fs, with tty/
# and ctx/ apart from each other. sessions/sfsdrv/ is a program of its
# own (a bash builtin) and includes nothing of the daemon.
#
# Usage: tests/deps.sh [LIBSFSCORE]    (default: build/libsfscore.a)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:-$top/build/libsfscore.a}
[ -f "$lib" ] || { echo "deps.sh: no $lib (build first)" >&2; exit 2; }

# nm -A: "LIB:MEMBER:ADDR T name" for what a member defines, "LIB:MEMBER:
# U name" for what it uses; members are named like sessions_core_loop.c.o
# and conf_load.c.o (no file name of the library has a "_").
edges=$(nm -A "$lib" | awk '
	{
		split($1, p, ":"); f = p[2]
		sub(/.*\//, "", f); sub(/\.o$/, "", f); gsub(/_/, "/", f)
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

# layer PATH: the layer a file belongs to, and its rank: a file may use
# its own layer's files and those of a lower rank only.
layer() {
	case $1 in
	sessions/core/*) echo "core 0" ;;
	conf/*) echo "conf 1" ;;
	sessions/session/*) echo "session 2" ;;
	sessions/tty/*) echo "tty 3" ;;
	sessions/ctx/*) echo "ctx 3" ;;
	fs/*) echo "fs 4" ;;
	*) echo "? 9" ;;
	esac
}

# allowed FROM TO: FROM may call or include TO.
allowed() {
	local a b
	read -r -a a <<<"$(layer "$1")"
	read -r -a b <<<"$(layer "$2")"
	[ "${a[0]}" = "${b[0]}" ] || [ "${b[1]}" -lt "${a[1]}" ]
}

echo "$edges" | sed 's/^\([^ ]*\) \([^:]*\):/\1 -> \2:/'
status=0
if ! echo "$edges" | cut -d: -f1 | tsort >/dev/null 2>"${TMPDIR:-/tmp}/deps.$$"; then
	echo "FAIL: calls go around a cycle:" >&2
	cat "${TMPDIR:-/tmp}/deps.$$" >&2
	status=1
fi
rm -f "${TMPDIR:-/tmp}/deps.$$"

while read -r from to; do
	if ! allowed "$from" "$to"; then
		echo "FAIL: $from calls $to, against the layers" >&2
		status=1
	fi
done < <(echo "$edges" | cut -d: -f1)

cd "$top"
while IFS=: read -r file _ inc; do
	inc=${inc#*\"}
	inc=${inc%%\"*}
	case $inc in */*) ;; *) inc=$(dirname "$file")/$inc ;; esac # its own folder's
	if [ "$(layer "$inc")" = "? 9" ]; then
		echo "FAIL: $file includes $inc, not a path from the top" >&2
		status=1
	elif ! allowed "$file" "$inc"; then
		echo "FAIL: $file includes $inc, against the layers" >&2
		status=1
	fi
done < <(grep -Hn '^#include "' conf/*.[ch] fs/*.[ch] sessions/*/*.[ch] |
	grep -v '^sessions/sfsdrv/')
if grep -Hn '^#include "\(sessions\|conf\|fs\)/' sessions/sfsdrv/*.[ch]; then
	echo "FAIL: sessions/sfsdrv/ includes the daemon's headers" >&2
	status=1
fi
[ $status -ne 0 ] ||
	echo "ok: no cycle; calls and includes go down core <- conf <- session <- {tty, ctx} <- fs"
exit $status
