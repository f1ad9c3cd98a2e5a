#!/usr/bin/env bash
# session.sh: drive sessionfs from a shell script, with nothing but mkdir,
# echo, cat, grep and rmdir.
#
#   bash examples/session.sh [MOUNTPOINT]      (default: ./mnt)
#
# Creates a session, runs commands in it, starts a background process,
# reads its logs, kills it and deletes the session. Exits non-zero if
# anything is not as expected.
# (the commands are in single quotes on purpose: the session expands them)
# shellcheck disable=SC2016
set -euo pipefail

mnt=${1:-./mnt}
s=$mnt/sessions/example-sh-$$

die() {
	echo "error: $*" >&2
	exit 1
}

# Deleting the session ends everything it started, so one rmdir cleans up.
cleanup() { if [ -d "$s" ]; then rmdir "$s"; fi; }
trap cleanup EXIT

echo "creating session $s"
mkdir "$s"

# A variable for every command of the session: one file per variable.
echo 'hello' >"$s/env/GREETING"

# Writing cmd runs it; the redirection's close returns when it has ended.
# cd and export persist to the next command, like in a terminal.
echo "running: cd /tmp"
echo 'cd /tmp' >"$s/cmd"
echo 'running: echo "$GREETING from $PWD"'
echo 'echo "$GREETING from $PWD"' >"$s/cmd"
out=$(cat "$s/stdout")
echo "  stdout: $out"
[ "$out" = "hello from /tmp" ] || die "unexpected stdout: $out"
[ "$(cat "$s/exit")" = 0 ] || die "exit status is not 0"

echo "running a failing command"
echo 'echo "something went wrong" >&2; exit 3' >"$s/cmd"
echo "  stderr: $(cat "$s/stderr")"
echo "  exit:   $(cat "$s/exit")"
[ "$(cat "$s/exit")" = 3 ] || die "exit status is not 3"

# A background process: mkdir names it, writing cmd starts it (the close
# returns as soon as it has started). It runs in the session's cwd.
p=$s/procs/logger
echo "starting a background process in procs/logger"
mkdir "$p"
echo 'i=0; while :; do i=$((i + 1)); echo "log line $i from $PWD"; sleep 0.2; done' >"$p/cmd"
echo "  pid $(cat "$p/pid")"

# stream follows its output; grep -m1 returns as soon as the line is there.
echo "waiting for its third log line"
line=$(timeout 10 grep -m1 'log line 3' "$p/stream") || die "no 'log line 3' within 10 s"
echo "  stream: $line"
[ "$line" = "log line 3 from /tmp" ] || die "unexpected log line: $line"
echo "  its log so far: $(wc -l <"$p/stdout") lines in stdout"

echo "killing it"
echo kill >"$p/ctl"
code=$(cat "$p/exit") # blocks until it has exited
state=$(grep '^state ' "$p/status")
echo "  exit $code, $state"
[ "$state" = "state killed" ] || die "unexpected $state"

echo "deleting the session"
rmdir "$s"
echo "done"
