#!/bin/bash
# Runs the sessionfs benchmarks: exec_latency (the cost of one command run
# through the files, against spawning `bash -c true`, in separate phases
# and interleaved), throughput (1 GiB of output through stdout, against a
# shell writing it to a file; 8 sessions printing 256 MiB each at once,
# against one printing 2 GiB; another session's listing and run while one
# prints flat out, against the same when quiet), parked (that round trip
# with 1000 readers blocked on exit and stream of other sessions, against
# none), and the Python ones: idle_latency (the round trip after 20 ms and
# 1 s idle, against a spawn, pexpect and a bash on pipes), sessions_1000
# (making 1000 sessions, their memory, the tree with a reader blocked on
# each) stream_latency (a printed byte reaching a reader of stream, against
# a pipe), expect_latency (a printed line answering a reader of a
# process's expect, against a pipe's readline), ports (a listen() to the answer of a read of ports that waits
# for it, against a connect() every 10 ms, and the wait's CPU), contexts (code contexts: a round trip against a Jupyter
# kernel, a matplotlib plot against savefig, their idle memory) and tty
# (a session's terminal: cat of 100 MiB, reads of its screen, a key to
# its echo, against script(1) and a PTY of its own) and ready (tty/ready
# against tty/quiet on the same prompts, and what a waiting reader of
# ready costs the daemon) and tty_feed (the
# terminal's emulator alone: 100 MiB of cat's output fed as the daemon
# feeds it, against every byte through libvterm and a memcpy) and hostile
# (a read of health while another user of an allow_other mount attacks
# it: stops, descriptors, context floods, against the quiet mount) and
# files (git, tar, du, grep, stat, dd and a ninja build in files/ of a
# mount of its own, against the backing directory and libfuse's
# passthrough_hp cached and uncached; then how many reads through each
# are stale after changes made in the backing directory) and
# crash (kill -9 of the server to the first answered request, with 1 and
# 100 sessions, against the same request without a crash and a fresh
# mount's first answer; on mounts of its own) and
# upgrade (the pause an upgrade in place makes in a client's reads of
# health, with 1 and 1000 sessions, against the same loop's gaps; last,
# since it replaces the daemon's program many times) and coherence (how
# soon a change of the backing directory is seen through files/, which
# caches it, and what the cache saves; on mounts of its own) and watches
# (a change of the workspace to the read of its event in a watch, and a
# burst of 10,000 creates: none lost, or an overflow; a mount of its own)
# and fork (fork NAME of a session with 1,000 variables and 200
# functions, against mkdir of a fresh session and its state written out
# by declare -p, declare -f and alias -p).
#
# Usage: tests/bench/run.sh BUILD_DIR [NAME...]
#
# Mounts BUILD_DIR/sessionfs -f on a temporary directory, runs the
# benchmarks (all, or the ones named; each at most 300 s, idle_latency
# longer when its counts are raised) and always unmounts. The C ones are
# taken from BUILD_DIR/tests/bench/, or compiled from this directory with
# ${CC:-cc} if the build lacks one; the Python ones (python3, pexpect for
# idle_latency and peers, tmux for peers) run from this directory with the
# mount and the daemon's pid as arguments. Extra daemon options may be
# given in SESSIONFS_OPTS; EXEC_LATENCY_N, THROUGHPUT_MIB (throughput's
# first part, and what its third prints), THROUGHPUT_PAR_N and
# THROUGHPUT_PAR_MIB (its second part: that many sessions printing that
# much each, against one printing their sum; 8 and 256), PARKED_READERS,
# PARKED_N, IDLE_LATENCY_N, IDLE_LATENCY_N1S, SESSIONS_N (at most the
# daemon's max_sessions less 2), STREAM_LATENCY_N, STREAM_LATENCY_N_IDLE, PORTS_N,
# PEERS_N, PEERS_N1S, FORK_N, CONTEXTS_N, CONTEXTS_KERNEL_N, CONTEXTS_PLOT_N,
# TTY_MIB, TTY_SCREEN_N, TTY_KEY_N, TTY_LS_N, TTY_FLOOD_SIZE, READY_N and
# TTY_FEED_MIB, HOSTILE_S, FILES_ROUNDS, FILES_DD_MIB, FILES_COHERENCE_N,
# CRASH_N, CRASH_SESSIONS, UPGRADE_RUNS and UPGRADE_SESSIONS, COHERENCE_N
# and COHERENCE_FILES, WATCHES_N and WATCHES_FILES change the sizes;
# FILES_DIR is where files puts its backing directory (/var/tmp).
# Exits non-zero if the mount or a benchmark failed (a missed target is
# not a failure: these are measurements).
set -u

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [NAME...]" >&2
	exit 2
fi
build=$(cd "$1" && pwd) || exit 2
shift
all="exec_latency throughput parked idle_latency sessions_1000"
all+=" stream_latency expect_latency ports peers contexts tty ready tty_feed hostile files crash upgrade coherence"
all+=" watches fork"
wanted=${*:-$all}
for b in $wanted; do
	case " $all " in
	*" $b "*) ;;
	*)
		echo "run.sh: no benchmark $b (there are: $all)" >&2
		exit 2
		;;
	esac
done
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
	rm -f "$log" "$work/exec_latency" "$work/throughput" "$work/parked" \
		"$work/tty_feed"
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
		${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -O2 -pthread \
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

# Runs benchmark $1 (if wanted) under a timeout of $2 s: TERM then (the
# benchmarks remove what they made), KILL 10 s later.
status=0
wants() {
	case " $wanted " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}
bench() {
	local name=$1 limit=$2 rc
	shift 2
	wants "$name" || return 0
	timeout -k 10 "$limit" "$@"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "run.sh: $name failed (status $rc)" >&2
		status=1
	fi
}

# tty_feed links the emulator's sources (and libvterm)
feed=$build/tests/bench/tty_feed
if [ ! -x "$feed" ] && wants tty_feed; then
	feed=$work/tty_feed top=$here/../..
	# shellcheck disable=SC2086 # CC may hold options
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -O2 -D_GNU_SOURCE \
		-I"$top" -o "$feed" "$here/tty_feed.c" "$top/sessions/tty/term.c" \
		"$top/sessions/tty/termdraw.c" \
		"$top/sessions/tty/vtskip.c" "$top/sessions/tty/vtsize.c" \
		"$top/sessions/tty/vtwide.c" "$top/sessions/core/strbuf.c" -lvterm ||
		exit 1
fi
bench exec_latency 300 "$bins/exec_latency" -i "$mnt" "${EXEC_LATENCY_N:-2000}"
bench throughput 300 "$bins/throughput" "$mnt" "${THROUGHPUT_MIB:-1024}" \
	"${THROUGHPUT_PAR_N:-8}" "${THROUGHPUT_PAR_MIB:-256}"
bench parked 300 "$bins/parked" "$mnt" "${PARKED_READERS:-1000}" \
	"${PARKED_N:-1000}"
# The Python ones: -B writes no __pycache__ into the tree, -u keeps the
# order of their lines with the rest.
if wants idle_latency && ! python3 -c 'import pexpect' 2>/dev/null; then
	echo "run.sh: idle_latency needs python3 and pexpect" \
		"(tests/install-deps.sh installs python3-pexpect)" >&2
	status=1
else
	# 5 ways a round: about 0.2 s after 20 ms idle and 5.1 s after 1 s.
	n20=${IDLE_LATENCY_N:-100} n1s=${IDLE_LATENCY_N1S:-30}
	bench idle_latency $((120 + n20 / 2 + n1s * 8)) \
		python3 -Bu "$here/idle_latency.py" "$mnt" "$pid"
fi
bench sessions_1000 300 python3 -Bu "$here/sessions_1000.py" "$mnt" "$pid" \
	"${SESSIONS_N:-1000}"
bench stream_latency 300 python3 -Bu "$here/stream_latency.py" "$mnt" "$pid"
bench ports 300 python3 -Bu "$here/ports.py" "$mnt" "$pid"
bench expect_latency 300 python3 -Bu "$here/expect_latency.py" "$mnt" "$pid"
bench fork 300 python3 -Bu "$here/fork.py" "$mnt" "$pid"
# contexts wants a python3 with matplotlib and jupyter_client (Debian's,
# when the one on PATH has not)
ctxpy=python3
python3 -c 'import matplotlib, jupyter_client' 2>/dev/null ||
	ctxpy=/usr/bin/python3
bench contexts 300 "$ctxpy" -Bu "$here/contexts.py" "$mnt" "$pid"
if wants peers && ! { python3 -c 'import pexpect' 2>/dev/null && command -v tmux >/dev/null; }; then
	echo "run.sh: peers needs pexpect and tmux" \
		"(tests/install-deps.sh installs python3-pexpect and tmux)" >&2
	status=1
else
	# 5 ways a round, back to back and after 20 ms, then after 1 s
	np=${PEERS_N:-200} np1=${PEERS_N1S:-10}
	bench peers $((120 + np / 2 + np1 * 10)) \
		python3 -Bu "$here/peers.py" "$mnt" "$pid"
fi
bench tty 600 python3 -Bu "$here/tty_bench.py" "$mnt" "$pid"
bench ready 300 python3 -Bu "$here/ready_bench.py" "$mnt" "$pid"
bench tty_feed 300 "$feed" "${TTY_FEED_MIB:-100}"
# hostile mounts its own instance with allow_other (its attacker is a
# user), and her own FUSE mount with libfuse's passthrough_ll when
# ../shared/thirdparty has libfuse's examples
if wants hostile; then
	lf=$here/../../../shared/thirdparty/libfuse-3.14.0-example.tar.gz
	if [ -f "$lf" ] && mkdir -p "$work/lf" && tar xzf "$lf" -C "$work/lf" &&
		${CC:-cc} -O1 -o "$work/pll" "$work/lf/libfuse-3.14.0/example/passthrough_ll.c" \
			$(pkg-config --cflags --libs fuse3); then
		chmod 755 "$work" && export HOSTILE_PLL=$work/pll
	fi
	bench hostile 600 "$ctxpy" -Bu "$here/hostile.py" "$mnt" "$pid" "$daemon"
	rm -rf "$work/lf" "$work/pll"
fi
# files mounts its own sessionfs (its workspace a new directory) and
# libfuse's passthrough_hp over that directory, built from
# ../shared/thirdparty into BUILD_DIR/thirdparty once (tests/thirdparty.sh)
if wants files; then
	# shellcheck source=../thirdparty.sh
	. "$here/../thirdparty.sh"
	FILES_HP=$(sfs_tp_build passthrough_hp "$build/thirdparty") || {
		echo "run.sh: files: no passthrough_hp (no ../shared/thirdparty, or its build failed):" \
			"only the backing directory and sessionfs are timed" >&2
		FILES_HP=
	}
	export FILES_HP
	bench files 900 python3 -Bu "$here/files.py" "$mnt" "$pid" "$daemon"
fi
# the same daemon on, in the same pid, after each upgrade
bench upgrade 300 python3 -Bu "$here/upgrade.py" "$mnt" "$pid"
bench crash 300 python3 -Bu "$here/crash.py" "$mnt" "$pid" "$daemon"
bench coherence 600 python3 -Bu "$here/coherence.py" "$mnt" "$pid" "$daemon"
bench watches 300 python3 -Bu "$here/watches.py" "$mnt" "$pid" "$daemon"
if [ $status -ne 0 ]; then
	echo "run.sh: daemon log (last 20 lines):" >&2
	tail -n 20 "$log" >&2
fi
exit $status
