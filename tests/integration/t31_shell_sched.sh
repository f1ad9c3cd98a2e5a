#!/usr/bin/env bash
# t31_shell_sched: between runs a session's shell may poll for the next
# command as SCHED_IDLE (shell_spin_us; 0 by default, since it made runs
# after idle time slower, see tests/bench/RESULTS.md; this test sets 1000).
# What must hold around it: a run's command and everything it starts run
# SCHED_OTHER; background jobs stay SCHED_OTHER after their run; the
# polling stops by itself (the idle shell then sleeps and uses no CPU);
# env/ answers at once after a run, also when every CPU is busy; with
# shell_spin_us = 0, or a daemon without CAP_SYS_NICE, the shell never
# changes class and sleeps at once.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# POLICY PID: the scheduling policy name of PID ("SCHED_IDLE", ...)
policy() { chrt -p "$1" 2>/dev/null | sed -n 's/.*policy: *//p' | head -n 1; }

# cpu ticks (utime + stime) of PID
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }

# is_policy PID WANT: PID's policy is WANT
is_policy() { [ "$(policy "$1")" = "$2" ]; }

# is_asleep PID: PID is sleeping (state S)
is_asleep() { [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = S ]; }

printf 'shell_spin_us = 1000;\n' >"$SFS_TMP/spin.conf"
sfs_start_mount "shell_spin_us = 1000" -c "$SFS_TMP/spin.conf" || exit 1

S=$MNT/sessions/sched
check "mkdir sessions/sched" sfs_mkdir "$S"
assert_run_ok "a first run" "$S" 'true'
shpid=$(timeout 5 sed -n 's/^pid //p' "$S/status")
assert_true "status names the shell's pid" "pid line: '${shpid:-none}'" \
	test -n "$shpid" -a -d "/proc/${shpid:-none}"

# 1. after a run, the idle shell is SCHED_IDLE ...
assert_true "after a run the shell is SCHED_IDLE" "policy: $(policy "$shpid")" \
	sfs_until 2 is_policy "$shpid" SCHED_IDLE

# 2. ... but a run's command and what it starts are SCHED_OTHER
assert_run_ok "a run reports its own and its child's policy" "$S" \
	'chrt -p $$; sh -c '\''chrt -p $$'\''; sleep 30 & echo "bg $!"'
out=$(timeout 5 cat "$S/stdout")
n_other=$(grep -c 'policy: SCHED_OTHER' <<<"$out")
assert_eq 2 "$n_other" "the command's shell and its child run SCHED_OTHER"
bg=$(sed -n 's/^bg //p' <<<"$out")
if [ -n "$bg" ]; then
	SFS_BG_PIDS+=("$bg")
	assert_eq SCHED_OTHER "$(policy "$bg")" "a background job stays SCHED_OTHER after its run"
	kill "$bg" 2>/dev/null
else
	fail "a background job stays SCHED_OTHER after its run" "no pid in: $out"
fi

# 3. the polling ends by itself: the shell then sleeps and uses no CPU
assert_true "the idle shell goes to sleep" "state: $(awk '{ print $3 }' "/proc/$shpid/stat" 2>/dev/null)" \
	sfs_until 2 is_asleep "$shpid"
t0=$(cpu_ticks "$shpid")
sleep 1
t1=$(cpu_ticks "$shpid")
assert_eq "$t0" "$t1" "an idle shell uses no CPU (ticks over 1 s)"

# 4. variables are there at once after a run, and runs follow each other
for i in 1 2 3 4 5; do
	sfs_run "$S" "export N$i=$i" || fail "run export N$i" "close of cmd failed"
	assert_file_eq "$S/env/N$i" "$i"$'\n' "env/N$i right after its run"
done
t0=$(now_ms)
for i in $(seq 1 200); do sfs_run "$S" 'true' || break; done
el=$(($(now_ms) - t0))
assert_true "200 runs in a row end (in $el ms)" "took $el ms" test "$el" -lt 20000
assert_file_eq "$S/exit" $'0\n' "the last of them exited 0"

# 5. with both CPUs busy (two busy loops of normal priority), runs and
# env/ still answer promptly: the shell is raised whenever someone waits
hogs=()
for _ in 1 2; do
	bash -c 'while :; do :; done' &
	hogs+=("$!")
	SFS_BG_PIDS+=("$!")
done
t0=$(now_ms)
for i in $(seq 1 20); do
	sfs_run "$S" "export L$i=$i" || break
	[ "$(timeout 5 cat "$S/env/L$i")" = "$i" ] || break
done
el=$(($(now_ms) - t0))
kill "${hogs[@]}" 2>/dev/null
wait "${hogs[@]}" 2>/dev/null
assert_eq 20 "$i" "under load: 20 runs each followed by its env/ value"
assert_true "under load: they take under 10 s (took $el ms)" "took $el ms" test "$el" -lt 10000

# 6. shell_spin_us = 0: the shell keeps its class and sleeps at once
sfs_check_umount "shell_spin_us = 1000"
printf 'shell_spin_us = 0;\n' >"$SFS_TMP/nospin.conf"
sfs_start_mount "shell_spin_us = 0" -c "$SFS_TMP/nospin.conf" || exit 1
S=$MNT/sessions/nospin
check "shell_spin_us = 0: mkdir sessions/nospin" sfs_mkdir "$S"
assert_run_ok "shell_spin_us = 0: a run" "$S" 'true'
shpid=$(timeout 5 sed -n 's/^pid //p' "$S/status")
assert_true "shell_spin_us = 0: the idle shell sleeps" "state: $(awk '{ print $3 }' "/proc/${shpid:-none}/stat" 2>/dev/null)" \
	sfs_until 2 is_asleep "${shpid:-none}"
assert_eq SCHED_OTHER "$(policy "${shpid:-none}")" "shell_spin_us = 0: the idle shell stays SCHED_OTHER"
assert_run_ok "shell_spin_us = 0: another run" "$S" 'echo $((6 * 7))'
assert_file_eq "$S/stdout" $'42\n' "shell_spin_us = 0: runs work as before"

# 7. a daemon without CAP_SYS_NICE (root in a container, say) could lower
# a shell but not raise it again: it never lowers one
sfs_check_umount "shell_spin_us = 0"
printf '#!/bin/sh\nexec setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice -- %q "$@"\n' \
	"$(readlink -f "$SFS_BIN")" >"$SFS_TMP/nonice"
chmod +x "$SFS_TMP/nonice"
SFS_BIN=$SFS_TMP/nonice
sfs_start_mount "no CAP_SYS_NICE" -c "$SFS_TMP/spin.conf" || exit 1
S=$MNT/sessions/nonice
check "no CAP_SYS_NICE: mkdir sessions/nonice" sfs_mkdir "$S"
assert_run_ok "no CAP_SYS_NICE: a run" "$S" 'true'
assert_run_ok "no CAP_SYS_NICE: a run that reports its policy" "$S" 'chrt -p $$'
assert_file_match "$S/stdout" 'policy: SCHED_OTHER$' "no CAP_SYS_NICE: the command runs SCHED_OTHER"
shpid=$(timeout 5 sed -n 's/^pid //p' "$S/status")
assert_true "no CAP_SYS_NICE: the idle shell sleeps" "state: $(awk '{ print $3 }' "/proc/${shpid:-none}/stat" 2>/dev/null)" \
	sfs_until 2 is_asleep "${shpid:-none}"
assert_eq SCHED_OTHER "$(policy "${shpid:-none}")" "no CAP_SYS_NICE: the idle shell stays SCHED_OTHER"

sfs_done
