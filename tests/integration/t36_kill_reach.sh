#!/usr/bin/env bash
# t36_kill_reach: sessionfs(7), kill and timeout: the processes a kill must
# reach. A shell SIGKILLed from outside mid-run takes its run's processes
# along (TERM, KILL after the grace); an idle `kill` and `reset` and the
# root `killall` end background jobs of earlier runs; an interrupted
# writer of cmd (SIGINT, SIGTERM, SIGKILL, `timeout`) cancels its queued
# run or kills its running one (exit 130), and its close gives EINTR;
# writers whose runs an rmdir ends get ECANCELED.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/k
check "mkdir sessions/k" sfs_mkdir "$S"
assert_run_ok "warm-up run" "$S" 'true'

# A writer of cmd that reports how its close ended ("ok" or the error
# text) in OUT, and its own pid in OUT.pid before it writes. It survives
# INT and TERM (handlers) so that it can report.
W=$SFS_TMP/writer.pl
cat >"$W" <<'EOF'
use POSIX;
$SIG{INT} = sub { };
$SIG{TERM} = sub { };
my ($path, $text, $out) = @ARGV;
open(my $p, '>', "$out.pid") or die; print $p "$$\n"; close $p;
my $fd = POSIX::open($path, O_WRONLY) // die "open: $!";
POSIX::write($fd, $text, length $text);
my $r = POSIX::close($fd);
my $e = defined $r ? "ok" : "$!";
open(my $o, '>', "$out.tmp") or die; print $o "$e\n"; close $o;
rename("$out.tmp", $out);
EOF

# writer DIR CMD NAME: starts the writer in the background (under a
# timeout); WPID gets its pid once it is known, WOUT its report file
writer() {
	WOUT=$SFS_TMP/$3
	timeout -k 2 20 perl "$W" "$1/cmd" "$2"$'\n' "$WOUT" {SFS_OUT}>&- {SFS_ERR}>&- &
	SFS_BG_PIDS+=("$!")
	WPID=
	sfs_until 5 test -s "$WOUT.pid" && WPID=$(cat "$WOUT.pid")
	[ -n "$WPID" ] && SFS_BG_PIDS+=("$WPID")
}

# report_is FILE WANT MSG: the writer reported WANT within 10 s
report_is() {
	if sfs_until 10 test -s "$1"; then
		assert_file_eq "$1" "$2"$'\n' "$3"
	else
		fail "$3" "no report from the writer within 10 s"
	fi
}

# gone_within MARK SECONDS MSG: no process with argument MARK is left
# within SECONDS
no_marker() { test -z "$(sfs_pids_with_arg "$1")"; }
gone_within() {
	if sfs_until "$2" no_marker "$1"; then pass "$3"; else
		fail "$3" "still running after $2 s: $(sfs_pids_with_arg "$1" | tr '\n' ' ')"
	fi
}

# running MARK MSG: a process with argument MARK shows up within 5 s
running() {
	if [ -n "$(sfs_wait_pids_with_arg "$1" 5)" ]; then pass "$2"; else
		fail "$2" "no process with argument $1 within 5 s"
	fi
}

shell_pid() { sed -n 's/^pid //p' "$S/status"; }

# 1. the shell SIGKILLed from outside mid-run
m=61.$$
sfs_marker "$m"
writer "$S" "sleep $m" w1
running "$m" "shell killed: the run's sleep runs"
sh=$(shell_pid)
assert_true "shell killed: the status names the shell" "no pid in status" test -n "$sh"
[ -n "$sh" ] && kill -KILL "$sh"
report_is "$SFS_TMP/w1" ok "shell killed: the close of cmd returns"
assert_file_eq "$S/exit" $'137\n' "shell killed: exit 137"
gone_within "$m" 2 "shell killed: its run's sleep is gone"

m=62.$$
sfs_marker "$m"
writer "$S" "trap '' TERM; sleep $m" w2
running "$m" "shell killed, TERM ignored: the sleep runs"
t0=$(now_ms)
sh=$(shell_pid)
[ -n "$sh" ] && kill -KILL "$sh"
report_is "$SFS_TMP/w2" ok "shell killed, TERM ignored: the close of cmd returns"
gone_within "$m" 5 "shell killed, TERM ignored: the sleep gets KILL after the grace"
el=$(($(now_ms) - t0))
assert_true "shell killed, TERM ignored: the sleep lasted the grace" "gone after $el ms" test "$el" -ge 1500
assert_run_ok "shell killed: the next run works" "$S" 'echo after'
assert_file_eq "$S/stdout" $'after\n' "shell killed: the next run's stdout"

# 2. idle kill and reset end background jobs of earlier runs
m=63.$$
m2=64.$$
sfs_marker "$m"
sfs_marker "$m2"
assert_run_ok "idle kill: start background jobs" "$S" "sleep $m & (trap '' TERM; exec sleep $m2) &"
running "$m" "idle kill: the background sleep runs"
running "$m2" "idle kill: the TERM-proof background sleep runs"
check "idle kill: echo kill > ctl" sfs_write "$S/ctl" $'kill\n'
gone_within "$m" 2 "idle kill: the background sleep is gone"
gone_within "$m2" 5 "idle kill: the TERM-proof one is gone after the grace"
assert_file_match "$S/error" 'left by earlier runs' "idle kill: a line in error"
assert_run_ok "idle kill: the shell lives on" "$S" 'echo still'

m=65.$$
sfs_marker "$m"
assert_run_ok "idle reset: start a background job" "$S" "sleep $m &"
running "$m" "idle reset: the background sleep runs"
check "idle reset: echo reset > ctl" sfs_write "$S/ctl" $'reset\n'
gone_within "$m" 2 "idle reset: the background sleep is gone"

# 3. root killall: background jobs of idle sessions and procs
S2=$MNT/sessions/k2
check "mkdir sessions/k2" sfs_mkdir "$S2"
m=66.$$
m2=67.$$
m3=68.$$
for x in "$m" "$m2" "$m3"; do sfs_marker "$x"; done
assert_run_ok "killall: a background job in k" "$S" "sleep $m &"
assert_run_ok "killall: a TERM-proof one in k2" "$S2" "(trap '' TERM; exec sleep $m2) &"
check "killall: mkdir procs/p" sfs_mkdir "$S2/procs/p"
check "killall: a process" sfs_write "$S2/procs/p/cmd" "sleep $m3"$'\n'
for x in "$m" "$m2" "$m3"; do running "$x" "killall: sleep $x runs"; done
check "killall: echo killall > ctl" sfs_write "$MNT/ctl" $'killall\n' 10
left=$(for x in "$m" "$m2" "$m3"; do sfs_pids_with_arg "$x"; done)
assert_true "killall: nothing is left when it returns" "still running: $(echo "$left" | tr '\n' ' ')" \
	test -z "$left"
assert_run_ok "killall: the sessions work on" "$S2" 'echo on'

# 4. interrupted writers
# sig_case LABEL SIGNAL MARK: a writer whose run is running gets SIGNAL
sig_case() {
	local label=$1 sig=$2 mark=$3 w=w.$3
	sfs_marker "$mark"
	writer "$S" "sleep $mark; echo not-reached" "$w"
	running "$mark" "$label: the run runs"
	[ -n "$WPID" ] && kill "-$sig" "$WPID"
	if [ "$sig" = KILL ]; then
		if sfs_wait_gone "$WPID" 10; then pass "$label: the writer is gone"; else
			fail "$label: the writer is gone" "still there after 10 s"
		fi
	else
		report_is "$SFS_TMP/$w" "Interrupted system call" "$label: close gives EINTR"
	fi
	gone_within "$mark" 3 "$label: the run's sleep is gone"
	sfs_until 5 grep -q '^state killed$' "$S/status"
	assert_file_match "$S/status" '^state killed$' "$label: state killed"
	assert_file_eq "$S/exit" $'130\n' "$label: exit 130"
	assert_file_eq "$S/stdout" '' "$label: the rest of the run did not run"
}
sig_case "INT on a running run's writer" INT "69.$$"
sig_case "TERM on a running run's writer" TERM "70.$$"
sig_case "KILL on a running run's writer" KILL "71.$$"

# queue_case LABEL SIGNAL MARK: a writer whose run is queued gets SIGNAL
queue_case() {
	local label=$1 sig=$2 mark=$3 flag=$SFS_TMP/ran.$3
	sfs_marker "$mark"
	sfs_run_bg "$S" "sleep $mark" 20
	running "$mark" "$label: the session is busy"
	writer "$S" "touch '$flag'" "q.$mark"
	sfs_until 5 grep -q '^state queued$' "$S/status"
	assert_file_match "$S/status" '^state queued$' "$label: the run is queued"
	[ -n "$WPID" ] && kill "-$sig" "$WPID"
	if [ "$sig" = KILL ]; then
		sfs_wait_gone "$WPID" 10
	else
		report_is "$SFS_TMP/q.$mark" "Interrupted system call" "$label: close gives EINTR"
	fi
	sfs_until 5 grep -q '^state canceled$' "$S/status"
	assert_file_match "$S/status" '^state canceled$' "$label: state canceled"
	assert_file_eq "$S/exit" $'130\n' "$label: exit 130"
	check "$label: kill the busy run" sfs_write "$S/ctl" $'kill\n'
	sfs_wait_gone "$SFS_BG" 10
	assert_run_ok "$label: a later run" "$S" 'true'
	assert_true "$label: the canceled run never ran" "$flag exists" test ! -e "$flag"
}
queue_case "INT on a queued run's writer" INT "72.$$"
queue_case "KILL on a queued run's writer" KILL "73.$$"

# timeout(1) on the writer: TERM, and the run goes with it
m=74.$$
sfs_marker "$m"
t0=$(now_ms)
timeout -k 5 1 sh -c "echo 'sleep $m' > '$S/cmd'"
rc=$?
el=$(($(now_ms) - t0))
assert_eq 124 "$rc" "timeout 1 on the writer: it times out"
assert_lt "$el" 4000 "timeout 1 on the writer: it returns at once" " ms"
gone_within "$m" 3 "timeout 1 on the writer: the run's sleep is gone"
assert_file_match "$S/status" '^state killed$' "timeout 1 on the writer: state killed"

# 5. rmdir: writers of the runs it kills and cancels get ECANCELED
R=$MNT/sessions/r
check "mkdir sessions/r" sfs_mkdir "$R"
m=75.$$
sfs_marker "$m"
writer "$R" "sleep $m" rk
running "$m" "rmdir: the run runs"
writer "$R" "touch '$SFS_TMP/ran.$m'" rq
sfs_until 5 grep -q '^state queued$' "$R/status"
if timeout 15 rmdir "$R"; then pass "rmdir of a busy session"; else fail "rmdir of a busy session" "failed or timed out"; fi
report_is "$SFS_TMP/rk" "Operation canceled" "rmdir: the running run's writer gets ECANCELED"
report_is "$SFS_TMP/rq" "Operation canceled" "rmdir: the queued run's writer gets ECANCELED"
gone_within "$m" 1 "rmdir: no sleep is left"
assert_true "rmdir: the queued run never ran" "it ran" test ! -e "$SFS_TMP/ran.$m"

for x in 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75; do sfs_kill_marker "$x.$$"; done
sfs_done
