#!/usr/bin/env bash
# t05_scripts: sessionfs(7) "SESSIONS AND RUNS": multi-line scripts, quoted and unquoted
# heredocs, a 1 MiB script, syntax errors (`fi`, unterminated quotes) fail
# the run with exit 2 and leave the session working.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/scripts
check "mkdir sessions/scripts" sfs_mkdir "$S"

assert_run_ok "run: multi-line script" "$S" $'X=world\nif [ -n "$X" ]; then\n  echo "yes $X"\nfi\nfor i in 1 2 3; do printf %s "$i"; done\necho'
assert_file_eq "$S/stdout" $'yes world\n123\n' "multi-line script with if and for"

assert_run_ok "run: unquoted heredoc" "$S" $'Y=there\ncat <<EOF\nhello $Y\n$(echo sub) `echo tick`\nEOF'
assert_file_eq "$S/stdout" $'hello there\nsub tick\n' "unquoted heredoc expands"

assert_run_ok "run: quoted heredoc" "$S" $'cat <<\'EOF\'\nhello $Y\n$(echo sub) "q" \'s\'\nEOF'
assert_file_eq "$S/stdout" $'hello $Y\n$(echo sub) "q" \'s\'\n' "quoted heredoc is literal"

assert_run_ok "run: heredoc with <<-" "$S" $'cat <<-END\n\tindented\n\tEND\necho after'
assert_file_eq "$S/stdout" $'indented\nafter\n' "heredoc <<- strips tabs"

# a script of exactly 1 MiB: 95,000 increments, an echo, a comment as padding
script=$SFS_TMP/big.sh
{
	echo 'x=0'
	yes 'x=$((x+1))' | head -n 95000
	echo 'echo end $x'
} >"$script"
pad=$((1048576 - $(wc -c <"$script") - 2))
{
	printf '#'
	head -c "$pad" /dev/zero | tr '\0' p
	printf '\n'
} >>"$script"
assert_eq 1048576 "$(wc -c <"$script")" "the generated script is 1 MiB"
if sfs_write_file "$S/cmd" "$script" 60; then
	pass "1 MiB script: the close of cmd succeeds"
else
	fail "1 MiB script: the close of cmd succeeds" "$(head -c 200 "$SFS_TMP/write.err")"
fi
assert_file_eq "$S/stdout" $'end 95000\n' "1 MiB script: every line ran"
assert_file_eq "$S/exit" $'0\n' "1 MiB script: exit 0"
SFS_READ_T=30 assert_file_same "$S/cmd" "$script" "1 MiB script: cmd reads back the whole script"

# syntax error: `fi`
assert_run_ok "run: export K and cd before the syntax errors" "$S" 'export K=keep; cd /tmp'
sfs_run "$S" 'fi'
assert_file_eq "$S/exit" $'2\n' "'fi' gives exit 2"
assert_file_match "$S/stderr" 'syntax error' "'fi' reports a syntax error on stderr"
assert_run_ok "run after 'fi'" "$S" 'echo "alive $K $PWD"'
assert_file_eq "$S/stdout" $'alive keep /tmp\n' "after 'fi' the session works, cwd and exports kept"
assert_file_eq "$S/exit" $'0\n' "after 'fi' exit 0"

# a syntax error further down a script also fails the run
sfs_run "$S" $'echo before\nif then\necho after'
assert_file_eq "$S/exit" $'2\n' "syntax error inside a script gives exit 2"

# unterminated quotes
sfs_run "$S" "echo 'abc"
assert_file_eq "$S/exit" $'2\n' "unterminated single quote gives exit 2"
assert_run_ok "run after the unterminated single quote" "$S" 'echo ok1'
assert_file_eq "$S/stdout" $'ok1\n' "after an unterminated ' the next run works"

sfs_run "$S" 'echo "abc'
assert_file_eq "$S/exit" $'2\n' "unterminated double quote gives exit 2"
assert_run_ok "run after the unterminated double quote" "$S" 'echo "ok2 $K"'
assert_file_eq "$S/stdout" $'ok2 keep\n' "after an unterminated \" the next run works"

sfs_run "$S" 'cat <<EOF'
assert_run_ok "run after an unterminated heredoc" "$S" 'echo ok3'
assert_file_eq "$S/stdout" $'ok3\n' "after an unterminated heredoc the next run works"

sfs_done
