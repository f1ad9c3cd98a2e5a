#!/usr/bin/env bash
# t63_timeout_limits: sessionfs(7) "SESSIONS AND RUNS", timeouts: a
# timeout is 0 (none) to 31536000000 ms (365 days, the bound of
# default_timeout_ms). The session's `timeout`, ctl's `timeout MS`,
# runs/NAME/timeout and contexts/NAME/timeout refuse anything past it
# (2^64-1, 2^64, 2^63, 2^63-1, one past the bound) and garbage with EINVAL,
# one line in `error` and the old value kept; a deadline near 2^64 ms
# wrapped into the past and timed the run out at once (exit 124). The
# bound itself and one below it are taken, and a run or an execution under
# them is not timed out.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/tl
check "mkdir sessions/tl" sfs_mkdir "$S"
MAX=31536000000
# 2^64-1 last: the old code took it, and the run after timed out at once
BAD=(31536000001 9223372036854775807 9223372036854775808 18446744073709551616
	abc 12x -5 1e3 18446744073709551615)

# lines FILE: how many lines FILE has
lines() { timeout 5 cat "$1" | wc -l; }

# refuse LABEL FILE PREFIX READBACK WANT: each of BAD written to FILE (after
# PREFIX) fails with EINVAL and adds a line to error, and READBACK still
# reads WANT
refuse() {
	local label=$1 file=$2 prefix=$3 back=$4 want=$5 v n0 n1
	for v in "${BAD[@]}"; do
		n0=$(lines "$S/error")
		assert_write_errno EINVAL "$label: '$v' gives EINVAL" "$file" "$prefix$v"$'\n'
		n1=$(lines "$S/error")
		assert_true "$label: '$v' adds a line to error" "error had $n0 lines, then $n1" \
			test "$n1" -gt "$n0"
	done
	assert_file_eq "$back" "$want"$'\n' "$label: the refused values left it at $want"
}

# not_timed_out LABEL DIR: a run of `sleep 0.3; echo ok` in DIR (a session
# or runs/NAME) completes, and was not cut by its timeout
not_timed_out() {
	local t0 el
	t0=$(now_ms)
	assert_run_ok "$1: a run of sleep 0.3" "$2" 'sleep 0.3; echo ok' 15
	el=$(($(now_ms) - t0))
	assert_file_eq "$2/exit" $'0\n' "$1: exit 0 (not timed out)"
	assert_file_match "$2/status" '^state completed$' "$1: state completed"
	assert_true "$1: the run lasted its 0.3 s" "it ended after $el ms" test "$el" -ge 250
}

# 1. the session's timeout file
check "timeout 60000" sfs_write "$S/timeout" $'60000\n'
refuse "timeout file" "$S/timeout" "" "$S/timeout" 60000
not_timed_out "timeout 60000 after the refusals" "$S"
assert_file_match "$S/error" "is not a number of milliseconds from 0 to $MAX" \
	"timeout file: error names the bound"
for v in $((MAX - 1)) "$MAX"; do
	check "timeout $v is taken" sfs_write "$S/timeout" "$v"$'\n'
	assert_file_eq "$S/timeout" "$v"$'\n' "timeout $v reads back"
	not_timed_out "timeout $v" "$S"
	assert_file_match "$S/status" "^timeout_ms $v\$" "timeout $v: status has timeout_ms $v"
done

# 2. ctl's timeout MS
check "ctl timeout 50000" sfs_write "$S/ctl" $'timeout 50000\n'
refuse "ctl timeout" "$S/ctl" "timeout " "$S/timeout" 50000
not_timed_out "ctl timeout 50000 after the refusals" "$S"
for v in $((MAX - 1)) "$MAX"; do
	check "ctl timeout $v is taken" sfs_write "$S/ctl" "timeout $v"$'\n'
	assert_file_eq "$S/timeout" "$v"$'\n' "ctl timeout $v: timeout reads $v"
	not_timed_out "ctl timeout $v" "$S"
done

# 3. a named run's own timeout (the session's is 0)
check "timeout 0" sfs_write "$S/timeout" $'0\n'
for v in $((MAX - 1)) "$MAX"; do
	R=$S/runs/q$v
	if check "mkdir runs/q$v" sfs_mkdir "$R"; then
		refuse "runs/q$v/timeout" "$R/timeout" "" "$R/timeout" 0
		check "runs/q$v/timeout $v is taken" sfs_write "$R/timeout" "$v"$'\n'
		assert_file_eq "$R/timeout" "$v"$'\n' "runs/q$v/timeout reads back $v"
		not_timed_out "runs/q$v with timeout $v" "$R"
		assert_file_match "$R/status" "^timeout_ms $v\$" "runs/q$v: status has timeout_ms $v"
	fi
done

# 4. a context's timeout
C=$S/contexts/py
if check "mkdir contexts/py" sfs_mkdir "$C"; then
	check "contexts/py/timeout 40000" sfs_write "$C/timeout" $'40000\n'
	refuse "contexts/py/timeout" "$C/timeout" "" "$C/timeout" 40000
	assert_file_match "$S/error" "contexts/py/timeout: .* from 0 to $MAX" \
		"contexts/py/timeout: error names the bound"
	for v in 40000 $((MAX - 1)) "$MAX"; do
		[ "$v" = 40000 ] || check "contexts/py/timeout $v is taken" sfs_write "$C/timeout" "$v"$'\n'
		assert_file_eq "$C/timeout" "$v"$'\n' "contexts/py/timeout reads $v"
		t0=$(now_ms)
		check "contexts/py: code under timeout $v" sfs_write "$C/code" $'import time\ntime.sleep(0.3)\n6 * 7\n' 30
		el=$(($(now_ms) - t0))
		assert_file_eq "$C/result" $'42\n' "contexts/py: timeout $v did not cut the execution"
		assert_file_eq "$C/error" '' "contexts/py: timeout $v: no error"
		assert_true "contexts/py: timeout $v: the execution lasted its 0.3 s" \
			"it ended after $el ms" test "$el" -ge 250
	done
fi

sfs_done
