#!/usr/bin/env bash
# t28_sandbox: what applies to every session. Root env/NAME: seen by a
# session's next run (not by the run active at the write), by a new
# session and by processes started afterwards; rm unsets it; ls lists it.
# Root ctl: `killall` with processes (one ignoring TERM) and a run in three
# sessions returns once all of them are gone, and the sessions go on. A
# process writing 100 MiB while another session runs commands. rmdir of a
# session with processes; unmounting and SIGTERM to the daemon end every
# process of every session.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

# runs_ok LABEL DIR CMD WANT: run CMD in DIR; stdout is WANT
runs_ok() {
	assert_run_ok "$1: the run" "$2" "$3" 10
	assert_file_eq "$2/stdout" "$4" "$1: stdout is $(sfs_q "$4")"
}

# proc_start DIR NAME CMD: mkdir DIR/procs/NAME, write CMD to its cmd
proc_start() {
	sfs_mkdir "$1/procs/$2" 2>"$SFS_TMP/write.err" &&
		sfs_write "$1/procs/$2/cmd" "$3"$'\n' 10
}

# 1. root env
A=$MNT/sessions/a
check "mkdir sessions/a" sfs_mkdir "$A"
runs_ok "env: before" "$A" 'echo "${RV-unset}"' $'unset\n'
check "env: echo rootval > env/RV" sfs_write "$MNT/env/RV" $'rootval\n'
assert_file_eq "$MNT/env/RV" $'rootval\n' "env: env/RV reads back with a newline"
assert_true "env: ls env/ lists RV" "ls gave: $(timeout 5 ls "$MNT/env" 2>&1 | tr '\n' ' ')" \
	sh -c 'timeout 5 ls "$1" | grep -qx RV' _ "$MNT/env"
runs_ok "env: the next run of an existing session" "$A" 'echo "${RV-unset}"' $'rootval\n'
runs_ok "env: a child process sees it (exported)" "$A" 'bash -c '\''echo "${RV-unset}"'\''' $'rootval\n'
B=$MNT/sessions/b
check "mkdir sessions/b" sfs_mkdir "$B"
runs_ok "env: a new session" "$B" 'echo "${RV-unset}"' $'rootval\n'
runs_ok "env: the default session" "$MNT/sessions/default" 'echo "${RV-unset}"' $'rootval\n'
check "env: start a process" proc_start "$A" e1 'echo "${RV-unset}"'
assert_file_eq "$A/procs/e1/exit" $'0\n' "env: the process exits 0"
assert_file_eq "$A/procs/e1/stdout" $'rootval\n' "env: a process started afterwards sees it"
# values are literal
check "env: a value with \$(...) and quotes" sfs_write "$MNT/env/RLIT" '$(echo no) `echo no` it'\''s "q"'$'\n'
runs_ok "env: the value is not evaluated" "$B" 'printf "%s\n" "$RLIT"' '$(echo no) `echo no` it'\''s "q"'$'\n'
for bad in 1A A-B 'A B'; do
	assert_write_errno EINVAL "env: name '$bad' gives EINVAL" "$MNT/env/$bad" $'v\n'
done
# a change while a run is active applies from the next run
sfs_marker "1.$$"
sfs_run_bg "$A" "sleep 1.$$; echo \"\$RV\"" 20
w=$SFS_BG
sfs_wait_pids_with_arg "1.$$" 5 >/dev/null
check "env: change RV while a run is active" sfs_write "$MNT/env/RV" $'second\n'
if sfs_wait_gone "$w" 10; then wait "$w"; fi
assert_file_eq "$A/stdout" $'rootval\n' "env: the active run kept the old value"
runs_ok "env: the run after it" "$A" 'echo "$RV"' $'second\n'
runs_ok "env: another session's next run" "$B" 'echo "$RV"' $'second\n'
# rm unsets
check "env: rm env/RV" timeout 5 rm "$MNT/env/RV"
assert_true "env: ls env/ no longer lists RV" "ls gave: $(timeout 5 ls "$MNT/env" 2>&1 | tr '\n' ' ')" \
	sh -c '! timeout 5 ls "$1" | grep -qx RV' _ "$MNT/env"
assert_errno ENOENT "env: env/RV is gone" cat "$MNT/env/RV"
runs_ok "env: unset in the next run" "$A" 'echo "${RV-unset}"' $'unset\n'
C=$MNT/sessions/c
check "mkdir sessions/c" sfs_mkdir "$C"
runs_ok "env: unset in a new session" "$C" 'echo "${RV-unset}"' $'unset\n'
check "env: start a process after rm" proc_start "$A" e2 'echo "${RV-unset}"'
assert_file_eq "$A/procs/e2/exit" $'0\n' "env: that process exits 0"
assert_file_eq "$A/procs/e2/stdout" $'unset\n' "env: a process started after rm does not see it"
check "env: rm env/RLIT" timeout 5 rm "$MNT/env/RLIT"

# 2. root ctl: killall
sfs_marker "801.$$"
sfs_marker "802.$$"
sfs_marker "803.$$"
sfs_marker "804.$$"
check "killall: a process in a" proc_start "$A" k 'sleep 801.'"$$"
check "killall: a process in b" proc_start "$B" k 'sleep 802.'"$$"
check "killall: a process that ignores TERM in c" proc_start "$C" k "trap '' TERM; sleep 803.$$"
sfs_run_bg "$B" "sleep 804.$$" 20
w=$SFS_BG
for m in 801 802 803 804; do
	if [ -n "$(sfs_wait_pids_with_arg "$m.$$" 5)" ]; then pass "killall: sleep $m runs"; else
		fail "killall: sleep $m runs" "not within 5 s"
	fi
done
t0=$(now_ms)
check "killall: echo killall > ctl" sfs_write "$MNT/ctl" $'killall\n' 10
el=$(($(now_ms) - t0))
note "killall: the write returned after $el ms"
assert_lt "$el" 5000 "killall: returns in < 5 s" " ms"
left=
for m in 801 802 803 804; do left+=$(sfs_pids_with_arg "$m.$$"); done
assert_eq "" "$left" "killall: nothing is left when the write returns"
for s in a b c; do
	assert_file_match "$MNT/sessions/$s/procs/k/status" '^state killed$' "killall: $s's process: state killed"
done
if sfs_wait_gone "$w" 5; then
	wait "$w"
	assert_eq 0 "$?" "killall: the run's writer gets its close back"
else
	fail "killall: the run's writer gets its close back" "still blocked 5 s later"
fi
assert_file_match "$B/status" '^state killed$' "killall: b's run: state killed"
assert_file_eq "$B/exit" $'143\n' "killall: b's run: exit 143"
runs_ok "killall: a's next run works" "$A" 'echo alive' $'alive\n'
runs_ok "killall: b's next run works" "$B" 'echo alive' $'alive\n'
check "killall: a process can start afterwards" proc_start "$C" after 'echo after'
assert_file_eq "$C/procs/after/exit" $'0\n' "killall: that process exits 0"
t0=$(now_ms)
check "killall: with nothing running" sfs_write "$MNT/ctl" $'killall\n' 10
assert_lt "$(($(now_ms) - t0))" 1000 "killall: with nothing running, returns at once" " ms"
for bad in bogus kill reset 'killall now'; do
	assert_write_errno EINVAL "root ctl '$bad' gives EINVAL" "$MNT/ctl" "$bad"$'\n'
done

# 3. a process writing 100 MiB while another session runs commands
BIG=$MNT/sessions/big
check "100 MiB: mkdir sessions/big" sfs_mkdir "$BIG"
# 100 chunks of 1 MiB of 'x', with short pauses so that it lasts a while
check "100 MiB: start the writer" proc_start "$BIG" w \
	'for i in $(seq 100); do head -c 1048576 /dev/zero | tr "\0" x; sleep 0.02; done; echo done >&2'
slow=0 nrun=0 t0=$(now_ms)
for i in $(seq 20); do
	t1=$(now_ms)
	sfs_run "$A" "echo run$i" 10 && nrun=$((nrun + 1))
	[ $(($(now_ms) - t1)) -ge 1000 ] && slow=$((slow + 1))
done
el=$(($(now_ms) - t0))
state=$(timeout 5 cat "$BIG/procs/w/status" | sed -n 's/^state //p')
note "100 MiB: 20 runs took $el ms; the writer was $state at their end"
assert_eq 20 "$nrun" "100 MiB: 20 runs in another session succeed"
assert_eq 0 "$slow" "100 MiB: no run took 1 s or more"
assert_file_eq "$A/stdout" $'run20\n' "100 MiB: the last run's stdout"
assert_file_eq "$BIG/procs/w/exit" $'0\n' "100 MiB: the writer exits 0"
assert_file_match "$BIG/procs/w/status" '^stdout_bytes 104857600$' "100 MiB: status has stdout_bytes 104857600"
assert_file_match "$BIG/procs/w/status" '^truncated 0$' "100 MiB: not truncated"
assert_eq 104857600 "$(timeout 5 stat -c %s "$BIG/procs/w/stdout")" "100 MiB: stat size of stdout"
want=$(head -c 104857600 /dev/zero | tr '\0' x | cksum)
got=$(timeout 30 cat "$BIG/procs/w/stdout" | cksum)
assert_eq "$want" "$got" "100 MiB: stdout reads back whole (cksum)"
assert_file_eq "$BIG/procs/w/stderr" $'done\n' "100 MiB: stderr"
check "100 MiB: rmdir sessions/big" timeout 10 rmdir "$BIG"

# 4. rmdir of a session with processes and a run
D=$MNT/sessions/d
check "rmdir: mkdir sessions/d" sfs_mkdir "$D"
sfs_marker "805.$$"
sfs_marker "806.$$"
sfs_marker "807.$$"
check "rmdir: a process" proc_start "$D" p1 "sleep 805.$$"
check "rmdir: a process that ignores TERM" proc_start "$D" p2 "trap '' TERM; sleep 806.$$"
sfs_run_bg "$D" "sleep 807.$$" 20
w=$SFS_BG
for m in 805 806 807; do sfs_wait_pids_with_arg "$m.$$" 5 >/dev/null; done
t0=$(now_ms)
check "rmdir: rmdir sessions/d" timeout 10 rmdir "$D"
note "rmdir: took $(($(now_ms) - t0)) ms"
left=
for m in 805 806 807; do left+=$(sfs_pids_with_arg "$m.$$"); done
assert_eq "" "$left" "rmdir: nothing of the session is left"
sfs_wait_gone "$w" 5 && wait "$w" 2>/dev/null

# 5. unmount and SIGTERM to the daemon end every process
# (as in t25: the daemon is gone and unmounted; let sfs_mount start anew)
forget_mount() {
	if sfs_mounted "$MNT"; then
		timeout 10 fusermount3 -u "$MNT" 2>/dev/null || timeout 10 umount -l "$MNT"
	fi
	rmdir "$MNT" 2>/dev/null
	MNT=
	SFS_PID=
	sfs_state
}

# two sessions with processes (one ignoring TERM); MARK.N are markers
setup_procs() { # LABEL MARK
	local s
	for s in x y; do sfs_mkdir "$MNT/sessions/$s"; done
	proc_start "$MNT/sessions/x" p "sleep $2.1"
	proc_start "$MNT/sessions/y" p "sleep $2.2"
	proc_start "$MNT/sessions/y" q "trap '' TERM; sleep $2.3"
	sfs_marker "$2.1"
	sfs_marker "$2.2"
	sfs_marker "$2.3"
	local m n=0
	for m in 1 2 3; do
		[ -n "$(sfs_wait_pids_with_arg "$2.$m" 5)" ] && n=$((n + 1))
	done
	assert_eq 3 "$n" "$1: three processes in two sessions run"
}

# gone_after LABEL MARK: the daemon exits within 10 s; no process is left
gone_after() {
	local left='' m
	if sfs_wait_gone "$SFS_PID" 10; then
		wait "$SFS_PID"
		pass "$1: the daemon exits"
	else
		fail "$1: the daemon exits" "still running 10 s later"
	fi
	for m in 1 2 3; do left+=$(sfs_pids_with_arg "$2.$m"); done
	assert_eq "" "$left" "$1: no process of any session is left"
}

setup_procs umount "81$$"
check "umount: fusermount3 -u" timeout 20 fusermount3 -u "$MNT"
gone_after umount "81$$"
forget_mount

sfs_mount
setup_procs term "82$$"
kill -TERM "$SFS_PID"
gone_after term "82$$"
forget_mount

sfs_mount
sfs_done
