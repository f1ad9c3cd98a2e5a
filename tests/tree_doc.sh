#!/usr/bin/env bash
# tree_doc.sh - holds sessionfs(7) against the rows of the mount. The
# build makes the page from fs/sessionfs.7.in, its tree (THE TREE) from
# the rows (sfs-treedump --man); the checkout keeps that page as
# fs/sessionfs.7, so that `man -l fs/sessionfs.7` works before a build.
# It fails when the page kept is not the page built (the .in or a row's
# doc changed, and `ninja -C BUILD man` was not run), when a row's name
# is not in the built page's tree, when a file that the notes below the
# tree name (their .TP tags) is no row's, and when a row's name is not
# in the mount's README (sfs-treedump --readme: a row without a doc is
# left out of it).
#
# Usage: tests/tree_doc.sh SFS-TREEDUMP KEPT-PAGE BUILT-PAGE
set -u
dump=$1
kept=$2
built=$3

rows=$("$dump") || { echo "tree_doc: $dump failed" >&2; exit 2; }
[ -s "$built" ] || { echo "tree_doc: no $built" >&2; exit 2; }
rc=0
if ! cmp -s "$kept" "$built"; then
	echo "not ok tree_doc: $kept is not the page built from its .in and the rows" \
		"(ninja -C BUILD man copies it there):"
	diff -u "$kept" "$built" | head -n 20
	rc=1
fi

# the section THE TREE, escapes made plain: the tree's block (between
# .nf and .fi) and the tags of the notes after it (.TP's next line)
section=$(awk '/^\.SH THE TREE/ { t = 1; next } t && /^\.SH/ { exit }
	t { print }' "$built" | sed -e 's/\\\[[a-z]*\]/ /g; s/\\f\[[A-Z]*\]//g')
block=$(awk '/^\.nf/ { t = 1; next } /^\.fi/ { exit } t' <<<"$section")
[ -n "$block" ] || { echo "tree_doc: no tree in $built's THE TREE" >&2; exit 2; }
tags=$(awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' <<<"$section" |
	sed -E 's/\(.*\)//g' | tr ', /' '\n\n\n' | grep -v -x -E '|NAME|N|default' | sort -u)

# every name a row has (the placeholder '*' of a lookup's entries aside)
names=$(tr '/' '\n' <<<"$rows" | grep -v '^\*\?$' | sort -u)
words=$(tr -c 'A-Za-z0-9._\n' '\n' <<<"$block" | sort -u)
for n in $names; do
	grep -qxF -- "$n" <<<"$words" ||
		{ echo "not ok tree_doc: the row $n is not in $built's tree"; rc=1; }
done
for w in $tags; do
	grep -qxF -- "$w" <<<"$names" ||
		{ echo "not ok tree_doc: $built's notes on the tree name $w, which no row has"; rc=1; }
done
readme=$("$dump" --readme) || { echo "tree_doc: $dump --readme failed" >&2; exit 2; }
rwords=$(tr -c 'A-Za-z0-9._\n' '\n' <<<"$readme" | sort -u)
for n in $names; do
	grep -qxF -- "$n" <<<"$rwords" ||
		{ echo "not ok tree_doc: the row $n is not in the README (no doc?)"; rc=1; }
done
[ $rc = 0 ] && echo "ok tree_doc: $kept is the page built; $(wc -w <<<"$names") row names, all in its tree"
exit $rc
