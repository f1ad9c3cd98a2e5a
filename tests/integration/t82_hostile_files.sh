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
# shellcheck disable=SC2016
SFS_T=${SFS_T:-30}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

for tool in setpriv python3; do
	if ! command -v "$tool" >/dev/null; then
		pass "skip: $tool is not installed"
		SFS_DONE=1
		exit 0
	fi
done

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

sfs_done
