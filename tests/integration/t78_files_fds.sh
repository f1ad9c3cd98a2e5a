#!/usr/bin/env bash
# t78_files_fds: a walk of a big tree through files/ never takes the
# descriptors sessions need. The kernel forgets files/'s inodes only
# under memory pressure, so a du leaves one node per file; each node
# keeps a handle and only the nodes used last keep a descriptor
# (fs/files_fd.c). Here the daemon's limit is 2048 (the test shell lowers
# its own, soft and hard) and the tree has 50,000 files: du, find and
# grep -r over it give no error, while a session's runs keep their
# output; the nodes' descriptors stay at their bound (read from metrics);
# an upgrade in place keeps every node; a node evicted long ago is
# opened again from its handle, across a rename in the backing
# directory; a file deleted there is gone.
# shellcheck disable=SC2016
SFS_T=${SFS_T:-30}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

ulimit -n 2048 || { fail "ulimit -n 2048" "cannot lower the limit"; SFS_DONE=1; exit 1; }
NFILES=50000
WS=$SFS_TMP/ws
mkdir -p "$WS/tree" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/t78.conf"
export SESSIONFS_CONFIG=$SFS_TMP/t78.conf HOME=$WS
# 500 directories of 100 files, each holding its own name
timeout 120 python3 - "$WS/tree" "$NFILES" <<'EOF'
import os, sys
top, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(top, "d%03d" % (i // 100))
    if i % 100 == 0:
        os.mkdir(d)
    with open(os.path.join(d, "f%05d" % i), "w") as f:
        f.write("f%05d\n" % i)
EOF
sfs_mount
F=$MNT/files
S=$MNT/sessions/w
metric() { timeout 5 cat "$MNT/metrics" | awk -v k="sessionfs_$1" '$1 == k { print $2 }'; }
check "mkdir sessions/w" sfs_mkdir "$S"

# a session runs one command after another while the walks go on; each
# run's output must be its own
cat >"$SFS_TMP/runs.sh" <<'EOF'
i=0
while [ ! -e "$2" ]; do
	i=$((i + 1))
	printf 'echo run-%d\n' "$i" >"$1/cmd" || { echo "cmd $i: failed"; exit 1; }
	out=$(cat "$1/stdout")
	[ "$out" = "run-$i" ] || { echo "run $i: stdout '$out'"; exit 1; }
done
echo "ok $i"
EOF
timeout -k 2 300 bash "$SFS_TMP/runs.sh" "$S" "$SFS_TMP/stop" >"$SFS_TMP/runs.out" 2>&1 &
RUNS=$!
SFS_BG_PIDS+=("$RUNS")

timeout -k 2 120 du -s "$F/tree" >"$SFS_TMP/du.out" 2>"$SFS_TMP/du.err"
assert_eq "0 ''" "$? '$(head -c 300 "$SFS_TMP/du.err")'" "du over $NFILES files: no error"
N=$(timeout -k 2 120 find "$F/tree" -type f 2>"$SFS_TMP/find.err" | wc -l)
assert_eq "$NFILES ''" "$N '$(head -c 300 "$SFS_TMP/find.err")'" "find sees every file, no error"
N=$(timeout -k 2 180 grep -rh '^f' "$F/tree" 2>"$SFS_TMP/grep.err" | wc -l)
assert_eq "$NFILES ''" "$N '$(head -c 300 "$SFS_TMP/grep.err")'" "grep -r reads every file, no error"
NODES=$(metric files_nodes)
FDS=$(metric files_node_fds)
BOUND=$(metric files_node_fds_bound)
note "nodes $NODES, their descriptors $FDS, bound $BOUND"
# how many the kernel still remembers depends on its memory pressure
# (not asserted: the unit test test_files.c evicts for certain)
assert_true "their descriptors stay at the bound ($FDS <= $BOUND)" "" test -n "$FDS" -a "${FDS:-99999}" -le "${BOUND:-0}"
DFDS=$(find "/proc/$SFS_SERVER/fd" -mindepth 1 2>/dev/null | wc -l)
assert_true "the daemon holds $DFDS descriptors, below its limit 2048" "" test "$DFDS" -lt 2048

# the session's runs went on, each with its own output
: >"$SFS_TMP/stop"
wait "$RUNS"
assert_eq 0 "$?" "the runs during the walks kept their output ($(cat "$SFS_TMP/runs.out"))"
assert_eq "" "$(timeout 5 cat "$S/error")" "no error line in the session"
assert_eq "0" "$(metric fd_refusals_total)" "no open refused for the descriptor bounds"

# an upgrade in place keeps every node, evicted ones by their handles:
# 1,000 files held open through files/ (more than the bound) keep their
# inodes in the kernel whatever its memory pressure
cat >"$SFS_TMP/hold.py" <<'EOF'
import os, sys, time
top, ready, go, out = sys.argv[1:5]
fds = {}
for i in range(1000, 2000):
    fds[i] = os.open("%s/d%03d/f%05d" % (top, i // 100, i), os.O_RDONLY)
open(ready, "w").close()
for _ in range(1200):
    if os.path.exists(go):
        break
    time.sleep(0.1)
bad = [i for i, fd in fds.items() if os.pread(fd, 16, 0) != b"f%05d\n" % i]
with open(out, "w") as f:
    f.write("%d %d\n" % (len(fds), len(bad)))
EOF
timeout -k 2 150 python3 "$SFS_TMP/hold.py" "$F/tree" "$SFS_TMP/ready" "$SFS_TMP/go" "$SFS_TMP/hold.out" 2>"$SFS_TMP/hold.err" &
HOLDER=$!
SFS_BG_PIDS+=("$HOLDER")
check "a holder opens 1,000 files through files/" sfs_until 60 test -e "$SFS_TMP/ready"
timeout -k 2 30 bash -c 'echo "upgrade $1" >"$2"' _ "$SFS_BIN" "$MNT/ctl" 2>"$SFS_TMP/up.err"
assert_eq "0 ''" "$? '$(cat "$SFS_TMP/up.err")'" "an upgrade after the walk succeeds"
KEPT=$(grep -o 'files/: [0-9]* inodes and open files kept, [0-9]* lost' "$SFS_TMP/daemon.log" | tail -n 1)
note "$KEPT"
KN=${KEPT#files/: }
KN=${KN%% *}
assert_true "it kept every node and open file, none lost ($KEPT)" "" test "${KN:-0}" -ge 2000 -a "${KEPT##*, }" = "0 lost"
: >"$SFS_TMP/go"
wait "$HOLDER"
assert_eq "1000 0" "$(cat "$SFS_TMP/hold.out" 2>/dev/null)" "the 1,000 files held read their own content after it"
FDS=$(metric files_node_fds)
BOUND=$(metric files_node_fds_bound)
assert_true "after it, the nodes' descriptors are at their bound ($FDS <= $BOUND)" "" test -n "$FDS" -a "${FDS:-99999}" -le "${BOUND:-0}"

# the first file's node was evicted long ago: opened again from its
# handle, after a rename in the backing directory (the kernel still has
# the old name's inode open through a descriptor of ours)
exec {HOLD}<"$F/tree/d000/f00000"
mv "$WS/tree/d000/f00000" "$WS/tree/d000/moved"
assert_eq "f00000" "$(timeout 5 cat "/proc/self/fd/$HOLD")" "an open file of an evicted node reads on"
exec {HOLD}<&-
assert_eq "f00000" "$(timeout 5 cat "$F/tree/d000/moved")" "the renamed file reads through files/"
rm "$WS/tree/d000/f00001"
assert_fails "a file deleted in the backing directory is gone" stat "$F/tree/d000/f00001"
echo new >"$WS/tree/d000/f00001"
assert_eq "new" "$(timeout 5 cat "$F/tree/d000/f00001")" "a new file of that name is the new one"
assert_eq "run-ok" "$(sfs_run_out "$S" 'echo run-ok')" "the session still runs"
sfs_done
