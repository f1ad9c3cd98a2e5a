#!/usr/bin/env bash
# t20_timeout: sessionfs(7) "SESSIONS AND RUNS", timeouts: a session timeout
# of 1000 ms ends `sleep 30` in about 1 s with exit 124 and state timed-out;
# a process tree three deep with a setsid'd member is gone afterwards; the
# shell's cwd and exported variables survive; a busy loop of builtins is
# ended too; a named run's own timeout applies while the session's is 0,
# also when that run waited in the queue behind another one.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/to
WD=$SFS_TMP/wd
mkdir -p "$WD"
check "mkdir sessions/to" sfs_mkdir "$S"

# timed_run LABEL DIR CMD LIMIT_S: run CMD, set RC (writer status) and EL
# (ms until the close of cmd returned); fails LABEL if the close did not
# return within LIMIT_S
timed_run() {
	local t0
	t0=$(now_ms)
	sfs_run "$2" "$3" "$4"
	RC=$?
	EL=$(($(now_ms) - t0))
	if [ "$RC" -eq 124 ]; then
		fail "$1" "the close of cmd did not return within $4 s"
	else
		assert_eq 0 "$RC" "$1"
	fi
}

# wait_markers_gone SECONDS MARKS...: true once no process has any of MARKS
# as an argument; LEFT holds what was still there
wait_markers_gone() {
	local secs=$1 i m
	shift
	for ((i = 0; i <= secs * 10; i++)); do
		LEFT=
		for m in "$@"; do LEFT+=$(sfs_pids_with_arg "$m")' '; done
		LEFT=${LEFT// /}
		[ -z "$LEFT" ] && return 0
		sleep 0.1
	done
	LEFT=
	for m in "$@"; do LEFT+="$m: $(sfs_pids_with_arg "$m" | tr '\n' ' ') "; done
	return 1
}

# 1. state to keep, then the session timeout
assert_run_ok "cd and export before the timeout" "$S" "cd '$WD' && export KEEP=kept-$$ && PLAIN=plain"
check "echo 1000 > timeout" sfs_write "$S/timeout" $'1000\n'
assert_file_eq "$S/timeout" $'1000\n' "timeout reads back 1000"

# 2. sleep 30 under a 1000 ms timeout
timed_run "sleep 30 under timeout 1000: the close of cmd succeeds" "$S" 'sleep 30' 10
assert_lt "$EL" 3000 "sleep 30 under timeout 1000: close returns in < 3 s" " ms"
assert_true "sleep 30 under timeout 1000: the run lasted about 1 s" "it took only $EL ms" \
	test "$EL" -ge 900
assert_file_eq "$S/exit" $'124\n' "sleep 30 under timeout 1000: exit 124"
assert_file_match "$S/status" '^state timed-out$' "status has state timed-out"
assert_file_match "$S/status" '^exit 124$' "status has exit 124"
assert_file_match "$S/status" '^timeout_ms 1000$' "status has timeout_ms 1000"
assert_file_match "$S/result.json" '"exitCode":124' "result.json has exitCode 124"
assert_file_match "$S/result.json" '"success":false' "result.json has success false"

# 3. a process tree three deep, one member setsid'd
m1="501.$$" # setsid'd, child of the run's bash -c
m2="502.$$" # background grandchild
m3="503.$$" # foreground grandchild
for m in "$m1" "$m2" "$m3"; do sfs_marker "$m"; done
t0=$(now_ms)
sfs_run_bg "$S" "bash -c 'setsid sleep $m1 >/dev/null 2>&1 & bash -c \"sleep $m2 & sleep $m3\"'" 15
w=$SFS_BG
for m in "$m1" "$m2" "$m3"; do
	if [ -n "$(sfs_wait_pids_with_arg "$m" 1)" ]; then pass "tree: sleep $m runs"; else
		fail "tree: sleep $m runs" "no process with argument $m within 1 s"
	fi
done
p1=$(sfs_pids_with_arg "$m1" | head -n 1)
if [ -n "$p1" ]; then
	sid1=$(awk '{ sub(/.*\) /, ""); print $4 }' "/proc/$p1/stat" 2>/dev/null)
	assert_eq "$p1" "$sid1" "tree: sleep $m1 leads its own session (setsid worked)"
fi
if sfs_wait_gone "$w" 10; then
	wait "$w"
	rc=$?
	el=$(($(now_ms) - t0))
	assert_eq 0 "$rc" "tree: the close of cmd succeeds"
	assert_lt "$el" 3000 "tree: the close of cmd returns in < 3 s" " ms"
else
	fail "tree: the close of cmd succeeds" "still blocked 10 s after the start"
fi
assert_file_eq "$S/exit" $'124\n' "tree: exit 124"
assert_file_match "$S/status" '^state timed-out$' "tree: state timed-out"
t0=$(now_ms)
if wait_markers_gone 3 "$m1" "$m2" "$m3"; then
	pass "tree: no process of the tree is left"
	note "the tree was gone $(($(now_ms) - t0)) ms after the close returned"
else
	fail "tree: no process of the tree is left" "still running 3 s later: $LEFT"
fi

# 4. the shell's state survived both timeouts
assert_run_ok "run after the timeouts" "$S" 'echo "$PWD|$KEEP"'
assert_file_eq "$S/stdout" "$WD|kept-$$"$'\n' "cwd and exported variable survive the timeouts"
assert_file_eq "$S/exit" $'0\n' "run after the timeouts exits 0"
assert_file_eq "$S/cwd" "$WD"$'\n' "cwd file still gives the directory"

# 5. a busy loop of builtins (the shell itself is busy) is ended as well
timed_run "busy loop under timeout 1000: the close of cmd succeeds" "$S" 'while :; do :; done' 10
assert_lt "$EL" 3000 "busy loop under timeout 1000: close returns in < 3 s" " ms"
assert_file_eq "$S/exit" $'124\n' "busy loop under timeout 1000: exit 124"
assert_run_ok "run after the busy loop" "$S" 'echo "$PWD|$KEEP"'
assert_file_eq "$S/stdout" "$WD|kept-$$"$'\n' "busy loop: cwd and exported variable survive"

# 6. ctl's `timeout MS` sets the session's timeout; 0 turns it off
check "echo 'timeout 700' > ctl" sfs_write "$S/ctl" $'timeout 700\n'
assert_file_eq "$S/timeout" $'700\n' "ctl timeout 700: timeout reads 700"
check "echo 0 > timeout" sfs_write "$S/timeout" $'0\n'
assert_file_eq "$S/timeout" $'0\n' "timeout reads back 0"
timed_run "sleep 1.2 without a timeout: the close succeeds" "$S" 'sleep 1.2' 10
assert_file_eq "$S/exit" $'0\n' "sleep 1.2 without a timeout: exit 0"
assert_file_match "$S/status" '^state completed$' "sleep 1.2 without a timeout: state completed"

# 7. a named run's own timeout while the session's is 0
if sfs_mkdir "$S/runs/q" 2>"$SFS_TMP/mkdir.err"; then
	pass "mkdir runs/q"
	check "echo 500 > runs/q/timeout" sfs_write "$S/runs/q/timeout" $'500\n'
	assert_file_eq "$S/runs/q/timeout" $'500\n' "runs/q/timeout reads back 500"
	t0=$(now_ms)
	sfs_write "$S/runs/q/cmd" $'sleep 10\n' 15
	rc=$?
	el=$(($(now_ms) - t0))
	assert_eq 0 "$rc" "runs/q: the close of cmd succeeds"
	assert_lt "$el" 3000 "runs/q: sleep 10 under its own timeout 500 ends in < 3 s" " ms"
	assert_true "runs/q: the run lasted about 0.5 s" "it took only $el ms" test "$el" -ge 400
	assert_file_eq "$S/runs/q/exit" $'124\n' "runs/q: exit 124"
	assert_file_match "$S/runs/q/status" '^state timed-out$' "runs/q: state timed-out"
	assert_file_match "$S/runs/q/status" '^timeout_ms 500$' "runs/q: status has timeout_ms 500"
	assert_file_eq "$S/timeout" $'0\n' "the session's timeout is still 0"
else
	fail "mkdir runs/q" "$(head -c 200 "$SFS_TMP/mkdir.err")"
fi

# 8. a named run queued behind another one: its timeout counts from its
# own start, and it applies
sfs_run_bg "$S" 'sleep 2' 15
wfirst=$SFS_BG
t0=$(now_ms)
sleep 0.2
if sfs_mkdir "$S/runs/qq" 2>"$SFS_TMP/mkdir.err"; then
	pass "mkdir runs/qq"
	check "echo 300 > runs/qq/timeout" sfs_write "$S/runs/qq/timeout" $'300\n'
	sfs_write "$S/runs/qq/cmd" $'echo started; sleep 5\n' 15
	rc=$?
	el=$(($(now_ms) - t0))
	assert_eq 0 "$rc" "runs/qq (queued): the close of cmd succeeds"
	assert_true "runs/qq (queued): it ran after the sleep 2 run" "its close returned after $el ms" \
		test "$el" -ge 1900
	assert_lt "$el" 4000 "runs/qq (queued): ends about 0.3 s after its start (< 4 s in all)" " ms"
	assert_file_eq "$S/runs/qq/exit" $'124\n' "runs/qq (queued): exit 124"
	assert_file_eq "$S/runs/qq/stdout" $'started\n' "runs/qq (queued): it did start before its timeout"
	assert_file_match "$S/runs/qq/status" '^state timed-out$' "runs/qq (queued): state timed-out"
else
	fail "mkdir runs/qq" "$(head -c 200 "$SFS_TMP/mkdir.err")"
fi
if sfs_wait_gone "$wfirst" 5; then
	wait "$wfirst"
	assert_eq 0 $? "the sleep 2 run's close succeeds"
else
	fail "the sleep 2 run's close succeeds" "still blocked"
fi
# the sleep 2 run itself was not cut by the queued run's timeout
first=
for d in "$S"/runs/[0-9]*; do
	[ "$(timeout 5 cat "$d/cmd" 2>/dev/null)" = "sleep 2" ] && first=$d
done
if [ -n "$first" ]; then
	assert_file_eq "$first/exit" $'0\n' "the sleep 2 run ahead of runs/qq exits 0"
else
	fail "the sleep 2 run ahead of runs/qq exits 0" "no runs/N has cmd 'sleep 2'"
fi

assert_run_ok "a run after all this" "$S" 'echo "$PWD|$KEEP"'
assert_file_eq "$S/stdout" "$WD|kept-$$"$'\n' "state intact at the end"

for m in "$m1" "$m2" "$m3"; do sfs_kill_marker "$m"; done
sfs_done
