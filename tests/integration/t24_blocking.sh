#!/usr/bin/env bash
# t24_blocking: the blocking files. `stream` follows a run live and ends at
# its end; `grep -m1` on stream returns as soon as its line appears; a
# reader blocked on `exit` or `stream` gets EINTR at once on SIGINT (and a
# plain `cat exit` dies at once); poll(2) and select(2) on stream and exit
# wait for data and report the end; 500 readers blocked at once on 50
# sessions leave the daemon responsive, and die at once when killed.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

READERS=() # the 500 blocked readers: killed by pid at exit, whatever happens
trap 'rc=$?; [ ${#READERS[@]} -gt 0 ] && kill -KILL "${READERS[@]}" 2>/dev/null; (exit $rc); sfs_cleanup' EXIT

now_us() { printf '%s\n' $((10#${EPOCHREALTIME//[!0-9]/})); }

# wait_gone_fast PID MS: like sfs_wait_gone, polling every 2 ms (for
# latency measurements)
wait_gone_fast() {
	local end=$(($(now_us) + $2 * 1000))
	while sfs_alive "$1"; do
		[ "$(now_us)" -lt "$end" ] || return 1
		sleep 0.002
	done
	return 0
}

# wait_running DIR: until DIR/status says state running (3 s)
wait_running() { sfs_until 3 timeout 5 grep -qsx 'state running' "$1/status"; }

# new_session NAME: mkdir it and warm its shell up; prints its path
new_session() {
	local d=$MNT/sessions/$1
	if sfs_mkdir "$d" && sfs_run "$d" 'true' 10; then
		printf '%s\n' "$d"
	else
		fail "set up sessions/$1" "mkdir or the warm-up run failed"
		printf '%s\n' "$d"
	fi
}

# start_run LABEL DIR CMD: start CMD in the background and wait until it
# runs; pid of the writer in SFS_BG
start_run() {
	sfs_run_bg "$2" "$3" 60
	if wait_running "$2"; then pass "$1: the run is running"; else
		fail "$1: the run is running" "status: $(timeout 5 cat "$2/status" | tr '\n' ' ')"
	fi
}

# end_writer LABEL PID SECONDS: the writer's close returned within SECONDS
end_writer() {
	if sfs_wait_gone "$2" "$3"; then
		wait "$2"
		assert_eq 0 $? "$1: the close of cmd succeeds"
	else
		fail "$1: the close of cmd succeeds" "still blocked after $3 s"
	fi
}

BLOCKIO=$SFS_TMP/blockio
if ${CC:-cc} -O2 -o "$BLOCKIO" "$(dirname "$0")/helpers/blockio.c" 2>"$SFS_TMP/cc.err"; then
	pass "compile helpers/blockio.c"
else
	fail "compile helpers/blockio.c" "$(head -c 300 "$SFS_TMP/cc.err")"
	BLOCKIO=
fi

# 1. stream follows the run and ends at its end
F=$(new_session follow)
t0=$(now_ms)
start_run "stream" "$F" 'for i in 1 2 3 4 5; do echo line$i; sleep 0.3; done'
w=$SFS_BG
timeout -k 2 10 cat "$F/stream" >"$SFS_TMP/stream.out" 2>"$SFS_TMP/stream.err"
rc=$?
el=$(($(now_ms) - t0))
assert_eq 0 "$rc" "timeout 10 cat stream ends by itself"
assert_eq "$(printf 'line%s\n' 1 2 3 4 5)" "$(cat "$SFS_TMP/stream.out")" "cat stream shows all 5 lines"
assert_true "cat stream ends at the run's end, not before" "it ended after $el ms" test "$el" -ge 1300
assert_lt "$el" 3000 "cat stream ends soon after the run's end" " ms"
end_writer "stream" "$w" 2
assert_file_eq "$F/stream" $'line1\nline2\nline3\nline4\nline5\n' "stream of a finished run: its whole output, then EOF"

# 2. grep -m1 on stream returns when the first line appears
G=$(new_session grep)
t0=$(now_ms)
start_run "grep -m1" "$G" 'sleep 1; echo first; sleep 3; echo second'
wg=$SFS_BG
got=$(timeout -k 2 10 grep -m1 first "$G/stream")
rc=$?
el=$(($(now_ms) - t0))
assert_eq "0 first" "$rc $got" "grep -m1 first stream finds the line"
assert_lt "$el" 2000 "grep -m1 returns as soon as the line appears (the run lasts 4 s)" " ms"
assert_true "grep -m1 waited for the line" "it returned after $el ms, before the line was printed" \
	test "$el" -ge 900

# 3. SIGINT on blocked readers
I=$(new_session intr)
start_run "SIGINT" "$I" 'sleep 40'
wi=$SFS_BG
# 3a. a plain cat exit (timeout gives its child the default SIGINT action)
timeout -k 2 30 cat "$I/exit" >"$SFS_TMP/intr.cat" 2>&1 &
tp=$!
SFS_BG_PIDS+=("$tp")
catpid=
for ((i = 0; i < 20; i++)); do
	catpid=$(sfs_descendants "$tp" | head -n 1)
	[ -n "$catpid" ] && break
	sleep 0.05
done
sleep 0.3
if [ -n "$catpid" ] && sfs_alive "$catpid"; then
	pass "cat exit blocks while the run is active"
	note "the blocked cat waits in $(cat "/proc/$catpid/wchan" 2>/dev/null)"
	t0=$(now_us)
	kill -INT "$catpid"
	if wait_gone_fast "$tp" 3000; then
		t1=$(now_us)
		wait "$tp"
		assert_lt $(((t1 - t0) / 1000)) 100 "kill -INT of a blocked cat exit: it returns within 100 ms" " ms"
	else
		fail "kill -INT of a blocked cat exit: it returns within 100 ms" "still blocked 3 s later"
	fi
else
	fail "cat exit blocks while the run is active" "it returned: $(cat "$SFS_TMP/intr.cat")"
fi
# 3b. EINTR precisely, on exit and on stream
if [ -n "$BLOCKIO" ]; then
	for f in exit stream; do
		out=$SFS_TMP/intr.$f
		"$BLOCKIO" intr "$I/$f" >"$out" 2>&1 &
		bp=$!
		SFS_BG_PIDS+=("$bp")
		for ((i = 0; i < 20; i++)); do
			grep -q blocked "$out" && break
			sleep 0.05
		done
		sleep 0.3
		if sfs_alive "$bp"; then
			pass "$f: a read blocks while the run is active"
			kill -INT "$bp"
			if sfs_wait_gone "$bp" 3; then
				wait "$bp"
				res=$(grep -v blocked "$out")
				case $res in
				"eintr "*)
					pass "$f: SIGINT interrupts the read with EINTR"
					assert_lt "${res#eintr }" 100 "$f: EINTR within 100 ms of the signal" " ms"
					;;
				*) fail "$f: SIGINT interrupts the read with EINTR" "the helper said: $res" ;;
				esac
			else
				fail "$f: SIGINT interrupts the read with EINTR" "still blocked 3 s after SIGINT"
			fi
		else
			fail "$f: a read blocks while the run is active" "the helper said: $(tr '\n' ' ' <"$out")"
		fi
	done
fi
assert_file_match "$I/status" '^state running$' "the interrupted reads did not disturb the run"
check "end the sleep 40 run: echo kill > ctl" sfs_write "$I/ctl" $'kill\n'
end_writer "SIGINT" "$wi" 5
assert_file_eq "$I/exit" $'143\n' "the killed run's exit is 143"

# 4. poll and select on stream and exit
# ok_line N EXPECT-RE LABEL: line N of $OUT matches EXPECT-RE
ok_line() {
	local l
	l=$(sed -n "$1p" "$OUT")
	if grep -qE -e "$2" <<<"$l"; then pass "$3"; else
		fail "$3" "line $1 of the helper: '$l' (all: $(tr '\n' '|' <"$OUT"))"
	fi
}
if [ -n "$BLOCKIO" ]; then
	P=$(new_session poll)
	for how in poll select; do
		OUT=$SFS_TMP/$how.stream
		start_run "$how stream" "$P" 'sleep 1; echo a; sleep 1; echo b'
		w=$SFS_BG
		timeout -k 2 15 "$BLOCKIO" "$how" "$P/stream" 300 3000 3000 3000 >"$OUT" 2>&1
		ok_line 1 '^timeout [0-9]+$' "$how stream: no data yet: it waits the whole timeout"
		ok_line 2 '^ready [0-9]+ 0x[0-9a-f]+ 2 a\\n$' "$how stream: ready when the first line comes, read gives it"
		ok_line 3 '^ready ([7-9][0-9][0-9]|1[0-9][0-9][0-9]) 0x[0-9a-f]+ 2 b\\n$' "$how stream: waits about 1 s for the second line"
		ok_line 4 '^ready [0-9]+ 0x[0-9a-f]+ 0 $' "$how stream: ready at the run's end, read gives EOF"
		end_writer "$how stream" "$w" 5

		OUT=$SFS_TMP/$how.exit
		start_run "$how exit" "$P" 'sleep 1.5; (exit 7)'
		w=$SFS_BG
		timeout -k 2 15 "$BLOCKIO" "$how" "$P/exit" 300 5000 3000 >"$OUT" 2>&1
		ok_line 1 '^timeout [0-9]+$' "$how exit: not ready while the run is active"
		ok_line 2 '^ready [0-9]+ 0x[0-9a-f]+ 2 7\\n$' "$how exit: ready at the run's end, read gives 7"
		ok_line 3 '^ready [0-9]+ 0x[0-9a-f]+ 0 $' "$how exit: then EOF"
		end_writer "$how exit" "$w" 5

		OUT=$SFS_TMP/$how.idle
		timeout -k 2 15 "$BLOCKIO" "$how" "$P/exit" 3000 >"$OUT" 2>&1
		ok_line 1 '^ready [0-9]{1,2} 0x[0-9a-f]+ 2 7\\n$' "$how exit when idle: ready at once"
	done
fi

# 5. 500 readers blocked on 50 sessions at once
NS=50
names=()
for ((k = 0; k < NS; k++)); do names+=("$(printf 'b%02d' "$k")"); done
setup_bad=0
good=() # the sessions whose warm-up run worked
for n in "${names[@]}"; do
	if ! sfs_mkdir "$MNT/sessions/$n" 2>"$SFS_TMP/setup.err"; then
		setup_bad=$((setup_bad + 1))
		note "mkdir sessions/$n failed: $(head -c 200 "$SFS_TMP/setup.err")"
		continue
	fi
	sfs_run "$MNT/sessions/$n" 'true' 10
	rc=$?
	if [ "$rc" -ne 0 ]; then
		setup_bad=$((setup_bad + 1))
		note "warm-up run 'true' of sessions/$n failed (status $rc; 124: its close did not return in 10 s); status: $(timeout 5 cat "$MNT/sessions/$n/status" 2>&1 | tr '\n' ' ')"
		continue
	fi
	good+=("$n")
done
assert_eq 0 "$setup_bad" "500 readers: 50 sessions created, each runs 'true'"
NR=$((10 * ${#good[@]}))
FREE=$(new_session free)
writers=()
for n in "${good[@]}"; do
	sfs_run_bg "$MNT/sessions/$n" 'sleep 40' 60
	writers+=("$SFS_BG")
done
notrun=0
for n in "${good[@]}"; do
	if ! wait_running "$MNT/sessions/$n"; then
		notrun=$((notrun + 1))
		note "sessions/$n: $(timeout 5 cat "$MNT/sessions/$n/status" 2>&1 | tr '\n' ' ')"
	fi
done
assert_eq 0 "$notrun" "500 readers: all ${#good[@]} sessions run sleep 40"
for n in "${good[@]}"; do
	for j in 1 2 3 4 5; do
		cat "$MNT/sessions/$n/exit" >"$SFS_TMP/r.$n.exit.$j" 2>&1 &
		READERS+=($!)
		disown $! # no "Killed" job notices (bash still reaps it)
		cat "$MNT/sessions/$n/stream" >"$SFS_TMP/r.$n.stream.$j" 2>&1 &
		READERS+=($!)
		disown $!
	done
done
sleep 1
alive=0
for p in "${READERS[@]}"; do sfs_alive "$p" && alive=$((alive + 1)); done
assert_eq "$NR" "$alive" "500 readers: all $NR readers are blocked"

t0=$(now_ms)
n=$(timeout 5 ls "$MNT/sessions" | grep -c '^b[0-9][0-9]$')
el=$(($(now_ms) - t0))
assert_eq 50 "$n" "500 readers: ls sessions lists the 50 sessions"
assert_lt "$el" 1000 "500 readers: ls sessions answers in < 1 s" " ms"
t0=$(now_ms)
st=$(timeout 5 cat "$FREE/status")
el=$(($(now_ms) - t0))
assert_true "500 readers: cat status of another session works" "got: $st" grep -qx 'state completed' <<<"$st"
assert_lt "$el" 1000 "500 readers: cat status of another session answers in < 1 s" " ms"
t0=$(now_ms)
st=$(timeout 5 cat "$MNT/sessions/${good[0]:-b00}/status")
el=$(($(now_ms) - t0))
assert_true "500 readers: cat status of a busy session works" "got: $st" grep -qx 'state running' <<<"$st"
assert_lt "$el" 1000 "500 readers: cat status of a busy session answers in < 1 s" " ms"
t0=$(now_ms)
sfs_sh "$FREE" 'echo "echo hi" > cmd; cat stdout' 5 >"$SFS_TMP/free.out" 2>&1
rc=$?
el=$(($(now_ms) - t0))
assert_eq "0 hi" "$rc $(cat "$SFS_TMP/free.out")" "500 readers: echo hi > cmd; cat stdout in another session"
assert_lt "$el" 1000 "500 readers: that full run answers in < 1 s" " ms"

# kill all readers by pid: blocked FUSE reads must be answered at once
t0=$(now_ms)
kill -KILL "${READERS[@]}" 2>/dev/null
left=$NR
for ((i = 0; i < 50 && left > 0; i++)); do
	left=0
	for p in "${READERS[@]}"; do sfs_alive "$p" && left=$((left + 1)); done
	[ "$left" -gt 0 ] && sleep 0.1
done
el=$(($(now_ms) - t0))
assert_eq 0 "$left" "500 readers: all gone after SIGKILL"
assert_lt "$el" 3000 "500 readers: they die within 3 s of SIGKILL" " ms"
READERS=()

# end the 50 runs
bad=0
for n in "${good[@]}"; do sfs_write "$MNT/sessions/$n/ctl" $'kill\n' 5 || bad=$((bad + 1)); done
assert_eq 0 "$bad" "500 readers: echo kill > ctl of the ${#good[@]} sessions"
t0=$(now_ms)
stuck=0
for p in "${writers[@]}"; do
	if sfs_wait_gone "$p" 5; then wait "$p"; else stuck=$((stuck + 1)); fi
done
assert_eq 0 "$stuck" "500 readers: the ${#good[@]} writers' closes return after the kill"
assert_file_eq "$MNT/sessions/${good[-1]:-b49}/exit" $'143\n' "500 readers: sessions/${good[-1]:-b49}'s run was killed (143)"
assert_run_ok "500 readers: the daemon still runs commands" "$FREE" 'echo after'
assert_file_eq "$FREE/stdout" $'after\n' "500 readers: stdout after all this"

end_writer "grep -m1" "$wg" 10
assert_file_eq "$G/stdout" $'first\nsecond\n' "the grep -m1 run went on to its end"

sfs_done
