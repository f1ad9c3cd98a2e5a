#!/usr/bin/env bash
# t44_user_paths: issue 26 items 2, 3, 5 and 7, as a real user (made here,
# removed at exit) on a mount with allow_other. The daemon makes no system
# call on a path a user chose: a cwd (a session's, a context's) written
# inside her own FUSE mount, whose daemon she has stopped, returns at once
# and the mount keeps answering (item 2); a root-only directory's existing
# and missing entries are accepted alike, and both runs end as errors
# with the same reason (item 5). A loop of kill(-1, SIGSTOP) as the user,
# continuing only her writers of `echo exit > cmd`, does not stop the
# daemon (item 3). A cwd that cannot be entered fails the run (state error,
# a line in error, the command not run) instead of running it in "/": a
# shell restarted in a deleted cwd, a written cwd that is missing, a
# process started there; a cwd written to a directory that exists is the
# way out (item 7). Meanwhile `cat health` answers within 1 s.
# shellcheck disable=SC2016,SC2317
SFS_T=${SFS_T:-10}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need useradd userdel setpriv fusermount3

U=sfsp_$$
USER_MADE=
HER_FUSE=        # her FUSE daemon's pid
HER_MNT=

# her_cont: whatever of hers is stopped goes on (her stopper stopped it)
her_cont() {
	local p
	for p in $(sfs_uid_pids "${UID_U:-}"); do kill -CONT "$p" 2>/dev/null; done
	return 0
}

# the EXIT trap: her processes go on first (the daemon may be waiting on
# one), her FUSE mount goes, then the daemon, the user, lib.sh's cleanup
t44_cleanup() {
	local rc=$? p
	exec 1>&"$SFS_OUT" 2>&"$SFS_ERR"
	for p in "${SFS_BG_PIDS[@]}"; do sfs_alive "$p" && sfs_kill_tree "$p"; done
	her_cont
	[ -n "$HER_MNT" ] && { timeout 10 fusermount3 -u -z "$HER_MNT" 2>/dev/null || umount -l "$HER_MNT" 2>/dev/null; }
	[ -n "$HER_FUSE" ] && kill -KILL "$HER_FUSE" 2>/dev/null
	sfs_user_fuse_undo
	[ -n "$SFS_PID" ] && sfs_umount
	for p in $(sfs_uid_pids "${UID_U:-}"); do kill -KILL "$p" 2>/dev/null; done
	if [ -n "$USER_MADE" ]; then
		sleep 0.1
		userdel -f "$USER_MADE" >/dev/null 2>&1 || fail "cleanup: userdel $USER_MADE" "failed"
	fi
	(exit "$rc")
	sfs_cleanup
}
trap t44_cleanup EXIT

sfs_sweep_users '^sfsp_[0-9]+$' # users of t44 runs killed before their EXIT trap
if useradd -M -d /nonexistent -s /bin/bash -U "$U" 2>"$SFS_TMP/useradd.err"; then
	USER_MADE=$U
	pass "useradd $U"
else
	fail "useradd $U" "$(head -c 200 "$SFS_TMP/useradd.err")"
	exit 1
fi
UID_U=$(id -u "$U")
GID_U=$(id -g "$U")
AS=(setpriv --reuid="$UID_U" --regid="$GID_U" --clear-groups -- env -C /)

# she reaches SFS_TMP/pub; SFS_TMP stays unlistable
chmod 711 "$SFS_TMP"
PUB=$SFS_TMP/pub
mkdir -m 1777 "$PUB"

sfs_start_mount "allow_other" -o allow_other || exit 1

# health_ms: how long `cat health` took (9999: not within 1 s)
health_ms() {
	local t0
	t0=$(now_ms)
	timeout 1 cat "$MNT/health" >/dev/null 2>&1 || { echo 9999; return; }
	echo $(($(now_ms) - t0))
}
assert_health() { assert_lt "$(health_ms)" 1000 "$1: health answers within 1 s" " ms"; }

# her_write FILE TEXT [TIMEOUT]: she writes TEXT to FILE; its status
her_write() {
	printf '%s' "$2" | timeout -k 2 "${3:-$SFS_T}" "${AS[@]}" bash -c 'cat >"$1"' _ "$1" 2>"$SFS_TMP/write.err"
	return "${PIPESTATUS[1]}"
}
her_run() { her_write "$1/cmd" "$2"$'\n' "${3:-$SFS_T}"; }
her_mkdir() { timeout -k 2 "$SFS_T" "${AS[@]}" mkdir -- "$1"; }
state_is() { assert_file_match "$1/status" "^state $2\$" "$3"; }

# ---------------------------------------------------------------- item 7: a deleted cwd
S=$MNT/sessions/s7
check "s7: she makes her session" her_mkdir "$S"
check "s7: cd into a directory of hers" her_run "$S" "mkdir -p '$PUB/gone' && cd '$PUB/gone'"
check "s7: the directory is removed from outside" rmdir "$PUB/gone"
check "s7: exit (the next run gets a new shell)" her_run "$S" 'exit 0'
check "s7: a run in the new shell returns" her_run "$S" 'pwd; echo ran'
state_is "$S" error "s7: the run in the deleted cwd ends as state error"
assert_file_eq "$S/stdout" "" "s7: its command did not run (not in /)"
assert_file_match "$S/error" "cwd $PUB/gone: No such file or directory\$" "s7: error names the cwd and the reason"
assert_health "s7"
check "s7: she writes cwd to a directory that exists" her_write "$S/cwd" "$PUB"
check "s7: the next run" her_run "$S" 'pwd'
state_is "$S" completed "s7: it completes"
assert_file_eq "$S/stdout" "$PUB"$'\n' "s7: it runs in the written cwd"

# a written cwd that is missing: taken (its form is right), and the run it
# is for fails; the shell stays where it was
check "s7: a missing cwd is taken at the write" her_write "$S/cwd" "$PUB/missing"
check "s7: the run after it returns" her_run "$S" 'echo ran'
state_is "$S" error "s7: the run in the missing cwd ends as state error"
assert_file_eq "$S/stdout" "" "s7: its command did not run"
assert_file_match "$S/error" "cwd $PUB/missing: No such file or directory\$" "s7: error says why"
check "s7: the run after that" her_run "$S" 'echo ran'
state_is "$S" error "s7: it fails too: the cwd stays until one that exists is written"
assert_file_eq "$S/cwd" "$PUB/missing"$'\n' "s7: cwd still says the missing directory"
check "s7: she writes cwd back" her_write "$S/cwd" "$PUB"
check "s7: a run" her_run "$S" 'pwd'
assert_file_eq "$S/stdout" "$PUB"$'\n' "s7: it runs there"

# a process started in a deleted cwd
check "s7: cd into another directory" her_run "$S" "mkdir -p '$PUB/pgone' && cd '$PUB/pgone'"
check "s7: it is removed from outside" rmdir "$PUB/pgone"
check "s7: mkdir procs/p" her_mkdir "$S/procs/p"
check "s7: the process's cmd" her_write "$S/procs/p/cmd" $'pwd; echo ran\n'
if sfs_until 10 eval 'timeout 2 grep -qx "state error" "$S/procs/p/status"'; then
	pass "s7: the process in the deleted cwd ends as state error"
else
	fail "s7: the process in the deleted cwd ends as state error" "$(timeout 2 head -n 1 "$S/procs/p/status")"
fi
assert_file_eq "$S/procs/p/stdout" "" "s7: the process's command did not run"
assert_file_match "$S/procs/p/stderr" "cwd $PUB/pgone: No such file or directory\$" "s7: its stderr says why"
assert_file_match "$S/error" "procs/p: cwd $PUB/pgone: No such file or directory\$" "s7: error says why the process did not start"

# the terminal started in it: its shell does not start, the screen says
# why (tty.c's child: no fallback to "/" there either)
check "s7: the terminal's first input" her_write "$S/tty/input" $'pwd\n'
if sfs_until 10 eval 'timeout 2 grep -qx "state exited" "$S/tty/status"'; then
	pass "s7: the terminal in the deleted cwd ends at once"
	assert_file_match "$S/tty/status" '^exit 126$' "s7: its shell's status is 126"
	assert_file_match "$S/tty/screen" "cwd $PUB/pgone: No such file or directory" "s7: its screen says why"
	assert_file_match "$S/error" "tty: cwd $PUB/pgone: No such file or directory\$" "s7: error says why the terminal did not start"
	assert_true "s7: pwd did not run there" "the screen: $(timeout 2 cat "$S/tty/screen" | grep -v '^$' | tr '\n' '|')" \
		bash -c '! timeout 2 grep -qx / "$1"' _ "$S/tty/screen"
else
	fail "s7: the terminal in the deleted cwd ends at once" "$(timeout 2 head -n 1 "$S/tty/status")"
fi

# the command's own 126 is its exit, not an error line of the daemon's
check "s7: cwd back to one that exists" her_write "$S/cwd" "$PUB"
check "s7: mkdir procs/q" her_mkdir "$S/procs/q"
check "s7: a process that exits 126 itself" her_write "$S/procs/q/cmd" $'exit 126\n'
sfs_until 10 eval '! timeout 2 grep -qx "state running" "$S/procs/q/status"'
assert_true "s7: no error line for a command's own 126" "error: $(timeout 2 tail -n 2 "$S/error" | tr '\n' '|')" \
	bash -c '! timeout 2 grep -q "procs/q" "$1"' _ "$S/error"

# ---------------------------------------------------------------- item 5: what exists as root
RO=$SFS_TMP/rootonly
mkdir -m 700 "$RO"
mkdir "$RO/exists"
S=$MNT/sessions/s5
check "s5: she makes her session" her_mkdir "$S"
check "s5: a first run (its shell is up)" her_run "$S" true
her_write "$S/cwd" "$RO/exists"
rc_e=$?
cp "$SFS_TMP/write.err" "$SFS_TMP/write.e"
her_write "$S/cwd" "$RO/nothere"
rc_n=$?
assert_eq "$rc_e $(sed "s|$RO/exists|X|" "$SFS_TMP/write.e")" \
	"$rc_n $(sed "s|$RO/nothere|X|" "$SFS_TMP/write.err")" \
	"s5: a root-only directory's entry and a missing one: the same answer"
assert_eq 0 "$rc_n" "s5: the write is taken (its form only)"
check "s5: a run" her_run "$S" 'echo ran'
state_is "$S" error "s5: the run ends as state error"
assert_file_match "$S/error" "cwd $RO/nothere: Permission denied\$" \
	"s5: error says only what she could learn herself (EACCES)"
her_write "$S/cwd" "$RO/exists"
check "s5: a run in the existing one" her_run "$S" 'echo ran'
assert_file_match "$S/error" "cwd $RO/exists: Permission denied\$" "s5: the same for the existing one"
check "s5: mkdir contexts/py" her_mkdir "$S/contexts/py"
her_write "$S/contexts/py/cwd" "$RO/exists"
rc_e=$?
her_write "$S/contexts/py/cwd" "$RO/nothere"
rc_n=$?
assert_eq "$rc_e" "$rc_n" "s5: a context's cwd: the same answer for both"

# ---------------------------------------------------------------- item 2: her stopped FUSE mount
# libfuse's passthrough_ll (lib.sh) is her filesystem
PLL=$SFS_TMP/pll
if ! sfs_build_pll "$PLL"; then
	pass "skip: libfuse's passthrough_ll cannot be built here"
else
	sfs_user_fuse_allow allow_other # Debian's defaults (put back below and at exit)
	mkdir -p "$PUB/src/sub"
	chown -R "$UID_U:$GID_U" "$PUB/src"
	HER_MNT=$PUB/hm
	mkdir "$HER_MNT"
	chown "$UID_U:$GID_U" "$HER_MNT"
	"${AS[@]}" "$PLL" -f -o "source=$PUB/src,allow_other" "$HER_MNT" \
		>"$SFS_TMP/pll.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	HER_FUSE=$!
	if check "s2: her FUSE mount (allow_other) is up" sfs_until 10 timeout 2 mountpoint -q "$HER_MNT"; then
		S=$MNT/sessions/s2
		check "s2: she makes her session" her_mkdir "$S"
		check "s2: a context" her_mkdir "$S/contexts/py"
		kill -STOP "$HER_FUSE"
		t0=$(now_ms)
		her_write "$S/cwd" "$HER_MNT/sub" 5
		rc=$?
		el=$(($(now_ms) - t0))
		assert_eq 0 "$rc" "s2: a cwd in her stopped mount is taken"
		assert_lt "$el" 2000 "s2: the write returns at once" " ms"
		assert_health "s2 (her mount stopped)"
		t0=$(now_ms)
		her_write "$S/contexts/py/cwd" "$HER_MNT/sub" 5
		assert_eq 0 "$?" "s2: a context's cwd there is taken"
		assert_lt "$(($(now_ms) - t0))" 2000 "s2: that write returns at once" " ms"
		# the run enters it as her: it waits on her mount, nobody else does
		printf 'pwd\n' >"$SFS_TMP/s2.cmd"
		timeout -k 2 30 "${AS[@]}" bash -c 'cat >"$1"' _ "$S/cmd" <"$SFS_TMP/s2.cmd" \
			2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
		w=$!
		SFS_BG_PIDS+=("$w")
		sleep 0.5
		assert_health "s2 (her run waits on her mount)"
		check "s2: another session's run meanwhile" her_mkdir "$MNT/sessions/s2b"
		check "s2b: a run" her_run "$MNT/sessions/s2b" 'true'
		kill -CONT "$HER_FUSE"
		if sfs_until 10 eval '! sfs_alive "$w"'; then
			pass "s2: her run ends once her mount answers"
			assert_file_eq "$S/stdout" "$HER_MNT/sub"$'\n' "s2: it ran in her mount"
		else
			fail "s2: her run ends once her mount answers" "not after 10 s"
		fi
	fi
	timeout 10 fusermount3 -u "$HER_MNT" 2>/dev/null || timeout 10 umount -l "$HER_MNT"
	sfs_wait_gone "$HER_FUSE" 5 || kill -KILL "$HER_FUSE" 2>/dev/null
	HER_MNT=
	HER_FUSE=
	sfs_user_fuse_undo
fi

# ---------------------------------------------------------------- item 3: kill(-1, SIGSTOP)
writers=()
for i in 1 2 3; do
	check "a$i: she makes her session" her_mkdir "$MNT/sessions/a$i"
	"${AS[@]}" bash -c 'while :; do echo exit >"$1/cmd"; done' _ "$MNT/sessions/a$i" \
		</dev/null >/dev/null 2>&1 {SFS_OUT}>&- {SFS_ERR}>&- &
	writers+=($!)
	SFS_BG_PIDS+=($!)
	disown $! # killed by pid below: no job notice
done
"${AS[@]}" bash -c 'end=$((SECONDS + 5)); while ((SECONDS < end)); do kill -STOP -1; kill -CONT "$@"; done' \
	_ "${writers[@]}" </dev/null >/dev/null 2>&1 {SFS_OUT}>&- {SFS_ERR}>&- &
stopper=$!
SFS_BG_PIDS+=("$stopper")
worst=0
n=0
while sfs_alive "$stopper" && [ "$n" -lt 100 ]; do
	ms=$(health_ms)
	[ "$ms" -gt "$worst" ] && worst=$ms
	n=$((n + 1))
	sleep 0.2
done
assert_lt "$worst" 1000 "a: health answers within 1 s all through her kill(-1, SIGSTOP) loop ($n tries)" " ms"
sfs_wait_gone "$stopper" 5 || kill -KILL "$stopper"
# what she stopped goes on first: a writer in the close of cmd cannot die
# before the daemon answers it (FUSE waits for a flush's answer)
her_cont
for p in "${writers[@]}"; do kill -KILL "$p" 2>/dev/null; done
for p in "${writers[@]}"; do sfs_wait_gone "$p" 10 || note "writer $p is still there"; done
runs=$(timeout 2 sed -n 's/^run //p' "$MNT/sessions/a1/status")
assert_true "a1: her writers got runs done meanwhile" "run '${runs}'" test "${runs:-0}" -gt 1
for i in 1 2 3; do
	assert_eq ok "$(her_run "$MNT/sessions/a$i" 'echo ok' 10 && timeout 5 cat "$MNT/sessions/a$i/stdout")" \
		"a$i: a run after the loop"
done
assert_health "after the loop"

sfs_done
