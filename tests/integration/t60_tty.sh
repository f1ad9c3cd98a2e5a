#!/usr/bin/env bash
# t60_tty: a session's terminal, sessions/S/tty/. Nothing starts it but a
# write to input or keys (ls, stat, status, reads of screen, output and
# stream, grep -r and cp -r do not: before the start, screen and output
# are empty and stream is EOF at once); `echo hi` shows on the screen; a read -p prompt; the
# python3 REPL (1+41 shows 42); vim edits a file (i, text, Esc, :wq);
# less of a 1000-line file, PgDn and q (the alternate screen on and off in
# status); top left with q; C-c ends a sleep; a resize seen by stty size
# and tput cols; title (OSC 0), a hidden cursor, scrollback and its
# clearing; UTF-8, wide characters and 256-colour escapes leave the
# text alone; expect returns the line of a prompt printed 2 s later, fails
# with ETIMEDOUT when nothing comes and with EINTR at once on Ctrl-C, its
# timeout counting from the first read;
# quiet returns once the output has stopped; output read at an offset
# resumes there; stream has output's size and offsets (tail -f follows
# it), and waits at its end; recording.cast is asciicast
# v2 whose "o" events put together are output; poll on stream, expect and
# quiet; two sessions' terminals are apart (a size written before the
# start); no daemon descriptor in the terminal's shell; ctl restart and
# kill; the root's killall; the shell's exit in status, its output kept;
# a blocking write past the 1 MiB input queue waits for room (EAGAIN only
# with O_NONBLOCK, EINTR on Ctrl-C); bad keys, sizes and regexes are EINVAL
# with an error line, and so are a width below 2, more than 100,000
# cells, back-references and huge patterns; a REP before any character
# (libvterm 0.1.4 loops on it) leaves the daemon answering, one after
# ASCII repeats it, and so do C1 code points and a control in a DCS; the
# slave is group tty's;
# rmdir ends the terminal and what it started.
# Every wait is on a condition (expect, or a poll with a deadline).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/t
T=$S/tty
WD=$SFS_TMP/wd
mkdir -p "$WD"
check "mkdir sessions/t" sfs_mkdir "$S"

# status_val KEY [TTYDIR]: the value of KEY in tty/status
status_val() { timeout 5 cat "${2:-$T}/status" 2>/dev/null | sed -n "s/^$1 //p"; }

# type_line TEXT [TTYDIR]: TEXT and Enter, written to tty/input
type_line() { sfs_write "${2:-$T}/input" "$1"$'\n' 10; }

# tty_expect ERE [MS] [TTYDIR]: the screen line that expect returns (status
# of the read: 0, or cat's on ETIMEDOUT and the like)
tty_expect() {
	local d=${3:-$T}
	sfs_write "$d/expect" "$1 ${2:-8000}"$'\n' 5 || return 1
	timeout -k 2 20 cat "$d/expect" 2>"$SFS_TMP/expect.err"
}

# assert_expect LABEL ERE [MS] [TTYDIR]: expect finds a line matching ERE
assert_expect() {
	local line
	if line=$(tty_expect "$2" "${3:-8000}" "${4:-$T}"); then
		pass "$1"
	else
		fail "$1" "no line matches /$2/: $(head -c 200 "$SFS_TMP/expect.err"); screen: $(timeout 5 cat "${4:-$T}/screen" | grep -v '^$' | tail -5 | tr '\n' '|')"
		return 1
	fi
}

# at_shell [TTYDIR]: the terminal's foreground process group is its shell
# (a full-screen program has ended: what is typed now goes to the shell,
# not to a program that flushes its input as it leaves)
at_shell() {
	local pid stat
	pid=$(status_val pid "${1:-$T}")
	stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	read -r _ _ _ _ _ tpgid _ <<<"$stat"
	[ "$tpgid" = "$pid" ]
}

# sync_tty LABEL [TTYDIR]: the shell has read everything typed so far (it
# echoes a marker that its typed line does not show as such)
SYNC=0
sync_tty() {
	SYNC=$((SYNC + 1))
	sfs_until 10 at_shell "${2:-$T}"
	type_line "echo \"sy\"\"nc-$SYNC\"" "${2:-$T}"
	assert_expect "$1" "^sync-$SYNC\$" 10000 "${2:-$T}"
}

# 1. nothing starts it but its use
assert_eq "input keys output stream screen scrollback cursor size title status ctl expect quiet ready recording.cast" \
	"$(find "$T" -mindepth 1 -printf '%f ' | sed 's/ $//')" "ls tty/ lists its files in order"
stat "$T"/* >/dev/null 2>&1
assert_eq "none 0" "$(status_val state) $(status_val pid)" "ls, stat and status start nothing"
assert_eq "" "$(timeout 5 cat "$T/screen")" "before the start: screen is empty"
assert_eq "" "$(timeout 5 cat "$T/output")" "before the start: output is empty"
t0=$(now_ms)
assert_eq "" "$(timeout 5 cat "$T/stream")" "before the start: stream is empty"
assert_lt $(($(now_ms) - t0)) 3000 "before the start: stream is EOF at once" " ms"
t0=$(now_ms)
timeout 20 grep -rq never-there-t60 "$S" 2>/dev/null
timeout 20 cp -r "$T" "$SFS_TMP/ttycopy" 2>/dev/null
assert_lt $(($(now_ms) - t0)) 5000 "grep -r and cp -r of the session return at once" " ms"
assert_eq "none 0" "$(status_val state) $(status_val pid)" "reads of screen, output, stream, grep -r, cp -r start nothing"
assert_eq "80 24" "$(timeout 5 cat "$T/size")" "size is 80x24 before the start"

# 2. echo hi
check "write tty/input starts the terminal" type_line 'PS1="t60> "; echo "h""i"'
assert_expect "the screen shows hi" '^hi$'
assert_file_match "$T/screen" '^hi$' "screen has the line hi"
assert_eq running "$(status_val state)" "status: state running"
TPID=$(status_val pid)
assert_true "status: a pid" "pid '$TPID'" test -n "$TPID" -a -d "/proc/$TPID"
assert_file_match "$T/cursor" '^[0-9]+ [0-9]+ visible$' "cursor is ROW COL visible"

# the terminal's shell: a tty on 0-2, nothing of the daemon's
fds=$(find "/proc/$TPID/fd" -mindepth 1 -printf '%l\n' 2>/dev/null | sort -u | tr '\n' ' ')
case $fds in
*fuse* | *socket* | *pipe* | *ptmx*) fail "the shell holds no daemon descriptor" "$fds" ;;
*) pass "the shell holds no daemon descriptor ($fds)" ;;
esac
assert_eq "TERM=xterm-256color" "$(tr '\0' '\n' <"/proc/$TPID/environ" | grep '^TERM=')" "TERM=xterm-256color"
assert_true "bash -i without rc files" "$(tr '\0' ' ' <"/proc/$TPID/cmdline")" \
	grep -q -- '--norc' "/proc/$TPID/cmdline"

# 3. read -p
type_line 'read -p "Your name? " n; echo "got:$n"'
assert_expect "read -p: the prompt shows" '^Your name\? $|^Your name\?$'
type_line 'bob'
assert_expect "read -p: the answer is read" '^got:bob$'

# 4. the python3 REPL
if command -v python3 >/dev/null; then
	type_line 'python3 -q'
	assert_expect "python3: its prompt" '^>>>'
	check "keys: text and Enter" sfs_write "$T/keys" '"1+41" Enter'
	assert_expect "python3: 1+41 shows 42" '^42$'
	sfs_write "$T/keys" 'C-d'
	sync_tty "python3 ends with C-d"
fi

# 5. vim edits a file
if command -v vim >/dev/null; then
	type_line "vim -N -u NONE -i NONE $WD/v.txt"
	assert_expect "vim: starts" '^~'
	check "keys to vim" sfs_write "$T/keys" 'i "hello from vim" Esc ":wq" Enter'
	sync_tty "vim: back at the shell"
	assert_eq "hello from vim" "$(cat "$WD/v.txt" 2>/dev/null)" "vim: the file is changed"
fi

# 6. less of a 1000-line file, PgDn, q; the alternate screen
seq 1000 >"$WD/f.txt"
type_line "less $WD/f.txt"
assert_expect "less: shows the first page" '^23$'
assert_eq 1 "$(status_val altscreen)" "status: altscreen 1 in less"
sfs_write "$T/keys" 'PgDn'
assert_expect "less: PgDn shows the next page" '^4[0-9]$'
sfs_write "$T/keys" 'q'
sync_tty "less: q ends it"
assert_eq 0 "$(status_val altscreen)" "status: altscreen 0 after less"

# 7. top, left with q
if command -v top >/dev/null; then
	type_line 'top -d 1'
	assert_expect "top: its header" '^top - '
	sfs_write "$T/keys" 'q'
	sync_tty "top: q ends it"
fi

# 8. C-c ends a sleep
type_line 'sleep 100'
sfs_until 5 pgrep -P "$TPID" -x sleep >/dev/null
SL=$(pgrep -P "$TPID" -x sleep | head -1)
assert_true "sleep 100 runs in the terminal" "no sleep child of $TPID" test -n "$SL"
t0=$(now_ms)
sfs_write "$T/keys" 'C-c'
sync_tty "C-c: the shell is back"
assert_lt $(($(now_ms) - t0)) 5000 "C-c: the sleep ended at once" " ms"
assert_true "C-c: the sleep is gone" "pid $SL lives" sfs_wait_gone "${SL:-0}" 2

# 9. resize
check "write size 100 30" sfs_write "$T/size" $'100 30\n'
assert_eq "100 30" "$(timeout 5 cat "$T/size")" "size reads 100 30"
type_line 'stty size; tput cols'
assert_expect "stty size sees 30 100" '^30 100$'
assert_expect "tput cols sees 100" '^100$'
assert_eq "100 30" "$(status_val cols) $(status_val rows)" "status: cols 100 rows 30"

# 10. the alternate screen on and off
type_line 'tput smcup'
sfs_until 5 test "$(status_val altscreen)" = 1
assert_eq 1 "$(status_val altscreen)" "tput smcup: altscreen 1"
type_line 'tput rmcup'
sfs_until 5 test "$(status_val altscreen)" = 0
assert_eq 0 "$(status_val altscreen)" "tput rmcup: altscreen 0"

# 11. UTF-8, wide characters, 256 colours
type_line 'printf "\e[38;5;196mred\e[0m \e[48;5;21mblue\e[0m \303\251t\303\251 \344\270\226\347\225\214 end\n"'
assert_expect "UTF-8, wide characters and colours leave the text" '^red blue été 世界 end$'

# title, cursor visibility, scrollback
type_line 'printf "\e]0;t60-title\a"; tput civis'
sfs_until 5 grep -q 'hidden' "$T/cursor"
assert_eq "t60-title" "$(timeout 5 cat "$T/title")" "title: OSC 0 sets it"
assert_file_match "$T/cursor" '^[0-9]+ [0-9]+ hidden$' "cursor: tput civis hides it"
type_line 'tput cnorm; seq -f "sb-%g" 1 60'
assert_expect "60 lines printed" '^sb-60$'
assert_file_match "$T/scrollback" '^sb-1$' "scrollback keeps what scrolled off"
assert_true "scrollback is oldest first" "$(grep -n '^sb-' "$T/scrollback" | head -2 | tr '\n' ' ')" \
	test "$(grep -m1 '^sb-' "$T/scrollback")" = sb-1
check "ctl clear-scrollback" sfs_write "$T/ctl" $'clear-scrollback\n'
assert_eq "" "$(timeout 5 cat "$T/scrollback")" "clear-scrollback empties it"

# 12. expect: a prompt 2 s later, ETIMEDOUT, EINTR
type_line 'sleep 2; echo "rea""dy-$((6 * 7))"'
t0=$(now_ms)
line=$(tty_expect '^ready-42$' 10000)
el=$(($(now_ms) - t0))
assert_eq "ready-42" "$line" "expect returns the line printed 2 s later"
assert_true "expect waited for it ($el ms)" "$el ms" test "$el" -ge 1200 -a "$el" -lt 9000
t0=$(now_ms)
tty_expect 'never-printed-t60' 500 >/dev/null
rc=$?
el=$(($(now_ms) - t0))
if [ "$rc" -ne 0 ] && grep -q 'timed out' "$SFS_TMP/expect.err"; then
	pass "expect: ETIMEDOUT when nothing comes"
else
	fail "expect: ETIMEDOUT when nothing comes" "status $rc: $(cat "$SFS_TMP/expect.err")"
fi
assert_lt "$el" 4000 "expect: the timeout is about 500 ms ($el ms)" " ms"
sfs_write "$T/expect" $'never-printed-t60 30000\n'
timeout 20 cat "$T/expect" >/dev/null 2>&1 {SFS_OUT}>&- {SFS_ERR}>&- &
CP=$!
sfs_until 5 grep -q 'fuse' "/proc/$CP/wchan" 2>/dev/null
sleep 0.2 # the read is parked by now, or soon; the point is it returns
t0=$(now_ms)
kill -INT "$CP"
sfs_wait_gone "$CP" 3
assert_true "expect: Ctrl-C returns at once" "cat $CP still waits" sfs_wait_gone "$CP" 0
assert_lt $(($(now_ms) - t0)) 3000 "expect: Ctrl-C returns within 3 s" " ms"
# the timeout counts from the first read, not from the open: opened, then
# 2.2 s (longer than its timeout) before the read, and the line printed
# 0.5 s after it
sfs_write "$T/expect" $'^late-1$ 2000\n'
res=$(timeout 20 python3 - "$T" <<'EOF2'
import os, sys, time
t = sys.argv[1]
e = os.open(t + "/expect", os.O_RDONLY)
time.sleep(2.2)  # the delay under test: more than the timeout
with open(t + "/input", "w") as f:
    f.write('sleep 0.5; echo "la""te-1"\n')
try:
    print(os.read(e, 100).decode().strip())
except OSError as x:
    print(x.strerror)
EOF2
)
assert_eq "late-1" "$res" "expect: the timeout counts from the first read"

# 13. quiet
check "write quiet 300" sfs_write "$T/quiet" $'300\n'
type_line 'for i in 1 2 3 4 5; do echo "qu""iet-$i"; sleep 0.15; done'
t0=$(now_ms)
sfs_cat "$T/quiet" "$SFS_TMP/quiet.txt" 15
el=$(($(now_ms) - t0))
assert_true "quiet returns after the output stopped ($el ms)" "$el ms" test "$el" -ge 800
assert_true "quiet gives the screen with the last line" "$(sfs_show "$SFS_TMP/quiet.txt")" \
	grep -q '^quiet-5$' "$SFS_TMP/quiet.txt"

# 14. output at an offset; stream is output that waits at its end
N=$(stat -c %s "$T/output")
assert_eq "$N" "$(stat -c %s "$T/stream")" "stream's stat size is output's"
timeout 20 cat "$T/stream" >"$SFS_TMP/stream.txt" 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
SP=$!
timeout 20 tail -n 0 -f "$T/stream" >"$SFS_TMP/tailf.txt" 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
TP=$!
# the marker comes once cat and tail have stream open
stream_open() { find "/proc/$1/fd" -mindepth 1 -printf '%l\n' 2>/dev/null | grep -q 'tty/stream$'; }
sfs_until 5 stream_open "$SP"
sfs_until 5 stream_open "$TP"
type_line 'echo "off""set-mark"'
assert_expect "the marker is on the screen" '^offset-mark$'
python3 - "$T/output" "$N" >"$SFS_TMP/off.txt" <<'EOF'
import sys
with open(sys.argv[1], 'rb') as f:
    whole = f.read()
with open(sys.argv[1], 'rb') as f:
    f.seek(int(sys.argv[2]))
    part = f.read()
print('same' if part == whole[int(sys.argv[2]):] and part else 'differ %d %d' % (len(part), len(whole)))
print('mark' if b'offset-mark' in part and b'sync-1' not in part else 'nomark')
EOF
assert_eq "same mark" "$(tr '\n' ' ' <"$SFS_TMP/off.txt" | sed 's/ $//')" "output read at an offset resumes there"
sfs_until 5 grep -q 'offset-mark' "$SFS_TMP/stream.txt"
assert_true "stream follows the output" "$(sfs_show "$SFS_TMP/stream.txt")" grep -q 'offset-mark' "$SFS_TMP/stream.txt"
assert_true "stream starts where output does" "$(sfs_show "$SFS_TMP/stream.txt")" \
	grep -q "ready-42" "$SFS_TMP/stream.txt"
sfs_until 10 grep -q 'offset-mark' "$SFS_TMP/tailf.txt"
assert_true "tail -f follows stream" "$(sfs_show "$SFS_TMP/tailf.txt")" grep -q 'offset-mark' "$SFS_TMP/tailf.txt"
assert_true "tail -n 0 -f starts at its open" "$(sfs_show "$SFS_TMP/tailf.txt")" \
	bash -c '! grep -q "ready-42" "$1"' _ "$SFS_TMP/tailf.txt"
kill "$TP" 2>/dev/null

# poll: stream is not readable until output comes; expect once a row
# matches; quiet once the output stops
res=$(timeout 20 python3 - "$T" <<'EOF'
import os, select, sys
t = sys.argv[1]
def readable(fd, ms):
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(ms))
fd = os.open(t + "/stream", os.O_RDONLY | os.O_NONBLOCK)
try:
    while os.read(fd, 65536):
        pass
except BlockingIOError:
    pass
out = ["idle" if not readable(fd, 300) else "busy"]
with open(t + "/input", "w") as f:
    f.write('echo "po""ll-mark"\n')
out.append("stream" if readable(fd, 5000) else "nostream")
with open(t + "/expect", "w") as f:
    f.write("^poll-mark$ 5000\n")
e = os.open(t + "/expect", os.O_RDONLY)
out.append("expect" if readable(e, 5000) else "noexpect")
out.append(os.read(e, 100).decode().strip())
q = os.open(t + "/quiet", os.O_RDONLY)
out.append("quiet" if readable(q, 5000) else "noquiet")
print(" ".join(out))
EOF
)
assert_eq "idle stream expect poll-mark quiet" "$res" "poll: stream, expect and quiet"

# 15. recording.cast
timeout 10 cat "$T/output" >"$SFS_TMP/out.bin"
timeout 10 cat "$T/recording.cast" >"$SFS_TMP/rec.cast"
res=$(python3 - "$SFS_TMP/rec.cast" "$SFS_TMP/out.bin" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding='utf-8').read().splitlines()
h = json.loads(lines[0])
ev = [json.loads(l) for l in lines[1:]]
o = ''.join(e[2] for e in ev if e[1] == 'o')
# JSON strings hold text: a byte that is not UTF-8 is U+FFFD there
out = open(sys.argv[2], 'rb').read().decode('utf-8', 'replace')
ok = (h['version'] == 2 and h['width'] == 80 and h['height'] == 24
      and 'timestamp' in h and 'env' in h)
print('header' if ok else 'badheader %r' % h)
print('output' if out == o else 'differ %d %d' % (len(o), len(out)))
print('resize' if ['100x30'] == [e[2] for e in ev if e[1] == 'r'] else 'noresize')
ts = [e[0] for e in ev]
print('ordered' if ts == sorted(ts) else 'unordered')
EOF
)
assert_eq "header output resize ordered" "$(echo "$res" | tr '\n' ' ' | sed 's/ $//')" \
	"recording.cast is asciicast v2; its o events are output"

# 16. two sessions
S2=$MNT/sessions/t2
check "mkdir sessions/t2" sfs_mkdir "$S2"
check "size written before the start" sfs_write "$S2/tty/size" $'90 20\n'
assert_eq none "$(status_val state "$S2/tty")" "writing size starts nothing"
type_line 'echo "two""-only"; stty size' "$S2/tty"
assert_expect "the second terminal shows its line" '^two-only$' 8000 "$S2/tty"
assert_expect "it starts at the size written" '^20 90$' 8000 "$S2/tty"
assert_true "the first terminal does not" "it does" bash -c '! grep -q "^two-only$" "$1"' _ "$T/screen"
T2PID=$(status_val pid "$S2/tty")
assert_true "each session its own shell" "$TPID vs $T2PID" test -n "$T2PID" -a "$T2PID" != "$TPID"
assert_eq "90 20" "$(timeout 5 cat "$S2/tty/size")" "the second terminal is 90x20"
assert_eq "100 30" "$(timeout 5 cat "$T/size")" "the first is still 100x30"

# 17. refusals: EINVAL and an error line each
assert_write_errno EINVAL "keys: an unknown name is EINVAL" "$T/keys" 'Enter Bogus'
assert_write_errno EINVAL "size: 0 rows is EINVAL" "$T/size" '80 0'
assert_write_errno EINVAL "size: 1001 columns is EINVAL" "$T/size" '1001 10'
assert_write_errno EINVAL "expect: a regex that does not compile is EINVAL" "$T/expect" '(unclosed'
assert_file_match "$S/error" "tty/keys: 'Bogus'" "error: the unknown key"
assert_file_match "$S/error" "tty/size: '1001 10'" "error: the bad size"
assert_file_match "$S/error" "tty/expect: '\(unclosed'" "error: the bad regex"
assert_eq "100 30" "$(timeout 5 cat "$T/size")" "a refused size changes nothing"

# 18. the shell's exit; ctl restart; ctl kill
type_line 'exit 3' "$S2/tty"
sfs_until 5 test "$(status_val state "$S2/tty")" = exited
assert_eq "exited 3" "$(status_val state "$S2/tty") $(status_val exit "$S2/tty")" "exit 3: status exited, exit 3"
assert_true "its shell is gone" "pid $T2PID" sfs_wait_gone "$T2PID" 2
assert_file_match "$S2/tty/output" 'two-only' "the output of an exited shell stays readable"
assert_file_match "$S2/tty/screen" '^two-only$' "so does its screen"
assert_eq "exited" "$(status_val state "$S2/tty")" "reading them starts no new shell"
check "ctl restart" sfs_write "$S2/tty/ctl" $'restart\n'
assert_eq running "$(status_val state "$S2/tty")" "restart: running again"
T2B=$(status_val pid "$S2/tty")
assert_true "restart: a new shell" "$T2B" test -n "$T2B" -a "$T2B" != "$T2PID"
check "ctl kill KILL" sfs_write "$S2/tty/ctl" $'kill KILL\n'
sfs_until 5 test "$(status_val state "$S2/tty")" = exited
assert_eq "exited 9" "$(status_val state "$S2/tty") $(status_val signal "$S2/tty")" "kill KILL: exited, signal 9"
assert_write_errno EINVAL "ctl: a bad line is EINVAL" "$S2/tty/ctl" $'bogus\n'
type_line 'echo "sec""ond-start"' "$S2/tty"
assert_expect "a write to input starts it again" '^second-start$' 8000 "$S2/tty"
T2C=$(status_val pid "$S2/tty")
t0=$(now_ms)
check "root ctl killall" sfs_write "$MNT/ctl" $'killall\n' 10
assert_eq exited "$(status_val state "$S2/tty")" "killall ends the terminal too"
assert_lt $(($(now_ms) - t0)) 2000 "killall returns at once (HUP ends bash -i)" " ms"
assert_true "killall: its shell is gone" "pid $T2C" sfs_wait_gone "${T2C:-0}" 1

assert_eq exited "$(status_val state)" "killall ends every session's terminal"

# 19. the input queue: a blocking writer waits for room, O_NONBLOCK gets
# EAGAIN, Ctrl-C gets EINTR. The terminal is raw and its program asleep:
# nothing reads what is typed, so the queue fills.
type_line 'stty raw -echo; echo "ra""w-1"; sleep 60'
assert_expect "a raw terminal whose program sleeps" '^raw-1$'
head -c 1048576 /dev/zero >"$SFS_TMP/1m"
res=$(timeout 20 python3 - "$T/input" <<'EOF2'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
n = 0
try:
    while n < 4 << 20:
        n += os.write(fd, b"x" * 65536)
    print("noeagain", n)
except BlockingIOError:
    print("eagain", "full" if n >= (1 << 20) - 65536 else "early %d" % n)
EOF2
)
assert_eq "eagain full" "$res" "input: O_NONBLOCK gets EAGAIN once 1 MiB is queued"
timeout 20 dd if="$SFS_TMP/1m" of="$T/input" bs=64k status=none 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
CP=$!
# dd waits in write(2) (x86_64: syscall 1), in the daemon's parked reply
in_write() {
	local d sc
	d=$(pgrep -P "$CP" -x dd) || return 1
	read -r sc _ <"/proc/$d/syscall" 2>/dev/null && [ "$sc" = 1 ]
}
check "input: a blocking writer to a full queue waits in write" sfs_until 5 in_write
t0=$(now_ms)
kill -INT "$CP"
sfs_wait_gone "$CP" 3
assert_true "input: Ctrl-C ends the waiting write" "dd $CP still waits" sfs_wait_gone "$CP" 0
assert_lt $(($(now_ms) - t0)) 3000 "input: Ctrl-C returns within 3 s" " ms"
OLD=$(status_val pid)
check "ctl restart drops the queue" sfs_write "$T/ctl" $'restart\n'
restarted() { [ "$(status_val state) $(status_val pid)" != "running $OLD" ] && [ "$(status_val state)" = running ]; }
sfs_until 10 restarted
# 3 MB written by one blocking writer while the program sleeps 2 s and
# then reads all of it: the write waits, then succeeds whole
type_line 'stty raw -echo; echo "ra""w-2"; sleep 2; head -c 3000000 >/dev/null; stty sane; echo "big""-done"'
assert_expect "raw again, the program asleep" '^raw-2$'
t0=$(now_ms)
check "input: a blocking write of 3 MB succeeds" \
	bash -c 'yes abcdefghijklmnop | head -c 3000000 >"$1"' _ "$T/input"
el=$(($(now_ms) - t0))
assert_true "input: it waited for the program ($el ms)" "$el ms" test "$el" -ge 500
assert_expect "input: the program read all of it" '^ *big-done$' 15000

# 20. what would crash or stall the daemon is refused: a width below 2
# (libvterm crashes on a wide character there), more than 100,000 cells,
# back-references and huge intervals in expect; the slave is group tty's
assert_write_errno EINVAL "size: 1 column is EINVAL" "$T/size" '1 5'
assert_write_errno EINVAL "size: 1000x1000 (over 100,000 cells) is EINVAL" "$T/size" '1000 1000'
assert_file_match "$S/error" "tty/size: '1000 1000'" "error: the size over 100,000 cells"
check "size: trailing blanks are taken" sfs_write "$T/size" $'316 316 \t\n'
assert_eq "316 316" "$(timeout 5 cat "$T/size")" "size: 316x316 (99,856 cells) is taken"
check "size: 2 columns" sfs_write "$T/size" $'2 5\n'
type_line 'printf "\xe4\xb8\xad%.0s" 1 2 3 4 5 6; echo'
check "size: 3 columns, wide characters on the screen" sfs_write "$T/size" $'3 5\n'
check "size: 2 columns again" sfs_write "$T/size" $'2 5\n'
check "size: 80 24" sfs_write "$T/size" $'80 24\n'
type_line 'echo "after""-narrow"'
assert_expect "2 columns and wide characters: the terminal lives" '^after-narrow$'
assert_write_errno EINVAL "expect: a back-reference is EINVAL" "$T/expect" '(a*)*(a*)*(a*)*\3\2\1z'
assert_file_match "$S/error" "is refused: a back-reference" "error: the back-reference"
assert_write_errno EINVAL "expect: nested intervals are EINVAL" "$T/expect" '(a{1,100}){1,100}z'
assert_write_errno EINVAL "expect: a pattern over 1 KiB is EINVAL" "$T/expect" "$(printf 'a%.0s' {1..1100})"
type_line 'printf "a%.0s" {1..70}; echo; stat -c "mode-%G-%a" "$(tty)"'
assert_expect "expect: a line of 70 a's, matched at once" '^a{70}$' 3000
if getent group tty >/dev/null; then want='^mode-tty-620$'; else want='^mode-.*-600$'; fi
assert_expect "the slave is group tty's, mode 620 (600 without that group)" "$want"

# 21. a flood of short lines (yes) leaves the loop to the other requests:
# the screen takes at most some 2 ms of it per round
type_line 'yes | head -c 200000000'
flooding() { [ "$(status_val output_bytes)" -gt 2000000 ]; }
sfs_until 10 flooding
med=$(timeout 30 python3 - "$S2" <<'EOF2'
import os, statistics, sys, time
d, ts = sys.argv[1], []
for _ in range(30):
    t = time.monotonic()
    os.listdir(d)
    with open(d + "/tty/status") as f:
        f.read()
    ts.append((time.monotonic() - t) * 1000)
print(int(statistics.median(ts)))
EOF2
)
assert_lt "${med:-99999}" 100 "while yes floods the terminal, another session answers (median)" " ms"
check "C-c ends the flood" sfs_write "$T/keys" 'C-c'
type_line 'echo "after""-flood"'
assert_expect "the terminal is at its prompt again" '^after-flood$' 15000

# 21b. plain text that scrolls past the scrolled-off lines is skipped, the
# screen kept exact: the last numbers on the screen, the one above its
# first row last in scrollback; an expect that waits during a flood; an
# answer to a cursor query after a long burst, in order
# printed_at_least N: the terminal's output has grown by N bytes since
# OUT0 (no read of expect waits meanwhile: a waiter gets every line fed)
printed_at_least() { [ "$(status_val output_bytes)" -ge $((OUT0 + $1)) ]; }
SEQ_BYTES=$(($(seq 1 200000 | wc -c) + 200000)) # onlcr: \r\n
OUT0=$(status_val output_bytes)
type_line 'seq 1 200000; echo "se""q-done"'
sfs_until 30 printed_at_least "$SEQ_BYTES"
assert_expect "seq 1 200000: its end is on the screen" '^seq-done$' 30000
seq_ok() {
	python3 - "$T" <<'EOF2'
import sys
t = sys.argv[1]
rows = open(t + "/screen").read().split("\n")[:-1]
sb = [l for l in open(t + "/scrollback").read().split("\n") if l]
end = rows.index("seq-done")
first = 200000 - (end - 1)
want = [str(n) for n in range(first, 200001)]
ok = rows[:end] == want and sb[-2:] == [str(first - 2), str(first - 1)]
sys.exit(0 if ok else "screen %r, scrollback ends %r" % (rows[:3], sb[-2:]))
EOF2
}
assert_true "seq 1 200000: screen and scrollback are the numbers they must be" \
	"$(seq_ok 2>&1)" seq_ok
type_line 'seq 1 50000; echo "flo""od-mark"'
assert_expect "expect waiting during a flood finds the line after it" '^flood-mark$' 20000
OUT0=$(status_val output_bytes)
type_line 'clear; seq 1 100000; printf "\e[6n"; read -rs -d R ans; echo "ans-${ans#*[}"'
sfs_until 30 printed_at_least $(($(seq 1 100000 | wc -c) + 100000))
assert_expect "a cursor query after a long burst: the bottom row" 'ans-24;1$' 30000
# a CSI of 40 arguments (libvterm 0.1.4 would write past its 16 and
# crash the daemon): the terminal lives on
type_line 'printf "\e[%s1m" $(printf "1;%.0s" {1..40}); echo "many""-args"; tput sgr0'
assert_expect "a CSI of 40 arguments leaves the terminal alive" '^many-args$'
# a REP with no character before it (after a RIS, as in a fresh terminal)
# or after a combining one: libvterm 0.1.4 would repeat it forever, and
# the daemon would answer nothing more
type_line 'printf "\ec\e[b\e[9b"; printf "\xcc\x81\e[b"; echo "o""k"'
assert_expect "a REP before any character: the terminal lives on" '^ok$'
t0=$(now_ms)
check "a REP before any character: ls of the mount answers" timeout 5 ls "$MNT" >/dev/null
assert_lt $(($(now_ms) - t0)) 1000 "a REP before any character: ls within a second" " ms"
type_line 'printf "\ecx\e[4b\n"'
assert_expect "a REP after ASCII repeats it" '^xxxxx$'
# C1 code points in UTF-8 (width -1 to libvterm: its cursor went left of
# the screen) and a control in a DCS (libvterm read past the write)
type_line 'printf "\xc2\x85%.0s" {1..200}; printf "\n\eP1\n\e\\\\"; echo "c1""-ok"'
assert_expect "C1 code points and a control in a DCS: the terminal lives on" '^c1-ok$'

# 22. every descriptor of the slave closed for a moment: the terminal is
# watched again when the shell opens /dev/tty, and what was typed
# meanwhile is kept
TP=$(status_val pid)
type_line 'exec 0</dev/null 1>/dev/null 2>/dev/null 255>&-; sleep 1; exec 0<>/dev/tty 1>&0 2>&0; echo "BA""CK"'
closed() { [ "$(readlink "/proc/$TP/fd/0")" = /dev/null ] && [ ! -e "/proc/$TP/fd/255" ]; }
sfs_until 5 closed
type_line 'echo "ke""pt"'
assert_expect "the slave closed and opened again: the terminal is back" '^BACK$'
assert_expect "what was typed while it was closed is kept" '^kept$'

# 23. rmdir ends the terminal and what it started
type_line 'sleep 300 &'
sync_tty "a background sleep in the terminal"
TPID=$(status_val pid)
BG=$(pgrep -P "$TPID" -x sleep | head -1)
assert_true "the background sleep runs" "none" test -n "$BG"
t0=$(now_ms)
check "rmdir sessions/t" timeout 10 rmdir "$S"
assert_lt $(($(now_ms) - t0)) 5000 "rmdir returns within 5 s" " ms"
assert_true "rmdir: the terminal's shell is gone" "pid $TPID" sfs_wait_gone "$TPID" 0
assert_true "rmdir: what it started is gone" "pid $BG" sfs_wait_gone "${BG:-0}" 0
check "rmdir sessions/t2" timeout 10 rmdir "$S2"

sfs_done
