#!/usr/bin/env bash
# t23_concurrency: 8 writers on one session at once: each gets a run of its
# own in runs/, each run's stdout holds only its own marker (200 lines), the
# runs do not overlap, every close returns; 8 sessions running `sleep 1` at
# once finish in < 3 s in all; sessions whose shells start while the
# daemon's descriptor numbers pass 200 (the shell's protocol fds are 200
# and 201) run their commands like any other.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

SFS_READ_T=20
sfs_mount

S=$MNT/sessions/many
check "mkdir sessions/many" sfs_mkdir "$S"
assert_run_ok "warm-up run" "$S" 'true'

# 1. 8 writers on one session's cmd at once
log=$SFS_TMP/order.log
: >"$log"
pids=()
for k in 1 2 3 4 5 6 7 8; do
	mk="MARK$k-$$"
	# prints its marker 200 times, pausing now and then so that overlapping
	# runs would mix their lines; logs start and end
	printf '%s\n' \
		"echo start >> '$log'" \
		"for i in \$(seq 200); do echo $mk; [ \$((i % 50)) -ne 0 ] || sleep 0.02; done" \
		"echo end >> '$log'" >"$SFS_TMP/w$k.sh"
	timeout -k 2 60 bash -c 'cat >"$1"' _ "$S/cmd" <"$SFS_TMP/w$k.sh" 2>"$SFS_TMP/w$k.err" &
	pids+=($!)
	SFS_BG_PIDS+=($!)
done
bad=0
for k in 1 2 3 4 5 6 7 8; do
	wait "${pids[k - 1]}" || {
		bad=$((bad + 1))
		note "writer $k: status $? $(head -c 200 "$SFS_TMP/w$k.err")"
	}
done
assert_eq 0 "$bad" "8 writers: every close of cmd succeeds"
assert_eq "$(printf 'start\nend\n%.0s' 1 2 3 4 5 6 7 8)" "$(cat "$log")" "8 writers: the runs do not overlap (start/end pairs)"

nums=$(timeout 10 ls "$S/runs" | grep -c '^[0-9]')
assert_eq 9 "$nums" "8 writers: runs/ holds the warm-up run and 8 more"
seen=
for n in 2 3 4 5 6 7 8 9; do
	d=$S/runs/$n
	if ! sfs_cat "$d/stdout" "$SFS_TMP/out.$n"; then
		fail "runs/$n: stdout readable" "$(head -c 200 "$SFS_TMP/out.$n.err")"
		continue
	fi
	marks=$(sort -u "$SFS_TMP/out.$n" | tr '\n' ' ')
	lines=$(wc -l <"$SFS_TMP/out.$n")
	if [ "$(wc -w <<<"$marks")" -eq 1 ] && [ "$lines" -eq 200 ]; then
		pass "runs/$n: stdout is 200 lines of one marker"
	else
		fail "runs/$n: stdout is 200 lines of one marker" "$lines lines; markers: $marks"
	fi
	m=${marks% }
	if timeout 5 grep -qF -- "echo $m;" "$d/cmd"; then
		pass "runs/$n: its stdout's marker is its own command's"
	else
		fail "runs/$n: its stdout's marker is its own command's" "cmd has no 'echo $m;'"
	fi
	assert_file_eq "$d/exit" $'0\n' "runs/$n: exit 0"
	seen+="$m "
done
distinct=$(tr ' ' '\n' <<<"$seen" | grep -c .)
distinct_u=$(tr ' ' '\n' <<<"$seen" | grep . | sort -u | wc -l)
assert_eq "8 8" "$distinct $distinct_u" "8 writers: 8 runs with 8 different markers"

# 2. 8 named runs written at once, read back by their writers
pids=()
for k in 1 2 3 4 5 6 7 8; do
	if ! sfs_mkdir "$S/runs/w$k" 2>/dev/null; then
		fail "mkdir runs/w$k" "refused"
		continue
	fi
	bash -c 'printf "for i in \$(seq 200); do echo %s; done\n" "$2" >"$1/cmd" && cat "$1/stdout"' \
		_ "$S/runs/w$k" "N$k-$$" >"$SFS_TMP/n$k.out" 2>&1 &
	pids+=($!)
	SFS_BG_PIDS+=($!)
done
for k in 1 2 3 4 5 6 7 8; do
	if timeout 30 bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 0.05; done' _ "${pids[k - 1]}"; then
		wait "${pids[k - 1]}"
		rc=$?
		want=$(for ((i = 0; i < 200; i++)); do echo "N$k-$$"; done)
		if [ "$rc" -eq 0 ] && [ "$(cat "$SFS_TMP/n$k.out")" = "$want" ]; then
			pass "named run w$k: its writer reads back its own 200 lines"
		else
			fail "named run w$k: its writer reads back its own 200 lines" "status $rc, got $(sfs_show "$SFS_TMP/n$k.out")"
		fi
	else
		fail "named run w$k: its writer reads back its own 200 lines" "writer still busy after 30 s"
	fi
done

# 3. 8 sessions, each running sleep 1 at once
for k in 1 2 3 4 5 6 7 8; do
	if ! { sfs_mkdir "$MNT/sessions/p$k" && sfs_run "$MNT/sessions/p$k" 'true' 10; }; then
		fail "set up sessions/p$k" "mkdir or warm-up run failed"
	fi
done
pids=()
t0=$(now_ms)
for k in 1 2 3 4 5 6 7 8; do
	sfs_run_bg "$MNT/sessions/p$k" 'sleep 1' 15
	pids+=("$SFS_BG")
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
el=$(($(now_ms) - t0))
assert_eq 0 "$bad" "8 sessions: every sleep 1 close succeeds"
assert_lt "$el" 3000 "8 sessions' sleep 1 at once finish in < 3 s" " ms"
assert_true "8 sessions: the runs really slept" "took only $el ms" test "$el" -ge 950
for k in 1 2 3 4 5 6 7 8; do
	assert_file_eq "$MNT/sessions/p$k/exit" $'0\n' "sessions/p$k: exit 0"
done

# 4. shells started while the daemon's descriptors pass 200: the shell gets
# its protocol pipes as fds 200 and 201, so a pipe that is already 200 or
# 201 in the daemon must still reach the shell. Four passes, each shifted by
# one descriptor, and one more descriptor held per session, so that the
# pipes land on every alignment around 200.
# daemon_maxfd: how many descriptors the daemon has open (they are dense, so
# this is about its highest one; a stray inherited descriptor such as 251
# does not count as the top)
daemon_maxfd() { find "/proc/$SFS_SERVER/fd" -mindepth 1 -printf '%f\n' 2>/dev/null | wc -l; }
BASE=$MNT/sessions/p1 # its stdout holds "" - use a run with output
sfs_run "$BASE" 'echo base' 10
fd_pass() { # OFFSET
	local off=$1 i d h rc out ex maxfd bad=0 nses=0 hs=() made=()
	for ((i = 0; i < off; i++)); do
		exec {h}<"$BASE/stdout"
		read -r -n 1 -u "$h" _
		hs+=("$h")
	done
	for ((i = 0; i < 150; i++)); do
		maxfd=$(daemon_maxfd)
		[ "${maxfd:-0}" -gt 240 ] && break
		d=$MNT/sessions/fd$off-$i
		if ! sfs_mkdir "$d" 2>/dev/null; then
			note "fd pass $off: mkdir sessions/fd$off-$i failed"
			break
		fi
		made+=("$d")
		nses=$((nses + 1))
		sfs_run "$d" 'echo x' 5
		rc=$?
		if [ "$rc" -ne 0 ]; then
			bad=$((bad + 1))
			note "fd pass $off: first run 'echo x' of sessions/fd$off-$i: status $rc (124: no answer in 5 s); the daemon had $maxfd descriptors open before it"
			continue
		fi
		out=$(timeout 5 cat "$d/stdout"; echo .)
		ex=$(timeout 5 cat "$d/exit")
		if [ "$out" != $'x\n.' ] || [ "$ex" != 0 ]; then
			bad=$((bad + 1))
			note "fd pass $off: first run 'echo x' of sessions/fd$off-$i gave stdout $(sfs_q "${out%.}"), exit $(sfs_q "$ex"); the daemon had $maxfd descriptors open before it"
			continue
		fi
		exec {h}<"$d/stdout" # pins one more descriptor in the daemon
		read -r -n 1 -u "$h" _
		hs+=("$h")
	done
	maxfd=$(daemon_maxfd)
	assert_true "fd pass $off: the daemon's descriptors passed 200" "$maxfd descriptors after $nses sessions" \
		test "${maxfd:-0}" -gt 210
	assert_eq 0 "$bad" "fd pass $off: the first run 'echo x' of each of $nses new sessions prints x"
	for h in "${hs[@]}"; do exec {h}<&-; done
	for d in "${made[@]}"; do timeout 20 rmdir "$d" || note "rmdir $d failed"; done
}
for off in 0 1 2 3; do fd_pass "$off"; done
assert_run_ok "a run after the fd passes" "$BASE" 'echo still'
assert_file_eq "$BASE/stdout" $'still\n' "the daemon still works after the fd passes"

sfs_done
