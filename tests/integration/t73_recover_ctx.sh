#!/usr/bin/env bash
# t73_recover_ctx: code contexts through a crash (kill -9 of the server),
# which the keeper follows with a restart from the last checkpoint. A
# checkpoint holds no descriptors, so an interpreter cannot be driven
# again: a python context's finished executions stay (their results and
# results/ the same), the execution running at the crash ends with
# ContextLost (status error), the one queued behind it is canceled, one
# line of the session's error says what was lost, what is left of the
# old interpreter is gone, and the next code starts a fresh interpreter
# (x is not defined there) that takes code as a new context's would.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/r
check "mkdir sessions/r" sfs_mkdir "$S"
P=$S/contexts/py

# code TEXT [TIMEOUT]: run TEXT in the context; the writer's status
code() { sfs_write "$P/code" "$1"$'\n' "${2:-$SFS_T}"; }

# code_bg TEXT: the same in the background; its pid in BG
code_bg() {
	local f=$SFS_TMP/code.$((++SFS_N))
	printf '%s\n' "$1" >"$f"
	timeout -k 2 "$SFS_T" bash -c 'cat >"$1"' _ "$P/code" <"$f" 2>/dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	BG=$!
	SFS_BG_PIDS+=("$BG")
}

# field FILE KEY: the value of KEY in a key value file
field() { timeout 5 awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# field_is FILE KEY VALUE: KEY of FILE is VALUE
field_is() { [ "$(field "$1" "$2")" = "$3" ]; }

# the instance's runtime directory, which holds the checkpoint
RT=$(sed -n 's/.* spool budget: [0-9]* bytes in //p' "$SFS_TMP/daemon.log" | head -n 1)

# ckpt_after T: the checkpoint was written after the time T (s.ns)
ckpt_after() {
	local m
	m=$(stat -c %.9Y "$RT/checkpoint" 2>/dev/null) || return 1
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) <= float(sys.argv[2]))' "$m" "$1"
}

# gone_or_zombie PID: PID runs no more
gone_or_zombie() { ! grep -qs '^State:[[:space:]]*[^Z[:space:]]' "/proc/$1/status"; }

check "mkdir contexts/py" sfs_mkdir "$P"
check "x = 41" code 'x = 41; x'
assert_file_eq "$P/runs/1/result" $'41\n' "x is 41 before the crash"
RES_INO=$(timeout 5 stat -c %i "$P/runs/1/results/1")
code_bg 'import time; time.sleep(30)'
RUNNING=$BG
check "the sleep runs" sfs_until 10 field_is "$P/runs/2/status" state running
code_bg 'x + 1'
QUEUED=$BG
check "x + 1 is queued" sfs_until 10 field_is "$P/runs/3/status" state queued
PYPID=$(field "$P/status" pid)
t=$(date +%s.%N)
check "a change after they are there" sfs_write "$P/timeout" $'0\n'
check "a checkpoint has them" sfs_until 20 ckpt_after "$t"

SERVER=$(field "$MNT/health" pid)
check "kill -9 the server" kill -KILL "$SERVER"
check "the server is started again" sfs_until 30 field_is "$MNT/health" recoveries 1
sfs_note_server # the new one, for the cleanup
check "the running execution's writer returns" sfs_wait_gone "$RUNNING" 20
check "the queued one's writer returns" sfs_wait_gone "$QUEUED" 20
check "the old interpreter is gone" sfs_until 10 gone_or_zombie "$PYPID"

assert_file_eq "$P/runs/1/result" $'41\n' "a finished execution's result is kept"
assert_eq "$RES_INO" "$(timeout 5 stat -c %i "$P/runs/1/results/1")" "its results/1 keeps its inode"
assert_eq error "$(field "$P/runs/2/status" state)" "the running one ended with an error"
assert_file_match "$P/runs/2/error" '"name": "ContextLost"' "ContextLost"
assert_eq canceled "$(field "$P/runs/3/status" state)" "the queued one is canceled"
assert_file_match "$S/error" 'contexts/py: the interpreter and its state were lost' \
	"one line in the session's error says so"
assert_eq idle "$(field "$P/status" state)" "the context is idle, not dead"

check "x after the crash" code 'x'
assert_file_match "$P/error" '"name": "NameError"' "a fresh interpreter: x is not defined"
NEWPID=$(field "$P/status" pid)
assert_true "another interpreter" "pid '$NEWPID', before $PYPID" \
	[ -n "$NEWPID" ] && [ "$NEWPID" != "$PYPID" ]
check "2 + 2" code '2 + 2'
assert_file_eq "$P/result" $'4\n' "the fresh interpreter takes code"
assert_eq 5 "$(timeout 5 ls "$P/runs" | wc -l)" "every execution is listed"

sfs_done
