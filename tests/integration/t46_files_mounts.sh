#!/usr/bin/env bash
# t46_files_mounts: issue 26 item 2's class in files/ (the hostile review's
# finding 1). The daemon never enters another mount below the workspace:
# the lookup of a mount point fails with EXDEV ("Invalid cross-device
# link") and readdir still lists its name. A user (made here, removed at
# exit) mounts libfuse's passthrough_ll with allow_other on a directory of
# hers in the workspace and stops it (SIGSTOP): root, she and another
# user run `ls -l`, `stat`, `find` and `du` over files/ all at once, and
# each returns within seconds with EXDEV for the mount point and every
# other entry listed; `cat health` answers within 1 s meanwhile, and the
# other user's run goes on. A directory the kernel looked up before the
# mount (a process's cwd) stays the directory under it. After SIGCONT all
# of files/ still works and the rule holds. Two bind mounts by root (a
# directory and a file) get the same rule: never read, written or removed
# through files/.
# shellcheck disable=SC2016,SC2317
SFS_T=${SFS_T:-10}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need useradd userdel setpriv fusermount3 mount umount find du gcc pkg-config

XDEV='Invalid cross-device link' # strerror(EXDEV)
U=sfsm_$$                        # her: the FUSE mount is hers
V=sfsv_$$                        # another user
USERS_MADE=()
HER_FUSE=        # her FUSE daemon's pid
HER_MNT=
BINDS=() # root's bind mounts in the workspace

# the EXIT trap: her FUSE daemon goes on first (anything may wait on it),
# her mount and the bind mounts go, then the daemon, the users, lib.sh's
# cleanup
t46_cleanup() {
	local rc=$? p m
	exec 1>&"$SFS_OUT" 2>&"$SFS_ERR"
	[ -n "$HER_FUSE" ] && kill -CONT "$HER_FUSE" 2>/dev/null
	for p in "${SFS_BG_PIDS[@]}"; do sfs_alive "$p" && sfs_kill_tree "$p"; done
	[ -n "$HER_MNT" ] && { timeout 10 fusermount3 -u -z "$HER_MNT" 2>/dev/null || umount -l "$HER_MNT" 2>/dev/null; }
	[ -n "$HER_FUSE" ] && kill -KILL "$HER_FUSE" 2>/dev/null
	for m in "${BINDS[@]}"; do umount -l "$m" 2>/dev/null; done
	sfs_user_fuse_undo
	[ -n "$SFS_PID" ] && sfs_umount
	for p in $(sfs_uid_pids "${UID_U:-}"); do kill -KILL "$p" 2>/dev/null; done
	[ ${#USERS_MADE[@]} -gt 0 ] && sleep 0.1
	for m in "${USERS_MADE[@]}"; do
		userdel -f "$m" >/dev/null 2>&1 || fail "cleanup: userdel $m" "failed"
	done
	(exit "$rc")
	sfs_cleanup
}
trap t46_cleanup EXIT

sfs_sweep_users '^sfs[mv]_[0-9]+$' # users of t46 runs killed before their EXIT trap
for name in "$U" "$V"; do
	if useradd -M -d /nonexistent -s /bin/bash -U "$name" 2>"$SFS_TMP/useradd.err"; then
		USERS_MADE+=("$name")
		pass "useradd $name"
	else
		fail "useradd $name" "$(head -c 200 "$SFS_TMP/useradd.err")"
		exit 1
	fi
done
UID_U=$(id -u "$U")
GID_U=$(id -g "$U")
AS_U=(setpriv --reuid="$UID_U" --regid="$GID_U" --clear-groups -- env -C /)
AS_V=(setpriv --reuid="$(id -u "$V")" --regid="$(id -g "$V")" --clear-groups -- env -C /)

# libfuse's passthrough_ll (lib.sh) is her filesystem
PLL=$SFS_TMP/pll
sfs_build_pll "$PLL" || PLL=
if [ -z "$PLL" ]; then
	pass "skip: libfuse's passthrough_ll cannot be built here"
	SFS_DONE=1
	exit 0
fi

# ---------------------------------------------------------------- the workspace
# ws/top.txt, ws/nb/ (hers: a.txt, sub/b.txt, fm/ with under.txt, where
# her mount goes), ws/bm/ and ws/bf.txt (root's bind mounts)
chmod 711 "$SFS_TMP"
WS=$SFS_TMP/ws
mkdir -m 755 "$WS" "$WS/bm"
echo top >"$WS/top.txt"
echo under-bf >"$WS/bf.txt"
mkdir -p "$WS/nb/sub" "$WS/nb/fm"
echo a >"$WS/nb/a.txt"
echo b >"$WS/nb/sub/b.txt"
echo under >"$WS/nb/fm/under.txt"
chown -R "$UID_U:$GID_U" "$WS/nb"
PSRC=$SFS_TMP/psrc # what her mount shows
mkdir -p "$PSRC/psub"
echo x >"$PSRC/x.txt"
chown -R "$UID_U:$GID_U" "$PSRC"
BSRC=$SFS_TMP/bsrc # what the bind mounts show
mkdir -p "$BSRC/dir"
echo inner >"$BSRC/dir/inner.txt"
echo bound >"$BSRC/file"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t46.conf"

sfs_start_mount "allow_other, workspace $WS" -c "$SFS_TMP/t46.conf" -o allow_other || exit 1
F=$MNT/files

health_ms() { # how long `cat health` took (9999: not within 1 s)
	local t0
	t0=$(now_ms)
	timeout 1 cat "$MNT/health" >/dev/null 2>&1 || { echo 9999; return; }
	echo $(($(now_ms) - t0))
}
assert_health() { assert_lt "$(health_ms)" 1000 "$1: health answers within 1 s" " ms"; }

# AS_root, AS_her, AS_him: the prefix that runs a command as that one
# shellcheck disable=SC2034 # read through namerefs (local -n)
{
	AS_root=(env -C /)
	AS_her=("${AS_U[@]}")
	AS_him=("${AS_V[@]}")
}

# probe ID WHO CMD...: CMD as WHO in the background (timeout 10 s): its
# stdout, stderr and status go to $P/ID.out, .err, .rc
P=$SFS_TMP/probes
mkdir "$P"
PROBES=()
probe() {
	local id=$1
	local -n pre=AS_$2
	shift 2
	(
		timeout -k 2 10 "${pre[@]}" "$@" >"$P/$id.out" 2>"$P/$id.err"
		echo $? >"$P/$id.rc"
	) </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	PROBES+=("$id")
	SFS_BG_PIDS+=($!)
}
probes_done() {
	local id
	for id in "${PROBES[@]}"; do [ -s "$P/$id.rc" ] || return 1; done
}

# xdev_only ID MSG NAME...: probe ID ended (not timed out); its stderr
# names each NAME with EXDEV, and says nothing else
xdev_only() {
	local id=$1 msg=$2 rc n
	shift 2
	rc=$(cat "$P/$id.rc" 2>/dev/null)
	if [ -z "$rc" ] || [ "$rc" -ge 124 ]; then
		fail "$msg" "it did not return (status ${rc:-none})"
		return 1
	fi
	for n in "$@"; do
		grep -qE -- "/$n'?: $XDEV\$" "$P/$id.err" || {
			fail "$msg" "status $rc, no EXDEV for $n in: $(head -c 300 "$P/$id.err" | tr '\n' '|')"
			return 1
		}
	done
	if grep -vqE -- ": $XDEV\$" "$P/$id.err"; then
		fail "$msg" "another error: $(grep -vE -- ": $XDEV\$" "$P/$id.err" | head -c 300 | tr '\n' '|')"
		return 1
	fi
	pass "$msg"
}

# lists ID MSG ERE...: probe ID's stdout has a line matching each ERE
lists() {
	local id=$1 msg=$2 re
	shift 2
	for re in "$@"; do
		grep -qE -- "$re" "$P/$id.out" || {
			fail "$msg" "no /$re/ in: $(head -c 400 "$P/$id.out" | tr '\n' '|')"
			return 1
		}
	done
	pass "$msg"
}

# ---------------------------------------------------------------- bind mounts
# FUSE aside (root mounts them, nothing can stop them): the same rule
mount --bind "$BSRC/dir" "$WS/bm" && BINDS+=("$WS/bm")
mount --bind "$BSRC/file" "$WS/bf.txt" && BINDS+=("$WS/bf.txt")
if [ ${#BINDS[@]} -ne 2 ]; then
	fail "bind mounts in the workspace" "mount --bind failed"
	exit 1
fi
ls_root=$(timeout 5 ls -a "$F" 2>&1)
assert_true "bind: ls files/ lists the mount points" "ls gave: $(echo "$ls_root" | tr '\n' ' ')" \
	bash -c 'grep -qx bm <<<"$1" && grep -qx bf.txt <<<"$1" && grep -qx top.txt <<<"$1"' _ "$ls_root"
for who in root him; do
	declare -n pre=AS_$who
	assert_errno "$XDEV" "bind: stat files/bm as $who" "${pre[@]}" stat "$F/bm"
	assert_errno "$XDEV" "bind: ls files/bm/ as $who" "${pre[@]}" ls "$F/bm/"
	assert_errno "$XDEV" "bind: cat files/bf.txt as $who (a file bound on a file)" "${pre[@]}" cat "$F/bf.txt"
done
unset -n pre
assert_errno "$XDEV" "bind: stat files/bm/inner.txt" stat "$F/bm/inner.txt"
assert_errno "$XDEV" "bind: a write to files/bf.txt" bash -c 'echo over >"$1"' _ "$F/bf.txt"
assert_eq bound "$(cat "$BSRC/file")" "bind: the bound file is unchanged"
assert_errno "$XDEV" "bind: rmdir files/bm" rmdir "$F/bm"
assert_errno "$XDEV" "bind: rm files/bf.txt" rm -f "$F/bf.txt"
check "bind: both are still mounted" bash -c 'mountpoint -q "$1" && mountpoint -q "$2"' _ "$WS/bm" "$WS/bf.txt"
assert_errno "$XDEV" "bind: mv files/bm away" mv "$F/bm" "$F/bm2"
check "bind: files/bm2 did not appear" test ! -e "$WS/bm2"
assert_file_eq "$F/top.txt" $'top\n' "bind: files/top.txt beside them reads"

# ---------------------------------------------------------------- her stopped FUSE mount
sfs_user_fuse_allow allow_other # Debian's defaults (put back at exit)

# a process of hers has its cwd in files/nb/fm before the mount: that
# directory the kernel keeps is the one under the mount
"${AS_U[@]}" bash -c 'cd "$1" && exec sleep 600' _ "$F/nb/fm" </dev/null >/dev/null 2>&1 {SFS_OUT}>&- {SFS_ERR}>&- &
HELD=$!
disown "$HELD" # killed by pid at the end: no job notice
SFS_BG_PIDS+=("$HELD")
check "fm: her process's cwd is files/nb/fm" sfs_until 10 eval '[ "$(readlink "/proc/$HELD/cwd")" = "$F/nb/fm" ]'

HER_MNT=$WS/nb/fm
"${AS_U[@]}" "$PLL" -f -o "source=$PSRC,allow_other" "$HER_MNT" \
	>"$SFS_TMP/pll.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
HER_FUSE=$!
if ! check "fm: her FUSE mount (allow_other) is up" sfs_until 10 timeout 2 mountpoint -q "$HER_MNT"; then
	exit 1
fi
check "fm: it shows her files (seen directly)" timeout 5 test -f "$HER_MNT/x.txt"
assert_errno "$XDEV" "fm: files/nb/fm is EXDEV while it runs" stat "$F/nb/fm"

kill -STOP "$HER_FUSE"
check "fm: her FUSE daemon is stopped" sfs_until 5 eval 'grep -q "^State:.*T" "/proc/$HER_FUSE/status"'
for who in root her him; do
	probe "ls-$who" "$who" ls -l "$F/nb"
	probe "stat-$who" "$who" stat -c %n "$F/nb/a.txt" "$F/nb/fm" "$F/nb/sub/b.txt"
	probe "find-$who" "$who" find "$F"
	probe "du-$who" "$who" du -a "$F"
done
probe "held" root ls -a "/proc/$HELD/cwd/"
probe "held-stat" root cat "/proc/$HELD/cwd/under.txt"
assert_health "fm stopped, 14 probes started"
check "fm: he makes a session meanwhile" "${AS_V[@]}" mkdir "$MNT/sessions/v1"
check "fm: his run meanwhile" "${AS_V[@]}" bash -c 'echo "echo hi" >"$1/cmd"' _ "$MNT/sessions/v1"
assert_file_eq "$MNT/sessions/v1/stdout" $'hi\n' "fm: his run printed"
if check "fm: every probe returns (10 s each at most)" sfs_until 20 probes_done; then :; else
	note "probes left: $(for id in "${PROBES[@]}"; do [ -s "$P/$id.rc" ] || printf '%s ' "$id"; done)"
	kill -CONT "$HER_FUSE" # they wait on her mount: let them end
	sfs_until 20 probes_done
fi
assert_health "fm stopped, the probes done"
for who in root her him; do
	xdev_only "ls-$who" "fm: ls -l files/nb as $who: EXDEV for fm only" fm
	lists "ls-$who" "fm: ls -l files/nb as $who lists everything" ' a\.txt$' ' sub$' ' fm$'
	xdev_only "stat-$who" "fm: stat as $who: EXDEV for fm only" fm
	lists "stat-$who" "fm: stat as $who: the others" '/nb/a\.txt$' '/nb/sub/b\.txt$'
	xdev_only "find-$who" "fm: find files/ as $who: EXDEV for the mount points only" nb/fm bm
	lists "find-$who" "fm: find files/ as $who lists the rest" '/files/top\.txt$' '/nb/a\.txt$' '/nb/sub$' '/nb/sub/b\.txt$'
	assert_true "fm: find as $who shows nothing of her mount or the binds" "$(head -c 300 "$P/find-$who.out" | tr '\n' '|')" \
		bash -c '! grep -qE "x\.txt|psub|inner\.txt|fm/under" "$1"' _ "$P/find-$who.out"
	xdev_only "du-$who" "fm: du -a files/ as $who: EXDEV for the three mount points only" nb/fm bm bf.txt
	lists "du-$who" "fm: du -a files/ as $who counts the rest" '/files/top\.txt$' '/nb/sub/b\.txt$'
done
lists held "fm: the directory held before the mount is the one under it" '^under\.txt$'
assert_file_eq "$P/held-stat.out" $'under\n' "fm: and its file reads"
assert_eq 0 "$(cat "$P/held-stat.rc")" "fm: that read succeeds"

kill -CONT "$HER_FUSE"
check "fm: her mount answers after SIGCONT" timeout 5 cat "$HER_MNT/x.txt"
assert_errno "$XDEV" "fm: files/nb/fm is still EXDEV" "${AS_U[@]}" stat "$F/nb/fm"
assert_errno "$XDEV" "fm: files/nb/fm/x.txt too" "${AS_U[@]}" cat "$F/nb/fm/x.txt"
check "fm: she writes files/nb/new.txt" "${AS_U[@]}" bash -c 'echo new >"$1"' _ "$F/nb/new.txt"
assert_eq new "$(cat "$WS/nb/new.txt")" "fm: it is in the workspace"
check "fm: she renames it" "${AS_U[@]}" mv "$F/nb/new.txt" "$F/nb/sub/new2.txt"
check "fm: and removes it" "${AS_U[@]}" rm "$F/nb/sub/new2.txt"
check "fm: ls -l files/nb as root" bash -c 'ls -l "$1" 2>&1 | grep -q " a\.txt$"' _ "$F/nb"
assert_file_eq "$F/nb/sub/b.txt" $'b\n' "fm: files/nb/sub/b.txt reads"
assert_health "after SIGCONT"

sfs_done
