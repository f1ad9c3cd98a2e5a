#!/usr/bin/env bash
# t53_live_lock: the sweep of dead instances' spool directories
# (RUNTIME/sessionfs/PID) goes by the flock each live instance holds on
# PID/live, not by kill(PID, 0), which says nothing about a daemon of
# another pid namespace sharing the runtime directory (containers sharing
# /dev/shm): a directory whose live is locked stays, even when no process
# has its number here; one whose live is free goes; one without live (an
# older sessionfs) goes when its PID runs no process, as before. The
# daemon's own directory is RT/sessionfs/PID and holds its lock.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

RT=$SFS_TMP/rt
TOP=$RT/sessionfs
mkdir -p "$TOP"
# numbers that name no process here (above pid_max: never a pid)
HELD=$TOP/2147483640
FREE=$TOP/2147483641
OLD=$TOP/2147483642
mkdir "$HELD" "$FREE" "$OLD"
: >"$HELD/live"
: >"$FREE/live"
echo x >"$OLD/spool"
# (started from a command substitution: not a job of this shell, whose
# kill at exit would be reported)
SFS_BG_PIDS+=("$(flock -x "$HELD/live" sleep 60 >/dev/null 2>&1 & echo $!)")
for ((i = 0; i < 50; i++)); do
	flock -n -x "$HELD/live" true 2>/dev/null || break
	sleep 0.1
done

CFG=$SFS_TMP/rt.conf
printf 'runtime_dir = "%s";\n' "$RT" >"$CFG"
if sfs_start_mount "live lock" -c "$CFG"; then
	assert_true "a directory whose live is held (another pid namespace's daemon) stays" \
		"it was removed" test -d "$HELD"
	assert_true "a directory whose live is free is removed" "it is still there" test ! -e "$FREE"
	assert_true "a directory without live whose number runs no process is removed" \
		"it is still there" test ! -e "$OLD"
	assert_true "the daemon's own directory is RT/sessionfs/PID" "$(ls "$TOP" | tr '\n' ' ')" \
		test -d "$TOP/$SFS_SERVER"
	assert_true "the daemon holds the lock of its own live" "flock -n got it" \
		bash -c '! flock -n -x "$1" true' _ "$TOP/$SFS_SERVER/live"
	OWN=$TOP/$SFS_SERVER
	assert_eq "hi" "$(sfs_run_out "$MNT/sessions/default" 'echo hi')" "runs work"
	sfs_check_umount "live lock"
fi
assert_true "after the unmount the daemon's directory is gone" "it is still there" \
	test -n "${OWN:-}" -a ! -e "${OWN:-/}"
SFS_DONE=1
exit 0
