#!/usr/bin/env bash
# t11_rmdir: sessionfs(7) "SESSIONS AND RUNS": rmdir of a session whose command is still
# running returns (within 10 s), and no process of that session is left:
# not the command, not the session's shell, not a setsid'd child, not a
# background process started through procs/.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

# LABEL DIR WRITER-PID SHELL-PID MARKS...: rmdir DIR and check that nothing
# is left
rmdir_check() {
	local label=$1 dir=$2 wpid=$3 shpid=$4 t0 t1 rc m left=
	shift 4
	t0=$(now_ms)
	timeout -k 2 20 rmdir "$dir"
	rc=$?
	t1=$(now_ms)
	if [ "$rc" -eq 124 ]; then
		fail "$label: rmdir returns within 10 s" "rmdir did not return within 20 s"
	else
		assert_eq 0 "$rc" "$label: rmdir succeeds"
		assert_lt $((t1 - t0)) 10000 "$label: rmdir returns within 10 s" " ms"
	fi
	# right after rmdir returned: no process of the session may remain
	for m in "$@"; do
		left+=$(sfs_pids_with_arg "$m")
	done
	assert_true "$label: no process of the session is left after rmdir" \
		"still running: $(echo "$left" | tr '\n' ' ')" test -z "$left"
	if [ -n "$shpid" ]; then
		assert_true "$label: the session's shell (pid $shpid) is gone" \
			"pid $shpid still runs: $({ tr '\0' ' ' <"/proc/$shpid/cmdline"; } 2>/dev/null)" \
			sfs_wait_gone "$shpid" 0
	fi
	assert_true "$label: the session directory is gone" "it still exists" \
		timeout 5 test ! -e "$dir"
	local ls_s
	ls_s=$(timeout 10 ls "$MNT/sessions")
	assert_true "$label: sessions/ no longer lists it" "ls gave: $(echo "$ls_s" | tr '\n' ' ')" \
		test -z "$(grep -xF -- "${dir##*/}" <<<"$ls_s")"
	# the writer blocked in close(cmd) gets its answer
	assert_true "$label: the blocked close of cmd returns" "writer still blocked 5 s later" \
		sfs_wait_gone "$wpid" 5
}

# 1. a running command
S=$MNT/sessions/rm1
m1="301.$$"
sfs_marker "$m1"
check "mkdir sessions/rm1" sfs_mkdir "$S"
sfs_run_bg "$S" "sleep $m1" 60
w1=$SFS_BG
pids=$(sfs_wait_pids_with_arg "$m1" 5)
if [ -n "$pids" ]; then
	pass "rm1: the command runs"
	sh1=$(sfs_ppid "$(head -n 1 <<<"$pids")")
	[ "$sh1" = "$SFS_PID" ] && sh1= # sleep directly under the daemon: no shell to follow
else
	fail "rm1: the command runs" "no process with argument $m1 after 5 s"
	sh1=
fi
rmdir_check rm1 "$S" "$w1" "$sh1" "$m1"

# 2. a running command with a setsid'd child, and a process under procs/
S=$MNT/sessions/rm2
m2="302.$$" # the run's command
m3="303.$$" # setsid'd by the run
m4="304.$$" # procs/bg
sfs_marker "$m2"
sfs_marker "$m3"
sfs_marker "$m4"
check "mkdir sessions/rm2" sfs_mkdir "$S"
sfs_run_bg "$S" "setsid sleep $m3 >/dev/null 2>&1 & sleep $m2" 60
w2=$SFS_BG
if sfs_mkdir "$S/procs/bg" 2>"$SFS_TMP/write.err" && sfs_write "$S/procs/bg/cmd" "sleep $m4"$'\n' 10; then
	pass "rm2: start a process under procs/"
	if [ -n "$(sfs_wait_pids_with_arg "$m4" 5)" ]; then pass "rm2: the procs/ process runs"; else
		fail "rm2: the procs/ process runs" "no process with argument $m4 after 5 s"
	fi
else
	fail "rm2: start a process under procs/" "mkdir procs/bg or the write of its cmd failed: $(head -c 200 "$SFS_TMP/write.err")"
fi
pids=$(sfs_wait_pids_with_arg "$m2" 5)
if [ -n "$pids" ]; then
	pass "rm2: the command runs"
	sh2=$(sfs_ppid "$(head -n 1 <<<"$pids")")
	[ "$sh2" = "$SFS_PID" ] && sh2=
else
	fail "rm2: the command runs" "no process with argument $m2 after 5 s"
	sh2=
fi
if [ -n "$(sfs_wait_pids_with_arg "$m3" 5)" ]; then pass "rm2: the setsid'd child runs"; else
	fail "rm2: the setsid'd child runs" "no process with argument $m3 after 5 s"
fi
rmdir_check rm2 "$S" "$w2" "$sh2" "$m2" "$m3" "$m4"

# the daemon still works
S=$MNT/sessions/after
check "mkdir a session after the rmdirs" sfs_mkdir "$S"
assert_run_ok "run in a new session after the rmdirs" "$S" 'echo fine' 10
assert_file_eq "$S/stdout" $'fine\n' "new session after the rmdirs works"

for m in "$m1" "$m2" "$m3" "$m4"; do sfs_kill_marker "$m"; done
sfs_done
