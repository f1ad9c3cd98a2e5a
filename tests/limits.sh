#!/usr/bin/env bash
# limits.sh: the size rules of the code, checked on every test run: no
# C file of fs/, sessions/ or conf/ over 700 lines, no function there over
# 60 lines (from the line of its name to its closing brace), and no
# switch on file types in fs/ops.c (the family tables carry that).
# Prints one line per breach and "limits: N passed, M failed"; exits 1 on
# a breach.
#
# Usage: tests/limits.sh   (from anywhere)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
bad=0
good=0

# every C file at any depth (sessions/ has a folder per layer, and
# sessions/sfsdrv/ its own)
while read -r f; do
	n=$(wc -l <"$f")
	if [ "$n" -gt 700 ]; then
		echo "not ok limits: $f has $n lines (at most 700)"
		bad=$((bad + 1))
	else
		good=$((good + 1))
	fi
	# a function starts at a line beginning with a name and "(" at
	# column 0 and ends at the next "}" at column 0
	while read -r len name; do
		echo "not ok limits: $f: $name has $len lines (at most 60)"
		bad=$((bad + 1))
	done < <(awk '
		/^[A-Za-z_][A-Za-z0-9_ \t\*]*\(/ && !/;[ \t]*$/ && !start {
			start = NR; body = 0; name = $0; sub(/\(.*/, "", name)
			n = split(name, w, /[ \t\*]+/); name = w[n]
		}
		start && !body && /^\{/ { body = 1 }
		start && !body && /;[ \t]*$/ { start = 0 } # a prototype
		/^}/ && start { if (NR - start + 1 > 60) print NR - start + 1, name; start = 0 }
	' "$f")
done < <(find fs sessions conf -name '*.[ch]' | sort)

if [ -e fs/ops.c ] && grep -q 'case FT_' fs/ops.c; then
	echo "not ok limits: fs/ops.c switches on file types ($(grep -c 'case FT_' fs/ops.c) case FT_ labels)"
	bad=$((bad + 1))
else
	good=$((good + 1))
fi
echo "limits: $good passed, $bad failed"
[ "$bad" -eq 0 ]
