#!/usr/bin/env bash
# t86_fork: `fork NEW` written to a session's ctl (issue 24, item 2). The
# new session's shell is a fork of the source's, with its state as its
# latest run left it: an indexed and an associative array, a function,
# an alias, pipefail, extglob, a trap, the directory stack, umask 027, an
# exported and a plain variable, a lowered ulimit -n, the cwd; env/, cwd
# and timeout follow. Its $$ and $RANDOM differ; the two are independent
# afterwards; a fork of a fork works. A fork while a run runs waits for
# its end (EBUSY with O_NONBLOCK, Ctrl-C gives up and makes nothing). A
# fork after a `cd` into a directory deleted since keeps that cwd, as the
# source does. A source that has no shell yet, or whose shell exited,
# gives a fresh shell with its cwd and variables. Refusals: an existing
# NEW (EEXIST), bad names (EINVAL), another user's session (EACCES at the
# open for a user, EPERM for root, whose shell would run the owner's
# functions and traps), each with a line in error; a user forks her own
# session, her shell in her new session's cgroup. A forked session and a
# fork made after it survive an upgrade in place.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need python3 setpriv

sfs_start_mount "allow_other" -o allow_other || exit 1
WD=$SFS_TMP/wd
mkdir -p "$WD/d1" "$WD/d2"
chmod 755 "$SFS_TMP" "$WD"
S=$MNT/sessions

# w1 FILE TEXT [nonblock]: TEXT in one write(2); python's error names the
# errno
cat >"$SFS_TMP/w1.py" <<'EOF'
import os, sys
flags = os.O_WRONLY | (os.O_NONBLOCK if len(sys.argv) > 3 else 0)
fd = os.open(sys.argv[1], flags)
try:
    os.write(fd, sys.argv[2].encode())
finally:
    os.close(fd)
EOF
W1=(python3 "$SFS_TMP/w1.py")
w1() { timeout -k 2 "$SFS_T" "${W1[@]}" "$@"; }
# Under load the source's shell may take more than the 100 ms the daemon
# waits for it (sessionfs(7), a CI run saw it once): that fork is
# refused and forks of the source are for 10 s; then once more.
fork() {
	w1 "$S/$1/ctl" "fork $2"$'\n' && return 0
	grep -q "fork $2: the shell did not answer" "$S/$1/error" 2>/dev/null || return 1
	note "fork $1 $2: the shell did not answer within 100 ms; again after the 10 s"
	sleep 10.5
	w1 "$S/$1/ctl" "fork $2"$'\n'
}
NOB=(setpriv --reuid=65534 --regid=65534 --clear-groups -- env -C /)

# the state a probe prints: everything a fork carries
PROBE='echo "arr=${arr[*]} n=${#arr[@]}"; echo "assoc=${h[k1]},${h[k 2]}"
f; al; [[ -o pipefail ]] && echo pipefail; shopt -q extglob && echo extglob
trap -p USR1; umask; dirs -p | tr "\n" " "; echo; ulimit -n
echo "ex=$EX pl=$PL"; pwd; [[ -v LATE ]] && echo "late=$LATE"; :'

# ---------------------------------------------------------------- a fork

check "mkdir src" sfs_mkdir "$S/src"
check "src: timeout 45000" w1 "$S/src/ctl" $'timeout 45000\n'
assert_run_ok "src: set up its state" "$S/src" "arr=(a 'b c' d); declare -A h=([k1]=v1 ['k 2']='v 2')
f() { echo 'fn here'; }; alias al='echo alias here'; set -o pipefail; shopt -s extglob
trap 'echo usr1' USR1; umask 027; cd '$WD/d1'; pushd '$WD/d2' >/dev/null
ulimit -n 150; export EX=exported; PL=plain"
assert_run_ok "src: the probe" "$S/src" "$PROBE"
timeout 5 cat "$S/src/stdout" >"$SFS_TMP/src.probe"
note "src: $(tr '\n' '|' <"$SFS_TMP/src.probe")"
assert_true "src: the probe saw what was set" "$(tr '\n' '|' <"$SFS_TMP/src.probe")" \
	grep -qx 'assoc=v1,v 2' "$SFS_TMP/src.probe"
SRCPID=$(sfs_run_out "$S/src" 'echo $$')

check "fork f1" fork src f1
assert_true "f1 exists" "no sessions/f1" timeout 5 test -d "$S/f1"
assert_eq "" "$(timeout 5 ls "$S/f1/runs")" "f1's runs/ is empty before its first run"
assert_run_ok "f1: the probe" "$S/f1" "$PROBE"
assert_file_same "$S/f1/stdout" "$SFS_TMP/src.probe" "f1's state is src's (arrays, function, alias, options, trap, umask, dirs, ulimit, variables, cwd)"
assert_file_eq "$S/f1/stderr" "" "f1: the probe printed no error"
F1PID=$(sfs_run_out "$S/f1" 'echo $$')
assert_true "f1's \$\$ differs from src's" "both $SRCPID" test -n "$F1PID" -a "$F1PID" != "$SRCPID"
assert_eq "$F1PID" "$(sfs_run_out "$S/f1" 'echo $BASHPID')" "f1's \$\$ is its shell's pid"
r_src=$(sfs_run_out "$S/src" 'echo $RANDOM $RANDOM $RANDOM $RANDOM')
r_f1=$(sfs_run_out "$S/f1" 'echo $RANDOM $RANDOM $RANDOM $RANDOM')
assert_true "\$RANDOM sequences differ" "src $r_src, f1 $r_f1" test -n "$r_f1" -a "$r_src" != "$r_f1"
assert_file_eq "$S/f1/env/EX" $'exported\n' "f1's env/EX is src's"
assert_true "f1 has no env/PL (plain, not exported)" "it has" bash -c '! timeout 5 test -e "$1"' _ "$S/f1/env/PL"
timeout 5 cat "$S/src/cwd" >"$SFS_TMP/src.cwd"
timeout 5 cat "$S/src/timeout" >"$SFS_TMP/src.timeout"
assert_file_same "$S/f1/cwd" "$SFS_TMP/src.cwd" "f1's cwd file is src's"
assert_file_same "$S/f1/timeout" "$SFS_TMP/src.timeout" "f1's timeout is src's"
assert_file_match "$SFS_TMP/src.timeout" '^45000$' "src's timeout is the one set"
assert_eq "" "$(sfs_run_out "$S/f1" 'jobs -p; echo "${!-}"')" "f1 has no jobs and no \$!"
assert_eq "0" "$(sfs_run_out "$S/f1" 'echo $((SECONDS < 5 ? 0 : SECONDS))')" "f1's \$SECONDS counts from its first run"

# independent afterwards
assert_run_ok "src: change PL and arr" "$S/src" 'PL=src-changed; arr+=(z); g() { :; }'
assert_run_ok "f1: change EX" "$S/f1" 'EX=fork-changed; unalias al'
assert_eq "pl=plain n=3" "$(sfs_run_out "$S/f1" 'echo "pl=$PL n=${#arr[@]}"; type -t g')" "src's later changes are not f1's"
assert_eq "ex=exported al" "$(sfs_run_out "$S/src" 'echo "ex=$EX" $(alias al | cut -c1-8)' | sed 's/alias //')" "f1's changes are not src's"
assert_file_eq "$S/src/env/EX" $'exported\n' "src's env/EX unchanged"

# readonly variables stay readonly; a procs/ process and a terminal
# are not carried
assert_run_ok "src: a readonly variable" "$S/src" 'readonly RO=fixed'
check "src: mkdir procs/bg" sfs_mkdir "$S/src/procs/bg"
check "src: procs/bg runs a sleep" sfs_write "$S/src/procs/bg/cmd" $'sleep 60\n'
check "src: its terminal starts" sfs_write "$S/src/tty/input" $'echo t86\n'
check "fork src fro" fork src fro
assert_eq "fixed readonly" "$(sfs_run_out "$S/fro" 'echo "$RO" $( (RO=x) 2>/dev/null || echo readonly)')" "fro: RO is readonly there too"
assert_eq "" "$(timeout 5 ls "$S/fro/procs")" "fro: no procs/ process of src's"
tpid=$(timeout 5 grep '^pid ' "$S/src/tty/status")
assert_true "src's terminal has a pid" "its status: $(timeout 5 cat "$S/src/tty/status" | tr '\n' '|')" test -n "$tpid"
assert_true "fro: no terminal of src's" "its tty/status: $(timeout 5 cat "$S/fro/tty/status" 2>&1 | tr '\n' '|')" \
	bash -c '! timeout 5 grep -qxF "$2" "$1/tty/status"' _ "$S/fro" "$tpid"
check "src: kill procs/bg" sfs_write "$S/src/procs/bg/ctl" $'kill\n'

# env/ and cwd writes the source's shell has not had yet go with the fork
check "src: env/PV written between runs" sfs_write "$S/src/env/PV" $'pending\n'
check "src: cwd written between runs" sfs_write "$S/src/cwd" "$WD/d1"
check "fork src fpend" fork src fpend
assert_eq "pending $WD/d1 fixed" "$(sfs_run_out "$S/fpend" 'echo "$PV $PWD $RO"')" "fpend: the pending env/ and cwd writes, and the shell's state"
assert_eq "pending $WD/d1" "$(sfs_run_out "$S/src" 'echo "$PV $PWD"')" "src gets them too"

# a fork of a fork
assert_run_ok "f1: a function of its own" "$S/f1" 'only_f1() { echo "only f1 $PL"; }'
check "fork f1 f2" fork f1 f2
assert_eq "only f1 plain|fork-changed" "$(sfs_run_out "$S/f2" 'only_f1; echo "|$EX"' | tr -d '\n')" "f2 has f1's function and variables"

# ---------------------------------------------------------------- while a run runs

sfs_run_bg "$S/src" 'sleep 2; LATE=yes'
running() { grep -q '^state running' "$S/src/status" 2>/dev/null; }
check "src: a run is running" sfs_until 10 running
assert_errno EBUSY "fork with O_NONBLOCK while a run runs: EBUSY" "${W1[@]}" "$S/src/ctl" $'fork nb\n' nonblock
t0=$(now_ms)
check "fork f3 waits for the run" fork src f3
el=$(($(now_ms) - t0))
assert_true "the fork's write returned after the run (about 2 s)" "it took $el ms" test "$el" -ge 800
assert_run_ok "f3: the probe" "$S/f3" "$PROBE"
assert_file_match "$S/f3/stdout" '^late=yes$' "f3 has what the run it waited for set"
# with a run queued behind the running one, the fork waits for both
sfs_run_bg "$S/src" 'sleep 1; Q=first'
check "src: the first run is running" sfs_until 10 running
sfs_run_bg "$S/src" 'sleep 1; Q=second'
queued() { grep -q '^state queued' "$S/src/status" 2>/dev/null; }
check "src: a run running and one queued" sfs_until 10 queued
check "fork f3q waits for both runs" fork src f3q
assert_eq "second" "$(sfs_run_out "$S/f3q" 'echo "$Q"')" "f3q has what the queued run set"
sfs_run_bg "$S/src" 'sleep 3'
check "src: another run is running" sfs_until 10 running
timeout -s INT 1 "${W1[@]}" "$S/src/ctl" $'fork f4\n' 2>"$SFS_TMP/int.err"
rc=$?
assert_true "a waiting fork interrupted (Ctrl-C): its write fails" "status $rc" test "$rc" -ne 0
notrun() { ! running; }
check "src: the run ended" sfs_until 10 notrun
sleep 0.3
assert_true "the interrupted fork made no f4" "f4 exists" bash -c '! timeout 5 test -e "$1"' _ "$S/f4"

# ---------------------------------------------------------------- a deleted cwd

check "mkdir del" sfs_mkdir "$S/del"
mkdir "$WD/gone"
assert_run_ok "del: cd into a directory, then delete it" "$S/del" "cd '$WD/gone' && rmdir '$WD/gone'; DV=1"
del_src=$(sfs_run_out "$S/del" 'pwd; [ -e "$PWD" ] || echo gone')
check "fork del delf" fork del delf
assert_eq "$del_src" "$(sfs_run_out "$S/delf" 'pwd; [ -e "$PWD" ] || echo gone')" "the fork keeps the deleted cwd as the source does"
assert_eq "1" "$(sfs_run_out "$S/delf" 'echo $DV')" "the fork of a deleted cwd has the source's variables"

# ---------------------------------------------------------------- no shell

check "mkdir fresh" sfs_mkdir "$S/fresh"
check "fresh: env/FV" sfs_write "$S/fresh/env/FV" $'fresh-value\n'
check "fresh: cwd" sfs_write "$S/fresh/cwd" "$WD/d2"
check "fork fresh freshf (no shell yet)" fork fresh freshf
assert_eq "fresh-value $WD/d2" "$(sfs_run_out "$S/freshf" 'echo "$FV $PWD"')" "a fork of a session with no shell: its env/ and cwd"
check "mkdir dead" sfs_mkdir "$S/dead"
sfs_run "$S/dead" 'export DX=kept; DP=lost; cd /; exit 3'
check "fork dead deadf (its shell exited)" fork dead deadf
assert_eq "kept: /" "$(sfs_run_out "$S/deadf" 'echo "$DX:$DP $PWD"')" "a fork of a session whose shell exited: its exported variables and cwd"

# ---------------------------------------------------------------- refusals

assert_errno EEXIST "fork into an existing session: EEXIST" "${W1[@]}" "$S/src/ctl" $'fork f1\n'
assert_file_match "$S/src/error" 'fork f1: File exists' "EEXIST: a line in src's error"
assert_errno EINVAL "fork a/b: EINVAL" "${W1[@]}" "$S/src/ctl" $'fork a/b\n'
assert_errno EINVAL "fork ..: EINVAL" "${W1[@]}" "$S/src/ctl" $'fork ..\n'
assert_errno EINVAL "fork of a name of 65 bytes: EINVAL" "${W1[@]}" "$S/src/ctl" "fork $(printf 'n%.0s' {1..65})"$'\n'
assert_file_match "$S/src/error" 'fork: a name of 65 bytes' "the long name: a line in src's error"
assert_file_match "$S/src/error" 'fork a/b: Invalid argument' "a/b: a line in src's error"
assert_errno EINVAL "fork with no name: EINVAL" "${W1[@]}" "$S/src/ctl" $'fork\n'
assert_errno EINVAL "fork with two names: EINVAL" "${W1[@]}" "$S/src/ctl" $'fork x y\n'
assert_true "no session x" "there is one" bash -c '! timeout 5 test -e "$1"' _ "$S/x"

check "nobody: mkdir nob" timeout 10 "${NOB[@]}" mkdir "$S/nob"
assert_true "nobody: a run" "it failed" timeout 10 "${NOB[@]}" bash -c 'echo "NV=nobody-var; nf() { echo nobody-fn; }" >"$1/cmd"' _ "$S/nob"
assert_errno EACCES "nobody: fork of root's session: EACCES" "${NOB[@]}" "${W1[@]}" "$S/src/ctl" $'fork stolen\n'
assert_errno EPERM "root: fork of nobody's session: EPERM" "${W1[@]}" "$S/nob/ctl" $'fork rootnob\n'
assert_file_match "$S/nob/error" "fork rootnob: only the session's owner may fork it" "EPERM: a line in the source's error"
assert_true "no session rootnob" "there is one" bash -c '! timeout 5 test -e "$1"' _ "$S/rootnob"
check "nobody: fork nob nobf" timeout 10 "${NOB[@]}" "${W1[@]}" "$S/nob/ctl" $'fork nobf\n'
timeout 10 "${NOB[@]}" bash -c 'echo "echo \$NV \$(nf) \$(id -u); grep ^0:: /proc/\$\$/cgroup" >"$1/cmd"; cat "$1/stdout"' _ "$S/nobf" >"$SFS_TMP/nobf.out"
assert_eq "nobody-var nobody-fn 65534" "$(head -n 1 "$SFS_TMP/nobf.out")" "nobody's fork: her variables and functions, her uid"
nob_cg=$(timeout 10 "${NOB[@]}" bash -c 'echo "grep ^0:: /proc/\$\$/cgroup" >"$1/cmd"; cat "$1/stdout"' _ "$S/nob")
nobf_cg=$(sed -n 2p "$SFS_TMP/nobf.out")
assert_true "nobody's fork runs in a cgroup of its own" "nob $nob_cg, nobf $nobf_cg" \
	test -n "$nobf_cg" -a "$nobf_cg" != "$nob_cg"

# a lowered process limit: the source's clone fails, the fork with it
assert_true "nobody: ulimit -u 1 in nob" "it failed" timeout 10 "${NOB[@]}" bash -c 'echo "ulimit -u 1" >"$1/cmd"' _ "$S/nob"
assert_fails "nobody: fork nob nobu under ulimit -u 1 fails" "${NOB[@]}" "${W1[@]}" "$S/nob/ctl" $'fork nobu\n'
assert_file_match "$S/nob/error" 'fork nobu: Resource temporarily unavailable' "the failed clone: a line in nob's error"
assert_true "no session nobu" "there is one" bash -c '! timeout 5 test -e "$1"' _ "$S/nobu"
assert_eq "nobody-var" "$(timeout 10 "${NOB[@]}" bash -c 'echo "echo \$NV" >"$1/cmd"; cat "$1/stdout"' _ "$S/nob")" "nob goes on after the failed fork"

# a shell that does not answer (a trap it runs between runs): the fork
# fails at once, and the session refuses forks for a while (EAGAIN)
check "mkdir slow" sfs_mkdir "$S/slow"
SLOWM=$SFS_TMP/slow.trap
assert_run_ok "slow: a trap that holds the shell between runs" "$S/slow" \
	"trap 'touch $SLOWM; sleep 3; rm -f $SLOWM' USR1; (sleep 0.3; kill -USR1 \$\$) >/dev/null 2>&1 &"
trapping() { [ -e "$SLOWM" ]; }
check "slow: the trap runs" sfs_until 10 trapping
t0=$(now_ms)
assert_errno "Connection timed out" "fork of a shell busy in a trap: ETIMEDOUT" "${W1[@]}" "$S/slow/ctl" $'fork slowf\n'
el=$(($(now_ms) - t0))
assert_true "ETIMEDOUT came soon (the daemon's loop waited at most its 100 ms and the answer's)" "it took $el ms" test "$el" -lt 2000
assert_errno "Resource temporarily unavailable" "the next fork at once: EAGAIN" "${W1[@]}" "$S/slow/ctl" $'fork slowg\n'
assert_file_match "$S/slow/error" 'fork slowf: the shell did not answer within 100 ms .*forks are refused for 10 s' "ETIMEDOUT: a line in slow's error"
assert_true "no session slowf" "there is one" bash -c '! timeout 5 test -e "$1"' _ "$S/slowf"
notrapping() { ! trapping; }
check "slow: the trap ends" sfs_until 10 notrapping
assert_eq "after" "$(sfs_run_out "$S/slow" 'echo after')" "slow runs commands after the trap (the stale fork line did nothing)"
assert_true "no session slowg" "there is one" bash -c '! timeout 5 test -e "$1"' _ "$S/slowg"

# a source whose functions are named like the builtins the fork would
# want, with a DEBUG trap and set -u: the fork is the driver's, in C
check "mkdir hos" sfs_mkdir "$S/hos"
assert_run_ok "hos: hostile functions and traps" "$S/hos" 'cd() { return 9; }; command() { return 9; }
builtin() { return 9; }; exit() { return 9; }; enable() { return 9; }; HV=0; trap "HV=\$((HV+1))" DEBUG; set -u'
check "fork hos hosf" fork hos hosf
assert_eq "ok-1 9" "$(sfs_run_out "$S/hosf" 'echo "ok-$((HV > 0))" "$(cd /; echo $?)"')" "hosf has hos's functions and trap"

# ---------------------------------------------------------------- upgrade

check "echo upgrade > ctl" sfs_write "$MNT/ctl" $'upgrade\n' 30
check "the daemon serves after the upgrade" \
	sfs_until 20 grep -q 'upgrade: serving (upgrade 1' "$SFS_TMP/daemon.log"
assert_eq "$F1PID" "$(sfs_run_out "$S/f1" 'echo $$')" "f1 keeps its shell across the upgrade"
assert_eq "only f1 plain" "$(sfs_run_out "$S/f1" 'only_f1')" "f1 keeps its functions across the upgrade"
check "fork f1 f5 after the upgrade" fork f1 f5
assert_eq "only f1 plain|fork-changed" "$(sfs_run_out "$S/f5" 'only_f1; echo "|$EX"' | tr -d '\n')" "f5 (forked after the upgrade) has f1's state"


# ---------------------------------------------------------------- crash

old=$SFS_SERVER
kill -KILL "$old"
sfs_wait_gone "$old" 5
check "kill -9 of the server: a new one serves" sfs_new_server "$old"
assert_eq "fork-changed" "$(sfs_run_out "$S/f1" 'echo "$EX"')" "f1 after a crash: its exported variables (its shell is new, as any session's)"
assert_file_match "$S/f1/env/EX" '^fork-changed$' "f1's env/ after the crash"
check "fork f1 f6 after the crash" fork f1 f6
assert_eq "fork-changed" "$(sfs_run_out "$S/f6" 'echo "$EX"')" "f6 (forked after the crash) has f1's variables"

# ---------------------------------------------------------------- the per-user limit

sfs_check_umount "allow_other"
CFG=$SFS_TMP/limit.conf
printf '%s\n' 'max_sessions_per_user = 2;' >"$CFG"
if sfs_start_mount "max_sessions_per_user = 2" -o allow_other -c "$CFG"; then
	S=$MNT/sessions
	check "limit: nobody mkdir sessions/l1" timeout 10 "${NOB[@]}" mkdir "$S/l1"
	check "limit: nobody fork l1 l2 (her second)" timeout 10 "${NOB[@]}" "${W1[@]}" "$S/l1/ctl" $'fork l2\n'
	assert_errno "Disk quota exceeded" "limit: her third, a fork, is EDQUOT" "${NOB[@]}" "${W1[@]}" "$S/l1/ctl" $'fork l3\n'
	assert_file_match "$S/l1/error" 'fork l3: Disk quota exceeded' "limit: a line in l1's error"
	check "limit: root mkdir sessions/r1" sfs_mkdir "$S/r1"
	check "limit: root fork r1 r2 (root has no share to exceed)" fork r1 r2
fi
sfs_done
