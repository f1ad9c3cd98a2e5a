#!/usr/bin/env bash
# t03_state: sessionfs(7) "SESSIONS AND RUNS": cd, export, plain variables and functions
# persist from one run to the next; cwd reads (and writes) the directory.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/state
check "mkdir sessions/state" sfs_mkdir "$S"

assert_run_ok "run: cd /tmp" "$S" 'cd /tmp'
assert_run_ok "run: pwd" "$S" 'pwd'
assert_file_eq "$S/stdout" $'/tmp\n' "pwd after cd /tmp gives /tmp"
assert_file_eq "$S/cwd" $'/tmp\n' "cwd gives /tmp"

assert_run_ok "run: export A=1" "$S" 'export A=1'
assert_run_ok "run: echo \$A" "$S" 'echo $A'
assert_file_eq "$S/stdout" $'1\n' "exported A is 1 in the next run"

assert_run_ok "run: B=2" "$S" 'B=2'
assert_run_ok "run: echo \$B" "$S" 'echo "$B"'
assert_file_eq "$S/stdout" $'2\n' "plain B is 2 in the next run"

assert_run_ok "run: define a function" "$S" 'greet() { echo "hello, $1"; }'
assert_run_ok "run: call the function" "$S" 'greet world'
assert_file_eq "$S/stdout" $'hello, world\n' "function defined in one run works in the next"
assert_file_eq "$S/exit" $'0\n' "function call exit 0"

# all of it still holds a few runs later, together
assert_run_ok "run: everything together" "$S" 'echo "$PWD $A $B"; greet again'
assert_file_eq "$S/stdout" $'/tmp 1 2\nhello, again\n' "state persists across several runs"

# writing cwd changes the directory of the next run
if sfs_write "$S/cwd" $'/var\n'; then pass "write /var to cwd"; else
	fail "write /var to cwd" "$(head -c 200 "$SFS_TMP/write.err")"
fi
assert_file_eq "$S/cwd" $'/var\n' "cwd gives /var after writing it"
assert_run_ok "run: pwd after writing cwd" "$S" 'pwd'
assert_file_eq "$S/stdout" $'/var\n' "pwd gives /var after writing cwd"

sfs_done
