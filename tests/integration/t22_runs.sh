#!/usr/bin/env bash
# t22_runs: the runs/ history: runs/N numbered from 1 with their own files,
# runs/latest a symlink to the newest run, named runs (mkdir runs/NAME,
# timeout, then cmd once; a second write of cmd is EBUSY; rmdir removes a
# finished run and is EBUSY while it is queued or running), invalid run
# names are EINVAL, and the history keeps the last 100 numbered runs.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/hist
check "mkdir sessions/hist" sfs_mkdir "$S"

ls_runs() { timeout 10 ls "$S/runs" 2>&1 | tr '\n' ' '; }

# 1. before the first run
assert_eq "" "$(ls_runs)" "runs/ is empty before the first run"
assert_errno EINVAL "mkdir runs/latest before any run: EINVAL" mkdir "$S/runs/latest"

# 2. numbered runs
assert_run_ok "run 1" "$S" 'echo one'
assert_eq "1 latest " "$(ls_runs)" "after one run: runs/ holds 1 and latest"
check "runs/latest is a symlink" timeout 5 test -L "$S/runs/latest"
assert_eq "1" "$(timeout 5 readlink "$S/runs/latest")" "runs/latest -> 1"
assert_file_eq "$S/runs/1/cmd" $'echo one\n' "runs/1/cmd is the command text"
assert_file_eq "$S/runs/1/exit" $'0\n' "runs/1/exit is 0"
assert_file_eq "$S/runs/1/stdout" $'one\n' "runs/1/stdout"
assert_file_eq "$S/runs/latest/stdout" $'one\n' "runs/latest/stdout follows the link"
assert_file_match "$S/runs/1/status" '^run 1$' "runs/1/status has run 1"
assert_file_match "$S/runs/1/status" '^state completed$' "runs/1/status has state completed"
assert_file_match "$S/runs/1/result.json" '"command":"echo one\\n"' "runs/1/result.json has the command"
assert_file_eq "$S/runs/1/timeout" $'0\n' "runs/1/timeout is 0"
files=$(timeout 5 ls "$S/runs/1" | tr '\n' ' ')
assert_eq "cmd cwd env exit expect output result.json status stderr stdin stdout stream timeout " "$files" "runs/1 lists the run files (and the options of named runs)"

assert_run_ok "run 2" "$S" 'echo two; sleep 0.1; echo err >&2; exit 3' # the pause orders output (sessionfs(7))
assert_eq "2" "$(timeout 5 readlink "$S/runs/latest")" "runs/latest -> 2"
assert_file_eq "$S/runs/2/exit" $'3\n' "runs/2/exit is 3"
assert_file_eq "$S/runs/2/stderr" $'err\n' "runs/2/stderr"
assert_file_eq "$S/runs/2/output" $'two\nerr\n' "runs/2/output"
assert_file_eq "$S/runs/1/stdout" $'one\n' "runs/1/stdout is still run 1's"
assert_file_eq "$S/runs/1/stream" $'one\n' "runs/1/stream of a finished run gives its output and EOF"
assert_file_eq "$S/runs/1/cmd" $'echo one\n' "runs/1/cmd is still run 1's"
assert_errno EBUSY "writing runs/1/cmd again: EBUSY" bash -c 'echo x >"$1"' _ "$S/runs/1/cmd"
assert_errno EEXIST "mkdir runs/1: EEXIST" mkdir "$S/runs/1"

# 3. a named run
check "mkdir runs/mine" sfs_mkdir "$S/runs/mine"
assert_true "runs/ lists mine" "ls gave: $(ls_runs)" grep -qw mine <<<"$(ls_runs)"
assert_file_eq "$S/runs/mine/stdout" "" "runs/mine/stdout is empty before its cmd"
# a reader of exit that comes before the cmd waits for the run's end
timeout -k 2 15 cat "$S/runs/mine/exit" >"$SFS_TMP/mine.exit" 2>&1 &
wexit=$!
SFS_BG_PIDS+=("$wexit")
sleep 0.3
assert_true "cat runs/mine/exit before its cmd waits" "it returned: $(cat "$SFS_TMP/mine.exit")" sfs_alive "$wexit"
check "echo 700 > runs/mine/timeout" sfs_write "$S/runs/mine/timeout" $'700\n'
assert_file_eq "$S/runs/mine/timeout" $'700\n' "runs/mine/timeout reads back"
check "echo 'echo named' > runs/mine/cmd" sfs_write "$S/runs/mine/cmd" $'echo named\n' 10
assert_file_eq "$S/runs/mine/stdout" $'named\n' "runs/mine/stdout"
assert_file_eq "$S/runs/mine/exit" $'0\n' "runs/mine/exit"
if sfs_wait_gone "$wexit" 5; then
	assert_eq $'0\nx' "$(cat "$SFS_TMP/mine.exit"; echo x)" "cat runs/mine/exit opened before the cmd gives 0 once the run ended"
else
	fail "cat runs/mine/exit opened before the cmd gives 0 once the run ended" "still blocked 5 s after the run"
fi
assert_file_eq "$S/runs/mine/cmd" $'echo named\n' "runs/mine/cmd reads back"
assert_file_match "$S/runs/mine/status" '^timeout_ms 700$' "runs/mine/status has its timeout"
assert_file_eq "$S/stdout" $'named\n' "the session's stdout follows the named run (the newest)"
assert_eq "mine" "$(timeout 5 readlink "$S/runs/latest")" "runs/latest -> mine"
assert_errno EBUSY "a second write of runs/mine/cmd: EBUSY" bash -c 'echo "echo again" >"$1"' _ "$S/runs/mine/cmd"
assert_file_eq "$S/runs/mine/stdout" $'named\n' "the refused second cmd did not run"
assert_errno EBUSY "writing runs/mine/timeout after its run: EBUSY or refused" \
	bash -c 'echo 5 >"$1"' _ "$S/runs/mine/timeout"
assert_errno EEXIST "mkdir runs/mine again: EEXIST" mkdir "$S/runs/mine"
check "rmdir runs/mine" timeout 10 rmdir "$S/runs/mine"
assert_true "runs/mine is gone" "ls gave: $(ls_runs)" test -z "$(grep -w mine <<<"$(ls_runs)")"
assert_true "runs/mine no longer resolves" "it still exists" timeout 5 test ! -e "$S/runs/mine"
assert_run_ok "a numbered run after the named one" "$S" 'echo three'
n=$(timeout 5 readlink "$S/runs/latest")
assert_true "runs/latest -> the new numbered run" "readlink gave '$n'" test -n "$n" -a "$n" -gt 2
assert_file_eq "$S/runs/$n/stdout" $'three\n' "runs/$n/stdout is the new run's"

# a named run that never got a command can be removed
check "mkdir runs/empty" sfs_mkdir "$S/runs/empty"
check "rmdir runs/empty (never ran)" timeout 10 rmdir "$S/runs/empty"

# 4. rmdir while running and while queued: EBUSY
check "mkdir runs/long" sfs_mkdir "$S/runs/long"
check "mkdir runs/queued" sfs_mkdir "$S/runs/queued"
sfs_run_bg "$S/runs/long" 'sleep 1.5' 15
wl=$SFS_BG
sleep 0.3
sfs_run_bg "$S/runs/queued" 'echo q' 15
wq=$SFS_BG
# (its writer's close is what queues it: wait for that, up to 5 s)
for _ in $(seq 50); do
	grep -qx 'state queued' "$S/runs/queued/status" && break
	sleep 0.1
done
assert_file_match "$S/runs/long/status" '^state running$' "runs/long is running"
assert_file_match "$S/runs/queued/status" '^state queued$' "runs/queued is queued"
assert_errno EBUSY "rmdir runs/long while it runs: EBUSY" rmdir "$S/runs/long"
assert_errno EBUSY "rmdir runs/queued while it is queued: EBUSY" rmdir "$S/runs/queued"
for w in "$wl" "$wq"; do
	if sfs_wait_gone "$w" 10; then
		wait "$w"
		assert_eq 0 $? "writer $w's close succeeds"
	else
		fail "writer $w's close succeeds" "still blocked"
	fi
done
assert_file_eq "$S/runs/long/exit" $'0\n' "runs/long exits 0 (the refused rmdir did not harm it)"
assert_file_eq "$S/runs/queued/stdout" $'q\n' "runs/queued ran after it"
check "rmdir runs/long once finished" timeout 10 rmdir "$S/runs/long"
check "rmdir runs/queued once finished" timeout 10 rmdir "$S/runs/queued"

# 5. invalid run names
for bad in 12 0 .x "$(printf 'r%.0s' {1..65})" 'a b' 'a:b'; do
	assert_errno EINVAL "mkdir runs/$(sfs_q "${bad:0:20}") (${#bad} chars): EINVAL" mkdir "$S/runs/$bad"
done
# with a latest symlink present the kernel may answer EEXIST itself
assert_fails "mkdir runs/latest with runs present: refused" mkdir "$S/runs/latest"
assert_file_match "$S/error" 'run name' "error has a line about the bad run name"
check "a 64-character run name is fine" sfs_mkdir "$S/runs/$(printf 'r%.0s' {1..64})"
check "a name with . _ - is fine" sfs_mkdir "$S/runs/a.b_c-1"

# 6. the history keeps the last 100 numbered runs
H=$MNT/sessions/many
check "mkdir sessions/many" sfs_mkdir "$H"
failed=0
for ((i = 1; i <= 105; i++)); do
	sfs_run "$H" "echo $i" 10 || failed=$((failed + 1))
done
assert_eq 0 "$failed" "105 runs all succeed"
nums=$(timeout 10 ls "$H/runs" | grep -c '^[0-9]')
assert_eq 100 "$nums" "after 105 runs, runs/ holds 100 numbered runs"
for i in 1 5; do
	assert_true "runs/$i is gone" "it still exists" timeout 5 test ! -e "$H/runs/$i"
done
assert_file_eq "$H/runs/6/stdout" $'6\n' "runs/6 (the oldest kept) is intact"
assert_file_eq "$H/runs/105/stdout" $'105\n' "runs/105 is intact"
assert_eq "105" "$(timeout 5 readlink "$H/runs/latest")" "runs/latest -> 105"
first=$(timeout 10 ls "$H/runs" | grep '^[0-9]' | sort -n | head -n 1)
assert_eq 6 "$first" "the oldest numbered run kept is 6"

sfs_done
