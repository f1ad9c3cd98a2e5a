#!/bin/bash
# Runs the sessionfs benchmarks: exec_latency (the cost of one command run
# through the files, against spawning `bash -c true`), throughput (1 GiB
# of output through stdout, against a shell writing it to a file) and
# parked (that round trip with 1000 readers blocked on exit and stream of
# other sessions, against none).
#
# Usage: tests/bench/run.sh BUILD_DIR
#
# Mounts BUILD_DIR/sessionfs -f on a temporary directory, runs the
# benchmarks (at most 300 s each) and always unmounts. The benchmarks are
# taken from BUILD_DIR/tests/bench/, or compiled from this directory with
# ${CC:-cc} if the build lacks one. Extra daemon options may be given in
# SESSIONFS_OPTS; EXEC_LATENCY_N, THROUGHPUT_MIB, PARKED_READERS and
# PARKED_N change the sizes.
# Exits non-zero if the mount or a benchmark failed (a missed target is
# not a failure: these are measurements).
set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 2
fi
build=$(cd "$1" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd) || exit 2
daemon=$build/sessionfs
if [ ! -x "$daemon" ]; then
	echo "run.sh: no daemon at $daemon" >&2
	exit 2
fi

work=$(mktemp -d /tmp/sessionfs-bench.XXXXXX) || exit 1
mnt=$work/mnt
log=$work/daemon.log
pid=

# shellcheck disable=SC2317 # called by the traps
cleanup() {
	trap - EXIT INT TERM HUP
	if [ -n "$pid" ]; then
		if mountpoint -q "$mnt"; then
			fusermount3 -u "$mnt" ||
				echo "run.sh: fusermount3 -u $mnt failed" >&2
		fi
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "run.sh: daemon $pid still running, kill -9" >&2
			kill -9 "$pid" 2>/dev/null
		fi
		wait "$pid" 2>/dev/null
		if mountpoint -q "$mnt"; then
			fusermount3 -uz "$mnt" ||
				echo "run.sh: cannot unmount $mnt" >&2
		fi
	fi
	# Never rm -r: if the unmount failed, mnt is still sessionfs.
	rm -f "$log" "$work/exec_latency" "$work/throughput" "$work/parked"
	rmdir "$mnt" "$work" 2>/dev/null ||
		echo "run.sh: left $work behind" >&2
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir "$mnt" || exit 1

# The benchmarks: from the build if it has them, else compiled here.
bins=$build/tests/bench
if [ ! -x "$bins/exec_latency" ] || [ ! -x "$bins/throughput" ] ||
	[ ! -x "$bins/parked" ]; then
	bins=$work
	for b in exec_latency throughput parked; do
		# shellcheck disable=SC2086 # CC may hold options
		${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -O2 \
			-o "$bins/$b" "$here/$b.c" "$here/bench.c" || exit 1
	done
fi

# shellcheck disable=SC2086 # SESSIONFS_OPTS is a list of options
"$daemon" -f ${SESSIONFS_OPTS:-} "$mnt" >"$log" 2>&1 &
pid=$!
for _ in $(seq 50); do
	if mountpoint -q "$mnt" && [ -d "$mnt/sessions" ]; then
		break
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		break
	fi
	sleep 0.1
done
if ! mountpoint -q "$mnt" || [ ! -d "$mnt/sessions" ]; then
	echo "run.sh: $daemon did not mount $mnt/sessions within 5 s" >&2
	tail -n 20 "$log" >&2
	exit 1
fi

echo "kernel: $(uname -r)"
echo "cpus: $(nproc)"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "daemon: $daemon"

# TERM at 300 s (the benchmarks then remove what they made), KILL 10 s later.
status=0
timeout -k 10 300 "$bins/exec_latency" "$mnt" "${EXEC_LATENCY_N:-2000}" || {
	echo "run.sh: exec_latency failed (status $?)" >&2
	status=1
}
timeout -k 10 300 "$bins/throughput" "$mnt" "${THROUGHPUT_MIB:-1024}" || {
	echo "run.sh: throughput failed (status $?)" >&2
	status=1
}
timeout -k 10 300 "$bins/parked" "$mnt" "${PARKED_READERS:-1000}" \
	"${PARKED_N:-1000}" || {
	echo "run.sh: parked failed (status $?)" >&2
	status=1
}
if [ $status -ne 0 ]; then
	echo "run.sh: daemon log (last 20 lines):" >&2
	tail -n 20 "$log" >&2
fi
exit $status
