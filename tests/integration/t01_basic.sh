#!/usr/bin/env bash
# t01_basic: sessionfs(7) "SESSIONS AND RUNS": echo hi; exit 0; cmd reads back; exit is
# empty before the first run and blocks while a run is active.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/basic
check "mkdir sessions/basic" sfs_mkdir "$S"
assert_file_eq "$S/exit" "" "exit is empty before the first run"

check "echo 'echo hi' > cmd" sfs_sh "$S" "echo 'echo hi' > cmd"
assert_file_eq "$S/stdout" $'hi\n' "cat stdout gives hi"
assert_file_eq "$S/exit" $'0\n' "cat exit gives 0"
assert_file_eq "$S/stderr" "" "stderr is empty"
assert_file_eq "$S/output" $'hi\n' "output gives hi"
assert_file_eq "$S/cmd" $'echo hi\n' "cat cmd gives the last command text"

# a second run replaces the first one's results
assert_run_ok "second run" "$S" 'echo second'
assert_file_eq "$S/stdout" $'second\n' "stdout holds only the latest run"

# exit blocks while a run is active, then gives its status
sfs_run_bg "$S" 'sleep 1; false' 10
bg=$SFS_BG
sleep 0.3
t0=$(now_ms)
assert_file_eq "$S/exit" $'1\n' "exit read during a run gives that run's status"
t1=$(now_ms)
assert_true "exit read blocks until the run ends" "returned after $((t1 - t0)) ms" \
	test $((t1 - t0)) -ge 400
if sfs_wait_gone "$bg" 5; then
	wait "$bg"
	assert_eq 0 $? "the background writer's close succeeded"
else
	fail "the background writer's close succeeded" "still blocked 5 s after the run"
fi

sfs_done
