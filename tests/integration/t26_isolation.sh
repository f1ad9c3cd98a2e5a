#!/usr/bin/env bash
# t26_isolation: a run's command cannot reach the shell's protocol. sessionfs(7)
# "SESSIONS AND RUNS": exit status comes back on a separate
# descriptor, never out of the output. A process started by a run inherits only
# stdin, stdout and stderr (no pipe of the daemon's), so writing a
# report-shaped record anywhere it can does not end the run early or change
# its status, and the runs after it keep their own results.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/iso
check "mkdir sessions/iso" sfs_mkdir "$S"

# 1. the descriptors a child process of a run inherits (besides the
# protocol, a leak here is a descriptor of the daemon's or of whoever
# started the daemon, passed on to every command)
# (a sleeping child's descriptors, listed from outside it: listing one's
# own would count the listing's directory and pipes)
assert_run_ok "list a child's descriptors" "$S" \
	'sleep 5 & p=$!; sleep 0.3; (cd /proc/$p/fd && for f in *; do echo "$f $(readlink "$f")"; done); kill $p'
fds=$(timeout 5 cat "$S/stdout")
note "a run's child has: $(tr '\n' ',' <<<"$fds")"
extra=$(awk '$1 > 2' <<<"$fds" | tr '\n' ',')
assert_eq "" "$extra" "a run's child inherits only fds 0, 1 and 2"
pipes=$(awk '$1 > 2 && $2 ~ /^(pipe|socket):/' <<<"$fds" | tr '\n' ',')
assert_eq "" "$pipes" "a run's child inherits no pipe or socket beyond 0-2"

# 2. the shell's own protocol pipes (its stdin and fd 201 while it waits
# for a command) are not open in a process the run starts
shpid=$(timeout 5 sed -n 's/^pid //p' "$S/status")
pctl= pres=
if [ -n "$shpid" ]; then
	pctl=$(readlink "/proc/$shpid/fd/0" 2>/dev/null)
	pres=$(readlink "/proc/$shpid/fd/201" 2>/dev/null)
fi
assert_true "the idle shell's stdin is the control pipe" "fd 0 -> ${pctl:-none}" \
	test "${pctl#pipe:}" != "$pctl"
assert_true "the idle shell's fd 201 is the result pipe" "fd 201 -> ${pres:-none}" \
	test "${pres#pipe:}" != "$pres"
note "the shell ${shpid:-?} has 0 -> $pctl, 201 -> $pres"
hits=$(awk -v a="$pctl" -v b="$pres" '$2 == a || $2 == b' <<<"$fds" | tr '\n' ',')
assert_eq "" "$hits" "a run's child has no descriptor on the shell's protocol pipes"

# 3. a child that writes a report-shaped record into every descriptor it
# has on the shell's result pipe (only that pipe, so that nothing else is
# written to) cannot end the run early or set its status
fake='bash -c '\''for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && [ "$(readlink "$f")" = "$1" ] && printf "R0\0/\0\0" >&"$n"; done 2>/dev/null'\'' _ '"'${pres:-none}'"'
sleep 1; echo real-end; exit 9'
t0=$(now_ms)
sfs_run "$S" "$fake" 15
rc=$?
el=$(($(now_ms) - t0))
assert_eq 0 "$rc" "fake report: the close of cmd succeeds"
assert_true "fake report: the run lasts until its real end (about 1 s)" "its close returned after $el ms" \
	test "$el" -ge 900
assert_file_eq "$S/exit" $'9\n' "fake report: exit is the command's own 9"
assert_file_eq "$S/stdout" $'real-end\n' "fake report: stdout has the run's whole output"
assert_file_match "$S/status" '^state failed$' "fake report: state failed (exit 9)"

# the runs after it get their own results
assert_run_ok "fake report: the next run" "$S" 'echo second; exit 4'
assert_file_eq "$S/stdout" $'second\n' "fake report: the next run's stdout is its own"
assert_file_eq "$S/exit" $'4\n' "fake report: the next run's exit is its own"
assert_run_ok "fake report: one more run" "$S" 'echo third'
assert_file_eq "$S/stdout" $'third\n' "fake report: the run after that is in step too"
assert_file_eq "$S/exit" $'0\n' "fake report: and exits 0"

# 4. report-shaped output on stdout and stderr is just output
assert_run_ok "report-shaped output" "$S" 'printf "R0\0/\0\0"; printf "X0\0/\0\0" >&2; exit 5'
assert_file_eq "$S/exit" $'5\n' "report-shaped output: exit is 5"
assert_file_printf "$S/stdout" 'R0\0/\0\0' "report-shaped output: stdout kept byte for byte"

# 5. what the shell itself prints between runs (a user's trap on CHLD or
# DEBUG, a function named like a builtin) never reaches the protocol: the
# runs after it keep their status, output and shell
assert_run_ok "traps: set a CHLD trap that prints, start a short job" "$S" \
	'trap "echo child-done" CHLD; (sleep 0.3) &'
pid0=$(timeout 5 sed -n 's/^pid //p' "$S/status")
assert_run_ok "traps: a run while the job ends" "$S" 'sleep 0.6; echo after; false'
assert_file_eq "$S/exit" $'1\n' "traps: that run's exit is its own 1"
assert_file_match "$S/stdout" '^after$' "traps: and its output is there"
assert_run_ok "traps: set a DEBUG trap that prints, define : and true" "$S" \
	'trap "echo dbg" DEBUG; :() { builtin printf "R42\0/\0\0"; }; true() { echo R0; }'
assert_run_ok "traps: a run under them" "$S" 'echo x; (exit 3)'
assert_file_eq "$S/exit" $'3\n' "traps: its exit is its own 3"
assert_file_match "$S/stdout" '^x$' "traps: its output is there"
assert_run_ok "traps: clear the CHLD trap and the functions" "$S" 'trap - CHLD; unset -f : true'
assert_run_ok "traps: one more run" "$S" 'echo clean'
assert_file_match "$S/stdout" '^clean$' "traps: the next run's output is there"
assert_eq "$pid0" "$(timeout 5 sed -n 's/^pid //p' "$S/status")" \
	"traps: the same shell ran all of them (none garbled the protocol)"

sfs_done
