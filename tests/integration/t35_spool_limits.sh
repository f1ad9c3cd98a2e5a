#!/usr/bin/env bash
# t35_spool_limits: no output is lost silently, and no runaway takes the
# host. The runtime_dir is an 8 MiB tmpfs mounted by the test, so the
# spool budget (by default half of it: 4 MiB) and a full filesystem are
# both reached; max_output_bytes is 3 MiB.
# - a run printing 10 MB is cut at 3 MiB (truncated 1, truncated_reason
#   stdout:limit, result.json stdoutTruncatedReason "limit", one line in
#   error), its stderr marker after it is kept;
# - the next such run gets 1 MiB (the budget is spent: stdout:budget) and
#   its marker is still kept (each stream keeps 64 KiB past the budget);
# - with the tmpfs filled from outside, a command fails its close with
#   ENOSPC and the session's exit/status show that run (state error, exit
#   126), not the one before; a run whose output hits the full filesystem
#   says stdout:nospace; once space is freed runs work again;
# - a procs/ `yes` stops growing at max_output_bytes, says truncated and
#   keeps running until killed;
# - 300 named runs are bounded by history (20 here; finished named runs
#   are counted apart from numbered ones);
# - max_output_bytes and max_spool_bytes out of range are refused with
#   FILE:LINE.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

unset SESSIONFS_CONFIG
MIB=1048576
RT=$SFS_TMP/rt # the small tmpfs
RT_MOUNTED=

# the EXIT trap: the daemon goes first, then the tmpfs it spooled to
# shellcheck disable=SC2317
t35_cleanup() {
	local rc=$?
	[ -n "$SFS_PID" ] && sfs_umount
	if [ -n "$RT_MOUNTED" ]; then
		timeout 10 umount "$RT" 2>/dev/null || timeout 10 umount -l "$RT"
	fi
	(exit "$rc")
	sfs_cleanup
}
trap t35_cleanup EXIT

# ---------------------------------------------------------------- refusals

refuse() { # LABEL LINE...: a config with these lines exits 2 naming FILE:LINE
	local label=$1 cfg=$SFS_TMP/bad.conf out rc m
	shift
	printf '%s\n' "$@" >"$cfg"
	m=$(mktemp -d "$SFS_TMP/ref.XXXXXX")
	timeout 10 "$SFS_BIN" -f -c "$cfg" "$m" >/dev/null 2>"$SFS_TMP/bad.err" </dev/null {SFS_OUT}>&- {SFS_ERR}>&-
	rc=$?
	out=$(head -c 300 "$SFS_TMP/bad.err")
	if [ "$rc" -eq 2 ] && grep -q "^$cfg:2: " "$SFS_TMP/bad.err"; then
		pass "$label: refused with FILE:LINE"
	else
		fail "$label: refused with FILE:LINE" "status $rc, stderr: $out"
		sfs_mounted "$m" && timeout 10 fusermount3 -u "$m"
	fi
	rmdir "$m" 2>/dev/null
}
refuse "max_output_bytes = 2^50 + 1" '# t35' 'max_output_bytes = 1125899906842625;'
refuse "max_spool_bytes = 1000 (under 1 MiB)" '# t35' 'max_spool_bytes = 1000;'
refuse "max_spool_bytes = 0" '# t35' 'max_spool_bytes = 0;'

# ---------------------------------------------------------------- mount

mkdir -p "$RT"
if ! timeout 10 mount -t tmpfs -o size=8m tmpfs "$RT"; then
	fail "mount an 8 MiB tmpfs" "mount failed"
	exit 1
fi
RT_MOUNTED=1
pass "mount an 8 MiB tmpfs"
CFG=$SFS_TMP/t35.conf
printf '%s\n' "runtime_dir = \"$RT\";" "max_output_bytes = $((3 * MIB));" \
	'history = 20;' >"$CFG"
sfs_start_mount "config with an 8 MiB runtime_dir" -c "$CFG" || exit 1

S=$MNT/sessions/a
check "mkdir sessions/a" sfs_mkdir "$S"

# size FILE: its stat size on the mount
size() { timeout 5 stat -c %s "$1"; }
# field FILE KEY: the value of KEY in a status file
field() { timeout 5 cat "$1" | sed -n "s/^$2 //p"; }

# 1. cut at max_output_bytes, the marker on stderr kept
BIG='head -c 10000000 /dev/zero; echo marker >&2'
assert_run_ok "10 MB run" "$S" "$BIG" 30
assert_eq $((3 * MIB)) "$(size "$S/stdout")" "10 MB run: stdout kept 3 MiB"
assert_file_eq "$S/stderr" $'marker\n' "10 MB run: the stderr marker is kept"
assert_file_match "$S/status" '^truncated 1$' "10 MB run: truncated 1"
assert_file_match "$S/status" '^truncated_reason stdout:limit$' "10 MB run: truncated_reason stdout:limit"
assert_file_match "$S/result.json" '"stdoutTruncated":true' "10 MB run: result.json stdoutTruncated"
assert_file_match "$S/result.json" '"stdoutTruncatedReason":"limit"' "10 MB run: result.json reason limit"
assert_file_match "$S/result.json" '"stderrTruncatedReason":null' "10 MB run: result.json stderr reason null"
assert_file_match "$S/error" 'Z run 1: stdout cut at 3145728 bytes: max_output_bytes' "10 MB run: a line in error"
assert_true "10 MB run: a line in the log" "not in the daemon's log" \
	grep -q 'run 1: stdout cut at' "$SFS_TMP/daemon.log"

# 2. the budget (4 MiB) is spent after 1 MiB more
assert_run_ok "second 10 MB run" "$S" "$BIG" 30
n=$(size "$S/stdout")
assert_true "second run: stdout stopped at the budget" "$n bytes" \
	test "$n" -ge $((MIB - 65536)) -a "$n" -le $((MIB + 65536))
assert_file_eq "$S/stderr" $'marker\n' "second run: the marker is kept past the budget"
assert_file_match "$S/status" '^truncated_reason stdout:budget$' "second run: truncated_reason stdout:budget"
assert_file_match "$S/error" 'Z run 2: stdout cut at [0-9]+ bytes: the spool budget' "second run: a line in error"
assert_run_ok "a small run still works" "$S" 'echo small'
assert_file_eq "$S/stdout" $'small\n' "small run: its stdout"
assert_file_match "$S/status" '^truncated_reason -$' "small run: truncated_reason -"

# 3. a full filesystem: the close fails, nothing shows the old run
timeout 20 dd if=/dev/zero of="$RT/filler" bs=64k 2>/dev/null
assert_errno ENOSPC "full runtime_dir: the close of cmd fails with ENOSPC" \
	bash -c 'printf "echo NEW\n" | cat >"$1"' _ "$S/cmd"
assert_file_eq "$S/exit" $'126\n' "full: exit is the failed run's 126"
assert_file_match "$S/status" '^state error$' "full: status says state error"
assert_file_match "$S/status" '^run 4$' "full: status is of the new run 4"
assert_file_match "$S/error" 'Z run 4: cannot queue the command: No space left on device' "full: a line in error"
check "full: mkdir of a fresh session" sfs_mkdir "$MNT/sessions/fresh"
assert_errno ENOSPC "full: a fresh session's command fails with ENOSPC" \
	bash -c 'printf "echo NEW\n" | cat >"$1"' _ "$MNT/sessions/fresh/cmd"
assert_file_eq "$MNT/sessions/fresh/exit" $'126\n' "full: the fresh session's exit is 126"

# 4. space freed by rmdir: runs work again; output hitting the full
#    filesystem says nospace
check "rmdir sessions/a frees its spool" timeout 10 rmdir "$S"
assert_run_ok "after the rmdir: a run works" "$MNT/sessions/fresh" 'echo again'
assert_file_eq "$MNT/sessions/fresh/stdout" $'again\n' "after the rmdir: its stdout"
F=$MNT/sessions/fresh
# (the run fills the filesystem itself: its command must be written first)
assert_run_ok "a run on a full filesystem" "$F" \
	"dd if=/dev/zero of=$(sfs_q "$RT/filler2") bs=4k 2>/dev/null; head -c 2000000 /dev/zero; echo marker >&2" 30
assert_file_match "$F/status" '^truncated_reason stdout:nospace( stderr:nospace)?$' "full filesystem: truncated_reason stdout:nospace"
assert_file_match "$F/result.json" '"stdoutTruncatedReason":"nospace"' "full filesystem: result.json reason nospace"
assert_file_match "$F/error" 'stdout cut at [0-9]+ bytes: No space left on device' "full filesystem: a line in error"
rm -f "$RT/filler" "$RT/filler2"
assert_run_ok "space freed: a run works" "$F" 'echo back; echo e >&2'
assert_file_eq "$F/stdout" $'back\n' "space freed: stdout"
assert_file_eq "$F/stderr" $'e\n' "space freed: stderr"
assert_file_match "$F/status" '^truncated 0$' "space freed: truncated 0"
check "rmdir sessions/fresh" timeout 10 rmdir "$F"

# 5. a runaway process stops growing at the limit, not killed
P=$MNT/sessions/p
check "mkdir sessions/p" sfs_mkdir "$P"
check "mkdir procs/y" sfs_mkdir "$P/procs/y"
check "procs/y: start yes" sfs_write "$P/procs/y/cmd" 'yes'
grown() { [ "$(size "$P/procs/y/stdout")" -ge $((3 * MIB)) ]; }
assert_true "procs/y: stdout reaches 3 MiB" "$(size "$P/procs/y/stdout") bytes" sfs_until 20 grown
sleep 0.5
assert_eq $((3 * MIB)) "$(size "$P/procs/y/stdout")" "procs/y: stdout stops at max_output_bytes"
assert_file_match "$P/procs/y/status" '^state running$' "procs/y: still running"
assert_file_match "$P/procs/y/status" '^truncated 1$' "procs/y: truncated 1"
assert_file_match "$P/procs/y/status" '^truncated_reason stdout:limit$' "procs/y: reason limit"
assert_file_match "$P/error" 'Z procs/y: stdout cut at 3145728 bytes' "procs/y: a line in error"
check "procs/y: kill" sfs_write "$P/procs/y/ctl" 'kill'
check "rmdir procs/y" timeout 10 rmdir "$P/procs/y"

# 6. named runs are bounded by history
mk300() {
	local i
	for ((i = 1; i <= 300; i++)); do
		mkdir "$P/runs/n$i" && printf 'true\n' | cat >"$P/runs/n$i/cmd" || return 1
	done
}
check "300 named runs" timeout 100 bash -c "$(declare -f mk300); P=$(sfs_q "$P"); mk300"
n=$(timeout 5 ls "$P/runs" | grep -c '^n')
assert_true "named runs are bounded by history (20)" "$n named runs left" test "$n" -le 20
assert_true "the newest named run is kept" "runs/n300 missing" test -e "$P/runs/n300/exit"
assert_true "the oldest named run is gone" "runs/n1 still there" test ! -e "$P/runs/n1"
n=$(find "$RT" -type f | wc -l)
assert_true "spool files bounded" "$n files in the runtime_dir" test "$n" -le 100

sfs_done
