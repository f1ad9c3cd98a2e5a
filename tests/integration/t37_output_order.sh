#!/usr/bin/env bash
# t37_output_order: sessionfs(7) "SESSIONS AND RUNS", what output
# guarantees. A run printing 2,000 lines alternating between stdout and
# stderr (o1 e1 o2 e2 ...): output has exactly those 2,000 lines, each
# stream's lines in their own order (a guarantee), and the number of lines
# out of place against the ideal alternation is only noted (the order across
# two pipes is known only to the daemon's wakeups). With a 0.01 s pause
# between writes to different streams, output is in the exact write order.
#
# Environment: SFS_ORDER_RUNS: how many 2,000-line runs (default 3).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

RUNS=${SFS_ORDER_RUNS:-3}

sfs_mount

S=$MNT/sessions/order
check "mkdir sessions/order" sfs_mkdir "$S"

for i in $(seq 1000); do printf 'o%d\ne%d\n' "$i" "$i"; done >"$SFS_TMP/ideal"
grep '^o' "$SFS_TMP/ideal" >"$SFS_TMP/ideal.o"
grep '^e' "$SFS_TMP/ideal" >"$SFS_TMP/ideal.e"

total=0
for k in $(seq "$RUNS"); do
	assert_run_ok "run $k: 2,000 alternating lines" "$S" \
		'for i in $(seq 1000); do echo "o$i"; echo "e$i" >&2; done' 30
	check "run $k: read output" sfs_cat "$S/output" "$SFS_TMP/out"
	assert_eq 2000 "$(wc -l <"$SFS_TMP/out")" "run $k: output has 2,000 lines"
	assert_true "run $k: output has the same lines as the ideal" \
		"lines lost, added or changed" cmp -s <(sort "$SFS_TMP/out") <(sort "$SFS_TMP/ideal")
	assert_true "run $k: stdout lines of output in their order" \
		"stdout lines reordered" cmp -s <(grep '^o' "$SFS_TMP/out") "$SFS_TMP/ideal.o"
	assert_true "run $k: stderr lines of output in their order" \
		"stderr lines reordered" cmp -s <(grep '^e' "$SFS_TMP/out") "$SFS_TMP/ideal.e"
	assert_file_same "$S/stdout" "$SFS_TMP/ideal.o" "run $k: stdout exact"
	assert_file_same "$S/stderr" "$SFS_TMP/ideal.e" "run $k: stderr exact"
	# a line is out of place when it is not where the ideal alternation
	# has it (o<i> at 2i-1, e<i> at 2i); the distance is how far it is
	read -r bad far < <(awk '{ i = substr($1, 2) * 2 - ($1 ~ /^o/);
		d = NR > i ? NR - i : i - NR; if (d) n++; if (d > m) m = d }
		END { print n + 0, m + 0 }' "$SFS_TMP/out")
	note "run $k: $bad of 2000 lines out of place across streams, at most $far lines away"
	total=$((total + bad))
done
note "out of place across streams: $total lines in $RUNS runs of 2000"

# a pause between writes to different streams gives the exact order
assert_run_ok "run: 50 alternating lines with 0.01 s pauses" "$S" \
	'for i in $(seq 25); do echo "o$i"; sleep 0.01; echo "e$i" >&2; sleep 0.01; done' 30
check "paused: read output" sfs_cat "$S/output" "$SFS_TMP/out"
assert_true "paused: output in exact write order" \
	"$(tr '\n' ' ' <"$SFS_TMP/out" | head -c 300)" cmp -s "$SFS_TMP/out" <(head -n 50 "$SFS_TMP/ideal")

sfs_done
