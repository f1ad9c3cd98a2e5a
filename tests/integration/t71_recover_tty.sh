#!/usr/bin/env bash
# t71_recover_tty: a session's terminal after a crash of the server (kill
# -9): its keeper starts it again, which takes the sessions from their
# last checkpoint, and a checkpoint has no descriptor, so the PTY is lost.
# vim was open over a shell whose lines scrolled off and that set a title;
# after the crash the terminal is an exited one (exit 129, signal 1: its
# shell got a hangup), screen, scrollback and title read as before, one
# line of the session's error file says what was lost, the shell and vim
# have ended, and a write to input starts a new shell that answers; a
# terminal that had exited before the crash is kept as it was, with no
# error line of the terminal's.
# Every wait is on a condition (expect, quiet, a poll with a deadline).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/rc
T=$S/tty
E=$MNT/sessions/ex
WD=$SFS_TMP/wd
mkdir -p "$WD"
check "mkdir sessions/rc" sfs_mkdir "$S"
check "mkdir sessions/ex" sfs_mkdir "$E"

# status_val KEY [TTYDIR]: the value of KEY in tty/status
status_val() { timeout 5 cat "${2:-$T}/status" 2>/dev/null | sed -n "s/^$1 //p"; }

# type_line TEXT: TEXT and Enter, written to tty/input
type_line() { sfs_write "$T/input" "$1"$'\n' 10; }

# assert_expect LABEL ERE: expect finds a line of the screen matching ERE
assert_expect() {
	if sfs_write "$T/expect" "$2 15000"$'\n' 5 &&
		timeout -k 2 25 cat "$T/expect" >/dev/null 2>"$SFS_TMP/expect.err"; then
		pass "$1"
	else
		fail "$1" "no line matches /$2/: $(head -c 200 "$SFS_TMP/expect.err"); screen: $(timeout 5 cat "$T/screen" | grep -v '^$' | tail -5 | tr '\n' '|')"
		return 1
	fi
}

# server_pid: the process that serves the mount (health's pid; the
# daemon's, SFS_PID, is its keeper's)
server_pid() { timeout 5 sed -n 's/^pid //p' "$MNT/health" 2>/dev/null; }

# ended PID: PID is gone or a zombie
ended() { ! sfs_alive "$1" || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

# 1. an exited terminal, and vim over a shell with a title and scrollback
check "a terminal that exits" sfs_write "$E/tty/input" $'echo "bye""-3"; exit 3\n' 10
ex_gone() { [ "$(status_val state "$E/tty")" = exited ]; }
check "its shell exited" sfs_until 15 ex_gone
timeout 5 cat "$E/tty/status" >"$SFS_TMP/ex.status"
timeout 5 cat "$E/tty/screen" >"$SFS_TMP/ex.screen"
type_line 'PS1="t71> "; for i in $(seq 1 60); do echo "line-$i"; done; printf "\033]2;t71 title\007"'
assert_expect "the shell printed its lines" '^line-60$'
printf 'first line\n' >"$WD/v.txt"
type_line "vim -N -u NONE -i NONE $WD/v.txt"
assert_expect "vim: started" '^~'
VPID=$(pgrep -f -- "-i NONE $WD/v.txt" | head -n 1)
TPID=$(status_val pid)
assert_true "vim and the shell run" "vim '$VPID', shell '$TPID'" test -n "$VPID" -a -n "$TPID"

# 2. the views once the output is quiet, and a checkpoint after them
mkdir -p "$SFS_TMP/before"
sfs_write "$T/quiet" 300 5
timeout 20 cat "$T/quiet" >/dev/null
for f in screen scrollback title; do timeout 5 cat "$T/$f" >"$SFS_TMP/before/$f"; done
RT=$(sed -n 's/.*spool budget: [0-9]* bytes in \(.*\)$/\1/p' "$SFS_TMP/daemon.log" | head -n 1)
# each checkpoint is a new file (renamed over the old): its inode number
# and mtime tell one from the next, where comparing with a mark file's
# mtime would not (two made in the same clock tick compare equal, the
# flake this replaced). Wait until no checkpoint is due
# (300 ms without a new one), so that the next one follows the change.
ckpt_ino() { stat -c '%i %y' "$RT/checkpoint" 2>/dev/null; }
ckpt_settled() {
	local a
	a=$(ckpt_ino)
	sleep 0.3
	[ "$a" = "$(ckpt_ino)" ]
}
sfs_until 10 ckpt_settled
INO0=$(ckpt_ino)
sfs_write "$T/quiet" 200 5 # a change that a checkpoint keeps
ckpt_newer() { [ "$(ckpt_ino)" != "$INO0" ]; }
check "a checkpoint is written after the last change" sfs_until 10 ckpt_newer

# 3. kill -9
SPID=$(server_pid)
assert_true "the server runs" "no server below $SFS_PID" test -n "$SPID"
kill -KILL "$SPID"
check "the server is started again after kill -9" \
	sfs_until 20 grep -q 'recovered after a crash' "$SFS_TMP/daemon.log"
sfs_note_server # the new server, for the cleanup
assert_eq "exited 129 1" "$(status_val state) $(status_val exit) $(status_val signal)" \
	"the terminal is an exited one (a hangup)"
for f in screen scrollback title; do
	assert_file_same "$T/$f" "$SFS_TMP/before/$f" "tty/$f is kept"
done
grep -q '^line-10$' "$SFS_TMP/before/scrollback" && grep -q '^~' "$SFS_TMP/before/screen"
assert_eq 0 $? "the views kept hold what was there (not both empty)"
assert_eq 1 "$(timeout 5 cat "$S/error" | grep -c 'tty: its terminal was lost')" \
	"one error line says the terminal was lost"
check "the terminal's shell has ended" sfs_until 10 ended "$TPID"
check "vim has ended" sfs_until 10 ended "$VPID"
assert_file_same "$E/tty/status" "$SFS_TMP/ex.status" "the exited terminal's status is kept (exit 3)"
assert_file_same "$E/tty/screen" "$SFS_TMP/ex.screen" "the exited terminal's screen is kept"
assert_eq 0 "$(timeout 5 cat "$E/error" | grep -c 'tty:')" "no tty error line for the exited terminal"

# 4. a new shell
check "a write to input starts a new shell" type_line 'echo "new""-shell"'
assert_expect "the new shell answers" '^new-shell$'
assert_eq running "$(status_val state)" "the terminal runs again"

sfs_done
