#!/usr/bin/env bash
# t45_fd_bounds: issue 26 items 4 and 8. The descriptors the daemon holds
# for one user's open files are bounded (max_fds_per_user: EMFILE for her
# alone), and below the cut (the limit less fd_reserve: ENFILE for every
# user's open) the daemon's own work still has the reserve: root's runs,
# another user's mkdir and health (within 1 s) go on. The bound is given
# back at close, at the kill of the holder and when the daemon ends the
# session whose run holds them; the descriptors files/ keeps for the
# inodes of open files stop at the cut too. A spool that cannot be opened
# makes the read fail (EMFILE, EIO), never an empty success, and
# result.json an error rather than "stdout": "".
#
# The test shell lowers its own RLIMIT_NOFILE (soft and hard) to 1024 so
# that the daemon it starts has that limit: the bounds are computed from
# the daemon's limit, read back from metrics, never assumed here.
# shellcheck disable=SC2016,SC2317  # functions called through sfs_until
SFS_T=${SFS_T:-15}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

HER=1000    # she holds descriptors (no passwd entry is needed)
OTHER=65534 # another user: his mkdir must still work
# a python3 every user may run (not a shim in root's home)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
for tool in setpriv "$PY"; do
	if ! command -v "$tool" >/dev/null || [ "$(id -u)" != 0 ]; then
		pass "skip: needs root and $tool"
		SFS_DONE=1
		exit 0
	fi
done
ulimit -n 1024 || { fail "ulimit -n 1024" "cannot lower the limit"; SFS_DONE=1; exit 1; }

AS_HER=(setpriv --reuid="$HER" --regid="$HER" --clear-groups --)
as() { # UID CMD...: CMD as that user, under a timeout
	local u=$1
	shift
	timeout -k 2 "$SFS_T" setpriv --reuid="$u" --regid="$u" --clear-groups -- "$@"
}
as_her() { as "$HER" "$@"; }

RT=$SFS_TMP/rt
WS=$SFS_TMP/ws
U=$SFS_TMP/u # where her processes write their reports
mkdir -p "$RT" "$WS" "$U"
chmod 755 "$SFS_TMP" "$WS"
chmod 777 "$U"
echo ws-file >"$WS/f"
mkdir "$WS/d" # more files than the daemon's limit
for ((i = 0; i < 1100; i++)); do echo "f$i" >"$WS/d/f$i"; done
chmod -R a+rX "$WS"
MARK=fdholder$$
sfs_marker "$MARK"

# holder.py PATH N RELEASE REPORT MARK: opens PATH (with %d: PATH % i for
# the i-th) and reads a byte of it up to N times, writes "HELD ERRNO" (ERRNO of the first refusal, or none)
# to REPORT, holds them until RELEASE exists (120 s at most), closes them
cat >"$U/holder.py" <<'EOF'
import errno, os, sys, time
path, n, release, report = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
fds, err = [], "none"
for i in range(n):
    try:
        fd = os.open(path % i if "%d" in path else path, os.O_RDONLY)
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
    try:
        os.read(fd, 1)
    except OSError as e:
        os.close(fd)
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
    fds.append(fd)
with open(report + ".tmp", "w") as f:
    f.write("%d %s\n" % (len(fds), err))
os.rename(report + ".tmp", report)
deadline = time.time() + 120
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.05)
for fd in fds:
    os.close(fd)
EOF
chmod 644 "$U/holder.py"

# fails_with ERRNO MSG CMD...: CMD fails and its error line ends with
# ERRNO's text (EMFILE's is a prefix of ENFILE's: the whole end is compared)
fails_with() {
	local text err=$SFS_TMP/err.$((++SFS_N)) rc
	case $1 in
	EMFILE) text='Too many open files' ;;
	ENFILE) text='Too many open files in system' ;;
	EIO) text='Input/output error' ;;
	esac
	timeout -k 2 "$SFS_T" "${@:3}" >"$err.out" 2>"$err"
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q ": $text\$" "$err" && [ ! -s "$err.out" ]; then
		pass "$2"
	else
		fail "$2" "status $rc, output $(sfs_show "$err.out"), error $(head -c 200 "$err" | tr '\n' ' ')"
	fi
}

# metric NAME: its value in a fresh read of metrics
metric() { timeout 5 cat "$MNT/metrics" | awk -v k="sessionfs_$1" '$1 == k { print $2 }'; }
held_is() { [ "$(metric fds_held)" = "$1" ]; }

# health_ms: how long one read of health took (ms), 9999 if it failed
health_ms() {
	local t0 t1
	t0=$(now_ms)
	timeout 5 cat "$MNT/health" 2>/dev/null | head -n 1 | grep -qx ok || { echo 9999; return; }
	t1=$(now_ms)
	echo $((t1 - t0))
}

# watch_health OUT UNTIL: reads health every 50 ms until file UNTIL exists
# (60 s at most), the slowest read's ms into OUT
watch_health() {
	local max=0 ms i
	for ((i = 0; i < 1200; i++)); do
		ms=$(health_ms)
		[ "$ms" -gt "$max" ] && max=$ms
		[ -e "$2" ] && break
		sleep 0.05
	done
	echo "$max" >"$1"
}

# hold LABEL PATH N: starts holder.py as her on PATH (N tries), waits for
# its report while health is watched; sets HPID, HELD, HERR, REL
hold() {
	local rep=$U/$1.report
	REL=$U/$1.release
	as_her "$PY" "$U/holder.py" "$2" "$3" "$REL" "$rep" "$MARK" &
	HPID=$!
	SFS_BG_PIDS+=("$HPID")
	watch_health "$SFS_TMP/$1.health" "$rep"
	read -r HELD HERR <"$rep" 2>/dev/null || { HELD=0; HERR=noreport; }
	note "$1: held $HELD, then $HERR; slowest health read $(cat "$SFS_TMP/$1.health") ms"
	assert_lt "$(cat "$SFS_TMP/$1.health")" 1000 "$1: health answered within 1 s while she opened" " ms"
}

# release LABEL: lets the holder close its files, waits until it ended
release() {
	touch "$REL"
	if sfs_wait_gone "$HPID" 20; then pass "$1: the holder closed and ended"; else
		fail "$1: the holder closed and ended" "pid $HPID still runs"
	fi
}

# ---------------------------------------------------------------- the bound per user

CFG=$SFS_TMP/bound.conf
printf 'runtime_dir = "%s";\nworkspace = "%s";\n' "$RT" "$WS" >"$CFG"
sfs_start_mount "bound" -o allow_other -c "$CFG" || { SFS_DONE=1; exit 1; }
# sessions are not charged to their owners: no more of them than the
# descriptors below the reserve have room for (18 each)
check "bound: max_sessions lowered to what 768 descriptors hold" \
	grep -q "max_sessions lowered from 1024 to 42" "$SFS_TMP/daemon.log"
BOUND=$(metric fds_per_user)
CUT=$(metric fds_cut)
note "the daemon's bound per user $BOUND, cut $CUT (of its limit 1024)"
assert_true "metrics give a bound per user below the cut below the limit" "bound '$BOUND' cut '$CUT'" \
	test "${BOUND:-0}" -gt 0 -a "${BOUND:-0}" -lt "${CUT:-0}" -a "${CUT:-0}" -lt 1024

HS=$MNT/sessions/fdu
check "she makes her session" as_her mkdir "$HS"
check "she runs a command in it" as_her bash -c 'echo "echo hello-fd" >"$1/cmd"' _ "$HS"
assert_eq hello-fd "$(as_her cat "$HS/stdout")" "she reads its stdout"

hold bound "$HS/stdout" $((BOUND + 20))
assert_eq "$BOUND EMFILE" "$HELD $HERR" "she holds $BOUND stdout files read, then EMFILE"
assert_eq "$BOUND" "$(metric fds_held)" "metrics: the daemon holds her $BOUND descriptors"
assert_lt "$(health_ms)" 1000 "bound: health answers within 1 s while she holds them" " ms"
fails_with EMFILE "bound: her next cat of stdout fails with EMFILE (not empty)" "${AS_HER[@]}" cat "$HS/stdout"
fails_with EMFILE "bound: her cat of output fails with EMFILE" "${AS_HER[@]}" cat "$HS/output"
fails_with EMFILE "bound: her open of a files/ file fails with EMFILE" "${AS_HER[@]}" cat "$MNT/files/f"
check "bound: her session's error file says why" grep -q "max_fds_per_user" "$HS/error"
assert_eq root-ok "$(sfs_run_out "$MNT/sessions/default" 'echo root-ok')" "bound: root's run succeeds with its output"
check "bound: another user's mkdir works" as "$OTHER" mkdir "$MNT/sessions/other"
check "bound: and his run" as "$OTHER" bash -c 'echo "echo other-ok" >"$1/cmd"' _ "$MNT/sessions/other"
assert_eq other-ok "$(as "$OTHER" cat "$MNT/sessions/other/stdout")" "bound: he reads its output"
check "bound: his rmdir" as "$OTHER" rmdir "$MNT/sessions/other"
release bound
if sfs_until 10 held_is 0; then pass "bound: closed, the daemon holds none of hers"; else
	fail "bound: closed, the daemon holds none of hers" "fds_held $(metric fds_held)"
fi
assert_eq hello-fd "$(as_her cat "$HS/stdout")" "bound: after her close, her reads work again"
assert_eq ws-file "$(as_her cat "$MNT/files/f")" "bound: and her files/ opens"

# killed holder: the kernel releases its files
hold killed "$HS/stdout" $((BOUND + 5))
assert_eq "$BOUND EMFILE" "$HELD $HERR" "killed: she holds $BOUND again"
{ sfs_kill_tree "$HPID"; wait "$HPID"; } 2>/dev/null # no "Killed" line
if sfs_until 10 held_is 0; then pass "killed: her holder killed, the daemon holds none of hers"; else
	fail "killed: her holder killed, the daemon holds none of hers" "fds_held $(metric fds_held)"
fi
assert_eq hello-fd "$(as_her cat "$HS/stdout")" "killed: her reads work again"

# a run of hers holds them; the daemon ends its session (rmdir)
KS=$MNT/sessions/fdk
check "session: she makes a second session" as_her mkdir "$KS"
rep=$U/session.report
as_her bash -c 'echo "$2 $3 $4 $5 $6 $7 $8" >"$1/cmd"' _ "$KS" "$PY" "$U/holder.py" "$HS/stdout" \
	$((BOUND + 5)) "$U/session.release" "$rep" "$MARK" 2>/dev/null &
SFS_BG_PIDS+=("$!")
sfs_until 30 test -s "$rep"
read -r HELD HERR <"$rep" 2>/dev/null || { HELD=0; HERR=noreport; }
assert_eq "$BOUND EMFILE" "$HELD $HERR" "session: her run holds $BOUND, then EMFILE"
check "session: she deletes that session" as_her rmdir "$KS"
if sfs_until 10 held_is 0; then pass "session: its run killed, the daemon holds none of hers"; else
	fail "session: its run killed, the daemon holds none of hers" "fds_held $(metric fds_held)"
fi
assert_eq hello-fd "$(as_her cat "$HS/stdout")" "session: her reads work again"

# ---------------------------------------------------------------- a spool that cannot be opened

D=$MNT/sessions/default
check "gone: root runs a command of 12 bytes of output" sfs_run "$D" 'echo twelve-bytes'
spool=$(grep -lx twelve-bytes "$RT"/sessionfs*/*/s*/r*.out 2>/dev/null | head -n 1)
if [ -n "$spool" ] && rm -f "$spool"; then
	assert_eq 13 "$(stat -c %s "$D/stdout")" "gone: stat still says 13 bytes"
	fails_with EIO "gone: cat stdout fails with EIO (not empty)" cat "$D/stdout"
	fails_with EIO "gone: cat output fails with EIO" cat "$D/output"
	fails_with EIO "gone: result.json fails with EIO (no \"stdout\": \"\")" cat "$D/result.json"
	check "gone: the error file says why" grep -q "stdout: cannot be read: its spool file" "$D/error"
else
	fail "gone: the run's spool file is found and removed" "none in $RT"
fi
sfs_check_umount "bound"

# ---------------------------------------------------------------- the cut

printf 'runtime_dir = "%s";\nworkspace = "%s";\nmax_fds_per_user = 100000;\n' "$RT" "$WS" >"$CFG"
sfs_start_mount "cut" -o allow_other -c "$CFG" || { SFS_DONE=1; exit 1; }
CUT=$(metric fds_cut)
HS=$MNT/sessions/fdu
check "cut: she makes her session" as_her mkdir "$HS"
check "cut: she runs a command in it" as_her bash -c 'echo "echo hello-fd" >"$1/cmd"' _ "$HS"
hold cut "$HS/stdout" "$CUT"
assert_eq ENFILE "$HERR" "cut: she holds stdout files until ENFILE (held $HELD, cut $CUT)"
assert_lt "$(health_ms)" 1000 "cut: health answers within 1 s" " ms"
fails_with ENFILE "cut: her next cat of stdout fails with ENFILE (not empty)" "${AS_HER[@]}" cat "$HS/stdout"
check "cut: root's run succeeds (its spawn has the reserve)" sfs_run "$MNT/sessions/default" 'echo root-ok'
check "cut: root's result.json has its output" grep -q '"stdout":"root-ok\\n"' "$MNT/sessions/default/result.json"
fails_with ENFILE "cut: root's read of stdout is refused with ENFILE too" cat "$MNT/sessions/default/stdout"
check "cut: another user's mkdir works" as "$OTHER" mkdir "$MNT/sessions/other"
check "cut: and his run" as "$OTHER" bash -c 'echo "echo other-ok" >"$1/cmd"' _ "$MNT/sessions/other"
check "cut: his rmdir" as "$OTHER" rmdir "$MNT/sessions/other"
release cut
assert_eq root-ok "$(timeout 5 cat "$MNT/sessions/default/stdout")" "cut: released, root reads its stdout"
assert_eq hello-fd "$(as_her cat "$HS/stdout")" "cut: and she hers"

# files/: each open file costs its own descriptor, and the nodes' ones
# stop at their bound (they keep handles beyond it: fs/files_fd.c)
hold files "$MNT/files/d/f%d" 1100
assert_eq ENFILE "$HERR" "files: she holds files/ files open until ENFILE (held $HELD)"
NFDS=$(metric files_node_fds)
NBOUND=$(metric files_node_fds_bound)
assert_true "files: the nodes' descriptors stay at their bound" "$NFDS of $NBOUND" \
	test -n "$NFDS" -a "${NFDS:-1}" -le "${NBOUND:-0}"
assert_true "files: her open files took the rest of the cut" "held $HELD, nodes $NFDS, cut $CUT" \
	test "$HELD" -ge $((CUT - NBOUND - 100))
check "files: root's run succeeds" sfs_run "$MNT/sessions/default" 'echo root-files'
check "files: root's result.json has its output" grep -q '"stdout":"root-files\\n"' "$MNT/sessions/default/result.json"
check "files: another user's mkdir works" as "$OTHER" mkdir "$MNT/sessions/other2"
check "files: his rmdir" as "$OTHER" rmdir "$MNT/sessions/other2"
release files
assert_eq f7 "$(as_her cat "$MNT/files/d/f7")" "files: released, she reads files/ again"
sfs_check_umount "cut"

# ---------------------------------------------------------------- what she makes

# Her contexts and procs (empty, or ended) keep no descriptor of the
# daemon's: each cgroup directory is opened only while it is used. More
# of them than the daemon's limit must leave root's runs and reads,
# another user's mkdir and health as they were (the old daemon kept one
# descriptor each, and ran out of all of them).
printf 'runtime_dir = "%s";\nworkspace = "%s";\n' "$RT" "$WS" >"$CFG"
sfs_start_mount "objects" -o allow_other -c "$CFG" || { SFS_DONE=1; exit 1; }
CUT=$(metric fds_cut)
nfds() { find "/proc/$SFS_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
NS=4 NC=256 NP=128 # 4 x 256 contexts and 128 procs: more than the limit (1024)
for ((i = 1; i <= NS; i++)); do # its shell started: the session's own descriptors are counted before
	check "objects: she makes session o$i and runs in it" as_her bash -c 'mkdir "$1" && echo true >"$1/cmd"' _ "$MNT/sessions/o$i"
done
FDS0=$(nfds)
# make.sh MNT NS NC NP DONE: contexts, empty procs and procs that ended;
# writes "CONTEXTS PROCS" (how many were made) to DONE
cat >"$U/make.sh" <<'EOF2'
m=$1 c=0 p=0
for ((i = 1; i <= $2; i++)); do
	for ((j = 1; j <= $3; j++)); do mkdir "$m/sessions/o$i/contexts/c$j" && c=$((c + 1)); done
done
for ((j = 1; j <= $4; j++)); do
	mkdir "$m/sessions/o1/procs/p$j" || continue
	p=$((p + 1))
	[ $((j % 2)) = 0 ] && echo true >"$m/sessions/o1/procs/p$j/cmd"
done
echo "$c $p" >"$5.tmp" && mv "$5.tmp" "$5"
EOF2
chmod 644 "$U/make.sh"
timeout -k 2 120 setpriv --reuid="$HER" --regid="$HER" --clear-groups -- bash "$U/make.sh" "$MNT" "$NS" "$NC" "$NP" "$U/made" &
SFS_BG_PIDS+=("$!")
watch_health "$SFS_TMP/objects.health" "$U/made"
read -r MC MP <"$U/made" 2>/dev/null || { MC=0; MP=0; }
assert_eq "$((NS * NC)) $NP" "$MC $MP" "objects: she made all her contexts and procs (none refused)"
assert_lt "$(cat "$SFS_TMP/objects.health")" 1000 "objects: health answered within 1 s while she made them" " ms"
# ended_all: every even proc has ended
ended_all() { ! grep -lx 'state running' "$MNT"/sessions/o1/procs/p*[02468]/status >/dev/null 2>&1; }
check "objects: her procs that ran have ended" sfs_until 20 ended_all
FDS1=$(nfds)
note "objects: the daemon's descriptors $FDS0 before her $MC contexts and $MP procs, $FDS1 with them (cut $CUT)"
assert_lt "$((FDS1 - FDS0))" 32 "objects: they keep (almost) no descriptor of the daemon's" ""
assert_eq 0 "$(metric fds_held)" "objects: metrics count no descriptor held for her"
assert_lt "$(health_ms)" 1000 "objects: health answers within 1 s" " ms"
assert_eq root-obj "$(sfs_run_out "$MNT/sessions/default" 'echo root-obj')" "objects: root's run succeeds and he reads its stdout"
check "objects: root reads its output" grep -qx root-obj "$MNT/sessions/default/output"
check "objects: another user's mkdir works" as "$OTHER" mkdir "$MNT/sessions/other"
check "objects: and his context's mkdir" as "$OTHER" mkdir "$MNT/sessions/other/contexts/k"
check "objects: his rmdir" as "$OTHER" rmdir "$MNT/sessions/other/contexts/k" "$MNT/sessions/other"
check "objects: a proc of hers still runs and ends" as_her bash -c 'mkdir "$1/q" && echo "echo q-ok" >"$1/q/cmd"' _ "$MNT/sessions/o2/procs"
check "objects: and its stdout says so" sfs_until 20 grep -qx q-ok "$MNT/sessions/o2/procs/q/stdout"
check "objects: she removes her sessions" as_her bash -c 'for ((i = 1; i <= $2; i++)); do rmdir "$1/o$i" || exit; done' _ "$MNT/sessions" "$NS"
few() { [ "$(nfds)" -le "$FDS0" ]; }
if sfs_until 20 few; then pass "objects: removed, the daemon is back to $FDS0 descriptors or fewer"; else
	fail "objects: removed, the daemon is back to $FDS0 descriptors or fewer" "$(nfds)"
fi
assert_eq 0 "$(metric fds_held)" "objects: and metrics count none for her"
sfs_check_umount "objects"

# ---------------------------------------------------------------- what her processes keep

# A running proc keeps its pipes and spools, a context's interpreter its
# fifos, pipes and an execution's spools: they count against her bound
# from the start to the end, and a start past it fails with EMFILE and a
# line in error. Root, another user and health go on; her count is back
# at the end of her processes.
sfs_start_mount "charged" -o allow_other -c "$CFG" || { SFS_DONE=1; exit 1; }
BOUND=$(metric fds_per_user)
CS=$MNT/sessions/ch
check "charged: she makes her session" as_her mkdir "$CS"
check "charged: and a context in it" as_her mkdir "$CS/contexts/k"
check "charged: its python runs" as_her bash -c 'echo "x = 6 * 7" >"$1/code"' _ "$CS/contexts/k"
CHK=$(metric fds_held)
note "charged: a running context counts $CHK of her $BOUND"
assert_true "charged: a running context counts against her bound" "fds_held $CHK" test "${CHK:-0}" -gt 0
# starts.sh DIR N OUT: procs r1..rN running sleep, until a start fails;
# "STARTED ERROR-LINE" to OUT
cat >"$U/starts.sh" <<'EOF2'
n=0 err=none
for ((j = 1; j <= $2; j++)); do
	mkdir "$1/procs/r$j" || { err="mkdir failed"; break; }
	# cat says what the close (the start) returned; bash's own > would not
	if ! out=$(echo "exec sleep 120" | cat 2>&1 >"$1/procs/r$j/cmd"); then err=$out; break; fi
	n=$j
done
echo "$n $err" >"$3.tmp" && mv "$3.tmp" "$3"
EOF2
chmod 644 "$U/starts.sh"
as_her bash "$U/starts.sh" "$CS" $((BOUND + 10)) "$U/started" &
SFS_BG_PIDS+=("$!")
watch_health "$SFS_TMP/charged.health" "$U/started"
read -r NR ERR <"$U/started" 2>/dev/null || { NR=0; ERR=noreport; }
HELD=$(metric fds_held)
note "charged: $NR procs started, then: $ERR; fds_held $HELD of $BOUND"
assert_lt "$(cat "$SFS_TMP/charged.health")" 1000 "charged: health answered within 1 s while she started them" " ms"
assert_true "charged: her starts stopped with EMFILE" "after $NR: $ERR" grep -q 'Too many open files$' <<<"$ERR"
assert_true "charged: at her bound: what she holds, and one more proc, is past it" "held $HELD, bound $BOUND, $NR procs" \
	test "$NR" -gt 0 -a "$HELD" -le "$BOUND" -a $((HELD + (HELD - CHK) / NR)) -gt "$BOUND"
check "charged: her session's error says why" grep -q "procs/r$((NR + 1)): cannot start: uid $HER would pass max_fds_per_user" "$CS/error"
assert_eq error "$(timeout 5 awk '$1 == "state" { print $2 }' "$CS/procs/r$((NR + 1))/status")" "charged: the refused proc failed"
check "charged: a new context of hers does not start" as_her mkdir "$CS/contexts/k2"
fails_with EMFILE "charged: its code fails" "${AS_HER[@]}" bash -c 'echo "1" | cat >"$1/code"' _ "$CS/contexts/k2"
check "charged: and the error says why" grep -q "contexts/k2: cannot start python3: uid $HER would pass max_fds_per_user" "$CS/error"
assert_lt "$(health_ms)" 1000 "charged: health answers within 1 s" " ms"
assert_eq root-ch "$(sfs_run_out "$MNT/sessions/default" 'echo root-ch')" "charged: root's run succeeds and he reads its stdout"
check "charged: another user's mkdir works" as "$OTHER" mkdir "$MNT/sessions/other"
check "charged: and his proc starts" as "$OTHER" bash -c 'mkdir "$1/procs/q" && echo "echo his-ok" >"$1/procs/q/cmd"' _ "$MNT/sessions/other"
check "charged: and ends with its output" sfs_until 20 grep -qx his-ok "$MNT/sessions/other/procs/q/stdout"
check "charged: his rmdir" as "$OTHER" rmdir "$MNT/sessions/other"
check "charged: she removes her procs" as_her bash -c 'rmdir "$1"/procs/r*' _ "$CS"
back() { [ "$(metric fds_held)" = "$CHK" ]; }
if sfs_until 20 back; then pass "charged: her procs gone, her count is back to the context's $CHK"; else
	fail "charged: her procs gone, her count is back to the context's $CHK" "fds_held $(metric fds_held)"
fi
check "charged: her new context restarts" as_her bash -c 'echo restart >"$1/ctl" && echo "6 * 7" >"$1/code"' _ "$CS/contexts/k2"
assert_file_eq "$CS/contexts/k2/result" $'42\n' "charged: and answers"
check "charged: an ended proc of hers" as_her bash -c 'mkdir "$1/procs/e" && echo "echo ended" >"$1/procs/e/cmd"' _ "$CS"
check "charged: ended with its output" sfs_until 20 grep -qx ended "$CS/procs/e/stdout"
check "charged: she removes her session" as_her rmdir "$CS"
if sfs_until 20 held_is 0; then pass "charged: her session gone, the daemon counts none of hers"; else
	fail "charged: her session gone, the daemon counts none of hers" "fds_held $(metric fds_held)"
fi
sfs_check_umount "charged"

SFS_DONE=1
exit 0
