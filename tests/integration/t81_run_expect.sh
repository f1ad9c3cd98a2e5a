#!/usr/bin/env bash
# t81_run_expect: expect in a session directory, runs/N, runs/NAME and
# procs/NAME (waitForLog). A write gives an extended regex and an
# optional timeout in ms; a read returns the first line of the run's
# stdout or stderr that matches, from the run's start: a server's
# "listening on" line printed later, one printed before the read, one
# on stderr; ENODATA when the run ends without one, ETIMEDOUT at the
# timeout (not before); a half-printed line is not matched until it is
# whole; poll(2) and O_NONBLOCK; a reader interrupted by SIGINT ends at
# once; a bad regex is EINVAL with one error line; a read with no
# pattern is EINVAL; an upgrade in place while a reader waits; another
# user (allow_other) may not read or write a session's expect.
# shellcheck disable=SC2016
SFS_T=${SFS_T:-20}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_start_mount mount -o allow_other || { SFS_DONE=1; exit 1; }
S=$MNT/sessions/x
P=$S/procs
check "mkdir sessions/x" sfs_mkdir "$S"

# exp.py PATH [nonblock|poll]: opens PATH and reads it; prints the line
# read (or the errno's name) and the milliseconds the read took
cat >"$SFS_TMP/exp.py" <<'EOF'
import errno, os, select, sys, time
path = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else ""
flags = os.O_RDONLY | (os.O_NONBLOCK if mode == "nonblock" else 0)
t0 = time.monotonic()
try:
    fd = os.open(path, flags)
    if mode == "poll":
        p = select.poll()
        p.register(fd, select.POLLIN)
        ready = p.poll(20000)
        print("polled %d" % len(ready))
    data = os.read(fd, 4096).decode()
    print(data.rstrip("\n"))
except OSError as e:
    print(errno.errorcode[e.errno])
print("ms %d" % ((time.monotonic() - t0) * 1000))
EOF
# exp PATH [MODE]: its line (the last but the time) in EXP, and EXP_MS
exp() {
	timeout -k 2 30 python3 "$SFS_TMP/exp.py" "$@" >"$SFS_TMP/exp.out" 2>&1
	EXP_MS=$(sed -n 's/^ms //p' "$SFS_TMP/exp.out")
	EXP=$(grep -v '^ms ' "$SFS_TMP/exp.out" | tail -n 1)
}

# 1. a process that prints its line later: the read waits for it
check "mkdir procs/srv" sfs_mkdir "$P/srv"
check "expect: write a pattern with a timeout" sfs_write "$P/srv/expect" $'^listening on [0-9]+$ 15000\n'
timeout -k 2 30 python3 "$SFS_TMP/exp.py" "$P/srv/expect" >"$SFS_TMP/srv.out" 2>&1 &
READER=$!
SFS_BG_PIDS+=("$READER")
check "the server starts" sfs_write "$P/srv/cmd" 'echo starting; until [ -e '"$SFS_TMP/go1"' ]; do sleep 0.05; done; printf "listen"; sleep 0.3; echo "ing on 8123"; echo "listening on 9"; sleep 60'$'\n'
check "the server printed its first line" sfs_until 10 eval 'timeout 5 grep -qx starting "$P/srv/stdout"'
sleep 0.3 # the reader has had time to open and read
assert_true "procs: the reader waits meanwhile" "it has ended: $(cat "$SFS_TMP/srv.out")" sfs_alive "$READER"
: >"$SFS_TMP/go1"
wait "$READER"
assert_eq "listening on 8123" "$(head -n 1 "$SFS_TMP/srv.out")" "procs: the read returns the first line that matches, once it is whole"
exp "$P/srv/expect"
assert_eq "listening on 8123" "$EXP" "procs: a reader after it finds the same line at once"
assert_lt "$EXP_MS" 2000 "procs: at once" " ms"
check "procs: write another pattern" sfs_write "$P/srv/expect" $'^listening on 9$\n'
exp "$P/srv/expect"
assert_eq "listening on 9" "$EXP" "procs: the next pattern finds its line"
check "procs: a pattern that never comes, 400 ms" sfs_write "$P/srv/expect" $'never 400\n'
exp "$P/srv/expect"
assert_eq ETIMEDOUT "$EXP" "procs: ETIMEDOUT at the timeout"
# (the daemon's clock is read once per batch of requests: a few ms early)
assert_true "procs: not before it (${EXP_MS} ms)" "" test "${EXP_MS:-0}" -ge 380
exp "$P/srv/expect" nonblock
assert_eq EAGAIN "$EXP" "procs: O_NONBLOCK gives EAGAIN while it would wait"
check "procs: kill the server" sfs_write "$P/srv/ctl" $'kill\n'
exp "$P/srv/expect"
assert_eq ENODATA "$EXP" "procs: ENODATA once the process has ended without a match"

# 2. the session's latest run: a line printed before the read, then stderr
check "session: a run that prints" sfs_run "$S" 'echo one; echo "ready: two" >&2; echo three'
check "session: write a pattern" sfs_write "$S/expect" $'^ready\n'
exp "$S/expect"
assert_eq "ready: two" "$EXP" "session: a line of stderr printed before the read"
check "session: a pattern of stdout" sfs_write "$S/expect" $'^th'
exp "$S/expect"
assert_eq "three" "$EXP" "session: and one of stdout"
check "session: a pattern that does not match" sfs_write "$S/expect" $'^four$\n'
exp "$S/expect"
assert_eq ENODATA "$EXP" "session: ENODATA for a run that ended without it"
sfs_run_bg "$S" 'sleep 0.5; echo "server up"; sleep 2' 30
check "session: a pattern for the next run" sfs_write "$S/expect" $'up$ 10000\n'
exp_running() { [ "$(timeout 5 sed -n 's/^state //p' "$S/status")" = running ]; }
check "session: the next run runs" sfs_until 10 exp_running
exp "$S/expect" poll
assert_eq "polled 1" "$(head -n 1 "$SFS_TMP/exp.out")" "session: poll(2) waits, then says readable"
assert_eq "server up" "$EXP" "session: and the read after it has the line"
wait "$SFS_BG"

# 3. runs/N and runs/NAME
N=$(timeout 5 ls "$S/runs" | grep -E '^[0-9]+$' | sort -n | head -n 1)
check "runs/$N: write a pattern" sfs_write "$S/runs/$N/expect" $'^one$\n'
exp "$S/runs/$N/expect"
assert_eq one "$EXP" "runs/$N: its own output, not the latest run's"
check "mkdir runs/named" sfs_mkdir "$S/runs/named"
check "runs/named: a pattern before its command" sfs_write "$S/runs/named/expect" $'^named-[0-9]$\n'
check "runs/named: its command" sfs_write "$S/runs/named/cmd" $'echo named-7\n'
exp "$S/runs/named/expect"
assert_eq named-7 "$EXP" "runs/named: the line"

# 4. bad input
assert_write_errno EINVAL "a regex that does not compile is EINVAL" "$S/expect" 'a('
assert_file_match "$S/error" "expect: 'a\\(' is not an extended regex" "and one error line says why"
assert_write_errno EINVAL "a back-reference is EINVAL" "$S/expect" '(x)\1'
check "mkdir procs/none" sfs_mkdir "$P/none"
exp "$P/none/expect"
assert_eq EINVAL "$EXP" "a read with no pattern written is EINVAL"

# 5. a reader interrupted by SIGINT ends at once; the daemon goes on
check "mkdir procs/quiet" sfs_mkdir "$P/quiet"
check "quiet: a pattern" sfs_write "$P/quiet/expect" $'never\n'
check "quiet: a process that prints nothing" sfs_write "$P/quiet/cmd" $'sleep 60\n'
t0=$(now_ms)
timeout -s INT 0.5 cat "$P/quiet/expect" >/dev/null 2>&1
rc=$?
el=$(($(now_ms) - t0))
assert_eq 124 "$rc" "SIGINT ends a waiting reader"
assert_lt "$el" 3000 "at once" " ms"
assert_eq "after" "$(sfs_run_out "$S" 'echo after')" "the session still runs"

# 6. an upgrade in place while a reader waits
check "quiet: a pattern for after the upgrade" sfs_write "$P/quiet/expect" $'^late$ 20000\n'
check "mkdir procs/late" sfs_mkdir "$P/late"
check "late: a pattern" sfs_write "$P/late/expect" $'^late$ 20000\n'
check "late: a process that prints later" sfs_write "$P/late/cmd" $'while [ ! -e '"$SFS_TMP/go"$' ]; do sleep 0.1; done; echo late; sleep 30\n'
timeout -k 2 40 python3 "$SFS_TMP/exp.py" "$P/late/expect" >"$SFS_TMP/late.out" 2>&1 &
READER=$!
SFS_BG_PIDS+=("$READER")
sleep 0.3
timeout -k 2 30 bash -c 'echo "upgrade $1" >"$2"' _ "$SFS_BIN" "$MNT/ctl" 2>"$SFS_TMP/up.err"
assert_eq "0 ''" "$? '$(cat "$SFS_TMP/up.err")'" "an upgrade while the reader waits"
: >"$SFS_TMP/go"
wait "$READER"
assert_eq late "$(head -n 1 "$SFS_TMP/late.out")" "the waiting reader gets its line after the upgrade"

# 7. another user
OTHER=65534
check "another user may read the mount" setpriv --reuid=$OTHER --regid=$OTHER --clear-groups ls "$MNT/sessions" >/dev/null
assert_errno EACCES "another user may not read root's session's expect" \
	setpriv --reuid=$OTHER --regid=$OTHER --clear-groups cat "$S/expect"
assert_errno EACCES "nor write it" \
	setpriv --reuid=$OTHER --regid=$OTHER --clear-groups bash -c 'echo x >"$1"' _ "$S/expect"
sfs_done
