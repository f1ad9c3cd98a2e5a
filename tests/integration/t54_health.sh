#!/usr/bin/env bash
# t54_health: the root's health and metrics files (issue 11 item 9): their
# format, that their counts move, and that reading them changes nothing.
# shellcheck disable=SC2016,SC2317  # functions called through sfs_until
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

H=$MNT/health
M=$MNT/metrics
for f in health metrics; do
	assert_eq 444 "$(stat -c %a "$MNT/$f" 2>&1)" "$f is mode 0444"
done

# metric NAME[{LABELS}]: its value in a fresh read of metrics
metric() {
	timeout 5 cat "$M" | awk -v k="$1" '$1 == k { print $2 }'
}
# hval KEY: its value in a fresh read of health
hval() { timeout 5 cat "$H" | awk -v k="$1" '$1 == k { print $2 }'; }

# health: ok and the key value lines, in order
hf=$SFS_TMP/health
if sfs_cat "$H" "$hf" &&
	[ "$(awk '{ print $1 }' "$hf" | tr '\n' ' ')" = "ok version uptime_s sessions runs_active pid upgrades recoveries " ] &&
	[ "$(head -n 1 "$hf")" = ok ] &&
	! grep -vqE '^(ok|[a-z_]+ [0-9A-Za-z.+-]+)$' "$hf"; then
	pass "health is ok and key value lines"
else
	fail "health is ok and key value lines" "got $(sfs_show "$hf")"
fi
assert_eq "$("$SESSIONFS_BIN" --version 2>/dev/null | awk '$1 == "sessionfs" { print $3 }')" "$(hval version)" "health gives the version"
assert_eq 1 "$(hval sessions)" "health: one session (the default)"

# metrics: the text exposition format, a HELP and a TYPE for each metric
mf=$SFS_TMP/metrics
if sfs_cat "$M" "$mf" && [ -s "$mf" ]; then
	bad=$(grep -v '^#' "$mf" | grep -vE '^sessionfs_[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? [0-9]+(\.[0-9]+)?$')
	assert_eq "" "$bad" "every sample line of metrics is well formed"
	missing=
	while read -r n; do
		grep -qE "^# HELP $n .+" "$mf" && grep -qE "^# TYPE $n (gauge|counter)$" "$mf" ||
			missing+=" $n"
	done < <(grep -v '^#' "$mf" | sed 's/[{ ].*//' | sort -u)
	assert_eq "" "$missing" "each metric has HELP and TYPE"
	for n in sessions procs spool_bytes spool_budget_bytes shells_restarted_total refusals_total; do
		check "metrics has sessionfs_$n" grep -qE "^sessionfs_$n [0-9]+$" "$mf"
	done
	for st in running queued completed failed timed-out killed canceled error; do
		check "metrics has runs in state $st" grep -qE "^sessionfs_runs\{state=\"$st\"\} [0-9]+$" "$mf"
	done
else
	fail "metrics is readable and non-empty" "got $(sfs_show "$mf")"
fi

# reading changes nothing: the tree and the counts are the same after
# many reads, and a read refuses nothing
snap() {
	{
		timeout 5 ls -lA "$MNT" "$MNT/sessions" "$MNT/sessions/default/runs" |
			awk '{ print $1, $NF }'
		timeout 5 cat "$MNT/sessions/default/error"
		# uptime moves, and so do the CPU poll holds with any request,
		# the count of OPENDIRs with this very listing, and files/'
		# request counts with whatever else changes the workspace's
		# filesystem meanwhile (its root's attributes are dropped)
		timeout 5 cat "$M" | grep -v -e uptime -e cpu_poll -e opendirs_total \
			-e '^sessionfs_files_[a-z]*_total'
	} 2>&1 | grep -v '^total'
}
before=$(snap)
for _ in 1 2 3 4 5; do timeout 5 cat "$H" "$M" >/dev/null; done
assert_eq "$before" "$(snap)" "reading health and metrics changes nothing"

# counts move: two sessions more, a running run, a shell that dies
check "mkdir a session" sfs_mkdir "$MNT/sessions/a"
check "mkdir another" sfs_mkdir "$MNT/sessions/b"
assert_eq 3 "$(hval sessions)" "health: 3 sessions with the default one"
assert_eq 3 "$(metric sessionfs_sessions)" "metrics: 3 sessions"

assert_eq 0 "$(hval runs_active)" "no run is active yet"
sfs_run_bg "$MNT/sessions/a" 'sleep 4'
active() { [ "$(hval runs_active)" = 1 ]; }
check "a sleep run: runs_active 1" sfs_until 5 active
assert_eq 1 "$(metric 'sessionfs_runs{state="running"}')" "a sleep run: one running run in metrics"

r0=$(metric sessionfs_shells_restarted_total)
sfs_run "$MNT/sessions/b" 'kill -9 $$'
restarted() { [ "$(metric sessionfs_shells_restarted_total)" = $((r0 + 1)) ]; }
check "a killed shell: shells restarted +1" sfs_until 5 restarted
assert_eq hi "$(sfs_run_out "$MNT/sessions/b" 'echo hi')" "the next run gets a new shell"

done_run() { [ "$(hval runs_active)" = 0 ]; }
check "the sleep run ends: runs_active 0" sfs_until 10 done_run
assert_eq 2 "$(metric 'sessionfs_runs{state="completed"}')" "metrics counts the ended runs as completed"

# refusals are counted: a bad ctl line is one
e0=$(metric sessionfs_refusals_total)
sfs_write "$MNT/sessions/a/ctl" $'bogus\n' 5 2>/dev/null
e1=$(metric sessionfs_refusals_total)
assert_true "a refusal moves refusals_total" "from $e0 to $e1" test "${e1:-0}" -gt "${e0:-0}"

sfs_done
