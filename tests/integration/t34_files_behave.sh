#!/usr/bin/env bash
# t34_files_behave: files that behave like files (issue 10 §4).
# 1. A command is every byte written through the open file description,
#    also by processes that inherited it; it starts at the opener's close
#    (session cmd, runs/NAME/cmd, procs/NAME/cmd).
# 2. pwrite offsets and ftruncate of an open cmd are honoured.
# 3. O_NONBLOCK reads of exit and stream give EAGAIN; poll still works.
# 4. stream has the size of the output so far and is seekable: tail -f.
# 5. No read creates anything: clone makes a session only when opened for
#    writing; grep -r leaves sessions/ as it was; mktemp -d works.
# 6. One refusal is one line in error; a ctl write is all or nothing; a
#    refused env write creates nothing.
# 7. env/ refuses what the shell cannot apply: E2BIG values, readonly
#    variables, bash's own special variables.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/fb
check "mkdir sessions/fb" sfs_mkdir "$S"

py() { timeout -k 2 "$SFS_T" python3 -c "$@"; }

# ------------------------------------------------ 1. the opener's close
printf 'echo a1\n' >"$SFS_TMP/a.sh"
printf 'echo b2\n' >"$SFS_TMP/b.sh"
rc=0
timeout -k 2 "$SFS_T" bash -c '{ cat "$2/a.sh"; cat "$2/b.sh"; } > "$1/cmd"' _ "$S" "$SFS_TMP" 2>"$SFS_TMP/w1.err" || rc=$?
assert_eq "0 " "$rc $(head -c 200 "$SFS_TMP/w1.err")" "two cats into one open cmd: no error"
assert_file_eq "$S/stdout" $'a1\nb2\n' "two cats into one open cmd: one run of both scripts"
rc=0
timeout -k 2 "$SFS_T" bash -c "{ printf 'echo '; sleep 0.1; printf 'x\n'; } > \"\$1/cmd\"" _ "$S" 2>"$SFS_TMP/w2.err" || rc=$?
assert_eq "0 " "$rc $(head -c 200 "$SFS_TMP/w2.err")" "a child's exit between writes: no error"
assert_file_eq "$S/stdout" $'x\n' "a child's exit between writes does not start the run"
assert_file_eq "$S/cmd" $'echo x\n' "cmd reads back every byte written"
# the opener's close waits for the run as before
t0=$(now_ms)
timeout -k 2 "$SFS_T" bash -c '{ echo "sleep 0.4"; /bin/true; } > "$1/cmd"' _ "$S"
assert_true "the opener's close returns once the run has ended" "it took $(($(now_ms) - t0)) ms" \
	test $(($(now_ms) - t0)) -ge 350
# runs/NAME/cmd
check "mkdir runs/two" sfs_mkdir "$S/runs/two"
timeout -k 2 "$SFS_T" bash -c '{ cat "$2/a.sh"; cat "$2/b.sh"; } > "$1/runs/two/cmd"' _ "$S" "$SFS_TMP" 2>"$SFS_TMP/w3.err"
assert_eq "0 " "$? $(head -c 200 "$SFS_TMP/w3.err")" "runs/NAME/cmd: two cats, no error"
assert_file_eq "$S/runs/two/stdout" $'a1\nb2\n' "runs/NAME/cmd: both scripts in the one run"
# procs/NAME/cmd
check "mkdir procs/p1" sfs_mkdir "$S/procs/p1"
timeout -k 2 "$SFS_T" bash -c '{ cat "$2/a.sh"; cat "$2/b.sh"; } > "$1/procs/p1/cmd"' _ "$S" "$SFS_TMP" 2>"$SFS_TMP/w4.err"
assert_eq "0 " "$? $(head -c 200 "$SFS_TMP/w4.err")" "procs/NAME/cmd: two cats, no error"
sfs_until 10 grep -qx 'state completed' "$S/procs/p1/status"
assert_file_eq "$S/procs/p1/stdout" $'a1\nb2\n' "procs/NAME/cmd: both scripts in the one process"
# a write after the opener's close started the run is refused
timeout -k 2 "$SFS_T" bash -c 'exec 3>"$1/cmd"; echo "echo early" >&3; (sleep 0.5; echo "echo late" >&3) & exec 3>&-; wait $!' _ "$S" 2>"$SFS_TMP/w5.err"
assert_file_match "$SFS_TMP/w5.err" 'Device or resource busy' "a write after the opener's close started the run: EBUSY"
assert_file_eq "$S/stdout" $'early\n' "the run is what was written before the opener's close"
# written only after the opener's close: it starts when the last descriptor is closed
timeout -k 2 "$SFS_T" bash -c 'exec 3>"$1/cmd"; (sleep 0.3; echo "echo orphan" >&3) & exec 3>&-; wait $!' _ "$S"
sfs_until 10 grep -qx orphan "$S/stdout"
assert_file_eq "$S/stdout" $'orphan\n' "written only by an inheritor: it runs at the last close"

# ------------------------------------------------ 2. offsets and ftruncate
py 'import os,sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.pwrite(fd, b"echo AAAA\n", 0)
os.pwrite(fd, b"BB", 5)
os.close(fd)' "$S/cmd"
assert_file_eq "$S/stdout" $'BBAA\n' "pwrite at offset 5 overwrites bytes 5-6"
py 'import os,sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"echo one; echo two\n")
os.ftruncate(fd, 9)
os.lseek(fd, 0, os.SEEK_END)
os.close(fd)' "$S/cmd"
assert_file_eq "$S/stdout" $'one\n' "ftruncate of an open cmd keeps that many bytes"
py 'import os,sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.pwrite(fd, b"echo x\n", 0)
os.pwrite(fd, b"\n", 10)
os.close(fd)' "$S/cmd"
assert_file_printf "$S/cmd" 'echo x\n\0\0\0\n' "a pwrite past the end leaves a hole of NUL bytes"
py 'import os,sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"echo ab\n")
os.ftruncate(fd, 12)
os.close(fd)' "$S/cmd"
assert_file_printf "$S/cmd" 'echo ab\n\0\0\0\0' "ftruncate past the end extends with NUL bytes"
check "cmd opened with O_APPEND (>>) after a long command" sfs_run "$S" 'echo long long long long long long'
timeout -k 2 "$SFS_T" bash -c 'echo "echo app" >> "$1/cmd"' _ "$S"
assert_file_eq "$S/stdout" $'app\n' "cmd opened with O_APPEND: writes go at the end, no hole"

# ------------------------------------------------ 3. O_NONBLOCK
sfs_run_bg "$S" 'echo started; sleep 1; echo done; sleep 1'
sfs_until 10 grep -qx 'state running' "$S/status"
nb=$(py 'import errno,os,select,sys
out = []
for name in ("stream", "exit"):
    fd = os.open(sys.argv[1] + "/" + name, os.O_RDONLY | os.O_NONBLOCK)
    p = select.poll()
    p.register(fd, select.POLLIN)
    if name == "stream":  # "started": what is there reads at once
        p.poll(5000)
        os.read(fd, 100)
    try:
        os.read(fd, 100)
        out.append(name + ":read")
    except OSError as e:
        out.append(name + ":" + errno.errorcode[e.errno])
    out.append("now" if p.poll(0) else "later")
    out.append("ready" if p.poll(5000) else "timeout")
    os.close(fd)
print(" ".join(out))' "$S" 2>&1)
assert_eq "stream:EAGAIN later ready exit:EAGAIN later ready" "$nb" \
	"O_NONBLOCK reads of stream and exit of a running run: EAGAIN; poll wakes up"
wait "$SFS_BG"
assert_file_eq "$S/exit" $'0\n' "exit after the nonblocking reads"
nb=$(py 'import os,sys
fd = os.open(sys.argv[1] + "/exit", os.O_RDONLY | os.O_NONBLOCK)
print(os.read(fd, 100).decode().strip())' "$S" 2>&1)
assert_eq "0" "$nb" "O_NONBLOCK read of exit of an ended run gives its status"

# ------------------------------------------------ 4. tail -f stream
sfs_run_bg "$S" 'for i in 1 2 3 4 5 6; do echo line$i; sleep 0.3; done'
sfs_until 10 grep -qx 'state running' "$S/status"
timeout 5 tail -f "$S/stream" >"$SFS_TMP/tail.out" 2>"$SFS_TMP/tail.err"
assert_eq "124" "$?" "tail -f stream runs until its timeout"
wait "$SFS_BG"
assert_eq "line1 line2 line3 line4 line5 line6 " "$(tr '\n' ' ' <"$SFS_TMP/tail.out")" \
	"tail -f stream prints every line of the run"
assert_eq "" "$(head -c 300 "$SFS_TMP/tail.err")" "tail -f stream: nothing on stderr"
sz=$(timeout 5 stat -c %s "$S/stream")
assert_eq "$(timeout 5 stat -c %s "$S/output")" "$sz" "stream's size is the output so far"
got=$(py 'import os,sys
fd = os.open(sys.argv[1] + "/stream", os.O_RDONLY)
print(os.pread(fd, 5, 6).decode())' "$S" 2>&1)
assert_eq "line2" "$got" "stream is seekable: pread at an offset"
assert_file_eq "$S/stream" $'line1\nline2\nline3\nline4\nline5\nline6\n' "cat stream of an ended run"

# ------------------------------------------------ 5. reading creates nothing
ls_sessions() { timeout 10 ls "$MNT/sessions" | tr '\n' ' '; }
before=$(ls_sessions)
assert_file_eq "$MNT/sessions/clone" "" "a read-only open of clone reads nothing"
assert_eq "$before" "$(ls_sessions)" "reading clone creates no session"
timeout 20 grep -r x "$MNT/sessions" >/dev/null 2>&1
rc=$?
assert_true "grep -r over sessions/ ends" "status $rc" test "$rc" -ne 124
timeout 20 tar -cf - "$MNT/sessions" 2>/dev/null | wc -c >/dev/null
timeout 20 find "$MNT/sessions" -type f -perm -0400 -exec cat {} + >/dev/null 2>&1
timeout 20 cp -r "$MNT/sessions" "$SFS_TMP/copy" >/dev/null 2>&1
assert_eq "$before" "$(ls_sessions)" "grep -r, tar, find -exec cat, cp -r: sessions/ unchanged"
id=$(timeout -k 2 10 bash -c 'read -r id <>"$1" && echo "$id"' _ "$MNT/sessions/clone")
assert_true "read id <> clone gives a new session's id" "got $(sfs_q "$id")" \
	test -n "$id" -a -d "$MNT/sessions/$id"
assert_eq "$(printf '%s%s\n' "$before" "$id" | tr ' ' '\n' | sort | tr '\n' ' ')" "$(ls_sessions)" \
	"read id <> clone: exactly one session more"
check "a session made through clone runs commands" sfs_run "$MNT/sessions/$id" 'echo hi'
check "rmdir the cloned session" timeout 10 rmdir "$MNT/sessions/$id"
tmpd=$(timeout 10 mktemp -d "$MNT/sessions/XXXXXX" 2>"$SFS_TMP/mktemp.err")
assert_true "mktemp -d sessions/XXXXXX makes a session" \
	"status $?: $(head -c 200 "$SFS_TMP/mktemp.err")" test -n "$tmpd" -a -d "$tmpd/env"
check "a session made by mktemp -d runs commands" sfs_run "$tmpd" 'echo hi'
check "rmdir the mktemp session" timeout 10 rmdir "$tmpd"

# ------------------------------------------------ 6. refusals
nerr() { timeout 10 cat "$S/error" | wc -l; }
# a cwd is checked for its form only (t44): one with a newline is taken,
# and the run that cannot enter it says so in one line
cwd0=$(timeout 5 cat "$S/cwd")
check "printf '/tmp\\n\\n' > cwd is taken" bash -c 'printf "/tmp\n\n" > "$1/cwd"' _ "$S"
n0=$(nerr)
check "the run after it returns" sfs_run "$S" 'echo ran'
assert_eq $((n0 + 1)) "$(nerr)" "a cwd with a newline that cannot be entered is one line in error"
assert_file_match "$S/error" 'cwd /tmp\\n: No such file' "the error line shows the newline escaped"
check "the cwd written back" sfs_write "$S/cwd" "$cwd0"$'\n'
sfs_run_bg "$S" 'sleep 1.5; echo survived'
sfs_until 10 grep -qx 'state running' "$S/status"
assert_errno EINVAL "printf 'bogus\\nkill\\n' > ctl is EINVAL" bash -c 'printf "bogus\nkill\n" > "$1/ctl"' _ "$S"
wait "$SFS_BG"
assert_file_eq "$S/stdout" $'survived\n' "a refused ctl write carries out none of its lines"
assert_file_eq "$S/exit" $'0\n' "the run was not killed"
check "echo keep > env/OLD" sfs_write "$S/env/OLD" $'keep\n'
assert_errno EINVAL "a value with a NUL is EINVAL (new variable)" bash -c 'printf "a\0b" > "$1/env/NEWV"' _ "$S"
assert_true "a refused write creates no variable" "env/NEWV exists" timeout 5 test ! -e "$S/env/NEWV"
assert_errno EINVAL "a value with a NUL is EINVAL (existing variable)" bash -c 'printf "a\0b" > "$1/env/OLD"' _ "$S"
assert_file_eq "$S/env/OLD" $'keep\n' "a refused write leaves the old value"
assert_errno EINVAL "root env/: a value with a NUL is EINVAL" bash -c 'printf "a\0b" > "$1/env/RNEW"' _ "$MNT"
assert_true "root env/: a refused write creates no variable" "it exists" \
	timeout 5 test ! -e "$MNT/env/RNEW" -a ! -e "$S/env/RNEW"
check ": > env/OLD empties it" sfs_sh "$S" ': > env/OLD'
assert_file_eq "$S/env/OLD" $'\n' ": > env/OLD: the empty value"
assert_eq "|" "$(sfs_run_out "$S" 'echo "${OLD-unset}|"')" "the shell has OLD empty"

# ------------------------------------------------ 7. what the shell cannot apply
S7=$MNT/sessions/env7
check "mkdir sessions/env7" sfs_mkdir "$S7"
vals() { head -c "$1" /dev/zero | tr '\0' a; }
n0=$(timeout 10 cat "$S7/error" | wc -l)
vals 131068 >"$SFS_TMP/v.over"
assert_errno E2BIG "BIG=value of 131073 bytes with its NUL: E2BIG" bash -c 'cat "$2" > "$1/env/BIG"' _ "$S7" "$SFS_TMP/v.over"
assert_true "the refused variable does not exist" "env/BIG exists" timeout 5 test ! -e "$S7/env/BIG"
assert_eq $((n0 + 1)) "$(timeout 10 cat "$S7/error" | wc -l)" "E2BIG: one line in error"
assert_file_match "$S7/error" 'env/BIG: .*more than execve takes' "E2BIG: the error line says why"
vals 131067 >"$SFS_TMP/v.max"
check "BIG=value of 131072 bytes with its NUL is accepted" bash -c 'cat "$2" > "$1/env/BIG"' _ "$S7" "$SFS_TMP/v.max"
check "a run with it execs a program" sfs_run "$S7" '/bin/true && echo "${#BIG}"'
assert_file_eq "$S7/stdout" $'131067\n' "the run has the whole value"
assert_file_eq "$S7/exit" $'0\n' "and exits 0"
check "rm env/BIG" timeout 10 rm "$S7/env/BIG"
budget=$(($(getconf ARG_MAX) / 2))
vals 120000 >"$SFS_TMP/v.120k"
i=0 rc=0
while [ $i -lt $((budget / 120000 + 1)) ]; do
	bash -c 'cat "$2" > "$1/env/V$3"' _ "$S7" "$SFS_TMP/v.120k" $i 2>"$SFS_TMP/v.err" || { rc=1; break; }
	i=$((i + 1))
done
assert_eq "1 $((budget / 120000))" "$rc $i" "the environment past half of ARG_MAX: the write that crosses it fails"
assert_file_match "$SFS_TMP/v.err" 'Argument list too long' "... with E2BIG"
check "a run still execs a program" sfs_run "$S7" '/bin/true'
assert_file_eq "$S7/exit" $'0\n' "... and exits 0"
for ((j = 0; j < i; j++)); do timeout 5 rm -f "$S7/env/V$j"; done
# readonly
check "declare -rx RO=1 in a run" sfs_run "$S7" 'declare -rx RO=1'
assert_errno EPERM "echo 2 > env/RO (readonly in the shell): EPERM" bash -c 'echo 2 > "$1/env/RO"' _ "$S7"
assert_file_eq "$S7/env/RO" $'1\n' "env/RO still reads 1"
assert_errno EPERM "rm env/RO: EPERM" rm "$S7/env/RO"
assert_file_match "$S7/error" 'env/RO: readonly in the shell' "the refusal is in error"
check "the next run" sfs_run "$S7" 'echo "$RO"'
assert_file_eq "$S7/stdout" $'1\n' "the next run has RO=1"
assert_file_eq "$S7/stderr" "" "the next run's stderr is clean"
# bash's own variables
assert_errno EPERM "echo xtrace > env/SHELLOPTS: EPERM" bash -c 'echo xtrace > "$1/env/SHELLOPTS"' _ "$S7"
assert_true "env/SHELLOPTS was not created" "it exists" timeout 5 test ! -e "$S7/env/SHELLOPTS"
assert_file_match "$S7/error" "env/SHELLOPTS: bash's own variable" "the refusal of SHELLOPTS is in error"
for v in BASH_ENV ENV PS4 IFS BASHOPTS TMOUT; do
	assert_errno EPERM "echo x > env/$v: EPERM" bash -c 'echo x > "$1/env/$2"' _ "$S7" "$v"
done
assert_errno EPERM "root env/: echo x > env/BASH_ENV: EPERM" bash -c 'echo x > "$1/env/BASH_ENV"' _ "$MNT"
check "a run after the refusals" sfs_run "$S7" 'echo ok'
assert_file_eq "$S7/stderr" "" "no xtrace, no error: the shell is as it was"
assert_file_eq "$S7/stdout" $'ok\n' "and it runs"

sfs_done
