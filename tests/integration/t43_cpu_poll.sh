#!/usr/bin/env bash
# shellcheck disable=SC2016
# t43_cpu_poll: the daemon keeps idle CPUs polling while requests come
# (cpu_poll_ms, tests/bench/RESULTS.md): a root daemon holds
# /dev/cpu_dma_latency open, its request is 0 µs while requests come,
# held once for a burst of requests (metrics' cpu_poll_holds_total moves
# by one), let go after cpu_poll_ms without one and held again at the
# next; with cpu_poll_ms = 0 the device is never opened; no shell or
# command has the descriptor. Another test's daemon may hold the device
# at the same time, so the state is read from this daemon's counter, not
# from the device's value alone.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

DEV=/dev/cpu_dma_latency
if [ "$(id -u)" != 0 ] || [ ! -c "$DEV" ]; then
	note "not root, or no $DEV: skipped"
	exit 0
fi

# holds: the daemon's cpu_poll_holds_total
holds() { timeout 5 cat "$MNT/metrics" | awk '$1 == "sessionfs_cpu_poll_holds_total" { print $2 }'; }
# has_dev PID: PID has the device open
has_dev() {
	local f
	for f in /proc/"$1"/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = "$DEV" ] && return 0
	done
	return 1
}
# qos: the device's value now (the strictest request of all)
qos() { timeout 5 od -An -t d4 -N 4 "$DEV" | tr -d ' '; }

# 1. the default (10 ms): the device is open, a run holds it
sfs_mount
check "the daemon has $DEV open" has_dev "$SFS_SERVER"
S=$MNT/sessions/poll
check "mkdir sessions/poll" sfs_mkdir "$S"
assert_run_ok "a run" "$S" 'true'
h=$(holds)
assert_true "a request held the device" "holds: ${h:-none}" test "${h:-0}" -ge 1
# the descriptor is the daemon's only: not the shell's, not a command's
assert_run_ok "a command lists its descriptors" "$S" 'ls -l /proc/$$/fd /proc/self/fd'
if grep -q cpu_dma_latency "$S/stdout"; then
	fail "no command or shell has $DEV open" "$(tr '\n' ' ' <"$S/stdout")"
else
	pass "no command or shell has $DEV open"
fi
# ... nor any other process of the daemon's: a background job, a procs/
# process, the terminal's bash, a context's interpreter, the watchdog
assert_run_ok "a background job" "$S" 'sleep 30 &'
check "mkdir procs/p" sfs_mkdir "$S/procs/p"
check "procs/p/cmd" sfs_write "$S/procs/p/cmd" $'sleep 30\n' 10
check "tty/input starts the terminal" sfs_write "$S/tty/input" $'true\n' 10
if command -v python3 >/dev/null; then
	check "mkdir contexts/py" sfs_mkdir "$S/contexts/py"
	check "contexts/py runs code" sfs_write "$S/contexts/py/code" $'x = 1\n' 20
fi
under=$(sfs_descendants "$SFS_SERVER" | tr '\n' ' ')
n=$(wc -w <<<"$under")
assert_true "the daemon has several processes to look at" "$n: $under" test "$n" -ge 5
leaked=
for p in $under; do has_dev "$p" && leaked+="$p($(cat /proc/"$p"/comm 2>/dev/null)) "; done
assert_eq "" "$leaked" "none of the daemon's $n processes has $DEV open"
sfs_check_umount "cpu_poll_ms = 10"

# 2. a long hold time: one hold for a burst, let go after it, held again
printf 'cpu_poll_ms = 3000;\n' >"$SFS_TMP/long.conf"
sfs_start_mount "cpu_poll_ms = 3000" -c "$SFS_TMP/long.conf" || exit 1
S=$MNT/sessions/poll
check "cpu_poll_ms = 3000: mkdir sessions/poll" sfs_mkdir "$S"
h0=$(holds)
for i in 1 2 3; do assert_run_ok "cpu_poll_ms = 3000: run $i" "$S" 'true'; done
assert_eq 0 "$(qos)" "while requests come, the device's value is 0 µs"
assert_eq "$h0" "$(holds)" "cpu_poll_ms = 3000: a burst of requests is one hold"
# A request of someone else's to this mount (a df) during the pause
# would hold on: then the pause is tried again, at most three times.
h1=$h0
for _ in 1 2 3; do
	sleep 3.5
	holds >/dev/null # this request holds again, after its answer
	h1=$(holds)
	[ "${h1:-0}" -gt "$h0" ] && break
	h0=$h1
done
assert_true "after 3.5 s without a request the hold was let go, the next request holds again" \
	"holds ${h0:-none} then ${h1:-none}" test "${h1:-0}" -gt "${h0:-0}"
sfs_check_umount "cpu_poll_ms = 3000"

# 3. cpu_poll_ms = 0: never opened, never held
printf 'cpu_poll_ms = 0;\n' >"$SFS_TMP/off.conf"
sfs_start_mount "cpu_poll_ms = 0" -c "$SFS_TMP/off.conf" || exit 1
S=$MNT/sessions/off
check "cpu_poll_ms = 0: mkdir sessions/off" sfs_mkdir "$S"
assert_run_ok "cpu_poll_ms = 0: a run" "$S" 'echo $((6 * 7))'
assert_file_eq "$S/stdout" $'42\n' "cpu_poll_ms = 0: runs work as before"
if has_dev "$SFS_SERVER"; then fail "cpu_poll_ms = 0: the device is not open" "it is"; else pass "cpu_poll_ms = 0: the device is not open"; fi
assert_eq 0 "$(holds)" "cpu_poll_ms = 0: nothing was held"

sfs_done
