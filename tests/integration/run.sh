#!/usr/bin/env bash
# run.sh: run the sessionfs integration tests.
#
#   SESSIONFS_BIN=/path/to/sessionfs tests/integration/run.sh [NAME...]
#
# Runs every t*.sh of this folder (or only those named, e.g. t01 t04_bytes),
# each under `timeout 120`, several at once (SFS_JOBS, default 3), then
# prints each file's check lines and result in order, and ends with
# one line "N passed, M failed" (counting checks; a test file that timed out
# or crashed counts as one more failed check). Exits non-zero if anything
# failed. Needs root (or a user allowed to mount FUSE), bash and coreutils.

export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
# sfs_mounted, sfs_default_bin
# shellcheck source=../common.sh
. "$here/../common.sh"
export SESSIONFS_BIN=${SESSIONFS_BIN:-$(sfs_default_bin)}
FILE_TIMEOUT=${SFS_FILE_TIMEOUT:-120}

if [ ! -x "$SESSIONFS_BIN" ]; then
	echo "not ok run: SESSIONFS_BIN=$SESSIONFS_BIN is not an executable"
	echo "0 passed, 1 failed"
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sfs-run.XXXXXX") || exit 1
trap 'rm -rf --one-file-system "$work"' EXIT

# after a test file that was killed before its EXIT trap could clean up:
# its state file lists its mount, daemon pid, temporary directory and the
# arguments that mark the processes it started in sessions
cleanup_after() { # STATEFILE
	local key val mnt='' pids=() tmp='' markers=() m p re pid
	[ -s "$1" ] || return 0
	while read -r key val; do
		case $key in
		mnt) mnt=$val ;;
		pid | server) pids+=("$val") ;;
		tmp) tmp=$val ;;
		marker) markers+=("$val") ;;
		esac
	done <"$1"
	echo "# cleaning up after it: mount ${mnt:--}, daemon pids ${pids[*]:--}, ${#markers[@]} marked processes"
	if [ -n "$mnt" ] && sfs_mounted "$mnt"; then
		timeout 10 fusermount3 -u -z "$mnt" 2>/dev/null || timeout 10 umount -l "$mnt" 2>/dev/null
	fi
	# the keeper and its server, only if each is still our daemon (its
	# command line names the mount)
	for pid in "${pids[@]}"; do
		if [ -n "$mnt" ] && [ -r "/proc/$pid/cmdline" ] &&
			tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$mnt"; then
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	# processes with a marker argument (see sfs_pids_with_arg in lib.sh)
	for m in "${markers[@]}"; do
		re=${m//./[.]}
		re="[${re:0:1}]${re:1}"
		for p in $(timeout 10 grep -lzxE -e "$re" /proc/[0-9]*/cmdline 2>/dev/null |
			sed -n 's|^/proc/\([0-9]*\)/cmdline$|\1|p'); do
			kill -KILL "$p" 2>/dev/null
		done
	done
	[ -n "$mnt" ] && ! sfs_mounted "$mnt" && rmdir "$mnt" 2>/dev/null
	case $tmp in
	"${TMPDIR:-/tmp}"/sfs-it-*) rm -rf --one-file-system "$tmp" ;;
	esac
	: >"$1"
	return 0
}

tests=()
if [ $# -gt 0 ]; then
	for a in "$@"; do
		for t in "$here"/"${a%.sh}"*.sh; do
			[ -f "$t" ] && tests+=("$t")
		done
	done
else
	tests=("$here"/t*.sh)
fi

# Files run SFS_JOBS at a time (default 3; most of their time is spent
# waiting on sleeps, timeouts and kill grace periods), except those
# whose checks measure time under load, which run alone afterwards
# (t46 also changes /etc/fuse.conf and /dev/fuse for a while, as t44 does,
# and each puts back only what it changed; t84 lowers fanotify's queue
# bound, which every daemon started meanwhile would take, for a moment).
JOBS=${SFS_JOBS:-3}
SERIAL=" t08_bigoutput t23_concurrency t24_blocking t46_files_mounts t84_watch_overflow "

run_one() { # TEST
	local name
	name=$(basename "$1" .sh)
	: >"$work/$name.state"
	SECONDS=0
	# (the braces keep bash's "Killed" notice out of the report)
	{ SFS_STATE_FILE=$work/$name.state timeout -k 10 "$FILE_TIMEOUT" \
		bash "$1" >"$work/$name.out" 2>&1 </dev/null; } 2>/dev/null
	echo "$? $SECONDS" >"$work/$name.rc"
}

for t in "${tests[@]}"; do
	case $SERIAL in *" $(basename "$t" .sh) "*) continue ;; esac
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
	run_one "$t" &
done
wait
for t in "${tests[@]}"; do
	case $SERIAL in *" $(basename "$t" .sh) "*) run_one "$t" ;; esac
done

npass=0
nfail=0
bad_files=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	out=$work/$name.out
	read -r rc secs <"$work/$name.rc"
	echo "# --- $name"
	cat "$out"
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	extra=
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		extra="timed out after $FILE_TIMEOUT s"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		extra="exited with status $rc without a failed check"
	elif [ $((p + f)) -eq 0 ]; then
		extra="ran no check"
	fi
	if [ -n "$extra" ]; then
		echo "not ok $name: $extra"
		f=$((f + 1))
	fi
	cleanup_after "$work/$name.state"
	npass=$((npass + p))
	nfail=$((nfail + f))
	if [ "$f" -gt 0 ]; then
		bad_files+=("$name")
		echo "# $name: FAIL ($p passed, $f failed) in $secs s"
	else
		echo "# $name: PASS ($p passed) in $secs s"
	fi
done

[ ${#bad_files[@]} -gt 0 ] && echo "# failed files: ${bad_files[*]}"
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
