#!/usr/bin/env bash
# t30_files: files/, the workspace passed through: create, write, read,
# append, truncate, chmod, chown, times, mkdir, rmdir, unlink, rename
# (across directories), symlinks, hard links, fifos, sockets, devices (not
# opened), fallocate, fsync, `ls -la`, large directories, a 3 MiB binary
# round trip; what a session does is seen through files/ at once and the
# other way round; nothing outside the workspace is reachable through
# files/; with allow_other, another user gets the real files' permissions.
#
# The daemon's workspace is a directory of this test, set in a
# configuration file ($SESSIONFS_CONFIG, conf/conf.c) and as $HOME (the
# default when there is no /workspace); the checks work in a scratch
# directory of it.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

WS=$SFS_TMP/ws
mkdir -p "$WS" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t30.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t30.conf HOME=$WS
SUB=$(mktemp -d "$WS/sfs-t30.XXXXXX") || {
	fail setup "mktemp in $WS failed"
	exit 1
}
chmod 755 "$SUB"
NAME=$(basename "$SUB")
SFS_REAL_BIN=$SFS_BIN

sfs_mount

F=$MNT/files/$NAME # the scratch directory, seen through the mount
S=$MNT/sessions/default
T=10 # timeout (s) of one file operation

# fs CMD...: run CMD under a timeout (for checks on the mount)
fs() { timeout -k 2 "$T" "$@"; }

# real_is PATH TEXT MSG: the real file (not through the mount) holds TEXT
real_is() {
	local got
	got=$(cat "$1" 2>&1; printf x)
	assert_eq "$2" "${got%x}" "$3"
}

# ------------------------------------------------------------- the basics

check "files/ is a directory" test -d "$MNT/files"
check "ls -la files/" ls -la "$MNT/files"
ls_f=$(fs ls -a "$MNT/files")
assert_true "files/ lists the workspace" "ls gave: $(echo "$ls_f" | tr '\n' ' ')" \
	grep -qxF -- "$NAME" <<<"$ls_f"
check "files/ is the workspace, not its parent" test ! -e "$MNT/files/t30.conf"
assert_eq "$(stat -c %a "$WS")" "$(fs stat -c %a "$MNT/files")" \
	"files/ has the workspace's mode"

# create, write, read
if sfs_write "$F/a.txt" $'hello\n' "$T"; then pass "create and write a.txt"; else
	fail "create and write a.txt" "$(head -c 200 "$SFS_TMP/write.err")"
fi
assert_file_eq "$F/a.txt" $'hello\n' "a.txt reads back"
real_is "$SUB/a.txt" $'hello\n' "the real a.txt holds what was written"
assert_eq 6 "$(fs stat -c %s "$F/a.txt")" "stat size of a.txt is 6"
check "a.txt is a regular file" test -f "$F/a.txt"

# append
check "append to a.txt" bash -c 'printf "more\n" >>"$1"' _ "$F/a.txt"
assert_file_eq "$F/a.txt" $'hello\nmore\n' "a.txt after the append"
assert_eq 11 "$(fs stat -c %s "$F/a.txt")" "stat size after the append is 11"

# overwrite with O_TRUNC, then truncate both ways
check "overwrite a.txt (O_TRUNC)" bash -c 'printf "0123456789" >"$1"' _ "$F/a.txt"
assert_file_eq "$F/a.txt" 0123456789 "a.txt after the overwrite"
check "truncate -s 4" truncate -s 4 "$F/a.txt"
assert_file_eq "$F/a.txt" 0123 "a.txt after truncate -s 4"
check "truncate -s 8" truncate -s 8 "$F/a.txt"
assert_file_printf "$F/a.txt" '0123\0\0\0\0' "truncate -s 8 extends with NULs"
assert_eq 8 "$(stat -c %s "$SUB/a.txt")" "the real a.txt has size 8"
check "ftruncate of an open file" perl -e '
open(my $f, "+<", $ARGV[0]) or die "$!\n";
truncate($f, 2) or die "$!\n";' "$F/a.txt"
assert_file_eq "$F/a.txt" 01 "a.txt after ftruncate to 2"
check "write at an offset" perl -e '
open(my $f, "+<", $ARGV[0]) or die "$!\n";
sysseek($f, 4, 0) or die "$!\n";
syswrite($f, "xy") == 2 or die "$!\n";' "$F/a.txt"
assert_file_printf "$F/a.txt" '01\0\0xy' "pwrite at offset 4 leaves a hole of NULs"
check "empty a.txt with : >" bash -c ': >"$1"' _ "$F/a.txt"
assert_eq 0 "$(fs stat -c %s "$F/a.txt")" "a.txt is empty"

# chmod, chown, times
check "chmod 640 a.txt" chmod 640 "$F/a.txt"
assert_eq 640 "$(fs stat -c %a "$F/a.txt")" "a.txt has mode 640 through files/"
assert_eq 640 "$(stat -c %a "$SUB/a.txt")" "the real a.txt has mode 640"
check "chmod 4755 a.txt" chmod 4755 "$F/a.txt"
assert_eq 4755 "$(stat -c %a "$SUB/a.txt")" "the real a.txt has mode 4755"
check "chmod 644 a.txt" chmod 644 "$F/a.txt"
check "chown 65534:65534 a.txt" chown 65534:65534 "$F/a.txt"
assert_eq 65534:65534 "$(stat -c %u:%g "$SUB/a.txt")" "the real a.txt is owned by 65534:65534"
assert_eq 65534:65534 "$(fs stat -c %u:%g "$F/a.txt")" "files/ shows the owner"
check "chown 0:0 a.txt" chown 0:0 "$F/a.txt"
check "touch -d sets the times" touch -d '2001-02-03 04:05:06 UTC' "$F/a.txt"
assert_eq 981173106 "$(stat -c %Y "$SUB/a.txt")" "the real mtime is 2001-02-03 04:05:06"
assert_eq 981173106 "$(fs stat -c %X "$F/a.txt")" "files/ shows the atime"
check "touch -m sets mtime to now" touch -m "$F/a.txt"
now=$(date +%s)
m=$(stat -c %Y "$SUB/a.txt")
assert_true "mtime is now" "mtime $m, now $now" test $((now - m)) -lt 10

# mkdir, rmdir, unlink
check "mkdir d1" mkdir "$F/d1"
check "the real d1 is a directory" test -d "$SUB/d1"
check "mkdir -m 700 d0" mkdir -m 700 "$F/d0"
assert_eq 700 "$(stat -c %a "$SUB/d0")" "mkdir -m 700 gives mode 700"
check "mkdir -p d2/x/y" mkdir -p "$F/d2/x/y"
check "the real d2/x/y is a directory" test -d "$SUB/d2/x/y"
assert_errno EEXIST "mkdir of an existing directory gives EEXIST" mkdir "$F/d1"
check "rmdir d0" rmdir "$F/d0"
check "d0 is gone from the workspace" test ! -e "$SUB/d0"
assert_errno "Directory not empty" "rmdir of a non-empty directory fails" rmdir "$F/d2/x"
check "create d1/gone" bash -c 'echo x >"$1"' _ "$F/d1/gone"
check "rm d1/gone" rm "$F/d1/gone"
check "d1/gone is gone from the workspace" test ! -e "$SUB/d1/gone"
assert_errno ENOENT "reading a removed file gives ENOENT" cat "$F/d1/gone"
assert_errno ENOENT "rm of a missing file gives ENOENT" rm "$F/nothing"
assert_errno ENOTDIR "a file used as a directory gives ENOTDIR" ls "$F/a.txt/x"

# a 3 MiB binary round trip, then a rename across directories
head -c $((3 << 20)) /dev/urandom >"$SFS_TMP/bin"
check "copy 3 MiB of random bytes into d1/" cp "$SFS_TMP/bin" "$F/d1/bin"
check "the real d1/bin has the same bytes" cmp "$SFS_TMP/bin" "$SUB/d1/bin"
assert_file_same "$F/d1/bin" "$SFS_TMP/bin" "d1/bin reads back byte for byte"
assert_eq $((3 << 20)) "$(fs stat -c %s "$F/d1/bin")" "stat size of d1/bin is 3 MiB"
check "mv d1/bin d2/x/moved" mv "$F/d1/bin" "$F/d2/x/moved"
check "d1/bin is gone" test ! -e "$F/d1/bin"
check "the real d1/bin is gone" test ! -e "$SUB/d1/bin"
check "the real d2/x/moved has the bytes" cmp "$SFS_TMP/bin" "$SUB/d2/x/moved"
assert_file_same "$F/d2/x/moved" "$SFS_TMP/bin" "d2/x/moved reads back byte for byte"
check "rename a directory" mv "$F/d2/x" "$F/d1/x2"
check "the moved directory's file is there" cmp "$SFS_TMP/bin" "$F/d1/x2/moved"
check "rename over an existing file" bash -c \
	'echo old >"$1/over" && echo new >"$1/src" && mv "$1/src" "$1/over"' _ "$F"
assert_file_eq "$F/over" $'new\n' "rename replaced the target"
check "mv -T of a directory onto an empty one" bash -c \
	'mkdir "$1/e1" "$1/e2" && mv -T "$1/e1" "$1/e2"' _ "$F"
check "rename the other way round" mv "$F/d1/x2" "$F/d2/back"
assert_file_same "$F/d2/back/moved" "$SFS_TMP/bin" "d2/back/moved reads back"

# symlinks
check "ln -s a.txt sl" ln -s a.txt "$F/sl"
assert_eq a.txt "$(fs readlink "$F/sl")" "readlink sl gives a.txt"
assert_eq a.txt "$(readlink "$SUB/sl")" "the real sl is a symlink to a.txt"
check "write through the symlink" bash -c 'printf via >"$1"' _ "$F/sl"
assert_file_eq "$F/a.txt" via "the write went to a.txt"
check "sl is a symlink (test -L)" test -L "$F/sl"
check "ln -s d2/back dl" ln -s d2/back "$F/dl"
check "a symlink to a directory works" cmp "$SFS_TMP/bin" "$F/dl/moved"
check "rm of a symlink" rm "$F/dl"
check "the real dl is gone, d2/back stays" bash -c \
	'test ! -L "$1/dl" && test -d "$1/d2/back"' _ "$SUB"
check "ln -s to a missing target" ln -s nowhere "$F/dangling"
check "the dangling symlink is listed" test -L "$F/dangling"
assert_errno ENOENT "reading a dangling symlink gives ENOENT" cat "$F/dangling"
check "touch -h on a symlink" touch -h -d '2002-01-01 UTC' "$F/dangling"
assert_eq 1009843200 "$(stat -c %Y "$SUB/dangling")" "touch -h set the symlink's own mtime"

# hard links
check "ln a.txt hl" ln "$F/a.txt" "$F/hl"
assert_eq "$(fs stat -c %i "$F/a.txt")" "$(fs stat -c %i "$F/hl")" \
	"a.txt and hl have one inode number through files/"
assert_eq 2 "$(fs stat -c %h "$F/a.txt")" "a.txt has 2 links"
assert_eq "$(stat -c %i "$SUB/a.txt")" "$(stat -c %i "$SUB/hl")" \
	"the real a.txt and hl are one file"
check "write through hl" bash -c 'printf linked >"$1"' _ "$F/hl"
assert_file_eq "$F/a.txt" linked "a.txt shows what was written to hl"
check "rm hl" rm "$F/hl"
assert_eq 1 "$(fs stat -c %h "$F/a.txt")" "a.txt has 1 link again"
assert_errno EPERM "a hard link to a directory gives EPERM" perl -e \
	'link($ARGV[0], $ARGV[1]) or die "$!\n"' "$F/d1" "$F/d1link"

# fifos, mknod of other kinds, fallocate
check "mkfifo" mkfifo "$F/fifo"
check "the real fifo is a fifo" test -p "$SUB/fifo"
check "fifo is a fifo through files/" test -p "$F/fifo"
check "bind a unix socket" perl -MSocket -e '
socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die "$!\n";
bind($s, pack_sockaddr_un($ARGV[0])) or die "$!\n";' "$F/sock"
check "the real sock is a socket" test -S "$SUB/sock"
# root makes devices as on ext4 (t76 has the rest); the mount is nodev
check "mknod of a device by root" mknod "$F/null" c 1 3
assert_eq "c 1:3" "$(stat -c '%F' "$SUB/null" | cut -c1) $(stat -c '%t:%T' "$SUB/null")" "the real device is char 1:3"
assert_errno EACCES "a device is not opened through files/" bash -c 'echo x >"$1"' _ "$F/null"
check "fallocate -l 1M" fallocate -l 1M "$F/fa"
assert_eq 1048576 "$(fs stat -c %s "$F/fa")" "fallocate gave 1 MiB"
check "fsync and fdatasync of a file" bash -c \
	'printf synced | dd of="$1" conv=notrunc,fsync status=none &&
	printf synced | dd of="$1" conv=notrunc,fdatasync status=none' _ "$F/fa"
check "create with O_EXCL" perl -MFcntl -e '
sysopen(my $f, $ARGV[0], O_CREAT | O_EXCL | O_WRONLY, 0600) or die "$!\n";' "$F/excl"
assert_eq 600 "$(stat -c %a "$SUB/excl")" "O_CREAT mode 600 is kept"
assert_errno EEXIST "O_EXCL on an existing file gives EEXIST" perl -MFcntl -e '
sysopen(my $f, $ARGV[0], O_CREAT | O_EXCL | O_WRONLY, 0600) or die "$!\n";' "$F/excl"
check "umask 077 applies to a create" bash -c 'umask 077 && : >"$1"' _ "$F/masked"
assert_eq 600 "$(stat -c %a "$SUB/masked")" "a file created under umask 077 has mode 600"

# ls -la, stat sizes, and a directory that takes several readdir calls
ls_l=$(fs ls -la "$F")
for n in a.txt d1 d2 sl fifo fa over; do
	assert_true "ls -la lists $n" "ls -la gave: $(echo "$ls_l" | tr '\n' ' ')" \
		grep -qE -- " $n( -> .*)?\$" <<<"$ls_l"
done
assert_true "ls -la shows sl -> a.txt" "ls -la gave: $(echo "$ls_l" | tr '\n' ' ')" \
	grep -qE -- ' sl -> a\.txt$' <<<"$ls_l"
real_sizes=$(cd "$SUB" && stat -c '%n %s %F' -- * | sort)
fuse_sizes=$(cd "$F" && fs stat -c '%n %s %F' -- * | sort)
assert_eq "$real_sizes" "$fuse_sizes" "names, sizes and kinds match the real directory"
check "mkdir big" mkdir "$F/big"
for i in $(seq 1 600); do
	: >"$SUB/big/file-with-a-rather-long-name-to-fill-readdir-buffers-$i"
done
assert_eq 600 "$(fs ls "$F/big" | wc -l)" "ls of a 600-entry directory lists 600 names"
assert_eq 602 "$(fs ls -a "$F/big" | sort -u | wc -l)" "ls -a lists 602 distinct names"
assert_eq 600 "$(fs find "$F/big" -type f | wc -l)" "find lists the 600 files"
check "rm -rf big" rm -rf "$F/big"
check "the real big is gone" test ! -e "$SUB/big"

# ------------------------------------------------------- the session's view

assert_run_ok "session: pwd" "$S" "pwd"
assert_file_eq "$S/stdout" "$WS"$'\n' "the session's cwd is the workspace"
assert_run_ok "session: cat what files/ wrote" "$S" "cat '$NAME/a.txt'"
assert_file_eq "$S/stdout" linked "the session reads what was written through files/"
assert_run_ok "session: write s.txt" "$S" "printf 'from the session\n' >'$NAME/s.txt'"
assert_file_eq "$F/s.txt" $'from the session\n' "files/ reads what the session wrote"
# the same name, first read through files/, then replaced in the session
# (a new inode) and changed in place: no stale name, size or content
assert_file_eq "$F/s.txt" $'from the session\n' "s.txt read again"
assert_run_ok "session: replace s.txt (sed -i)" "$S" "sed -i 's/from/FROM/' '$NAME/s.txt'"
assert_file_eq "$F/s.txt" $'FROM the session\n' "files/ at once shows the replaced s.txt"
assert_run_ok "session: append to s.txt" "$S" "echo more >>'$NAME/s.txt'"
assert_file_eq "$F/s.txt" $'FROM the session\nmore\n' "files/ at once shows the longer s.txt"
assert_eq 22 "$(fs stat -c %s "$F/s.txt")" "stat size follows the session's append"
assert_run_ok "session: rm s.txt, mkdir s.txt" "$S" "rm '$NAME/s.txt'; mkdir '$NAME/s.txt'"
check "files/ at once shows s.txt as a directory" test -d "$F/s.txt"
assert_run_ok "session: ls what files/ made" "$S" "ls '$NAME/d2/back'"
assert_file_eq "$S/stdout" $'moved\ny\n' "the session lists d2/back"
assert_run_ok "session: cmp the binary" "$S" "cmp '$NAME/d2/back/moved' '$SFS_TMP/bin' && echo same"
assert_file_eq "$S/stdout" $'same\n' "the session sees the 3 MiB file whole"

# ------------------------------------------------------ nothing escapes

assert_eq "$(fs ls "$MNT")" "$(fs ls "$MNT/files/..")" "ls files/.. lists the mount root"
assert_eq "$(fs ls "$MNT")" "$(fs ls "$F/../..")" "ls files/SUB/../.. lists the mount root"
assert_eq 1 "$(fs stat -c %i "$F/d1/../../..")" "files/SUB/d1/../../.. is the mount root"
check "files/../README is the mount's README" cmp "$MNT/README" "$MNT/files/../README"
# a symlink that points out of the workspace is followed by the client's
# kernel against the mount, never by the daemon against the real tree
printf 'outside\n' >"$SFS_TMP/outside"
ln -s ../../outside "$SUB/out"
check "the real out reaches the file outside" test -f "$SUB/out"
assert_errno ENOENT "out through files/ does not reach the real parent" \
	cat "$F/out"
ln -s ../.. "$SUB/up"
assert_eq "$(fs ls "$MNT")" "$(fs ls "$F/up/")" "a symlink to ../.. ends at the mount root"
assert_errno ENOENT "a name that is not there is ENOENT" stat "$F/no such name"
check "a name with a backslash is just a name" bash -c 'echo x >"$1/a\\b" && test -f "$2/a\\b"' _ "$F" "$SUB"

# rename and link across files/ and the rest of the tree
assert_errno "Invalid cross-device link" "mv from files/ to sessions/ fails with EXDEV" \
	perl -e 'rename($ARGV[0], $ARGV[1]) or die "$!\n"' "$F/over" "$MNT/sessions/over"
assert_errno "Invalid cross-device link" "ln from files/ to sessions/ fails with EXDEV" \
	ln "$F/over" "$MNT/sessions/over"
check "files/ cannot be removed" bash -c '! rmdir "$1" 2>/dev/null' _ "$MNT/files"

# ----------------------------------------------- another user (allow_other)

sfs_umount
if ! command -v setpriv >/dev/null; then
	note "setpriv missing: allow_other checks skipped"
else
	wrap=$SFS_TMP/allow_other.sh
	printf '#!/bin/sh\nexec "%s" -o allow_other "$@"\n' "$SFS_REAL_BIN" >"$wrap"
	chmod 755 "$wrap"
	SFS_BIN=$wrap
	sfs_mount
	F=$MNT/files/$NAME
	# "${nobody[@]}" CMD...: CMD as uid/gid 65534 without groups
	nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	printf 'public\n' >"$SUB/pub" && chmod 644 "$SUB/pub"
	printf 'secret\n' >"$SUB/priv" && chmod 600 "$SUB/priv"
	mkdir -m 777 "$SUB/open"
	mkdir -m 700 "$SUB/closed" && : >"$SUB/closed/inside"
	if fs "${nobody[@]}" cat "$F/pub" >"$SFS_TMP/pub.out" 2>&1 && [ "$(<"$SFS_TMP/pub.out")" = public ]; then
		pass "another user reads a 644 file"
	else
		fail "another user reads a 644 file" "$(head -c 200 "$SFS_TMP/pub.out")"
	fi
	assert_errno EACCES "another user cannot read a 600 file" "${nobody[@]}" cat "$F/priv"
	assert_errno EACCES "another user cannot write a 644 file" "${nobody[@]}" bash -c 'echo x >>"$1"' _ "$F/pub"
	assert_errno EACCES "another user cannot create in a 755 directory" "${nobody[@]}" touch "$F/mine"
	assert_errno EACCES "another user cannot list a 700 directory" "${nobody[@]}" ls "$F/closed"
	assert_errno EACCES "another user cannot look into a 700 directory" "${nobody[@]}" stat "$F/closed/inside"
	assert_errno EPERM "another user cannot chmod root's file" "${nobody[@]}" chmod 666 "$F/pub"
	check "another user creates in a 777 directory" "${nobody[@]}" bash -c 'echo mine >"$1"' _ "$F/open/mine"
	assert_eq 65534:65534 "$(stat -c %u:%g "$SUB/open/mine" 2>&1)" "the file belongs to that user"
	check "another user chmods their own file" "${nobody[@]}" chmod 600 "$F/open/mine"
	assert_eq 600 "$(stat -c %a "$SUB/open/mine" 2>&1)" "their chmod applied"
	check "root still reads everything" cat "$F/priv" "$F/open/mine"
	check "the daemon is root again after another user's request" bash -c \
		'echo r >"$1/open/byroot" && [ "$(stat -c %u "$2/open/byroot")" = 0 ]' _ "$F" "$SUB"
fi

sfs_done
