#!/usr/bin/env bash
# t10_concurrency: sessionfs(7) "SESSIONS AND RUNS": two writers on one session: their
# runs do not interleave, each close returns after its own run ended; named
# runs (runs/NAME) keep each writer's own results; two sessions run at the
# same time.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

SFS_READ_T=20
sfs_mount

S=$MNT/sessions/conc
check "mkdir sessions/conc" sfs_mkdir "$S"
assert_run_ok "warm-up run" "$S" 'true'

# MARK LOG: a run that logs its start and end and prints MARK 1000 times,
# with small pauses so that the two runs would overlap if they could
marker_script() {
	printf '%s\n' \
		"echo start-$1 >> '$2'" \
		"i=0; while [ \$i -lt 1000 ]; do i=\$((i+1)); echo $1; [ \$((i % 20)) -ne 0 ] || sleep 0.02; done" \
		"echo end-$1 >> '$2'"
}

# CMDFILE MARK LOG SCRIPTFILE: write SCRIPTFILE to CMDFILE in the
# background; log "closed-MARK" once the close returned; pid in SFS_BG
writer() {
	timeout -k 2 60 bash -c 'cat >"$1"; rc=$?; echo "closed-$2" >>"$3"; exit $rc' \
		_ "$1" "$2" "$3" <"$4" 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_BG=$!
	SFS_BG_PIDS+=("$SFS_BG")
}

# expected stdout of one run
for m in AAAA BBBB; do
	for ((i = 0; i < 1000; i++)); do echo "$m"; done >"$SFS_TMP/want.$m"
done

# LOG LABEL: the log shows start-X end-X start-Y end-Y, and each writer's
# close returned after its own run's end; prints the second mark
check_order() {
	local runs seq
	runs=$(grep -E '^(start|end)-' "$1" | tr '\n' ' ')
	case $runs in
	"start-AAAA end-AAAA start-BBBB end-BBBB ") seq=BBBB ;;
	"start-BBBB end-BBBB start-AAAA end-AAAA ") seq=AAAA ;;
	esac
	if [ -n "$seq" ]; then pass "$2: the two runs do not overlap"; else
		fail "$2: the two runs do not overlap" "log: $(tr '\n' ' ' <"$1")"
	fi
	local m e c
	for m in AAAA BBBB; do
		e=$(grep -n -x "end-$m" "$1" | cut -d: -f1)
		c=$(grep -n -x "closed-$m" "$1" | cut -d: -f1)
		if [ -n "$e" ] && [ -n "$c" ] && [ "$e" -lt "$c" ]; then
			pass "$2: writer $m's close returns after its own run ended"
		else
			fail "$2: writer $m's close returns after its own run ended" "log: $(tr '\n' ' ' <"$1")"
		fi
	done
	LAST_MARK=$seq
}

# 1. two writers on cmd
log=$SFS_TMP/order1.log
: >"$log"
marker_script AAAA "$log" >"$SFS_TMP/a.sh"
marker_script BBBB "$log" >"$SFS_TMP/b.sh"
writer "$S/cmd" AAAA "$log" "$SFS_TMP/a.sh"
pa=$SFS_BG
sleep 0.05
writer "$S/cmd" BBBB "$log" "$SFS_TMP/b.sh"
pb=$SFS_BG
wait "$pa"
ra=$?
wait "$pb"
rb=$?
assert_eq 0 "$ra" "cmd: writer AAAA's close succeeds"
assert_eq 0 "$rb" "cmd: writer BBBB's close succeeds"
LAST_MARK=
check_order "$log" "cmd"
if [ -n "$LAST_MARK" ]; then
	assert_file_same "$S/stdout" "$SFS_TMP/want.$LAST_MARK" "cmd: stdout is the last run's 1000 lines, unmixed"
fi
assert_file_eq "$S/exit" $'0\n' "cmd: exit 0"

# 2. two writers, each on a run it named
log=$SFS_TMP/order2.log
: >"$log"
marker_script AAAA "$log" >"$SFS_TMP/a.sh"
marker_script BBBB "$log" >"$SFS_TMP/b.sh"
if sfs_mkdir "$S/runs/ra" 2>"$SFS_TMP/mkdir.err" && sfs_mkdir "$S/runs/rb" 2>"$SFS_TMP/mkdir.err"; then
	pass "mkdir runs/ra and runs/rb"
	writer "$S/runs/ra/cmd" AAAA "$log" "$SFS_TMP/a.sh"
	pa=$SFS_BG
	writer "$S/runs/rb/cmd" BBBB "$log" "$SFS_TMP/b.sh"
	pb=$SFS_BG
	wait "$pa"
	ra=$?
	wait "$pb"
	rb=$?
	assert_eq 0 "$ra" "runs/ra: writer's close succeeds"
	assert_eq 0 "$rb" "runs/rb: writer's close succeeds"
	check_order "$log" "runs/NAME"
	assert_file_same "$S/runs/ra/stdout" "$SFS_TMP/want.AAAA" "runs/ra/stdout is its own 1000 lines"
	assert_file_same "$S/runs/rb/stdout" "$SFS_TMP/want.BBBB" "runs/rb/stdout is its own 1000 lines"
	assert_file_eq "$S/runs/ra/exit" $'0\n' "runs/ra/exit is 0"
	assert_file_eq "$S/runs/rb/exit" $'0\n' "runs/rb/exit is 0"
else
	fail "mkdir runs/ra and runs/rb" "$(head -c 200 "$SFS_TMP/mkdir.err")"
fi

# 3. two sessions in parallel
P1=$MNT/sessions/par1
P2=$MNT/sessions/par2
check "mkdir sessions/par1" sfs_mkdir "$P1"
check "mkdir sessions/par2" sfs_mkdir "$P2"
sfs_run "$P1" 'true'
sfs_run "$P2" 'true'
t0=$(now_ms)
sfs_run_bg "$P1" 'sleep 1' 10
p1=$SFS_BG
sfs_run_bg "$P2" 'sleep 1' 10
p2=$SFS_BG
wait "$p1"
r1=$?
wait "$p2"
r2=$?
t1=$(now_ms)
assert_eq 0 "$r1" "par1: sleep 1 close succeeds"
assert_eq 0 "$r2" "par2: sleep 1 close succeeds"
assert_lt $((t1 - t0)) 1800 "two sessions' sleep 1 run in parallel (< 1.8 s in all)" " ms"
assert_true "the runs really slept" "took only $((t1 - t0)) ms" test $((t1 - t0)) -ge 950
assert_file_eq "$P1/exit" $'0\n' "par1: exit 0"
assert_file_eq "$P2/exit" $'0\n' "par2: exit 0"

sfs_done
