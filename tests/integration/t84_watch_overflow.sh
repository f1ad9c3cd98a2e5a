#!/usr/bin/env bash
# t84_watch_overflow: an overflow of fanotify's queue is never silent: a
# watch's events get {"type":"overflow"} and the log says files/' cache
# was emptied. The queue's bound is the kernel's max_queued_events at
# the daemon's start: this test lowers it to 64 for that start alone
# (and puts it back at once, and on any exit), so it runs alone
# (SERIAL in run.sh: another daemon started meanwhile would get the
# small queue too). The server is stopped while 500 files are made in
# the workspace, then let go.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

Q=/proc/sys/fs/fanotify/max_queued_events
if [ ! -w "$Q" ]; then
	pass "skip: $Q is not writable"
	SFS_DONE=1
	exit 0
fi
OLDQ=$(cat "$Q")
restore_q() { [ "$(cat "$Q")" = "$OLDQ" ] || echo "$OLDQ" >"$Q"; }
WS=$SFS_TMP/fs/ws
sfs_tmpfs "$SFS_TMP/fs" 64m
mkdir -p "$WS" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t84.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t84.conf
echo 64 >"$Q"
on_exit() {
	local rc=$?
	restore_q
	(exit "$rc")
	sfs_cleanup
}
trap on_exit EXIT
sfs_mount
trap on_exit EXIT # sfs_mount set its own
restore_q
assert_eq "$OLDQ" "$(cat "$Q")" "max_queued_events is back to $OLDQ"

W=$MNT/watches/w
check "mkdir watches/w" sfs_mkdir "$W"
check "its spec" sfs_write "$W/spec" $'path .\n'
timeout 2 cat "$W/events" >/dev/null 2>&1 # the first read: the watch runs
kill -STOP "$SFS_SERVER"
for ((i = 0; i < 500; i++)); do : >"$WS/f$i"; done
kill -CONT "$SFS_SERVER"
has_overflow() { timeout 3 cat "$W/events" 2>/dev/null | grep -qxF '{"type":"overflow"}'; }
check "the watch's events say overflow" sfs_until 10 has_overflow
assert_file_match "$SFS_TMP/daemon.log" "fanotify's queue overflowed" "the log says the queue overflowed"
assert_eq "1" "$(timeout 5 ls "$MNT/files" | grep -c '^f499$')" \
	"files/ shows what was made meanwhile (its cache emptied)"
sfs_done
