#!/usr/bin/env bash
# tree_doc.sh - holds the tree of sessionfs(7) ("THE TREE") against the
# rows of the mount (the paths sfs-treedump prints from them): it fails
# when a row's name is nowhere in the man page's tree, or when the first
# column of that tree names a file that no row has; and when a row's name
# is not in the mount's README (sfs-treedump --readme: a row without a
# doc is left out of it).
#
# Usage: tests/tree_doc.sh SFS-TREEDUMP MANPAGE
set -u
dump=$1
man=$2

rows=$("$dump") || { echo "tree_doc: $dump failed" >&2; exit 2; }
# the block between .SH THE TREE's .nf and .fi, escapes made plain
block=$(awk '/^\.SH THE TREE/ { t = 1 } t && /^\.fi/ { exit }
	t && !/^\./ && !/^\\f/ { print }' "$man" | sed -e 's/\\\[[a-z]*\]/ /g')
[ -n "$block" ] || { echo "tree_doc: no THE TREE block in $man" >&2; exit 2; }

# every name a row has (the placeholder '*' of a lookup's entries aside)
names=$(tr '/' '\n' <<<"$rows" | grep -v '^\*\?$' | sort -u)
# the first column of each entry line (indented less than the texts),
# cut at its first run of two blanks; NAME, ID and N stand for a lookup's
# names, MOUNT for the mount point, default for the default session
col1=$(grep -E '^ {0,10}[^ ]' <<<"$block" | sed -E 's/^ *//; s/  .*//' |
	tr ' /' '\n\n' | grep -v -x -E '|NAME|ID|N|MOUNT|default' | sort -u)
words=$(tr -c 'A-Za-z0-9._\n' '\n' <<<"$block" | sort -u)

rc=0
for n in $names; do
	grep -qxF -- "$n" <<<"$words" ||
		{ echo "not ok tree_doc: the row $n is not in $man's tree"; rc=1; }
done
for w in $col1; do
	grep -qxF -- "$w" <<<"$names" ||
		{ echo "not ok tree_doc: $man's tree names $w, which no row has"; rc=1; }
done
readme=$("$dump" --readme) || { echo "tree_doc: $dump --readme failed" >&2; exit 2; }
rwords=$(tr -c 'A-Za-z0-9._\n' '\n' <<<"$readme" | sort -u)
for n in $names; do
	grep -qxF -- "$n" <<<"$rwords" ||
		{ echo "not ok tree_doc: the row $n is not in the README (no doc?)"; rc=1; }
done
[ $rc = 0 ] && echo "ok tree_doc: $(wc -w <<<"$names") row names, all in the man page's tree"
exit $rc
