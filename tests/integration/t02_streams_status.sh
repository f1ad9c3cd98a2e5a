#!/usr/bin/env bash
# t02_streams_status: sessionfs(7) "SESSIONS AND RUNS": stdout only, stderr only, both
# (output interleaves them in the order the daemon read them); false gives 1; an unknown
# command gives 127 and "not found"; status and result.json describe the run.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/streams
check "mkdir sessions/streams" sfs_mkdir "$S"

assert_run_ok "run: stdout only" "$S" 'echo out'
assert_file_eq "$S/stdout" $'out\n' "stdout only: stdout"
assert_file_eq "$S/stderr" "" "stdout only: stderr empty"
assert_file_eq "$S/output" $'out\n' "stdout only: output"
assert_file_eq "$S/exit" $'0\n' "stdout only: exit 0"

assert_run_ok "run: stderr only" "$S" 'echo err >&2'
assert_file_eq "$S/stdout" "" "stderr only: stdout empty"
assert_file_eq "$S/stderr" $'err\n' "stderr only: stderr"
assert_file_eq "$S/output" $'err\n' "stderr only: output"
assert_file_eq "$S/exit" $'0\n' "stderr only: exit 0"

# pauses make the arrival order unambiguous
assert_run_ok "run: both" "$S" 'echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; sleep 0.2; printf four >&2'
assert_file_eq "$S/stdout" $'one\nthree\n' "both: stdout"
assert_file_eq "$S/stderr" $'two\nfour' "both: stderr"
assert_file_eq "$S/output" $'one\ntwo\nthree\nfour' "both: output in arrival order"

sfs_run "$S" 'false'
assert_file_eq "$S/exit" $'1\n' "false gives exit 1"
assert_file_match "$S/status" '^exit 1$' "status has 'exit 1' after false"
for k in state run pid started duration_ms exit signal timeout_ms; do
	assert_file_match "$S/status" "^$k( |\$)" "status has key $k"
done
assert_file_match "$S/result.json" '"exitCode"[[:space:]]*:[[:space:]]*1([^0-9]|$)' \
	'result.json of false: "exitCode":1'
assert_file_match "$S/result.json" '"success"[[:space:]]*:[[:space:]]*false' \
	'result.json of false: "success":false'

sfs_run "$S" 'nonexistent_cmd_xyz'
assert_file_eq "$S/exit" $'127\n' "unknown command gives exit 127"
assert_file_match "$S/stderr" 'not found' 'unknown command: stderr says "not found"'
assert_file_eq "$S/stdout" "" "unknown command: stdout empty"
assert_file_match "$S/result.json" '"exitCode"[[:space:]]*:[[:space:]]*127([^0-9]|$)' \
	'result.json: "exitCode":127'
assert_file_match "$S/result.json" '"sessionId"[[:space:]]*:[[:space:]]*"streams"' \
	'result.json: "sessionId":"streams"'
assert_file_match "$S/result.json" '"command"[[:space:]]*:[[:space:]]*"nonexistent_cmd_xyz' \
	'result.json: "command" holds the command'
assert_file_match "$S/result.json" '"stderr"[[:space:]]*:[[:space:]]*"[^"]*not found' \
	'result.json: "stderr" holds the error'
for k in stdout duration timestamp; do
	assert_file_match "$S/result.json" "\"$k\"[[:space:]]*:" "result.json has \"$k\""
done

assert_run_ok "run: echo ok after failures" "$S" 'echo ok'
assert_file_eq "$S/exit" $'0\n' "exit 0 after failures"
assert_file_match "$S/result.json" '"success"[[:space:]]*:[[:space:]]*true' \
	'result.json of echo: "success":true'
assert_file_match "$S/result.json" '"stdout"[[:space:]]*:[[:space:]]*"ok\\n"' \
	'result.json of echo: "stdout":"ok\n"'

# status size is the byte count (snapshot files report their size)
sz=$(timeout 10 stat -c %s "$S/status")
n=$(timeout 10 cat "$S/status" | wc -c)
assert_eq "$n" "$sz" "stat size of status equals its byte count"

sfs_done
