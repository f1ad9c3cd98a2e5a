#!/usr/bin/env bash
# t85_run_options: a named run's own options (issue 24), written before
# its cmd: env/NAME for that run alone (empty: unset for it), cwd for it
# alone, stdin fed to it then EOF. After the run the session is as before
# unless the command itself changed it (its own export persists); a
# variable that existed keeps its value and exported-ness. The same env/
# and cwd for procs/NAME. Hostile: bad names, bash's own and readonly
# variables, literal values, a cwd that does not exist or that the owner
# may not enter, options after cmd (EBUSY), stdin past its bound (EFBIG).
# status and result.json show the options; an upgrade in place between
# the options and the cmd keeps them. Another user (allow_other) may not
# write them; a cwd the owner may not enter fails the run. A crash of the
# server between them and the cmd keeps them too.
# shellcheck disable=SC2016
SFS_T=${SFS_T:-20}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_start_mount mount -o allow_other || { SFS_DONE=1; exit 1; }

S=$MNT/sessions/opts
check "mkdir sessions/opts" sfs_mkdir "$S"
WD=$SFS_TMP/wd
mkdir -p "$WD/a" "$WD/b"
check "session cwd" sfs_write "$S/cwd" "$WD/a"
check "a plain variable P and an exported E before" sfs_run "$S" 'P=plain; export E=exp'

# run NAME: mkdir runs/NAME
mk() { sfs_mkdir "$S/runs/$1"; }
out() { timeout 5 cat "$S/runs/$1/stdout"; }

# 1. a variable and a cwd for one run, absent from the next
check "mkdir runs/one" mk one
check "runs/one/env/V" sfs_write "$S/runs/one/env/V" $'only-one\n'
check "runs/one/env/E over the exported E" sfs_write "$S/runs/one/env/E" 'given'
check "runs/one/env/P over the plain P" sfs_write "$S/runs/one/env/P" 'given-p'
check "runs/one/cwd" sfs_write "$S/runs/one/cwd" "$WD/b"
assert_file_eq "$S/runs/one/env/V" $'only-one\n' "runs/one/env/V reads back"
assert_file_eq "$S/runs/one/cwd" "$WD/b"$'\n' "runs/one/cwd reads back"
check "runs/one/cmd" sfs_write "$S/runs/one/cmd" $'echo "$V|$E|$P|$PWD|$(pwd -P)"; env | grep -c "^P=given-p$"\n'
assert_eq "only-one|given|given-p|$WD/b|$WD/b"$'\n1' "$(out one)" "runs/one sees V, E, P (exported) and its cwd"
assert_file_match "$S/runs/one/status" '^env E P V$' "runs/one/status names its variables"
assert_file_match "$S/runs/one/status" "^cwd $WD/b\$" "runs/one/status has its cwd"
assert_file_match "$S/runs/one/result.json" '"options":\{"env":\{"E":"given","P":"given-p","V":"only-one"\},"cwd":"[^"]*/wd/b","stdinBytes":null\}' \
	"runs/one/result.json has its options"
assert_eq "unset|exp|plain|$WD/a|$WD/a|-x E|no-P" \
	"$(sfs_run_out "$S" 'echo "${V-unset}|$E|$P|$PWD|$(pwd -P)|$(declare -p E | cut -d" " -f2,3 | cut -d= -f1)|$(env | grep -q ^P= && echo P || echo no-P)"')" \
	"the next run: V gone, E and P as before (E exported, P plain), the session's cwd back"
assert_true "env/V is not in the session's env/" "it is" test ! -e "$S/env/V"

# 2. the command's own changes persist
check "mkdir runs/own" mk own
check "runs/own/env/X" sfs_write "$S/runs/own/env/X" 'given'
check "runs/own/env/E" sfs_write "$S/runs/own/env/E" 'given'
check "runs/own/cwd" sfs_write "$S/runs/own/cwd" "$WD/b"
check "runs/own/cmd: export X=mine; cd" sfs_write "$S/runs/own/cmd" $'export X=mine; cd ..\n'
assert_eq "mine|exp|$WD" "$(sfs_run_out "$S" 'echo "$X|$E|$PWD"')" \
	"after it: its own export X=mine and its cd persist, E as before"
check "back to the session cwd" sfs_write "$S/cwd" "$WD/a"

# 3. env/X empty unsets for the run only
check "mkdir runs/unset" mk unset
check "runs/unset/env/E empty" sfs_write "$S/runs/unset/env/E" ''
check "runs/unset/cmd" sfs_write "$S/runs/unset/cmd" $'echo "${E-unset}"\n'
assert_eq "unset" "$(out unset)" "env/E empty: E unset in that run"
assert_file_match "$S/runs/unset/status" '^env -E$' "runs/unset/status marks E unset for it"
assert_eq "exp" "$(sfs_run_out "$S" 'echo "$E"')" "E is back after it"

# 4. stdin
check "mkdir runs/cat" mk cat
check "runs/cat/stdin" sfs_write "$S/runs/cat/stdin" $'line1\nline2\n'
check "runs/cat/cmd: cat" sfs_write "$S/runs/cat/cmd" $'cat\n'
assert_eq $'line1\nline2' "$(out cat)" "cat reads the run's stdin"
assert_file_match "$S/runs/cat/status" '^stdin_bytes 12$' "runs/cat/status has stdin_bytes"
check "mkdir runs/read" mk read
check "runs/read/stdin" sfs_write "$S/runs/read/stdin" $'first second\nthird\n'
check "runs/read/cmd: read" sfs_write "$S/runs/read/cmd" $'read -r a b; read -r c; read -r d; echo "$a,$b,$c,$?"\n'
assert_eq "first,second,third,1" "$(out read)" "read takes the lines, then EOF"
printf 'a\0b\0\377\n' >"$SFS_TMP/bin"
head -c $((1024 * 1024)) /dev/urandom >"$SFS_TMP/big"
check "mkdir runs/bin" mk bin
check "runs/bin/stdin with NULs" sfs_write_file "$S/runs/bin/stdin" "$SFS_TMP/bin"
check "runs/bin/cmd: cat" sfs_write "$S/runs/bin/cmd" $'cat\n'
assert_file_same "$S/runs/bin/stdout" "$SFS_TMP/bin" "a binary stdin with NULs comes through"
check "mkdir runs/big" mk big
check "runs/big/stdin of 1 MiB" sfs_write_file "$S/runs/big/stdin" "$SFS_TMP/big" 30
check "runs/big/cmd: cat" sfs_write "$S/runs/big/cmd" $'cat\n' 30
assert_file_same "$S/runs/big/stdout" "$SFS_TMP/big" "a 1 MiB stdin comes through"
check "mkdir runs/noread" mk noread
check "runs/noread/stdin" sfs_write_file "$S/runs/noread/stdin" "$SFS_TMP/big" 30
check "runs/noread/cmd: a command that does not read it ends" sfs_write "$S/runs/noread/cmd" $'echo done\n' 20
assert_eq "done" "$(out noread)" "a command that does not read its stdin: no hang"
assert_eq "EOF" "$(sfs_run_out "$S" 'read -r x || echo EOF')" "the next run's stdin is /dev/null again"
check "mkdir runs/huge" mk huge
head -c $((16 * 1024 * 1024 + 1)) /dev/zero >"$SFS_TMP/huge"
assert_errno EFBIG "a stdin past 16 MiB: EFBIG" bash -c 'cat <"$1" >"$2"' _ "$SFS_TMP/huge" "$S/runs/huge/stdin"
assert_file_match "$S/error" 'huge/stdin: more than 16777216 bytes' "the error file says why"

# 5. hostile options
check "mkdir runs/bad" mk bad
assert_errno EINVAL "env/1BAD: EINVAL" bash -c 'echo x >"$1"' _ "$S/runs/bad/env/1BAD"
assert_errno EPERM "env/SHELLOPTS, bash's own: EPERM" bash -c 'echo x >"$1"' _ "$S/runs/bad/env/SHELLOPTS"
assert_file_match "$S/error" "env/SHELLOPTS: bash's own variable" "the error file says why"
check "a readonly variable in the shell" sfs_run "$S" 'declare -rx RO=fixed'
assert_errno EPERM "env/RO readonly: EPERM" bash -c 'echo x >"$1"' _ "$S/runs/bad/env/RO"
VAL=$'a\nb $(touch '"$SFS_TMP"'/pwned) `id` ${HOME}'
check "a value with newlines and \$(...)" sfs_write "$S/runs/bad/env/L" "$VAL"
check "runs/bad/cmd" sfs_write "$S/runs/bad/cmd" $'printf %s "$L"\n'
assert_eq "$VAL" "$(out bad)" "the value is literal"
assert_true "nothing in it ran" "pwned exists" test ! -e "$SFS_TMP/pwned"
assert_errno EBUSY "env/ after cmd: EBUSY" bash -c 'echo x >"$1"' _ "$S/runs/bad/env/L"
assert_errno EBUSY "new env/ after cmd: EBUSY" bash -c 'echo x >"$1"' _ "$S/runs/bad/env/NEW"
assert_errno EBUSY "cwd after cmd: EBUSY" bash -c 'echo x >"$1"' _ "$S/runs/bad/cwd"
assert_errno EBUSY "stdin after cmd: EBUSY" bash -c 'echo x >"$1"' _ "$S/runs/bad/stdin"
assert_file_match "$S/error" 'runs/bad/stdin: its cmd is written' "the error file says why"
check "mkdir runs/nodir" mk nodir
assert_errno EINVAL "a cwd with a newline in it: EINVAL" bash -c 'printf "/tmp\nexit 0" >"$1"' _ "$S/runs/nodir/cwd"
assert_file_match "$S/error" 'runs/nodir/cwd: not a path' "the error file says why"
long=/$(printf 'd%.0s' $(seq 5000))
assert_errno "File name too long" "a cwd of 5,000 bytes: ENAMETOOLONG" bash -c 'printf "%s" "$2" >"$1"' _ "$S/runs/nodir/cwd" "$long"
assert_file_match "$S/error" 'runs/nodir/cwd: /ddd*[.][.][.]: File name too long' "its error line names runs/nodir/cwd"
check "runs/nodir/cwd that does not exist" sfs_write "$S/runs/nodir/cwd" "$WD/nonexistent"
sfs_write "$S/runs/nodir/cmd" $'echo ran\n' 10
assert_file_match "$S/runs/nodir/status" '^state error$' "a cwd that does not exist: the run's state is error"
assert_eq "" "$(out nodir)" "and its command did not run"
assert_file_match "$S/error" "run nodir: option cwd $WD/nonexistent: No such file" "the error file says why"
assert_eq "$WD/a" "$(sfs_run_out "$S" 'pwd')" "the session's cwd is as before"
# what the shell has readonly (not exported) or as an array: the run
# fails, its command not run, and the shell keeps it
# refused RUN VAR VALUE WHAT: runs/RUN given env/VAR=VALUE ends in state
# error without running its command
refused() {
	check "mkdir runs/$1" mk "$1"
	check "runs/$1/env/$2 ($4)" sfs_write "$S/runs/$1/env/$2" "$3"
	sfs_write "$S/runs/$1/cmd" $'echo ran\n' 10
	assert_file_match "$S/runs/$1/status" '^state error$' "env/$2, $4: the run's state is error"
	assert_eq "" "$(out "$1")" "env/$2: its command did not run"
}
check "a plain readonly and an array in the shell" sfs_run "$S" 'declare -r RP=ro; declare -a AR=(1 2)'
for v in RP AR BASH_ARGV; do
	refused "v$v" "$v" x "the shell's $v"
done
assert_file_match "$S/error" 'env/RP: readonly in the shell' "the error file says why (readonly)"
assert_file_match "$S/error" 'env/AR: an array in the shell' "the error file says why (array)"
assert_file_match "$S/error" 'env/BASH_ARGV: an array in the shell' "the error file says why (BASH_ARGV, an array of bash's)"
assert_eq "ro 1 2" "$(sfs_run_out "$S" 'echo "$RP ${AR[*]}"')" "the shell keeps RP and AR"
# a variable bash computes cannot be put back once unbound (it would
# come back plain: $RANDOM one number, $0 the value given): the run fails
for v in RANDOM SECONDS BASH_ARGV0; do
	refused "d$v" "$v" '' "empty (unset for it), computed by bash"
	assert_file_match "$S/error" "env/$v: computed by bash in the shell" "the error file says why ($v)"
done
r3=$(sfs_run_out "$S" 'a=$RANDOM b=$RANDOM c=$RANDOM; [[ $a == "$b" && $b == "$c" ]] || echo changes; declare -p RANDOM | cut -d" " -f2')
assert_eq $'changes\n-i' "$r3" "after them \$RANDOM still changes, not exported"
# a variable declared with attributes and no value (declare -x, -i)
# comes back so, not gone
check "DX and DI declared without a value" sfs_run "$S" 'declare -x DX; declare -i DI'
check "mkdir runs/decl" mk decl
check "runs/decl/env/DX" sfs_write "$S/runs/decl/env/DX" 'given'
check "runs/decl/env/DI empty (unset for it)" sfs_write "$S/runs/decl/env/DI" ''
check "runs/decl/cmd" sfs_write "$S/runs/decl/cmd" $'echo "$DX|${DI-unset}"\n'
assert_eq "given|unset" "$(out decl)" "runs/decl sees DX given, DI unset"
assert_eq $'declare -x DX\ndeclare -i DI' "$(sfs_run_out "$S" 'declare -p DX DI')" \
	"after it DX and DI are declared again, without a value"
check "mkdir runs/big2" mk big2
head -c $((128 * 1024)) /dev/zero | tr '\0' x >"$SFS_TMP/v128k"
assert_errno E2BIG "a value of 128 KiB: E2BIG" bash -c 'cat <"$1" >"$2"' _ "$SFS_TMP/v128k" "$S/runs/big2/env/BIG"
# a function named like a builtin changes nothing
check "functions cd, export, builtin" sfs_run "$S" 'cd() { echo fake-cd; }; export() { echo fake; }; unset() { echo fake; }'
check "mkdir runs/fn" mk fn
check "runs/fn/env/F" sfs_write "$S/runs/fn/env/F" 'f'
check "runs/fn/cwd" sfs_write "$S/runs/fn/cwd" "$WD/b"
check "runs/fn/cmd" sfs_write "$S/runs/fn/cmd" $'echo "$F $(command pwd)"\n'
assert_eq "f $WD/b" "$(out fn)" "functions named cd, export, unset: the options hold"
assert_eq "unset $WD/a" "$(sfs_run_out "$S" 'echo "${F-unset} $(command pwd)"')" "and go after the run"
check "drop the functions" sfs_run "$S" 'unset -f cd export unset'

# a run killed by its timeout, and one that ends the shell with exit:
# their options go all the same
check "mkdir runs/killed" mk killed
check "runs/killed/timeout 300" sfs_write "$S/runs/killed/timeout" '300'
check "runs/killed/env/K" sfs_write "$S/runs/killed/env/K" 'k'
check "runs/killed/cwd" sfs_write "$S/runs/killed/cwd" "$WD/b"
sfs_write "$S/runs/killed/cmd" $'sleep 30\n' 20
assert_file_match "$S/runs/killed/status" '^state timed-out$' "runs/killed ended by its timeout"
assert_eq "unset $WD/a" "$(sfs_run_out "$S" 'echo "${K-unset} $PWD"')" "after it: K gone, the session's cwd back"
check "mkdir runs/exit" mk exit
check "runs/exit/env/XV" sfs_write "$S/runs/exit/env/XV" 'x'
check "runs/exit/env/E" sfs_write "$S/runs/exit/env/E" 'over'
check "runs/exit/cwd" sfs_write "$S/runs/exit/cwd" "$WD/b"
sfs_write "$S/runs/exit/cmd" $'exit 4\n' 20
assert_eq "unset exp $WD/a" "$(sfs_run_out "$S" 'echo "${XV-unset} $E $PWD"')" \
	"after a run that exits the shell: the next shell has neither XV nor E=over, and the session's cwd"

# 6. procs
P=$S/procs/bg
check "mkdir procs/bg" sfs_mkdir "$P"
check "procs/bg/env/PV" sfs_write "$P/env/PV" 'proc-value'
check "procs/bg/env/E empty" sfs_write "$P/env/E" ''
check "procs/bg/cwd" sfs_write "$P/cwd" "$WD/b"
check "procs/bg/cmd" sfs_write "$P/cmd" $'echo "$PV|${E-unset}|$PWD"\n'
sfs_until 10 grep -q '^state completed' "$P/status"
assert_eq "proc-value|unset|$WD/b" "$(timeout 5 cat "$P/stdout")" "a process gets its env/ and cwd"
assert_file_match "$P/status" '^env E PV$|^env -E PV$' "procs/bg/status names its variables"
assert_errno EBUSY "procs/bg/env after cmd: EBUSY" bash -c 'echo x >"$1"' _ "$P/env/PV"
assert_eq "unset|exp" "$(sfs_run_out "$S" 'echo "${PV-unset}|$E"')" "the session has none of them"
check "mkdir procs/nodir" sfs_mkdir "$S/procs/nodir"
check "procs/nodir/cwd that does not exist" sfs_write "$S/procs/nodir/cwd" "$WD/nonexistent"
sfs_write "$S/procs/nodir/cmd" $'echo ran\n' 10
sfs_until 10 grep -q '^state error' "$S/procs/nodir/status"
assert_file_match "$S/procs/nodir/status" '^state error$' "a process whose cwd does not exist: state error"
assert_eq "" "$(timeout 5 cat "$S/procs/nodir/stdout")" "and its command did not run"

# 7. upgrade in place between the options and the cmd
check "mkdir runs/up" mk up
check "runs/up/env/U" sfs_write "$S/runs/up/env/U" 'kept'
check "runs/up/cwd" sfs_write "$S/runs/up/cwd" "$WD/b"
check "runs/up/stdin" sfs_write "$S/runs/up/stdin" 'in-kept'
before=$(grep -c 'upgrade: serving' "$SFS_TMP/daemon.log")
check "upgrade" bash -c 'echo "upgrade $1" >"$2"' _ "$SFS_BIN" "$MNT/ctl"
sfs_until 30 bash -c '[ "$(grep -c "upgrade: serving" "$1")" -gt "$2" ]' _ "$SFS_TMP/daemon.log" "$before"
assert_file_eq "$S/runs/up/env/U" $'kept\n' "after the upgrade: env/U kept"
check "runs/up/cmd" sfs_write "$S/runs/up/cmd" $'echo "$U $PWD $(cat)"\n'
assert_eq "kept $WD/b in-kept" "$(out up)" "after the upgrade: the options hold"

# 8. a crash of the server between the options and the cmd: the keeper's
# new server has them from the checkpoint (written 100 ms after a change
# at most: 1 s is ample even on a loaded machine)
health_val() { timeout 5 sed -n "s/^$1 //p" "$MNT/health" 2>/dev/null; }
check "mkdir runs/cr" mk cr
check "runs/cr/env/C" sfs_write "$S/runs/cr/env/C" 'crash-kept'
check "runs/cr/cwd" sfs_write "$S/runs/cr/cwd" "$WD/b"
check "runs/cr/stdin" sfs_write "$S/runs/cr/stdin" 'in-crash'
sleep 1
old=$(health_val pid)
if [ -n "$old" ] && kill -KILL "$old"; then
	sfs_wait_gone "$old" 5
	sfs_until 20 bash -c 'p=$(timeout 5 sed -n "s/^pid //p" "$1/health" 2>/dev/null); [ -n "$p" ] && [ "$p" != "$2" ]' _ "$MNT" "$old"
	assert_file_eq "$S/runs/cr/env/C" $'crash-kept\n' "after a crash: env/C kept"
	check "runs/cr/cmd" sfs_write "$S/runs/cr/cmd" $'echo "$C $PWD $(cat)"\n'
	assert_eq "crash-kept $WD/b in-crash" "$(out cr)" "after a crash: the options hold"
	sfs_note_server
else
	fail "a crash of the server" "health names no pid"
fi

# 9. another user (allow_other)
OTHER=65534
AS=(setpriv --reuid=$OTHER --regid=$OTHER --clear-groups)
check "mkdir runs/theirs" mk theirs
for f in env/V cwd stdin; do
	assert_errno EACCES "another user may not write runs/theirs/$f" \
		"${AS[@]}" bash -c 'echo x >"$1"' _ "$S/runs/theirs/$f"
done
assert_errno EACCES "nor list runs/theirs/env" "${AS[@]}" ls "$S/runs/theirs/env"
check "another user makes a session" "${AS[@]}" mkdir "$MNT/sessions/other"
O=$MNT/sessions/other
check "and a named run in it" "${AS[@]}" mkdir "$O/runs/r"
check "whose cwd it may not enter (a 0700 directory of root's)" \
	"${AS[@]}" bash -c 'printf %s "$2" >"$1"' _ "$O/runs/r/cwd" "$SFS_TMP"
check "and env/W" "${AS[@]}" bash -c 'printf w >"$1"' _ "$O/runs/r/env/W"
"${AS[@]}" timeout -k 2 10 bash -c 'echo "echo ran" >"$1"' _ "$O/runs/r/cmd" 2>/dev/null
assert_file_match "$O/runs/r/status" '^state error$' "a cwd the owner may not enter: state error"
assert_file_match "$O/error" "cwd $SFS_TMP: Permission denied" "the error file says why"
assert_eq "unset" "$("${AS[@]}" timeout -k 2 10 bash -c 'echo "echo \${W-unset}" >"$1/cmd"; cat "$1/stdout" "$1/stderr"' _ "$O" 2>&1)" \
	"its next run has none of its options"
# the sessions go before the unmount, each waited for by its rmdir
check "another user's rmdir of its session" "${AS[@]}" timeout -k 2 20 rmdir "$O"
check "rmdir sessions/opts" timeout -k 2 20 rmdir "$S"

# the end, as sfs_done but with a longer wait: a keeper and the server it
# started after the crash, under ASan on a loaded machine, took more than
# its 5 s to exit
assert_true "daemon still running at the end" "it died during the test" sfs_alive "$SFS_PID"
timeout 10 fusermount3 -u "$MNT" 2>/dev/null
if sfs_wait_gone "$SFS_PID" 30; then
	wait "$SFS_PID"
	assert_eq 0 "$?" "daemon exits with 0 after unmount"
else
	fail "daemon exits with 0 after unmount" "still running 30 s after unmount"
fi
SFS_PID=
sfs_umount
SFS_DONE=1
exit 0
