#!/usr/bin/env bash
# t83_watches: watches/ (issue 23 item 1). The workspace is a tmpfs of
# its own (only this test's changes reach fanotify's queue). mkdir and
# rmdir of a watch, its rows and modes; spec's refusals (absolute, "..",
# an unknown key or kind, a path that is no directory), each EINVAL with
# a line in error and the log, and EBUSY after the first read of events;
# create, modify, attrib, close_write and delete through files/, in the
# workspace directly, and from a session's command; a git clone of 1,000
# files: every file's create is there and is its path's first event; a
# move within the tree, one out of it (delete) and one into it (create);
# include and exclude; recursive 0; a read at an offset after more
# events; O_NONBLOCK (EAGAIN) and poll(2); SIGINT of a blocked reader;
# rmdir ends a blocked reader with the end of the file; an upgrade in
# place keeps a watch, its spec, its events and a reader blocked on it;
# another user
# (allow_other) neither lists nor opens root's watch, and her own watch
# has nothing of a 0700 directory of root's but what she may read.
# shellcheck disable=SC2016
SFS_T=${SFS_T:-20}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

FS=$SFS_TMP/fs # the tmpfs: the workspace and a directory beside it
WS=$FS/ws
OUT=$FS/out
sfs_tmpfs "$FS" 512m
mkdir -p "$WS" "$OUT" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t83.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t83.conf
sfs_start_mount mount -o allow_other || { SFS_DONE=1; exit 1; }
W=$MNT/watches
S=$MNT/sessions/default
OTHER=64183 # a uid with no account: setpriv makes her

# wev.py MODE FILE ...: see each mode
cat >"$SFS_TMP/wev.py" <<'EOF'
import errno, json, os, select, signal, sys, time
mode, path = sys.argv[1], sys.argv[2]
def alarm(*a):
    raise TimeoutError()
signal.signal(signal.SIGALRM, alarm)
if mode == "wait":
    # wait FILE OFF SECS TYPE:PATH...: reads from OFF until each pair is
    # seen; prints every line read; 0 when all were
    off, secs, want = int(sys.argv[3]), int(sys.argv[4]), set(sys.argv[5:])
    fd = os.open(path, os.O_RDONLY)
    signal.alarm(secs)
    buf = b""
    try:
        while want:
            b = os.pread(fd, 1 << 20, off)
            off += len(b)
            buf += b
            if not b:
                break # the end of the file: the watch ended
            *lines, rest = buf.split(b"\n")
            buf = rest
            for l in lines:
                print(l.decode())
                e = json.loads(l)
                want.discard("%s:%s" % (e["type"], e.get("path", "")))
    except TimeoutError:
        pass
    for w in sorted(want):
        print("MISSING " + w, file=sys.stderr)
    sys.exit(1 if want else 0)
if mode == "at":
    # at FILE OFF: one read at OFF, its first line
    fd = os.open(path, os.O_RDONLY)
    signal.alarm(20)
    print(os.pread(fd, 1 << 16, int(sys.argv[3])).decode().split("\n")[0])
if mode == "nb":
    # nb FILE: an O_NONBLOCK read at the end: its errno's name
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.pread(fd, 4096, os.fstat(fd).st_size)
        print("read")
    except OSError as e:
        print(errno.errorcode[e.errno])
if mode == "poll":
    # poll FILE MS [TOUCH]: reads to the end, polls MS ms (after creating
    # TOUCH, if given, 200 ms into the poll): the number ready
    fd = os.open(path, os.O_RDONLY)
    end = os.fstat(fd).st_size
    if end:
        os.pread(fd, 1, end - 1) # poll's cursor: the end of this read
    if len(sys.argv) > 4 and os.fork() == 0:
        time.sleep(0.2)
        open(sys.argv[4], "w").close()
        os._exit(0)
    p = select.poll()
    p.register(fd, select.POLLIN)
    print(len(p.poll(int(sys.argv[3]))))
if mode == "block":
    # block FILE: a read at the end; EINTR, or what it read
    fd = os.open(path, os.O_RDONLY)
    def intr(*a):
        raise InterruptedError()
    signal.signal(signal.SIGINT, intr)
    print("waiting", flush=True)
    try:
        b = os.pread(fd, 4096, os.fstat(fd).st_size)
        print("eof" if not b else "data")
    except InterruptedError:
        print("EINTR")
EOF
wev() { timeout -k 2 40 python3 "$SFS_TMP/wev.py" "$@"; }
# seen LABEL WATCH OFF TYPE:PATH...: every pair is in WATCH's events
# after OFF (the lines in $SFS_TMP/ev.out)
seen() {
	local label=$1 w=$2 off=$3
	shift 3
	if wev wait "$w/events" "$off" 20 "$@" >"$SFS_TMP/ev.out" 2>"$SFS_TMP/ev.err"; then
		pass "$label"
	else
		fail "$label" "$(tr '\n' ' ' <"$SFS_TMP/ev.err")"
	fi
}
# lacks LABEL PATTERN: no line of $SFS_TMP/ev.out matches
lacks() {
	if grep -q -e "$2" "$SFS_TMP/ev.out"; then
		fail "$1" "$(grep -m1 -e "$2" "$SFS_TMP/ev.out")"
	else
		pass "$1"
	fi
}
size_of() { stat -c %s "$1"; }

# ------------------------------------------------------------ mkdir, rmdir
check "mkdir watches/a" sfs_mkdir "$W/a"
assert_eq "error events spec" "$(ls "$W/a" | tr '\n' ' ' | sed 's/ $//')" "a watch holds spec, events and error"
assert_eq "700 0 0" "$(stat -c '%a %u %g' "$W/a")" "a watch is its maker's, mode 0700"
assert_eq "a" "$(ls "$W")" "watches/ lists it"
assert_errno EEXIST "a second mkdir of the name: EEXIST" mkdir "$W/a"
assert_errno EINVAL "a bad name: EINVAL" mkdir "$W/.hidden"
check "mkdir watches/gone" sfs_mkdir "$W/gone"
check "rmdir watches/gone" rmdir "$W/gone"
assert_true "rmdir removes it" "still there" test ! -e "$W/gone"

# ------------------------------------------------------------ spec errors
mkdir -p "$WS/sub/deep" && echo x >"$WS/afile"
refused() { # LABEL TEXT WORD: EINVAL, WORD in error and in the log
	assert_write_errno EINVAL "spec $1: EINVAL" "$W/a/spec" "$2"
	assert_file_match "$W/a/error" "$3" "spec $1: its reason in error"
	assert_true "spec $1: its reason in the log" "$(tail -n 2 "$SFS_TMP/daemon.log")" \
		grep -q "watches/a/spec: .*$3" "$SFS_TMP/daemon.log"
}
refused "absolute path" $'path /etc\n' "absolute"
refused "'..'" $'path sub/../..\n' "'\.\.'"
refused "unknown key" $'colour blue\n' "is not path P"
refused "unknown kind" $'events create explode\n' "'explode' is not one of"
refused "recursive 2" $'recursive 2\n' "recursive 2"
refused "missing path" $'path nothere\n' "No such file"
refused "a file as path" $'path afile\n' "Not a directory"
check "a good spec is taken" sfs_write "$W/a/spec" $'path .\nexclude .git\n'
assert_file_eq "$W/a/error" "" "a good spec clears error"
assert_file_match "$W/a/spec" "exclude .git" "spec reads back"

# ------------------------------------------------------------ kinds of events
echo one >"$MNT/files/viafuse"
echo more >>"$MNT/files/viafuse"
chmod 600 "$MNT/files/viafuse"
rm "$MNT/files/viafuse"
seen "through files/: create modify attrib close_write delete" "$W/a" 0 \
	create:viafuse modify:viafuse attrib:viafuse close_write:viafuse delete:viafuse
assert_errno EBUSY "spec after the first read of events: EBUSY" \
	bash -c 'printf "path sub\n" >"$1"' _ "$W/a/spec"
N=$(size_of "$W/a/events")
echo one >"$WS/direct"
touch -d @1000000 "$WS/direct"
mkdir "$WS/ddir"
rm "$WS/direct"
seen "in the workspace directly" "$W/a" "$N" \
	create:direct close_write:direct attrib:direct delete:direct create:ddir
assert_true "a directory's create says isDir" "$(cat "$SFS_TMP/ev.out")" \
	grep -q '"type":"create","path":"ddir","isDir":true' "$SFS_TMP/ev.out"
assert_true "time is ms since the epoch" "$(head -1 "$SFS_TMP/ev.out")" \
	grep -qE '"time":1[0-9]{12}\}$' "$SFS_TMP/ev.out"
N=$(size_of "$W/a/events")
assert_run_ok "a session's command writes in the workspace" "$S" "echo x >$(sfs_q "$WS/sub/bycmd"); mv $(sfs_q "$WS/sub/bycmd") $(sfs_q "$WS/sub/moved")"
seen "from a session's command: create, and a move within" "$W/a" "$N" create:sub/bycmd move:sub/moved
assert_true "the move names where from" "$(grep move "$SFS_TMP/ev.out")" \
	grep -q '"type":"move","path":"sub/moved","from":"sub/bycmd"' "$SFS_TMP/ev.out"
N=$(size_of "$W/a/events")
mv "$WS/sub/moved" "$OUT/moved"
mv "$OUT/moved" "$WS/back"
seen "a move out is a delete, a move in a create" "$W/a" "$N" delete:sub/moved create:back

# ------------------------------------------------------------ seek
N=$(size_of "$W/a/events")
echo s >"$WS/after_n"
seen "more events after offset N" "$W/a" "$N" close_write:after_n
assert_true "a read at N gives the first event after N" "$(wev at "$W/a/events" "$N")" \
	bash -c '[[ $(python3 "$1" at "$2" "$3") == *'"'"'"create","path":"after_n"'"'"'* ]]' _ "$SFS_TMP/wev.py" "$W/a/events" "$N"

# ------------------------------------------------------------ O_NONBLOCK, poll, SIGINT
assert_eq EAGAIN "$(wev nb "$W/a/events")" "O_NONBLOCK at the end: EAGAIN"
assert_eq 0 "$(wev poll "$W/a/events" 300)" "poll at the end: not readable"
assert_eq 1 "$(wev poll "$W/a/events" 15000 "$WS/polled")" "poll: readable once something changes"
: >"$SFS_TMP/block.out"
python3 "$SFS_TMP/wev.py" block "$W/a/events" >"$SFS_TMP/block.out" 2>&1 &
BP=$!
SFS_BG_PIDS+=("$BP")
sfs_until 10 grep -q waiting "$SFS_TMP/block.out"
sleep 0.3 # the read itself is asked
kill -INT "$BP"
sfs_until 10 bash -c '! kill -0 '"$BP"' 2>/dev/null'
assert_eq EINTR "$(grep -v waiting "$SFS_TMP/block.out")" "SIGINT of a blocked reader: EINTR"

# ------------------------------------------------------------ git clone of 1,000 files
if command -v git >/dev/null; then
	REPO=$SFS_TMP/repo
	mkdir -p "$REPO"
	(cd "$REPO" && git init -q && for d in $(seq 0 9); do mkdir "d$d"; for f in $(seq 0 99); do echo "$d $f" >"d$d/f$f"; done; done &&
		git add -A && git -c user.email=t@t -c user.name=t commit -qm x) >/dev/null 2>&1
	N=$(size_of "$W/a/events")
	want=()
	for d in $(seq 0 9); do for f in $(seq 0 99); do want+=("create:clone/d$d/f$f"); done; done
	check "git clone into the workspace" timeout 60 git clone -q "$REPO" "$WS/clone"
	seen "the clone: every one of the 1,000 creates" "$W/a" "$N" "${want[@]}"
	assert_true "the clone: each file's first event is its create" "$(cat "$SFS_TMP/ev.err")" \
		python3 -c '
import json, sys
first = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    first.setdefault(e.get("path"), e["type"])
bad = [p for p, t in first.items() if p.startswith("clone/d") and t != "create"]
sys.exit(1 if bad else 0)' "$SFS_TMP/ev.out"
	lacks "exclude .git drops the clone's .git" '"path":"clone/.git'
	assert_true "no overflow" "overflowed" bash -c '! grep -q overflow "$1"' _ "$SFS_TMP/ev.out"
else
	pass "skip: git is not installed"
fi

# ------------------------------------------------------------ include, exclude, recursive 0
check "mkdir watches/c" sfs_mkdir "$W/c"
check "spec: include, exclude" sfs_write "$W/c/spec" $'include *.c\nexclude skip*\nevents create\n'
check "mkdir watches/flat" sfs_mkdir "$W/flat"
check "spec: path sub, recursive 0" sfs_write "$W/flat/spec" $'path sub\nrecursive 0\n'
touch "$WS/sub/x.c" "$WS/sub/x.h" "$WS/sub/skip.c" "$WS/sub/deep/y.c" "$WS/sub/zz.c" "$WS/outside.c"
seen "include *.c: its files" "$W/c" 0 create:sub/x.c create:sub/deep/y.c create:sub/zz.c create:outside.c
lacks "include *.c: not x.h" '"path":"sub/x.h"'
lacks "exclude skip*: not skip.c" 'skip.c'
lacks "events create: only creates" '"type":"[^c]'
seen "recursive 0: the entries of sub" "$W/flat" 0 create:sub/x.c create:sub/zz.c
lacks "recursive 0: nothing deeper" 'deep/'
lacks "path sub: nothing outside it" 'outside.c'

# ------------------------------------------------------------ rmdir ends a reader
: >"$SFS_TMP/rm.out"
python3 "$SFS_TMP/wev.py" block "$W/c/events" >"$SFS_TMP/rm.out" 2>&1 &
RP=$!
SFS_BG_PIDS+=("$RP")
sfs_until 10 grep -q waiting "$SFS_TMP/rm.out"
sleep 0.3
check "rmdir watches/c" rmdir "$W/c"
sfs_until 10 bash -c '! kill -0 '"$RP"' 2>/dev/null'
assert_eq eof "$(grep -v waiting "$SFS_TMP/rm.out")" "rmdir: a blocked reader gets the end of the file"

# ------------------------------------------------------------ upgrade in place
check "mkdir watches/up" sfs_mkdir "$W/up"
check "spec of watches/up" sfs_write "$W/up/spec" $'path sub\nexclude *.tmp\n'
echo 1 >"$WS/sub/pre_upgrade"
seen "watches/up: its first event" "$W/up" 0 close_write:sub/pre_upgrade
N=$(size_of "$W/up/events")
python3 "$SFS_TMP/wev.py" wait "$W/up/events" "$N" 40 create:sub/post_upgrade >"$SFS_TMP/up.out" 2>&1 &
UP=$!
SFS_BG_PIDS+=("$UP")
sleep 0.5 # its read is asked before the upgrade
check "upgrade in place" sfs_write "$MNT/ctl" upgrade
echo 2 >"$WS/sub/post_upgrade.tmp"
echo 3 >"$WS/sub/post_upgrade"
sfs_until 20 bash -c '! kill -0 '"$UP"' 2>/dev/null'
wait "$UP"
assert_eq 0 "$?" "a reader blocked across the upgrade gets the event after it"
assert_file_match "$W/up/spec" "exclude \*.tmp" "the spec is kept by the upgrade"
seen "the events before the upgrade are kept, at their offsets" "$W/up" 0 close_write:sub/pre_upgrade create:sub/post_upgrade
lacks "the kept spec still excludes" 'post_upgrade.tmp'
assert_errno EBUSY "spec is still fixed after the upgrade" \
	bash -c 'printf "path .\n" >"$1"' _ "$W/up/spec"
check "rmdir watches/up after the upgrade" rmdir "$W/up"

# ------------------------------------------------------------ another user
AS_OTHER=(setpriv --reuid="$OTHER" --regid="$OTHER" --clear-groups)
as_other() { timeout -k 2 "$SFS_T" "${AS_OTHER[@]}" "$@"; }
assert_eq "" "$(as_other ls "$W" | grep -x a)" "another user does not list root's watch"
assert_errno EACCES "another user cannot open root's events" "${AS_OTHER[@]}" cat "$W/a/events"
assert_errno EACCES "another user cannot write root's spec" "${AS_OTHER[@]}" bash -c 'echo "path ." >"$1"' _ "$W/a/spec"
assert_errno EACCES "another user cannot rmdir root's watch" "${AS_OTHER[@]}" rmdir "$W/a"
check "another user makes her own watch" as_other mkdir "$W/hers"
assert_eq "$OTHER" "$(stat -c %u "$W/hers")" "her watch is hers"
assert_eq "hers" "$(as_other ls "$W")" "she lists her watch only"
# a listing of hers that does not start at 0 (seekdir, a reader in
# chunks), right after root listed watches/: never root's listing
ls -a "$W" >/dev/null
# (the script on stdin: the checkout may be a directory she cannot enter)
assert_eq "hers" "$(as_other /usr/bin/python3 - "$W" 2 <"$(dirname "$0")/helpers/lsoff.py")" \
	"she lists her watch only from offset 2, after root listed watches/"
mkdir -m 0700 "$WS/private"
assert_errno EINVAL "her spec of root's 0700 directory: EINVAL" \
	"${AS_OTHER[@]}" bash -c 'echo "path private" >"$1"' _ "$W/hers/spec"
assert_file_match "$W/hers/error" "Permission denied" "her refused spec says why"
echo secret >"$WS/private/root_only"
echo public >"$WS/sub/public"
echo marker >"$WS/marker"
seen "her watch sees what she may read" "$W/hers" 0 create:sub/public create:marker
lacks "her watch has nothing of a 0700 directory of root's" 'root_only'
check "rmdir of her watch" as_other rmdir "$W/hers"

sfs_done
