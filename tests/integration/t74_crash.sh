#!/usr/bin/env bash
# t74_crash: a crash of the server (kill -9) is recovered by its keeper
# (sessionfs(7), "Upgrades and crashes"). A crash loop on a mount of its
# own first: 5 crashes are each recovered, the 6th makes the mount answer
# EIO at once (never a hang), and an unmount ends the keeper (again, and
# SIGTERM then unmounts, exit 0, rather than leave a dead mount). Then
# SFS_CRASH_N sessions (default 30) with histories, env/ at both levels,
# a timeout, a named run, a finished proc (exit 7) and a running one, a
# run running at the crash with a blocked reader of its exit and of its
# stream, a consumer in its own mount namespace (the mount copied and
# bound there) looping ls and reads, and a loop in this namespace: after
# kill -9 of the server no client sees ENOTCONN or any error, the waiting
# requests are answered within SFS_CRASH_MS of the kill (default 1000;
# measured), every finished run's files are byte for byte as before, the
# running run ends `state error` with exit `-` and a line in error, every
# session's next run has a new shell with the old cwd and exported
# variables (error says what was lost), and health has recoveries 1 and
# a new pid. Two more crashes are recovered: a writer that held cmd open
# across one is told EIO at its close and its command does not run, and
# error's lines stay one each; a crash in a busy period (a client running
# commands) leaves the client going (no run hangs; a run that ended in
# the checkpoint's last 100 ms may be gone from the history), and SIGTERM
# to the keeper then ends every session and unmounts (0).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

N=${SFS_CRASH_N:-30}
LIMIT_MS=${SFS_CRASH_MS:-1000}
[ -n "${SFS_ASAN:-}" ] && LIMIT_MS=${SFS_CRASH_MS:-3000}
MARK=300.$$ # the argument of the sleeps this test starts in sessions
sfs_marker "$MARK"
sfs_marker "301.$$"

# ---------------------------------------------------------------- helpers

# health_val KEY: KEY's value in health (empty when it cannot be read)
health_val() { timeout 5 sed -n "s/^$1 //p" "$MNT/health" 2>/dev/null; }

# crash LABEL: kill -9 of the server; then a new one serves (checked)
crash() {
	local old=$SFS_SERVER
	kill -KILL "$old"
	sfs_wait_gone "$old" 5
	if sfs_new_server "$old"; then pass "$1: a new server ($SFS_SERVER) serves"; else
		fail "$1: a new server serves" "health names no new live pid: $(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
		return 1
	fi
}

# snap LIST DEST: copies each mount file of LIST (paths relative to the
# sessions/ folder) to DEST/PATH, in one process (a cat per file took
# seconds); a file that cannot be read leaves DEST/PATH.err
snap() {
	timeout -k 2 60 python3 -c '
import os, sys
src, lst, dest = sys.argv[1:4]
for f in open(lst).read().split("\n"):
    if not f:
        continue
    os.makedirs(os.path.dirname(os.path.join(dest, f)), exist_ok=True)
    try:
        with open(os.path.join(src, f), "rb") as i:
            b = i.read()
        open(os.path.join(dest, f), "wb").write(b)
    except OSError as e:
        open(os.path.join(dest, f) + ".err", "w").write(str(e))
' "$MNT/sessions" "$1" "$2"
}

# list_files: the files of every finished run and of the sessions (not
# of the one with a running run, nor the files a crash changes: error),
# relative to sessions/
list_files() {
	local s r f
	for s in "$MNT"/sessions/*/; do
		s=${s%/}
		for r in "$s"/runs/*/ "$s"/procs/*/; do
			r=${r%/}
			[ -d "$r" ] || continue
			[ -L "$r" ] && continue # runs/latest
			timeout 5 grep -qx 'state running' "$r/status" 2>/dev/null && continue
			for f in cmd stdout stderr output exit status result.json timeout; do
				[ -e "$r/$f" ] && printf '%s\n' "${r#"$MNT"/sessions/}/$f"
			done
		done
		timeout 5 grep -qx 'state running' "$s/status" && continue
		for f in stdout stderr output exit status result.json cwd timeout "$s"/env/*; do
			f=${f#"$s"/}
			[ -e "$s/$f" ] && printf '%s\n' "${s#"$MNT"/sessions/}/$f"
		done
	done
}

# bg_reader NAME FILE: cat FILE in the background into $SFS_TMP/NAME,
# then the time it ended into $SFS_TMP/NAME.t
bg_reader() {
	timeout -k 2 30 bash -c 'cat "$1" >"$2" 2>"$2.err"; printf "%s\n" "${EPOCHREALTIME//[!0-9]/}" >"$2.t"' \
		_ "$2" "$SFS_TMP/$1" </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_BG_PIDS+=("$!")
}

# shellcheck disable=SC2317 # called through assert_true
not_mounted() { ! sfs_mounted "$1"; }

# ended_ms NAME T0: ms from T0 (now_ms) to the end of bg_reader NAME
ended_ms() {
	local t
	t=$(cat "$SFS_TMP/$1.t" 2>/dev/null)
	[ -n "$t" ] && echo $((10#$t / 1000 - $2))
}

# ---------------------------------------------------------------- a crash loop

# crash_loop LABEL: on a mount of its own, 5 crashes are each recovered;
# the 6th makes the mount answer EIO at once; false if it did not mount
crash_loop() {
	local k t0 rc el
	sfs_start_mount "$1" || return 1
	for k in 1 2 3 4 5; do
		crash "$1, crash $k" || return 0
	done
	assert_eq 5 "$(health_val recoveries)" "$1: health says recoveries 5"
	kill -KILL "$SFS_SERVER"
	sfs_wait_gone "$SFS_SERVER" 5
	t0=$(now_ms)
	timeout 10 cat "$MNT/health" >/dev/null 2>"$SFS_TMP/eio.err"
	rc=$?
	el=$(($(now_ms) - t0))
	assert_true "$1: the 6th crash: the mount answers EIO" \
		"status $rc: $(head -c 200 "$SFS_TMP/eio.err")" grep -q 'Input/output error' "$SFS_TMP/eio.err"
	assert_lt "$el" 5000 "$1: EIO comes at once (${el} ms)" " ms"
	timeout 10 ls "$MNT/sessions" >/dev/null 2>"$SFS_TMP/eio.err"
	assert_true "$1: ls gives EIO too" "$(head -c 200 "$SFS_TMP/eio.err")" \
		grep -q 'Input/output error' "$SFS_TMP/eio.err"
	assert_true "$1: the keeper still runs" "it is gone" sfs_alive "$SFS_PID"
	SFS_SERVER=
}

if crash_loop "crash loop"; then
	sfs_umount
	assert_true "crash loop: the unmount ends the keeper" "it had to be killed" test "$SFS_DAEMON_RC" != killed
	assert_true "crash loop: unmounted" "still mounted" test -z "$MNT"
fi
if crash_loop "crash loop, then SIGTERM"; then
	kill -TERM "$SFS_PID"
	if sfs_wait_gone "$SFS_PID" 10; then
		wait "$SFS_PID"
		assert_eq 0 "$?" "crash loop, then SIGTERM: the keeper exits 0"
	else
		fail "crash loop, then SIGTERM: the keeper exits" "still running after 10 s"
	fi
	assert_true "crash loop, then SIGTERM: unmounted (not left dead)" "still mounted" not_mounted "$MNT"
	SFS_PID=
	sfs_umount
fi

# ---------------------------------------------------------------- the state

sfs_start_mount "sessions" || exit 1
S=$MNT/sessions
mkdir -p "$SFS_TMP/wd"
check "env/ROOTV (root env/)" sfs_write "$MNT/env/ROOTV" "root-$$"
made=0
for ((i = 1; i <= N; i++)); do
	mkdir -p "$SFS_TMP/wd/d$i"
	sfs_mkdir "$S/s$i" &&
		sfs_run "$S/s$i" "cd '$SFS_TMP/wd/d$i' && export V=v$i-$$ && PLAIN=p" 20 &&
		sfs_run "$S/s$i" "echo out$i; echo err$i >&2; (exit $((i % 5)))" 20 && made=$((made + 1))
done
assert_eq "$N" "$made" "$N sessions, each with two runs"
check "s1/env/SV (a session's env/)" sfs_write "$S/s1/env/SV" "sv-$$"
check "s2/timeout 5000" sfs_write "$S/s2/timeout" $'5000\n'
assert_run_ok "a run under s2's timeout" "$S/s2" 'echo timed'
check "mkdir s3/runs/mine (a named run)" sfs_mkdir "$S/s3/runs/mine"
check "s3/runs/mine/cmd" sfs_write "$S/s3/runs/mine/cmd" $'echo named\n'
check "s4/procs/done: exit 7" bash -c 'timeout 10 mkdir "$1/done" && printf "echo p; exit 7\n" | timeout 10 tee "$1/done/cmd" >/dev/null' _ "$S/s4/procs"
check "s4/procs/live: running" bash -c 'timeout 10 mkdir "$1/live" && printf "until [ -e %s ]; do sleep 0.05; done; echo live-late; sleep %s\n" "$3" "$2" | timeout 10 tee "$1/live/cmd" >/dev/null' _ "$S/s4/procs" "$MARK" "$SFS_TMP/late"
sfs_until 10 eval 'timeout 5 grep -qx 7 "$S/s4/procs/done/exit"'
assert_file_eq "$S/s4/procs/done/exit" $'7\n' "procs/done ended with exit 7"
# (it prints more just before the crash, likely after the last
# checkpoint, which is written 100 ms after a change at most)
sfs_run_bg "$S/s5" "echo started; until [ -e $SFS_TMP/late ]; do sleep 0.05; done; echo late-out; echo late-err >&2; sleep $MARK" 60
RUNNER=$SFS_BG
sfs_until 10 eval 'timeout 5 grep -qx started "$S/s5/stdout"'
assert_file_match "$S/s5/status" '^state running$' "s5's run 3 runs"
bg_reader exit "$S/s5/exit"
bg_reader stream "$S/s5/stream"

# the consumers: one in a mount namespace of its own (the mount copied
# there, and bound at C), one here; each loops ls and reads, and logs
# every error it sees
mkdir "$SFS_TMP/C"
STOP=$SFS_TMP/stop
CONSUME='n=0; until [ -e "$3" ]; do
	ls "$1/sessions" >/dev/null 2>>"$2.err" || echo "ls $1: $?" >>"$2.err"
	cat "$1/sessions/s1/runs/1/stdout" >/dev/null 2>>"$2.err" || echo "cat: $?" >>"$2.err"
	ls "$4/sessions/s1/runs" >/dev/null 2>>"$2.err" || echo "ls $4: $?" >>"$2.err"
	n=$((n + 1)); echo "$n" >"$2"
done'
# (its namespace copies every mount there is: it lets go of the FUSE
# mounts of other tests at once, or their unmounts would not end them)
timeout -k 2 200 unshare --mount --propagation slave bash -c \
	"$(declare -f sfs_drop_copied_mounts)"'
sfs_drop_copied_mounts "$1"; mount --bind "$1" "$5" || exit 1; '"$CONSUME" _ "$MNT" "$SFS_TMP/ns" "$STOP" "$SFS_TMP/C" "$SFS_TMP/C" \
	</dev/null >/dev/null 2>"$SFS_TMP/ns.start" {SFS_OUT}>&- {SFS_ERR}>&- &
CONSUMERS=("$!")
timeout -k 2 200 bash -c "$CONSUME" _ "$MNT" "$SFS_TMP/host" "$STOP" "$MNT" \
	</dev/null >/dev/null 2>&1 {SFS_OUT}>&- {SFS_ERR}>&- &
CONSUMERS+=("$!")
SFS_BG_PIDS+=("${CONSUMERS[@]}")
check "the consumers loop" sfs_until 10 eval 'test -s "$SFS_TMP/ns" && test -s "$SFS_TMP/host"'

list_files >"$SFS_TMP/list"
note "$(wc -l <"$SFS_TMP/list") files kept"
snap "$SFS_TMP/list" "$SFS_TMP/before"
assert_eq "" "$(find "$SFS_TMP/before" -name '*.err' | head -n 3)" "every file of the state reads before the crash"

# ---------------------------------------------------------------- the crash

: >"$SFS_TMP/late"
sfs_until 10 eval 'timeout 5 grep -qx late-err "$S/s5/stderr"'
sfs_until 10 eval 'timeout 5 grep -qx live-late "$S/s4/procs/live/stdout"'
old=$SFS_SERVER
t0=$(now_ms)
kill -KILL "$old"
timeout 10 cat "$S/s1/runs/1/stdout" >/dev/null 2>"$SFS_TMP/first.err"
first=$(($(now_ms) - t0))
note "the first request after kill -9 was answered in ${first} ms"
assert_lt "$first" "$LIMIT_MS" "a request made at the kill is answered within $LIMIT_MS ms (${first} ms)" " ms"
sfs_until 20 eval 'test -e "$SFS_TMP/exit.t" && test -e "$SFS_TMP/stream.t"'
for r in exit stream; do
	el=$(ended_ms "$r" "$t0")
	note "the waiting reader of $r was answered ${el:-never} ms after the kill"
	assert_lt "${el:-99999}" "$LIMIT_MS" "the reader of $r waiting at the kill is answered within $LIMIT_MS ms" " ms"
done
assert_eq "-" "$(cat "$SFS_TMP/exit")" "the waiting reader of exit reads '-'"
assert_eq "$(printf "started\nlate-out\nlate-err")" "$(cat "$SFS_TMP/stream")" "the waiting reader of stream read the output, then EOF"
check "the writer of the running run's cmd returns" sfs_wait_gone "$RUNNER" 10
if sfs_new_server "$old"; then pass "crash: a new server ($SFS_SERVER) serves"; else
	fail "crash: a new server serves" "$(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
fi
assert_eq 1 "$(health_val recoveries)" "health: recoveries 1"
assert_eq "$SFS_PID" "$(awk '/^PPid:/ { print $2 }' "/proc/$SFS_SERVER/status" 2>/dev/null)" \
	"the new server is the keeper's child"
assert_file_match "$MNT/metrics" '^sessionfs_recoveries_total 1$' "metrics: sessionfs_recoveries_total 1"

snap "$SFS_TMP/list" "$SFS_TMP/after"
if diff -r "$SFS_TMP/before" "$SFS_TMP/after" >"$SFS_TMP/diff" 2>&1; then
	pass "every finished run's and session's files are byte for byte as before ($(wc -l <"$SFS_TMP/list") files)"
else
	fail "every finished run's and session's files are byte for byte as before" "$(head -c 400 "$SFS_TMP/diff")"
fi
assert_file_match "$S/s5/status" '^state error$' "the run running at the crash: state error"
assert_file_eq "$S/s5/exit" $'-\n' "the run running at the crash: exit -"
assert_file_eq "$S/s5/stdout" $'started\nlate-out\n' "the run running at the crash: its stdout kept, what it printed just before too"
assert_file_eq "$S/s5/stderr" $'late-err\n' "the run running at the crash: its stderr kept"
assert_file_eq "$S/s5/output" $'started\nlate-out\nlate-err\n' "the run running at the crash: its output kept, in order"
assert_file_match "$S/s5/error" 'run 3: its shell was lost' "s5/error says its run was lost"
assert_file_match "$S/s4/procs/live/status" '^state (error|done|killed)$' "procs/live ended at the crash"
assert_file_eq "$S/s4/procs/live/exit" $'-\n' "procs/live: exit -"
assert_file_eq "$S/s4/procs/live/stdout" $'live-late\n' "procs/live: what it printed just before the crash is kept"
check "sleep $MARK is gone (the watchdog)" sfs_until 10 eval 'test -z "$(sfs_pids_with_arg "$MARK")"'

good=0 said=0
for ((i = 1; i <= N; i++)); do
	got=$(sfs_run_out "$S/s$i" 'echo "$PWD $V ${PLAIN:-none} $ROOTV"')
	if [ "$got" = "$SFS_TMP/wd/d$i v$i-$$ none root-$$" ]; then good=$((good + 1)); else
		note "s$i: got $(sfs_q "$got")"
	fi
	if timeout 5 grep -q 'restarted after a crash: the next run gets a new shell with the cwd and exported variables' \
		"$S/s$i/error"; then said=$((said + 1)); else
		note "s$i/error: $(timeout 5 cat "$S/s$i/error" | tr '\n' '|')"
	fi
done
assert_eq "$N" "$good" "every session's next run: a new shell, the old cwd and exported variables (plain ones lost)"
assert_eq "$N" "$said" "every session's error says what the crash lost"
assert_eq "sv-$$" "$(sfs_run_out "$S/s1" 'echo "$SV"')" "s1's env/SV in its new shell"
assert_file_eq "$S/s1/env/SV" "sv-$$"$'\n' "s1/env/SV kept"
assert_file_eq "$MNT/env/ROOTV" "root-$$"$'\n' "env/ROOTV kept"
assert_file_eq "$S/s2/timeout" $'5000\n' "s2/timeout kept"
assert_file_eq "$S/s3/runs/mine/stdout" $'named\n' "the named run kept"
check "a new proc starts" bash -c 'timeout 10 mkdir "$1/after" && printf "sleep %s\n" "$2" | timeout 10 tee "$1/after/cmd" >/dev/null' _ "$S/s4/procs" "301.$$"

# ---------------------------------------------------------------- more crashes

# a writer of cmd that holds it open across crash 2: its text went with
# the crashed server, so its close fails (EIO) and nothing runs
timeout -k 2 60 python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"echo held > /dev/null; echo ran >" + sys.argv[2].encode() + b"\n")
open(sys.argv[3], "w").close()
while not os.path.exists(sys.argv[4]):
    time.sleep(0.05)
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print(os.strerror(e.errno))
' "$S/s2/cmd" "$SFS_TMP/held.ran" "$SFS_TMP/held.ready" "$SFS_TMP/held.go" >"$SFS_TMP/held" 2>&1 \
	</dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
HELD=$!
SFS_BG_PIDS+=("$HELD")
check "a writer holds s2/cmd open with a command written" sfs_until 10 test -e "$SFS_TMP/held.ready"
for k in 2 3; do
	crash "crash $k" || break
	if [ "$k" = 2 ]; then
		touch "$SFS_TMP/held.go"
		sfs_wait_gone "$HELD" 10
		assert_eq "Input/output error" "$(cat "$SFS_TMP/held")" \
			"crash 2: the close of the cmd written before it fails with EIO"
		assert_true "crash 2: that command did not run" "it ran" test ! -e "$SFS_TMP/held.ran"
		timeout 5 cat "$S/s1/error" >"$SFS_TMP/s1.error"
		assert_eq "$(grep -c '' "$SFS_TMP/s1.error")" \
			"$(grep -oE '20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z ' "$SFS_TMP/s1.error" | wc -l)" \
			"crash 2: each line of s1/error kept is a line of its own"
	fi
	assert_eq "$k" "$(health_val recoveries)" "crash $k: health says recoveries $k"
	assert_eq "again$k" "$(sfs_run_out "$S/s1" "echo again$k")" "crash $k: a run in s1 works" ||
		note "s1: $(timeout 5 cat "$S/s1/status" "$S/s1/error" | tr '\n' '|')"
done

# a crash while a client runs commands: it goes on, and no run hangs
check "mkdir sessions/busy" sfs_mkdir "$S/busy"
timeout -k 2 200 bash -c 'i=0; until [ -e "$2" ]; do
	i=$((i + 1)); t=${EPOCHREALTIME//[!0-9]/}
	printf "echo b%s\n" "$i" | timeout 20 tee "$1/cmd" >/dev/null; rc=$?
	o=$(timeout 5 cat "$1/stdout")
	echo "$i $rc $(( (${EPOCHREALTIME//[!0-9]/} - t) / 1000 )) $o" >>"$3"
done' _ "$S/busy" "$STOP.busy" "$SFS_TMP/busy" </dev/null >/dev/null 2>&1 {SFS_OUT}>&- {SFS_ERR}>&- &
BUSY=$!
SFS_BG_PIDS+=("$BUSY")
sfs_until 30 eval '[ "$(cat "$SFS_TMP/busy" 2>/dev/null | wc -l)" -ge 10 ]'
crash "a crash in a busy period"
at=$(wc -l <"$SFS_TMP/busy")
sfs_until 30 eval '[ "$(awk -v a="$at" "NR > a + 1 && \$2 == 0 && \$4 == \"b\" \$1" "$SFS_TMP/busy" | wc -l)" -ge 10 ]'
touch "$STOP.busy"
sfs_wait_gone "$BUSY" 30
assert_eq 0 "$(awk '$2 == 124' "$SFS_TMP/busy" | wc -l)" "busy: no run hung ($(wc -l <"$SFS_TMP/busy") runs)"
assert_true "busy: the client goes on after the recovery" "$(tail -n 3 "$SFS_TMP/busy" | tr '\n' '|')" \
	test "$(awk -v a="$at" 'NR > a + 1 && $2 == 0 && $4 == "b" $1' "$SFS_TMP/busy" | wc -l)" -ge 10
# (a run that ended in the last checkpoint's interval before the crash,
# SSTATE_CKPT_MS, may be gone from the history: so only those after)
bad=$(awk -v a="$at" 'NR > a + 1 && $2 == 0 && $4 != "b" $1' "$SFS_TMP/busy" | wc -l)
assert_eq 0 "$bad" "busy: each run after the recovery that succeeded has its own output" ||
	note "busy: $(awk -v a="$at" 'NR > a + 1 && $2 == 0 && $4 != "b" $1' "$SFS_TMP/busy" | head -n 3 | tr '\n' '|')"
note "busy: $(awk -v a="$at" 'NR <= a + 1 && $2 == 0 && $4 != "b" $1' "$SFS_TMP/busy" | wc -l) runs that succeeded just before the crash were not in its checkpoint"
note "busy: $(awk '$2 != 0' "$SFS_TMP/busy" | wc -l) runs failed across the crash"

# the consumers saw no error through all of it, and looped across
touch "$STOP"
for c in "${CONSUMERS[@]}"; do sfs_wait_gone "$c" 10; done
for c in ns host; do
	assert_eq "" "$(head -c 300 "$SFS_TMP/$c.err" 2>/dev/null)" "the consumer ($c) saw no error (no ENOTCONN) across 4 crashes"
	note "the consumer ($c) looped $(cat "$SFS_TMP/$c") times"
done
assert_eq "" "$(head -c 300 "$SFS_TMP/ns.start")" "the consumer's namespace had its bind mount"

# ---------------------------------------------------------------- SIGTERM

kill -TERM "$SFS_PID"
if sfs_wait_gone "$SFS_PID" 20; then
	wait "$SFS_PID"
	assert_eq 0 "$?" "SIGTERM after recoveries: the keeper exits 0"
else
	fail "SIGTERM after recoveries: the keeper exits" "still running after 20 s"
fi
assert_true "SIGTERM: unmounted" "still mounted" not_mounted "$MNT"
check "SIGTERM: the server is gone" sfs_wait_gone "$SFS_SERVER" 10
check "SIGTERM: the sessions' processes are gone" sfs_until 10 eval 'test -z "$(sfs_pids_with_arg "301.$$")"'
SFS_PID=
SFS_SERVER=
sfs_umount
SFS_DONE=1
exit 0
