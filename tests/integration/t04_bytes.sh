#!/usr/bin/env bash
# t04_bytes: sessionfs(7) "SESSIONS AND RUNS": output is kept byte for byte: printf x
# gives exactly "x"; 'a\0b' three bytes; invalid UTF-8 kept; 8 MiB of
# output and 100,000 lines arrive whole (size and checksum).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

SFS_READ_T=60
sfs_mount

S=$MNT/sessions/bytes
check "mkdir sessions/bytes" sfs_mkdir "$S"

assert_run_ok "run: printf x" "$S" 'printf x'
assert_file_eq "$S/stdout" "x" "printf x gives exactly x (no newline added)"
assert_file_eq "$S/output" "x" "output of printf x is exactly x"
assert_eq 1 "$(timeout 10 stat -c %s "$S/stdout")" "stat size of stdout is 1"

assert_run_ok "run: printf 'a\\0b'" "$S" "printf 'a\\0b'"
assert_file_printf "$S/stdout" 'a\000b' "printf 'a\\0b' gives the three bytes a NUL b"
assert_eq 3 "$(timeout 10 stat -c %s "$S/stdout")" "stat size of stdout is 3"

assert_run_ok "run: printf invalid UTF-8" "$S" "printf '\\377\\376\\300\\n'"
assert_file_printf "$S/stdout" '\377\376\300\n' "invalid UTF-8 is kept byte for byte"

assert_run_ok "run: trailing newlines, stderr without newline" "$S" "printf 'x\\n\\n'; printf e >&2"
assert_file_eq "$S/stdout" $'x\n\n' "trailing newlines are not stripped"
assert_file_eq "$S/stderr" "e" "stderr gets no newline added"

# 8 MiB of random bytes; the run also tees them to a local file
big=$SFS_TMP/big.bin
size=$((8 * 1024 * 1024))
assert_run_ok "run: 8 MiB of random output" "$S" "head -c $size /dev/urandom | tee '$big'" 120
got=$SFS_TMP/big.got
if sfs_cat "$S/stdout" "$got" 60; then
	assert_eq "$size" "$(wc -c <"$got")" "8 MiB output: all bytes read back"
	assert_eq "$(cksum <"$big")" "$(cksum <"$got")" "8 MiB output: same checksum"
else
	fail "8 MiB output: all bytes read back" "reading stdout failed or timed out"
fi
assert_eq "$size" "$(timeout 10 stat -c %s "$S/stdout")" "8 MiB output: stat size of stdout"
assert_file_same "$S/output" "$big" "8 MiB output: output holds the same bytes"
assert_file_eq "$S/exit" $'0\n' "8 MiB output: exit 0"

# 100,000 lines
want=$SFS_TMP/lines.want
seq 1 100000 >"$want"
assert_run_ok "run: seq 1 100000" "$S" 'seq 1 100000' 60
got=$SFS_TMP/lines.got
if sfs_cat "$S/stdout" "$got" 60; then
	assert_eq 100000 "$(wc -l <"$got")" "100,000 lines: line count"
	assert_eq "$(wc -c <"$want")" "$(wc -c <"$got")" "100,000 lines: byte count"
	assert_eq "$(cksum <"$want")" "$(cksum <"$got")" "100,000 lines: same checksum"
else
	fail "100,000 lines: line count" "reading stdout failed or timed out"
fi

# much output on both streams at the same time must not deadlock
want2=$SFS_TMP/both.want
seq 1 200000 >"$want2"
assert_run_ok "run: 200,000 lines on stdout and stderr at once" "$S" \
	'seq 1 200000 & seq 1 200000 >&2; wait' 60
assert_file_same "$S/stdout" "$want2" "both streams at once: stdout whole"
assert_file_same "$S/stderr" "$want2" "both streams at once: stderr whole"
got=$SFS_TMP/both.output
if sfs_cat "$S/output" "$got" 60; then
	assert_eq $((2 * $(wc -c <"$want2"))) "$(wc -c <"$got")" "both streams at once: output holds both"
else
	fail "both streams at once: output holds both" "reading output failed"
fi

sfs_done
