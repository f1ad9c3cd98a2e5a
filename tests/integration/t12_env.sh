#!/usr/bin/env bash
# t12_env: sessionfs(7) "SESSIONS AND RUNS": env/NAME values are taken literally
# ($(whoami), `date`, quotes, an embedded newline): written with one
# trailing newline stripped, read back as value + "\n", seen byte for byte
# by a run; invalid names give EINVAL; rm unsets; ls lists what commands
# export.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/envs
check "mkdir sessions/envs" sfs_mkdir "$S"

# NAME VALUE LABEL: set with VALUE + "\n", read back, see it in a run
env_case() {
	local name=$1 val=$2 label=$3
	if sfs_write "$S/env/$name" "$val"$'\n' 10; then
		pass "$label: write env/$name"
	else
		fail "$label: write env/$name" "$(head -c 200 "$SFS_TMP/write.err" | tr '\n' ' ')"
	fi
	assert_file_eq "$S/env/$name" "$val"$'\n' "$label: env/$name reads back value + newline"
	assert_run_ok "$label: run printf %s \"\$$name\"" "$S" "printf %s \"\$$name\"" 10
	assert_file_eq "$S/stdout" "$val" "$label: the run sees the value literally"
}

# before the first run (createSession's options) ...
env_case V1 '$(whoami)' '$(whoami)'
env_case V2 '`date`' 'backtick date'
# ... and between runs
env_case V3 "it's \"quoted\"" "it's \"quoted\""
env_case V4 $'line1\nline2' 'embedded newline'
env_case V5 ' spaces  and	tab ' 'spaces and tab'
env_case V6 '$HOME;${PATH};\n' 'dollar, braces, backslash'

# only one trailing newline is stripped; none is fine too
if sfs_write "$S/env/NONL" 'abc' 10; then pass "write env/NONL without newline"; else
	fail "write env/NONL without newline" "$(head -c 200 "$SFS_TMP/write.err")"
fi
assert_file_eq "$S/env/NONL" $'abc\n' "a value written without newline reads back + newline"
if sfs_write "$S/env/TWONL" $'abc\n\n' 10; then pass "write env/TWONL with two newlines"; else
	fail "write env/TWONL with two newlines" "$(head -c 200 "$SFS_TMP/write.err")"
fi
assert_run_ok "run: printf TWONL" "$S" 'printf %s "$TWONL"' 10
assert_file_eq "$S/stdout" $'abc\n' "only one trailing newline is stripped"

# invalid names
for n in 1A A-B 'A B' 'A=B' 'A.B'; do
	assert_write_errno EINVAL "env name '$n' gives EINVAL" "$S/env/$n" $'x\n'
done
ls_e=$(timeout 10 ls "$S/env")
assert_true "no invalid name is listed in env/" "ls gave: $(echo "$ls_e" | tr '\n' ' ')" \
	test -z "$(grep -xE -e '1A|A-B|A B|A=B|A\.B' <<<"$ls_e")"
for n in _x A1 a_B_9; do
	if sfs_write "$S/env/$n" $'ok\n' 10; then pass "env name '$n' is valid"; else
		fail "env name '$n' is valid" "$(head -c 200 "$SFS_TMP/write.err")"
	fi
done

# rm unsets
check "rm env/V1" rm -- "$S/env/V1"
assert_true "env/V1 is gone after rm" "it still exists" timeout 5 test ! -e "$S/env/V1"
assert_run_ok "run: V1 after rm" "$S" 'echo "${V1-unset}"' 10
assert_file_eq "$S/stdout" $'unset\n' "rm env/V1 unsets V1 in the shell"

# a variable exported by a command shows in env/
assert_run_ok "run: export FOO=1" "$S" 'export FOO=1' 10
ls_e=$(timeout 10 ls "$S/env")
assert_true "ls env/ lists FOO exported by a command" "ls gave: $(echo "$ls_e" | tr '\n' ' ')" \
	grep -qx FOO <<<"$ls_e"
assert_file_eq "$S/env/FOO" $'1\n' "env/FOO reads 1"
for n in V2 V3 V4; do
	assert_true "ls env/ lists $n" "ls gave: $(echo "$ls_e" | tr '\n' ' ')" grep -qx "$n" <<<"$ls_e"
done
assert_true "ls env/ no longer lists V1" "ls gave: $(echo "$ls_e" | tr '\n' ' ')" \
	test -z "$(grep -x V1 <<<"$ls_e")"

# a variable unset by a command disappears
assert_run_ok "run: unset FOO" "$S" 'unset FOO' 10
assert_true "env/FOO is gone after unset in a command" "it still exists" timeout 5 test ! -e "$S/env/FOO"

# env/ of one session does not leak into another
T=$MNT/sessions/envs2
check "mkdir sessions/envs2" sfs_mkdir "$T"
assert_run_ok "run in the other session" "$T" 'echo "${V3-unset}"' 10
assert_file_eq "$T/stdout" $'unset\n' "another session does not see V3"

sfs_done
