#!/usr/bin/env bash
# t38_shell_start: sessionfs(7) "SESSIONS AND RUNS" and "Containment": the
# way a session's shell is started (forked from the template shell for the
# daemon's own user, else clone3 without a copy of the daemon's memory;
# the next session's shell made ahead after a mkdir) gives each
# session a shell of its own: $$ is the pid ps sees, $PPID the daemon, the
# owner's uid, the session's cgroup, a $RANDOM of its own, the default
# cwd, the variables and cwd written before its first run, no descriptor
# of the daemon's. The template is the daemon's user's, single-threaded,
# in a cgroup of its own, and shells still start once it is killed. rmdir
# of 50 sessions leaves none of their shells and none of their cgroups;
# unmounting ends the shell made ahead and the template too.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

# the session's shell as it sees itself, and as /proc sees it
INFO='echo "$$ $PPID $BASHPID $(id -u) $RANDOM"; readlink /proc/$$/exe; sed -n "s/^0:://p" /proc/$$/cgroup; (cd /proc/$$/fd && echo *); for f in /proc/$$/fd/*; do readlink "$f"; done | grep -c "^/dev/fuse" || true'

S=()
for n in 1 2 3; do
	S[n]=$MNT/sessions/st$n
	check "mkdir sessions/st$n" sfs_mkdir "${S[n]}"
done
CWD0=$(timeout 5 cat "${S[1]}/cwd")
# written before the first run of st3, whose shell was made ahead
check "st3: env/T38_PRE written before its first run" sfs_write "${S[3]}/env/T38_PRE" "early"
check "st3: cwd written before its first run" sfs_write "${S[3]}/cwd" "/tmp"

declare -A PID RND CG
for n in 1 2 3; do
	out=$(sfs_run_out "${S[n]}" "$INFO")
	read -r pid ppid bashpid uid rnd <<<"$(sed -n 1p <<<"$out")"
	PID[$n]=$pid RND[$n]=$rnd CG[$n]=$(sed -n 3p <<<"$out")
	ps_pid=$(ps -o pid= -p "$pid" 2>/dev/null | tr -d ' ')
	assert_eq "$pid" "$ps_pid" "st$n: \$\$ is a pid ps sees"
	assert_eq "$SFS_SERVER" "$(sfs_ppid "$pid")" "st$n: the shell is the daemon's child"
	assert_eq "$SFS_SERVER" "$ppid" "st$n: \$PPID is the daemon"
	assert_eq "$pid" "$bashpid" "st$n: \$BASHPID is \$\$"
	assert_eq "$(id -u)" "$uid" "st$n: the shell runs as the owner"
	assert_true "st$n: the shell is bash" "exe: $(sed -n 2p <<<"$out")" \
		grep -q 'bash$' <<<"$(sed -n 2p <<<"$out")"
	assert_true "st$n: the shell is in a cgroup of the session's" "cgroup: ${CG[$n]}" \
		grep -Eq "/sessionfs\\.$SFS_SERVER/s[0-9]+\$" <<<"${CG[$n]}"
	assert_eq "0 1 2" "$(sed -n 4p <<<"$out")" "st$n: the run's shell holds only 0-2"
	assert_eq "0" "$(sed -n 5p <<<"$out")" "st$n: no /dev/fuse in the shell"
done
assert_true "three shells, three pids" "pids: ${PID[*]}" \
	test "$(printf '%s\n' "${PID[@]}" | sort -u | wc -l)" -eq 3
assert_true "three shells, three cgroups" "cgroups: ${CG[*]}" \
	test "$(printf '%s\n' "${CG[@]}" | sort -u | wc -l)" -eq 3
assert_true "st1 and st2 draw different \$RANDOM" "both gave ${RND[1]}" \
	test "${RND[1]}" != "${RND[2]}"
assert_eq "$CWD0" "$(sfs_run_out "${S[2]}" 'pwd')" "st2: the first run is in the cwd the session showed"
assert_eq "early /tmp" "$(sfs_run_out "${S[3]}" 'echo "$T38_PRE $PWD"')" \
	"st3: the variable and cwd written before its first run hold"
assert_eq "early" "$(sfs_run_out "${S[3]}" 'bash -c "echo \$T38_PRE"')" \
	"st3: the variable is exported to the run's children"

# a session made long after the last mkdir (its shell made ahead, idle)
sleep 0.5
S4=$MNT/sessions/st4
check "mkdir sessions/st4 0.5 s later" sfs_mkdir "$S4"
out=$(sfs_run_out "$S4" "$INFO")
read -r pid ppid bashpid uid rnd <<<"$(sed -n 1p <<<"$out")"
assert_eq "$pid" "$(ps -o pid= -p "$pid" 2>/dev/null | tr -d ' ')" "st4: \$\$ is a pid ps sees"
assert_eq "$SFS_SERVER" "$ppid" "st4: \$PPID is the daemon"
assert_true "st4: a shell of its own" "pid $pid is another session's" \
	test "$pid" != "${PID[1]}" -a "$pid" != "${PID[2]}" -a "$pid" != "${PID[3]}"
assert_eq "0" "$(sed -n 5p <<<"$out")" "st4: no /dev/fuse in the shell"

# the template the daemon forks its own user's shells from (sessions/ARCHITECTURE.md,
# the template shell): killed from outside, shells are started again, and
# then forked from a new one
TPL=$(for p in $(sfs_descendants "$SFS_SERVER"); do
	tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qx -- --template &&
		[ "$(sfs_ppid "$p")" = "$SFS_SERVER" ] && echo "$p"
done | head -n 1)
note "template shell: ${TPL:-none}"
if [ -n "$TPL" ]; then
	assert_eq "$(id -u)" "$(stat -c %u "/proc/$TPL")" "the template runs as the daemon's user"
	assert_true "the template is in a cgroup of its own" "$(cat "/proc/$TPL/cgroup" 2>/dev/null)" \
		grep -Eq "/sessionfs\.$SFS_SERVER/tmpl\$" "/proc/$TPL/cgroup"
	assert_eq 1 "$(sed -n 's/^Threads:[[:space:]]*//p' "/proc/$TPL/status")" "the template is single-threaded"
	kill -KILL "$TPL"
	sfs_wait_gone "$TPL" 5
	for n in 5 6; do
		check "mkdir sessions/st$n after the template was killed" sfs_mkdir "$MNT/sessions/st$n"
		out=$(sfs_run_out "$MNT/sessions/st$n" "$INFO")
		read -r pid ppid bashpid uid rnd <<<"$(sed -n 1p <<<"$out")"
		assert_eq "$pid" "$(ps -o pid= -p "$pid" 2>/dev/null | tr -d ' ')" "st$n: \$\$ is a pid ps sees"
		assert_eq "$SFS_SERVER" "$ppid" "st$n: \$PPID is the daemon"
		assert_eq "0" "$(sed -n 5p <<<"$out")" "st$n: no /dev/fuse in the shell"
	done
else
	note "no template shell (the daemon's user has no cgroup here?)"
fi

# rmdir of 50 sessions: none of their shells, none of their cgroups left
ROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
SH=() CGS=()
for i in $(seq 50); do
	d=$MNT/sessions/many$i
	sfs_mkdir "$d" || break
	out=$(sfs_run_out "$d" 'echo $$; sed -n "s/^0:://p" /proc/$$/cgroup') || break
	SH+=("$(sed -n 1p <<<"$out")")
	CGS+=("$(sed -n 2p <<<"$out")")
done
assert_eq 50 "${#SH[@]}" "50 sessions made, a run in each"
t0=$(now_ms)
rmdir_ok=0
for i in $(seq 50); do
	timeout 10 rmdir "$MNT/sessions/many$i" && rmdir_ok=$((rmdir_ok + 1))
done
t1=$(now_ms)
assert_eq 50 "$rmdir_ok" "rmdir of the 50 sessions succeeds"
note "rmdir of 50 sessions: $((t1 - t0)) ms"
left=
for p in "${SH[@]}"; do sfs_alive "$p" && left+="$p "; done
assert_eq "" "$left" "right after the rmdirs no shell of the 50 sessions is left"
left=
if [ -n "$ROOT" ] && [ -n "${CGS[0]}" ]; then
	for c in "${CGS[@]}"; do [ -d "$ROOT$c" ] && left+="$c "; done
	assert_eq "" "$left" "right after the rmdirs no cgroup of the 50 sessions is left"
else
	note "no cgroup v2 in use: the cgroup check is skipped"
fi

# unmounting ends every shell, the one made ahead included
DESC=$(sfs_descendants "$SFS_SERVER" | tr '\n' ' ')
note "the daemon's descendants before unmount: $DESC"
OWN=$(sed -n 's/^0:://p' "/proc/$SFS_SERVER/cgroup")
[ "$OWN" = / ] && OWN=
INST=$ROOT$OWN/sessionfs.$SFS_SERVER
keep_pid=$SFS_SERVER
sfs_umount
assert_eq 0 "$SFS_DAEMON_RC" "the daemon exits with 0 after unmount"
left=
for p in $DESC; do sfs_alive "$p" && left+="$p "; done
assert_eq "" "$left" "after unmount none of the daemon's descendants is left"
if [ -n "$ROOT" ] && [ -n "${CGS[0]}" ]; then
	assert_true "after unmount the instance's cgroup is gone" "$INST still exists" \
		sfs_until 5 test ! -d "$INST"
fi
note "daemon $keep_pid done"
SFS_DONE=1
exit 0
