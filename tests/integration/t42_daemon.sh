#!/usr/bin/env bash
# t42_daemon: the daemon and its mount point (sessionfs(1) MOUNT POINT,
# SIGNALS). A second sessionfs on a live mount is refused (exit 2, one
# line naming the mount point) and the first still serves its session; a
# regular file is refused with ENOTDIR; SIGUSR1, SIGUSR2 and SIGHUP are
# logged and ignored (the session and its state survive, runs work), and
# SIGINT ends it cleanly like SIGTERM (t25). After SIGKILL (of the keeper
# and the server both) the mount gives
# ENOTCONN; a new sessionfs started there unmounts the dead mount (one log
# line) and serves. A dead FUSE mount that is not a sessionfs is left
# alone, a plain empty directory still mounts, and a start on a stopped
# (SIGSTOP) sessionfs is refused after 5 s rather than hanging.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# ---------------------------------------------------------------- helpers

# mounts_at PATH: how many mounts mountinfo shows at PATH (dead ones too)
mounts_at() { awk -v m="$1" '$5 == m { n++ } END { print n + 0 }' /proc/self/mountinfo; }

# fstype_at PATH: the file system type of the last mount at PATH
fstype_at() {
	awk -v m="$1" '$5 == m { for (i = 7; $i != "-"; i++); t = $(i + 1) } END { print t }' /proc/self/mountinfo
}

# refused LABEL RC WORD PATH ARG...: "$SFS_BIN" -f ARG... PATH ends within
# 10 s with status RC ("nonzero": any but 0), writes one line on stderr
# naming PATH and holding WORD (no WORD check if it is empty), and mounts
# nothing more at PATH. A start that mounts anyway is unmounted (topmost
# mount only) and killed by pid.
refused() {
	local label=$1 want=$2 word=$3 path=$4 before rc pid i err=$SFS_TMP/refused.err
	shift 4
	before=$(mounts_at "$path")
	"$SFS_BIN" -f "$@" "$path" >/dev/null 2>"$err" </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		sfs_alive "$pid" || break
		sleep 0.1
	done
	if sfs_alive "$pid"; then
		rc="none: still running after 10 s"
		[ "$(mounts_at "$path")" -gt "$before" ] && timeout 10 fusermount3 -u "$path" 2>/dev/null
		sfs_wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	else
		wait "$pid"
		rc=$?
	fi
	if [ "$want" = nonzero ] && [ "$rc" != 0 ] && [[ $rc != none* ]]; then
		pass "$label: refused (exit status $rc)"
	else
		assert_eq "$want" "$rc" "$label: refused with exit status $want"
	fi
	assert_eq 1 "$(wc -l <"$err")" "$label: one line on stderr ($(head -c 200 "$err" | tr '\n' '|'))"
	assert_true "$label: stderr names $path" "stderr: $(head -c 200 "$err")" grep -qF -e "$path" "$err"
	if [ -n "$word" ]; then
		assert_true "$label: stderr says '$word'" "stderr: $(head -c 200 "$err")" grep -qF -e "$word" "$err"
	fi
	assert_eq "$before" "$(mounts_at "$path")" "$label: nothing more is mounted at the path"
}

# log_count FIXED: lines of the daemon's log holding FIXED
log_count() { grep -cF -e "$1" "$SFS_TMP/daemon.log"; }

# kill9: SIGKILL the daemon, its keeper and its server, wait (5 s) until
# both are gone (a crash of the server alone is recovered: t74)
kill9() {
	disown "$SFS_PID" 2>/dev/null # no "Killed" job notice
	kill -KILL "$SFS_PID" "$SFS_SERVER"
	sfs_wait_gone "$SFS_PID" 5 && sfs_wait_gone "$SFS_SERVER" 5
}

# enotconn LABEL: stat of $MNT fails with ENOTCONN, or ECONNABORTED: the
# kernel ends so a request that was queued before the connection's last
# descriptor closed (the killed server's leader may be a zombie while
# its other threads, the notifier's in a write to /dev/fuse, still exit)
enotconn() {
	timeout 5 stat "$MNT" >/dev/null 2>"$SFS_TMP/stat.err"
	assert_true "$1: stat of the mount point gives ENOTCONN" "stat: $(head -c 200 "$SFS_TMP/stat.err")" \
		grep -qE 'Transport endpoint is not connected|Software caused connection abort' "$SFS_TMP/stat.err"
}

# restart LABEL: start a new daemon on $MNT as it is (like a supervisor's
# restart), wait until it is mounted
restart() {
	"$SFS_BIN" -f "$MNT" >"$SFS_TMP/daemon.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_PID=$!
	sfs_state
	sfs_wait_mounted "$1"
}

# ---------------------------------------------------------------- a second sessionfs on a live one

if sfs_start_mount "live"; then
	S=$MNT/sessions/keep
	check "live: mkdir sessions/keep" sfs_mkdir "$S"
	assert_run_ok "live: a run sets T42=one" "$S" 'export T42=one'
	refused "a second sessionfs on the live mount" 2 "already mounted" "$MNT"
	assert_eq "fuse.sessionfs" "$(fstype_at "$MNT")" "live: the first sessionfs is still the mount"
	assert_eq one "$(sfs_run_out "$S" 'echo "$T42"')" "live: the first one still serves its session"

	# ------------------------------------------------------------ signals that are ignored
	for sig in USR1 USR2 HUP; do
		kill -"$sig" "$SFS_PID"
		sleep 0.3
		if sfs_alive "$SFS_PID"; then pass "SIG$sig: the daemon still runs"; else
			fail "SIG$sig: the daemon still runs" "it died: $(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
			break
		fi
		assert_eq one "$(sfs_run_out "$S" 'echo "$T42"')" "SIG$sig: a run works after it, the session kept its state"
	done
	for w in 'Hangup' 'User defined signal 1' 'User defined signal 2'; do
		assert_eq 1 "$(log_count "$w (from pid $$): ignored")" "the log says '$w (from pid $$): ignored' once"
	done
	# the shells do not inherit the daemon's blocked set: HUP, INT, USR1,
	# USR2 and TERM (mask 0x4a03) are blocked neither in the shell (bash
	# itself blocks SIGCHLD while it waits) nor in a command; and HUP,
	# USR1, USR2 (0xa01) are ignored there only if they were ignored where
	# the daemon was started (it does not ignore them itself)
	for who in '$$' self; do
		m=$(sfs_run_out "$S" "sed -n 's/^SigBlk:\t//p' /proc/$who/status")
		assert_eq 0 "$((0x${m:-ffff} & 0x4a03))" "SigBlk of /proc/$who in a session: none of HUP INT USR1 USR2 TERM ($m)"
		m=$(sfs_run_out "$S" "sed -n 's/^SigIgn:\t//p' /proc/$who/status")
		d=$(sed -n 's/^SigIgn:\t//p' "/proc/$SFS_PID/status")
		assert_eq "$((0x${d:-ffff} & 0xa01))" "$((0x${m:-ffff} & 0xa01))" \
			"SigIgn of /proc/$who in a session: HUP USR1 USR2 as where the daemon started ($m, daemon $d)"
	done
	assert_true "a session's shell can trap USR1" "it cannot" \
		test "$(sfs_run_out "$S" 'trap "echo caught" USR1; kill -USR1 $$; trap - USR1')" = caught
	sfs_check_umount "signals"
fi

# ---------------------------------------------------------------- SIGINT ends it cleanly

if sfs_start_mount "int"; then
	kill -INT "$SFS_PID"
	if sfs_wait_gone "$SFS_PID" 10; then
		wait "$SFS_PID"
		assert_eq 0 $? "SIGINT: the daemon exits with 0"
		assert_eq 0 "$(mounts_at "$MNT")" "SIGINT: it unmounted"
		assert_eq 1 "$(log_count "Interrupt: ending every session")" "SIGINT: the log says it ends every session"
	else
		fail "SIGINT: the daemon exits" "still running 10 s after SIGINT"
	fi
	sfs_umount
fi

# ---------------------------------------------------------------- a regular file

F=$(realpath "$SFS_TMP")/file
echo data >"$F"
refused "a regular file as mount point" 2 "$(sfs_errtext ENOTDIR)" "$F"
assert_eq data "$(cat "$F")" "the file is untouched"

# ---------------------------------------------------------------- SIGKILL, then a restart

if sfs_start_mount "kill"; then
	check "kill: mkdir sessions/doomed" sfs_mkdir "$MNT/sessions/doomed"
	kill9 || fail "kill: the daemon is gone after SIGKILL" "still there after 5 s"
	SFS_PID=
	enotconn "kill"
	if restart "kill: a new sessionfs on the dead mount"; then
		assert_eq 1 "$(log_count "$MNT: unmounted a dead sessionfs")" "kill: the log says it unmounted the dead mount, once"
		assert_eq 1 "$(mounts_at "$MNT")" "kill: one mount is left at the mount point"
		assert_eq hi "$(sfs_run_out "$MNT/sessions/default" 'echo hi')" "kill: the new one serves"
		sfs_check_umount "kill: the new one"
	fi
fi

# ---------------------------------------------------------------- a dead FUSE mount of another kind

if sfs_start_mount "other" -o subtype=t42other; then
	assert_eq "fuse.t42other" "$(fstype_at "$MNT")" "other: mounted as fuse.t42other"
	kill9 || fail "other: the daemon is gone after SIGKILL" "still there after 5 s"
	enotconn "other"
	refused "a sessionfs on a dead fuse.t42other mount" nonzero "" "$MNT"
	assert_eq "fuse.t42other" "$(fstype_at "$MNT")" "other: the dead mount is left alone"
	sfs_umount # fusermount3 -u of the dead mount; reaps the killed daemon
	assert_eq 0 "$(mounts_at "${MNT:-/nonexistent}")" "other: our own unmount removed it"
fi

# ---------------------------------------------------------------- a plain empty directory

if sfs_start_mount "plain"; then
	assert_eq 0 "$(log_count "unmounted a dead")" "plain: nothing is said about a dead mount"
	assert_eq hi "$(sfs_run_out "$MNT/sessions/default" 'echo hi')" "plain: it serves"
	# a stopped daemon never answers: the new one gives up after 5 s
	# instead of hanging too
	kill -STOP "$SFS_SERVER"
	t0=$(now_ms)
	refused "a sessionfs on a stopped one" 1 "does not answer" "$MNT"
	kill -CONT "$SFS_SERVER"
	assert_lt "$(($(now_ms) - t0))" 9000 "stopped: refused within 9 s" " ms"
	assert_eq hi "$(sfs_run_out "$MNT/sessions/default" 'echo hi')" "stopped: once continued, it serves"
	sfs_check_umount "plain"
fi

SFS_DONE=1
exit 0
