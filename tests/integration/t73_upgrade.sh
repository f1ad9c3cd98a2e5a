#!/usr/bin/env bash
# t73_upgrade: upgrade in place (issue 21), five times in a row, under
# load. 100 sessions keep their shells ($$), variables, functions,
# aliases, `set -o` options, cwd, env/ (both levels), timeouts, error
# lines and histories (runs/N, a named run); a run printing 1..1000
# spans the upgrades and its `stream` reader gets exactly 1..1000; a
# reader of `exit` blocked across them gets 0; a procs/ sleeper keeps
# its pid and its exit 7 is seen after; a named run made before gets its
# cmd after and runs; a cmd file held open across them, written before
# and after, runs the whole text at its close; a run under a session
# timeout ends with 124 at its first deadline; a consumer in another
# mount namespace (unshare --mount) and a client loop (runs, ls, stream,
# health) see no error and no lost or doubled byte while the server's pid
# (health's; the daemon the test started is its keeper) stays the same. The refusals keep the old program serving: a missing
# program (ENOENT), a relative path or two verbs in one write (EINVAL), a
# user who is not root (EACCES at the open: the ctl is root's, mode
# 0200), a program that refuses the state at --check-state (ENOEXEC).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need python3 setpriv unshare

# allow_other: other users reach the mount, so that the ctl refuses them
START=$(now_ms)
sfs_start_mount "allow_other" -o allow_other || exit 1
BIN=$(readlink -f "$SFS_BIN")
WD=$SFS_TMP/wd
NGEN=92 # with the 8 sessions of their own below: 100
GATE=$SFS_TMP/gate GO=$SFS_TMP/go HELD_GO=$SFS_TMP/held.go STOP=$SFS_TMP/stop
mkdir -p "$WD"
UPGRADES=0 # done so far (the log counts them too)

# w1 FILE TEXT: TEXT in one write(2) (bash's printf and echo cut it at
# each newline); python's error text names the errno
cat >"$SFS_TMP/w1.py" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, sys.argv[2].encode())
finally:
    os.close(fd)
EOF
w1() { timeout -k 2 "$SFS_T" python3 "$SFS_TMP/w1.py" "$@"; }
W1=(python3 "$SFS_TMP/w1.py")

# server_pid: the process that serves the mount (health's pid; SFS_PID
# is its keeper's)
server_pid() { timeout 5 sed -n 's/^pid //p' "$MNT/health" 2>/dev/null; }

# served: the daemon's log says it serves after upgrade $1 of the mount
served() { grep -qF "upgrade: serving (upgrade $1 of this mount)" "$SFS_TMP/daemon.log"; }

# still_serving LABEL: the same pid, no new program, and a run works
still_serving() {
	assert_true "$1: the server's pid is the same" "pid $SFS_SERVER is gone, health says $(server_pid)" \
		test "$(server_pid)" = "$SFS_SERVER"
	assert_true "$1: no new program" "the log says upgrade $((UPGRADES + 1))" \
		bash -c '! grep -qF "(upgrade $1 of this mount)" "$2"' _ "$((UPGRADES + 1))" "$SFS_TMP/daemon.log"
	assert_eq "still-$1" "$(sfs_run_out "$MNT/sessions/default" "echo 'still-$1'")" "$1: a run works after"
}

# ---------------------------------------------------------------- setup

check "root env/RV" sfs_write "$MNT/env/RV" $'rv-root\n'
GEN=()
for i in $(seq -w 1 "$NGEN"); do
	GEN+=("$MNT/sessions/g$i")
	mkdir -p "$WD/d$i"
done
# each generic session: a variable, a function, an alias, pipefail, a
# cwd, env/SV, a timeout and an error line
timeout -k 2 90 bash -c '
wd=$1
shift
for d; do
	i=${d##*/g}
	mkdir "$d" || exit 1
	printf "sv%s\n" "$i" >"$d/env/SV" || exit 1
	printf "%s\n" $((60000 + 10#$i)) >"$d/timeout" || exit 1
	printf "bogus-%s\n" "$i" >"$d/ctl" 2>/dev/null && exit 1
	printf "%s\n" "V=v$i; f() { echo f$i; }; alias al=\"echo al$i\"; set -o pipefail; cd $wd/d$i" >"$d/cmd" || exit 1
done' _ "$WD" "${GEN[@]}" >"$SFS_TMP/setup.err" 2>&1
check "92 sessions made, each with its state" test $? -eq 0

# shellcheck disable=SC2089,SC2090 # bash -c runs it: the quotes are its
PROBE='echo "$V|$(f)|$(alias al)|$(shopt -o pipefail | tr -s " \t" " ")|$PWD|$$|${SV-}|${RV-}"'
export PROBE
# probe_all OUT: the probe's stdout in every generic session, one line each
probe_all() {
	timeout -k 2 60 bash -c '
for d; do
	printf "%s\n" "$PROBE" >"$d/cmd" || echo "${d##*/}: cmd failed"
	printf "%s|%s\n" "${d##*/}" "$(<"$d/stdout")"
done' _ "${GEN[@]}" >"$1" 2>&1
}
# files_all OUT: files of every generic session and of the history one,
# and the inode numbers of sessions, runs and procs, read only (no run)
files_all() {
	timeout -k 2 60 bash -c '
h=$1
shift
for d; do
	printf "== %s\n" "${d##*/}"
	for f in cwd timeout env/SV error exit; do printf "%s: %s\n" "$f" "$(<"$d/$f")"; done
done
ls -i "$h/runs"
# the inode numbers are the objects ids, which the upgrade keeps
ls -i "${h%/*}" "${h%/*}/p/procs" "${h%/*}/n/runs"
stat -c "%i %n" "$h/runs/1/stdout" "$h/env" "$h/cmd"
for r in 1 2 3 hnamed; do
	for f in cmd exit stdout stderr status result.json; do printf "%s/%s: %s\n" "$r" "$f" "$(<"$h/runs/$r/$f")"; done
done' _ "$MNT/sessions/h" "${GEN[@]}" >"$1" 2>&1
}

# the history: three runs and a named one
H=$MNT/sessions/h
check "mkdir sessions/h" sfs_mkdir "$H"
assert_run_ok "h: run 1" "$H" 'echo one'
sfs_run "$H" 'echo two >&2; exit 3'
assert_run_ok "h: run 3" "$H" 'printf "three\n%.0s" 1 2 3'
check "h: mkdir runs/hnamed" sfs_mkdir "$H/runs/hnamed"
check "h: the named run runs" sfs_write "$H/runs/hnamed/cmd" $'echo named\n'

probe_all "$SFS_TMP/probe.0"
assert_true "g01's probe shows its state" "it gave $(grep '^g01|' "$SFS_TMP/probe.0")" \
	grep -qxF "g01|v01|f01|alias al='echo al01'|pipefail on|$WD/d01|$(grep -o '|[0-9]*|sv01|' "$SFS_TMP/probe.0" | cut -d'|' -f2)|sv01|rv-root" "$SFS_TMP/probe.0"
assert_eq "$NGEN" "$(grep -cE '^g[0-9]+\|v[0-9]+\|f[0-9]+\|alias al=.*\|pipefail on\|/.*\|[0-9]+\|sv[0-9]+\|rv-root$' "$SFS_TMP/probe.0")" \
	"every generic session's probe shows its state"

# 1..1000 with a stream reader and a blocked reader of exit; the run
# waits at 900 until the upgrades are over, so that it spans them
C=$MNT/sessions/c
check "mkdir sessions/c" sfs_mkdir "$C"
sfs_run_bg "$C" "for i in \$(seq 1 1000); do echo \$i; if [ \$i = 900 ]; then while [ ! -e $GATE ]; do sleep 0.05; done; fi; sleep 0.01; done" 120
COUNT_W=$SFS_BG
check "c: the count runs" sfs_until 20 test -e "$C/runs/1"
timeout -k 2 120 cat "$C/stream" >"$SFS_TMP/stream.out" 2>"$SFS_TMP/stream.err" &
STREAM_R=$!
SFS_BG_PIDS+=("$STREAM_R")
timeout -k 2 120 cat "$C/exit" >"$SFS_TMP/exit.out" 2>&1 &
EXIT_R=$!
SFS_BG_PIDS+=("$EXIT_R")

# a procs/ sleeper that exits 7 once told, and a reader of its exit
P=$MNT/sessions/p
check "mkdir sessions/p" sfs_mkdir "$P"
check "p: mkdir procs/sl" sfs_mkdir "$P/procs/sl"
check "p: the sleeper starts" sfs_write "$P/procs/sl/cmd" "while [ ! -e $GO ]; do sleep 0.05; done; exit 7"$'\n' 10
SL_PID=$(timeout 5 cat "$P/procs/sl/pid")
timeout -k 2 120 cat "$P/procs/sl/exit" >"$SFS_TMP/slexit.out" 2>&1 &
SL_R=$!
SFS_BG_PIDS+=("$SL_R")

# a named run waiting for its cmd
N=$MNT/sessions/n
check "mkdir sessions/n" sfs_mkdir "$N"
check "n: mkdir runs/later" sfs_mkdir "$N/runs/later"

# a cmd file held open: half of the command before, the rest after
O=$MNT/sessions/o
check "mkdir sessions/o" sfs_mkdir "$O"
# (python: bash's >&9 for a builtin dups 9 and closes the dup, a flush
# that starts the run)
timeout -k 2 120 python3 -c 'import os, sys, time
fd = os.open(sys.argv[1] + "/cmd", os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"echo part1-")
open(sys.argv[2] + ".open", "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
os.write(fd, b"held\n")
os.close(fd)' "$O" "$HELD_GO" >"$SFS_TMP/held.err" 2>&1 &
HELD=$!
SFS_BG_PIDS+=("$HELD")
check "o: cmd is open and half written" sfs_until 10 test -e "$HELD_GO.open"

# a run under a session timeout of 8 s
T=$MNT/sessions/t
check "mkdir sessions/t" sfs_mkdir "$T"
check "t: timeout 8000" sfs_write "$T/timeout" $'8000\n'
# (the writer notes how long its close took: it must wait for the run)
timeout -k 2 60 bash -c 't0=${EPOCHREALTIME/./}
echo "sleep 100" >"$1/cmd"
echo $(((${EPOCHREALTIME/./} - t0) / 1000)) >"$2"' _ "$T" "$SFS_TMP/to.ms" 2>/dev/null &
TO_W=$!
SFS_BG_PIDS+=("$TO_W")

# a consumer in another mount namespace and a client loop here
U=$MNT/sessions/u L=$MNT/sessions/l
check "mkdir sessions/u" sfs_mkdir "$U"
check "mkdir sessions/l" sfs_mkdir "$L"
# (its namespace copies every mount there is: it lets go of the FUSE
# mounts of other tests at once, or their unmounts would not end them)
timeout -k 2 120 unshare --mount --propagation private bash -c "$(declare -f sfs_drop_copied_mounts)"'
sfs_drop_copied_mounts "$4"
n=0 bad=0
until [ -e "$2" ]; do
	n=$((n + 1))
	printf "echo u%s\n" "$n" >"$1/cmd" || { bad=$((bad + 1)); echo "cmd $n failed"; }
	r=$(<"$1/stdout") || bad=$((bad + 1))
	[ "$r" = "u$n" ] || { bad=$((bad + 1)); echo "run $n gave [$r]"; }
	echo "$n" >"$3.n"
	sleep 0.01
done
echo "runs $n bad $bad"' _ "$U" "$STOP" "$SFS_TMP/cons" "$MNT" >"$SFS_TMP/cons.out" 2>&1 &
CONS=$!
SFS_BG_PIDS+=("$CONS")
timeout -k 2 120 bash -c '
n=0 bad=0
until [ -e "$3" ]; do
	n=$((n + 1))
	printf "echo l%s\n" "$n" >"$1/cmd" || { bad=$((bad + 1)); echo "cmd $n failed"; }
	r=$(<"$1/stdout") || bad=$((bad + 1))
	[ "$r" = "l$n" ] || { bad=$((bad + 1)); echo "run $n: stdout [$r]"; }
	r=$(<"$1/stream") || bad=$((bad + 1))
	[ "$r" = "l$n" ] || { bad=$((bad + 1)); echo "run $n: stream [$r]"; }
	ls "$2/sessions" >"$4.ls" || bad=$((bad + 1))
	grep -qx l "$4.ls" || { bad=$((bad + 1)); echo "ls $n: no l"; }
	r=$(<"$2/health") || bad=$((bad + 1))
	echo "$n" >"$4.n"
done
echo "runs $n bad $bad"' _ "$L" "$MNT" "$STOP" "$SFS_TMP/loop" >"$SFS_TMP/loop.out" 2>&1 &
LOOP=$!
SFS_BG_PIDS+=("$LOOP")
check "the consumer and the client loop run" sfs_until 20 test -s "$SFS_TMP/cons.n" -a -s "$SFS_TMP/loop.n"

files_all "$SFS_TMP/files.0"
assert_true "the files of every session read" "$(head -c 300 "$SFS_TMP/files.0")" \
	bash -c '! grep -q "No such" "$1" && grep -q "^error: .*bogus-92" "$1" && grep -q "^3/stdout: three" "$1"' _ "$SFS_TMP/files.0"
note "set up in $(($(now_ms) - START)) ms"

# ---------------------------------------------------------------- refusals

assert_errno ENOENT "upgrade /nonexistent: ENOENT" "${W1[@]}" "$MNT/ctl" $'upgrade /nonexistent/sessionfs\n'
still_serving "upgrade /nonexistent"
assert_errno EINVAL "upgrade relative/path: EINVAL" "${W1[@]}" "$MNT/ctl" $'upgrade build-test/sessionfs\n'
still_serving "upgrade relative/path"
assert_errno EINVAL "two upgrade lines in one write: EINVAL" "${W1[@]}" "$MNT/ctl" $'upgrade\nupgrade\n'
still_serving "two upgrade lines"
assert_errno EINVAL "upgrade and killall in one write: EINVAL" "${W1[@]}" "$MNT/ctl" $'killall\nupgrade\n'
still_serving "upgrade and killall"
assert_errno EACCES "upgrade by nobody: EACCES" \
	setpriv --reuid=65534 --regid=65534 --clear-groups -- env -C / bash -c 'echo upgrade >"$1"' _ "$MNT/ctl"
still_serving "upgrade by nobody"
printf '#!/bin/sh\n# refuses every state\nexit 1\n' >"$SFS_TMP/refuser"
chmod 755 "$SFS_TMP/refuser"
assert_errno "Exec format error" "upgrade to a program that refuses the state: ENOEXEC" \
	"${W1[@]}" "$MNT/ctl" "upgrade $SFS_TMP/refuser"$'\n'
still_serving "a refused state"
check "the refusals' lines in the log" grep -q 'refused the state.*this program goes on' "$SFS_TMP/daemon.log"

# ---------------------------------------------------------------- upgrades

all_alive() { # PID...: every one runs
	local p
	for p; do sfs_alive "$p" || return 1; done
}

cmp_state() { # K: every item is as before upgrade 1
	local k=$1 c0 n0
	files_all "$SFS_TMP/files.$k"
	assert_true "upgrade $k: files of every session, the history and the inode numbers the same" \
		"$(diff "$SFS_TMP/files.0" "$SFS_TMP/files.$k" | head -c 400 | tr '\n' ' ')" \
		cmp -s "$SFS_TMP/files.0" "$SFS_TMP/files.$k"
	probe_all "$SFS_TMP/probe.$k"
	assert_true "upgrade $k: every shell's pid, variables, function, alias, pipefail, cwd and env the same" \
		"$(diff "$SFS_TMP/probe.0" "$SFS_TMP/probe.$k" | head -c 400 | tr '\n' ' ')" \
		cmp -s "$SFS_TMP/probe.0" "$SFS_TMP/probe.$k"
	check "upgrade $k: env/W written" sfs_write "$MNT/sessions/g01/env/W" "w$k"$'\n'
	check "upgrade $k: root env/RW written" sfs_write "$MNT/env/RW" "rw$k"$'\n'
	assert_eq "w$k|rw$k" "$(sfs_run_out "$MNT/sessions/g01" 'echo "$W|$RW"')" "upgrade $k: the shell sees both writes"
	assert_true "upgrade $k: the readers of stream and exit, and the close of cmd, still wait" \
		"stream $STREAM_R, exit $EXIT_R, cmd $COUNT_W" all_alive "$STREAM_R" "$EXIT_R" "$COUNT_W"
	assert_file_match "$P/procs/sl/status" '^state running$' "upgrade $k: the sleeper runs"
	assert_file_eq "$P/procs/sl/pid" "$SL_PID"$'\n' "upgrade $k: the sleeper's pid is the same"
	assert_true "upgrade $k: the sleeper's exit reader waits" "it ended: $(cat "$SFS_TMP/slexit.out")" sfs_alive "$SL_R"
	assert_true "upgrade $k: runs/later waits for its cmd" "$(timeout 5 ls "$N/runs" | tr '\n' ' ')" \
		test -d "$N/runs/later"
	assert_true "upgrade $k: the cmd file is still open" "the writer ended: $(cat "$SFS_TMP/held.err")" sfs_alive "$HELD"
	assert_true "upgrade $k: the consumer and the loop go on" "cons $CONS, loop $LOOP" \
		all_alive "$CONS" "$LOOP"
	# the count, the consumer and the loop move on before the next one
	c0=$(wc -l <"$SFS_TMP/stream.out")
	n0=$(cat "$SFS_TMP/cons.n")
	n0=${n0:-0}
	sfs_until 20 bash -c '[ "$(wc -l <"$1")" -ge $(($2 + 20)) ] || [ "$2" -ge 900 ]' _ "$SFS_TMP/stream.out" "$c0"
	sfs_until 20 bash -c '[ "$(cat "$1")" -gt "$2" ] 2>/dev/null' _ "$SFS_TMP/cons.n" "$n0"
}
for k in 1 2 3 4 5; do
	t0=$(now_ms)
	case $k in
	1 | 4) w1 "$MNT/ctl" $'upgrade\n' ;;
	2) w1 "$MNT/ctl" "upgrade $BIN"$'\n' ;;
	3) timeout -k 2 "$SFS_T" "$SFS_BIN" --upgrade "$MNT" ;;
	5) timeout -k 2 "$SFS_T" "$SFS_BIN" --upgrade "$MNT" "$BIN" ;;
	esac
	rc=$?
	el=$(($(now_ms) - t0))
	assert_eq 0 "$rc" "upgrade $k: the write succeeds (${el} ms)"
	UPGRADES=$k
	check "upgrade $k: the new program serves" sfs_until 10 served "$k"
	assert_true "upgrade $k: the server's pid is the same" "pid $SFS_SERVER, health says $(server_pid)" \
		test "$(server_pid)" = "$SFS_SERVER" -a -n "$SFS_SERVER"
	assert_true "upgrade $k: it runs $BIN" "it runs $(readlink "/proc/$SFS_SERVER/exe")" \
		test "$(readlink "/proc/$SFS_SERVER/exe")" = "$BIN"
	assert_file_match "$MNT/health" '^ok' "upgrade $k: health is ok"
	cmp_state "$k"
	note "upgrade $k checked at $(($(now_ms) - START)) ms"
done

# a refusal from a program an upgrade started
assert_errno ENOENT "after the upgrades: upgrade /nonexistent is ENOENT" "${W1[@]}" "$MNT/ctl" $'upgrade /nonexistent\n'
assert_errno "Exec format error" "after the upgrades: a refused state is ENOEXEC" \
	"${W1[@]}" "$MNT/ctl" "upgrade $SFS_TMP/refuser"$'\n'
still_serving "after the upgrades, the refusals"

# ---------------------------------------------------------------- after

: >"$GATE"
: >"$GO"
: >"$HELD_GO"
wait "$COUNT_W"
assert_eq 0 "$?" "c: the count's cmd closes with 0, after its end"
wait "$STREAM_R"
assert_eq 0 "$?" "c: the stream reader ends with EOF"
seq 1 1000 >"$SFS_TMP/want.count"
assert_true "c: the stream gave exactly 1..1000" \
	"$(diff "$SFS_TMP/want.count" "$SFS_TMP/stream.out" | head -c 300 | tr '\n' ' ') $(cat "$SFS_TMP/stream.err")" \
	cmp -s "$SFS_TMP/want.count" "$SFS_TMP/stream.out"
assert_file_same "$C/stdout" "$SFS_TMP/want.count" "c: stdout is exactly 1..1000"
wait "$EXIT_R"
assert_eq "0" "$(cat "$SFS_TMP/exit.out")" "c: the blocked reader of exit got 0"

wait "$SL_R"
assert_eq "7" "$(cat "$SFS_TMP/slexit.out")" "p: the sleeper's exit reader got 7"
assert_file_eq "$P/procs/sl/exit" $'7\n' "p: procs/sl/exit is 7"
assert_file_match "$P/procs/sl/status" '^exit 7$' "p: its status has exit 7"

check "n: runs/later gets its cmd" sfs_write "$N/runs/later/cmd" $'echo later-ran\n'
assert_file_eq "$N/runs/later/stdout" $'later-ran\n' "n: the named run ran"
assert_file_eq "$N/runs/later/exit" $'0\n' "n: its exit is 0"

wait "$HELD"
assert_eq 0 "$?" "o: the held cmd file is written and closed ($(head -c 200 "$SFS_TMP/held.err"))"
assert_file_eq "$O/stdout" $'part1-held\n' "o: the whole text ran"

wait "$TO_W"
el=$(cat "$SFS_TMP/to.ms")
assert_file_eq "$T/exit" $'124\n' "t: the run under the timeout ends with 124"
assert_true "t: it ended at its first deadline (8 s; took $el ms)" "took $el ms" \
	test "$el" -ge 7500 -a "$el" -lt 25000

: >"$STOP"
wait "$CONS"
assert_eq 0 "$?" "u: the consumer ends"
assert_true "u: the consumer saw no error" "$(tail -c 300 "$SFS_TMP/cons.out")" \
	grep -qx 'runs [0-9]* bad 0' "$SFS_TMP/cons.out"
wait "$LOOP"
assert_eq 0 "$?" "l: the client loop ends"
assert_true "l: the client loop saw no error" "$(tail -c 300 "$SFS_TMP/loop.out")" \
	grep -qx 'runs [0-9]* bad 0' "$SFS_TMP/loop.out"
note "consumer: $(tail -n 1 "$SFS_TMP/cons.out"); loop: $(tail -n 1 "$SFS_TMP/loop.out")"
# the sessions' cgroups are this instance's again: their rmdir works
for d in "${GEN[@]:80}"; do rmdir "$d" || fail "rmdir ${d##*/} after the upgrades" "it failed"; done
assert_true "rmdir of sessions after the upgrades removes their cgroups" \
	"$(grep 'rmdir cgroup' "$SFS_TMP/daemon.log" | head -n 2 | tr '\n' ' ')" \
	bash -c '! grep -q "rmdir cgroup" "$1"' _ "$SFS_TMP/daemon.log"
GEN=("${GEN[@]:0:80}")
# what an old program had and did not hand over, its template shell and
# the session it made ahead: the template serves again (a new session's
# shell is its fork, whose command line is the template's), and the
# cgroup of the session made ahead is gone (one per upgrade was left)
check "a session made after the upgrades" sfs_mkdir "$MNT/sessions/z"
zpid=$(sfs_run_out "$MNT/sessions/z" 'echo $$')
assert_true "its shell is a fork of the template again" "its command line: $(tr '\0' ' ' <"/proc/$zpid/cmdline" 2>/dev/null)" \
	grep -qzx -e --template "/proc/$zpid/cmdline"
# nothing the upgrades handed over reaches a process of a session: no
# /dev/fuse, no state, no pipe of another shell in a shell made after
# them, nor in an old shell (g1's)
leaks() { # PID: the descriptors of PID that are the daemon's
	local f t
	for f in /proc/"$1"/fd/*; do
		t=$(readlink "$f" 2>/dev/null) || continue
		case $t in /dev/fuse | *sessionfs-state* | *sessionfs-note* | */live) echo "${f##*/}:$t" ;; esac
	done
}
g1pid=$(sfs_run_out "$MNT/sessions/g1" 'echo $$')
assert_eq "" "$(leaks "$zpid")$(leaks "$g1pid")" "no descriptor of the daemon in a shell after the upgrades"
cgdir=$(sed -n 's/^sessionfs: info: sessions are contained in //p' "$SFS_TMP/daemon.log" | head -n 1)
if [ -d "$cgdir" ]; then
	nsess=$(timeout 5 ls "$MNT/sessions" | grep -vcx clone)
	# each session's cgroup, and one of a session made ahead at most
	cg_count() { find "$cgdir" -mindepth 1 -maxdepth 1 -type d -name 's[0-9]*' | wc -l; }
	sfs_until 5 bash -c '[ "$(find "$1" -mindepth 1 -maxdepth 1 -type d -name "s[0-9]*" | wc -l)" -le "$2" ]' _ "$cgdir" "$((nsess + 1))"
	assert_true "no cgroup left by the old programs" "$(cg_count) cgroups for $nsess sessions" \
		test "$(cg_count)" -le "$((nsess + 1))"
else
	note "no cgroup of the instance found: the cgroups are not checked"
fi
head -n 80 "$SFS_TMP/probe.0" >"$SFS_TMP/probe.80"
mv "$SFS_TMP/probe.80" "$SFS_TMP/probe.0"
# ids (inode numbers) go on from where the old program was: a session
# deleted just before an upgrade does not lend its number to the next
check "mkdir sessions/gone" sfs_mkdir "$MNT/sessions/gone"
gone_ino=$(stat -c %i "$MNT/sessions/gone")
check "rmdir sessions/gone" timeout 10 rmdir "$MNT/sessions/gone"
assert_eq 0 "$(w1 "$MNT/ctl" $'upgrade\n' >/dev/null 2>&1; echo $?)" "upgrade 6: the write succeeds"
UPGRADES=6
check "upgrade 6: the new program serves" sfs_until 10 served 6
check "mkdir sessions/next" sfs_mkdir "$MNT/sessions/next"
next_ino=$(stat -c %i "$MNT/sessions/next")
assert_true "upgrade 6: a new session's inode is above the deleted one's" "$next_ino after $gone_ino" \
	test "$next_ino" -gt "$gone_ino"
probe_all "$SFS_TMP/probe.end"
assert_true "after: every shell the same" "$(diff "$SFS_TMP/probe.0" "$SFS_TMP/probe.end" | head -c 300 | tr '\n' ' ')" \
	cmp -s "$SFS_TMP/probe.0" "$SFS_TMP/probe.end"

sfs_done
