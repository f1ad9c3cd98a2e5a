#!/usr/bin/env bash
# t09_background: sessionfs(7) "SESSIONS AND RUNS": `sleep 100 &` inside a run does not
# keep the run from ending, even though the sleep holds the run's stdout.
# rmdir of the session then ends the background sleeps.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/bg
check "mkdir sessions/bg" sfs_mkdir "$S"
assert_run_ok "warm-up run" "$S" 'true'

# unique arguments, so that the sleeps can be found in /proc by pid
m1="100.$$"
m2="101.$$"
m3="102.$$"
sfs_marker "$m1"
sfs_marker "$m2"
sfs_marker "$m3"

# BG-CMD LABEL EXPECTED-STDOUT
bg_case() {
	local t0 t1 rc
	t0=$(now_ms)
	sfs_run "$S" "$1" 10
	rc=$?
	t1=$(now_ms)
	if [ "$rc" -eq 124 ]; then
		fail "$2: the close of cmd returns within 2 s" "it did not return within 10 s"
		return
	fi
	assert_eq 0 "$rc" "$2: the close of cmd succeeds"
	assert_lt $((t1 - t0)) 2000 "$2: the close of cmd returns within 2 s" " ms"
	assert_file_eq "$S/exit" $'0\n' "$2: exit 0"
	assert_file_eq "$S/stdout" "$3" "$2: stdout"
}

bg_case "sleep $m1 &" "'sleep 100 &'" ''
bg_case "sleep $m2 & echo started" "'sleep 100 & echo started'" $'started\n'
bg_case "(sleep $m3; echo late) & echo started2" "'(sleep 100; echo late) &'" $'started2\n'

pids=$(sfs_pids_with_arg "$m1")
assert_true "the background sleep was started" "no process with argument $m1" test -n "$pids"

t0=$(now_ms)
assert_run_ok "a later run is not held up by the background sleeps" "$S" 'echo next' 10
t1=$(now_ms)
assert_lt $((t1 - t0)) 2000 "a later run ends at once" " ms"
assert_file_eq "$S/stdout" $'next\n' "a later run has its own output"

# deleting the session ends the background sleeps
if timeout 15 rmdir "$S"; then pass "rmdir of the session"; else fail "rmdir of the session" "failed or timed out"; fi
left=$(for m in "$m1" "$m2" "$m3"; do sfs_pids_with_arg "$m"; done)
assert_true "no background sleep is left after rmdir" "still running: $(echo "$left" | tr '\n' ' ')" \
	test -z "$left"

# whatever is left, by pid
for m in "$m1" "$m2" "$m3"; do sfs_kill_marker "$m"; done

sfs_done
