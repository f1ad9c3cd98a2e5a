#!/usr/bin/env bash
# t61_contexts: code interpreter contexts, sessions/S/contexts/NAME.
# Python: state persists (x = 41, then x + 1 gives 42), a statement gives
# no result, print goes to stdout beside the result, a matplotlib plot is
# results/1/png (a PNG of 640x480), a DataFrame gives html, 1/0 and a
# syntax error give an error with the user's line and the context still
# works, ctl interrupt stops `while True: pass` and keeps x, a timeout
# interrupts and the context survives, restart clears x, os.system's
# output lands in stdout and not in the protocol, 20 contexts do not share
# state, an interpreter that dies is dead (status, error) until restart,
# a missing interpreter too, and nothing hangs. JavaScript: let persists
# and may be declared again, top-level await, a thrown error, a timeout.
# Contexts run in parallel with each other and with runs. result.json has
# the SDKs' shape; rmdir of a busy context returns and leaves no process,
# its writer gets ECANCELED; the deletion of a session ends its busy
# contexts; bad names, languages and late settings are refused.
# Hardening: node's process.exit() and results or errors that cannot be
# shown end at once; 4 MiB of node stdout stays in its execution; a
# timer's or a promise's error is reported and the context lives; bad
# python formats are dropped with a line; interrupts that are ignored (or
# come early) are honoured or kill after the grace; forged frames, forks
# and closed descriptors cannot fake an answer; formats are capped; the
# daemon's descriptors do not leak on rmdir; a bad cwd or env value is
# refused.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/c
check "mkdir sessions/c" sfs_mkdir "$S"
CS=$S/contexts
CPATH=$(sfs_ctx_path "matplotlib, pandas")

# mkctx NAME [LANGUAGE]: a context with the PATH above
mkctx() { sfs_ctx_make "$CS/$1" "${2:-}" "" "$CPATH"; }

# code NAME TEXT [TIMEOUT]: run TEXT in context NAME; the writer's status
code() { sfs_ctx_code "$CS/$1" "$2" "${3:-}"; }

# field FILE KEY: the value of KEY in a key value file
field() { timeout 5 awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# json FILE EXPR: EXPR of the JSON in FILE (python, j is the document)
json() {
	timeout 5 python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(*v) if isinstance(v, tuple) else print(v)' "$1" "$2"
}

# fails LABEL NAME TEXT: running TEXT in NAME fails (its close), at once
fails() {
	local t0 rc
	t0=$(now_ms)
	code "$2" "$3" 10
	rc=$?
	assert_true "$1" "status $rc" [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
	assert_lt $(($(now_ms) - t0)) 3000 "$1: at once" " ms"
}

P=$CS/py
check "mkdir contexts/py" mkctx py
assert_file_eq "$P/language" $'python\n' "language is python by default"
assert_eq idle "$(field "$P/status" state)" "a new context is idle"

check "x = 41" code py 'x = 41'
assert_file_eq "$P/result" "" "a statement gives an empty result"
check "x + 1" code py 'x + 1'
assert_file_eq "$P/result" $'42\n' "state persists: x + 1 gives 42"
assert_file_eq "$P/results/1/text" "42" "results/1/text is the value"
check "results/1/main exists" test -e "$P/results/1/main"
assert_eq 2 "$(field "$P/status" execution_count)" "execution_count counts executions"
PYPID=$(field "$P/status" pid)
assert_true "status has the interpreter's pid" "pid '$PYPID'" sfs_alive "$PYPID"

check "print beside a value" code py 'import sys; print("out1"); print("err1", file=sys.stderr); print("out2"); 7'
assert_file_eq "$P/stdout" $'out1\nout2\n' "print goes to stdout"
assert_file_eq "$P/stderr" $'err1\n' "stderr apart"
assert_file_eq "$P/result" $'7\n' "the value after prints"
assert_eq "['out1\n', 'out2\n'] 7 True" "$(json "$P/result.json" 'j["logs"]["stdout"], j["results"][0]["text"], j["results"][0]["isMainResult"]')" \
	"result.json: logs.stdout by line, the main result"
assert_eq "[] 3 None" "$(json "$P/runs/3/result.json" '[k for k in j if k not in ("results", "logs", "error", "executionCount")], j["executionCount"], j["error"]')" \
	"result.json has the SDK's keys and executionCount"

check "os.system" code py 'import os; os.system("echo hi from a child"); print("after")'
assert_file_eq "$P/stdout" $'hi from a child\nafter\n' "a child's output lands in stdout"
assert_file_eq "$P/error" "" "and no error (the protocol is not the child's)"

check "1/0" code py $'y = 1\n1/0'
assert_eq "ZeroDivisionError" "$(json "$P/error" 'j["name"]')" "1/0 is a ZeroDivisionError"
assert_file_match "$P/error" '<cell 5>\\", line 2, in <module>", "    1/0"' "the traceback names the user's cell and line"
assert_true "no driver frame in the traceback" "$(head -c 300 "$P/error")" \
	bash -c '! grep -q sfsctx "$1"' _ "$P/error"
check "after an error" code py 'x'
assert_file_eq "$P/result" $'41\n' "the context still works after an error"
check "a syntax error" code py 'x = ('
assert_eq "SyntaxError" "$(json "$P/error" 'j["name"]')" "a syntax error is a SyntaxError"
check "after a syntax error" code py 'x'
assert_file_eq "$P/result" $'41\n' "the context still works after a syntax error"

# ctl interrupt
code py 'while True: pass' &
BG=$!
SFS_BG_PIDS+=("$BG")
check "the loop runs" sfs_until 5 bash -c '[ "$(awk "/^state/ {print \$2}" "$1")" = running ]' _ "$P/status"
check "ctl interrupt" sfs_write "$P/ctl" $'interrupt\n'
check "the writer returns after the interrupt" sfs_wait_gone "$BG" 5
assert_eq "KeyboardInterrupt" "$(json "$P/error" 'j["name"]')" "interrupt is a KeyboardInterrupt"
assert_eq interrupted "$(field "$P/status" state)" "status says interrupted"
check "x after the interrupt" code py 'x'
assert_file_eq "$P/result" $'41\n' "interrupt keeps the state"

# the root's killall interrupts a running execution too, and returns once
# nothing runs
code py 'while True: pass' &
BG=$!
SFS_BG_PIDS+=("$BG")
check "the loop runs again" sfs_until 5 bash -c '[ "$(awk "/^state/ {print \$2}" "$1")" = running ]' _ "$P/status"
check "killall" sfs_write "$MNT/ctl" $'killall\n' 20
check "the writer returns after killall" sfs_wait_gone "$BG" 5
assert_eq "KeyboardInterrupt" "$(json "$P/error" 'j["name"]')" "killall interrupts the execution"
check "x after killall" code py 'x'
assert_file_eq "$P/result" $'41\n' "killall keeps the context's state"

# timeout
check "timeout 300" sfs_write "$P/timeout" $'300\n'
t0=$(now_ms)
code py 'import time; time.sleep(30)'
assert_lt $(($(now_ms) - t0)) 5000 "a timeout ends the execution" " ms"
assert_eq "KeyboardInterrupt" "$(json "$P/error" 'j["name"]')" "a timeout interrupts"
check "timeout 0" sfs_write "$P/timeout" $'0\n'
check "x after the timeout" code py 'x'
assert_file_eq "$P/result" $'41\n' "the context survives its timeout"
assert_eq "$PYPID" "$(field "$P/status" pid)" "the same interpreter"

# matplotlib and pandas
check "a matplotlib plot" code py $'import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]);'
SIG=$(timeout 5 head -c 8 "$P/results/1/png" | od -An -tx1 | tr -d ' \n')
assert_eq 89504e470d0a1a0a "$SIG" "results/1/png is a PNG"
DIM=$(timeout 5 od -An -tu1 -j16 -N8 "$P/results/1/png" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }')
assert_eq 640x480 "$DIM" "its IHDR says 640x480"
assert_eq "640x480 False" "$(json "$P/result.json" '(lambda p: "%dx%d" % (int.from_bytes(p[16:20], "big"), int.from_bytes(p[20:24], "big")))(__import__("base64").b64decode(j["results"][0]["png"])), j["results"][0]["isMainResult"]')" \
	"result.json has the png in base64"
check "a DataFrame" code py $'import pandas as pd\npd.DataFrame({"a": [1, 2], "b": [3, 4]})'
assert_file_match "$P/results/1/html" '<table' "a DataFrame gives html"
assert_file_match "$P/result" '^0  +1  +3$' "and text"

# restart
check "ctl restart" sfs_write "$P/ctl" $'restart\n'
check "x after restart" code py 'x'
assert_eq "NameError" "$(json "$P/error" 'j["name"]')" "restart clears x"
assert_eq 1 "$(field "$P/status" execution_count)" "and the execution count"
assert_true "the old interpreter is gone" "pid $PYPID" sfs_wait_gone "$PYPID" 5

# an interpreter that dies, one that is missing
fails "an interpreter that exits: its code fails" py 'import os; os._exit(3)'
assert_eq dead "$(field "$P/status" state)" "an interpreter that exits is dead"
assert_file_match "$P/error" 'exited with status 3' "error says why"
fails "code on a dead context fails" py 'x'
check "restart a dead context" sfs_write "$P/ctl" $'restart\n'
check "it works again" code py '6 * 7'
assert_file_eq "$P/result" $'42\n' "after the restart"
check "mkdir contexts/nopy" sfs_mkdir "$CS/nopy"
check "a PATH without python" sfs_write "$CS/nopy/env/PATH" $'/nonexistent\n'
fails "code without python3 fails" nopy 'x'
assert_eq dead "$(field "$CS/nopy/status" state)" "a missing interpreter: dead"
assert_file_match "$CS/nopy/error" 'cannot run python3' "error says why"

# 20 contexts
for i in $(seq 1 20); do
	if ! { mkctx "m$i" && code "m$i" "v = $i"; }; then
		fail "context m$i" "mkdir or code failed"
	fi
done
bad=0
for i in $(seq 1 20); do
	code "m$i" 'v' && [ "$(cat "$CS/m$i/result")" = "$i" ] || bad=$((bad + 1))
done
assert_eq 0 "$bad" "20 contexts do not share state"
for i in $(seq 1 20); do rmdir "$CS/m$i" || fail "rmdir m$i"; done

# contexts run in parallel with each other and with the session's runs
check "mkdir contexts/p1 and p2" bash -c 'mkdir "$1/p1" "$1/p2"' _ "$CS"
if ! { code p1 'import time' && code p2 'import time'; }; then
	fail "import time" "code failed"
fi
t0=$(now_ms)
code p1 'time.sleep(1)' &
B1=$!
code p2 'time.sleep(1)' &
B2=$!
SFS_BG_PIDS+=("$B1" "$B2")
sfs_run "$S" 'sleep 1'
wait "$B1" "$B2"
assert_lt $(($(now_ms) - t0)) 1900 "two contexts and a run of 1 s each take about 1 s" " ms"
check "rmdir contexts/p1 and p2" bash -c 'rmdir "$1/p1" "$1/p2"' _ "$CS"

# javascript
J=$CS/js
check "mkdir contexts/js" mkctx js javascript
check "let a = 1" code js 'let a = 1'
check "a + 1" code js 'a + 1'
assert_file_eq "$J/result" $'2\n' "let persists"
check "let a again" code js 'let a = 5; console.log("a is", a)'
assert_file_eq "$J/error" "" "a later execution may declare it again"
assert_file_eq "$J/stdout" $'a is 5\n' "console.log goes to stdout"
check "await" code js 'await new Promise(r => setTimeout(() => r(5), 10))'
assert_file_eq "$J/result" $'5\n' "top-level await gives 5"
check "class and const" code js 'class K { f() { return a * 2 } }; const k = new K(); k.f()'
assert_file_eq "$J/result" $'10\n' "class and const"
check "throw" code js 'throw new Error("x")'
assert_eq "Error x" "$(json "$J/error" 'j["name"], j["value"]')" "a thrown error is the error"
assert_file_match "$J/error" '<cell 6>:1' "its stack names the user's cell"
check "js after the error" code js 'a'
assert_file_eq "$J/result" $'5\n' "the context still works"
check "js timeout 300" sfs_write "$J/timeout" $'300\n'
t0=$(now_ms)
code js 'while (true) {}'
assert_lt $(($(now_ms) - t0)) 5000 "a js timeout ends the loop" " ms"
assert_file_match "$J/error" 'interrupted' "a js timeout interrupts"
check "js timeout 0" sfs_write "$J/timeout" $'0\n'
check "js after the timeout" code js 'a'
assert_file_eq "$J/result" $'5\n' "the js context survives its timeout"
assert_eq "idle 9 javascript" "$(field "$J/status" state) $(field "$J/status" execution_count) $(field "$J/status" language)" \
	"status of the js context"

# javascript: an exit, results and errors that cannot be shown
JE=$CS/je
check "mkdir contexts/je" mkctx je javascript
fails "process.exit(0) ends the execution" je 'process.exit(0)'
assert_eq dead "$(field "$JE/status" state)" "a js interpreter that exits is dead"
assert_file_match "$JE/error" 'exited with status 0' "error says why"
check "restart je" sfs_write "$JE/ctl" $'restart\n'
check "an inspect that throws" code je '({[Symbol.for("nodejs.util.inspect.custom")](){throw new Error("i")}})'
assert_eq "Error i" "$(json "$JE/error" 'j["name"], j["value"]')" "an error of inspecting the result is the error"
check "an error whose name throws" code je 'throw {get name(){throw 1}}'
assert_file_match "$JE/error" '"name": "Error"' "an error that cannot be formatted is still an error"
check "je lives" code je '1 + 1'
assert_file_eq "$JE/result" $'2\n' "the js context lives on"
# large stdout is all in its own execution
check "4 MiB of process.stdout" code je 'for (let i = 0; i < 4; i++) process.stdout.write("x".repeat(1 << 20)); 3'
assert_eq 4194304 "$(timeout 10 wc -c <"$JE/stdout")" "4 MiB of stdout, all of it"
check "the next execution" code je '4'
assert_eq 0 "$(timeout 10 wc -c <"$JE/stdout")" "none of it lands in the next one"
# what timers and promises leave behind
check "a timer that throws later" code je 'setTimeout(() => { throw new Error("late") }, 0); 1'
sleep 0.2
check "after the timer" code je '5'
assert_file_match "$JE/stderr" 'Error: late' "it is in the next execution's stderr"
assert_file_eq "$JE/result" $'5\n' "and the context lives"
check "a rejection during an execution" code je 'await new Promise((r) => { Promise.reject(new Error("rej")); setTimeout(r, 200) })'
assert_eq "Error rej" "$(json "$JE/error" 'j["name"], j["value"]')" "it is the execution's error"
check "je lives after the rejection" code je '6'
assert_file_eq "$JE/result" $'6\n' "the js context lives on"
# an async cell's lines are its own, a function declared first included
check "an async cell that throws on its line 2" code je $'await 0\nthrow new Error("l2")'
assert_file_match "$JE/error" '<cell [0-9]+>:2:' "an async cell's stack gives the cell's own line"
check "an async cell with a function first" code je $'function f() {\n  return null.y\n}\nawait 0\nf()'
assert_file_match "$JE/error" 'at f \(<cell [0-9]+>:2:' "the function's line in its stack is its own"
assert_file_match "$JE/error" '<cell [0-9]+>:5:' "the call's line in its stack is its own"
check "await (expr)" code je 'let w = 3; await (w)'
assert_file_eq "$JE/result" $'3\n' "await (w) is an await, not a call"
assert_write_errno ESRCH "ctl interrupt with nothing running" "$JE/ctl" $'interrupt\n'
# an interrupt that cannot be honoured kills after the grace
code je 'await null; while (true) {}' &
BG=$!
SFS_BG_PIDS+=("$BG")
check "the js loop runs" sfs_until 5 bash -c '[ "$(awk "/^state/ {print \$2}" "$1")" = running ]' _ "$JE/status"
check "ctl interrupt je" sfs_write "$JE/ctl" $'interrupt\n'
check "the js writer returns after the grace" sfs_wait_gone "$BG" 8
assert_eq dead "$(field "$JE/status" state)" "an interrupt not honoured kills"
assert_file_match "$JE/error" 'after ctl interrupt: killed' "error says so"
check "restart je after the kill" sfs_write "$JE/ctl" $'restart\n'
# (the daemon unlinks the fifos once it has the driver's ready, which a
# loaded machine may read after the code has begun: ".a" or ".a (deleted)")
fails "closing the driver's answer fifo" je 'const fs = require("fs"); for (const f of fs.readdirSync("/proc/self/fd")) { try { if (/\.a( \(deleted\))?$/.test(fs.readlinkSync("/proc/self/fd/" + f))) fs.closeSync(Number(f)) } catch (e) {} }'
assert_file_match "$JE/error" 'descriptors were closed or replaced' "the js context is dead and says why"

# bad input
assert_errno EINVAL "a bad context name" mkdir "$CS/.bad"
check "mkdir contexts/lang" sfs_mkdir "$CS/lang"
assert_write_errno EINVAL "an unknown language" "$CS/lang/language" $'cobol\n'
assert_write_errno EBUSY "language after the first code" "$P/language" $'javascript\n'
BIG=$(head -c 200000 /dev/zero | tr '\0' x)
assert_write_errno E2BIG "an env value execve cannot take" "$CS/lang/env/BIG" "$BIG"
assert_write_errno EBUSY "env after the first code" "$P/env/PATH" $'/bin\n'
assert_write_errno EINVAL "a bad ctl line" "$P/ctl" $'bogus\n'
assert_file_match "$S/error" 'contexts/py/ctl' "refusals go to the session's error"

# python: formats that cannot be made, errors that cannot be shown
Q=$CS/pq
check "mkdir contexts/pq" mkctx pq
check "bad formats" code pq $'class B:\n    def _repr_png_(self): return "not base64!!"\n    def _repr_json_(self): return {"a": object()}\n    def _repr_html_(self): return 42\nB()'
assert_file_match "$Q/stderr" "png cannot be made" "a png that is not base64 is dropped, said in stderr"
assert_file_match "$Q/stderr" "json cannot be made" "a json that cannot be dumped is dropped"
assert_file_match "$Q/stderr" "html" "an html that is no text is dropped, said in stderr"
check "the text stays" test -s "$Q/results/1/text"
assert_true "no driver frame in stderr" "$(head -c 300 "$Q/stderr")" bash -c '! grep -q "sfsctx\|Traceback" "$1"' _ "$Q/stderr"
check "an exception whose str raises" code pq $'class E(Exception):\n    def __str__(self): raise ValueError("no")\nraise E()'
assert_eq "E" "$(json "$Q/error" 'j["name"]')" "it is the error"
check "pq lives" code pq '2 + 2'
assert_file_eq "$Q/result" $'4\n' "the python context lives on"
# over-size results
check "a text over 64 MiB" code pq '"x" * (65 << 20)'
assert_eq 67108864 "$(stat -c %s "$Q/results/1/text")" "it is cut at 64 MiB"
assert_file_match "$Q/stderr" "truncated" "said in stderr"
check "a png over 64 MiB" code pq $'class P:\n    def _repr_png_(self): return b"\\x89PNG" + bytes(65 << 20)\nP()'
check "it is dropped" test ! -e "$Q/results/1/png"
assert_file_match "$Q/stderr" "png is over" "said in stderr"
check "five results of 60 MiB" code pq $'for i in range(5): display(b"y" * (60 << 20))'
assert_file_match "$S/error" "dropped \\(at most 64 MiB a format, 256 MiB kept\\)" "what is over the total kept is dropped"
check "pq lives after them" code pq '3'
assert_file_eq "$Q/result" $'3\n' "the context survives"
# forged frames, forks, closed descriptors
check "forged frames" code pq $'import os\nfor f in os.listdir("/proc/self/fd"):\n    try:\n        if os.readlink("/proc/self/fd/" + f).endswith((".a", ".a (deleted)")):\n            os.write(int(f), b"result 0\\ndone 0\\n")\n    except OSError:\n        pass\nprint("after")'
assert_file_eq "$Q/stdout" $'after\n' "a forged done does not end the execution"
check "no forged result" test ! -e "$Q/results/1"
assert_file_match "$S/error" "without the execution's key was dropped" "forged frames are dropped with a line"
# a child that prints after its execution ended: dropped, and said
check "a child printing after its execution" code pq $'import subprocess\nsubprocess.Popen(["sh", "-c", "sleep 0.3; echo late"])\n1'
said_late() { grep -q "contexts/pq: output printed between executions (by a child or a thread) was dropped" "$S/error"; }
check "output between executions is said in error" sfs_until 5 said_late
check "pq after the late child" code pq '2'
assert_file_eq "$Q/stdout" "" "the late child's line is in no execution's stdout"
check "a fork" code pq $'import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(0.2)\nelse:\n    os.waitpid(pid, 0)\npid'
check "the fork's parent answers" test -s "$Q/result"
check "pq after the fork" code pq '7'
assert_file_eq "$Q/result" $'7\n' "a fork's child does not run the driver"
check "closing 3..255" code pq $'import os\nos.closerange(3, 256)\n8'
assert_file_eq "$Q/result" $'8\n' "the protocol is out of reach of a loop closing 3..255"
fails "closing every descriptor" pq $'import os\nos.closerange(3, 1 << 20)\n9'
assert_eq dead "$(field "$Q/status" state)" "the context is dead"
assert_file_match "$Q/error" 'descriptors were closed or replaced' "error says why"
check "restart pq" sfs_write "$Q/ctl" $'restart\n'
# an interrupt before the user's code begins (the interpreter starting)
check "restart pq again" sfs_write "$Q/ctl" $'restart\n'
code pq $'import time\ntime.sleep(20)' &
BG=$!
SFS_BG_PIDS+=("$BG")
check "it is sent" sfs_until 5 bash -c '[ "$(awk "/^state/ {print \$2}" "$1")" = running ]' _ "$Q/status"
check "ctl interrupt at once" sfs_write "$Q/ctl" $'interrupt\n'
check "the early interrupt is honoured" sfs_wait_gone "$BG" 5
assert_eq "KeyboardInterrupt interrupted" "$(json "$Q/error" 'j["name"]') $(field "$Q/status" state)" \
	"an interrupt before the code starts interrupts it, the context lives"
# an interrupt that is ignored kills after the grace
code pq $'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint("go", flush=True)\nwhile True: pass' &
BG=$!
SFS_BG_PIDS+=("$BG")
check "the ignoring loop runs" sfs_until 5 grep -q go "$Q/stdout"
check "ctl interrupt pq" sfs_write "$Q/ctl" $'interrupt\n'
check "the python writer returns after the grace" sfs_wait_gone "$BG" 8
assert_eq dead "$(field "$Q/status" state)" "an ignored interrupt kills"
assert_file_match "$Q/error" 'after ctl interrupt: killed' "error says so"
check "restart pq after the kill" sfs_write "$Q/ctl" $'restart\n'
code pq $'class R:\n    def __repr__(self):\n        import time\n        print("repr", flush=True)\n        time.sleep(100)\nR()' &
BG=$!
SFS_BG_PIDS+=("$BG")
check "the blocking __repr__ runs" sfs_until 5 grep -q repr "$Q/stdout"
check "ctl interrupt of the __repr__" sfs_write "$Q/ctl" $'interrupt\n'
check "the __repr__ writer returns after the grace" sfs_wait_gone "$BG" 8
assert_file_match "$Q/error" 'after ctl interrupt: killed' "a __repr__ that blocks is killed"
# the daemon's descriptors of a removed context are closed
FD0=$(ls /proc/"$SFS_PID"/fd | wc -l)
check "mkdir contexts/fd" mkctx fd
check "a child holding the pipes" code fd 'import os; os.system("sleep 300 &")'
check "rmdir contexts/fd" timeout 10 rmdir "$CS/fd"
assert_eq "$FD0" "$(ls /proc/"$SFS_PID"/fd | wc -l)" "the daemon's descriptors are back where they were"
# cwd
# the daemon looks a written cwd up no more than a session's (t44): one
# that does not exist or is a file is taken, and the interpreter that
# cannot enter it makes the context dead with the reason
assert_write_errno EINVAL "a relative cwd" "$CS/lang/cwd" $'relative\n'
for bad in "nocwd:/nonexistent:No such file or directory" "filecwd:/etc/passwd:Not a directory"; do
	IFS=: read -r name dir why <<<"$bad"
	check "mkdir contexts/$name" mkctx "$name"
	check "$name: a cwd $dir is taken at the write" sfs_write "$CS/$name/cwd" "$dir"$'\n'
	fails "$name: its first code fails" "$name" 'x'
	assert_file_match "$CS/$name/error" "cannot enter the cwd $dir: $why" "$name: the context is dead and says why"
done
check "mkdir contexts/cwd" mkctx cwd
mkdir "$SFS_TMP/gone"
check "a cwd that exists" sfs_write "$CS/cwd/cwd" "$SFS_TMP/gone"$'\n'
rmdir "$SFS_TMP/gone"
fails "a cwd removed before the first code" cwd 'x'
assert_file_match "$CS/cwd/error" 'cannot enter the cwd' "the context is dead and says why"

# rmdir of a busy context
(
	code py 'import os; os.system("sleep 300 & echo $! >'"$SFS_TMP"'/busy.sleep"); while_true = 1
while True: pass'
	echo $? >"$SFS_TMP/busy.rc"
) &
BG=$!
SFS_BG_PIDS+=("$BG")
check "the busy loop runs" sfs_until 5 bash -c '[ "$(awk "/^state/ {print \$2}" "$1")" = running ]' _ "$P/status"
# (running comes as the code starts: its sleep may take a while more)
check "its background sleep has started" sfs_until 10 test -s "$SFS_TMP/busy.sleep"
PYPID=$(field "$P/status" pid)
t0=$(now_ms)
check "rmdir of a busy context" timeout 10 rmdir "$P"
assert_lt $(($(now_ms) - t0)) 3000 "rmdir returns soon" " ms"
check "its writer returns" sfs_wait_gone "$BG" 5
assert_file_match "$SFS_TMP/busy.rc" '^1$' "its close fails (ECANCELED)"
assert_file_match "$SFS_TMP/write.err" 'Operation canceled' "with ECANCELED"
assert_true "its interpreter is gone" "pid $PYPID" sfs_wait_gone "$PYPID" 1
SLEEPPID=$(cat "$SFS_TMP/busy.sleep")
assert_file_match "$SFS_TMP/busy.sleep" '^[0-9]+$' "the background sleep said its pid"
assert_true "its background sleep is gone" "pid $SLEEPPID" sfs_wait_gone "$SLEEPPID" 5
check "contexts/py is gone" test ! -e "$P"

# the deletion of a session ends its busy contexts
S2=$MNT/sessions/c2
check "mkdir sessions/c2" sfs_mkdir "$S2"
check "mkdir contexts in c2" bash -c 'mkdir "$1/contexts/a" "$1/contexts/b" && echo javascript > "$1/contexts/b/language"' _ "$S2"
sfs_write "$S2/contexts/a/code" $'while True: pass\n' &
B1=$!
sfs_write "$S2/contexts/b/code" $'while (true) {}\n' &
B2=$!
SFS_BG_PIDS+=("$B1" "$B2")
check "both run" sfs_until 10 bash -c 'grep -q "state running" "$1/contexts/a/status" && grep -q "state running" "$1/contexts/b/status"' _ "$S2"
PA=$(field "$S2/contexts/a/status" pid)
PB=$(field "$S2/contexts/b/status" pid)
check "rmdir of the session" timeout 10 rmdir "$S2"
check "its writers return" sfs_wait_gone "$B1" 5
check "its interpreters are gone" bash -c '! kill -0 "$1" 2>/dev/null && ! kill -0 "$2" 2>/dev/null' _ "$PA" "$PB"

sfs_done
