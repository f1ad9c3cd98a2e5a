#!/usr/bin/env bash
# t80_input_wait: knowing when a program wants input. tty/ready returns
# the screen once the terminal's foreground program is blocked reading
# the terminal (and its output paused): for read -p, read -s, python3 -q
# (a pselect on fd 0), vim (a select on the tty), less (a read of
# /dev/tty), cat with no input and node's REPL (an epoll); tty/status
# says waiting_input 1 then. sleep 5 and a busy loop in the foreground
# are not ready: a poll of ready stays unreadable for 1 s, an O_NONBLOCK
# read gets EAGAIN, and waiting_input is 0; they are ready once they end.
# procs/NAME/status says waiting_input 1 while `read x` waits on the
# stdin pipe, 0 for a `sleep` with its stdin open and for a process
# without one. A select of the terminal and a socket and a poll of the
# terminal are ready (their sets read from memory); a select of a socket
# alone and a thread that reads while another computes are not.
# Ctrl-C of a parked read of ready is EINTR; a terminal that ends under
# a parked read fails it with EPIPE (and so does a read before the
# start); a read parked across an upgrade in place answers after it;
# ready's pause is writable (700 ms holds the answer that long, and is
# kept by the upgrade), and bad values are EINVAL with one error line.
# Every wait is on a condition with a deadline.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/t
T=$S/tty
P=$S/procs
WD=$SFS_TMP/wd
mkdir -p "$WD"
check "mkdir sessions/t" sfs_mkdir "$S"

status_val() { timeout 5 cat "${2:-$T}/status" 2>/dev/null | sed -n "s/^$1 //p"; }
type_line() { sfs_write "$T/input" "$1"$'\n' 10; }

# probe MS: opens tty/ready and says, within MS ms, "ready" (a poll
# found it readable and a read gave the screen, whose last non-empty
# row follows) or "notready" (with what an O_NONBLOCK read and the
# status said then)
probe() {
	timeout -k 2 $(($1 / 1000 + 20)) python3 - "$T" "$1" <<'EOF'
import errno, os, select, sys
t, ms = sys.argv[1], int(sys.argv[2])
fd = os.open(t + "/ready", os.O_RDONLY | os.O_NONBLOCK)
p = select.poll()
p.register(fd, select.POLLIN)
if not p.poll(ms):
    try:
        os.read(fd, 65536)
        nb = "read"
    except BlockingIOError:
        nb = "eagain"
    st = open(t + "/status").read()
    w = [l for l in st.splitlines() if l.startswith("waiting_input")]
    print("notready", nb, w[0] if w else "none")
    sys.exit(0)
screen = os.read(fd, 1 << 20).decode(errors="replace")
rows = [r.rstrip() for r in screen.splitlines() if r.strip()]
print("ready", rows[-1] if rows else "")
EOF
}

# ready_blocking: a plain blocking read of ready (cat), its last row
ready_blocking() {
	timeout -k 2 20 cat "$T/ready" 2>"$SFS_TMP/ready.err" | sed '/^ *$/d' | tail -n 1 | sed 's/ *$//'
}

# at_shell: the foreground process group is the shell's (a program ended)
at_shell() {
	local pid stat
	pid=$(status_val pid)
	stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	read -r _ _ _ _ _ tpgid _ <<<"$stat"
	[ "$tpgid" = "$pid" ]
}
not_at_shell() { ! at_shell; }

# is_ready LABEL WANT CMD: ready gives the screen, its last row
# matching the ERE WANT; waiting_input is 1 then
is_ready() {
	local res
	res=$(probe 15000)
	if [[ $res =~ ^ready\ (.*)$ ]] && [[ ${BASH_REMATCH[1]} =~ $2 ]]; then
		pass "$1: ready, the screen ends with /$2/"
	else
		fail "$1: ready, the screen ends with /$2/" "$res"
	fi
	assert_eq 1 "$(status_val waiting_input)" "$1: status waiting_input 1"
}

# 1. ready's pause: bad writes
names=$(find "$T" -mindepth 1 -printf '%f\n')
assert_true "tty/ready is listed" "$names" bash -c 'grep -qx ready <<<"$1"' _ "$names"
assert_eq 0 "$(status_val waiting_input)" "before the start: waiting_input 0"
assert_errno "Broken pipe" "before the start: a read of ready fails with EPIPE" cat "$T/ready"
errs0=$(timeout 5 cat "$S/error" | wc -l)
assert_write_errno EINVAL "ready: 'soon' is EINVAL" "$T/ready" $'soon\n'
assert_eq 1 "$(($(timeout 5 cat "$S/error" | wc -l) - errs0))" "ready: one error line for a bad value"
assert_file_match "$S/error" "tty/ready: 'soon' is not a number of milliseconds" "ready: the error line says what is wrong"
assert_write_errno EINVAL "ready: more than an hour is EINVAL" "$T/ready" $'3600001\n'
check "ready: write 30" sfs_write "$T/ready" $'30\n'

# 2. read -p and read -s
check "the terminal starts" type_line 'PS1="t80> "; read -p "Your name? " n'
is_ready "read -p" 'Your name\?$'
type_line bob
sfs_until 10 at_shell
type_line 'read -s -p "Password: " pw'
is_ready "read -s" 'Password:$'
type_line secret

# 3. the shell's own prompt (readline in a pselect on fd 0); a pause of
# 700 ms written to ready holds its answer that long after the input
sfs_until 10 at_shell
is_ready "the shell's prompt" 't80>$'
check "ready: write 700" sfs_write "$T/ready" $'700\n'
t0=$(now_ms)
type_line 'read -p "Slow? " n'
assert_eq "Slow?" "$(ready_blocking)" "ready 700: the prompt"
el=$(($(now_ms) - t0))
assert_true "ready 700: it answered 700 ms after the input or later ($el ms)" "$el ms" test "$el" -ge 700
type_line x
check "ready: write 30 again" sfs_write "$T/ready" $'30\n'
sfs_until 10 at_shell

# 4. sleep and a busy loop in the foreground are not ready, until they end
type_line 'sleep 5; echo "sle""pt"'
sfs_until 10 not_at_shell
t0=$(now_ms)
assert_eq "notready eagain waiting_input 0" "$(probe 1000)" "sleep 5: not ready for 1 s (O_NONBLOCK: EAGAIN)"
line=$(ready_blocking)
el=$(($(now_ms) - t0))
assert_eq "t80>" "$line" "sleep 5: a blocking read of ready returns the prompt after it ($el ms)"
assert_true "sleep 5: ... once it ended ($el ms)" "too soon" test "$el" -ge 2500
assert_file_match "$T/screen" '^slept$' "sleep 5: its echo is on the screen"
type_line 'python3 -c "while True: pass"'
sfs_until 10 not_at_shell
assert_eq "notready eagain waiting_input 0" "$(probe 1000)" "a busy loop: not ready for 1 s"
check "C-c ends the busy loop" sfs_write "$T/keys" 'C-c'
sfs_until 10 at_shell
is_ready "after the busy loop" '^t80>'

# 5. python3 -q (readline: pselect on fd 0, not read)
type_line 'python3 -q'
is_ready "python3 -q" '^>>>$'
type_line 'import time; time.sleep(3); print("do""ne")'
sfs_until 10 bash -c '! grep -q "^waiting_input 1" "$1/status"' _ "$T"
assert_eq "notready eagain waiting_input 0" "$(probe 1000)" "python3 -q: a sleeping statement is not ready"
assert_eq ">>>" "$(ready_blocking)" "python3 -q: ready again at the next prompt"
type_line 'exit()'
sfs_until 10 at_shell

# 6. cat with no input (a read of the tty); C-d ends it
type_line 'cat'
sfs_until 10 not_at_shell
is_ready "cat with no input" 't80> cat$'
sfs_write "$T/keys" 'C-d'
sfs_until 10 at_shell

# 7. vim in normal mode (a select on the tty)
printf 'line one\nline two\n' >"$WD/f.txt"
type_line "vim -u NONE -N $WD/f.txt"
is_ready "vim" 'f\.txt'
assert_file_match "$T/screen" '^line two' "vim: the file is on the screen when ready"
sfs_write "$T/keys" 'Esc ":q!" Enter'
sfs_until 10 at_shell

# 8. less (a read of /dev/tty)
seq 1 1000 >"$WD/seq.txt"
type_line "less $WD/seq.txt"
is_ready "less" '(^:|seq\.txt)$'
sfs_write "$T/keys" '"q"'
sfs_until 10 at_shell

# 9. node's REPL (an epoll on the terminal), when node is here
if command -v node >/dev/null; then
	type_line 'node'
	is_ready "node" '^>$'
	type_line '.exit'
	sfs_until 10 at_shell
else
	note "no node: its REPL is not tried"
fi

# 10. the sets of a wider select and of a poll are read from memory: a
# select of the tty and a socket, a poll of the tty are ready; a select
# of a socket alone and a thread that computes while another reads are not
type_line 'python3 -c "import select, socket, sys; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); select.select([s, sys.stdin], [], []); print(\"sel\"\"ected\")"'
is_ready "a select of a socket and the terminal" '\)"$'
type_line ''
check "... and it reads what was typed" sfs_until 10 grep -q '^selected$' "$T/screen"
sfs_until 10 at_shell
type_line 'python3 -c "import select; p = select.poll(); p.register(0, select.POLLIN); p.poll(); print(\"pol\"\"led\")"'
is_ready "a poll of the terminal" '\)"$'
type_line ''
sfs_until 10 at_shell
type_line 'python3 -c "import select, socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(); select.select([s], [], [])"'
sfs_until 10 not_at_shell
assert_eq "notready eagain waiting_input 0" "$(probe 1000)" "a select of a socket alone: not ready"
sfs_write "$T/keys" 'C-c'
sfs_until 10 at_shell
type_line 'python3 -c "import threading, sys; threading.Thread(target=lambda: sys.stdin.readline(), daemon=True).start()
while True: pass"'
sfs_until 10 not_at_shell
assert_eq "notready eagain waiting_input 0" "$(probe 1000)" "a thread reads while another computes: not ready"
sfs_write "$T/keys" 'C-c'
sfs_until 10 at_shell

# 11. Ctrl-C of a parked read: EINTR
type_line 'sleep 30'
sfs_until 10 not_at_shell
res=$(timeout 20 python3 - "$T" <<'EOF'
import ctypes, errno, os, signal, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(sys.argv[1] + "/ready", os.O_RDONLY)
signal.signal(signal.SIGINT, lambda *a: None)
threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
buf = ctypes.create_string_buffer(4096)
n = libc.read(fd, buf, 4096)
print(n, errno.errorcode.get(ctypes.get_errno(), "?") if n < 0 else "-")
EOF
)
assert_eq "-1 EINTR" "$res" "a parked read of ready: SIGINT gets EINTR"

# 12. the terminal ends under a parked read: EPIPE
timeout 20 cat "$T/ready" >/dev/null 2>"$SFS_TMP/epipe.err" {SFS_OUT}>&- {SFS_ERR}>&- &
CP=$!
sfs_until 5 grep -q 'fuse' "/proc/$CP/wchan" 2>/dev/null
check "kill the terminal" sfs_write "$T/ctl" $'kill KILL\n'
sfs_wait_gone "$CP" 10
wait "$CP"
rc=$?
assert_true "the terminal's end fails a parked read of ready" "status $rc: $(cat "$SFS_TMP/epipe.err")" \
	grep -q 'Broken pipe' "$SFS_TMP/epipe.err"

# 13. a read parked across an upgrade in place answers after it
type_line 'PS1="t80> "; sleep 10; echo "up""graded"'
sfs_until 10 not_at_shell
timeout 60 cat "$T/ready" >"$SFS_TMP/up.txt" 2>"$SFS_TMP/up.err" {SFS_OUT}>&- {SFS_ERR}>&- &
CP=$!
sfs_until 5 grep -q 'fuse' "/proc/$CP/wchan" 2>/dev/null
check "ready: write 700 before the upgrade" sfs_write "$T/ready" $'700\n'
check "echo upgrade > ctl" sfs_write "$MNT/ctl" $'upgrade\n' 30
check "the daemon serves after the upgrade" \
	sfs_until 20 grep -q 'upgrade: serving (upgrade 1' "$SFS_TMP/daemon.log"
assert_true "the parked read still waits after the upgrade" "it returned: $(cat "$SFS_TMP/up.err")" \
	sfs_alive "$CP"
sfs_wait_gone "$CP" 30
wait "$CP"
rc=$?
assert_eq 0 "$rc" "the read parked across the upgrade succeeds ($(head -c 100 "$SFS_TMP/up.err"))"
assert_true "... with the screen once the program waits" "$(sfs_show "$SFS_TMP/up.txt")" \
	grep -q '^upgraded$' "$SFS_TMP/up.txt"
t0=$(now_ms)
type_line 'read -p "Kept? " n'
assert_eq "Kept?" "$(ready_blocking)" "after the upgrade: ready gives the prompt"
el=$(($(now_ms) - t0))
assert_true "after the upgrade: ready's pause of 700 ms is kept ($el ms)" "$el ms" test "$el" -ge 700
type_line x
check "ready: write 30 again" sfs_write "$T/ready" $'30\n'

# 14. procs/NAME: read x on its stdin pipe waits, sleep does not
fifo=$SFS_TMP/in.fifo
mkfifo "$fifo"
exec {FW}<>"$fifo"
start_with_stdin() { # NAME CMD
	sfs_mkdir "$P/$1" || return 1
	timeout -k 2 60 bash -c 'exec 5>"$1" || exit 1; : >"$2"; exec cat >&5' _ \
		"$P/$1/stdin" "$SFS_TMP/$1.opened" <"$fifo" {FW}>&- {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_BG_PIDS+=("$!")
	sfs_until 5 test -e "$SFS_TMP/$1.opened" || return 1
	sfs_write "$P/$1/cmd" "$2"$'\n' 10
}
pwait() { sed -n 's/^waiting_input //p' "$P/$1/status"; }
check "procs/rd: read x with its stdin open" start_with_stdin rd 'read x; echo "got=$x"; sleep 30'
check "procs/rd: status waiting_input 1 while read waits" sfs_until 10 bash -c '[ "$(sed -n "s/^waiting_input //p" "$1")" = 1 ]' _ "$P/rd/status"
printf 'hello\n' >&"$FW"
check "procs/rd: the line is read" timeout 10 grep -m1 -q '^got=hello$' "$P/rd/stream"
check "procs/rd: then waiting_input 0 (it sleeps)" sfs_until 10 bash -c '[ "$(sed -n "s/^waiting_input //p" "$1")" = 0 ]' _ "$P/rd/status"
check "procs/sl: sleep with its stdin open" start_with_stdin sl 'sleep 30'
seen=
for _ in $(seq 10); do
	seen="$seen$(pwait sl)"
	sleep 0.1
done
assert_eq 0000000000 "$seen" "procs/sl: waiting_input 0 for 1 s"
check "procs/ns: read x without a stdin" sfs_mkdir "$P/ns"
sfs_write "$P/ns/cmd" $'sleep 30\n' 10
assert_eq 0 "$(pwait ns)" "procs/ns: without a stdin, waiting_input 0"
exec {FW}>&-
for n in rd sl ns; do timeout 20 rmdir "$P/$n"; done

sfs_done
