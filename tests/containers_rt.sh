#!/usr/bin/env bash
# tests/containers_rt.sh MNT NAME: the round trip that tests/containers.sh
# runs inside a consumer container (bash and coreutils only): mkdir a
# session, cmd, stdout, stderr, exit, env/X seen by a run, procs/NAME, the
# terminal (tty/input, tty/screen), a python context (contexts/NAME/code,
# result), rmdir. One line per step, "ok STEP" or "not ok STEP: what
# happened", then "end".
m=$1 n=$2 s=$1/sessions/$2 t=20
ok() { printf 'ok %s\n' "$1"; }
no() { printf 'not ok %s: %s\n' "$1" "$2" | tr '\n' ' '; echo; }
# same STEP WANT GOT
same() { if [ "$2" = "$3" ]; then ok "$1"; else no "$1" "expected '$2', got '$3'"; fi; }
# within STEP FILE PATTERN: FILE matches the grep PATTERN within 20 s
within() {
	local i
	for ((i = 0; i < 200; i++)); do
		timeout 5 grep -q -- "$3" "$2" 2>/dev/null && { ok "$1"; return; }
		sleep 0.1
	done
	no "$1" "no '$3' in $2: $(timeout 5 head -c 200 "$2" 2>&1)"
}
if ! got=$(timeout "$t" mkdir "$s" 2>&1); then
	no "mkdir sessions/$n" "$got"
	echo end
	exit 0
fi
ok "mkdir sessions/$n"
got=$(timeout "$t" bash -c 'printf "%s\n" "echo hi-$2; echo err-$2 >&2; (exit 3)" >"$1/cmd"' _ "$s" "$n" 2>&1)
same "write cmd" "" "$got"
same "stdout" "hi-$n" "$(timeout "$t" cat "$s/stdout" 2>&1)"
same "stderr" "err-$n" "$(timeout "$t" cat "$s/stderr" 2>&1)"
same "exit" "3" "$(timeout "$t" cat "$s/exit" 2>&1)"
got=$(timeout "$t" bash -c 'echo "val-$2" >"$1/env/RT"' _ "$s" "$n" 2>&1)
same "write env/RT" "" "$got"
got=$(timeout "$t" bash -c 'echo "echo \"\$RT \$(id -u)\"" >"$1/cmd"' _ "$s" 2>&1)
same "a run sees env/RT, as the consumer's uid" "val-$n $(id -u)" "$got$(timeout "$t" cat "$s/stdout" 2>&1)"
got=$(timeout "$t" mkdir "$s/procs/p" 2>&1)
same "mkdir procs/p" "" "$got"
got=$(timeout "$t" bash -c 'echo "echo \"proc-\$RT\"" >"$1/procs/p/cmd"' _ "$s" 2>&1)
same "start procs/p" "" "$got"
same "procs/p exit" "0" "$(timeout "$t" cat "$s/procs/p/exit" 2>&1)"
same "procs/p stdout" "proc-val-$n" "$(timeout "$t" cat "$s/procs/p/stdout" 2>&1)"
got=$(timeout "$t" bash -c 'echo "echo tty-\$((6 * 7))" >"$1/tty/input"' _ "$s" 2>&1)
same "tty/input" "" "$got"
within "tty/screen shows what the terminal ran" "$s/tty/screen" "^tty-42"
got=$(timeout "$t" mkdir "$s/contexts/py" 2>&1)
same "mkdir contexts/py" "" "$got"
got=$(timeout "$t" bash -c 'echo "import sys; x = 6 * 7" >"$1/code" && echo "x + sys.version_info[0] * 0" >"$1/code"' _ "$s/contexts/py" 2>&1)
same "python: two executions" "" "$got"
same "python: the variable persists (result)" "42" "$(timeout "$t" cat "$s/contexts/py/result" 2>&1)"
got=$(timeout "$t" rmdir "$s/procs/p" 2>&1)
same "rmdir procs/p" "" "$got"
got=$(timeout "$t" rmdir "$s" 2>&1)
same "rmdir sessions/$n" "" "$got"
if timeout "$t" test -e "$s"; then no "the session is gone" "it still exists"; else ok "the session is gone"; fi
echo end
