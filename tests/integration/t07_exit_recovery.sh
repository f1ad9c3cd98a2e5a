#!/usr/bin/env bash
# t07_exit_recovery: sessionfs(7) "SESSIONS AND RUNS": a command that ends the shell
# (exit 42, set -e then false, exec true, kill -9 $$) ends that run with the
# shell's status; the next run works in the same cwd with the same exported
# variables.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/recover
check "mkdir sessions/recover" sfs_mkdir "$S"

# DIR VALUE CMD EXIT: set up cwd and an export, end the shell with CMD,
# then check the status and that the state survived
recovery_case() {
	local dir=$1 val=$2 cmd=$3 want=$4
	assert_run_ok "'$cmd': set up cd $dir, export KEEP=$val" "$S" "cd $dir && export KEEP=$val"
	sfs_run "$S" "$cmd" 20
	case $? in
	124) fail "'$cmd': the run ends" "the close of cmd did not return within 20 s" ;;
	*) pass "'$cmd': the run ends" ;;
	esac
	assert_file_eq "$S/exit" "$want"$'\n' "'$cmd' gives exit $want"
	assert_run_ok "'$cmd': the next run" "$S" 'echo "$PWD $KEEP"'
	assert_file_eq "$S/stdout" "$dir $val"$'\n' "'$cmd': next run has the same cwd and exports"
	assert_file_eq "$S/exit" $'0\n' "'$cmd': next run exits 0"
	assert_file_eq "$S/cwd" "$dir"$'\n' "'$cmd': cwd still $dir"
}

recovery_case /tmp one 'exit 42' 42
recovery_case /usr two 'set -e; false; echo not reached' 1
recovery_case /var three 'exec true' 0
recovery_case /etc four 'kill -9 $$' 137

# a plain failure does not end the shell: plain variables survive it
assert_run_ok "set a plain variable" "$S" 'PLAIN=p'
sfs_run "$S" 'false'
assert_run_ok "run after false" "$S" 'echo "${PLAIN-lost}"'
assert_file_eq "$S/stdout" $'p\n' "a plain failure keeps plain variables"

sfs_done
