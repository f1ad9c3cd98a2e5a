#!/usr/bin/env bash
# t06_stdin: sessionfs(7) "SESSIONS AND RUNS": a run's stdin is empty: cat, read, grep
# and friends end at once, and they never swallow the command text.
# Each case has its own session, so that a hang cannot spill over.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

i=0
# CMD EXPECTED-EXIT EXPECTED-STDOUT
stdin_case() {
	local cmd=$1 want_exit=$2 want_out=$3 S rc t0 t1 l
	l="'${cmd//$'\n'/; }'"
	i=$((i + 1))
	S=$MNT/sessions/stdin$i
	if ! sfs_mkdir "$S"; then
		fail "mkdir sessions/stdin$i" "mkdir failed"
		return
	fi
	t0=$(now_ms)
	sfs_run "$S" "$cmd" 10
	rc=$?
	t1=$(now_ms)
	if [ "$rc" -eq 124 ]; then
		fail "$l ends at once" "the run did not end within 10 s (stdin not empty?)"
		return
	fi
	assert_lt $((t1 - t0)) 3000 "$l ends at once" " ms"
	assert_file_eq "$S/exit" "$want_exit"$'\n' "$l exit $want_exit"
	assert_file_eq "$S/stdout" "$want_out" "$l stdout"
	assert_run_ok "$l: a later run" "$S" 'echo after' 10
	assert_file_eq "$S/stdout" $'after\n' "$l: the next run works"
}

stdin_case 'cat' 0 ''
stdin_case 'read x' 1 ''
stdin_case 'grep x' 1 ''
stdin_case 'wc -c' 0 $'0\n'
stdin_case 'head -c 1' 0 ''
# if stdin were the command stream, read would eat the next line
stdin_case $'read x\necho "got[$x]"' 0 $'got[]\n'
stdin_case $'cat\necho "still here"' 0 $'still here\n'

sfs_done
