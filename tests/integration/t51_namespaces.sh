#!/usr/bin/env bash
# t51_namespaces: issue 11 items 6 and 7, the mount seen from other
# containers. A full round trip (mkdir a session, cmd, stdout, stderr,
# exit, env/X seen by a run, procs/NAME and its stdout, rmdir) from a
# private mount namespace (slave propagation), a bwrap sandbox (as root,
# and as a user, whose bwrap makes a user namespace), and a rootless user
# namespace (a real user made here with useradd, removed at exit; with and
# without a mount namespace of its own). Restarts seen from a container:
# in a private namespace of the test, the parent directory of the mount
# point is made a shared mount; a consumer namespace binds it with slave
# propagation (as docker -v P:P:rslave or Kubernetes HostToContainer); the
# daemon is killed and a new one started on the same mount point, and the
# consumer, not restarted, sees the new mount.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

RUSER=sfsn_$$ # the user of the rootless cases
USERS_MADE=()
PAR= # restart case: the shared parent directory of the mount point

# ---------------------------------------------------------------- the round trip

# rt_inner MNT NAME: the round trip, run inside the namespace under test
# (bash and coreutils only: no helper of lib.sh is there). Prints one line
# per step, "ok STEP" or "not ok STEP: what happened", then "end".
# shellcheck disable=SC2317
rt_inner() {
	local m=$1 n=$2 s=$1/sessions/$2 got t=10
	ok() { printf 'ok %s\n' "$1"; }
	no() { printf 'not ok %s: %s\n' "$1" "$2" | tr '\n' ' '; echo; }
	# same STEP WANT GOT
	same() { if [ "$2" = "$3" ]; then ok "$1"; else no "$1" "expected '$2', got '$3'"; fi; }
	if got=$(timeout "$t" ls "$m/sessions" 2>&1); then ok "the mount is there (ls sessions)"; else
		no "the mount is there (ls sessions)" "$got"
		echo end
		return 0
	fi
	if got=$(timeout "$t" mkdir "$s" 2>&1); then ok "mkdir sessions/$n"; else
		no "mkdir sessions/$n" "$got"
		echo end
		return 0
	fi
	got=$(timeout "$t" bash -c 'printf "%s\n" "echo hi-$2; echo err-$2 >&2; (exit 3)" >"$1/cmd"' _ "$s" "$n" 2>&1)
	same "write cmd" "" "$got"
	same "stdout" "hi-$n" "$(timeout "$t" cat "$s/stdout" 2>&1)"
	same "stderr" "err-$n" "$(timeout "$t" cat "$s/stderr" 2>&1)"
	same "exit" "3" "$(timeout "$t" cat "$s/exit" 2>&1)"
	got=$(timeout "$t" bash -c 'echo "val-$2" >"$1/env/RT"' _ "$s" "$n" 2>&1)
	same "write env/RT" "" "$got"
	same "env/RT reads back" "val-$n" "$(timeout "$t" cat "$s/env/RT" 2>&1)"
	got=$(timeout "$t" bash -c 'echo "echo \"\$RT\"" >"$1/cmd"' _ "$s" 2>&1)
	same "a run sees env/RT" "val-$n" "$got$(timeout "$t" cat "$s/stdout" 2>&1)"
	got=$(timeout "$t" mkdir "$s/procs/p" 2>&1)
	same "mkdir procs/p" "" "$got"
	got=$(timeout "$t" bash -c 'echo "echo \"proc-\$RT\"" >"$1/procs/p/cmd"' _ "$s" 2>&1)
	same "start procs/p" "" "$got"
	same "procs/p exit" "0" "$(timeout "$t" cat "$s/procs/p/exit" 2>&1)"
	same "procs/p stdout" "proc-val-$n" "$(timeout "$t" cat "$s/procs/p/stdout" 2>&1)"
	got=$(timeout "$t" rmdir "$s/procs/p" 2>&1)
	same "rmdir procs/p" "" "$got"
	got=$(timeout "$t" rmdir "$s" 2>&1)
	same "rmdir sessions/$n" "" "$got"
	if timeout "$t" test -e "$s"; then no "the session is gone" "it still exists"; else ok "the session is gone"; fi
	echo end
}

# rt_cmd MNT NAME: RT=(the command that runs rt_inner MNT NAME)
rt_cmd() { RT=(bash -c "$(declare -f rt_inner)"' && rt_inner "$@"' _ "$1" "$2"); }

# roundtrip LABEL CMD...: runs CMD (which runs rt_inner) under a timeout;
# each of its steps becomes a check "LABEL: STEP"
roundtrip() {
	local label=$1 out line rc
	shift
	out=$(timeout -k 5 60 "$@" 2>"$SFS_TMP/rt.err" </dev/null)
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "$label: ${line#ok }" ;;
		"not ok "*)
			line=${line#not ok }
			fail "$label: ${line%%: *}" "${line#*: }"
			;;
		esac
	done <<<"$out"
	if [ "${out##*$'\n'}" != end ]; then
		fail "$label: the round trip ran to its end" "status $rc; stderr: $(head -c 300 "$SFS_TMP/rt.err" | tr '\n' ' ')"
	fi
}

# ---------------------------------------------------------------- users

# drop_user NAME: kill its processes (by pid), userdel -r
# shellcheck disable=SC2317
drop_user() {
	local uid f u
	uid=$(id -u "$1" 2>/dev/null) || return 0
	for f in /proc/[0-9]*/status; do
		u=$(awk '/^Uid:/ { print $2; exit }' "$f" 2>/dev/null)
		[ "$u" = "$uid" ] && { f=${f#/proc/}; kill -KILL "${f%/status}" 2>/dev/null; }
	done
	sleep 0.1
	userdel -r "$1" >/dev/null 2>&1 || userdel -r -f "$1" >/dev/null 2>&1
	! id -u "$1" >/dev/null 2>&1
}

# the EXIT trap: what it started, the daemon, the restart case's parent
# mount, the user; then lib.sh's cleanup
# shellcheck disable=SC2317
t51_cleanup() {
	local rc=$? p u
	exec 1>&"$SFS_OUT" 2>&"$SFS_ERR"
	for p in "${SFS_BG_PIDS[@]}"; do sfs_alive "$p" && sfs_kill_tree "$p"; done
	[ -n "$SFS_PID" ] && sfs_umount
	if [ -n "$PAR" ]; then
		sfs_mounted "$PAR/mnt" && timeout 10 umount -l "$PAR/mnt"
		rmdir "$PAR/mnt" 2>/dev/null
		sfs_mounted "$PAR" && timeout 10 umount -l "$PAR"
		rmdir "$PAR" 2>/dev/null
	fi
	for u in "${USERS_MADE[@]}"; do
		drop_user "$u" || fail "cleanup: userdel -r $u" "the user still exists"
	done
	(exit "$rc")
	sfs_cleanup
}
trap t51_cleanup EXIT

# ---------------------------------------------------------------- restarts

# start_at LABEL: start a daemon (allow_other) on the existing $MNT; 0
# once it serves it (5 s at most), else 1 with the daemon stopped
start_at() {
	local i
	"$SFS_BIN" -f -o allow_other "$MNT" >"$SFS_TMP/daemon.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_PID=$!
	[ -n "$SFS_NS_PIDFILE" ] && echo "$SFS_PID" >>"$SFS_NS_PIDFILE"
	sfs_state
	for ((i = 0; i < 50; i++)); do
		timeout 2 test -d "$MNT/sessions" && sfs_note_server && return 0
		sfs_alive "$SFS_PID" || break
		sleep 0.1
	done
	if sfs_alive "$SFS_PID"; then kill -KILL "$SFS_PID"; fi
	wait "$SFS_PID" 2>/dev/null
	SFS_PID=
	return 1
}


# restart_main: runs in a private mount namespace (sfs_run_in_ns), where
# the parent directory may be made shared without touching the host
restart_main() {
	local C=$SFS_TMP/consumer i
	PAR=$(mktemp -d "${TMPDIR:-/tmp}/sfs-par-$SFS_TEST.XXXXXX") || exit 1
	MNT=$PAR/mnt
	mkdir "$MNT" "$C"
	check "restart: mount --bind P P" mount --bind "$PAR" "$PAR" &&
		check "restart: mount --make-shared P" mount --make-shared "$PAR" || exit 1
	if start_at first; then pass "restart: the first daemon mounts P/mnt"; else
		fail "restart: the first daemon mounts P/mnt" "$(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
		exit 1
	fi
	# the consumer: its own mount namespace, P bound at C with slave
	# propagation (docker -v P:C:rslave)
	sfs_marker "300.$$"
	unshare -m --propagation slave bash -c \
		'mount --rbind "$1" "$2" && mount --make-rslave "$2" && exec sleep "$3"' _ "$PAR" "$C" "300.$$" \
		</dev/null >/dev/null 2>"$SFS_TMP/consumer.err" {SFS_OUT}>&- {SFS_ERR}>&- &
	CPID=$!
	SFS_BG_PIDS+=("$CPID")
	for ((i = 0; i < 50; i++)); do
		[ "$(tr '\0' ' ' <"/proc/$CPID/cmdline" 2>/dev/null)" = "sleep 300.$$ " ] && break
		sleep 0.1
	done
	assert_true "restart: the consumer namespace is up" "$(head -c 200 "$SFS_TMP/consumer.err")" \
		test "$(readlink "/proc/$CPID/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" || exit 1
	rt_cmd "$C/mnt" before
	CONS=(nsenter -t "$CPID" -m --) # a command in the consumer's namespace
	roundtrip "restart: the consumer, first daemon" "${CONS[@]}" "${RT[@]}"

	kill -KILL "$SFS_PID" "$SFS_SERVER" # the keeper and its server
	wait "$SFS_PID" 2>/dev/null
	sfs_wait_gone "$SFS_SERVER" 5
	SFS_PID=
	# (or ECONNABORTED, for a request queued while a thread of the
	# killed server, its leader a zombie already, still held /dev/fuse)
	timeout 10 "${CONS[@]}" ls "$C/mnt/sessions" >/dev/null 2>"$SFS_TMP/dead.err"
	assert_true "restart: after SIGKILL of the daemon the consumer sees a dead mount (ENOTCONN)" \
		"$(head -c 200 "$SFS_TMP/dead.err")" \
		grep -qE 'Transport endpoint is not connected|Software caused connection abort' "$SFS_TMP/dead.err"
	if start_at second; then
		pass "restart: a new daemon mounts the same mount point over the dead mount"
	else
		# The daemon does not clean a dead mount at its mount point yet (the
		# hardening issue makes it do so): unmount it lazily here, as an
		# administrator (or that start) would.
		note "restart: the new daemon did not start over the dead mount: $(tail -n 2 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
		note "restart: fusermount3 -uz P/mnt, then start again"
		timeout 10 fusermount3 -uz "$MNT" 2>/dev/null || timeout 10 umount -l "$MNT"
		if start_at second; then pass "restart: a new daemon mounts the same mount point"; else
			fail "restart: a new daemon mounts the same mount point" "$(tail -n 3 "$SFS_TMP/daemon.log" | tr '\n' ' ')"
			exit 1
		fi
	fi
	assert_true "restart: the consumer was not restarted" "pid $CPID is gone" sfs_alive "$CPID"
	rt_cmd "$C/mnt" after
	roundtrip "restart: the consumer, new daemon, without restarting" "${CONS[@]}" "${RT[@]}"
	assert_eq "$(stat -c %d "$MNT")" "$(timeout 10 "${CONS[@]}" stat -c %d "$C/mnt" 2>&1)" \
		"restart: the consumer's C/mnt is the new mount (same device as P/mnt)"
	kill -KILL "$CPID"
	{ wait "$CPID"; } 2>/dev/null
	sfs_done
}

if [ "${1:-}" = --restart-ns ]; then
	restart_main
fi

# ---------------------------------------------------------------- the contexts

sfs_start_mount "allow_other" -o allow_other || exit 1

# the session state is shared: a session made here is seen from inside
OUT=$MNT/sessions/outside
check "mkdir sessions/outside (host namespace)" sfs_mkdir "$OUT"
assert_run_ok "a run in sessions/outside" "$OUT" 'echo from-host'

# 1. a private mount namespace, slave propagation (as root)
rt_cmd "$MNT" private
roundtrip "private mount namespace" unshare --mount --propagation slave "${RT[@]}"
assert_eq "from-host" "$(timeout 10 unshare --mount --propagation slave cat "$OUT/stdout" 2>&1)" \
	"private mount namespace: reads a session made outside"
check "private mount namespace: a run in the session made outside" timeout 10 \
	unshare --mount --propagation slave bash -c 'echo "echo from-inside" >"$1/cmd"' _ "$OUT"
assert_file_eq "$OUT/stdout" $'from-inside\n' "private mount namespace: its run is seen outside"

# 2. bwrap (Debian's bubblewrap), as root and as a user
if ! command -v bwrap >/dev/null; then
	pass "bwrap: skip (bubblewrap is not installed; tests/install-deps.sh installs it)"
else
	BW=(bwrap --ro-bind / / --dev /dev --proc /proc --bind "$MNT" "$MNT" --unshare-pid)
	rt_cmd "$MNT" bwrap
	roundtrip "bwrap sandbox (root)" "${BW[@]}" "${RT[@]}"
fi

# 3. rootless user namespaces (a real user; the mount has allow_other)
if ! command -v useradd >/dev/null || ! command -v su >/dev/null; then
	pass "rootless: skip (no useradd or su)"
elif ! useradd -m -d "/home/$RUSER" -s /bin/bash -U "$RUSER" 2>"$SFS_TMP/useradd.err"; then
	fail "useradd $RUSER" "$(head -c 200 "$SFS_TMP/useradd.err")"
else
	USERS_MADE+=("$RUSER")
	pass "useradd $RUSER"
	# as_su CMD...: SU=(su to the user, cd /, then CMD)
	as_su() { SU=(su -s /bin/bash "$RUSER" -c "cd / && $(printf '%q ' "$@")"); }
	rt_cmd "$MNT" userns
	as_su unshare -U -r "${RT[@]}"
	roundtrip "rootless user namespace (su $RUSER -c 'unshare -U -r ...')" "${SU[@]}"
	rt_cmd "$MNT" userns-mnt
	as_su unshare -U -r -m --propagation slave "${RT[@]}"
	roundtrip "rootless user and mount namespace (unshare -U -r -m)" "${SU[@]}"
	if command -v bwrap >/dev/null; then
		rt_cmd "$MNT" bwrap-user
		as_su "${BW[@]}" "${RT[@]}"
		roundtrip "bwrap sandbox (as $RUSER: a user namespace)" "${SU[@]}"
	fi
fi

# 4. restarts seen from a container (in a private namespace of the test)
if ! command -v nsenter >/dev/null; then
	pass "restart: skip (no nsenter)"
else
	sfs_run_in_ns restart --restart-ns 90
fi

sfs_done
