#!/usr/bin/env bash
# t79_ports: issue 23 item 3, `ports` of a session and of procs/NAME
# (waitForPort). A session with no listener lists nothing; python3 -m
# http.server 0 (its port read from its output), nc -l and a bound udp
# socket are listed as "PROTO ADDRESS PORT PID" with their own pids;
# procs/NAME's ports lists its own process's sockets, the session's all
# of them; a listener in a network namespace of its own (unshare -n, on a
# port the host already uses) is read from its own /proc/PID/net. A
# written "PORT TIMEOUT_MS" makes the next open's read wait until a
# server started later listens (then it lists), ETIMEDOUT when none
# does, ENODATA when the process ends first; O_NONBLOCK gets EAGAIN and
# poll(2) is readable only once the port is listened on; Ctrl-C of a
# blocked reader interrupts it at once. Bad writes are EINVAL with a line
# in the session's error file. Under allow_other another user (nobody)
# cannot read a root session's ports. A read that waits is held across
# an upgrade in place, and so is a wait written before it and opened
# after it.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need python3 nc unshare setpriv

sfs_mount

S=$MNT/sessions/pt
check "mkdir sessions/pt" sfs_mkdir "$S"
assert_run_ok "the session's shell runs" "$S" 'true'
sfs_marker "t79-ports-$$" # the python servers below have it in their arguments
# (the others, nc and http.server, take no extra word: the session's end
# kills them with its cgroup)

# free_port: a tcp port nothing listens on now (bound to 0, then closed)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_proc NAME CMD: procs/NAME runs CMD (cmd's close returns once it
# has started)
start_proc() {
	sfs_mkdir "$S/procs/$1" && sfs_write "$S/procs/$1/cmd" "$2"$'\n' 10
}

# blocked PID: PID (a `timeout` of a reader) or a child of it waits for
# the answer of a request to FUSE (request_wait_answer; older kernels
# name a fuse_ function)
blocked() {
	local p
	for p in "$1" $(pgrep -P "$1"); do
		grep -qE 'fuse|request_wait_answer' "/proc/$p/wchan" 2>/dev/null && return 0
	done
	return 1
}

# has_line FILE LINE: FILE (of the mount) has LINE as one of its lines
has_line() { timeout 5 cat "$1" 2>/dev/null | grep -qxF -- "$2"; }

# --------------------------------------------------------- 1. no listener
assert_file_eq "$S/ports" "" "a session with no listener: ports is empty"

# --------------------------------------------------- 2. python http.server
check "procs/web runs python3 -m http.server 0" \
	start_proc web "exec python3 -u -m http.server 0 --bind 127.0.0.1 2>&1"
WEB_PID=$(timeout 5 cat "$S/procs/web/pid")
sfs_until 20 grep -q 'port [0-9]' "$S/procs/web/stdout"
WEB_PORT=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$S/procs/web/stdout" | head -1)
note "http.server: pid $WEB_PID, port $WEB_PORT"
assert_file_eq "$S/procs/web/ports" "tcp 127.0.0.1 $WEB_PORT $WEB_PID"$'\n' \
	"procs/web/ports is http.server's socket, as it printed it"
assert_true "the session's ports has http.server's line" "$(timeout 5 cat "$S/ports")" \
	has_line "$S/ports" "tcp 127.0.0.1 $WEB_PORT $WEB_PID"

# ------------------------------- 3. a wait for nc -l, which starts later
NC_PORT=$(free_port)
check "write '$NC_PORT 20000' to ports" sfs_write "$S/ports" "$NC_PORT 20000"$'\n'
timeout -k 2 30 cat "$S/ports" >"$SFS_TMP/nc.ports" 2>"$SFS_TMP/nc.err" &
WAITER=$!
SFS_BG_PIDS+=("$WAITER")
sfs_until 10 blocked "$WAITER"
sleep 0.5 # the read waits by now; the point is that it answers later
assert_true "the read waits while nothing listens on $NC_PORT" "cat ended" sfs_alive "$WAITER"
t0=$(now_ms)
check "procs/nc runs nc -l" start_proc nc "exec nc -l 127.0.0.1 $NC_PORT"
wait "$WAITER"
rc=$?
el=$(($(now_ms) - t0))
NC_PID=$(timeout 5 cat "$S/procs/nc/pid")
note "nc: pid $NC_PID, port $NC_PORT; the read answered ${el} ms after the start"
assert_eq 0 "$rc" "the waiting read ends with success once nc listens ($(cat "$SFS_TMP/nc.err"))"
assert_true "its answer has nc's line" "$(sfs_show "$SFS_TMP/nc.ports")" \
	grep -qxF "tcp 127.0.0.1 $NC_PORT $NC_PID" "$SFS_TMP/nc.ports"
assert_true "its answer lists the other listeners too" "$(sfs_show "$SFS_TMP/nc.ports")" \
	grep -qxF "tcp 127.0.0.1 $WEB_PORT $WEB_PID" "$SFS_TMP/nc.ports"
assert_file_eq "$S/ports" "$(cat "$SFS_TMP/nc.ports")"$'\n' \
	"the wait was taken by that open: the next read lists at once"

# ------------- 3b. eight reads waiting at once for one port (one look each
# tick reads the session's processes and the tables for all of them)
MANY_PORT=$(free_port)
MANY=()
for i in 1 2 3 4 5 6 7 8; do
	sfs_write "$S/ports" "$MANY_PORT 20000"$'\n'
	timeout -k 2 30 cat "$S/ports" >"$SFS_TMP/many.$i" 2>&1 &
	MANY+=("$!")
	SFS_BG_PIDS+=("$!")
	# its open took the wait before the next write replaces it
	sfs_until 10 blocked "$!"
done
check "procs/many runs nc -l" start_proc many "exec nc -l 127.0.0.1 $MANY_PORT"
MANY_PID=$(timeout 5 cat "$S/procs/many/pid")
answered=0
for i in 1 2 3 4 5 6 7 8; do
	wait "${MANY[$((i - 1))]}" && grep -qxF "tcp 127.0.0.1 $MANY_PORT $MANY_PID" "$SFS_TMP/many.$i" &&
		answered=$((answered + 1))
done
assert_eq 8 "$answered" "eight reads waiting for one port all answer with its line"

# ----------------------------------------------------------- 4. udp
check "procs/udp binds a udp socket" start_proc udp \
	"exec python3 -u -c 'import socket, sys, time; u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind((\"0.0.0.0\", 0)); print(u.getsockname()[1]); time.sleep(300)' t79-ports-$$"
sfs_until 20 grep -q '[0-9]' "$S/procs/udp/stdout"
UDP_PORT=$(head -1 "$S/procs/udp/stdout")
UDP_PID=$(timeout 5 cat "$S/procs/udp/pid")
assert_file_eq "$S/procs/udp/ports" "udp 0.0.0.0 $UDP_PORT $UDP_PID"$'\n' \
	"procs/udp/ports is its bound udp socket"

# ------------------------------------------- 5. procs/NAME vs the session
want=$(printf '%s\n' "tcp 127.0.0.1 $WEB_PORT $WEB_PID" "tcp 127.0.0.1 $NC_PORT $NC_PID" \
	"tcp 127.0.0.1 $MANY_PORT $MANY_PID" "udp 0.0.0.0 $UDP_PORT $UDP_PID" | sort -k3n -k1,1)
got=$(timeout 5 cat "$S/ports" | sort -k3n -k1,1)
assert_eq "$want" "$got" "the session's ports: every process's sockets, and only them"
assert_eq "tcp 127.0.0.1 $NC_PORT $NC_PID" "$(timeout 5 cat "$S/procs/nc/ports")" \
	"procs/nc/ports: nc's socket alone"
got=$(timeout 5 cat "$S/ports")
assert_eq "$(printf '%s\n' "$got" | sort -s -k3,3n)" "$got" "the lines are in the order of their ports"

# -------------------------------------- 6. a network namespace of its own
# the port http.server holds on the host: only another namespace can bind it
check "procs/ns listens in a network namespace of its own" start_proc ns \
	"exec unshare -n python3 -u -c 'import socket, time; s = socket.socket(); s.bind((\"0.0.0.0\", $WEB_PORT)); s.listen(); print(\"up\"); time.sleep(300)' t79-ports-$$"
sfs_until 20 grep -q up "$S/procs/ns/stdout"
NS_PID=$(timeout 5 cat "$S/procs/ns/pid")
assert_file_eq "$S/procs/ns/ports" "tcp 0.0.0.0 $WEB_PORT $NS_PID"$'\n' \
	"procs/ns/ports: its socket, read from its own namespace's table"
assert_true "the session's ports has both sockets of port $WEB_PORT" "$(timeout 5 cat "$S/ports")" \
	has_line "$S/ports" "tcp 0.0.0.0 $WEB_PORT $NS_PID"

# ------------------------------------------------------- 7. ETIMEDOUT
FREE=$(free_port)
check "write '$FREE 300'" sfs_write "$S/ports" "$FREE 300"$'\n'
t0=$(now_ms)
timeout -k 2 10 cat "$S/ports" >/dev/null 2>"$SFS_TMP/to.err"
rc=$?
el=$(($(now_ms) - t0))
assert_true "ETIMEDOUT when nothing listens ($(cat "$SFS_TMP/to.err"))" "status $rc" \
	grep -q 'timed out' "$SFS_TMP/to.err"
assert_true "after about 300 ms ($el ms)" "$el ms" test "$el" -ge 280 -a "$el" -lt 5000

# ----------------------------------------------- 8. the process ends first
check "procs/short runs sleep 1" start_proc short 'sleep 1'
check "write '$FREE 30000' to procs/short/ports" sfs_write "$S/procs/short/ports" "$FREE 30000"$'\n'
t0=$(now_ms)
timeout -k 2 20 cat "$S/procs/short/ports" >/dev/null 2>"$SFS_TMP/end.err"
el=$(($(now_ms) - t0))
assert_true "ENODATA when the process ends first ($(cat "$SFS_TMP/end.err"))" "it did not" \
	grep -q 'No data available' "$SFS_TMP/end.err"
assert_lt "$el" 10000 "at its end, not at the timeout ($el ms)" " ms"
check "write '$FREE 30000' to the ended procs/short/ports" sfs_write "$S/procs/short/ports" "$FREE 30000"$'\n'
timeout -k 2 10 cat "$S/procs/short/ports" >/dev/null 2>"$SFS_TMP/end2.err"
assert_true "ENODATA at once for a process that has ended" "$(cat "$SFS_TMP/end2.err")" \
	grep -q 'No data available' "$SFS_TMP/end2.err"

# --------------------------------------------- 9. O_NONBLOCK and poll(2)
PP=$(free_port)
res=$(timeout -k 2 40 python3 - "$S" "$PP" "t79-ports-$$" <<'EOF'
import errno, os, select, sys, time
s, port, mark = sys.argv[1], sys.argv[2], sys.argv[3]
with open(s + "/ports", "w") as f:
    f.write(port + " 20000\n")
fd = os.open(s + "/ports", os.O_RDONLY | os.O_NONBLOCK)
out = []
try:
    os.read(fd, 4096)
    out.append("read-did-not-block")
except OSError as e:
    out.append("eagain" if e.errno == errno.EAGAIN else "error " + e.strerror)
p = select.poll()
p.register(fd, select.POLLIN)
out.append("early" if p.poll(300) else "not-ready")
os.mkdir(s + "/procs/pp")
with open(s + "/procs/pp/cmd", "w") as f:
    f.write("exec nc -l 127.0.0.1 %s\n" % port)
t0 = time.monotonic()
ready = p.poll(15000)
out.append("ready" if ready else "never")
data = os.read(fd, 4096).decode() if ready else ""
out.append("listed" if (" %s " % port) in data else "missing:" + repr(data))
print(" ".join(out))
EOF
)
assert_eq "eagain not-ready ready listed" "$res" "O_NONBLOCK: EAGAIN; poll: readable once the port is listened on"

# --------------------------------------------------------- 10. Ctrl-C
check "write '$FREE 30000'" sfs_write "$S/ports" "$FREE 30000"$'\n'
timeout -k 2 30 python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    os.read(fd, 4096)
    print("read")
except KeyboardInterrupt:
    print("interrupted")
' "$S/ports" >"$SFS_TMP/intr.out" 2>&1 {SFS_OUT}>&- {SFS_ERR}>&- &
CP=$!
SFS_BG_PIDS+=("$CP")
sfs_until 10 blocked "$CP"
sleep 0.2 # parked by now, or soon; the point is that it returns
t0=$(now_ms)
kill -INT "$CP"
sfs_wait_gone "$CP" 5
el=$(($(now_ms) - t0))
assert_eq "interrupted" "$(cat "$SFS_TMP/intr.out")" "Ctrl-C: the blocked read returns EINTR"
assert_lt "$el" 3000 "Ctrl-C: at once ($el ms)" " ms"

# ------------------------------------------------------- 11. bad input
for bad in abc 0 65536 '80 abc' '80 1000000000' '' '-1'; do
	assert_write_errno EINVAL "'$bad' is EINVAL" "$S/ports" "$bad"$'\n'
done
assert_true "the error file says why" "$(timeout 5 cat "$S/error" | tail -3)" \
	sfs_until 5 grep -q "ports: 'abc' is not PORT \[TIMEOUT_MS\]" "$S/error"
assert_write_errno EINVAL "procs/web/ports: 'x' is EINVAL" "$S/procs/web/ports" $'x\n'
assert_true "its error line names procs/web/ports" "$(timeout 5 cat "$S/error" | tail -1)" \
	sfs_until 5 grep -q "procs/web/ports: 'x' is not PORT" "$S/error"
assert_file_eq "$S/procs/web/ports" "tcp 127.0.0.1 $WEB_PORT $WEB_PID"$'\n' \
	"a refused write sets no wait"

# ----------------------------------------------------- 12. upgrade in place
UP1=$(free_port)
check "write '$UP1 60000'" sfs_write "$S/ports" "$UP1 60000"$'\n'
timeout -k 2 90 cat "$S/ports" >"$SFS_TMP/up1" 2>"$SFS_TMP/up1.err" &
PARKED=$!
SFS_BG_PIDS+=("$PARKED")
sfs_until 10 blocked "$PARKED"
UP2=$(free_port)
while [ "$UP2" = "$UP1" ]; do UP2=$(free_port); done
check "write '$UP2 60000', not opened yet" sfs_write "$S/ports" "$UP2 60000"$'\n'
check "echo upgrade > ctl" sfs_write "$MNT/ctl" $'upgrade\n' 60
check "the daemon serves after the upgrade" \
	sfs_until 30 grep -q 'upgrade: serving (upgrade 1' "$SFS_TMP/daemon.log"
assert_true "the parked read still waits" "it ended: $(cat "$SFS_TMP/up1.err")" sfs_alive "$PARKED"
check "procs/up1 listens on $UP1 after the upgrade" start_proc up1 "exec nc -l 127.0.0.1 $UP1"
wait "$PARKED"
assert_true "the read parked across the upgrade answers ($(cat "$SFS_TMP/up1.err"))" \
	"$(sfs_show "$SFS_TMP/up1")" grep -q "^tcp 127.0.0.1 $UP1 " "$SFS_TMP/up1"
timeout -k 2 60 cat "$S/ports" >"$SFS_TMP/up2" 2>"$SFS_TMP/up2.err" &
W2=$!
SFS_BG_PIDS+=("$W2")
sfs_until 10 blocked "$W2"
check "procs/up2 listens on $UP2" start_proc up2 "exec nc -l 127.0.0.1 $UP2"
wait "$W2"
assert_true "a wait written before the upgrade is taken by an open after it" \
	"$(sfs_show "$SFS_TMP/up2") $(cat "$SFS_TMP/up2.err")" grep -q "^tcp 127.0.0.1 $UP2 " "$SFS_TMP/up2"

sfs_kill_marker "t79-ports-$$"
sfs_check_umount "the first mount"

# ------------------------------------------ 13. another user, allow_other
if sfs_start_mount "allow_other" -o allow_other; then
	D=$MNT/sessions/default
	assert_run_ok "root's default session runs" "$D" 'true'
	sfs_mkdir "$D/procs/own"
	AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	assert_errno EACCES "nobody cannot read root's session's ports" "${AS[@]}" cat "$D/ports"
	assert_errno EACCES "nobody cannot write root's session's ports" \
		"${AS[@]}" bash -c 'echo 80 >"$1"' _ "$D/ports"
	assert_errno EACCES "nobody cannot read root's procs/NAME/ports" "${AS[@]}" cat "$D/procs/own/ports"
	check "nobody makes a session" "${AS[@]}" mkdir "$MNT/sessions/nb"
	check "nobody reads its own session's ports" "${AS[@]}" cat "$MNT/sessions/nb/ports"
	sfs_check_umount "allow_other"
fi

SFS_DONE=1
exit 0
