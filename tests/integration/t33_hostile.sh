#!/usr/bin/env bash
# t33_hostile: nothing a command does to its own shell can hang the
# session, fake or lose a result, put protocol text in its output or break
# later runs (sessions/ARCHITECTURE.md, the shell driver): functions named like
# builtins (and like the old loop's helpers), set -n, closing every
# descriptor, ulimit -n, unsetting every variable, set -x, a DEBUG trap,
# trap '' on the abort signal, cd then unset PWD, a bogus env/PWD, an EXIT
# trap, a forged report, a kill during a trap between runs, kill -STOP $$;
# and a daemon without its driver. Each case has its own session.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

# new_session NAME: S is MNT/sessions/NAME, made, with a plain (unexported)
# variable PLAIN=kept and SH1 the shell's pid
new_session() {
	S=$MNT/sessions/$1
	check "$1: mkdir" sfs_mkdir "$S"
	assert_run_ok "$1: set a plain variable" "$S" 'PLAIN=kept; echo $$'
	SH1=$(timeout 5 cat "$S/stdout")
}

# same_shell LABEL: the session still has the shell it had, plain
# variables and all, and it runs commands normally
same_shell() {
	assert_run_ok "$1: a run after it" "$S" 'echo "$$ ${PLAIN-lost}"; (exit 5)' 10
	assert_file_eq "$S/stdout" "$SH1 kept"$'\n' "$1: the same shell, its plain variable kept"
	assert_file_eq "$S/exit" $'5\n' "$1: the next run's status is its own"
}

# 1. functions named like the builtins the old loop used, and its helper
new_session shadow
assert_run_ok "shadow: define the functions" "$S" \
	'builtin() { :; }; read() { :; }; printf() { :; }; export() { :; }; cd() { :; }
. () { :; }; source() { :; }; unset() { :; }; __sfs_pre() { :; }; true' 10
same_shell "builtin() and friends"
check "shadow: echo v > env/SHADOW_V" sfs_write "$S/env/SHADOW_V" $'from-env\n'
assert_run_ok "shadow: a run after the env write" "$S" 'command printf "%s\n" "$SHADOW_V"' 10
assert_file_eq "$S/stdout" $'from-env\n' "__sfs_pre(): an env/ write still applies"
check "shadow: echo /tmp > cwd" sfs_write "$S/cwd" $'/tmp\n'
assert_run_ok "shadow: a run after the cwd write" "$S" 'command pwd' 10
assert_file_eq "$S/stdout" $'/tmp\n' "cd(): a cwd write still applies"

# 2. set -n: the run ends, and the next one executes
new_session noexec
assert_run_ok "set -n: the run ends" "$S" 'set -n; echo not-run' 10
assert_file_eq "$S/stdout" "" "set -n: the rest of that run is not executed"
same_shell "set -n"

# 3. closed descriptors and a low ulimit -n: the status is the command's,
# nothing lands in stderr, the shell stays
for c in 'exec 13>&-' \
	'for f in $(ls /proc/$$/fd); do [ "$f" -gt 2 ] && eval "exec $f>&-"; done' \
	'ulimit -n 50'; do
	new_session "fds$((++fdcase))"
	assert_run_ok "'$c': the run" "$S" "$c; (exit 7)" 10
	assert_file_eq "$S/exit" $'7\n' "'$c': then (exit 7) gives exit 7"
	assert_file_match "$S/result.json" '"success":false' "'$c': result.json says success false"
	assert_file_eq "$S/stderr" "" "'$c': nothing in stderr"
	same_shell "'$c'"
done

# 4. every variable unset; then the old loop's directory variable set
new_session unset
n0=$(timeout 5 bash -c 'shopt -s nullglob; f=(/f[0-9]*.[oe] /tmp/f[0-9]*.[oe]); echo ${#f[@]}')
e0=$(timeout 5 cat "$S/error" | wc -l)
assert_run_ok "unset every variable: the run" "$S" \
	'for v in $(compgen -v); do unset "$v"; done 2>/dev/null; echo gone' 10
assert_file_eq "$S/stdout" $'gone\n' "unset every variable: that run's output"
assert_run_ok "unset every variable: the next run" "$S" 'echo "alive $$"' 10
assert_file_eq "$S/stdout" "alive $SH1"$'\n' "unset every variable: the next run works in the same shell"
assert_file_eq "$S/exit" $'0\n' "unset every variable: the next run exits 0"
assert_run_ok "__sfs_d=/tmp: the run" "$S" '__sfs_d=/tmp; echo spooled' 10
assert_run_ok "__sfs_d=/tmp: the next run" "$S" 'echo here' 10
assert_file_eq "$S/stdout" $'here\n' "__sfs_d=/tmp: output still comes back"
n1=$(timeout 5 bash -c 'shopt -s nullglob; f=(/f[0-9]*.[oe] /tmp/f[0-9]*.[oe]); echo ${#f[@]}')
assert_eq "$n0" "$n1" "no spool file is made in / or /tmp"
e1=$(timeout 5 cat "$S/error" | wc -l)
assert_eq "$e0" "$e1" "nothing in the session's error file"

# 5. set -x and a DEBUG trap see only the user's commands; messages name
# "cmd", not a spool file
new_session trace
assert_run_ok "set -x: the run" "$S" 'set -x' 10
assert_run_ok "set -x: the next run" "$S" 'echo hi' 10
assert_file_eq "$S/stderr" $'+ echo hi\n' "set -x: stderr has only the command's own trace"
assert_file_eq "$S/stdout" $'hi\n' "set -x: stdout is the command's"
assert_run_ok "set +x" "$S" 'set +x' 10
assert_run_ok "a DEBUG trap" "$S" 'trap "echo dbg >&2" DEBUG' 10
assert_run_ok "a DEBUG trap: the next run" "$S" 'true' 10
assert_file_eq "$S/stderr" $'dbg\n' "a DEBUG trap fires once for a run of one command"
assert_run_ok "trap - DEBUG" "$S" 'trap - DEBUG' 10
sfs_run "$S" 'nosuchcommand_t33' 10
assert_file_eq "$S/stderr" $'bash: line 1: nosuchcommand_t33: command not found\n' \
	"a missing command: the message names no file"
sfs_run "$S" $'true\nfi' 10
assert_file_match "$S/stderr" '^bash: cmd: line 2: syntax error near unexpected token `fi'\''$' \
	"a syntax error: the message names cmd and the line"
same_shell "set -x and traps"

# 6. trap '' on the abort signal does not stop kill from abandoning the
# script
new_session abort
sfs_marker "331.$$"
assert_run_ok "trap '' RTMIN+3: the run" "$S" "trap '' RTMIN+3; trap 'echo caught' RTMIN+3" 10
sfs_run_bg "$S" "sleep 331.$$; echo after-kill; sleep 1; echo late" 20
w=$SFS_BG
if [ -n "$(sfs_wait_pids_with_arg "331.$$" 5)" ]; then pass "trap '': the command runs"; else
	fail "trap '': the command runs" "no sleep 331.$$ within 5 s"
fi
check "trap '': echo kill > ctl" sfs_write "$S/ctl" $'kill\n'
if sfs_wait_gone "$w" 10; then pass "trap '': the run ends after kill"; else
	fail "trap '': the run ends after kill" "still running 10 s later"
fi
assert_file_eq "$S/exit" $'143\n' "trap '': exit 143"
sleep 1.5
assert_file_eq "$S/stdout" "" "trap '': the rest of the script did not run"
same_shell "trap '' RTMIN+3"

# loops of builtins (in a function, in eval, nested) are abandoned too,
# without replacing the shell
for c in 'f() { while :; do :; done; }; f' 'eval "until false; do for ((;;)); do :; done; done"'; do
	sfs_run_bg "$S" "$c; echo after-kill" 20
	w=$SFS_BG
	sleep 0.5
	check "'$c': echo kill > ctl" sfs_write "$S/ctl" $'kill\n'
	if sfs_wait_gone "$w" 10; then pass "'$c': the run ends after kill"; else
		fail "'$c': the run ends after kill" "still running 10 s later"
	fi
	assert_file_eq "$S/exit" $'143\n' "'$c': exit 143"
	assert_file_eq "$S/stdout" "" "'$c': the rest of the script did not run"
	same_shell "'$c'"
done

# 7. cwd is the shell's real directory, whatever $PWD says
new_session cwd
assert_run_ok "cd /tmp; unset PWD" "$S" 'cd /tmp; unset PWD' 10
assert_file_eq "$S/cwd" $'/tmp\n' "cd /tmp; unset PWD: cwd is /tmp"
check "echo /nonexistent > env/PWD" sfs_write "$S/env/PWD" $'/nonexistent\n'
assert_run_ok "a run with PWD=/nonexistent" "$S" 'echo "$PWD"' 10
assert_file_eq "$S/stdout" $'/nonexistent\n' "the variable PWD is what was written"
assert_file_eq "$S/cwd" $'/tmp\n' "cwd is still /tmp"
check "echo reset > ctl" sfs_write "$S/ctl" $'reset\n'
assert_run_ok "a run in the new shell" "$S" 'pwd -P' 10
assert_file_eq "$S/stdout" $'/tmp\n' "the new shell starts in /tmp"

# 8. a shell that exits under its own EXIT trap still hands on its cwd
# and exported variables
new_session exittrap
sfs_run "$S" 'trap "echo bye" EXIT; cd /usr; export LATE=late; exit 4' 10
assert_file_eq "$S/exit" $'4\n' "exit under an EXIT trap: exit 4"
assert_run_ok "exit under an EXIT trap: the next run" "$S" 'echo "$PWD $LATE"' 10
assert_file_eq "$S/stdout" $'/usr late\n' "exit under an EXIT trap: the next shell has its cwd and exports"

# 9. a daemon with no driver beside it (and none installed) starts no
# shell, and its log says why
ND=$SFS_TMP/nodrv
mkdir -p "$ND/bin" "$ND/mnt"
cp "$SFS_BIN" "$ND/bin/sessionfs"
"$ND/bin/sessionfs" -f "$ND/mnt" >"$ND/log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
ndpid=$!
SFS_BG_PIDS+=("$ndpid")
for ((i = 0; i < 50; i++)); do
	timeout 2 test -d "$ND/mnt/sessions" && break
	sleep 0.1
done
if timeout 2 test -d "$ND/mnt/sessions"; then
	check "no driver: mkdir a session" sfs_mkdir "$ND/mnt/sessions/x"
	sfs_run "$ND/mnt/sessions/x" 'echo hi' 10
	if grep -q 'shell driver sfsdrv.so' "$ND/log"; then
		assert_file_eq "$ND/mnt/sessions/x/exit" $'126\n' "no driver: the run fails with 126"
		assert_file_eq "$ND/mnt/sessions/x/stdout" "" "no driver: nothing ran"
		assert_file_match "$ND/mnt/sessions/x/error" 'could not start' "no driver: the session's error file says the run could not start"
		pass "no driver: the log names the missing driver"
	else
		note "skip no driver: a driver is installed ($(head -c 200 "$ND/log" | tr '\n' ' '))"
	fi
	timeout 10 fusermount3 -u "$ND/mnt" 2>/dev/null || timeout 10 fusermount3 -uz "$ND/mnt"
	if sfs_wait_gone "$ndpid" 5; then pass "no driver: the daemon exits after the unmount"; else
		fail "no driver: the daemon exits after the unmount" "still running"
	fi
else
	fail "no driver: the daemon mounts" "$(tail -n 3 "$ND/log" | tr '\n' ' ')"
fi

# 9b. a driver beside the daemon that bash cannot load: the run fails with
# 126 and error gives bash's own words
BD=$SFS_TMP/baddrv
mkdir -p "$BD/bin" "$BD/mnt"
cp "$SFS_BIN" "$BD/bin/sessionfs"
printf 'not a shared object\n' >"$BD/bin/sfsdrv.so"
"$BD/bin/sessionfs" -f "$BD/mnt" >"$BD/log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
bdpid=$!
SFS_BG_PIDS+=("$bdpid")
if check "bad driver: the daemon mounts" sfs_until 5 timeout 2 test -d "$BD/mnt/sessions"; then
	check "bad driver: mkdir a session" sfs_mkdir "$BD/mnt/sessions/x"
	sfs_run "$BD/mnt/sessions/x" 'echo hi' 10
	assert_file_eq "$BD/mnt/sessions/x/exit" $'126\n' "bad driver: the run fails with 126"
	# (bash loads the daemon's copy of the module, /proc/self/fd/N; the
	# log names the file it was copied from)
	assert_file_match "$BD/mnt/sessions/x/error" 'the shell could not start its driver: .*enable: cannot open shared object /proc/self/fd/[0-9]+' \
		"bad driver: error says what bash said"
	assert_file_match "$BD/log" "the shell driver is $BD/bin/sfsdrv.so" "bad driver: the log names the driver's file"
	timeout 10 fusermount3 -u "$BD/mnt" 2>/dev/null || timeout 10 fusermount3 -uz "$BD/mnt"
	check "bad driver: the daemon exits after the unmount" sfs_wait_gone "$bdpid" 5
fi

# 10. what a command leaves in its spool directory is never trusted: a
# fifo named state (the daemon once blocked opening it, and with it every
# session) or a link env -> /dev/zero (read without end), then the shell
# dies
for how in 'mkfifo "$D/state"' 'ln -sf /dev/zero "$D/env"; ln -sf /dev/zero "$D/state"'; do
	new_session "spool$((++spoolcase))"
	sfs_run "$S" 'D=$(dirname "$(readlink /proc/$$/fd/1)"); '"$how"'; kill -9 $$' 10
	t0=$(now_ms)
	n=$(timeout 5 ls "$MNT/sessions" | wc -l)
	assert_true "spool $spoolcase: the daemon still answers" "ls sessions gave $n entries after $(($(now_ms) - t0)) ms" \
		test "$n" -gt 0
	assert_run_ok "spool $spoolcase: a run after it" "$S" 'echo after' 10
	assert_file_eq "$S/stdout" $'after\n' "spool $spoolcase: its output"
done

# 11. env/ values are never evaluated, whatever attributes the shell gave
# the variable: an integer is not arithmetic (which runs $(...) in a
# subscript), a nameref is not followed
new_session attrs
assert_run_ok "attrs: declare -i X, declare -n R=Y" "$S" 'declare -i X=1; declare -n R=Y' 10
pwn=$SFS_TMP/pwned
check "attrs: a value that arithmetic would run" sfs_write "$S/env/X" 'a[$(touch '"$pwn"')]'$'\n' 10
check "attrs: a value for the nameref" sfs_write "$S/env/R" $'hello\n' 10
assert_run_ok "attrs: a run after it" "$S" 'printf "%s|%s|%s\n" "$X" "$R" "${Y-unset}"' 10
assert_file_eq "$S/stdout" 'a[$(touch '"$pwn"')]|hello|unset'$'\n' "attrs: the values as written, R itself set, Y untouched"
assert_true "attrs: nothing was run" "$pwn exists" test ! -e "$pwn"

# 12. a variable too large for execve, exported by a command that then
# ends its shell: the next shell starts without it, and error says so
new_session big
sfs_run "$S" 'export BIG=$(head -c 200000 /dev/zero | tr "\\0" a); exit 3' 10
assert_run_ok "big: the run after it" "$S" 'echo "ok ${BIG:-none}"' 10
assert_file_eq "$S/stdout" $'ok none\n' "big: a new shell without BIG"
assert_file_match "$S/error" 'BIG is .* bytes, more than a new shell can be started with' "big: error says why BIG went"

# 13. a NUL in the command is dropped, as `.` drops it: the rest runs
new_session nul
check "nul: a command with a NUL" timeout 10 bash -c 'printf "echo a\0echo b\necho c\n" >"$1"' _ "$S/cmd"
assert_file_eq "$S/stdout" $'aecho b\nc\n' "nul: the text around the NUL runs, as with ."

# 14. a report written to the result pipe by a command (a root shell can
# open its driver's pipes through /proc) lacks the run's key: dropped and
# said, the run ends with its own status
new_session forge
assert_run_ok "forge: a command writes a report frame" "$S" \
	'for f in /proc/$$/task/*/fd/201; do printf "R0\0/\0\0" >"$f"; done 2>/dev/null; sleep 0.2; (exit 3)' 10
assert_file_eq "$S/exit" $'3\n' "forge: the run's status is its own"
assert_file_match "$S/error" "not the shell driver's was dropped" "forge: error says a report was dropped"
same_shell "a forged report"

# 15. a kill of a run whose line waits while the shell runs a trap between
# runs: the trap stops, the run's command never runs, the shell stays
new_session trapkill
assert_run_ok "trapkill: a trap on USR1" "$S" "trap 'echo busy >$SFS_TMP/trap.on; while :; do :; done' USR1" 10
kill -USR1 "$SH1"
check "trapkill: the trap runs" sfs_until 5 test -s "$SFS_TMP/trap.on"
sfs_run_bg "$S" "echo ran >$SFS_TMP/trap.ran" 20
sfs_until 5 grep -q running "$S/status"
check "trapkill: echo kill > ctl" sfs_write "$S/ctl" $'kill\n' 10
check "trapkill: the writer of the run returns" sfs_wait_gone "$SFS_BG" 10
assert_true "trapkill: the killed run's command did not run" "$SFS_TMP/trap.ran exists" test ! -e "$SFS_TMP/trap.ran"
assert_file_match "$S/status" 'killed' "trapkill: status says killed"
same_shell "a kill during a trap between runs"

# 16. a command that stops its own shell: nothing else could resume it,
# so the daemon does, and says so
new_session stop
assert_run_ok "stop: kill -STOP \$\$ then echo" "$S" 'kill -STOP $$; echo after' 10
assert_file_eq "$S/stdout" $'after\n' "stop: the rest of the command ran"
assert_file_match "$S/error" 'the shell was stopped by signal 19; continued it' "stop: error says so"
same_shell "kill -STOP \$\$"

sfs_kill_marker "331.$$"
sfs_done
