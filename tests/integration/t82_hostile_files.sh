#!/usr/bin/env bash
# t82_hostile_files: a hostile user of files/ and of expect (issue 26
# review): what she does must not freeze the daemon for the others, nor
# get her more than the backing filesystem would.
# 1. expect over a run's big output with a slow pattern: the search goes
#    a piece per turn of the loop, so another request meanwhile is
#    answered at once (the whole search froze every user for seconds);
#    the line after the big output is still found, and a pattern that
#    never matches still ends with ENODATA once all is searched; ten
#    readers at once each search once, not once per other reader's turn;
#    an upgrade in place in the middle of a search does not stop it.
# 2. a user who holds a directory of files/ locked (her listing copied
#    into a page of her own FUSE file that never comes) stalls the
#    notifier thread in the kernel: an upgrade in place is refused with
#    EBUSY instead of hanging every user in its execve, and the events
#    that wait for it meanwhile are bounded (then dropped for the epoch).
# 3. a listing of hers right after root's chmod 0700 of the directory in
#    the workspace is refused, never served from the kernel's cache.
# 4. the same for a file whose node lost its descriptor (a walk of more
#    files than the nodes' bound): the daemon's own user opens such a
#    node straight from its handle, unchecked; her open is checked as hers.
# 5. her open of a file right after root's chmod 0700 of its directory in
#    the workspace is refused (the kernel checked her search on the
#    directory's cached mode, and the daemon's open of the file checks
#    the file's own): an open after a directory changed its mode or lost
#    a name is answered ESTALE once, and its retry walks the path through
#    the daemon's lookups, made as her. The same through a directory
#    renamed away; lsattr right after such a change (its ioctl goes on an
#    open the kernel makes itself, which never retries) works.
# 6. a lease she holds on her file in the workspace (fcntl F_SETLEASE)
#    does not hold the daemon: root's open and truncate of it through
#    files/ fail at once with EAGAIN (the break begun) instead of waiting
#    45 s for it in the loop, with every user's requests.
# Environment: SFS_ASAN set: the memory bound is not checked.
# shellcheck disable=SC2016
SFS_T=${SFS_T:-30}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need setpriv python3

WS=$SFS_TMP/ws
mkdir -p "$WS" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t82.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t82.conf HOME=$WS
REAL_BIN=$SFS_BIN # what an upgrade in place runs
wrap=$SFS_TMP/allow_other.sh
printf '#!/bin/sh\nexec "%s" -o allow_other "$@"\n' "$SFS_BIN" >"$wrap"
chmod 755 "$wrap"
SFS_BIN=$wrap
chmod 755 "$SFS_TMP" # other users reach the workspace through it
sfs_mount
T=10
fs() { timeout -k 2 "$T" "$@"; }
# "${U1[@]}" CMD...: CMD as uid and gid 65534, without supplementary groups
U1=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# ------------------------------------------------ 1. expect, big output
S=$MNT/sessions/x
check "mkdir sessions/x" sfs_mkdir "$S"
check "mkdir sessions/y" sfs_mkdir "$MNT/sessions/y"
# 24 MB of lines of 47 a's, then the line the pattern waits for
check "a run prints 24 MB" sfs_run "$S" 'yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 24000000; echo aab' 60
# glibc matches this pattern at about 6 MB/s: seconds for the whole output
check "a slow pattern" sfs_write "$S/expect" $'(a|aa)*b 120000\n'
t0=$(now_ms)
timeout -k 2 150 cat "$S/expect" >"$SFS_TMP/exp.out" 2>&1 &
READER=$!
SFS_BG_PIDS+=("$READER")
# another session's listing, over and over while the search goes on
worst=0 probes=0
while sfs_alive "$READER"; do
	p0=$(now_ms)
	timeout -k 2 150 cat "$MNT/sessions/y/status" >/dev/null
	el=$(($(now_ms) - p0))
	probes=$((probes + 1))
	[ "$el" -gt "$worst" ] && worst=$el
	sleep 0.05
done
wait "$READER"
note "the search took $(($(now_ms) - t0)) ms; $probes reads of another session meanwhile, the slowest $worst ms"
assert_eq aab "$(cat "$SFS_TMP/exp.out")" "expect finds the line after 24 MB of others"
assert_true "reads meanwhile were made ($probes)" "" test "$probes" -ge 2
assert_lt "$worst" 1000 "another session's read during the search waits for no search" " ms"
# ten readers at once each search their own way, a piece per turn: one
# reader's turn must not make every other search again too
check "a run prints 2 MB" sfs_run "$S" 'yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 1999968; echo aab' 60
check "the slow pattern again" sfs_write "$S/expect" $'(a|aa)*b 120000\n'
t0=$(now_ms)
readers=()
for i in 0 1 2 3 4 5 6 7 8 9; do
	timeout -k 2 150 cat "$S/expect" >"$SFS_TMP/exp.$i" 2>&1 &
	readers+=("$!")
	SFS_BG_PIDS+=("$!")
done
wait "${readers[@]}"
el=$(($(now_ms) - t0))
note "ten readers took $el ms"
assert_eq "aab aab aab aab aab aab aab aab aab aab" "$(cat "$SFS_TMP"/exp.? | tr '\n' ' ' | sed 's/ $//')" "ten readers at once each find the line"
assert_lt "$el" 30000 "in about ten times one search's time" " ms"
# an upgrade in place in the middle of a search: the search goes on
check "the slow pattern for an upgrade" sfs_write "$S/expect" $'(a|aa)*b 120000\n'
check "a run prints 24 MB again" sfs_run "$S" 'yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 24000000; echo aab' 60
timeout -k 2 150 cat "$S/expect" >"$SFS_TMP/exp.up" 2>&1 &
READER=$!
SFS_BG_PIDS+=("$READER")
sleep 1
timeout -k 2 60 bash -c 'echo "upgrade $1" >"$2"' _ "$REAL_BIN" "$MNT/ctl" 2>"$SFS_TMP/up.err"
assert_eq "0 ''" "$? '$(cat "$SFS_TMP/up.err")'" "an upgrade in place during a search"
wait "$READER"
assert_eq aab "$(cat "$SFS_TMP/exp.up")" "the search goes on after the upgrade and finds the line"
check "a pattern that never matches" sfs_write "$S/expect" $'^never$ 120000\n'
assert_errno "No data available" "it ends with ENODATA once the whole output is searched" \
	timeout -k 2 150 cat "$S/expect"

# ------------------------------- 2. a notification that waits on a lock
# She holds a directory of files/ locked for as long as she likes: her
# listing of it is copied into a page mapped from a file of her own FUSE
# filesystem (here root mounts it for her, as fusermount3 would) whose
# server never answers. A change of that directory in the workspace
# makes the notifier thread wait for the lock in the kernel; an upgrade
# in place then waited for that thread in its execve, with every request
# of every user, for as long as she held the lock. It is refused now
# (EBUSY), the mount goes on answering, and once she lets go the upgrade
# works.
PY_OTHER=/usr/bin/python3 # the other user may not reach root's own python
[ -x "$PY_OTHER" ] || PY_OTHER=$(command -v python3)
mkdir -p "$WS/held" "$SFS_TMP/stuck" && chmod 755 "$WS/held"
cat >"$SFS_TMP/stuckfuse.py" <<'PY'
# stuckfuse.py MOUNTPOINT: a FUSE filesystem (raw /dev/fuse, mounted by
# root with allow_other) of one file "f" whose reads are never answered:
# a page of it mapped by a process makes that process wait, in whatever
# system call touched the page, for as long as this program runs.
import ctypes, os, struct, sys

mnt = sys.argv[1]
fd = os.open("/dev/fuse", os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
opts = ("fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fd).encode()
if libc.mount(b"stuckfuse", mnt.encode(), b"fuse.stuckfuse", 0, opts) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
print("mounted", flush=True)

def attr(ino, mode, size):
    return struct.pack("<QQQQQQIIIIIIIIII", ino, size, 8, 0, 0, 0, 0, 0, 0,
                       mode, 1, 0, 0, 0, 4096, 0)

def reply(unique, body=b"", err=0):
    os.write(fd, struct.pack("<IiQ", 16 + len(body), -err, unique) + body)

while True:
    try:
        buf = os.read(fd, 1 << 21)
    except OSError:
        break
    ln, op, unique, node = struct.unpack_from("<IIQQ", buf)
    if op == 26:  # INIT
        reply(unique, struct.pack("<IIIIHHIIHHII", 7, 31, 0, 0, 16, 12,
                                  1 << 17, 1, 32, 0, 0, 0) + b"\0" * 24)
    elif op == 1:  # LOOKUP
        name = buf[40:].split(b"\0")[0]
        if node == 1 and name == b"f":
            reply(unique, struct.pack("<QQQQII", 2, 0, 3600, 3600, 0, 0) +
                  attr(2, 0o100666, 4096))
        else:
            reply(unique, err=2)
    elif op == 3:  # GETATTR
        mode, size = (0o40755, 0) if node == 1 else (0o100666, 4096)
        reply(unique, struct.pack("<QII", 3600, 0, 0) + attr(node, mode, size))
    elif op in (14, 27):  # OPEN, OPENDIR
        reply(unique, struct.pack("<QII", 1, 0, 0))
    elif op == 15:  # READ: never answered
        pass
    elif op in (18, 25, 29):  # RELEASE, FLUSH, RELEASEDIR
        reply(unique)
    elif op in (2, 42):  # FORGET, BATCH_FORGET: no reply
        pass
    elif op == 36:  # INTERRUPT: no reply
        pass
    else:
        reply(unique, err=38)
PY
cat >"$SFS_TMP/holddir.py" <<'PY'
# holddir.py FILE DIR: reads DIR's entries (getdents64) into a page
# mapped from FILE, whose read never comes: the kernel holds DIR's lock
# while it copies the entries out, so it holds it until this is killed.
import ctypes, mmap, os, sys
f = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(f, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
d = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
print("holding", flush=True)
libc = ctypes.CDLL(None, use_errno=True)
n = libc.syscall(217, d, ctypes.c_void_p(addr), 4096)
print("getdents", n, flush=True)
PY
python3 "$SFS_TMP/stuckfuse.py" "$SFS_TMP/stuck" >"$SFS_TMP/stuck.out" 2>&1 &
STUCK=$!
SFS_BG_PIDS+=("$STUCK")
check "her FUSE filesystem mounts" sfs_until 10 grep -q mounted "$SFS_TMP/stuck.out"
"${U1[@]}" timeout -k 2 120 "$PY_OTHER" "$SFS_TMP/holddir.py" "$SFS_TMP/stuck/f" "$MNT/files/held" >"$SFS_TMP/hold.out" 2>&1 &
HOLD=$!
SFS_BG_PIDS+=("$HOLD")
check "she lists files/held into her unanswered page" sfs_until 10 grep -q holding "$SFS_TMP/hold.out"
# the notifier thread (not the loop) waits in the kernel once it is told
# of a change of held/ (the listing waits already: retry the change)
stuck_thread() {
	local t
	touch "$WS/held/new.$RANDOM"
	for t in /proc/"$SFS_SERVER"/task/*; do
		[ "$t" = "/proc/$SFS_SERVER/task/$SFS_SERVER" ] && continue
		[ "$(awk '{ print $3 }' "$t/stat" 2>/dev/null)" = D ] && return 0
	done
	return 1
}
check "the notifier waits for the lock she holds" sfs_until 20 stuck_thread
# meanwhile a busy workspace: 400,000 events of held/ (each a name to
# invalidate) wait for the notifier, at most 65536 of them in memory
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$SFS_SERVER/status"; }
RSS0=$(rss_kb)
timeout -k 2 120 python3 -c '
import os, sys
p = os.path.join(sys.argv[1], "churn")
for i in range(200000):
    os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
    os.unlink(p)' "$WS/held"
sleep 2 # the loop reads the last events
RSS1=$(rss_kb)
note "the daemon's memory before the 400,000 events ${RSS0} kB, after ${RSS1} kB${SFS_ASAN:+ (not checked: SFS_ASAN is set, whose quarantine keeps what is freed)}"
if [ -z "${SFS_ASAN:-}" ]; then
	assert_lt "$((RSS1 - RSS0))" 8192 "the events waiting for the stuck notifier take little memory" " kB"
fi
assert_file_match "$SFS_TMP/daemon.log" "notifications wait .* the next are dropped" "and the log says the next are dropped"
t0=$(now_ms)
timeout -k 2 30 bash -c 'echo "upgrade $1" >"$2"' _ "$REAL_BIN" "$MNT/ctl" 2>"$SFS_TMP/up.err"
rc=$?
el=$(($(now_ms) - t0))
assert_eq "1 busy" "$rc $(grep -q 'Device or resource busy' "$SFS_TMP/up.err" && echo busy)" "an upgrade then is refused with EBUSY, not stuck in its execve (${el} ms)"
assert_file_match "$SFS_TMP/daemon.log" "a notification waits for a lock" "and the log says why"
answers() { timeout -k 2 10 ls "$MNT/sessions" >/dev/null; }
assert_true "the mount still answers" "" answers
# she lets go (her server ends: the kernel aborts its requests)
kill "$STUCK"
check "her listing ends once her server is gone" sfs_wait_gone "$HOLD" 20
timeout -k 2 10 umount -l "$SFS_TMP/stuck"
timeout -k 2 60 bash -c 'echo "upgrade $1" >"$2"' _ "$REAL_BIN" "$MNT/ctl" 2>"$SFS_TMP/up.err"
assert_eq "0 ''" "$? '$(cat "$SFS_TMP/up.err")'" "then the upgrade works"
echo seen >"$WS/held/late"
files_sees() { [ "$(timeout 5 cat "$MNT/files/held/late" 2>/dev/null)" = seen ]; }
check "and files/ sees the workspace's new files" sfs_until 10 files_sees

# 3. root takes a directory back behind files/' back (chmod 0700 in the
# workspace) right after she listed it: her next listing is refused at
# once, 50 times over (each listing opens the directory as her: the
# kernel's own check is on modes it cached before the chmod).
mkdir -p "$WS/taken"
# a process of hers lists, waits for root's word on a pipe, lists again
leaks=$(fs python3 - "$WS/taken" "$MNT/files/taken" <<'PY'
import os, sys
real, seen = sys.argv[1], sys.argv[2]
go_r, go_w = os.pipe()
res_r, res_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    for _ in range(50):
        try:
            os.listdir(seen)  # cached now, mode 0755
        except OSError:
            pass
        os.write(res_w, b"r")
        os.read(go_r, 1)
        try:
            os.listdir(seen)
            os.write(res_w, b"1")
        except PermissionError:
            os.write(res_w, b"0")
    os._exit(0)
leaks = 0
for i in range(50):
    os.chmod(real, 0o755)
    open(os.path.join(real, "f%d" % i), "w").close()
    os.read(res_r, 1)  # she listed it
    os.chmod(real, 0o700)
    os.write(go_w, b"g")
    leaks += os.read(res_r, 1) == b"1"
os.waitpid(pid, 0)
print(leaks)
PY
)
assert_eq 0 "$leaks" "a listing right after a chmod 0700 in the workspace is refused (50 rounds)"

# 4. 5,000 files walked by her (more than the 4,096 descriptors the
# nodes keep at most) evict the nodes walked first. Root makes each of
# the first 50 0600 in the workspace, and her open right after it is
# refused: by the kernel once the notifier dropped the mode it cached,
# else by the daemon's open as her. Then she opens 50 other evicted
# files, left 0644 (their ACLs known to the kernel, so that OPEN is the
# only request): none of hers is opened from its handle (metrics), while
# root's open of an evicted file is.
handle_opens() { timeout 5 cat "$MNT/metrics" | awk '$1 == "sessionfs_files_handle_opens_total" { print $2 }'; }
h0=$(handle_opens)
leaks=$(timeout -k 2 60 python3 - "$WS/ev" "$MNT/files/ev" 2>"$SFS_TMP/ev.err" <<'PY'
import os, sys
real, seen = sys.argv[1], sys.argv[2]
for d in (real, real + "2"):
    os.mkdir(d)
    for i in range(5000):
        with open(os.path.join(d, "f%d" % i), "w") as f:
            f.write("mine\n")
        os.chmod(os.path.join(d, "f%d" % i), 0o644)
go_r, go_w = os.pipe()
res_r, res_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    for i in range(5000):  # the modes cached: 0644
        os.stat(os.path.join(seen, "f%d" % i))
    for i in range(50):
        os.write(res_w, b"r")
        os.read(go_r, 1)
        try:
            os.close(os.open(os.path.join(seen, "f%d" % i), os.O_RDONLY))
            os.write(res_w, b"1")
        except PermissionError:
            os.write(res_w, b"0")
    # 50 left 0644, opened (the kernel reads and keeps their ACLs), then
    # evicted by 5,000 new nodes, opened again: OPEN the only request
    for i in range(200, 250):
        os.close(os.open(os.path.join(seen, "f%d" % i), os.O_RDONLY))
    for i in range(5000):
        os.stat(os.path.join(seen + "2", "f%d" % i))
    ok = 0
    for i in range(200, 250):
        os.close(os.open(os.path.join(seen, "f%d" % i), os.O_RDONLY))
        ok += 1
    os.write(res_w, b"%d" % ok)
    os._exit(0)
leaks = 0
for i in range(50):
    os.read(res_r, 1)  # she is ready
    os.chmod(os.path.join(real, "f%d" % i), 0o600)
    os.write(go_w, b"g")
    leaks += os.read(res_r, 1) == b"1"
ok = os.read(res_r, 8).decode()
os.waitpid(pid, 0)
print(leaks, ok)
PY
)
h1=$(handle_opens)
assert_eq "0 50 ''" "$leaks '$(head -c 300 "$SFS_TMP/ev.err")'" "her open of an evicted file made 0600 in the workspace is refused (50 files), of one left 0644 not (50)"
assert_eq mine "$(fs cat "$MNT/files/ev/f4000")" "root reads an evicted file"
h2=$(handle_opens)
assert_true "her opens went through her credentials, root's from its handle (handle opens $h0, $h1, $h2)" "" \
	test -n "$h0" -a "$h0" = "$h1" -a "$h2" = "$((h1 + 1))"

# 5. a directory taken from her (chmod 0700 in the workspace) right after
# she read a file in it: her next open is refused, 200 rounds
leaks=$(timeout -k 2 60 python3 - "$WS/tk" "$MNT/files/tk" 2>"$SFS_TMP/tk.err" <<'PY'
import os, sys
real, seen = sys.argv[1], sys.argv[2]
os.mkdir(real, 0o755)
with open(real + "/secret", "w") as f:
    f.write("secret\n")
os.chmod(real + "/secret", 0o644)
go_r, go_w = os.pipe()
res_r, res_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    while os.read(go_r, 1) == b"w":
        try:
            open(seen + "/secret").read()  # the names and modes cached
        except OSError:
            pass
        os.write(res_w, b"r")
        os.read(go_r, 1)
        try:
            open(seen + "/secret").read()
            os.write(res_w, b"1")
        except PermissionError:
            os.write(res_w, b"0")
        except OSError:
            os.write(res_w, b"e")
    os._exit(0)
out = {}
for i in range(200):
    os.chmod(real, 0o755)
    os.write(go_w, b"w")
    os.read(res_r, 1)
    os.chmod(real, 0o700)
    os.write(go_w, b"g")
    c = os.read(res_r, 1).decode()
    out[c] = out.get(c, 0) + 1
os.write(go_w, b"q")
os.waitpid(pid, 0)
print(out.get("1", 0), out.get("e", 0))
PY
)
assert_eq "0 0 ''" "$leaks '$(head -c 300 "$SFS_TMP/tk.err")'" "her open right after a chmod 0700 of its directory in the workspace is refused (200 rounds; leaks, other errors)"
# a directory renamed away in the workspace right after she read a file
# in it: her next open by the old path finds nothing, by the new finds it
moved=$(timeout -k 2 60 python3 - "$WS" "$MNT/files" 2>"$SFS_TMP/mv.err" <<'PY'
import os, sys
real, seen = sys.argv[1], sys.argv[2]
go_r, go_w = os.pipe()
res_r, res_w = os.pipe()
for i in range(50):
    os.mkdir("%s/md%d" % (real, i), 0o755)
    with open("%s/md%d/f" % (real, i), "w") as f:
        f.write("f%d" % i)
pid = os.fork()
if pid == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    stale = lost = 0
    for i in range(50):
        open("%s/md%d/f" % (seen, i)).read()
        os.write(res_w, b"r")
        os.read(go_r, 1)
        try:
            open("%s/md%d/f" % (seen, i)).read()
            stale += 1
        except FileNotFoundError:
            pass
        try:
            lost += open("%s/mv%d/f" % (seen, i)).read() != "f%d" % i
        except OSError:
            lost += 1
    os.write(res_w, b"%d %d" % (stale, lost))
    os._exit(0)
for i in range(50):
    os.read(res_r, 1)
    os.rename("%s/md%d" % (real, i), "%s/mv%d" % (real, i))
    os.write(go_w, b"g")
print(os.read(res_r, 16).decode())
os.waitpid(pid, 0)
PY
)
assert_eq "0 0 ''" "$moved '$(head -c 300 "$SFS_TMP/mv.err")'" "her open through a directory renamed away at once: gone there, found at the new name (50 of each)"
if command -v lsattr >/dev/null; then
	mkdir -m 755 "$WS/la" && : >"$WS/la/f" && chmod 644 "$WS/la/f"
	fs "${U1[@]}" ls "$MNT/files/la" >/dev/null
	chmod 711 "$WS/la"
	check "her lsattr right after a chmod of the directory" fs "${U1[@]}" lsattr "$MNT/files/la/f"
fi

# 6. her write lease on her own file: root's open and truncate through
# files/ end at once (EAGAIN), the mount answering meanwhile
mkdir -p "$WS/pub" && chmod 1777 "$WS/pub"
"${U1[@]}" timeout -k 2 60 "$PY_OTHER" -c '
import fcntl, os, signal, sys, time
p = sys.argv[1]
with open(p, "w") as f:
    f.write("mine\n")
signal.signal(signal.SIGIO, signal.SIG_IGN)
fd = os.open(p, os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
print("leased", flush=True)
time.sleep(50)' "$WS/pub/leased" >"$SFS_TMP/lease.out" 2>&1 &
LEASE=$!
SFS_BG_PIDS+=("$LEASE")
check "she holds a write lease on her file" sfs_until 10 grep -q leased "$SFS_TMP/lease.out"
t0=$(now_ms)
assert_errno "Resource temporarily unavailable" "root's read of her leased file through files/ is EAGAIN" \
	timeout -k 2 20 cat "$MNT/files/pub/leased"
assert_errno "Resource temporarily unavailable" "and so is its truncate" \
	timeout -k 2 20 truncate -s 0 "$MNT/files/pub/leased"
el=$(($(now_ms) - t0))
assert_lt "$el" 5000 "both at once, not after the lease's break" " ms"
assert_true "the mount answers after them" "" answers
assert_file_match "$SFS_TMP/daemon.log" "met another process's lease" "the log says why"
kill "$LEASE" 2>/dev/null

sfs_done
