#!/usr/bin/env bash
# t21_kill: the session's ctl file: `kill` ends the running run at once
# (exit 143, state killed), also a command that ignores TERM (KILL after the
# grace period), `KILL` and `kill HUP` give 137 and 129; bad lines are
# EINVAL plus a line in `error`; `reset` gives a fresh shell with the same
# cwd and exported variables. Also: `kill -9 $$` inside a run, a heredoc
# whose terminator never comes, a run that closes its stdout and goes on.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/k
WD=$SFS_TMP/wd
mkdir -p "$WD"
check "mkdir sessions/k" sfs_mkdir "$S"
assert_run_ok "cd and export" "$S" "cd '$WD' && export KEEP=kept-$$"

# state_ok LABEL: the next run sees the same cwd and exported variable
state_ok() {
	assert_run_ok "$1: the next run" "$S" 'echo "$PWD|$KEEP"' 10
	assert_file_eq "$S/stdout" "$WD|kept-$$"$'\n' "$1: the next run has the same cwd and exported variable"
	assert_file_eq "$S/exit" $'0\n' "$1: the next run exits 0"
}

# kill_case LABEL MARK CMD CTL-LINE EXIT STATE MAX_MS [MIN_MS]: start CMD
# (which runs `sleep MARK`), wait until MARK runs, write CTL-LINE to ctl,
# check that the run ended within MAX_MS of that write with EXIT
kill_case() {
	local label=$1 mark=$2 cmd=$3 line=$4 want=$5 state=$6 max=$7 min=${8:-0}
	local w t0 rc el left
	sfs_marker "$mark"
	sfs_run_bg "$S" "$cmd" 20
	w=$SFS_BG
	if [ -n "$(sfs_wait_pids_with_arg "$mark" 5)" ]; then pass "$label: the command runs"; else
		fail "$label: the command runs" "no process with argument $mark within 5 s"
	fi
	t0=$(now_ms)
	sfs_write "$S/ctl" "$line"$'\n' 10
	rc=$?
	assert_eq 0 "$rc" "$label: echo '$line' > ctl succeeds"
	if sfs_wait_gone "$w" 10; then
		wait "$w"
		rc=$?
		el=$(($(now_ms) - t0))
		assert_eq 0 "$rc" "$label: the close of cmd succeeds"
		assert_lt "$el" "$max" "$label: the run ends within $max ms of the ctl write" " ms"
		if [ "$min" -gt 0 ]; then
			assert_true "$label: the run lasted the grace period" "it ended after $el ms" test "$el" -ge "$min"
		fi
	else
		fail "$label: the close of cmd succeeds" "still blocked 10 s after the ctl write"
	fi
	assert_file_eq "$S/exit" "$want"$'\n' "$label: exit $want"
	assert_file_match "$S/status" "^state $state\$" "$label: state $state"
	left=$(sfs_pids_with_arg "$mark")
	assert_true "$label: no sleep $mark is left" "still running: $(echo "$left" | tr '\n' ' ')" test -z "$left"
}

# 1. kill (TERM)
kill_case "kill" "701.$$" "sleep 701.$$" "kill" 143 killed 1500
assert_file_match "$S/status" '^signal 15$' "kill: status has signal 15"
assert_file_match "$S/result.json" '"exitCode":143' "kill: result.json has exitCode 143"
state_ok "kill"

# 2. a command that ignores TERM: KILL after the 2 s grace
kill_case "trap '' TERM" "702.$$" "trap '' TERM; sleep 702.$$" "kill" 143 killed 3000 1500
note "(the exit of a run killed with the default signal is 143 even when KILL was needed)"
assert_run_ok "trap - TERM" "$S" 'trap - TERM'
state_ok "trap '' TERM"

# 3. bare signal names and kill SIGNAL
kill_case "KILL" "703.$$" "sleep 703.$$" "KILL" 137 killed 1500
assert_file_match "$S/status" '^signal 9$' "KILL: status has signal 9"
state_ok "KILL"
kill_case "kill HUP" "704.$$" "sleep 704.$$" "kill HUP" 129 killed 1500
kill_case "TERM" "705.$$" "sleep 705.$$" "TERM" 143 killed 1500
state_ok "kill HUP and TERM"

# 4. kill -9 $$ inside a run
assert_run_ok "echo \$\$ before kill -9" "$S" 'echo $$'
sh1=$(timeout 5 cat "$S/stdout")
sfs_run "$S" 'kill -9 $$' 10
case $? in
124) fail "kill -9 \$\$: the run ends" "the close of cmd did not return within 10 s" ;;
*) pass "kill -9 \$\$: the run ends" ;;
esac
assert_file_eq "$S/exit" $'137\n' "kill -9 \$\$: exit 137"
state_ok "kill -9 \$\$"
assert_run_ok "echo \$\$ after kill -9" "$S" 'echo $$'
sh2=$(timeout 5 cat "$S/stdout")
assert_true "kill -9 \$\$: the next run has a fresh shell" "shell pid $sh1 before, $sh2 after" \
	test -n "$sh2" -a "$sh1" != "$sh2"

# 5. bad ctl lines: EINVAL and a line in error
for bad in 'bogus' 'kill NOSUCHSIG' 'timeout abc' 'timeout -5'; do
	n0=$(timeout 5 cat "$S/error" | wc -l)
	assert_write_errno EINVAL "ctl '$bad' gives EINVAL" "$S/ctl" "$bad"$'\n'
	n1=$(timeout 5 cat "$S/error" | wc -l)
	assert_true "ctl '$bad' adds a line to error" "error had $n0 lines, then $n1" test "$n1" -gt "$n0"
done
assert_file_match "$S/error" 'bogus' "the error file names the bad line 'bogus'"
assert_file_eq "$S/timeout" $'0\n' "bad timeout lines left the timeout at 0"
state_ok "bad ctl lines"

# 6. reset: a fresh shell, same cwd and exported variable
assert_run_ok "echo \$\$ before reset" "$S" 'echo $$; PLAIN=p'
sh1=$(timeout 5 cat "$S/stdout")
check "echo reset > ctl" sfs_write "$S/ctl" $'reset\n'
assert_run_ok "echo \$\$ after reset" "$S" 'echo "$$|$PWD|$KEEP"'
got=$(timeout 5 cat "$S/stdout")
sh2=${got%%|*}
assert_true "reset: a different shell pid" "shell pid $sh1 before, $sh2 after" \
	test -n "$sh2" -a "$sh1" != "$sh2"
assert_eq "$WD|kept-$$" "${got#*|}" "reset: same cwd and exported variable"
if [ -n "$sh1" ]; then
	assert_true "reset: the old shell (pid $sh1) is gone" "it still runs" sfs_wait_gone "$sh1" 3
fi

# 7. a heredoc whose terminator never comes
t0=$(now_ms)
sfs_run "$S" $'cat <<EOF\nline1\nline2' 10
rc=$?
el=$(($(now_ms) - t0))
assert_eq 0 "$rc" "unterminated heredoc: the close of cmd returns"
assert_lt "$el" 5000 "unterminated heredoc: finishes in < 5 s" " ms"
assert_file_eq "$S/stdout" $'line1\nline2\n' "unterminated heredoc: the body up to the end is its text"
state_ok "unterminated heredoc"

# 8. a run that closes its stdout and keeps running
t0=$(now_ms)
sfs_run "$S" 'exec >&-; sleep 1; echo done >&2' 10
rc=$?
el=$(($(now_ms) - t0))
assert_eq 0 "$rc" "closed stdout: the close of cmd returns"
assert_true "closed stdout: the run did not end at the close of stdout" "it ended after $el ms" \
	test "$el" -ge 900
assert_lt "$el" 5000 "closed stdout: it ends in < 5 s" " ms"
assert_file_eq "$S/stderr" $'done\n' "closed stdout: its stderr is kept"
assert_file_eq "$S/exit" $'0\n' "closed stdout: exit 0"
assert_run_ok "closed stdout: the next run prints" "$S" 'echo after'
assert_file_eq "$S/stdout" $'after\n' "closed stdout: the next run's stdout works"
state_ok "closed stdout"

# 9. kill while idle does no harm
sfs_write "$S/ctl" $'kill\n' 10
note "kill while idle: write status $?"
state_ok "kill while idle"

sfs_done
