#!/usr/bin/env bash
# t70_upgrade_tty: a session's terminal survives an upgrade in place
# (echo upgrade > MNT/ctl). vim is open in tty/, over a shell whose lines
# scrolled off and that set a title; after the upgrade the server has the
# same pid (and a fresh program: its log says it is serving as upgrade 1),
# vim the same pid, and screen, scrollback, cursor, title, status,
# output and recording.cast read the same; a read of expect parked
# before the upgrade (its pattern in the open file) answers once the line
# comes after it; a read of recording.cast cut by the upgrade goes on
# where it was (its text equals a whole read); keys still reach vim
# (text typed, :wq writes the file and ends it); the screen under vim's
# alternate screen comes back; the shell goes on (typed lines echo, the
# recording grows). A second upgrade in the middle of a flood of output
# loses and doubles no byte of it, and keeps an exited terminal as it
# was (screen, status with its exit).
# Every wait is on a condition (expect, quiet, a poll with a deadline).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/up
T=$S/tty
WD=$SFS_TMP/wd
mkdir -p "$WD"
check "mkdir sessions/up" sfs_mkdir "$S"

# status_val KEY: the value of KEY in tty/status
status_val() { timeout 5 cat "$T/status" 2>/dev/null | sed -n "s/^$1 //p"; }

# type_line TEXT: TEXT and Enter, written to tty/input
type_line() { sfs_write "$T/input" "$1"$'\n' 10; }

# assert_expect LABEL ERE: expect finds a line of the screen matching ERE
assert_expect() { # LABEL PATTERN [MS, default 15000]
	local ms=${3:-15000}
	if sfs_write "$T/expect" "$2 $ms"$'\n' 5 &&
		timeout -k 2 $((ms / 1000 + 10)) cat "$T/expect" >/dev/null 2>"$SFS_TMP/expect.err"; then
		pass "$1"
	else
		fail "$1" "no line matches /$2/: $(head -c 200 "$SFS_TMP/expect.err"); screen: $(timeout 5 cat "$T/screen" | grep -v '^$' | tail -5 | tr '\n' '|')"
		return 1
	fi
}

# snapshot DIR: the terminal's views, once its output has been quiet
# for 300 ms (quiet's read returns the screen then)
snapshot() {
	mkdir -p "$1"
	sfs_write "$T/quiet" 300 5
	timeout 20 cat "$T/quiet" >"$1/quiet"
	local f
	for f in screen scrollback cursor title output recording.cast; do
		timeout 10 cat "$T/$f" >"$1/$f" 2>/dev/null
	done
	status_val state >"$1/state"
	status_val pid >"$1/pid"
	status_val altscreen >"$1/altscreen"
}

# server_pid: the process that serves the mount (health's pid; the
# daemon's, SFS_PID, is its keeper's)
server_pid() { timeout 5 sed -n 's/^pid //p' "$MNT/health" 2>/dev/null; }

# same_file LABEL NAME: NAME is the same in the before and after snapshots
same_file() {
	if cmp -s "$SFS_TMP/before/$2" "$SFS_TMP/after/$2"; then
		pass "$1"
	else
		fail "$1" "before $(sfs_show "$SFS_TMP/before/$2"), after $(sfs_show "$SFS_TMP/after/$2")"
	fi
}

# 1. a shell with lines that scrolled off and a title, then vim
type_line 'PS1="t70> "; for i in $(seq 1 60); do echo "line-$i"; done; printf "\033]2;t70 title\007"'
assert_expect "the shell printed its lines" '^line-60$'
printf 'first line\nsecond line\n' >"$WD/v.txt"
type_line "vim -N -u NONE -i NONE -c 'set ruler' $WD/v.txt"
assert_expect "vim: started" '^~'
check "keys to vim: insert text" sfs_write "$T/keys" 'i "typed before " Esc'
assert_expect "vim: the text is on the screen" '^typed before first line'
# vim leaves insert mode once it knows the Esc is a key of its own (its
# timeoutlen, a second)
normal_mode() { ! timeout 5 grep -q -- '-- INSERT --' "$T/screen"; }
check "vim: back in normal mode" sfs_until 15 normal_mode
# and it has drawn its ruler again (under the sanitizers that came more
# than quiet's 300 ms after the mode's message went, and showed only in
# the snapshot after the upgrade)
ruler() { timeout 5 grep -Eq '[0-9]+,[0-9]+ +All' "$T/screen"; }
check "vim: its ruler is drawn" sfs_until 15 ruler
VPID=$(pgrep -f -- "-i NONE -c set ruler $WD/v.txt" | head -n 1)
assert_true "vim runs" "no vim process" test -n "$VPID"
snapshot "$SFS_TMP/before"
assert_eq 1 "$(cat "$SFS_TMP/before/altscreen")" "vim is on the alternate screen"

# an open expect whose read waits for a line that comes after the upgrade
sfs_write "$T/expect" '^after-upgrade-[0-9]+$ 60000'$'\n' 5
timeout -k 2 60 cat "$T/expect" >"$SFS_TMP/parked" 2>"$SFS_TMP/parked.err" &
PARKED=$!
SFS_BG_PIDS+=("$PARKED")
# a read of recording.cast cut in two by the upgrade
exec {CASTFD}<"$T/recording.cast"
head -c 100 <&"$CASTFD" >"$SFS_TMP/cast.part"
# the parked read is in the daemon (the cat under timeout blocks in read)
parked() {
	local p
	p=$(pgrep -P "$PARKED" cat | head -n 1)
	[ -n "$p" ] && [ "$(cut -d' ' -f1 "/proc/$p/syscall" 2>/dev/null)" = 0 ]
}
check "a read of expect waits" sfs_until 10 parked

# 2. the upgrade
SPID=$(server_pid)
assert_true "the server runs" "no server below $SFS_PID" test -n "$SPID"
check "echo upgrade > ctl" sfs_write "$MNT/ctl" $'upgrade\n' 30
check "the daemon says it serves after the upgrade" \
	sfs_until 20 grep -q 'upgrade: serving (upgrade 1' "$SFS_TMP/daemon.log"
assert_eq "$SPID" "$(server_pid)" "the server has the same pid"
assert_eq 1 "$(timeout 5 sed -n 's/^upgrades //p' "$MNT/health")" "health counts the upgrade"
assert_true "the mount is still there" "no sessions/" timeout 5 test -d "$MNT/sessions"
snapshot "$SFS_TMP/after"
assert_eq "$VPID" "$(pgrep -f -- "-i NONE -c set ruler $WD/v.txt" | head -n 1)" "vim has the same pid"
for f in screen scrollback cursor title output recording.cast state pid altscreen quiet; do
	same_file "tty/$f is the same after the upgrade" "$f"
done
grep -q '^typed before first line' "$SFS_TMP/after/screen" &&
	grep -q '^line-10$' "$SFS_TMP/after/scrollback" &&
	grep -q 't70 title' "$SFS_TMP/after/title"
assert_eq 0 $? "the views hold what was there (not both empty)"
# (files/ counts what it kept: "0 lost" is nothing lost)
lost_lines() { grep -v '^#' "$SFS_TMP/daemon.log" | grep 'lost' | grep -v ', 0 lost (ESTALE), 0 refused'; }
if lost_lines | grep -q .; then
	fail "nothing was lost" "$(lost_lines | head -n 3 | tr '\n' '|')"
else
	pass "nothing was lost"
fi
assert_eq "" "$(timeout 5 cat "$S/error" 2>/dev/null)" "no error line in the session"

# the cut read of recording.cast goes on where it was: what it read is
# the start of a whole read made after it
cat <&"$CASTFD" >>"$SFS_TMP/cast.part"
exec {CASTFD}<&-
timeout 10 cat "$T/recording.cast" >"$SFS_TMP/cast.later"
head -c "$(wc -c <"$SFS_TMP/cast.part")" "$SFS_TMP/cast.later" >"$SFS_TMP/cast.whole"
if cmp -s "$SFS_TMP/cast.part" "$SFS_TMP/cast.whole" && [ -s "$SFS_TMP/cast.part" ]; then
	pass "a read of recording.cast goes on across the upgrade"
else
	fail "a read of recording.cast goes on across the upgrade" "$(sfs_show "$SFS_TMP/cast.part") vs $(sfs_show "$SFS_TMP/cast.whole")"
fi
if ! cmp -s "$SFS_TMP/after/recording.cast" "$SFS_TMP/cast.later"; then
	note "printed after the snapshot: $(cmp "$SFS_TMP/after/recording.cast" "$SFS_TMP/cast.later" 2>&1 | head -n 1); $(tail -c +"$(($(wc -c <"$SFS_TMP/after/recording.cast") - 20))" "$SFS_TMP/cast.later" | head -c 300 | cat -A | tr '\n' ' ')"
fi

# 3. keys still reach vim: the file is written and vim ends
check "keys to vim after the upgrade" sfs_write "$T/keys" 'A " and after" Esc ":wq" Enter'
vim_gone() { ! sfs_alive "$VPID"; }
check "vim ends with :wq" sfs_until 15 vim_gone
assert_eq "typed before first line and after" "$(head -n 1 "$WD/v.txt")" "vim wrote what was typed before and after"
assert_expect "the shell's screen comes back from under vim" '^line-60$'
assert_eq 0 "$(status_val altscreen)" "the alternate screen is off"

# the parked expect answers with a line that came after the upgrade
type_line 'echo "after-upgrade-""$((6*7))"'
if wait "$PARKED"; then
	assert_eq "after-upgrade-42" "$(cat "$SFS_TMP/parked")" "the read of expect parked before the upgrade answers"
else
	fail "the read of expect parked before the upgrade answers" "$(head -c 200 "$SFS_TMP/parked.err")"
fi
size0=$(wc -c <"$SFS_TMP/after/recording.cast")
assert_expect "the shell goes on" '^after-upgrade-42$'
assert_lt "$size0" "$(timeout 10 cat "$T/recording.cast" | wc -c)" "the recording grows after the upgrade"
assert_eq running "$(status_val state)" "the terminal runs"

# 4. a second upgrade in the middle of a flood of output (no byte lost or
# doubled), beside a terminal whose shell had exited (kept as exited)
E=$MNT/sessions/ex
check "mkdir sessions/ex" sfs_mkdir "$E"
check "a terminal that exits" sfs_write "$E/tty/input" $'echo "bye""-3"; exit 3\n' 10
ex_gone() { [ "$(timeout 5 sed -n 's/^state //p' "$E/tty/status")" = exited ]; }
check "its shell exited" sfs_until 15 ex_gone
timeout 5 cat "$E/tty/screen" >"$SFS_TMP/ex.before"
timeout 5 cat "$E/tty/status" >"$SFS_TMP/ex.status"
type_line 'seq 1 200000; echo "flood-""done"'
flooding() { timeout 5 cat "$T/status" | grep -qE '^output_bytes [0-9]{5,}'; }
check "the flood has begun" sfs_until 15 flooding
at_upgrade=$(status_val output_bytes)
check "echo upgrade > ctl, in the flood" sfs_write "$MNT/ctl" $'upgrade\n' 30
note "output_bytes: $at_upgrade before the upgrade, $(status_val output_bytes) after it, of some 1.3 MB"
check "the daemon serves after the second upgrade" \
	sfs_until 20 grep -q 'upgrade: serving (upgrade 2' "$SFS_TMP/daemon.log"
# (200,000 lines through libvterm: slow under the sanitizers and load)
assert_expect "the flood ends after the upgrade" '^flood-done$' 45000
seq 1 200000 >"$SFS_TMP/seq.want"
# (readline's bracketed paste off, ESC[?2004l, comes before the first)
timeout 20 cat "$T/output" | tr -d '\r' | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g' |
	grep -xE '[0-9]+' >"$SFS_TMP/seq.got"
if cmp -s "$SFS_TMP/seq.want" "$SFS_TMP/seq.got"; then
	pass "output has every line of the flood once, in order"
else
	fail "output has every line of the flood once, in order" "$(wc -l <"$SFS_TMP/seq.got") lines; first difference: $(cmp "$SFS_TMP/seq.want" "$SFS_TMP/seq.got" 2>&1 | head -n 1)"
fi
assert_file_same "$E/tty/screen" "$SFS_TMP/ex.before" "the exited terminal's screen is kept"
assert_file_same "$E/tty/status" "$SFS_TMP/ex.status" "the exited terminal's status is kept (exit 3)"
assert_eq "" "$(timeout 5 cat "$E/error" 2>/dev/null)" "no error line for the exited terminal"

sfs_done
