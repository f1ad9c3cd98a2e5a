# shellcheck shell=bash
# shellcheck disable=SC2016
# lib.sh: shared helpers of the sessionfs integration tests.
#
# Source it from a test file, then:
#   sfs_mount                  mount a fresh sessionfs; sets MNT and SFS_PID
#   ... checks ...
#   sfs_done                   unmount, report, exit (non-zero if a check failed)
#
# Every check prints one line, "ok TEST/NAME" or "not ok TEST/NAME: reason".
# An EXIT trap always stops what the test started (by pid), unmounts, reaps
# the daemon and removes the temporary directories, whatever happens.
# Every operation that touches the mount runs under `timeout`, so a hung
# daemon turns into failed checks, never into a hung test.
#
# Environment:
#   SESSIONFS_BIN   the daemon (default: build-test/sessionfs of this checkout,
#                   else build/sessionfs)
#   SFS_STATE_FILE  set by run.sh: the test writes there what it must clean
#                   up (mount, daemon pid, temporary directory, markers), so
#                   that run.sh can clean up after a test that was killed
#   SFS_T           timeout (s) of one operation on the mount (default 30)
#   SFS_READ_T      timeout (s) of one read of a file (default 10)
#   TMPDIR          where temporary directories go (default /tmp)

export LC_ALL=C # error texts ("Invalid argument") and EPOCHREALTIME's "."

SFS_TEST=$(basename "${0%.sh}")
SFS_NPASS=0
SFS_NFAIL=0
SFS_N=0          # counter for scratch file names
SFS_DONE=0       # set by sfs_done; a test that exits before is reported
SFS_T=${SFS_T:-30} # default timeout (s) of one operation on the mount
SFS_PID=
# The daemon starts as a keeper (SFS_PID, the process the test started:
# its signals, its exit status) whose child serves the mount: SFS_SERVER,
# from health's pid line once mounted (its descriptors, children, cgroup).
SFS_SERVER=
MNT=
SFS_BG_PIDS=()   # background pids started by the test (killed at exit)
SFS_MARKERS=()   # process arguments: processes having one are killed at exit
SFS_DAEMON_ENV=() # extra environment (VAR=VALUE ...) of sfs_start_mount
# (in a test file run again by sfs_run_in_ns) its daemons' pids go there
SFS_NS_PIDFILE=${SFS_NS_PIDFILE:-}
SFS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sfs-it-$SFS_TEST.XXXXXX") || {
	echo "not ok $SFS_TEST/setup: mktemp failed"
	exit 1
}
# the test's own stdout and stderr: reports go there even from inside a
# redirected function, and the EXIT trap restores them
exec {SFS_OUT}>&1 {SFS_ERR}>&2

# ---------------------------------------------------------------- reporting

pass() { # NAME
	SFS_NPASS=$((SFS_NPASS + 1))
	printf 'ok %s/%s\n' "$SFS_TEST" "$1" >&"$SFS_OUT"
}

fail() { # NAME REASON
	local why=${2:-failed}
	why=${why//$'\n'/ }
	SFS_NFAIL=$((SFS_NFAIL + 1))
	printf 'not ok %s/%s: %s\n' "$SFS_TEST" "$1" "$why" >&"$SFS_OUT"
}

note() { printf '# %s\n' "$*" >&"$SFS_OUT"; }

# sfs_show FILE: size and the first bytes of FILE, printable, on one line
# (cat -A: newline is "$", NUL is "^@", tab is "^I").
sfs_show() {
	local n more=''
	n=$(wc -c <"$1" 2>/dev/null) || n=0
	[ "$n" -gt 96 ] && more='...'
	printf '%s bytes "%s%s"' "$n" "$(head -c 96 "$1" | cat -A | tr -d '\n')" "$more"
}

# sfs_q STRING: STRING quoted for a message, e.g. $'hi\n'
sfs_q() { printf '%q' "$1"; }

# sfs_rel PATH: PATH relative to the mount, for messages
sfs_rel() { printf '%s' "${1#"$MNT"/}"; }

# now_ms: wall clock in milliseconds
now_ms() {
	local t=${EPOCHREALTIME//[!0-9]/}
	printf '%s\n' $((10#$t / 1000))
}

# ---------------------------------------------------------------- processes

# sfs_alive, sfs_mounted
# shellcheck source=../common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
SFS_BIN=${SESSIONFS_BIN:-$(sfs_default_bin)}

# sfs_drop_copied_mounts [KEEP]: in a new mount namespace (sfs_run_in_ns,
# or a test's consumer in `unshare --mount`), detach the copies of every
# FUSE mount that existed when it was made, but KEEP (the test's own, that
# the consumer uses). The root mount here is private, so such a copy is
# not unmounted with its original: it keeps that filesystem alive, and an
# unmount by the test that mounted it (run at the same time) would not
# end its daemon until this namespace is gone. (A `bash -c` in such a
# namespace gets it as "$(declare -f sfs_drop_copied_mounts)".)
sfs_drop_copied_mounts() {
	local mp
	awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) ~ /^fuse(\.|blk|$)/) print $5 }' \
		/proc/self/mountinfo | sort -r | while read -r mp; do
		[ -n "${1:-}" ] && [ "$mp" = "$1" ] && continue
		umount -l "$mp" 2>/dev/null
	done
}
[ -n "${SFS_NS_PIDFILE:-}" ] && sfs_drop_copied_mounts

# sfs_ppid PID: parent pid of PID
sfs_ppid() {
	local s
	{ s=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	s=${s##*) }
	read -r _ s _ <<<"$s"
	printf '%s\n' "$s"
}

# sfs_descendants PID: all descendants of PID (children first level first)
sfs_descendants() {
	local f s pid ppid
	local -A kids=()
	for f in /proc/[0-9]*/stat; do
		{ s=$(<"$f"); } 2>/dev/null || continue
		pid=${f#/proc/}
		pid=${pid%/stat}
		s=${s##*) }
		read -r _ ppid _ <<<"$s"
		kids[$ppid]+="$pid "
	done
	local queue=("$1") p c
	while [ ${#queue[@]} -gt 0 ]; do
		p=${queue[0]}
		queue=("${queue[@]:1}")
		for c in ${kids[$p]}; do
			printf '%s\n' "$c"
			queue+=("$c")
		done
	done
}

# sfs_kill_tree PID: SIGKILL PID and all its descendants, by pid
sfs_kill_tree() {
	local pids p
	pids=$(sfs_descendants "$1")
	kill -KILL "$1" 2>/dev/null
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	return 0
}

# sfs_pids_with_arg ARG: pids of the processes that have ARG as one whole
# argument (looked up in /proc/*/cmdline). ARG: [A-Za-z0-9._-] only. The
# regex is bracketed so that grep's own command line never matches.
sfs_pids_with_arg() {
	local re=$1
	re=${re//./[.]}
	re="[${re:0:1}]${re:1}"
	timeout -k 2 10 grep -lzxE -e "$re" /proc/[0-9]*/cmdline 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/cmdline$|\1|p' |
		while read -r p; do
			[ "$p" != "$$" ] && [ "$p" != "$BASHPID" ] && printf '%s\n' "$p"
		done
	return 0
}

# sfs_uid_pids UID: the processes whose real uid is UID (by their status,
# which a process that is not dumpable still shows)
sfs_uid_pids() {
	local f uid
	[ -n "${1:-}" ] || return 0
	for f in /proc/[0-9]*/status; do
		uid=$(awk '/^Uid:/ { print $2; exit }' "$f" 2>/dev/null)
		[ "$uid" = "$1" ] && { f=${f#/proc/}; printf '%s\n' "${f%/status}"; }
	done
	return 0
}

# sfs_sweep_users REGEX: removes the users made by runs of this test that
# were killed before their EXIT trap: names matching REGEX end in the pid
# of their run, which no longer runs this test
sfs_sweep_users() {
	local name
	for name in $(getent passwd | cut -d: -f1 | grep -E "$1"); do
		tr '\0' ' ' <"/proc/${name##*_}/cmdline" 2>/dev/null | grep -q "$SFS_TEST" && continue
		userdel -f "$name" >/dev/null 2>&1 && note "removed the stale user $name"
	done
	return 0
}

# sfs_build_pll OUT: libfuse's passthrough_ll, built from ../shared/
# thirdparty (next to the main checkout, or to a worktree's parent) as
# OUT, mode 0755; fails when it cannot be built here
sfs_build_pll() {
	local top lf= d
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	for d in "${SFS_THIRDPARTY:-}" "$top/../shared/thirdparty" "$top/../../shared/thirdparty"; do
		[ -z "$lf" ] && [ -n "$d" ] && [ -f "$d/libfuse-3.14.0-example.tar.gz" ] &&
			lf=$d/libfuse-3.14.0-example.tar.gz
	done
	[ -n "$lf" ] && command -v gcc >/dev/null && command -v pkg-config >/dev/null || return 1
	mkdir -p "$SFS_TMP/lf" || return 1
	# shellcheck disable=SC2046 # pkg-config's words are gcc's arguments
	tar xzf "$lf" -C "$SFS_TMP/lf" &&
		gcc -O1 -o "$1" "$SFS_TMP/lf/libfuse-3.14.0/example/passthrough_ll.c" \
			$(pkg-config --cflags --libs fuse3) 2>"$SFS_TMP/gcc.err" &&
		chmod 755 "$1"
}

# sfs_user_fuse_allow [allow_other]: Debian's defaults for a user's FUSE
# mounts, /dev/fuse 0666 (and with allow_other, user_allow_other in
# /etc/fuse.conf), until sfs_user_fuse_undo puts back what this test
# changed (the EXIT trap calls it). Only what was not so already is
# changed, so that tests run at once leave it as it was; the line in
# fuse.conf is for one test at a time (t44 is the only one beside others;
# t46 runs alone, SERIAL in run.sh).
SFS_FUSE_MODE=
SFS_FUSE_CONF_ADDED=
sfs_user_fuse_allow() {
	if [ "$(stat -c %a /dev/fuse)" != 666 ]; then
		SFS_FUSE_MODE=$(stat -c %a /dev/fuse)
		chmod 0666 /dev/fuse
	fi
	[ "${1:-}" = allow_other ] || return 0
	if ! grep -qx 'user_allow_other.*' /etc/fuse.conf 2>/dev/null; then
		SFS_FUSE_CONF_ADDED=$SFS_TEST-$$
		echo "user_allow_other # $SFS_FUSE_CONF_ADDED" >>/etc/fuse.conf
	fi
}
sfs_user_fuse_undo() {
	[ -n "$SFS_FUSE_CONF_ADDED" ] && sed -i "/^user_allow_other # $SFS_FUSE_CONF_ADDED\$/d" /etc/fuse.conf
	[ -n "$SFS_FUSE_MODE" ] && chmod "$SFS_FUSE_MODE" /dev/fuse
	SFS_FUSE_CONF_ADDED=
	SFS_FUSE_MODE=
	return 0
}

# sfs_wait_pids_with_arg ARG SECONDS: wait until a process with ARG shows up;
# prints its pids (empty if none appeared in time)
sfs_wait_pids_with_arg() {
	local i pids
	for ((i = 0; i < $2 * 10; i++)); do
		pids=$(sfs_pids_with_arg "$1")
		if [ -n "$pids" ]; then
			printf '%s\n' "$pids"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# sfs_kill_marker ARG: SIGKILL every process having ARG as an argument
sfs_kill_marker() {
	local p
	for p in $(sfs_pids_with_arg "$1"); do kill -KILL "$p" 2>/dev/null; done
	return 0
}

# sfs_marker ARG: remember ARG; its processes are killed at exit (here or,
# if this test gets killed, by run.sh)
sfs_marker() {
	SFS_MARKERS+=("$1")
	sfs_state
}

# sfs_until SECONDS CMD...: runs CMD every 50 ms until it succeeds (0),
# or 1 once SECONDS (an integer) have passed
sfs_until() {
	local i n=$(($1 * 20))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# sfs_wait_gone PID SECONDS: true once PID has ended (zombie counts as
# ended); SECONDS 0 checks once
sfs_wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		sfs_alive "$1" || return 0
		sleep 0.1
	done
	! sfs_alive "$1"
}

# ---------------------------------------------------------------- mounting

# sfs_state [clear]: write what run.sh must clean up if this test gets
# killed (lines "mnt PATH", "pid PID", "tmp PATH", "marker ARG"), or clear it
sfs_state() {
	[ -n "${SFS_STATE_FILE:-}" ] || return 0
	if [ "${1:-}" = clear ]; then
		: >"$SFS_STATE_FILE"
		return 0
	fi
	{
		[ -n "$MNT" ] && printf 'mnt %s\n' "$MNT"
		[ -n "$SFS_PID" ] && printf 'pid %s\n' "$SFS_PID"
		[ -n "$SFS_SERVER" ] && printf 'server %s\n' "$SFS_SERVER"
		printf 'tmp %s\n' "$SFS_TMP"
		local m
		for m in "${SFS_MARKERS[@]}"; do printf 'marker %s\n' "$m"; done
	} >"$SFS_STATE_FILE" 2>/dev/null
	return 0
}
sfs_state

# sfs_note_server: SFS_SERVER from the mount's health (the keeper's own
# pid when there is no keeper)
sfs_note_server() {
	SFS_SERVER=$(timeout 5 sed -n 's/^pid //p' "$MNT/health" 2>/dev/null)
	export SFS_SERVER
	sfs_state
}

# sfs_new_server OLD: waits (20 s) until health names a live server other
# than OLD (after a crash, the keeper's next); sets SFS_SERVER. False if
# none came.
sfs_new_server() {
	local i p
	for ((i = 0; i < 200; i++)); do
		p=$(timeout 5 sed -n 's/^pid //p' "$MNT/health" 2>/dev/null)
		if [ -n "$p" ] && [ "$p" != "$1" ] && sfs_alive "$p"; then
			SFS_SERVER=$p
			sfs_state
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# sfs_mount: mount a fresh sessionfs; exits the test if that fails
sfs_mount() {
	trap sfs_cleanup EXIT
	if [ ! -x "$SFS_BIN" ]; then
		fail mount "daemon binary $SFS_BIN missing or not executable"
		exit 1
	fi
	MNT=$(mktemp -d "${TMPDIR:-/tmp}/sfs-mnt-$SFS_TEST.XXXXXX") || {
		MNT=
		fail mount "mktemp failed"
		exit 1
	}
	"$SFS_BIN" -f "$MNT" >"$SFS_TMP/daemon.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_PID=$!
	export MNT SFS_PID
	sfs_state
	local i
	for ((i = 0; i < 50; i++)); do
		if timeout 2 mountpoint -q "$MNT" && timeout 2 test -d "$MNT/sessions"; then
			sfs_note_server
			pass mount
			return 0
		fi
		if ! sfs_alive "$SFS_PID"; then
			fail mount "daemon exited before the mount was ready: $(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
			exit 1
		fi
		sleep 0.1
	done
	fail mount "mount not ready after 5 s"
	exit 1
}

# sfs_umount: unmount, wait for the daemon (5 s), else kill it by pid.
# Sets SFS_DAEMON_RC (its exit status; "killed" if it had to be killed).
sfs_umount() {
	SFS_DAEMON_RC=
	if [ -n "$MNT" ] && sfs_mounted "$MNT"; then
		timeout 10 fusermount3 -u "$MNT" 2>/dev/null ||
			timeout 10 umount -l "$MNT" 2>/dev/null ||
			timeout 10 fusermount3 -u -z "$MNT" 2>/dev/null
	fi
	if [ -n "$SFS_PID" ]; then
		# 5 s is plenty alone (it takes some 50 ms); a sanitized daemon on a
		# loaded machine took longer, which is noted, not failed, up to 30 s
		if sfs_wait_gone "$SFS_PID" 5 ||
			{ note "the daemon is still running 5 s after unmount; waiting up to 30 s" 2>/dev/null
				sfs_wait_gone "$SFS_PID" 25; }; then
			wait "$SFS_PID" 2>/dev/null
			SFS_DAEMON_RC=$?
		else
			kill -KILL "$SFS_PID" 2>/dev/null
			wait "$SFS_PID" 2>/dev/null
			SFS_DAEMON_RC=killed
		fi
		SFS_PID=
	fi
	# a server its keeper left (a keeper killed by a test)
	if [ -n "$SFS_SERVER" ] && [ -n "$MNT" ] && [ -r "/proc/$SFS_SERVER/cmdline" ] &&
		tr '\0' '\n' <"/proc/$SFS_SERVER/cmdline" | grep -qxF -- "$MNT"; then
		sfs_wait_gone "$SFS_SERVER" 5 || kill -KILL "$SFS_SERVER" 2>/dev/null
	fi
	SFS_SERVER=
	if [ -n "$MNT" ]; then
		if sfs_mounted "$MNT"; then # still there: lazy, last resort
			timeout 10 umount -l "$MNT" 2>/dev/null
		fi
		rmdir "$MNT" 2>/dev/null && MNT=
	fi
	return 0
}

# sfs_cleanup: the EXIT trap
sfs_cleanup() {
	local rc=$? p m
	trap - EXIT
	trap '' INT TERM HUP
	# the trap may run inside a function whose output is redirected
	exec 1>&"$SFS_OUT" 2>&"$SFS_ERR"
	if [ "$SFS_DONE" != 1 ]; then
		fail complete "test stopped before its end (status $rc)"
	fi
	for p in "${SFS_BG_PIDS[@]}"; do
		sfs_alive "$p" && sfs_kill_tree "$p"
	done
	for m in "${SFS_MARKERS[@]}"; do sfs_kill_marker "$m"; done
	[ -n "$SFS_PID" ] && sfs_umount
	if [ -n "$SFS_TMPFS" ]; then
		timeout 10 umount "$SFS_TMPFS" 2>/dev/null || timeout 10 umount -l "$SFS_TMPFS"
	fi
	if [ "$SFS_NFAIL" -gt 0 ] && [ -s "$SFS_TMP/daemon.log" ]; then
		note "last lines of the daemon's log:"
		tail -n 25 "$SFS_TMP/daemon.log" | sed 's/^/#   /'
	fi
	if [ -n "$MNT" ] && sfs_mounted "$MNT"; then
		note "WARNING: $MNT is still mounted; left in place"
	elif [ -n "$MNT" ]; then
		rmdir "$MNT" 2>/dev/null
	fi
	# never recurse into a mount: SFS_TMP holds no mount, and --one-file-system
	rm -rf --one-file-system "$SFS_TMP"
	sfs_state clear
	printf '# %s: %d passed, %d failed\n' "$SFS_TEST" "$SFS_NPASS" "$SFS_NFAIL"
	if [ "$SFS_NFAIL" -gt 0 ]; then exit 1; fi
	if [ "$rc" -ne 0 ]; then exit "$rc"; fi
	exit 0
}
trap sfs_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# sfs_need TOOL...: passes "skip" and exits when a tool is not installed
sfs_need() {
	local tool
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null; then
			pass "skip: $tool is not installed"
			SFS_DONE=1
			exit 0
		fi
	done
}

# sfs_tmpfs DIR SIZE: a tmpfs of the test's own at DIR (a workspace whose
# fanotify queue, which marks a whole filesystem, only this test fills),
# unmounted by sfs_cleanup after the daemon. Passes "skip" and exits
# when there is none.
sfs_tmpfs() {
	mkdir -p "$1"
	if ! mount -t tmpfs -o "size=$2,mode=0755" "sfs-$SFS_TEST" "$1"; then
		pass "skip: no tmpfs"
		SFS_DONE=1
		exit 0
	fi
	SFS_TMPFS=$1
}

# sfs_done: last call of a test: daemon still alive, clean unmount, exit
sfs_done() {
	if sfs_alive "$SFS_PID"; then
		pass "daemon still running at the end"
	else
		fail "daemon still running at the end" "the daemon died during the test"
	fi
	local p
	for p in "${SFS_BG_PIDS[@]}"; do
		sfs_alive "$p" && sfs_kill_tree "$p"
	done
	sfs_umount
	case $SFS_DAEMON_RC in
	0) pass "daemon exits with 0 after unmount" ;;
	killed) fail "daemon exits with 0 after unmount" "still running 30 s after unmount; killed" ;;
	*) fail "daemon exits with 0 after unmount" "exit status $SFS_DAEMON_RC" ;;
	esac
	SFS_DONE=1
	exit 0
}

# sfs_wait_mounted LABEL: after starting $SFS_PID (log in
# $SFS_TMP/daemon.log) on $MNT: passes "LABEL: mounts" once it is ready
# (5 s at most), else fails, unmounts and returns 1
sfs_wait_mounted() {
	local label=$1 i
	for ((i = 0; i < 50; i++)); do
		if timeout 2 mountpoint -q "$MNT" && timeout 2 test -d "$MNT/sessions"; then
			sfs_note_server
			pass "$label: mounts"
			return 0
		fi
		if ! sfs_alive "$SFS_PID"; then
			fail "$label: mounts" "the daemon exited: $(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
			sfs_umount
			return 1
		fi
		sleep 0.1
	done
	fail "$label: mounts" "not mounted after 5 s"
	sfs_umount
	return 1
}

# sfs_start_mount LABEL ARG...: start "$SFS_BIN" -f ARG... MNT (with
# SFS_DAEMON_ENV) on a fresh mount point, wait until it is mounted. Sets
# MNT and SFS_PID (the cleanup unmounts it whatever happens). Returns 1 if
# it did not mount.
sfs_start_mount() {
	local label=$1
	shift
	MNT=$(mktemp -d "${TMPDIR:-/tmp}/sfs-mnt-$SFS_TEST.XXXXXX") || {
		MNT=
		fail "$label: mounts" "mktemp failed"
		return 1
	}
	env "${SFS_DAEMON_ENV[@]}" "$SFS_BIN" -f "$@" "$MNT" \
		>"$SFS_TMP/daemon.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_PID=$!
	[ -n "$SFS_NS_PIDFILE" ] && echo "$SFS_PID" >>"$SFS_NS_PIDFILE"
	sfs_state
	sfs_wait_mounted "$label"
}

# sfs_daemon_pids_at MNT: pids of our daemon binary having MNT as an
# argument
sfs_daemon_pids_at() {
	local d bin
	bin=$(readlink -f "$SFS_BIN")
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/exe" 2>/dev/null)" = "$bin" ] || continue
		tr '\0' '\n' <"$d/cmdline" 2>/dev/null | grep -qxF -- "$1" && printf '%s\n' "${d#/proc/}"
	done
	return 0
}

# sfs_run_in_ns LABEL ARG TIMEOUT: runs this test file again as `bash $0
# ARG` in a private mount namespace (where it mounts what it must not
# mount here) with SFS_NS_PIDFILE set, passes if it exits 0 (77: it
# skipped its cases), then fails and kills (by pid) any daemon of ours it
# left running
sfs_run_in_ns() {
	local label=$1 arg=$2 pidfile=$SFS_TMP/ns$2.pids bin rc p
	bin=$(readlink -f "$SFS_BIN")
	: >"$pidfile"
	timeout -k 5 "$3" env -u SFS_STATE_FILE SFS_NS_PIDFILE="$pidfile" \
		unshare -m --propagation private bash "$0" "$arg" {SFS_OUT}>&- {SFS_ERR}>&-
	rc=$?
	case $rc in
	0) pass "the $label cases ran (in a private mount namespace)" ;;
	77) note "the $label cases were skipped" ;;
	*) fail "the $label cases ran (in a private mount namespace)" "status $rc" ;;
	esac
	while read -r p; do
		if sfs_alive "$p" && [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$bin" ]; then
			fail "$label cases: no daemon left" "pid $p still runs; killed"
			kill -KILL "$p" 2>/dev/null
		fi
	done <"$pidfile"
}

# sfs_check_umount LABEL: the daemon still runs, unmount, it exits with 0
sfs_check_umount() {
	if sfs_alive "$SFS_PID"; then pass "$1: the daemon still runs"; else
		fail "$1: the daemon still runs" "it died: $(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
	fi
	sfs_umount
	assert_eq 0 "$SFS_DAEMON_RC" "$1: unmounted, the daemon exits with 0"
}

# ---------------------------------------------------------------- operations

# sfs_mkdir DIR: mkdir with a timeout
sfs_mkdir() { timeout -k 2 "$SFS_T" mkdir -- "$1"; }

# sfs_write FILE TEXT [TIMEOUT]: write exactly TEXT into FILE (open with
# O_TRUNC, like `>`; the text goes through a pipe, so any size is fine).
# Returns the writer's status (124: timed out). stderr in $SFS_TMP/write.err
sfs_write() {
	printf '%s' "$2" | timeout -k 2 "${3:-$SFS_T}" bash -c 'cat >"$1"' _ "$1" 2>"$SFS_TMP/write.err"
	return "${PIPESTATUS[1]}"
}

# sfs_write_file FILE SRC [TIMEOUT]: write the content of local file SRC
sfs_write_file() {
	timeout -k 2 "${3:-$SFS_T}" bash -c 'cat >"$1"' _ "$1" <"$2" 2>"$SFS_TMP/write.err"
}

# sfs_run DIR CMD [TIMEOUT]: run CMD (a newline is appended, like echo) by
# writing it to DIR/cmd; returns when the close returned (= the run ended)
sfs_run() { sfs_write "$1/cmd" "$2"$'\n' "${3:-$SFS_T}"; }

# sfs_run_out DIR CMD: run CMD in DIR, print its stdout (empty on failure)
sfs_run_out() {
	sfs_run "$1" "$2" 10 || return 1
	timeout 5 cat "$1/stdout"
}

# sfs_run_bg DIR CMD [TIMEOUT]: same, in the background; pid in SFS_BG
sfs_run_bg() {
	local f=$SFS_TMP/bg.$((++SFS_N))
	printf '%s\n' "$2" >"$f"
	timeout -k 2 "${3:-$SFS_T}" bash -c 'cat >"$1"' _ "$1/cmd" <"$f" 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_BG=$!
	SFS_BG_PIDS+=("$SFS_BG")
}

# sfs_ctx_path MODULES: $PATH, with /usr/bin first when its python3
# imports MODULES (the Debian python3 has matplotlib and pandas,
# tests/install-deps.sh; a python3 earlier on PATH, pyenv's, may not)
sfs_ctx_path() {
	if /usr/bin/python3 -c "import $1" 2>/dev/null; then
		printf '%s\n' "/usr/bin:$PATH"
	else
		printf '%s\n' "$PATH"
	fi
}

# sfs_ctx_make DIR [LANGUAGE [CWD [PATH]]]: mkdir the code context DIR,
# then its language, cwd and env/PATH, each when given
sfs_ctx_make() {
	sfs_mkdir "$1" || return
	[ -z "${2:-}" ] || sfs_write "$1/language" "$2"$'\n' || return
	[ -z "${3:-}" ] || sfs_write "$1/cwd" "$3"$'\n' || return
	[ -z "${4:-}" ] || sfs_write "$1/env/PATH" "$4"$'\n'
}

# sfs_ctx_code DIR TEXT [TIMEOUT]: runs TEXT in the context DIR; the
# writer's status
sfs_ctx_code() { sfs_write "$1/code" "$2"$'\n' "${3:-$SFS_T}"; }

# sfs_sh DIR SCRIPT [TIMEOUT]: run SCRIPT with bash inside DIR (e.g. the
# literal `echo 'echo hi' > cmd`), under a timeout
sfs_sh() {
	timeout -k 2 "${3:-$SFS_T}" bash -c 'cd "$1" && eval "$2"' _ "$1" "$2"
}

# sfs_cat FILE DEST [TIMEOUT]: read FILE into local file DEST. Returns 0,
# 124 if the read did not end in time, 3 if FILE gave more than
# SFS_READ_MAX bytes (a read that never ends), else cat's status; the
# error text is in DEST.err
SFS_READ_MAX=${SFS_READ_MAX:-$((16 * 1024 * 1024))}
sfs_cat() {
	local rc n
	timeout -k 2 "${3:-${SFS_READ_T:-10}}" cat -- "$1" 2>"$2.err" |
		head -c $((SFS_READ_MAX + 1)) >"$2"
	rc=${PIPESTATUS[0]}
	n=$(wc -c <"$2")
	if [ "$n" -gt "$SFS_READ_MAX" ]; then
		echo "read gave more than $SFS_READ_MAX bytes (a read that never ends?)" >"$2.err"
		return 3
	fi
	return "$rc"
}

# ---------------------------------------------------------------- assertions

# check NAME CMD...: pass if CMD succeeds (CMD runs under a timeout if it is
# not a shell function)
check() {
	local name=$1 rc
	shift
	if [ "$(type -t "$1")" = function ]; then
		"$@" >"$SFS_TMP/check.out" 2>&1
	else
		timeout -k 2 "$SFS_T" "$@" >"$SFS_TMP/check.out" 2>&1
	fi
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$name"
		return 0
	fi
	[ "$rc" -eq 124 ] && { fail "$name" "timed out"; return 1; }
	fail "$name" "status $rc: $(head -c 300 "$SFS_TMP/check.out" | tr '\n' ' ')"
	return 1
}

# assert_eq EXPECTED ACTUAL MSG
assert_eq() {
	if [ "$1" = "$2" ]; then
		pass "$3"
	else
		fail "$3" "expected $(sfs_q "$1"), got $(sfs_q "$2")"
		return 1
	fi
}

# assert_true MSG REASON CONDITION...: pass if `CONDITION` (a test) is true
assert_true() {
	local msg=$1 why=$2
	shift 2
	if "$@"; then pass "$msg"; else
		fail "$msg" "$why"
		return 1
	fi
}

# _cmp_read FILE WANTFILE MSG: read FILE from the mount, compare bytes
_cmp_read() {
	local got=$SFS_TMP/got.$((++SFS_N)) rc
	sfs_cat "$1" "$got"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		if [ "$rc" -eq 124 ]; then
			fail "$3" "reading $(sfs_rel "$1") did not end within ${SFS_READ_T:-10} s; it gave $(sfs_show "$got")"
		else
			fail "$3" "reading $(sfs_rel "$1") failed: $(head -c 200 "$got.err" | tr '\n' ' ')"
		fi
		return 1
	fi
	if cmp -s "$2" "$got"; then
		pass "$3"
	else
		fail "$3" "expected $(sfs_show "$2"), got $(sfs_show "$got")"
		return 1
	fi
}

# assert_file_eq FILE EXPECTED [MSG]: FILE's bytes are exactly EXPECTED
assert_file_eq() {
	local want=$SFS_TMP/want.$((++SFS_N))
	printf '%s' "$2" >"$want"
	_cmp_read "$1" "$want" "${3:-$(sfs_rel "$1") is $(sfs_q "$2")}"
}

# assert_file_printf FILE FORMAT MSG: FILE's bytes are `printf FORMAT`
# (for bytes a bash string cannot hold, such as NUL)
assert_file_printf() {
	local want=$SFS_TMP/want.$((++SFS_N))
	# shellcheck disable=SC2059
	printf "$2" >"$want"
	_cmp_read "$1" "$want" "$3"
}

# assert_file_same FILE LOCALFILE MSG: FILE's bytes equal LOCALFILE's
assert_file_same() { _cmp_read "$1" "$2" "$3"; }

# assert_file_match FILE ERE MSG: some line of FILE matches ERE
assert_file_match() {
	local got=$SFS_TMP/got.$((++SFS_N))
	if ! sfs_cat "$1" "$got"; then
		fail "$3" "reading $(sfs_rel "$1") failed or timed out: $(head -c 200 "$got.err" | tr '\n' ' '); it gave $(sfs_show "$got")"
		return 1
	fi
	if grep -qE -e "$2" "$got"; then
		pass "$3"
	else
		fail "$3" "no line matches /$2/ in $(sfs_show "$got")"
		return 1
	fi
}

# sfs_errtext ERRNO-NAME: the strerror text tools print for it
sfs_errtext() {
	case $1 in
	EINVAL) echo 'Invalid argument' ;;
	ENOENT) echo 'No such file or directory' ;;
	EEXIST) echo 'File exists' ;;
	EBUSY) echo 'Device or resource busy' ;;
	ENOTDIR) echo 'Not a directory' ;;
	EACCES) echo 'Permission denied' ;;
	ENOSPC) echo 'No space left on device' ;;
	E2BIG) echo 'Argument list too long' ;;
	EPERM) echo 'Operation not permitted' ;;
	ESRCH) echo 'No such process' ;;
	EFBIG) echo 'File too large' ;;
	*) echo "$1" ;;
	esac
}

# assert_errno ERRNO MSG CMD...: CMD (run under a timeout) fails and its
# stderr names ERRNO (e.g. EINVAL: "Invalid argument")
assert_errno() {
	local en=$1 msg=$2 text err=$SFS_TMP/err.$((++SFS_N)) rc
	shift 2
	text=$(sfs_errtext "$en")
	timeout -k 2 "$SFS_T" "$@" >/dev/null 2>"$err"
	rc=$?
	if [ "$rc" -eq 124 ]; then
		fail "$msg" "timed out"
	elif [ "$rc" -eq 0 ]; then
		fail "$msg" "succeeded, expected $en"
	elif grep -qF -e "$text" "$err"; then
		pass "$msg"
		return 0
	else
		fail "$msg" "failed (status $rc) but not with $en: $(head -c 200 "$err" | tr '\n' ' ')"
	fi
	return 1
}

# assert_write_errno ERRNO MSG FILE TEXT: writing TEXT to FILE fails with ERRNO
assert_write_errno() {
	assert_errno "$1" "$2" bash -c 'printf "%s" "$2" >"$1"' _ "$3" "$4"
}

# assert_fails MSG CMD...: CMD (under a timeout) fails, with any error
assert_fails() {
	local msg=$1 rc
	shift
	timeout -k 2 "$SFS_T" "$@" >/dev/null 2>&1
	rc=$?
	case $rc in
	0) fail "$msg" "succeeded, expected a failure" ;;
	124) fail "$msg" "timed out" ;;
	*)
		pass "$msg"
		return 0
		;;
	esac
	return 1
}

# assert_run_ok MSG DIR CMD [TIMEOUT]: the write of CMD to DIR/cmd succeeds
assert_run_ok() {
	local rc
	sfs_run "$2" "$3" "${4:-$SFS_T}"
	rc=$?
	case $rc in
	0)
		pass "$1"
		return 0
		;;
	124) fail "$1" "the close of cmd did not return within ${4:-$SFS_T} s" ;;
	*) fail "$1" "writing cmd failed (status $rc): $(head -c 200 "$SFS_TMP/write.err" | tr '\n' ' ')" ;;
	esac
	return 1
}

# assert_lt A B MSG [UNIT]: A < B (integers)
assert_lt() {
	if [ "$1" -lt "$2" ]; then pass "$3"; else
		fail "$3" "$1${4:-} is not < $2${4:-}"
		return 1
	fi
}
