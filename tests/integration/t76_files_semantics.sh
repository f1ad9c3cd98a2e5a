#!/usr/bin/env bash
# t76_files_semantics: what pjdfstest and real tools find in files/ (issue
# 22, defects 2-5), as root and as other users (allow_other), each result
# compared with the same operation on the workspace itself (ext4 or
# whatever it is), not with a value written here:
# 1. another user's write to a setuid/setgid file succeeds and clears the
#    bits as the backing filesystem does (pjdfstest chmod/12.t, and a
#    setgid file the group may not execute); her chmod of it still fails.
# 2. opendir of a directory she may read but not search (0600, 0444)
#    works; one she may not read stays EACCES.
# 3. mknod of devices: root makes them (a whiteout, char 0:0, too),
#    another user gets what the backing filesystem gives her; no device
#    is opened through files/ (nodev, and the daemon refuses).
# 4. extended attributes and ACLs: getfattr/setfattr, getfacl/setfacl (an
#    ACL entry lets another user read a 0600 file), trusted.* and setcap
#    only for root, symlinks, cp -a, tar --xattrs, rsync -X; the tree's
#    files answer "no such attribute" and leave files/' attributes alone.
# 5. lsattr and chattr (+i for root only); O_TMPFILE is EOPNOTSUPP; file
#    locks are the mount's own (not shared with the backing directory).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need setpriv python3

WS=$SFS_TMP/ws
mkdir -p "$WS" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t76.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t76.conf HOME=$WS
SUB=$WS/t76 # the scratch directory, real
mkdir -m 777 "$SUB"
wrap=$SFS_TMP/allow_other.sh
printf '#!/bin/sh\nexec "%s" -o allow_other "$@"\n' "$SFS_BIN" >"$wrap"
chmod 755 "$wrap"
SFS_BIN=$wrap
chmod 755 "$SFS_TMP" # other users reach the workspace through it
sfs_mount
F=$MNT/files/t76 # the same, through the mount
T=10

fs() { timeout -k 2 "$T" "$@"; }
# "${U1[@]}" CMD..., "${U2[@]}" CMD...: CMD as uid and gid 65534 or
# 65533, without supplementary groups
U1=(setpriv --reuid=65534 --regid=65534 --clear-groups)
U2=(setpriv --reuid=65533 --regid=65533 --clear-groups)
# as UID GID CMD...: CMD as that user, without supplementary groups
as() {
	local u=$1 g=$2
	shift 2
	timeout -k 2 "$T" setpriv --reuid="$u" --regid="$g" --clear-groups "$@"
}
mode() { stat -c %a "$1" 2>&1; }
have() { command -v "$1" >/dev/null; }

# --------------------------------------------- 1. setuid and setgid kill

# kill_case MODE UID GID: the mode left by a write of UID:GID to a root
# file of group 65534 and MODE, through files/ and on the workspace
kill_case() {
	local m=$1 u=$2 g=$3 real via
	for d in "$SUB" "$F"; do
		rm -f "$SUB/k"
		printf a >"$SUB/k" && chgrp 65534 "$SUB/k" && chmod "$m" "$SUB/k"
		if ! as "$u" "$g" bash -c 'printf b >>"$1"' _ "$d/k" 2>"$SFS_TMP/k.err"; then
			fail "a write by $u:$g of a $m file ($d)" "$(head -c 100 "$SFS_TMP/k.err")"
			return
		fi
		[ "$d" = "$SUB" ] && real=$(mode "$SUB/k") || via=$(mode "$SUB/k")
	done
	assert_eq "$real" "$via" "a write by $u:$g of a $m file leaves the mode ext4 leaves ($real)"
}
for m in 4777 2777 6777; do # chmod/12.t
	rm -f "$SUB/k"
	printf a >"$SUB/k" && chmod "$m" "$SUB/k"
	if as 65534 65534 bash -c 'printf b >>"$1"' _ "$F/k" 2>"$SFS_TMP/k.err"; then
		pass "another user's write to a $m file succeeds"
	else
		fail "another user's write to a $m file succeeds" "$(head -c 200 "$SFS_TMP/k.err")"
	fi
	assert_eq 777 "$(mode "$SUB/k")" "the write cleared the bits of the $m file"
	assert_eq ab "$(cat "$SUB/k")" "the write of the $m file is there"
	assert_eq 777 "$(fs stat -c %a "$F/k")" "the $m file shows 0777 through files/"
done
kill_case 2766 65533 65533 # setgid, group may not execute, writer outside it
kill_case 2766 65533 65534 # the same, writer in the group
kill_case 6766 65533 65533
kill_case 4755 0 0
# a truncate by another user clears them too
for d in "$SUB" "$F"; do
	rm -f "$SUB/k"
	printf abc >"$SUB/k" && chmod 6777 "$SUB/k"
	as 65534 65534 truncate -s 1 "$d/k" 2>"$SFS_TMP/k.err"
	got="$? $(mode "$SUB/k") $(stat -c %s "$SUB/k")"
	[ "$d" = "$SUB" ] && real=$got || via=$got
done
assert_eq "$real" "$via" "another user's truncate of a 6777 file: status, mode and size as on ext4 ($real)"
rm -f "$SUB/k"
printf a >"$SUB/k" && chmod 6777 "$SUB/k"
assert_errno EPERM "another user's chmod u-s of root's file is still EPERM" "${U1[@]}" chmod u-s "$F/k"
assert_errno EPERM "another user's chmod 0777 of root's file is still EPERM" "${U1[@]}" chmod 0777 "$F/k"
assert_eq 6777 "$(mode "$SUB/k")" "the refused chmods changed nothing"
chmod 6755 "$SUB/k"
assert_errno EACCES "a user who may not write the file clears nothing" "${U1[@]}" bash -c 'printf b >>"$1"' _ "$F/k"
assert_eq 6755 "$(mode "$SUB/k")" "the bits of a file she may not write stay"

# --------------------------------------------- 2. opendir without search

for m in 600 444; do
	rm -rf "$SUB/d$m"
	mkdir "$SUB/d$m" && : >"$SUB/d$m/entry" && chown 65534:65534 "$SUB/d$m" && chmod "$m" "$SUB/d$m"
	real=$(as 65534 65534 ls "$SUB/d$m" 2>&1)
	via=$(as 65534 65534 ls "$F/d$m" 2>&1)
	assert_eq "entry" "$via" "her ls of her $m directory lists it"
	assert_eq "$real" "$via" "her ls of her $m directory is ext4's"
done
assert_errno EACCES "another user cannot list a 0600 directory not hers" "${U2[@]}" ls "$F/d600"
mkdir -m 700 "$SUB/closed"
assert_errno EACCES "another user cannot list root's 0700 directory" "${U1[@]}" ls "$F/closed"

# --------------------------------------------- 3. devices

grep " $MNT " /proc/self/mountinfo | grep -q nodev
assert_eq 0 "$?" "the mount is nodev"
check "root: mknod c 1 3" mknod "$F/null" c 1 3
check "root: mknod b 7 0" mknod "$F/loop" b 7 0
check "root: mknod c 0 0 (a whiteout)" mknod "$F/wh" c 0 0
assert_eq "1:3 7:0 0:0" "$(stat -c '%t:%T' "$SUB/null" "$SUB/loop" "$SUB/wh" | tr '\n' ' ' | sed 's/ $//')" \
	"the real devices have their numbers"
assert_eq "character special file" "$(fs stat -c %F "$F/wh")" "the whiteout is a char device through files/"
assert_errno EACCES "a char device is not opened through files/" bash -c 'echo x >"$1"' _ "$F/null"
assert_errno EACCES "a block device is not opened through files/" head -c 1 "$F/loop"
for spec in "c 1 3" "b 7 0" "c 0 0"; do
	n=u${spec// /}
	read -r kind major minor <<<"$spec"
	as 65534 65534 mknod "$SUB/r$n" "$kind" "$major" "$minor" >/dev/null 2>&1
	real=$?
	as 65534 65534 mknod "$F/$n" "$kind" "$major" "$minor" >"$SFS_TMP/mk.err" 2>&1
	assert_eq "$real" "$?" "another user's mknod $spec: as on ext4 ($real) $(head -c 80 "$SFS_TMP/mk.err")"
done
assert_errno EPERM "another user's mknod of a device is EPERM" "${U1[@]}" mknod "$F/u2" c 1 3

# --------------------------------------------- 4. xattrs and ACLs

# the tree first: its answer must not end xattrs for the whole mount
if have getfattr; then
	assert_errno "No such attribute" "getfattr on the tree: no such attribute" getfattr -n user.x "$MNT/health"
	assert_eq "" "$(fs getfattr -d -m - "$MNT/health" 2>/dev/null)" "the tree lists no attributes"
	printf v >"$SUB/x"
	check "setfattr user.a" setfattr -n user.a -v one "$F/x"
	assert_eq one "$(getfattr --only-values -n user.a "$SUB/x" 2>/dev/null)" "user.a is on the real file"
	assert_eq one "$(fs getfattr --only-values -n user.a "$F/x" 2>/dev/null)" "getfattr reads it through files/"
	setfattr -n user.b -v two "$SUB/x"
	assert_eq "user.a user.b" "$(fs getfattr -d -m 'user\.' "$F/x" 2>/dev/null | sed -n 's/=.*//p' | sort | tr '\n' ' ' | sed 's/ $//')" \
		"listxattr names both"
	check "setfattr -x user.b" setfattr -x user.b "$F/x"
	assert_errno "No such attribute" "user.b is gone" getfattr -n user.b "$SUB/x"
	check "root sets trusted.t" setfattr -n trusted.t -v 1 "$F/x"
	ln -s x "$SUB/sl"
	check "root sets trusted.l on a symlink itself (-h)" setfattr -h -n trusted.l -v 1 "$F/sl"
	assert_eq 1 "$(getfattr -h --only-values -n trusted.l "$SUB/sl" 2>/dev/null)" "the symlink has it, not its target"
	printf m >"$SUB/hers" && chown 65534:65534 "$SUB/hers"
	for name in trusted.x security.capability; do
		as 65534 65534 setfattr -n "$name" -v 1 "$SUB/hers" >/dev/null 2>&1
		real=$?
		as 65534 65534 setfattr -n "$name" -v 1 "$F/hers" >/dev/null 2>&1
		assert_eq "$real" "$?" "another user's setfattr $name on her own file: as on ext4 ($real)"
	done
	assert_errno EPERM "another user cannot set trusted.* through the daemon" "${U1[@]}" setfattr -n trusted.x -v 1 "$F/hers"
	assert_eq "" "$(as 65534 65534 getfattr -d -m - "$F/x" 2>/dev/null | grep trusted)" "another user does not see trusted.*"
	check "another user sets user.* on her own file" "${U1[@]}" setfattr -n user.h -v 1 "$F/hers"
	assert_errno EACCES "another user cannot set user.* on root's 644 file" "${U1[@]}" setfattr -n user.h -v 1 "$F/x"
else
	note "getfattr missing (package attr): xattr checks skipped"
fi
if have setfacl; then
	printf secret >"$SUB/acl" && chmod 600 "$SUB/acl"
	assert_errno EACCES "without an ACL another user cannot read a 0600 file" "${U1[@]}" cat "$F/acl"
	check "setfacl -m u:65534:r through files/" setfacl -m u:65534:r "$F/acl"
	assert_true "the real file has the ACL" "$(getfacl -c "$SUB/acl" 2>&1 | tr '\n' ' ')" \
		grep -qx 'user:65534:r--' <(getfacl -nc "$SUB/acl" 2>/dev/null)
	assert_eq secret "$(as 65534 65534 cat "$F/acl" 2>&1)" "the ACL lets 65534 read it through files/"
	assert_errno EACCES "the ACL does not let 65533 read it" "${U2[@]}" cat "$F/acl"
	assert_true "getfacl through files/ shows the entry" "getfacl failed" \
		grep -qx 'user:65534:r--' <(fs getfacl -nc "$F/acl" 2>/dev/null)
	check "setfacl -b" setfacl -b "$F/acl"
	assert_errno EACCES "without it, 65534 cannot read again" "${U1[@]}" cat "$F/acl"
	setfacl -m u:65534:r "$SUB/acl"
	# what a creation below a directory with a default ACL, and below
	# one without, gets: the default ACL wins over the umask, as on ext4
	for dacl in yes no; do
		rm -rf "$SUB/dacl"
		mkdir -m 777 "$SUB/dacl"
		[ $dacl = yes ] && setfacl -d -m u::rwx,g::rwx,o::rwx "$SUB/dacl"
		for d in "$SUB" "$F"; do
			as 65534 65534 bash -c 'umask 027; echo >"$1/f"; mkdir "$1/d"; mkfifo "$1/p"' _ "$d/dacl"
			got=$(stat -c %A "$SUB/dacl/f" "$SUB/dacl/d" "$SUB/dacl/p" 2>&1 | tr '\n' ' ')
			rm -rf "$SUB/dacl/f" "$SUB/dacl/d" "$SUB/dacl/p"
			[ "$d" = "$SUB" ] && real=$got || via=$got
		done
		assert_eq "$real" "$via" "modes made with umask 027 (default ACL: $dacl) are ext4's: $real"
	done
else
	note "setfacl missing (package acl): ACL checks skipped"
fi
if have setcap && have getcap; then
	cp /bin/true "$SUB/prog"
	check "root: setcap cap_net_raw+ep through files/" setcap cap_net_raw+ep "$F/prog"
	assert_true "the real file has the capability" "$(getcap "$SUB/prog")" grep -q cap_net_raw <(getcap "$SUB/prog")
	cp /bin/true "$SUB/hprog" && chown 65534:65534 "$SUB/hprog"
	assert_fails "another user cannot setcap her own file" "${U1[@]}" setcap cap_net_raw+ep "$F/hprog"
	assert_eq "" "$(getcap "$SUB/hprog")" "her file has no capability"
else
	note "setcap missing (package libcap2-bin): skipped"
fi
if have getfattr; then
	mkdir "$SUB/cpa"
	check "cp -a of files with xattrs and an ACL" cp -a "$F/x" "$F/acl" "$F/cpa/"
	assert_eq one "$(getfattr --only-values -n user.a "$SUB/cpa/x" 2>/dev/null)" "cp -a kept user.a"
	have getfacl && assert_true "cp -a kept the ACL" "$(getfacl -nc "$SUB/cpa/acl" 2>&1 | tr '\n' ' ')" \
		grep -qx 'user:65534:r--' <(getfacl -nc "$SUB/cpa/acl" 2>/dev/null)
	mkdir "$SUB/tarin" "$SUB/tarout"
	printf t >"$SUB/tarin/f" && setfattr -n user.t -v tarred "$SUB/tarin/f"
	check "tar --xattrs -c from files/" tar --xattrs --xattrs-include='user.*' -C "$F/tarin" -cf "$SFS_TMP/x.tar" f
	check "tar --xattrs -x into files/" tar --xattrs --xattrs-include='user.*' -C "$F/tarout" -xf "$SFS_TMP/x.tar"
	assert_eq tarred "$(getfattr --only-values -n user.t "$SUB/tarout/f" 2>/dev/null)" "tar kept user.t both ways"
	if have rsync; then
		check "rsync -aXA within files/" rsync -aXA "$F/tarin/" "$F/rs/"
		assert_eq tarred "$(getfattr --only-values -n user.t "$SUB/rs/f" 2>/dev/null)" "rsync -X kept user.t"
	else
		note "rsync missing: skipped"
	fi
fi

# --------------------------------------------- 5. flags, O_TMPFILE, locks

if have lsattr && have chattr; then
	printf i >"$SUB/imm"
	check "root: chattr +i through files/" chattr +i "$F/imm"
	assert_true "the real file is immutable" "$(lsattr "$SUB/imm" 2>&1)" grep -q -- '^----i' <(lsattr "$SUB/imm" 2>/dev/null)
	assert_true "lsattr through files/ shows it" "$(fs lsattr "$F/imm" 2>&1)" grep -q -- '^----i' <(fs lsattr "$F/imm" 2>/dev/null)
	assert_errno EPERM "an immutable file cannot be written" bash -c 'echo x >>"$1"' _ "$F/imm"
	check "root: chattr -i" chattr -i "$F/imm"
	check "lsattr -d of a directory through files/" lsattr -d "$F/cpa"
	as 65534 65534 chattr +i "$SUB/hers" >/dev/null 2>&1
	real=$?
	as 65534 65534 chattr +i "$F/hers" >/dev/null 2>&1
	assert_eq "$real" "$?" "another user's chattr +i of her own file: as on ext4 ($real)"
	assert_errno EPERM "another user's chattr +i is EPERM (no CAP_LINUX_IMMUTABLE lent)" "${U1[@]}" chattr +i "$F/hers"
	chattr -i "$SUB/hers" 2>/dev/null
else
	note "lsattr/chattr missing: skipped"
fi
tmpf=$(fs python3 -c 'import errno,os,sys
try:
    os.close(os.open(sys.argv[1], os.O_TMPFILE | os.O_RDWR, 0o600))
    print("made")
except OSError as e:
    print("EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else errno.errorcode[e.errno])' "$F")
assert_eq EOPNOTSUPP "$tmpf" "O_TMPFILE in files/ is EOPNOTSUPP (libfuse 3.14 has no tmpfile)"
if have flock; then
	printf l >"$SUB/lock"
	flock -o -x "$F/lock" sleep 30 &
	holder=$!
	SFS_BG_PIDS+=("$holder")
	sfs_until 10 bash -c '! flock -n -x "$1" true' _ "$F/lock"
	assert_fails "a flock through files/ excludes another through files/" flock -n -x "$F/lock" true
	check "the backing file is not locked by it (locks are the mount's own)" flock -n -x "$SUB/lock" true
	sfs_kill_tree "$holder"
	wait "$holder" 2>/dev/null
fi
check "the daemon still answers" test -d "$MNT/sessions"

sfs_done
