#!/usr/bin/env bash
# t62_kill_grace: sessionfs(7) "PROCESSES" and kill and timeout: a kill's
# grace (TERM, then KILL after kill_grace_ms) holds for the whole tree
# even when the leader dies of TERM at once. A procs/ command `bash t.sh`
# whose script traps TERM to clean up gets `ctl kill`: its trap runs (the
# file it writes has "cleaned"), the process ends once its tree is gone
# (>= the trap's 0.5 s, exit 143: TERM ended the leader, nothing needed
# KILL). A script that ignores TERM gets KILL after the grace, and the
# exit is 137 (signal 9), also at once after a KILL written during the
# grace. rmdir and the root's killall give the same
# grace. A session run `bash t.sh` killed through the session's ctl runs
# its trap too.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/g
P=$S/procs
check "mkdir sessions/g" sfs_mkdir "$S"

# script NAME MARK HANDLER: writes $SFS_TMP/NAME.sh, a script whose TERM
# trap is HANDLER and which waits for `sleep MARK` in the background
script() {
	printf 'trap %s TERM\nsleep %s & wait\n' "$3" "$2" >"$SFS_TMP/$1.sh"
	sfs_marker "$2"
}

# cleanup_trap FILE: the trap of the issue: half a second of cleanup, then
# a line in FILE and exit 0
cleanup_trap() { printf '%q' "sleep 0.5; echo cleaned > $1; exit 0"; }

# kill_proc LABEL NAME MARK HOW: start procs/NAME running the script
# NAME.sh, wait for its `sleep MARK`, end it with HOW (ctl: `echo kill >
# ctl`; ctl-then-KILL: kill, then KILL; rmdir; killall: the root's ctl),
# set EL to the ms from that until the exit (or rmdir, killall) returned
# and GOT to the exit read
kill_proc() {
	local label=$1 name=$2 mark=$3 how=$4 t0
	GOT= EL=
	check "$label: mkdir procs/$name" sfs_mkdir "$P/$name" || return 1
	check "$label: start bash $name.sh" sfs_write "$P/$name/cmd" "bash $SFS_TMP/$name.sh"$'\n' 10 || return 1
	if [ -z "$(sfs_wait_pids_with_arg "$mark" 10)" ]; then
		fail "$label: it runs" "no process with argument $mark within 10 s"
		return 1
	fi
	pass "$label: it runs"
	t0=$(now_ms)
	case $how in
	ctl)
		check "$label: echo kill > ctl" sfs_write "$P/$name/ctl" $'kill\n' 10
		GOT=$(timeout 15 cat "$P/$name/exit")
		;;
	ctl-then-KILL)
		check "$label: echo kill > ctl" sfs_write "$P/$name/ctl" $'kill\n' 10
		check "$label: echo KILL > ctl" sfs_write "$P/$name/ctl" $'KILL\n' 10
		GOT=$(timeout 15 cat "$P/$name/exit")
		;;
	rmdir) check "$label: rmdir procs/$name" timeout 15 rmdir "$P/$name" ;;
	killall) check "$label: echo killall > ctl" sfs_write "$MNT/ctl" $'killall\n' 15 ;;
	esac
	EL=$(($(now_ms) - t0))
}

# no_mark_left LABEL MARK: no `sleep MARK` runs any more
no_mark_left() {
	local left
	left=$(sfs_pids_with_arg "$2")
	assert_true "$1: no sleep $2 is left" "still running: $(echo "$left" | tr '\n' ' ')" test -z "$left"
}

# 1. ctl kill of `bash t.sh` whose trap cleans up: the trap runs
F1=$SFS_TMP/f1
script t1 "731.$$" "$(cleanup_trap "$F1")"
if kill_proc "trap cleans up" t1 "731.$$" ctl; then
	assert_eq 143 "$GOT" "trap cleans up: exit 143 (TERM ended the leader)"
	assert_true "trap cleans up: the exit waited for the trap (>= 400 ms)" \
		"it came after $EL ms" test "$EL" -ge 400
	assert_true "trap cleans up: the trap ran" "$F1: $(cat "$F1" 2>&1)" \
		test "$(cat "$F1" 2>/dev/null)" = cleaned
	assert_file_match "$P/t1/status" '^state killed$' "trap cleans up: state killed"
	assert_file_match "$P/t1/status" '^signal 15$' "trap cleans up: signal 15"
	no_mark_left "trap cleans up" "731.$$"
fi

# 2. a script that ignores TERM: KILL after the grace (2 s), exit 137
script t2 "732.$$" "''"
if kill_proc "TERM ignored" t2 "732.$$" ctl; then
	assert_eq 137 "$GOT" "TERM ignored: exit 137 (KILL ended the tree)"
	assert_true "TERM ignored: the grace was given (>= 1500 ms)" \
		"it ended after $EL ms" test "$EL" -ge 1500
	assert_file_match "$P/t2/status" '^signal 9$' "TERM ignored: signal 9"
	assert_file_match "$S/error" 'procs/t2 outlived SIGTERM: SIGKILL' \
		"TERM ignored: error says KILL was needed"
	no_mark_left "TERM ignored" "732.$$"
fi

# 2b. KILL written during the grace ends what is left at once: exit 137
script t2b "736.$$" "''"
if kill_proc "KILL in the grace" t2b "736.$$" ctl-then-KILL; then
	assert_eq 137 "$GOT" "KILL in the grace: exit 137"
	assert_lt "$EL" 1800 "KILL in the grace: it ended before the 2 s grace" " ms"
	no_mark_left "KILL in the grace" "736.$$"
fi

# 3. rmdir gives the same grace, and returns once the tree is gone
F3=$SFS_TMP/f3
script t3 "733.$$" "$(cleanup_trap "$F3")"
if kill_proc "rmdir" t3 "733.$$" rmdir; then
	assert_true "rmdir: it returned after the trap (>= 400 ms)" \
		"it returned after $EL ms" test "$EL" -ge 400
	assert_true "rmdir: the trap ran" "$F3: $(cat "$F3" 2>&1)" \
		test "$(cat "$F3" 2>/dev/null)" = cleaned
	assert_true "rmdir: procs/t3 is gone" "it is still there" test ! -e "$P/t3"
	no_mark_left "rmdir" "733.$$"
fi

# 4. so does the root's killall
F4=$SFS_TMP/f4
script t4 "734.$$" "$(cleanup_trap "$F4")"
if kill_proc "killall" t4 "734.$$" killall; then
	assert_true "killall: it returned after the trap (>= 400 ms)" \
		"it returned after $EL ms" test "$EL" -ge 400
	assert_true "killall: the trap ran" "$F4: $(cat "$F4" 2>&1)" \
		test "$(cat "$F4" 2>/dev/null)" = cleaned
	assert_file_eq "$P/t4/exit" $'143\n' "killall: exit 143"
	no_mark_left "killall" "734.$$"
fi

# 5. a session run `bash t.sh` killed through the session's ctl
F5=$SFS_TMP/f5
script t5 "735.$$" "$(cleanup_trap "$F5")"
sfs_run_bg "$S" "bash $SFS_TMP/t5.sh" 20
w=$SFS_BG
if [ -n "$(sfs_wait_pids_with_arg "735.$$" 10)" ]; then
	pass "session run: it runs"
	t0=$(now_ms)
	check "session run: echo kill > ctl" sfs_write "$S/ctl" $'kill\n' 10
	if sfs_wait_gone "$w" 15; then
		wait "$w"
		assert_eq 0 "$?" "session run: the close of cmd succeeds"
		el=$(($(now_ms) - t0))
		assert_true "session run: it ended after the trap (>= 400 ms)" \
			"it ended after $el ms" test "$el" -ge 400
	else
		fail "session run: the close of cmd succeeds" "still blocked 15 s after the kill"
	fi
	assert_true "session run: the trap ran" "$F5: $(cat "$F5" 2>&1)" \
		test "$(cat "$F5" 2>/dev/null)" = cleaned
	assert_file_eq "$S/exit" $'143\n' "session run: exit 143"
	no_mark_left "session run" "735.$$"
else
	fail "session run: it runs" "no process with argument 735.$$ within 10 s"
fi

sfs_done
