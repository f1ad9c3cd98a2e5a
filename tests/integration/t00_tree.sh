#!/usr/bin/env bash
# t00_tree: the tree of sessionfs(7) "THE TREE" and the README's example.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

check "ls -la of the root" ls -la "$MNT"
check "ls -la of sessions/" ls -la "$MNT/sessions"
ls_root=$(timeout 10 ls "$MNT")
for n in README health metrics sessions; do
	assert_true "root lists $n" "ls gave: $(echo "$ls_root" | tr '\n' ' ')" \
		grep -qx -- "$n" <<<"$ls_root"
done

# README: non-empty text
readme=$SFS_TMP/readme
if sfs_cat "$MNT/README" "$readme" && [ -s "$readme" ]; then
	pass "README is non-empty"
else
	fail "README is non-empty" "read failed or empty: $(sfs_show "$readme")"
fi

# clone, opened for writing (read id <> clone): creates a session, reads
# "ID\n" (a read-only open creates nothing since issue 10: t34)
idf=$SFS_TMP/clone
clone() { timeout -k 2 10 bash -c 'cat <>"$1"' _ "$MNT/sessions/clone"; }
if clone >"$idf" 2>"$idf.err"; then
	id=$(<"$idf")
	if [ "$(wc -l <"$idf")" = 1 ] && [ "$(tail -c 1 "$idf")" = "" ] &&
		[[ $id =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$ ]]; then
		pass "sessions/clone returns one valid ID and a newline"
	else
		fail "sessions/clone returns one valid ID and a newline" "got $(sfs_show "$idf")"
	fi
	check "the cloned session's directory exists" test -d "$MNT/sessions/$id"
	ls_s=$(timeout 10 ls "$MNT/sessions")
	assert_true "sessions/ lists the cloned session" "ls gave: $(echo "$ls_s" | tr '\n' ' ')" \
		grep -qxF -- "$id" <<<"$ls_s"
	id2=$(clone)
	assert_true "a second clone gives another id" "both gave $(sfs_q "$id")" \
		test "${id2:-$id}" != "$id"
else
	fail "sessions/clone returns one valid ID and a newline" "read failed: $(head -c 200 "$idf.err")"
fi

# a session directory and its files
S=$MNT/sessions/tree
check "mkdir sessions/tree" sfs_mkdir "$S"
check "ls -la of a session" ls -la "$S"
ls_sess=$(timeout 10 ls "$S")
for n in cmd stdout stderr output exit status result.json cwd env timeout error runs; do
	assert_true "session lists $n" "ls gave: $(echo "$ls_sess" | tr '\n' ' ')" \
		grep -qx -- "$n" <<<"$ls_sess"
done
check "ls -la of a session's env/" ls -la "$S/env"

# the core example, typed literally
check "echo 'cd /tmp && export GREETING=hi' > cmd" \
	sfs_sh "$S" "echo 'cd /tmp && export GREETING=hi' > cmd"
sfs_sh "$S" "echo 'echo \"\$GREETING from \$PWD\"; echo oops >&2; exit 3' > cmd"
assert_file_eq "$S/stdout" $'hi from /tmp\n' "core example: stdout"
assert_file_eq "$S/stderr" $'oops\n' "core example: stderr"
assert_file_eq "$S/exit" $'3\n' "core example: exit"
assert_file_eq "$S/cwd" $'/tmp\n' "core example: cwd"
assert_file_match "$S/result.json" '"exitCode"[[:space:]]*:[[:space:]]*3([^0-9]|$)' \
	'result.json has "exitCode":3'
assert_file_match "$S/status" '^exit 3$' "status has the line 'exit 3'"

# stat size of stdout is its byte count
sz=$(timeout 10 stat -c %s "$S/stdout")
n=$(timeout 10 cat "$S/stdout" | wc -c)
assert_eq 13 "$n" "stdout holds 13 bytes"
assert_eq "$n" "$sz" "stat -c %s stdout equals its byte count"

# env/ANSWER
check "echo 42 > env/ANSWER" sfs_sh "$S" 'echo 42 > env/ANSWER'
assert_file_eq "$S/env/ANSWER" $'42\n' "cat env/ANSWER gives 42"
check "ls -la of env/ after a set" ls -la "$S/env"

sfs_done
