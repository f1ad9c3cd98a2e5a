#!/usr/bin/env bash
# t72_upgrade_files: files/ across an upgrade in place (`upgrade PATH` in
# the root ctl): a process holds a file of files/ open for writing, a
# directory listed half way and its cwd in files/; after the upgrade its
# writes land in the same file (renamed meanwhile), its listing goes on
# with every name once, its cwd and the paths the kernel has cached stat
# to the same inodes, the descriptors the daemon holds count as before,
# and du and find over files/ agree with the workspace itself. Then the
# same again after a second upgrade, with what the first one restored.
# An upgrade the new program refuses before them changes nothing. Last,
# a crash of the server: the keeper's new one has no descriptor of the
# dead one's, so the holder's file, cwd and listing fail with ESTALE
# (never another file; a listing the kernel cached, the cwd's too, reads
# on from that cache, every name once), paths work again, and so do du and find.
# shellcheck disable=SC2016,SC2317  # functions called through sfs_until
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

WS=$SFS_TMP/ws
mkdir -p "$WS" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t72.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t72.conf HOME=$WS
N=3000 # names in big/: many readdir replies (a few dozen names each)
T=20   # timeout (s) of one step of the holder or of a file operation

# the workspace: big/ (long names), tree/ (nested, files of known sizes)
python3 - "$WS" "$N" <<'EOF' || { fail setup "cannot make the workspace"; exit 1; }
import os, sys
ws, n = sys.argv[1], int(sys.argv[2])
os.makedirs(ws + "/big")
for i in range(n):
    open("%s/big/name-%05d-%s" % (ws, i, "x" * 80), "w").close()
for d in ("tree/a/b/c", "tree/a/d", "tree/e"):
    os.makedirs(ws + "/" + d)
for i, p in enumerate(("tree/a/f1", "tree/a/b/f2", "tree/a/b/c/f3",
                       "tree/a/d/f4", "tree/e/f5", "tree/f6")):
    with open(ws + "/" + p, "w") as f:
        f.write("y" * (1000 * i + 17))
os.symlink("a/b", ws + "/tree/link")
EOF

sfs_mount
F=$MNT/files

fs() { timeout -k 2 "$T" "$@"; }
metric() { fs cat "$MNT/metrics" | awk -v k="sessionfs_$1" '$1 == k { print $2 }'; }
# the upgrades the daemon's log tells of (fs/upgrade.c: "upgrade: serving")
upgrades() { grep -c 'upgrade: serving' "$SFS_TMP/daemon.log"; }
upgrades_past() { [ "$(upgrades)" -gt "$1" ]; }
held_is() { [ "$(metric fds_held)" = "$1" ]; }

# the holder: steps on its own, told to go on by the test (files in $H)
H=$SFS_TMP/h
mkdir -p "$H"
cat >"$H/holder.py" <<'EOF'
import os, sys, time
F, H, T = sys.argv[1], sys.argv[2], float(sys.argv[3])

def say(name, text):
    with open(H + "/" + name + ".tmp", "w") as f:
        f.write(text)
    os.rename(H + "/" + name + ".tmp", H + "/" + name)

def wait(name):
    end = time.monotonic() + T
    while not os.path.exists(H + "/" + name):
        if time.monotonic() > end:
            sys.exit("holder: no " + name + " in time")
        time.sleep(0.02)

def listing(it, k, names):
    for e in it:
        names.append(e.name)
        if k and len(names) % k == 0:
            return

fd = os.open(F + "/log.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"before\n")
os.chdir(F + "/tree/a/b")
it = os.scandir(F + "/big")
names = []
listing(it, int(sys.argv[4]), names)
say("ready", "%d %d %d\n" % (os.fstat(fd).st_ino, os.stat(".").st_ino,
                              len(names)))
for step in ("1", "2"):
    wait("go" + step)
    os.write(fd, b"after " + step.encode() + b"\n")
    os.fsync(fd)
    listing(it, int(sys.argv[4]), names)
    here = sorted(os.listdir("."))
    say("step" + step, "%d %d %d %s\n" % (os.fstat(fd).st_ino,
        os.stat(".").st_ino, len(names), ",".join(here)))
listing(it, 0, names)
it.close()
with open(H + "/names", "w") as f:
    f.write("\n".join(names) + "\n")
# then a crash: what the kernel holds from before answers an error, or
# (a listing it cached) what it had
it = os.scandir(F + "/big")
names3 = []
listing(it, int(sys.argv[4]), names3)
say("ready3", "\n")
wait("go3")

def err(fn):
    try:
        fn()
        return 0
    except OSError as e:
        return e.errno

errs = (err(lambda: os.write(fd, b"lost\n")), err(lambda: os.fstat(fd)),
        err(lambda: os.listdir(".")), err(lambda: listing(it, 0, names3)))
with open(H + "/names3", "w") as f:
    f.write("\n".join(names3) + "\n")
fd2 = os.open(F + "/log-moved.txt", os.O_WRONLY | os.O_APPEND)
os.write(fd2, b"after the crash\n")
os.close(fd2)
say("step3", "%d %d %d %d\n" % errs)
it.close()
os.close(fd)
say("done", "ok\n")
EOF

# before anything is held: the descriptors the daemon holds for users
held0=$(metric fds_held)
python3 "$H/holder.py" "$F" "$H" "$T" $((N / 3)) >"$H/out" 2>&1 &
HOLDER=$!
SFS_BG_PIDS+=("$HOLDER")
if sfs_until "$T" test -e "$H/ready"; then pass "the holder has its file, cwd and listing open"; else
	fail "the holder has its file, cwd and listing open" "$(head -c 300 "$H/out")"
fi
read -r fino0 cino0 n0 <"$H/ready"
assert_true "the holder has read a third of big/ so far" "read $n0 of $N" test "${n0:-0}" -eq $((N / 3))
held1=$(metric fds_held)
assert_eq $((held0 + 2)) "$held1" "metrics: the daemon holds the holder's file and directory"

# paths the kernel has cached (the holder's cwd keeps tree/a/b's inode)
cached() { fs stat -c '%i %s %F' "$F/tree/a/b/f2" "$F/tree/a/b" "$F/tree/link" "$F/tree/a/b/c/f3" 2>&1; }
stat0=$(cached)
# the real file renamed behind the daemon's back: the open file is the
# file, not the name
mv "$WS/log.txt" "$WS/log-moved.txt"

# the server: the keeper's child (the keeper is $SFS_PID), else $SFS_PID
server() {
	local p
	for p in $(sfs_daemon_pids_at "$MNT"); do
		[ "$(sfs_ppid "$p")" = "$SFS_PID" ] && { echo "$p"; return 0; }
	done
	echo "$SFS_PID"
}
server0=$(server)

# one upgrade, then go on: STEP's checks
upgrade_step() { # STEP
	local step=$1 before fino cino n here
	before=$(upgrades)
	if fs bash -c 'echo "upgrade $1" >"$2"' _ "$SFS_BIN" "$MNT/ctl" 2>"$SFS_TMP/up.err"; then
		pass "upgrade $step: the ctl's write succeeds"
	else
		fail "upgrade $step: the ctl's write succeeds" "$(head -c 300 "$SFS_TMP/up.err")"
	fi
	sfs_until "$T" upgrades_past "$before"
	assert_eq $((before + 1)) "$(upgrades)" "upgrade $step: the daemon's log tells of it"
	assert_eq "$server0" "$(server)" "upgrade $step: the same server pid serves"
	assert_eq "$step" "$(grep -c 'files/: [0-9]* inodes and open files kept, 0 lost (ESTALE), 0 refused' "$SFS_TMP/daemon.log")" \
		"upgrade $step: the daemon's log says files/ kept everything"
	assert_eq "$held1" "$(metric fds_held)" "upgrade $step: the daemon holds as many descriptors for users as before"
	assert_eq "$stat0" "$(cached)" "upgrade $step: cached paths stat to the same inodes, sizes and types"
	: >"$H/go$step"
	if sfs_until "$T" test -e "$H/step$step"; then pass "upgrade $step: the holder goes on"; else
		fail "upgrade $step: the holder goes on" "$(head -c 300 "$H/out")"
		return 1
	fi
	read -r fino cino n here <"$H/step$step"
	assert_eq "$fino0 $cino0" "$fino $cino" "upgrade $step: its open file and cwd are the same inodes (fstat, stat .)"
	assert_eq $(((N / 3) * (step + 1))) "$n" "upgrade $step: its listing goes on by another third"
	assert_eq "c,f2" "$here" "upgrade $step: ls of its cwd"
}
# an upgrade the new program refuses (/bin/false reads no state): files/
# was saved, and goes on as it was
if fs bash -c 'echo "upgrade /bin/false" >"$1"' _ "$MNT/ctl" 2>/dev/null; then
	fail "a refused upgrade fails its write" "the write succeeded"
else
	pass "a refused upgrade fails its write"
fi
assert_eq "$held1" "$(metric fds_held)" "a refused upgrade: the daemon holds as many descriptors for users"
assert_eq "$stat0" "$(cached)" "a refused upgrade: cached paths stat as before"
assert_eq 0 "$(upgrades)" "a refused upgrade: the daemon's log tells of no upgrade"

upgrade_step 1
upgrade_step 2

if sfs_until "$T" test -e "$H/ready3"; then pass "the holder has listed big/ and opened it again"; else
	fail "the holder has listed big/ and opened it again" "$(head -c 300 "$H/out")"
fi
assert_file_eq "$WS/log-moved.txt" $'before\nafter 1\nafter 2\n' \
	"every write landed in the same file, renamed meanwhile"
check "no log.txt was made again" test ! -e "$WS/log.txt"

# the listing: every name of big/ once, nothing else
sort "$H/names" >"$H/names.sorted"
(cd "$WS/big" && printf "%s\n" *) | sort >"$H/names.real"
if cmp -s "$H/names.sorted" "$H/names.real"; then
	pass "the listing across two upgrades has every name once"
else
	fail "the listing across two upgrades has every name once" \
		"$(wc -l <"$H/names") names, $(sort "$H/names" | uniq -d | wc -l) twice, $(comm -13 "$H/names.sorted" "$H/names.real" | wc -l) missing"
fi

# a crash of the server (the keeper starts another on the same /dev/fuse,
# with no descriptor of the dead one's): the holder's file, cwd and
# listing answer ESTALE, never another file, and paths work again
recovered() { grep -c 'recovered after a crash' "$SFS_TMP/daemon.log"; }
recovered_past() { [ "$(recovered)" -gt "$1" ]; }
if [ "$server0" != "$SFS_PID" ]; then
	kill -KILL "$server0"
	sfs_until "$T" recovered_past 0
	assert_eq 1 "$(recovered)" "crash: the keeper's new server tells of its recovery"
	assert_true "crash: another server pid serves" "server $(server)" test "$(server)" != "$server0"
	stat1=$(cached)
	assert_eq "$(cut -d' ' -f2- <<<"$stat0")" "$(cut -d' ' -f2- <<<"$stat1")" "crash: cached paths stat again (sizes, types)"
	assert_eq 0 "$(metric fds_held)" "crash: the new server holds no descriptor for the holder"
	: >"$H/go3"
	if sfs_until "$T" test -e "$H/step3"; then pass "crash: the holder goes on"; else
		fail "crash: the holder goes on" "$(head -c 300 "$H/out")"
	fi
	read -r e1 e2 e3 e4 < <(cat "$H/step3" 2>/dev/null)
	assert_eq "116 116" "$e1 $e2" "crash: its write and fstat fail with ESTALE"
	# the cwd's listing, if the kernel cached it, is read from that cache
	# (no request reaches the new server); else it is ESTALE
	assert_true "crash: ls of its cwd fails with ESTALE or reads the kernel's cached listing" \
		"ls gave $e3" test "$e3" = 116 -o "$e3" = 0
	if [ "$e4" = 0 ]; then # read on from the kernel's cached listing
		assert_eq "$(cat "$H/names.real")" "$(sort "$H/names3")" \
			"crash: the cached listing read on has every name once, nothing else"
	else
		assert_eq 116 "$e4" "crash: the listing fails with ESTALE"
	fi
	assert_file_eq "$WS/log-moved.txt" $'before\nafter 1\nafter 2\nafter the crash\n' \
		"crash: the lost write went nowhere, one by the path landed"
else
	note "no keeper: the crash is not tried"
	: >"$H/go3"
fi
if sfs_until "$T" test -e "$H/done"; then pass "the holder ends"; else
	fail "the holder ends" "$(head -c 300 "$H/out")"
fi
wait "$HOLDER" 2>/dev/null
assert_eq 0 "$?" "the holder exits with 0"
sfs_until "$T" held_is "$held0"
assert_eq "$held0" "$(metric fds_held)" "closed: the daemon holds no descriptor of the holder's"

# du and find over files/ after all that, against the workspace
assert_eq "$(du -s --apparent-size -B1 "$WS/tree" | cut -f1)" \
	"$(fs du -s --apparent-size -B1 "$F/tree" | cut -f1)" "du over files/tree/ after the upgrades"
assert_eq "$(cd "$WS" && find tree big -printf '%y %s %p\n' | sort | md5sum)" \
	"$(cd "$F" && fs find tree big -printf '%y %s %p\n' | sort | md5sum)" "find over files/ after the upgrades"
assert_eq "$N" "$(fs find "$F/big" -type f | wc -l)" "find counts every file of big/"
assert_file_eq "$F/tree/a/b/c/f3" "$(head -c 2017 /dev/zero | tr '\0' y)" "a file reads back whole"

sfs_done
