#!/usr/bin/env bash
# t27_procs: background processes, sessions/S/procs/NAME. A dev server
# (python3 -m http.server on a loopback port) started, reached with curl or
# bash's /dev/tcp, its log line seen through `stream`, killed with
# `echo kill > ctl` and its port closed. stdin: a round trip through `cat`
# when stdin was opened before cmd, EOF at once otherwise. States completed,
# failed and killed; a process that ignores TERM ends by KILL, also a
# child of a leader that TERM ended (exit 137 after the grace); bare signal
# names; a TERM right after the start is not lost; rmdir of a running
# process; a process started while the shell is busy starts at once; the
# process sees the session's cwd and exported variables, and its own cd and
# export do not change the session; bad ctl lines and names; 100 processes
# in one session; no cgroup is left behind.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/p
P=$S/procs
WD=$SFS_TMP/wd
mkdir -p "$WD"
check "mkdir sessions/p" sfs_mkdir "$S"
# the state that every process of this session starts from
assert_run_ok "cd, export and a plain variable" "$S" \
	"cd '$WD' && export PV=exported-$$ && PLAIN=plain"

# start NAME CMD [TIMEOUT]: mkdir procs/NAME, then write CMD to its cmd;
# the status of the write (124: the close did not return in time)
start() {
	sfs_mkdir "$P/$1" 2>"$SFS_TMP/write.err" || return
	sfs_write "$P/$1/cmd" "$2"$'\n' "${3:-10}"
}

# assert_start LABEL NAME CMD: start it, and its close returns in < 2 s
assert_start() {
	local t0 rc el
	t0=$(now_ms)
	start "$2" "$3"
	rc=$?
	el=$(($(now_ms) - t0))
	case $rc in
	0) pass "$1: mkdir and write cmd succeed" ;;
	124) fail "$1: mkdir and write cmd succeed" "the close of cmd did not return within 10 s" ;;
	*) fail "$1: mkdir and write cmd succeed" "status $rc: $(head -c 200 "$SFS_TMP/write.err" | tr '\n' ' ')" ;;
	esac
	assert_lt "$el" 2000 "$1: the close of cmd returns at once" " ms"
}

# state_is NAME STATE LABEL: procs/NAME/status has "state STATE"
state_is() { assert_file_match "$P/$1/status" "^state $2\$" "$3"; }

# status_val NAME KEY: the value of KEY in procs/NAME/status
status_val() { timeout 5 cat "$P/$1/status" 2>/dev/null | sed -n "s/^$2 //p"; }

# port_open PORT: something accepts connections on 127.0.0.1:PORT
port_open() { timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null; }

# http_get PORT PATH: the body of GET PATH (curl if installed, else /dev/tcp)
http_get() {
	if command -v curl >/dev/null; then
		timeout 10 curl -sS --noproxy '*' "http://127.0.0.1:$1$2"
	else
		timeout 10 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
			printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$2" >&3
			sed "1,/^\r\$/d" <&3' _ "$1" "$2"
	fi
}

# 1. a dev server
if ! command -v python3 >/dev/null; then
	pass "dev server: skip (no python3)"
else
	printf 'hello from %s\n' "$$" >"$WD/hello.txt"
	srv='' port=''
	for try in 1 2 3; do
		# a random free port above 20000
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			port=$((20000 + RANDOM % 40000))
			port_open "$port" || break
		done
		sfs_marker "$port"
		start "web$try" "exec python3 -u -m http.server $port --bind 127.0.0.1"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			fail "dev server: started" "write cmd: status $rc: $(head -c 200 "$SFS_TMP/write.err" | tr '\n' ' ')"
			break
		fi
		# grep -m1 returns as soon as the line is there, while the
		# stream goes on; the stream ends (EOF) if the server exits
		t0=$(now_ms)
		if timeout 10 grep -m1 -q "Serving HTTP on 127.0.0.1 port $port" "$P/web$try/stream"; then
			srv=web$try
			el=$(($(now_ms) - t0))
			break
		fi
		note "dev server on port $port did not start: $(timeout 5 cat "$P/web$try/stderr" | tail -n 1)"
	done
	if [ -z "$srv" ]; then
		fail "dev server: its log line appears in stream" "three tries failed"
	else
		pass "dev server: its log line appears in stream (port $port)"
		assert_lt "$el" 8000 "dev server: grep -m1 on stream returns once the line is there" " ms"
		state_is "$srv" running "dev server: state running while grep -m1 returned"
		pid=$(timeout 5 cat "$P/$srv/pid")
		assert_true "dev server: pid is the server's pid" "pid '$pid', cmdline: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" \
			grep -qzx -e "$port" "/proc/$pid/cmdline"
		assert_eq "$pid" "$(status_val "$srv" pid)" "dev server: status has the same pid"
		# it serves the session's cwd
		got=$(http_get "$port" /hello.txt)
		assert_eq "hello from $$" "$got" "dev server: GET /hello.txt from the session's cwd"
		check "dev server: its access log line appears in stream" \
			timeout 10 grep -m1 -q 'GET /hello.txt HTTP/1' "$P/$srv/stream"
		assert_file_match "$P/$srv/stderr" 'GET /hello.txt HTTP/1' "dev server: the access log is in stderr"
		assert_file_match "$P/$srv/output" 'Serving HTTP' "dev server: output has its stdout"
		assert_file_match "$P/$srv/output" 'GET /hello.txt' "dev server: output has its stderr"
		assert_file_eq "$P/$srv/cmd" "exec python3 -u -m http.server $port --bind 127.0.0.1"$'\n' \
			"dev server: cmd reads back its text"
		# kill it
		t0=$(now_ms)
		check "dev server: echo kill > ctl" sfs_write "$P/$srv/ctl" $'kill\n' 10
		assert_file_eq "$P/$srv/exit" $'143\n' "dev server: exit 143"
		assert_lt "$(($(now_ms) - t0))" 1500 "dev server: it ends at once" " ms"
		state_is "$srv" killed "dev server: state killed"
		assert_eq 15 "$(status_val "$srv" signal)" "dev server: status has signal 15"
		assert_true "dev server: status has an end time" "ended '$(status_val "$srv" ended)'" \
			test "$(status_val "$srv" ended)" != -
		closed=0
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			port_open "$port" || {
				closed=1
				break
			}
			sleep 0.2
		done
		assert_eq 1 "$closed" "dev server: port $port is closed"
		assert_true "dev server: pid $pid is gone" "it still runs" sfs_wait_gone "$pid" 3
		check "dev server: stream ends (EOF) once it has exited" timeout 5 cat "$P/$srv/stream"
	fi
fi

# 2. stdin: opened for writing before cmd, a round trip through cat. The
# test feeds stdin through a fifo and a background writer that keeps it
# open (so no open of the mount happens outside a timeout).
check "stdin: mkdir procs/cat" sfs_mkdir "$P/cat"
fifo=$SFS_TMP/in.fifo
mkfifo "$fifo"
exec {FW}<>"$fifo" # read-write: never blocks
timeout -k 2 30 bash -c 'exec 5>"$1" || exit 1; : >"$2"; exec cat >&5' _ \
	"$P/cat/stdin" "$SFS_TMP/in.opened" <"$fifo" {FW}>&- &
feeder=$!
SFS_BG_PIDS+=("$feeder")
for _ in $(seq 50); do
	[ -e "$SFS_TMP/in.opened" ] && break
	sleep 0.1
done
assert_true "stdin: opened for writing before cmd" "the open did not succeed in 5 s" test -e "$SFS_TMP/in.opened"
check "stdin: write cmd 'cat'" sfs_write "$P/cat/cmd" $'cat\n' 10
printf 'line-one\n' >&"$FW"
check "stdin: the first line comes back through stream" \
	timeout 5 grep -m1 -qx line-one "$P/cat/stream"
state_is cat running "stdin: cat still runs"
printf 'line-two\n' >&"$FW"
check "stdin: the second line comes back through stream" \
	timeout 5 grep -m1 -qx line-two "$P/cat/stream"
check "stdin: echo eof > ctl" sfs_write "$P/cat/ctl" $'eof\n' 10
assert_file_eq "$P/cat/exit" $'0\n' "stdin: after eof cat exits 0"
assert_file_eq "$P/cat/stdout" $'line-one\nline-two\n' "stdin: stdout is both lines"
state_is cat completed "stdin: state completed"
exec {FW}>&-
if sfs_wait_gone "$feeder" 5; then wait "$feeder" 2>/dev/null; else
	fail "stdin: the writer of stdin ends" "still running"
fi

# 3. stdin not opened before cmd: the first read gets EOF at once
t0=$(now_ms)
assert_start "no stdin, read" rd 'read x; echo "read=$? x=[$x]"'
assert_file_eq "$P/rd/exit" $'0\n' "no stdin: read x ends, exit 0"
assert_file_eq "$P/rd/stdout" $'read=1 x=[]\n' "no stdin: read x got EOF"
assert_start "no stdin, cat" rc 'cat; echo "cat=$?"'
assert_file_eq "$P/rc/exit" $'0\n' "no stdin: cat ends, exit 0"
assert_file_eq "$P/rc/stdout" $'cat=0\n' "no stdin: cat got EOF, exit 0"
assert_lt "$(($(now_ms) - t0))" 3000 "no stdin: both ended at once" " ms"
sfs_write "$P/rc/stdin" $'late\n' 5
note "a write to stdin of a process started without it: status $? ($(head -c 100 "$SFS_TMP/write.err" | tr '\n' ' '))"

# 4. states: completed, failed, killed; the files of a finished process
assert_start "completed" ok 'echo out; echo err >&2'
assert_file_eq "$P/ok/exit" $'0\n' "completed: exit 0"
state_is ok completed "completed: state completed"
assert_file_eq "$P/ok/stdout" $'out\n' "completed: stdout"
assert_file_eq "$P/ok/stderr" $'err\n' "completed: stderr"
assert_file_match "$P/ok/output" '^out$' "completed: output has stdout"
assert_file_match "$P/ok/output" '^err$' "completed: output has stderr"
assert_file_match "$P/ok/status" '^name ok$' "completed: status has the name"
assert_file_match "$P/ok/status" '^exit 0$' "completed: status has exit 0"
assert_file_match "$P/ok/status" '^pid [1-9][0-9]*$' "completed: status has a pid"
assert_true "completed: status has start and end times" \
	"started '$(status_val ok started)', ended '$(status_val ok ended)'" \
	test "$(status_val ok started)" != - -a "$(status_val ok ended)" != -
assert_eq "$(status_val ok pid)" "$(timeout 5 cat "$P/ok/pid")" "completed: the pid file matches status"
assert_start "failed" bad 'echo failing; exit 3'
assert_file_eq "$P/bad/exit" $'3\n' "failed: exit 3"
state_is bad failed "failed: state failed"
assert_file_match "$P/bad/status" '^exit 3$' "failed: status has exit 3"

# a stream opened while the process runs ends when it exits
assert_start "stream" str 'echo a; sleep 1; echo b'
sfs_cat "$P/str/stream" "$SFS_TMP/str.out" 5
rc=$?
assert_eq 0 "$rc" "stream: the read ends at the exit"
assert_true "stream: it has both lines" "got $(sfs_show "$SFS_TMP/str.out")" \
	test "$(cat "$SFS_TMP/str.out")" = $'a\nb'

# kill_case LABEL NAME MARK CMD CTL-LINE EXIT STATE MAX_MS [MIN_MS]: start
# CMD (it runs `sleep MARK`), wait for MARK, write CTL-LINE to ctl, check
# that it ends within MAX_MS with EXIT (a|b: either) and STATE
kill_case() {
	local label=$1 name=$2 mark=$3 cmd=$4 line=$5 want=$6 state=$7 max=$8 min=${9:-0}
	local t0 el got left
	sfs_marker "$mark"
	assert_start "$label" "$name" "$cmd"
	if [ -n "$(sfs_wait_pids_with_arg "$mark" 5)" ]; then pass "$label: it runs"; else
		fail "$label: it runs" "no process with argument $mark within 5 s"
	fi
	t0=$(now_ms)
	check "$label: echo '$line' > ctl" sfs_write "$P/$name/ctl" "$line"$'\n' 10
	got=$(timeout 10 cat "$P/$name/exit")
	el=$(($(now_ms) - t0))
	case "|$want|" in
	*"|$got|"*) pass "$label: exit $want" ;;
	*) fail "$label: exit $want" "got $(sfs_q "$got")" ;;
	esac
	assert_lt "$el" "$max" "$label: it ends within $max ms of the ctl write" " ms"
	if [ "$min" -gt 0 ]; then
		assert_true "$label: it lasted the grace period" "it ended after $el ms" test "$el" -ge "$min"
	fi
	state_is "$name" "$state" "$label: state $state"
	left=$(sfs_pids_with_arg "$mark")
	assert_true "$label: no sleep $mark is left" "still running: $(echo "$left" | tr '\n' ' ')" test -z "$left"
}

kill_case "kill" k1 "711.$$" "sleep 711.$$" kill 143 killed 1500
assert_eq 15 "$(status_val k1 signal)" "kill: status has signal 15"
assert_file_match "$P/k1/status" '^exit 143$' "kill: status has exit 143"
kill_case "trap '' TERM" k2 "712.$$" "trap '' TERM; sleep 712.$$" kill "137|143" killed 4000 1500
note "a process that ignored TERM: exit $(timeout 5 cat "$P/k2/exit"), signal $(status_val k2 signal)"
kill_case "HUP" k3 "713.$$" "sleep 713.$$" HUP 129 "(killed|failed)" 1500
note "state after echo HUP > ctl: $(status_val k3 state)"
assert_eq 1 "$(status_val k3 signal)" "HUP: status has signal 1"
kill_case "kill KILL" k4 "714.$$" "sleep 714.$$" "kill KILL" 137 killed 1500
kill_case "TERM" k5 "715.$$" "sleep 715.$$" TERM 143 killed 1500

# an open ctl file carries out at most 64 lines (each may signal every
# process of the tree): 64 are done, 65 are refused whole, and a 15 MiB
# write of them is refused at once
sfs_marker "719.$$"
# (in a session of its own: the refusals go to its error, not to p's,
# whose lines are counted below)
check "ctl lines: mkdir sessions/pc" sfs_mkdir "$MNT/sessions/pc"
S0=$S P0=$P S=$MNT/sessions/pc P=$MNT/sessions/pc/procs
assert_start "ctl lines" cl "exec sleep 719.$$"
check "ctl lines: 64 CONT lines in one write" sfs_write "$P/cl/ctl" "$(printf 'CONT\n%.0s' {1..64})" 10
assert_errno EINVAL "ctl lines: 65 in one write are refused" \
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.write(fd, b"CONT\n" * 65)' "$P/cl/ctl"
assert_file_match "$S/error" "procs/ctl: more than 64 lines in one open file; nothing of this write was done" \
	"ctl lines: error says so"
assert_errno EINVAL "ctl lines: 64 in one write and a 65th at the close are refused" \
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.write(fd, b"CONT\n" * 64); os.write(fd, b"CONT"); os.close(fd)' "$P/cl/ctl"
t0=$(now_ms)
assert_errno EINVAL "ctl lines: 15 MiB of CONT lines in one write are refused" \
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.write(fd, b"CONT\n" * (3 << 20))' "$P/cl/ctl"
assert_lt $(($(now_ms) - t0)) 3000 "ctl lines: that write returns at once" " ms"
assert_file_match "$P/cl/status" '^state running$' "ctl lines: the process still runs"
check "ctl lines: kill it" sfs_write "$P/cl/ctl" $'kill\n' 10
check "ctl lines: rmdir sessions/pc" timeout 10 rmdir "$S"
S=$S0 P=$P0

# the whole process tree: a child that ignores TERM, with a leader that
# dies of TERM, keeps the grace period, then KILL ends it: exit 137
sfs_marker "720.$$"
assert_start "tree kill" tk "(trap '' TERM; exec sleep 720.$$) & wait"
sfs_wait_pids_with_arg "720.$$" 5 >/dev/null
t0=$(now_ms)
check "tree kill: echo kill > ctl" sfs_write "$P/tk/ctl" $'kill\n' 10
assert_file_eq "$P/tk/exit" $'137\n' "tree kill: exit 137 (its child needed KILL)"
el=$(($(now_ms) - t0))
assert_true "tree kill: the exit came after the grace period" "it came after $el ms" test "$el" -ge 1500
left=$(sfs_pids_with_arg "720.$$")
assert_true "tree kill: its child that ignores TERM is gone at the exit" "still running: $left" test -z "$left"

# a TERM right after the start (before the process had time to run).
# The command is exec'ed: bash blocks TERM while it forks, so a child it
# forks as the TERM comes is born after it and lives on to the grace's
# KILL (137), whatever the daemon does.
sfs_marker "716.$$"
for i in 1 2 3; do
	start "kq$i" "exec sleep 716.$$" || fail "TERM at once ($i): started" "write status $?"
	t0=$(now_ms)
	sfs_write "$P/kq$i/ctl" $'kill\n' 10
	got=$(timeout 10 cat "$P/kq$i/exit")
	el=$(($(now_ms) - t0))
	assert_eq 143 "$got" "TERM at once ($i): exit 143 (TERM was not lost)"
	assert_lt "$el" 1500 "TERM at once ($i): it ends at once" " ms"
done

# a kill of a finished process does no harm
sfs_write "$P/ok/ctl" $'kill\n' 5
note "kill of a finished process: write status $?"
assert_file_eq "$P/ok/exit" $'0\n' "kill of a finished process: its exit stays 0"

# 5. bad ctl lines: EINVAL and a line in error
for bad in bogus 'kill NOSUCHSIG' NOSUCHSIG reset 'timeout 5' eoff; do
	n0=$(timeout 5 cat "$S/error" | wc -l)
	assert_write_errno EINVAL "ctl '$bad' gives EINVAL" "$P/ok/ctl" "$bad"$'\n'
	n1=$(timeout 5 cat "$S/error" | wc -l)
	assert_true "ctl '$bad' adds a line to error" "error had $n0 lines, then $n1" test "$n1" -gt "$n0"
done

# 6. rmdir of a running process: killed, gone when rmdir returns
sfs_marker "717.$$"
assert_start "rmdir running" rm1 "sleep 717.$$"
pid=$(sfs_wait_pids_with_arg "717.$$" 5)
assert_true "rmdir running: it runs" "no sleep 717.$$" test -n "$pid"
t0=$(now_ms)
check "rmdir running: rmdir procs/rm1" timeout 10 rmdir "$P/rm1"
assert_lt "$(($(now_ms) - t0))" 4000 "rmdir running: returns in < 4 s" " ms"
left=$(sfs_pids_with_arg "717.$$")
assert_true "rmdir running: nothing is left when rmdir returns" "still running: $left" test -z "$left"
assert_true "rmdir running: procs/rm1 is gone" "it is still there" test ! -e "$P/rm1"
ls "$P" >"$SFS_TMP/ls" 2>&1
assert_true "rmdir running: ls procs does not list it" "$(tr '\n' ' ' <"$SFS_TMP/ls")" \
	sh -c '! grep -qx rm1 "$1"' _ "$SFS_TMP/ls"
# also a TERM-ignoring one, and a finished one
sfs_marker "718.$$"
assert_start "rmdir trap" rm2 "trap '' TERM; sleep 718.$$"
sfs_wait_pids_with_arg "718.$$" 5 >/dev/null
check "rmdir trap: rmdir procs/rm2" timeout 10 rmdir "$P/rm2"
left=$(sfs_pids_with_arg "718.$$")
assert_true "rmdir trap: nothing is left when rmdir returns" "still running: $left" test -z "$left"
sfs_marker "721.$$"
assert_start "rmdir tree" rm3 "(trap '' TERM; exec sleep 721.$$) & wait"
sfs_wait_pids_with_arg "721.$$" 5 >/dev/null
check "rmdir tree: rmdir procs/rm3" timeout 10 rmdir "$P/rm3"
left=$(sfs_pids_with_arg "721.$$")
assert_true "rmdir tree: its child that ignores TERM is gone when rmdir returns" "still running: $left" test -z "$left"
sfs_marker "722.$$"
assert_start "rmdir completed" rm4 "sleep 722.$$ & echo started"
assert_file_eq "$P/rm4/exit" $'0\n' "rmdir completed: it exits 0, its child goes on"
# (the leader may exit before its child has exec'd sleep: wait for it)
assert_true "rmdir completed: its background child runs" "no sleep 722.$$" \
	test -n "$(sfs_wait_pids_with_arg "722.$$" 5)"
check "rmdir completed: rmdir procs/rm4" timeout 10 rmdir "$P/rm4"
left=$(sfs_pids_with_arg "722.$$")
assert_true "rmdir completed: its background child is gone when rmdir returns" "still running: $left" test -z "$left"
check "rmdir of a finished process" timeout 10 rmdir "$P/bad"
assert_errno ENOENT "rmdir of a missing process gives ENOENT" rmdir "$P/nosuch"

# 7. a process started while the shell is busy starts at once
sfs_marker "3.$$"
sfs_run_bg "$S" "sleep 3.$$" 20
busy=$SFS_BG
sfs_wait_pids_with_arg "3.$$" 5 >/dev/null
t0=$(now_ms)
assert_start "busy shell" busy 'echo started'
assert_file_eq "$P/busy/exit" $'0\n' "busy shell: the process exits 0"
assert_file_eq "$P/busy/stdout" $'started\n' "busy shell: the process ran"
assert_lt "$(($(now_ms) - t0))" 1500 "busy shell: it ran while the shell runs sleep 3" " ms"
assert_file_match "$S/status" '^state running$' "busy shell: the session's run is still running"
if sfs_wait_gone "$busy" 10; then
	wait "$busy"
	assert_eq 0 "$?" "busy shell: the session's run ends normally"
else
	fail "busy shell: the session's run ends normally" "still blocked"
fi

# 8. cwd and environment: the session's, not changed by the process
assert_start "state" st 'echo "$PWD|$PV|${PLAIN-unset}"; cd /; export PV=changed NEWV=1'
assert_file_eq "$P/st/exit" $'0\n' "state: exit 0"
assert_file_eq "$P/st/stdout" "$WD|exported-$$|unset"$'\n' \
	"state: the process has the session's cwd and exported variable (not the plain one)"
assert_run_ok "state: a run after it" "$S" 'echo "$PWD|$PV|${NEWV-unset}|$PLAIN"'
assert_file_eq "$S/stdout" "$WD|exported-$$|unset|plain"$'\n' \
	"state: its cd and export did not change the session"
check "state: echo v > env/SV" sfs_write "$S/env/SV" $'sv-value\n'
assert_start "state: env/SV" sv 'echo "${SV-unset}"'
assert_file_eq "$P/sv/exit" $'0\n' "state: env/SV: exit 0"
assert_file_eq "$P/sv/stdout" $'sv-value\n' "state: a variable set through env/ is seen"
mkdir -p "$WD/sub"
assert_run_ok "state: cd sub" "$S" 'cd sub'
assert_start "state: new cwd" cw 'pwd'
assert_file_eq "$P/cw/exit" $'0\n' "state: new cwd: exit 0"
assert_file_eq "$P/cw/stdout" "$WD/sub"$'\n' "state: a later process has the new cwd"

# 9. names
assert_errno EEXIST "mkdir of an existing process gives EEXIST" mkdir "$P/ok"
for bad in .hidden 'a b' "$(printf 'n%.0s' $(seq 65))" 'a\b' 'x*'; do
	assert_errno EINVAL "name $(sfs_q "$bad") gives EINVAL" mkdir "$P/$bad"
done
n64=$(printf 'n%.0s' $(seq 64))
check "a 64-character name is fine" sfs_mkdir "$P/$n64"
check "name a.b_c-D is fine" sfs_mkdir "$P/a.b_c-D"
assert_write_errno EBUSY "a second write of cmd gives EBUSY" "$P/ok/cmd" $'echo again\n'
assert_file_eq "$P/ok/stdout" $'out\n' "a second write of cmd ran nothing"

# 10. 100 processes in one session
M=$MNT/sessions/many
check "100: mkdir sessions/many" sfs_mkdir "$M"
sfs_marker "719.$$"
nok=0
t0=$(now_ms)
for i in $(seq 100); do
	if timeout 10 mkdir "$M/procs/p$i" &&
		sfs_write "$M/procs/p$i/cmd" "exec sleep 719.$$"$'\n' 10; then
		nok=$((nok + 1))
	fi
done
note "100: started 100 processes in $(($(now_ms) - t0)) ms"
assert_eq 100 "$nok" "100: all 100 started"
timeout 10 ls "$M/procs" >"$SFS_TMP/ls100"
assert_eq 100 "$(grep -cx 'p[0-9]*' "$SFS_TMP/ls100")" "100: ls procs/ lists 100 names"
assert_eq "" "$(seq 100 | sed 's/^/p/' | grep -vxF -f "$SFS_TMP/ls100")" "100: each name is listed"
n=0
for _ in $(seq 50); do
	n=$(sfs_pids_with_arg "719.$$" | wc -l)
	[ "$n" -ge 100 ] && break
	sleep 0.1
done
assert_eq 100 "$n" "100: 100 processes run"
assert_file_match "$M/procs/p1/status" '^state running$' "100: p1 is running"
assert_file_match "$M/procs/p100/status" '^state running$' "100: p100 is running"
t0=$(now_ms)
check "100: rmdir sessions/many" timeout 20 rmdir "$M"
note "100: rmdir took $(($(now_ms) - t0)) ms"
left=$(sfs_pids_with_arg "719.$$" | wc -l)
assert_eq 0 "$left" "100: none of them is left after rmdir of the session"

# 11. no cgroup is left behind: after rmdir of every session but default,
# the daemon's cgroup has at most the default session's
check "rmdir sessions/p" timeout 20 rmdir "$S"
root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
own=$(sed -n 's/^0:://p' "/proc/$SFS_PID/cgroup" 2>/dev/null)
[ "$own" = / ] && own=
CG=$root$own/sessionfs.$SFS_PID
if [ -z "$root" ] || [ ! -d "$CG" ]; then
	pass "cgroups: skip (no cgroup of the daemon at ${CG:-?})"
else
	sleep 0.3
	extra=$(find "$CG" -mindepth 2 -type d 2>/dev/null | sed "s|^$CG/||" | tr '\n' ' ')
	assert_eq "" "$extra" "cgroups: no cgroup of a process is left after its rmdir (in $CG)"
fi

# a command that does not exist: state error (bash's 127)
P=$MNT/sessions/nosuch-s/procs
check "mkdir sessions/nosuch-s" sfs_mkdir "$MNT/sessions/nosuch-s"
check "mkdir procs/nosuch" sfs_mkdir "$P/nosuch"
check "start a command that does not exist" sfs_write "$P/nosuch/cmd" $'no_such_command_t27\n'
sfs_cat "$P/nosuch/exit" "$SFS_TMP/nosuch.exit"
assert_file_eq "$SFS_TMP/nosuch.exit" $'127\n' "procs/nosuch: exit 127"
assert_file_match "$P/nosuch/status" '^state error$' "procs/nosuch: state error"
assert_file_match "$P/nosuch/stderr" 'not found' "procs/nosuch: stderr says not found"

sfs_done
