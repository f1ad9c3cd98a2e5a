#!/usr/bin/env bash
# t39_shell_start_hazards: what the ways of starting a shell (t38) must not
# change. A session whose cwd is inside the mount (cd MOUNT/files/sub,
# then `exit`) gets its new shell and the mount keeps answering: the
# daemon may not wait, in one system call, for a child that looks a path
# up in the mount (the child of clone3 CLONE_VFORK does its chdir before
# it execs). A stopped template shell does not stop the daemon: other
# requests are answered meanwhile. A new session's first run sees
# $SECONDS of 0 even when the session before it was made seconds earlier
# (its shell was made ahead then). A cwd written as a path in the mount,
# for the session or a context, is taken without the daemon looking
# into its own mount; paths outside are not looked up either: the run
# that cannot enter one is an error.
# shellcheck disable=SC2016,SC2317
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

# the daemon's children that are still the daemon (not exec'd), stuck in a
# FUSE request: the child of a CLONE_VFORK waiting on the mount
stuck_children() {
	local p bin
	bin=$(readlink -f "$SFS_BIN")
	for p in $(pgrep -P "$SFS_PID"); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$bin" ] || continue
		[ "$(cat "/proc/$p/wchan" 2>/dev/null)" = request_wait_answer ] && echo "$p"
	done
	return 0
}

# health answers within 1 s
health_quick() { timeout 1 cat "$MNT/health" >/dev/null; }

# ---------------------------------------------------------------- cwd in the mount
A=$MNT/sessions/cwdin
check "mkdir sessions/cwdin" sfs_mkdir "$A"
check "cwdin: cd into the mount" sfs_run "$A" "mkdir -p '$MNT/files/t39sub' && cd '$MNT/files/t39sub'"
check "cwdin: exit (the next run gets a new shell)" sfs_run "$A" 'exit 0'
f=$SFS_TMP/run.cmd
printf 'echo alive\n' >"$f"
bash -c 'cat >"$1"' _ "$A/cmd" <"$f" 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
w=$!
SFS_BG_PIDS+=("$w")
if sfs_until 10 eval '! sfs_alive "$w"'; then
	pass "cwdin: the run in a new shell started in the mount ends"
	assert_eq "alive" "$(timeout 5 cat "$A/stdout")" "cwdin: it ran in the new shell"
else
	stuck=$(stuck_children)
	fail "cwdin: the run in a new shell started in the mount ends" \
		"not after 10 s; daemon in $(cat "/proc/$SFS_PID/wchan" 2>/dev/null), children stuck in the mount: ${stuck:-none}"
	# the daemon waits for that child: ending it frees the mount
	for p in $stuck; do kill -KILL "$p" 2>/dev/null; done
	sfs_wait_gone "$w" 10 || note "the writer is still blocked"
fi
check "health answers after it" health_quick
check "rmdir sessions/cwdin" timeout 10 rmdir "$A"

# ---------------------------------------------------------------- a stopped template
tmpl_pid() { # the daemon's single-threaded child running the template
	local p
	for p in $(pgrep -P "$SFS_PID"); do
		[ "$(awk '/^Threads:/ { print $2 }' "/proc/$p/status" 2>/dev/null)" = 1 ] || continue
		tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qx -- '--template' && echo "$p"
	done
	return 0
}
check "mkdir sessions/tp1" sfs_mkdir "$MNT/sessions/tp1"
check "tp1: a run" sfs_run "$MNT/sessions/tp1" true
T=$(tmpl_pid)
if [ -z "$T" ]; then
	pass "skip: no template shell to stop"
else
	kill -STOP "$T"
	check "mkdir sessions/tp2 with the template stopped" sfs_mkdir "$MNT/sessions/tp2"
	t0=$(now_ms)
	check "health answers with the template stopped" timeout 10 cat "$MNT/health"
	assert_lt $(($(now_ms) - t0)) 1000 "health answers in under 1 s with the template stopped" " ms"
	check "tp2: a run with the template stopped" sfs_run "$MNT/sessions/tp2" true
	kill -CONT "$T" 2>/dev/null
fi

# ---------------------------------------------------------------- a cwd written in the mount
# The daemon checks a written cwd without looking into its own mount (a
# stat there would wait for itself): it is taken as it is.
C=$MNT/sessions/cwdw
check "mkdir sessions/cwdw" sfs_mkdir "$C"
check "cwdw: a directory in the mount" sfs_run "$C" "mkdir -p '$MNT/files/t39w'"
check "cwdw: the cwd written as a path in the mount returns" \
	timeout 5 bash -c 'printf "%s\n" "$1" >"$2"' _ "$MNT/files/t39w" "$C/cwd"
check "health answers after it" health_quick
assert_eq "$MNT/files/t39w" "$(sfs_run_out "$C" pwd)" "cwdw: the next run is there"
check "cwdw: exit (a new shell starts there)" sfs_run "$C" 'exit 0'
assert_eq "$MNT/files/t39w" "$(sfs_run_out "$C" pwd)" "cwdw: the new shell is there too"
check "cwdw: a context's cwd in the mount returns" sfs_mkdir "$C/contexts/py"
check "cwdw: the context's cwd written" \
	timeout 5 bash -c 'printf "%s\n" "$1" >"$2"' _ "$MNT/files/t39w" "$C/contexts/py/cwd"
check "health answers after that" health_quick
# outside it, too, the daemon looks nothing up (t44): the run enters it,
# or fails as an error and says why
ln -s /nonexistent "$SFS_TMP/t39link"
ln -s /etc/passwd "$SFS_TMP/t39file"
for bad in "/nonexistent/t39:No such file or directory" \
	"$SFS_TMP/t39link:No such file or directory" "$SFS_TMP/t39file:Not a directory"; do
	check "cwdw: ${bad%%:*} is taken at the write" sfs_write "$C/cwd" "${bad%%:*}"$'\n'
	check "cwdw: the run after it returns" sfs_run "$C" 'echo ran'
	assert_file_match "$C/status" '^state error$' "cwdw: ${bad%%:*}: the run is an error"
	assert_file_match "$C/error" "cwd ${bad%%:*}: ${bad#*:}\$" "cwdw: ${bad%%:*}: error says ${bad#*:}"
done
mkdir -p "$SFS_TMP/t39d/sub"
ln -s t39d/sub "$SFS_TMP/t39rel"
check "cwdw: a relative link to a directory" sfs_write "$C/cwd" "$SFS_TMP/t39rel/../sub"$'\n'
assert_eq "$SFS_TMP/t39d/sub" "$(sfs_run_out "$C" pwd -P)" "cwdw: the run after it is there"
check "rmdir sessions/cwdw" timeout 10 rmdir "$C"

# ---------------------------------------------------------------- $SECONDS
check "mkdir sessions/sec1" sfs_mkdir "$MNT/sessions/sec1"
sleep 3
check "mkdir sessions/sec2, 3 s later" sfs_mkdir "$MNT/sessions/sec2"
sec=$(sfs_run_out "$MNT/sessions/sec2" 'echo $SECONDS')
assert_true "sec2: \$SECONDS of its first run is 0 or 1" "it is '$sec'" \
	test "${sec:-99}" -le 1

sfs_done
