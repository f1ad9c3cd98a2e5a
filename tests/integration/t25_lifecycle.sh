#!/usr/bin/env bash
# t25_lifecycle: sessionfs(7) "CONTAINMENT". With sessions that
# have running commands (one of them setsid'd) and a background job left by
# an earlier run: `fusermount3 -u` makes the daemon end every session and
# exit; so does SIGTERM to the daemon; after SIGKILL to the daemon its
# watchdog kills what is left within 3 s (and the dead mount can be
# unmounted). Nothing of any session survives, the daemon's cgroup is
# removed, and writers blocked in close(cmd) get their answer. Last, rmdir
# of a session with a running command leaves no process.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# mounted DIR: DIR is a mount point (from mountinfo: works for a dead
# FUSE mount too, where stat fails with ENOTCONN)
mounted() { awk -v m="$1" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
# shellcheck disable=SC2317 # called through assert_true
not_mounted() { ! mounted "$1"; }

# cgroup_dir: the daemon's instance cgroup (from its own cgroup v2 path)
cgroup_dir() {
	local root own
	root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	own=$(sed -n 's/^0:://p' "/proc/$SFS_SERVER/cgroup" 2>/dev/null)
	[ -n "$root" ] || return 1
	[ "$own" = / ] && own=
	printf '%s%s/sessionfs.%s\n' "$root" "$own" "$SFS_SERVER"
}

# setup CASE N: in the current mount, three sessions:
#   a: running `sleep MA`
#   b: running `setsid sleep MB & sleep MC` (MB in a session of its own)
#   c: idle, its last run left `sleep MD &` behind
# sets MARKS, WRITERS, DESC (the daemon's descendants), CG (its cgroup)
setup() {
	local c=$1 n=$2 m d
	MARKS=("6${n}1.$$" "6${n}2.$$" "6${n}3.$$" "6${n}4.$$")
	for m in "${MARKS[@]}"; do sfs_marker "$m"; done
	WRITERS=()
	for d in a b c; do check "$c: mkdir sessions/$d" sfs_mkdir "$MNT/sessions/$d"; done
	assert_run_ok "$c: sessions/c: a run that leaves sleep ${MARKS[3]} & behind" "$MNT/sessions/c" \
		"sleep ${MARKS[3]} >/dev/null 2>&1 &" 10
	sfs_run_bg "$MNT/sessions/a" "sleep ${MARKS[0]}" 60
	WRITERS+=("$SFS_BG")
	sfs_run_bg "$MNT/sessions/b" "setsid sleep ${MARKS[1]} >/dev/null 2>&1 & sleep ${MARKS[2]}" 60
	WRITERS+=("$SFS_BG")
	for m in "${MARKS[@]}"; do
		if [ -n "$(sfs_wait_pids_with_arg "$m" 5)" ]; then pass "$c: sleep $m runs"; else
			fail "$c: sleep $m runs" "no process with argument $m within 5 s"
		fi
	done
	DESC=$(sfs_descendants "$SFS_PID" | tr '\n' ' ')
	note "$c: the daemon's descendants: $DESC"
	CG=$(cgroup_dir)
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		pass "$c: the daemon's cgroup $CG exists"
	else
		note "$c: no instance cgroup found (${CG:-none}): the fallback containment is in use"
		CG=
	fi
}

# marks_gone LABEL SECONDS: no process has one of MARKS within SECONDS
# (0: right now)
marks_gone() {
	local i left m
	for ((i = 0; i <= $2 * 10; i++)); do
		left=
		for m in "${MARKS[@]}"; do
			left+=$(sfs_pids_with_arg "$m" | sed "s/\$/ (sleep $m)/" | tr '\n' ' ')
		done
		[ -z "$left" ] && break
		[ "$2" -gt 0 ] && sleep 0.1
	done
	assert_true "$1" "still running: $left" test -z "$left"
}

# desc_gone LABEL SECONDS: none of DESC is alive within SECONDS
desc_gone() {
	local i left p
	for ((i = 0; i <= $2 * 10; i++)); do
		left=
		for p in $DESC; do
			sfs_alive "$p" && left+="$p($({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | head -c 60)) "
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	assert_true "$1" "still alive: $left" test -z "$left"
}

# after CASE: the checks common to every way the daemon ended
after() {
	local c=$1 w stuck=0
	marks_gone "$c: no sleep of any session is left once the daemon is gone" 0
	desc_gone "$c: every descendant of the daemon (shells, watchdog) is gone within 3 s" 3
	if [ -n "$CG" ]; then
		local i
		for ((i = 0; i < 30 && ${#CG} > 0; i++)); do
			[ -d "$CG" ] || break
			sleep 0.1
		done
		assert_true "$c: the daemon's cgroup is removed" "$CG still exists" test ! -d "$CG"
	fi
	for w in "${WRITERS[@]}"; do
		if sfs_wait_gone "$w" 5; then wait "$w" 2>/dev/null; else stuck=$((stuck + 1)); fi
	done
	assert_eq 0 "$stuck" "$c: the writers blocked in close(cmd) returned"
}

# forget_mount: the daemon is gone and unmounted; let sfs_mount start anew
forget_mount() {
	if mounted "$MNT"; then
		timeout 10 fusermount3 -u "$MNT" 2>/dev/null || timeout 10 umount -l "$MNT"
	fi
	rmdir "$MNT" 2>/dev/null
	MNT=
	SFS_PID=
	sfs_state ""
}

# 1. fusermount3 -u. A writer blocked in close(cmd) holds a file of the
# mount open, and the kernel refuses a plain unmount of a busy mount
# (EBUSY), so the clients go away first (killed by pid); their runs end
# with them (sessionfs(7), Ctrl-C on a writer).
sfs_mount
setup umount 1
wpids=()
disown "${WRITERS[@]}" 2>/dev/null # no "Killed" job notices
for w in "${WRITERS[@]}"; do
	# the writer is timeout's child (cat, under bash -c): kill them all
	read -r -a kids <<<"$(sfs_descendants "$w" | tr '\n' ' ')"
	wpids+=("$w" "${kids[@]}")
	sfs_kill_tree "$w"
done
left=
for w in "${wpids[@]}"; do sfs_wait_gone "$w" 5 || left+="$w "; done
assert_eq "" "$left" "umount: the writers blocked in close(cmd) die on SIGKILL"
WRITERS=()
sfs_until 5 grep -q '^state killed$' "$MNT/sessions/a/status"
assert_file_match "$MNT/sessions/a/status" '^state killed$' "umount: sessions/a's run ends with its killed writer"
t0=$(now_ms)
timeout 20 fusermount3 -u "$MNT" 2>"$SFS_TMP/fusermount.err"
rc=$?
assert_eq 0 "$rc" "umount: fusermount3 -u succeeds"
if sfs_wait_gone "$SFS_PID" 10; then
	wait "$SFS_PID"
	drc=$?
	pass "umount: the daemon exits"
	note "umount: the daemon was gone $(($(now_ms) - t0)) ms after fusermount3 -u started"
	assert_eq 0 "$drc" "umount: the daemon's exit status is 0"
else
	fail "umount: the daemon exits" "still running 10 s after fusermount3 -u"
fi
after umount
assert_true "umount: the mount is gone" "$MNT is still a mount point" not_mounted "$MNT"
forget_mount

# 2. SIGTERM to the daemon, with a cmd open that was written and not yet
# closed: the kernel never releases that file once the daemon is gone,
# so the daemon frees it itself (an ASan build reported the leak and
# exited 134 when the release lost the race)
sfs_mount
setup term 2
exec {held}>"$MNT/sessions/default/cmd"
printf 'echo never\n' >&"$held"
t0=$(now_ms)
kill -TERM "$SFS_PID"
if sfs_wait_gone "$SFS_PID" 10; then
	wait "$SFS_PID"
	drc=$?
	pass "term: the daemon exits on SIGTERM"
	note "term: the daemon exited with status $drc, $(($(now_ms) - t0)) ms after SIGTERM"
	assert_true "term: the daemon exits normally (0 or 143)" "status $drc" test "$drc" -eq 0 -o "$drc" -eq 143
else
	fail "term: the daemon exits on SIGTERM" "still running 10 s after SIGTERM"
fi
exec {held}>&-
after term
assert_true "term: the daemon unmounted itself" "$MNT is still a mount point" not_mounted "$MNT"
forget_mount

# 3. SIGKILL to the daemon, its keeper and its server both (a crash of
# the server alone is t74's): the watchdog cleans up
sfs_mount
setup kill 3
DEADPID=$SFS_SERVER
DEADCG=$CG
disown "$SFS_PID" 2>/dev/null # no "Killed" job notice
kill -KILL "$SFS_PID" "$SFS_SERVER"
sfs_wait_gone "$SFS_PID" 2
sfs_wait_gone "$SFS_SERVER" 2
marks_gone "kill: no sleep of any session is left within 3 s of SIGKILL" 3
after kill
rc=0
timeout 10 fusermount3 -u "$MNT" 2>"$SFS_TMP/fusermount.err" || {
	rc=$?
	note "kill: fusermount3 -u of the dead mount failed ($rc: $(head -c 200 "$SFS_TMP/fusermount.err")); trying umount -l"
	timeout 10 umount -l "$MNT"
	rc=$?
}
assert_eq 0 "$rc" "kill: the dead mount can be unmounted"
assert_true "kill: the dead mount is gone" "$MNT is still a mount point" not_mounted "$MNT"
forget_mount

# 4. rmdir of a session with a running command and a background job
sfs_mount
if [ -n "$DEADCG" ]; then
	assert_true "the next daemon leaves no cgroup of the SIGKILLed one (pid $DEADPID)" "$DEADCG exists" \
		test ! -d "$DEADCG"
fi
MARKS=("641.$$" "642.$$" "643.$$")
for m in "${MARKS[@]}"; do sfs_marker "$m"; done
S=$MNT/sessions/rm
check "rmdir: mkdir sessions/rm" sfs_mkdir "$S"
assert_run_ok "rmdir: a run that leaves sleep ${MARKS[2]} & behind" "$S" "sleep ${MARKS[2]} >/dev/null 2>&1 &" 10
sfs_run_bg "$S" "setsid sleep ${MARKS[1]} >/dev/null 2>&1 & sleep ${MARKS[0]}" 60
w=$SFS_BG
for m in "${MARKS[@]}"; do
	if [ -n "$(sfs_wait_pids_with_arg "$m" 5)" ]; then pass "rmdir: sleep $m runs"; else
		fail "rmdir: sleep $m runs" "no process with argument $m within 5 s"
	fi
done
shpid=$(sfs_ppid "$(sfs_pids_with_arg "${MARKS[0]}" | head -n 1)")
t0=$(now_ms)
timeout -k 2 20 rmdir "$S"
rc=$?
el=$(($(now_ms) - t0))
assert_eq 0 "$rc" "rmdir: rmdir of the session with a running command succeeds"
assert_lt "$el" 10000 "rmdir: it returns within 10 s" " ms"
note "rmdir took $el ms"
marks_gone "rmdir: no process of the session is left when rmdir returns" 0
if [ -n "$shpid" ] && [ "$shpid" != "$SFS_PID" ]; then
	assert_true "rmdir: the session's shell (pid $shpid) is gone" "it still runs" sfs_wait_gone "$shpid" 0
fi
if sfs_wait_gone "$w" 5; then
	wait "$w"
	pass "rmdir: the writer blocked in close(cmd) returned"
else
	fail "rmdir: the writer blocked in close(cmd) returned" "still blocked 5 s after rmdir"
fi
assert_true "rmdir: the session is gone" "it still exists" timeout 5 test ! -e "$S"

sfs_done
