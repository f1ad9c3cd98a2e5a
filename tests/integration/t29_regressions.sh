#!/usr/bin/env bash
# t29_regressions: cases a code review found crashing or hanging the daemon
# (each ran under ASan): `reset` while a run is active; a named run or a
# process removed while its cmd is open for writing, then the close; a
# blocked `cat exit` of a run (or process) that never started, when that
# run, process or session is removed.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/rg
check "mkdir sessions/rg" sfs_mkdir "$S"
assert_run_ok "cd and export" "$S" 'cd /tmp && export KEEP=1'

# 1. reset during a run: the run ends, the daemon lives, state is kept
sfs_run_bg "$S" 'sleep 30' 15
w=$SFS_BG
sleep 0.5
check "echo reset > ctl during a run" sfs_write "$S/ctl" $'reset\n'
if sfs_wait_gone "$w" 10; then pass "reset: the run's writer returns"; else
	fail "reset: the run's writer returns" "still blocked after 10 s"
fi
assert_run_ok "reset: the next run" "$S" 'echo "$PWD $KEEP"' 10
assert_file_eq "$S/stdout" $'/tmp 1\n' "reset: the next run has cwd and variable"

# 2. runs/NAME and procs/NAME removed while their cmd is open for writing
# (one process, one descriptor: any other close of a copy would submit
# the command, as closing cmd does)
if command -v python3 >/dev/null; then
	for d in runs procs; do
		check "mkdir $d/x" sfs_mkdir "$S/$d/x"
		out=$(timeout -k 2 10 python3 -c '
import os, sys
d, marker = sys.argv[1], sys.argv[2]
fd = os.open(d + "/cmd", os.O_WRONLY)
os.write(fd, ("touch %s\n" % marker).encode())
os.rmdir(d)
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print("close: errno %d" % e.errno)
' "$S/$d/x" "$SFS_TMP/ran-$d" 2>&1)
		note "$d: $out"
		check "$d: the daemon lives after the close" sfs_alive "$SFS_PID"
		assert_fails "$d/x is gone" test -e "$S/$d/x"
		sleep 0.3
		assert_fails "$d: the removed one's command did not run" \
			test -e "$SFS_TMP/ran-$d"
	done
else
	pass "skip: python3 is missing (one-descriptor open/rmdir/close)"
fi

# 3. a reader blocked on exit of a run or process that never starts, then
# it is removed: the reader returns
for d in runs procs; do
	check "mkdir $d/w" sfs_mkdir "$S/$d/w"
	timeout -k 2 10 cat "$S/$d/w/exit" >/dev/null 2>&1 &
	r=$!
	sleep 0.3
	check "rmdir $d/w" timeout 10 rmdir "$S/$d/w"
	if sfs_wait_gone "$r" 3; then pass "$d: the blocked reader returns"; else
		fail "$d: the blocked reader returns" "still blocked 3 s after rmdir"
	fi
done

# 4. the same when the whole session goes
S2=$MNT/sessions/rg2
check "mkdir sessions/rg2" sfs_mkdir "$S2"
check "mkdir runs/w in rg2" sfs_mkdir "$S2/runs/w"
timeout -k 2 10 cat "$S2/runs/w/exit" >/dev/null 2>&1 &
r=$!
sleep 0.3
check "rmdir sessions/rg2" timeout 10 rmdir "$S2"
if sfs_wait_gone "$r" 3; then pass "session: the blocked reader returns"; else
	fail "session: the blocked reader returns" "still blocked 3 s after rmdir"
fi

sfs_done
