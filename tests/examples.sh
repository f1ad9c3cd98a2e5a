#!/usr/bin/env bash
# examples.sh: run the examples against a fresh sessionfs.
#
#   tests/examples.sh SESSIONFS_BIN
#
# Mounts SESSIONFS_BIN on a temporary directory, runs examples/session.sh,
# examples/session.py (if python3 exists) and examples/session.js (if node
# exists) against it, each under `timeout 60`, checks that each left no
# session behind, and prints "ok NAME" / "not ok NAME: reason" lines and a
# final "N passed, M failed". Exits non-zero if anything failed. The mount
# is always unmounted and the daemon reaped (killed by pid if it hangs).

export LC_ALL=C
bin=${1:-}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
	echo "usage: $0 SESSIONFS_BIN" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
npass=0
nfail=0
pass() {
	npass=$((npass + 1))
	echo "ok examples/$1"
}
fail() {
	nfail=$((nfail + 1))
	echo "not ok examples/$1: $2"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sfs-ex.XXXXXX") || exit 1
mnt=$tmp/mnt
mkdir "$mnt"
pid=

# sfs_alive, sfs_mounted
# shellcheck source=common.sh
. "$top/tests/common.sh"

cleanup() {
	local rc=$? i
	trap - EXIT
	trap '' INT TERM HUP
	if sfs_mounted "$mnt"; then
		timeout 10 fusermount3 -u "$mnt" 2>/dev/null ||
			timeout 10 fusermount3 -u -z "$mnt" 2>/dev/null ||
			timeout 10 umount -l "$mnt" 2>/dev/null
	fi
	if [ -n "$pid" ]; then
		for ((i = 0; i < 50; i++)); do
			sfs_alive "$pid" || break
			sleep 0.1
		done
		if sfs_alive "$pid"; then
			echo "# the daemon (pid $pid) did not exit after unmount; killing it"
			kill -KILL "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
	fi
	if sfs_mounted "$mnt"; then
		echo "# WARNING: $mnt is still mounted; left in place"
	else
		rm -rf --one-file-system "$tmp"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

"$bin" -f "$mnt" >"$tmp/daemon.log" 2>&1 </dev/null &
pid=$!
for ((i = 0; i < 50; i++)); do
	timeout 2 test -d "$mnt/sessions" 2>/dev/null && sfs_mounted "$mnt" && break
	sfs_alive "$pid" || break
	sleep 0.1
done
if ! sfs_mounted "$mnt" || ! timeout 2 test -d "$mnt/sessions"; then
	fail mount "the mount was not ready within 5 s: $(tail -n 3 "$tmp/daemon.log" | tr '\n' ' ')"
	echo "$npass passed, $nfail failed"
	exit 1
fi
pass mount

# sessions: the sessions now in the mount, but default
sessions() { timeout 10 ls "$mnt/sessions" | grep -vx -e default -e clone | tr '\n' ' '; }

# example NAME TOOL: run examples/NAME with TOOL, under timeout 60
example() {
	local name=$1 tool=$2 rc out=$tmp/$1.out before after
	if ! command -v "$tool" >/dev/null; then
		pass "$name: skip ($tool is not installed)"
		return
	fi
	before=$(sessions)
	(cd "$top" && timeout -k 5 60 "$tool" "examples/$name" "$mnt") >"$out" 2>&1 </dev/null
	rc=$?
	case $rc in
	0) pass "$name" ;;
	124 | 137) fail "$name" "did not end within 60 s" ;;
	*) fail "$name" "exit status $rc" ;;
	esac
	[ "$rc" -ne 0 ] && sed 's/^/#   /' "$out"
	after=$(sessions)
	if [ "$before" = "$after" ]; then pass "$name: it left no session behind"; else
		fail "$name: it left no session behind" "sessions before: [$before], after: [$after]"
	fi
}

example session.sh bash
example session.py python3
example session.js node

if sfs_alive "$pid"; then pass "the daemon still runs"; else
	fail "the daemon still runs" "it exited: $(tail -n 3 "$tmp/daemon.log" | tr '\n' ' ')"
fi
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
