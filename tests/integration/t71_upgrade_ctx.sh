#!/usr/bin/env bash
# t71_upgrade_ctx: code contexts through an upgrade in place (`upgrade`
# written to the root ctl: the server execve's itself, same pid, same
# mount). A python context holding x = 41 and a node context holding
# y = 7 keep their interpreters (the same pids) and their state; an
# execution in progress across the upgrade (sleep 2, then x + 1) ends
# after it with its real result, 42, and its writer's close returns then
# with status 0; one queued behind it runs after it (x * 2 gives 82); the
# finished executions' result, results/, result.json and status are the
# same bytes and results/ and env/ the same inodes; a reader that has
# read a part of result.json before the upgrade (a finished execution's,
# and a running one's, whose copy was taken before its result) reads the
# rest of the same copy after it; the contexts' settings are the same,
# and an execution's timeout armed before the upgrade interrupts it after
# it; and the contexts go on taking code. A
# session's run across the same upgrade: its writer's close returns once
# the run has ended (the kernel sends the waiting close again). After it
# ctl kill, restart and rmdir work on the interpreters it took over.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/u
check "mkdir sessions/u" sfs_mkdir "$S"
CS=$S/contexts
P=$CS/py
J=$CS/js

# code NAME TEXT [TIMEOUT]: run TEXT in context NAME; the writer's status
code() { sfs_write "$CS/$1/code" "$2"$'\n' "${3:-$SFS_T}"; }

# code_bg NAME TEXT: the same in the background; its pid in BG
code_bg() {
	local f=$SFS_TMP/code.$((++SFS_N))
	printf '%s\n' "$2" >"$f"
	timeout -k 2 "$SFS_T" bash -c 'cat >"$1"' _ "$CS/$1/code" <"$f" 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	BG=$!
	SFS_BG_PIDS+=("$BG")
}

# field FILE KEY: the value of KEY in a key value file
field() { timeout 5 awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# field_is FILE KEY VALUE: KEY of FILE is VALUE
field_is() { [ "$(field "$1" "$2")" = "$3" ]; }

# state_is FILE STATE: the status FILE says STATE
state_is() { field_is "$1" state "$2"; }

# inodes DIR...: "inode name" of each entry of each DIR
inodes() { timeout 5 ls -i "$@"; }

# snapshot OUT: the bytes of the finished executions' files, and the
# inodes of their results and of the contexts' variables
snapshot() {
	{
		for f in result results/1/text status result.json error; do
			printf '== %s\n' "$f"
			timeout 5 cat "$P/runs/2/$f"
		done
		printf '== js\n'
		timeout 5 cat "$J/runs/2/result"
		printf '== settings\n'
		timeout 5 cat "$P/language" "$P/cwd" "$P/timeout" "$J/language" "$J/timeout"
		inodes "$P/runs/2/results" "$P/runs/2/results/1" "$P/env" "$J/env"
		inodes -d "$P" "$J" "$P/runs/1" "$P/runs/2"
	} >"$1" 2>&1
}

# reader FILE OUT FLAG: reads 64 bytes of FILE, then once FLAG exists the
# rest, all into OUT (one open file across the upgrade)
reader() {
	timeout -k 2 "$SFS_T" python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
out = open(sys.argv[2], "wb")
out.write(os.read(fd, 64))
out.flush()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    out.write(b)
out.close()' "$1" "$2" "$3" {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_BG_PIDS+=("$!")
	READER=$!
}

# has_bytes FILE N: FILE has at least N bytes
has_bytes() { [ "$(wc -c <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }

check "mkdir contexts/py" sfs_mkdir "$P"
check "mkdir contexts/js" sfs_mkdir "$J"
check "js: language javascript" sfs_write "$J/language" $'javascript\n'
check "env/SFS_UP" sfs_write "$P/env/SFS_UP" $'kept\n'
check "cwd /tmp" sfs_write "$P/cwd" $'/tmp\n'
check "timeout 60000" sfs_write "$P/timeout" $'60000\n'
T=$CS/pt
check "mkdir contexts/pt" sfs_mkdir "$T"
check "pt: timeout 2500" sfs_write "$T/timeout" $'2500\n'
check "pt: a first code" code pt 'import time'
check "x = 41" code py 'x = 41'
check "x" code py 'x'
assert_file_eq "$P/result" $'41\n' "x is 41 before the upgrade"
check "let y = 7" code js 'let y = 7'
check "y" code js 'y'
assert_file_eq "$J/result" $'7\n' "y is 7 before the upgrade"
PYPID=$(field "$P/status" pid)
JSPID=$(field "$J/status" pid)
assert_true "the interpreters run" "pids '$PYPID' '$JSPID'" sfs_alive "$PYPID"
assert_true "node runs" "pid '$JSPID'" sfs_alive "$JSPID"
snapshot "$SFS_TMP/before"

# a reader of a finished execution's result.json, in the middle of it
FLAG=$SFS_TMP/upgraded
reader "$P/runs/2/result.json" "$SFS_TMP/json.done" "$FLAG"
R_DONE=$READER
check "the reader has read a part" sfs_until 10 has_bytes "$SFS_TMP/json.done" 64

# the execution in progress across the upgrade, and one queued behind it
code_bg py 'import time; time.sleep(2); x + 1'
RUNNING=$BG
check "the sleep runs" sfs_until 10 state_is "$P/runs/3/status" running
code_bg py 'x * 2'
QUEUED=$BG
check "x * 2 is queued" sfs_until 10 state_is "$P/runs/4/status" queued
# a reader of the running execution's result.json: its copy has no result
reader "$P/runs/3/result.json" "$SFS_TMP/json.running" "$FLAG"
R_RUN=$READER
check "the second reader has read a part" sfs_until 10 has_bytes "$SFS_TMP/json.running" 64

# a session's run across it too: its writer's close waits the same way
check "a first run" sfs_run "$S" true
sfs_run_bg "$S" 'sleep 2; echo from the run'
SRUN=$SFS_BG
check "the session's run runs" sfs_until 10 state_is "$S/runs/2/status" running

# an execution whose timeout falls after the upgrade
code_bg pt 'time.sleep(30)'
TIMED=$BG
check "the one that times out runs" sfs_until 10 state_is "$T/runs/2/status" running

SERVER=$(field "$MNT/health" pid)
t0=$(now_ms)
check "upgrade" sfs_write "$MNT/ctl" $'upgrade\n'
# the new program has taken over once health counts the upgrade
check "the server was executed again" sfs_until 20 field_is "$MNT/health" upgrades 1
assert_eq "$SERVER" "$(field "$MNT/health" pid)" "the server keeps its pid"
check "the mount answers" timeout 10 test -d "$P/runs"
note "the upgrade took $(($(now_ms) - t0)) ms (the sleep is 2 s)"
: >"$FLAG"

check "the running execution's writer returns" sfs_wait_gone "$RUNNING" 20
wait "$RUNNING"
assert_eq 0 "$?" "its close returns 0 (it ended with its result)"
assert_file_eq "$P/runs/3/result" $'42\n' "the execution in progress gives 42"
assert_file_eq "$P/runs/3/error" "" "and no error"
check "the queued execution's writer returns" sfs_wait_gone "$QUEUED" 20
assert_file_eq "$P/runs/4/result" $'82\n' "the queued one ran after it: 82"
check "the session run's writer returns" sfs_wait_gone "$SRUN" 20
wait "$SRUN"
assert_eq 0 "$?" "its close returns 0"
assert_file_eq "$S/runs/2/stdout" $'from the run\n' "once the run has ended"
check "the timed out one's writer returns" sfs_wait_gone "$TIMED" 20
assert_lt $(($(now_ms) - t0)) 10000 "its timeout ended it after the upgrade" " ms"
assert_file_match "$T/runs/2/error" '"name": "KeyboardInterrupt"' "a timeout interrupts it"
check "x again" code py 'x'
assert_file_eq "$P/result" $'41\n' "x is still 41 after the upgrade"
assert_eq "$PYPID" "$(field "$P/status" pid)" "the same python interpreter"
assert_eq 5 "$(field "$P/status" execution_count)" "its execution count goes on"
check "y again" code js 'y + 1'
assert_file_eq "$J/result" $'8\n' "y is still 7 in node"
assert_eq "$JSPID" "$(field "$J/status" pid)" "the same node interpreter"
check "x = x + 1" code py 'x = x + 1; x'
assert_file_eq "$P/result" $'42\n' "the python context takes code as before"

snapshot "$SFS_TMP/after"
if cmp -s "$SFS_TMP/before" "$SFS_TMP/after"; then
	pass "results, result.json, status and their inodes are the same"
else
	fail "results, result.json, status and their inodes are the same" \
		"$(diff "$SFS_TMP/before" "$SFS_TMP/after" | head -n 8 | tr '\n' ' ')"
fi
assert_file_eq "$P/env/SFS_UP" $'kept\n' "env/ keeps its value"

check "the first reader ends" sfs_wait_gone "$R_DONE" 10
sfs_cat "$P/runs/2/result.json" "$SFS_TMP/json.whole"
assert_true "it read result.json whole, once" "$(sfs_show "$SFS_TMP/json.done")" \
	cmp -s "$SFS_TMP/json.done" "$SFS_TMP/json.whole"
check "the second reader ends" sfs_wait_gone "$R_RUN" 10
assert_eq "0 []" "$(timeout 5 python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(len(j["results"]), j["logs"]["stdout"])' "$SFS_TMP/json.running" 2>&1)" \
	"the running one's reader reads its own copy to the end (no result yet)"

# the interpreters are this program's children again: their ends are
# reaped, rmdir waits for them
check "js: ctl kill" sfs_write "$J/ctl" $'kill\n'
check "js is dead once its interpreter is reaped" sfs_until 10 state_is "$J/status" dead
check "js: ctl restart" sfs_write "$J/ctl" $'restart\n'
check "js: y after the restart" code js 'typeof y'
assert_file_eq "$J/result" $'\'undefined\'\n' "a fresh node has no y"
check "rmdir contexts/py" timeout 20 rmdir "$P"
assert_true "the python interpreter is gone" "pid $PYPID" sfs_wait_gone "$PYPID" 5

sfs_done
