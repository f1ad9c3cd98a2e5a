#!/usr/bin/env bash
# t64_ctx_bounds: what code contexts cost the daemon, and node's module
# scope. JavaScript: global, require (of the cwd), module, exports,
# __filename, __dirname and process are there and global keeps state; a
# value that is a promise is awaited (123, not "Promise { 123 }"), a
# rejection is the error, one that never settles ends at the timeout.
# Python: 50000 display() calls take seconds, not 17 s, keep 10000
# results (and the value after them) with one line in the session's
# error, and health answers within 1 s all along; an exception message
# of 100 MiB raised three times is cut at 1 MiB, kept once (its
# traceback's last line refers to it), said once, with health within
# 1 s and the daemon's memory not growing by it; 8 readers of the
# result.json of a 40 MiB png share one copy (VmRSS), which has the png
# whole, and formats past 64 MiB in all are left out of it, named.
#
# Environment: SFS_ASAN set: the memory bounds are not checked (the
# sanitizers' own memory), as in t08.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_mount

S=$MNT/sessions/b
check "mkdir sessions/b" sfs_mkdir "$S"
CS=$S/contexts

# mkctx NAME [LANGUAGE]: a context
mkctx() { sfs_ctx_make "$CS/$1" "${2:-}"; }

# code NAME TEXT [TIMEOUT]: run TEXT in context NAME; the writer's status
code() { sfs_ctx_code "$CS/$1" "$2" "${3:-}"; }

# json FILE EXPR: EXPR of the JSON in FILE (python, j is the document)
json() {
	timeout 20 python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(*v) if isinstance(v, tuple) else print(v)' "$1" "$2"
}

# rss_kb: the daemon's VmRSS in kB (read whole first, as in t08)
rss_kb() {
	local st k v _u
	IFS= read -r -d '' st <"/proc/$SFS_PID/status"
	while read -r k v _u; do
		[ "$k" = "VmRSS:" ] && printf '%s\n' "$v" && return 0
	done <<<"$st"
	return 1
}

# health_poll OUT: the ms each read of health takes, one a line, a read
# every 0.1 s, until killed
health_poll() {
	local t0
	while :; do
		t0=$(now_ms)
		timeout 5 cat "$MNT/health" >/dev/null 2>&1 || echo 5000
		echo $(($(now_ms) - t0))
		sleep 0.1
	done >"$1"
}

# lively LABEL CMD...: runs CMD while health is read, then checks that
# every read answered within 1 s. Returns CMD's status.
lively() {
	local label=$1 out=$SFS_TMP/health.$SFS_N pid rc max n
	SFS_N=$((SFS_N + 1))
	shift
	health_poll "$out" &
	pid=$!
	SFS_BG_PIDS+=("$pid")
	"$@"
	rc=$?
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	n=$(grep -c . "$out")
	max=$(sort -n "$out" | tail -n 1)
	note "$label: $n reads of health, the slowest ${max:-?} ms"
	assert_true "$label: health was read meanwhile" "$n reads" [ "$n" -ge 1 ]
	assert_lt "${max:-99999}" 1000 "$label: health answers within 1 s" " ms"
	return "$rc"
}

# ---------------------------------------------------------------- node
JSD=$SFS_TMP/jscwd
mkdir -p "$JSD/node_modules/sfsmod"
echo 'exports.answer = 42' >"$JSD/node_modules/sfsmod/index.js"
echo 'module.exports = "local"' >"$JSD/local.js"
J=$CS/js
check "mkdir contexts/js" mkctx js javascript
check "js cwd" sfs_write "$J/cwd" "$JSD"$'\n'
check "global.counter = 0" code js 'global.counter = 0'
assert_file_eq "$J/error" "" "global is defined"
check "global.counter++" code js 'global.counter++'
check "global.counter++ again" code js 'global.counter++; global.counter'
assert_file_eq "$J/result" $'2\n' "global keeps its state across executions"
check "a module's names" code js '[typeof require, typeof module, module.exports === exports, __dirname, require("path").dirname(__filename), typeof process.pid, global === globalThis].join(" ")'
assert_file_eq "$J/result" "'function object true $JSD $JSD number true'"$'\n' \
	"require, module, exports, __filename, __dirname (the cwd), process, global"
check "require of the cwd" code js 'require("sfsmod").answer + " " + require("./local.js")'
assert_file_eq "$J/result" $'\'42 local\'\n' "require finds node_modules and files of the cwd"
check "a promise" code js 'Promise.resolve(123)'
assert_file_eq "$J/result" $'123\n' "a promise value is awaited: 123"
check "a later promise" code js 'new Promise((r) => setTimeout(() => r({ v: 7 }), 50))'
assert_file_eq "$J/result" $'{ v: 7 }\n' "a promise resolved later gives its value"
check "a thenable" code js '({ then(ok) { ok("t") } })'
assert_file_eq "$J/result" $'\'t\'\n' "a thenable is awaited too"
check "a rejected promise" code js 'Promise.reject(new Error("nope"))'
assert_eq "Error nope" "$(json "$J/error" 'j["name"], j["value"]')" "a rejection is the error, with its message"
check "js timeout 500" sfs_write "$J/timeout" $'500\n'
t0=$(now_ms)
code js 'new Promise(() => {})' 20
assert_lt $(($(now_ms) - t0)) 10000 "a promise that never settles ends at the timeout" " ms"
assert_file_match "$J/error" 'Interrupted' "it is interrupted"
check "js timeout 0" sfs_write "$J/timeout" $'0\n'
check "js after it" code js 'global.counter'
assert_file_eq "$J/result" $'2\n' "the context and its state live on"

# ---------------------------------------------------------------- python
P=$CS/py
check "mkdir contexts/py" mkctx py
check "python starts" code py '1'

# 50000 results: one frame costs its own size, not all those kept
t0=$(now_ms)
lively "50000 display()" check "50000 display() calls" code py 'for i in range(50000): display(i)' 60
dt=$(($(now_ms) - t0))
note "50000 display() calls took $dt ms"
assert_lt "$dt" 10000 "50000 display() calls take less than 10 s" " ms"
assert_eq 10000 "$(timeout 20 ls "$P/results" | wc -l)" "an execution keeps 10000 results"
assert_file_eq "$P/results/10000/text" "9999" "the first 10000 of them"
assert_file_match "$S/error" "execution 2: 40000 results past the first 10000 were dropped" \
	"the session's error says how many were dropped"
check "the value after 20000 results" code py $'for i in range(20000): display(i)\n"last"'
assert_file_eq "$P/result" $'\'last\'\n' "the value is kept past the bound"
check "it is results/10001/main" test -e "$P/results/10001/main"
assert_eq 1 "$(grep -c "execution 3: 10000 results past" "$S/error")" "said once, the value not counted"

# an exception message of 100 MiB, three times
rss0=$(rss_kb)
raise3() {
	local _
	for _ in 1 2 3; do
		code py 'raise ValueError("x" * (100 << 20))' 60 || return
	done
}
lively "a 100 MiB exception message, 3 times" check "raise ValueError of 100 MiB, 3 times" raise3
rss1=$(rss_kb)
note "daemon VmRSS ${rss0:-?} kB before, ${rss1:-?} kB after"
assert_eq "ValueError True" \
	"$(json "$P/error" 'j["name"], len(j["value"]) <= (1 << 20) and j["value"] == "x" * len(j["value"])')" \
	"the message is cut at 1 MiB"
assert_eq True "$(json "$P/error" 'j["traceback"][-1] == "ValueError: " + j["value"]')" \
	"the traceback's last line is the name and the (cut) message"
assert_eq 1 "$(grep -c "execution 6: its error was cut at 1024 KiB" "$S/error")" \
	"the session's error says it was cut, once"
if [ -z "${SFS_ASAN:-}" ]; then
	assert_lt $((${rss1:-999999} - ${rss0:-0})) $((64 * 1024)) \
		"3 exceptions of 100 MiB add less than 64 MiB to the daemon" " kB"
fi
check "py lives" code py '6 * 7'
assert_file_eq "$P/result" $'42\n' "the context lives on"

# result.json of a 40 MiB png: one copy for 8 readers
check "a 40 MiB png" code py $'import os\nclass P:\n    def _repr_png_(self): return b"\\x89PNG" + os.urandom(40 << 20)\nP()'
PNG_SUM=$(timeout 20 sha1sum <"$P/results/1/png" | cut -d' ' -f1)
rss0=$(rss_kb)
timeout 60 python3 -c '
import os, sys, time
fds = [os.open(sys.argv[1], os.O_RDONLY) for _ in range(8)]
for fd in fds:
    os.read(fd, 4096)
open(sys.argv[2], "w").close()
deadline = time.time() + 50
while os.path.exists(sys.argv[2]) and time.time() < deadline:
    time.sleep(0.05)
' "$P/result.json" "$SFS_TMP/held" &
HOLD=$!
SFS_BG_PIDS+=("$HOLD")
check "8 readers hold result.json" sfs_until 30 test -e "$SFS_TMP/held"
rss1=$(rss_kb)
rm -f "$SFS_TMP/held"
wait "$HOLD"
note "daemon VmRSS ${rss0:-?} kB before 8 readers of result.json, ${rss1:-?} kB with them"
if [ -z "${SFS_ASAN:-}" ]; then
	# one copy is 53 MiB of base64: 8 of them were 426 MiB
	assert_lt $((${rss1:-999999} - ${rss0:-0})) $((120 * 1024)) \
		"8 readers of result.json share one copy (less than 120 MiB more)" " kB"
fi
assert_eq "$PNG_SUM" \
	"$(timeout 30 python3 -c 'import base64, hashlib, json, sys
print(hashlib.sha1(base64.b64decode(json.load(open(sys.argv[1]))["results"][0]["png"])).hexdigest())' "$P/result.json")" \
	"result.json has the png whole"
check "two 40 MiB pngs" code py 'display(P()); display(P())'
assert_eq "['png'] False ['png']" "$(json "$P/result.json" '[k for k in j["results"][0] if k == "png"], "png" in j["results"][1], j["results"][1].get("omittedFormats")')" \
	"formats past 64 MiB in all are left out of result.json, named"
assert_eq $(((40 << 20) + 4)) "$(stat -c %s "$P/results/2/png")" "results/2/png has it whole"

sfs_done
