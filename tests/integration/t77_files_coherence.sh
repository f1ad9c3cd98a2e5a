#!/usr/bin/env bash
# t77_files_coherence: files/ caches entries, negative entries,
# attributes, pages and listings (fs/files_watch.c), and what changes in
# the backing directory behind the kernel's back is seen through files/
# at once all the same: a write, an append, a truncation, a rename, an
# unlink, a creation (of a name files/ was asked for and did not have),
# mkdir, rmdir, chmod (file and directory), a hard link, a change to a
# file held open through files/, a write from a session's cmd, and the
# listings (cached: a second ls asks nothing) after a creation, unlink
# and rename in the backing directory or from a session's cmd, and at
# once after the same made through files/ itself. Each
# is made after files/ has cached the old state (read, stat or listed
# it), and is looked for through files/ until WINDOW_MS (1 s, far
# above the measured window: tests/bench/coherence.py) have passed; the
# time it took is noted. An open made at once after a change (100 of
# each kind, in the backing directory) is never of the old file. Last,
# a second stat of 1,000 files sends far
# fewer requests than the first (the metrics count them), and with
# files_cache = false nothing is cached (as many requests again).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# The workspace is a tmpfs of its own: fanotify marks a whole
# filesystem, and on a busy shared disk its queue may overflow, which
# empties the cache (correct, but not what the request count below
# looks for).
FS=$SFS_TMP/fs
WS=$FS/ws
FS_MOUNTED=
mkdir -p "$FS"
# shellcheck disable=SC2317
t77_cleanup() {
	local rc=$?
	[ -n "${OV_MOUNTED:-}" ] && timeout 10 umount -l "$SFS_TMP/ov/mnt"
	[ -n "$SFS_PID" ] && sfs_umount
	if [ -n "$FS_MOUNTED" ]; then
		timeout 10 umount "$FS" 2>/dev/null || timeout 10 umount -l "$FS"
	fi
	(exit "$rc")
	sfs_cleanup
}
trap t77_cleanup EXIT
if ! mount -t tmpfs -o size=256m,mode=0755 sfs-t77 "$FS"; then
	pass "skip: no tmpfs"
	SFS_DONE=1
	exit 0
fi
FS_MOUNTED=1
mkdir -p "$WS" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t77.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t77.conf HOME=$WS
SUB=$WS/sub
mkdir -p "$SUB"

sfs_mount
trap t77_cleanup EXIT # sfs_mount set its own

F=$MNT/files/sub # the scratch directory, seen through the mount
S=$MNT/sessions/default
T=10           # timeout (s) of one file operation
# a change must be seen through files/ within this (the window measured
# is a few ms: tests/bench/coherence.py; this bound leaves room for a
# loaded machine and the sanitizers, and is still far below the cache's
# 60 s)
WINDOW_MS=1000
GIVE_UP_MS=5000 # past it, looking again is pointless
LAT=()         # the times each change took to be seen (ms)

fs() { timeout -k 2 "$T" "$@"; }

# seen NAME CMD...: CMD (a check through files/) succeeds within
# WINDOW_MS of now, the change having just been made.
seen() {
	local name=$1 t0 t
	shift
	t0=$(now_ms)
	while :; do
		if "$@" >/dev/null 2>&1; then
			t=$(($(now_ms) - t0))
			LAT+=("$t")
			if [ "$t" -le "$WINDOW_MS" ]; then
				pass "$name"
			else
				fail "$name" "seen only after $t ms (window $WINDOW_MS ms)"
			fi
			note "$name: seen after $t ms"
			return 0
		fi
		t=$(($(now_ms) - t0))
		if [ "$t" -gt "$GIVE_UP_MS" ]; then
			fail "$name" "not seen after $t ms: $("$@" 2>&1 | head -c 200)"
			return 1
		fi
	done
}

# The checks of seen, each under a timeout. has FILE TEXT: FILE
# (through files/) holds exactly TEXT
has() { [ "$(fs cat -- "$1"; printf x)" = "$2x" ]; }
# size_is FILE N, mode_is FILE MODE, links_is FILE N
size_is() { [ "$(fs stat -c %s -- "$1")" = "$2" ]; }
mode_is() { [ "$(fs stat -c %a -- "$1")" = "$2" ]; }
links_is() { [ "$(fs stat -c %h -- "$1")" = "$2" ]; }
gone() { ! fs stat -- "$1" >/dev/null 2>&1; }
isdir() { fs test -d "$1"; }
# listed DIR NAME / unlisted DIR NAME: ls of DIR (through files/) has NAME
listed() { fs ls -a -- "$1" | grep -qxF -- "$2"; }
unlisted() { ! listed "$@"; }

# metric NAME: one counter of the mount's metrics
metric() { awk -v n="sessionfs_$1" '$1 == n { print $2 }' "$MNT/metrics"; }

assert_eq 1 "$(metric files_cache)" "files/ caches (metrics: files_cache 1)"

# ------------------------------------------------------------ file content

printf one >"$SUB/f"
fs cat "$F/f" >/dev/null # its pages are cached now
printf two >"$SUB/f"     # the same size: only an invalidation shows it
seen "a rewrite of a file whose pages are cached" has "$F/f" two
printf ', three' >>"$SUB/f"
seen "an append" has "$F/f" 'two, three'
truncate -s 3 "$SUB/f"
seen "a truncation (size)" size_is "$F/f" 3
seen "a truncation (content)" has "$F/f" two
fs stat "$F/f" >/dev/null
chmod 600 "$SUB/f"
seen "chmod of a file" mode_is "$F/f" 600

# ------------------------------------------------------------------ names

printf r >"$SUB/r1"
fs stat "$F/r1" >/dev/null
fs stat "$F/r2" >/dev/null 2>&1 # a negative entry
mv "$SUB/r1" "$SUB/r2"
seen "a rename: the old name is gone" gone "$F/r1"
seen "a rename: the new name is there" has "$F/r2" r

printf u >"$SUB/u"
fs cat "$F/u" >/dev/null
rm "$SUB/u"
seen "an unlink" gone "$F/u"

assert_true "a missing name is missing through files/" "stat found it" \
	gone "$F/neg"
printf n >"$SUB/neg" # files/ has a negative entry for it
seen "a creation of a name looked up before" has "$F/neg" n

# ------------------------------------------------------------ directories

fs ls -a "$F" >/dev/null # the listing is cached
mkdir "$SUB/d"
seen "mkdir: listed" listed "$F" d
seen "mkdir: a directory" isdir "$F/d"
fs ls -a "$F/d" >/dev/null
printf x >"$SUB/d/in"
seen "a file made in a listed directory is listed" listed "$F/d" in
fs stat "$F/d" >/dev/null
chmod 700 "$SUB/d"
seen "chmod of a directory" mode_is "$F/d" 700
rm "$SUB/d/in"
seen "a file removed from a listed directory is not listed" unlisted "$F/d" in
rmdir "$SUB/d"
seen "rmdir: not listed" unlisted "$F" d
seen "rmdir: gone" gone "$F/d"

# --------------------------------------------------------------- listings

# lists DIR: the listing requests files/ served for one ls of DIR
lists() {
	local before
	before=$(metric files_readdirs_total)
	fs ls -a -- "$1" >/dev/null
	echo $(($(metric files_readdirs_total) - before))
}
L=$SUB/l
FL=$F/l
mkdir -p "$L" "$SUB/l2"
(cd "$L" && touch a b c)
first=$(lists "$FL")
second=$(lists "$FL")
assert_true "a listing is read from the daemon once" "first $first" test "$first" -ge 1
assert_eq 0 "$second" "a second listing of an unchanged directory is the kernel's cache"
touch "$L/new"
seen "a creation in the backing directory is listed" listed "$FL" new
fs ls -a "$FL" >/dev/null
rm "$L/a"
seen "an unlink in the backing directory is not listed" unlisted "$FL" a
fs ls -a "$FL" >/dev/null
mv "$L/b" "$L/b2"
seen "a rename in the backing directory: the new name is listed" listed "$FL" b2
seen "a rename in the backing directory: the old name is not" unlisted "$FL" b
fs ls -a "$FL" "$F/l2" >/dev/null
mv "$L/c" "$SUB/l2/c"
seen "a rename to another directory: gone from the first listing" unlisted "$FL" c
seen "a rename to another directory: in the second listing" listed "$F/l2" c
fs ls -a "$FL" >/dev/null
if sfs_run "$S" "touch '$L/sess' && rm '$L/new'"; then
	pass "a session's cmd creates and unlinks in a listed directory"
else
	fail "a session's cmd creates and unlinks in a listed directory" "cmd failed"
fi
seen "a session's creation is listed" listed "$FL" sess
seen "a session's unlink is not listed" unlisted "$FL" new
# through files/ itself: the kernel knows at once, no window
fs ls -a "$FL" >/dev/null
fs touch "$FL/mine"
assert_true "a creation through files/ is listed at once" "not listed" listed "$FL" mine
fs mv "$FL/mine" "$FL/mine2"
assert_true "a rename through files/ is listed at once" "old or no name" \
	eval 'listed "$FL" mine2 && unlisted "$FL" mine'
fs rm "$FL/mine2"
assert_true "an unlink through files/ is not listed at once" "listed" unlisted "$FL" mine2
fs mkdir "$FL/md"
assert_true "a mkdir through files/ is listed at once" "not listed" listed "$FL" md
fs rmdir "$FL/md"
assert_true "an rmdir through files/ is not listed at once" "listed" unlisted "$FL" md

# ------------------------------------------------------------- hard links

printf h >"$SUB/h1"
fs stat "$F/h1" >/dev/null
ln "$SUB/h1" "$SUB/h2"
seen "a hard link: the link count" links_is "$F/h1" 2
seen "a hard link: the new name" has "$F/h2" h
fs cat "$F/h1" >/dev/null
printf hh >"$SUB/h2" # through the other name
seen "a write through the other link" has "$F/h1" hh

# ------------------------------------------ a file held open through files/

printf 'held' >"$SUB/o"
python3 - "$F/o" "$SUB/o" "$WINDOW_MS" >"$SFS_TMP/held.out" 2>&1 <<'EOF'
# Opens the file through files/, reads it, changes the backing file (in
# place, then longer) and reads through the same descriptor until it
# shows; prints one line per change: "ok MS" or "stale MS TEXT".
import os, sys, time
fuse_path, real, window = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(fuse_path, os.O_RDONLY)
os.pread(fd, 100, 0)
for new in (b"HELD", b"HELD and more"):
    w = os.open(real, os.O_WRONLY)
    os.pwrite(w, new, 0)
    os.close(w)
    t0 = time.monotonic()
    while True:
        got = os.pread(fd, 100, 0)
        ms = (time.monotonic() - t0) * 1000
        if got == new or ms > 3 * window:
            break
    print("ok" if got == new else "stale", int(ms), got.decode())
os.close(fd)
EOF
while read -r verdict ms text; do
	if [ "$verdict" = ok ] && [ "$ms" -le "$WINDOW_MS" ]; then
		pass "an open file shows the backing change '$text'"
	else
		fail "an open file shows the backing change" "$verdict after $ms ms: $text"
	fi
	note "open file: '$text' after $ms ms"
done <"$SFS_TMP/held.out"
assert_eq 2 "$(grep -c '^ok' "$SFS_TMP/held.out")" \
	"the open file's two changes: $(tr '\n' ' ' <"$SFS_TMP/held.out")"

# -------------------------------------------------- from a session's cmd

fs stat "$F/s" >/dev/null 2>&1
fs cat "$F/f" >/dev/null
if sfs_run "$S" "printf sess >'$SUB/s'; printf cmd >'$SUB/f'"; then
	pass "a session's cmd writes the backing directory"
else
	fail "a session's cmd writes the backing directory" "cmd failed"
fi
seen "a session's creation" has "$F/s" sess
seen "a session's rewrite of a cached file" has "$F/f" cmd

# a run's end waits for its changes' invalidations (fs/files_settle.c):
# what a session's cmd changed is seen through files/ as soon as the
# close of cmd returns, with no wait at all; each round caches the old
# state first
stale=0
for i in $(seq 100); do
	fs stat "$F/g" "$F/h" >/dev/null 2>&1
	fs cat "$F/h" >/dev/null 2>&1
	sfs_run "$S" "cd '$SUB' && echo v$i >f$i && rm -rf g && mkdir g && mv f$i h" ||
		stale=$((stale + 1))
	fs test -d "$F/g" || stale=$((stale + 1))
	[ "$(fs cat "$F/h" 2>/dev/null)" = "v$i" ] || stale=$((stale + 1))
	fs ls "$F" | grep -qx "f$i" && stale=$((stale + 1))
	sfs_run "$S" "cd '$SUB' && rmdir g && echo >g" || stale=$((stale + 1))
	fs test -f "$F/g" || stale=$((stale + 1))
done
assert_eq 0 "$stale" "a session's changes are seen through files/ when its cmd's close returns (100 rounds of 6 looks, none stale)"

IFS=$'\n' read -r -d '' -a sorted < <(printf '%s\n' "${LAT[@]}" | sort -n)
note "${#LAT[@]} changes seen after: median ${sorted[$((${#sorted[@]} / 2))]} ms, max ${sorted[-1]} ms (window $WINDOW_MS ms)"

# -------------------------------------------------- caching saves requests

mkdir "$SUB/many"
(cd "$SUB/many" && seq 1000 | xargs touch)
# the end of a run waits until what fanotify has queued is invalidated:
# the 1,000 creations' invalidations cannot land between the two stats
sfs_run "$S" true
# requests REPS: lookups and getattrs of files/ one stat of the 1,000
# files sends
requests() {
	local before after
	before=$(($(metric files_lookups_total) + $(metric files_getattrs_total)))
	(cd "$F/many" && seq 1000 | fs xargs stat -c %s >/dev/null)
	after=$(($(metric files_lookups_total) + $(metric files_getattrs_total)))
	echo $((after - before))
}
first=$(requests)
second=$(requests)
note "stat of 1,000 files: $first requests, then $second"
assert_true "a second stat of 1,000 files sends under a tenth of the requests" \
	"first $first, second $second" test "$second" -lt $((first / 10))

# ------------------------------------------------- OPENDIR, every time

# Every OPENDIR is answered (never ENOSYS, which would make the kernel
# keep every listing of the mount, the tree's too, and serve reads past
# offset 0 from them): each listing opens its directory as the caller,
# and a listing that takes many READDIRs is whole and in order, entry
# for entry the backing directory's.
before=$(metric opendirs_total)
fs ls -a "$F" >/dev/null
fs ls -a "$F" >/dev/null
n=$(($(metric opendirs_total) - before))
assert_true "each of two listings of a files/ directory sent an OPENDIR" "$n sent" test "$n" -ge 2
(cd "$SUB/many" && seq 1001 1600 | sed 's/^/a-longer-name-to-fill-pages-/' | xargs touch)
before=$(metric files_readdirs_total)
fs ls -af "$F/many" >"$SFS_TMP/t77.fuse"
ls -af "$SUB/many" >"$SFS_TMP/t77.back"
n=$(($(metric files_readdirs_total) - before))
assert_true "a listing of 1,602 entries took several READDIRs" "$n" test "$n" -ge 3
if cmp -s "$SFS_TMP/t77.fuse" "$SFS_TMP/t77.back"; then
	pass "a listing read in $n READDIRs is the backing directory's, in its order"
else
	fail "a listing read in $n READDIRs is the backing directory's, in its order" \
		"$(diff "$SFS_TMP/t77.fuse" "$SFS_TMP/t77.back" | head -5)"
fi
if command -v lsattr >/dev/null; then
	assert_eq "$(lsattr -d "$SUB/many" 2>&1 | cut -d' ' -f1)" \
		"$(fs lsattr -d "$F/many" 2>&1 | cut -d' ' -f1)" \
		"lsattr -d of a directory of files/: its flags"
fi
# A listing that does not start at offset 0 (seekdir, a reader in
# chunks) is never served from an older one: sessions/ listed whole,
# then a session made, then listed from offset 2.
LSOFF=$(dirname "$0")/helpers/lsoff.py
fs ls -a "$MNT/sessions" >/dev/null
sfs_mkdir "$MNT/sessions/t77late"
names=$(fs python3 "$LSOFF" "$MNT/sessions" 2 | tr '\n' ' ')
assert_true "sessions/ read from offset 2 after a mkdir has the new session" "$names" \
	grep -qw t77late <<<"$names"
rmdir "$MNT/sessions/t77late"
# The tree's listings are never old: a run made by a cmd is in runs/ at
# the very next listing (no stat between), 50 times over.
stale=$(fs python3 - "$S" <<'PY'
import os, sys
s = sys.argv[1]
stale = 0
for i in range(50):
    before = set(os.listdir(s + "/runs"))
    with open(s + "/cmd", "w") as f:
        f.write("true\n")
    after = set(os.listdir(s + "/runs"))
    stale += len(after - before) < 1
print(stale)
PY
)
assert_eq 0 "$stale" "runs/ listed at once after each of 50 cmds, never an old listing"

# ------------------------------------------- an open after the change

# An open through files/ reads what fanotify has queued before it
# answers: what was changed in the backing directory before the open
# began is what it opens, with no window (fs/files_watch.c,
# fwatch_opening). Each change is made behind files/' back after it read
# and stat'ed the old file, and the file is opened at once, in the same
# process; 100 of each kind, none stale. A file whose name went is
# answered ESTALE once, and the kernel looks the path up again: a file
# still open, reached by its /proc link, opens all the same.
stale=$(fs python3 - "$SUB" "$F" <<'PY'
import os, sys
back, view = sys.argv[1] + "/open", sys.argv[2] + "/open"
os.mkdir(back)
def peek(p):
    try:
        with open(p, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
out = []
for kind in ("write", "append", "truncate", "rename", "unlink", "replace"):
    stale = 0
    for i in range(100):
        real, seen = "%s/%s-%d" % (back, kind, i), "%s/%s-%d" % (view, kind, i)
        with open(real, "wb") as f:
            f.write(b"old " * 64)
        peek(seen)
        os.stat(seen)
        if kind == "write":
            with open(real, "r+b") as f:
                f.write(b"new " * 64)
            want = b"new " * 64
        elif kind == "append":
            with open(real, "ab") as f:
                f.write(b"more")
            want = b"old " * 64 + b"more"
        elif kind == "truncate":
            os.truncate(real, 8)
            want = b"old old "
        elif kind == "rename":
            os.rename(real, real + ".moved")
            want = None
        elif kind == "unlink":
            os.unlink(real)
            want = None
        else:
            with open(real + ".new", "wb") as f:
                f.write(b"replaced")
            os.rename(real + ".new", real)
            want = b"replaced"
        stale += peek(seen) != want
    out.append("%s=%d" % (kind, stale))
with open(back + "/held", "wb") as f:
    f.write(b"held")
fd = os.open(view + "/held", os.O_RDONLY)
os.unlink(back + "/held")
try:
    out.append("held=" + peek("/proc/self/fd/%d" % fd).decode())
except OSError as e:
    out.append("held=" + e.strerror.replace(" ", "_"))
print(" ".join(out))
PY
)
assert_eq "write=0 append=0 truncate=0 rename=0 unlink=0 replace=0 held=held" "$stale" \
	"an open at once after a change in the backing directory: never the old file (100 of each)"
# Three openers at once (threads of one process), a second name of the
# file made and removed behind files/' back all the while: none sees
# ESTALE (each opener is told it once, and its retry goes through).
printf x >"$SUB/churned"
cat >"$SFS_TMP/openers.py" <<'PY'
import os, sys, threading, time
real, seen = sys.argv[1], sys.argv[2]
stop = time.monotonic() + float(sys.argv[3])
pid = os.fork()
if pid == 0:
    while time.monotonic() < stop:
        os.link(real, real + ".2")
        os.unlink(real + ".2")
    os._exit(0)
out, errs = [], []
def opener():
    ok = 0
    while time.monotonic() < stop:
        try:
            os.close(os.open(seen, os.O_RDONLY))
            ok += 1
        except OSError as e:
            errs.append(e.strerror)
    out.append(ok)
ts = [threading.Thread(target=opener) for _ in range(3)]
for t in ts:
    t.start()
for t in ts:
    t.join()
os.waitpid(pid, 0)
print(len(errs), sum(out), *sorted(set(errs)))
PY
errs=$(fs python3 "$SFS_TMP/openers.py" "$SUB/churned" "$F/churned" 2)
read -r nerr nok _ <<<"$errs"
assert_true "three openers while a second name comes and goes: no open fails" \
	"$errs (failures, opens, errors)" test "${nok:-0}" -gt 0 -a "${nerr:-1}" -eq 0
# The same while the kernel forgets the file's inode now and then (one
# CI run on a loaded machine saw 3 opens fail so): its dentry, unused
# between an opener's ESTALE and its retry, is reclaimed (the openers in
# a memory cgroup whose caches are emptied every 10 ms), and the retry's
# lookup makes a node of another inode number. The retries were noted
# by that number, so such a retry was told ESTALE again, which the
# kernel does not retry: noted by the backing file's (st_dev, st_ino)
# now, no open fails.
# (a file of its own: the dentries of the cgroup's own making are those
# it empties)
printf x >"$SUB/reclaimed"
CG=/sys/fs/cgroup/memory/sfs-t77-$$
if [ -w /sys/fs/cgroup/memory ] && mkdir "$CG" 2>/dev/null; then
	( while [ -d "$CG" ]; do echo 0 >"$CG/memory.force_empty" 2>/dev/null; sleep 0.01; done ) &
	SFS_BG_PIDS+=("$!")
	errs=$(timeout -k 2 "$T" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec python3 "$@"' _ \
		"$CG" "$SFS_TMP/openers.py" "$SUB/reclaimed" "$F/reclaimed" 3); note "with reclaim: $errs"
	rmdir "$CG" 2>/dev/null || { sleep 0.5; rmdir "$CG"; }
	read -r nerr nok _ <<<"$errs"
	assert_true "three openers while the kernel forgets the file's inode: no open fails" \
		"$errs (failures, opens, errors)" test "${nok:-0}" -gt 0 -a "${nerr:-1}" -eq 0
else
	note "no memory cgroup (v1) to empty: the openers with reclaim are not run"
fi
# files/ as the lower layer of an overlay: a merged directory is listed
# by the kernel's own open of the lower one, which never retries, so a
# directory is never answered ESTALE (renamed away and back here).
OV=$SFS_TMP/ov
mkdir -p "$SUB/ovd" "$OV/up/ovd" "$OV/work" "$OV/mnt"
echo x >"$SUB/ovd/f1"
echo y >"$OV/up/ovd/f2"
if mount -t overlay overlay -o "lowerdir=$F,upperdir=$OV/up,workdir=$OV/work" "$OV/mnt" 2>/dev/null; then
	OV_MOUNTED=1
	fs ls "$OV/mnt/ovd" >/dev/null
	mv "$SUB/ovd" "$SUB/ovd2"
	mv "$SUB/ovd2" "$SUB/ovd"
	assert_eq "f1 f2" "$(fs ls "$OV/mnt/ovd" 2>&1 | tr '\n' ' ' | sed 's/ $//')" \
		"an overlay's merged directory over files/ lists at once after a rename away and back"
	timeout 10 umount "$OV/mnt" && OV_MOUNTED=
else
	pass "skip: no overlay over files/ here"
fi
# The same for listings: a directory listed (the kernel keeps the
# listing), a name made, removed or renamed in it in the backing
# directory, and listed again at once: the change is in it.
stale=$(fs python3 - "$SUB" "$F" <<'PY'
import os, sys
back, view = sys.argv[1] + "/lists", sys.argv[2] + "/lists"
os.mkdir(back)
out = []
for kind in ("create", "unlink", "rename"):
    stale = 0
    for i in range(100):
        name = "%s-%d" % (kind, i)
        if kind != "create":
            open(os.path.join(back, name), "w").close()
        os.listdir(view)
        if kind == "create":
            open(os.path.join(back, name), "w").close()
        elif kind == "unlink":
            os.unlink(os.path.join(back, name))
        else:
            os.rename(os.path.join(back, name), os.path.join(back, name + ".moved"))
        stale += (name in os.listdir(view)) != (kind == "create")
    out.append("%s=%d" % (kind, stale))
print(" ".join(out))
PY
)
assert_eq "create=0 unlink=0 rename=0" "$stale" \
	"a listing at once after a change in the backing directory has it (100 of each)"

# ------------------------------------------------------ files_cache = false

sfs_umount
printf 'workspace = "%s";\nfiles_cache = false;\n' "$WS" >"$SFS_TMP/t77.conf"
sfs_mount
trap t77_cleanup EXIT
F=$MNT/files/sub
assert_eq 0 "$(metric files_cache)" "files_cache = false: files/ does not cache"
first=$(requests)
second=$(requests)
note "files_cache = false: stat of 1,000 files: $first requests, then $second"
assert_true "files_cache = false: a second stat sends as many requests" \
	"first $first, second $second" test "$second" -ge $((first * 9 / 10))
assert_true "files_cache = false: at least one request per file" \
	"second $second" test "$second" -ge 1000
printf five >"$SUB/f"
assert_true "files_cache = false: a change is seen at once" "stale" has "$F/f" five
fs ls -a "$F/l" >/dev/null
second=$(lists "$F/l")
assert_true "files_cache = false: every listing asks the daemon" "second $second" \
	test "$second" -ge 1
touch "$SUB/l/late"
assert_true "files_cache = false: a creation is listed at once" "not listed" listed "$F/l" late
assert_true "files_cache = false: each listing opens its directory (OPENDIR)" \
	"$(metric opendirs_total) sent" test "$(metric opendirs_total)" -ge 2

sfs_done
