#!/usr/bin/env bash
# t87_charts_ts: chart.json of matplotlib figures, and typescript
# contexts. Charts: a line, bar, scatter, pie, histogram, box plot and a
# figure of two axes each give results/N/chart.json beside png, whose
# type, title, labels, unit and series are those the cell plotted (the
# cell writes what it plotted to a file, compared here); result.json
# has chart as an object (unknown for a chart that is not JSON, which the
# code forged through the driver); an image gives unknown; a scatter of a million points is
# cut at 10000 ("truncated") and its chart.json stays small; a reader
# broken by the user's code (Axes.get_title raises) gives unknown and the
# execution still succeeds, with its png. TypeScript: with the
# typescript package installed (npm, cached under the build directory
# by version) in the context's cwd, `let x: number = 41; x + 1` gives 42,
# an interface and a function persist across cells, a throw in cell 2's
# line 3 names <cell 2>:3 in the traceback, await works; with no
# typescript found (a cwd without node_modules, NODE_PATH empty) the
# context is dead and its error line says what is missing. An upgrade in
# place keeps chart.json beside png, and a typescript context's state.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../thirdparty.sh
. "$(dirname "$0")/../thirdparty.sh"

sfs_mount

S=$MNT/sessions/k
check "mkdir sessions/k" sfs_mkdir "$S"
CS=$S/contexts
CPATH=$(sfs_ctx_path matplotlib)

# mkctx NAME [LANGUAGE [CWD]]: a context with the PATH above
mkctx() { sfs_ctx_make "$CS/$1" "${2:-}" "${3:-}" "$CPATH"; }

# code NAME TEXT [TIMEOUT]: run TEXT in context NAME; the writer's status
code() { sfs_ctx_code "$CS/$1" "$2" "${3:-}"; }

# field FILE KEY: the value of KEY in a key value file
field() { timeout 5 awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# chart_ok NAME CHECK: CHECK (python, c is chart.json of results/1 of
# context py, e what the cell wrote to $SFS_TMP/NAME.json; close(a, b[,
# tolerance]) compares lists of numbers) holds; prints what did not
chart_ok() {
	timeout 20 python3 -c 'import json, math, sys
c = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
close = lambda a, b, t=1e-9: all(math.isclose(x, y, rel_tol=t, abs_tol=1e-12) for x, y in zip(a, b)) and len(a) == len(b)
ok = eval(sys.argv[3])
print("ok" if ok is True else "no: %s" % json.dumps(c)[:400])' "$P/results/1/chart.json" "$SFS_TMP/$1.json" "$2"
}

# plotted NAME MSG CELL CHECK: CELL (which saves what it plots as NAME)
# runs and CHECK holds of its chart (chart_ok)
plotted() {
	check "$2: the cell" code py "$3" &&
		assert_eq ok "$(chart_ok "$1" "$4")" "$2"
}

P=$CS/py
check "mkdir contexts/py" mkctx py
check "import matplotlib" code py $'import json, numpy as np, matplotlib.pyplot as plt\nrng = np.random.default_rng(7)\ndef save(name, v): json.dump(v, open("'"$SFS_TMP"'/" + name + ".json", "w"))'

check "a line plot" code py $'x = np.linspace(0, 3, 20); y = np.sin(x)
plt.plot(x, y, label="sin"); plt.plot(x, 2 * x, label="twice")
plt.title("waves"); plt.xlabel("time (s)"); plt.ylabel("value")
save("line", {"sin": np.column_stack([x, y]).tolist(), "twice": np.column_stack([x, 2 * x]).tolist()})
plt.show()'
check "results/1/chart.json beside png" test -s "$P/results/1/chart.json" -a -s "$P/results/1/png"
assert_eq ok "$(chart_ok line 'c["type"] == "line" and c["title"] == "waves" and c["x_label"] == "time (s)" and c["x_unit"] == "s" and c["y_label"] == "value" and c["x_scale"] == "linear" and len(c["x_ticks"]) == len(c["x_tick_labels"]) > 1 and [el["label"] for el in c["elements"]] == ["sin", "twice"] and all(close(sum(el["points"], []), sum(e[el["label"]], [])) for el in c["elements"])')" \
	"a line chart: its title, labels, unit, ticks and both series' points"
assert_eq ok "$(timeout 10 python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("ok" if r["chart"] == json.load(open(sys.argv[2])) and "png" in r else r.keys())' "$P/result.json" "$P/results/1/chart.json")" \
	"result.json has chart (chart.json as an object) beside png"
check "a chart that is not JSON (made by the code, through the driver)" code py 'display.__self__.results.append(({"chart": "{\"type\": [1,"}, False))'
assert_file_eq "$P/results/1/chart.json" '{"type": [1,' "chart.json has its bytes"
assert_eq unknown "$(timeout 10 python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["chart"]["type"])' "$P/result.json")" \
	"result.json stays JSON: its chart is unknown"
check "the line plot again" code py 'plt.plot(x, y, label="sin"); plt.show()'
assert_true "results/1 lists chart.json" "$(ls "$P/results/1" | tr '\n' ' ')" \
	grep -qx chart.json <(timeout 5 ls "$P/results/1")

plotted bar "a bar chart: each bar's label, group and value" \
	$'names = ["ant", "bee", "cat"]; v = rng.integers(1, 100, 3).tolist()
plt.bar(names, v, label="count"); save("bar", {"names": names, "v": v}); plt.show()' \
	'c["type"] == "bar" and [(x["label"], x["group"], x["value"]) for x in c["elements"]] == [(n, "count", float(v)) for n, v in zip(e["names"], e["v"])]'

plotted scatter "a scatter: its points" \
	$'a = rng.normal(size=(50, 2)); plt.scatter(a[:, 0], a[:, 1], label="dots"); save("scatter", a.tolist()); plt.show()' \
	'c["type"] == "scatter" and c["elements"][0]["label"] == "dots" and close(sum(c["elements"][0]["points"], []), sum(e, [])) and "truncated" not in c'

plotted pie "a pie: each wedge's label and angle" \
	$'w = rng.integers(1, 10, 4).tolist(); plt.pie(w, labels=list("abcd")); plt.title("shares"); save("pie", w); plt.show()' \
	'c["type"] == "pie" and c["title"] == "shares" and [x["label"] for x in c["elements"]] == list("abcd") and close([x["angle"] for x in c["elements"]], [360 * v / sum(e) for v in e], 1e-6)'

plotted hist "a histogram: its edges and counts" \
	$'h = rng.normal(size=500); counts, edges, _ = plt.hist(h, bins=12); save("hist", {"counts": counts.tolist(), "edges": edges.tolist()}); plt.show()' \
	'c["type"] == "histogram" and close(c["elements"][0]["counts"], e["counts"]) and close(c["elements"][0]["edges"], e["edges"])'

plotted box "a box plot: each box's median, whiskers within its data, the outlier" \
	$'b = [rng.normal(size=40).tolist() + [9.0], rng.normal(size=30).tolist()]; plt.boxplot(b); save("box", b); plt.show()' \
	'c["type"] == "box_and_whisker" and len(c["elements"]) == 2 and all(math.isclose(x["median"], sorted(d)[len(d) // 2] if len(d) % 2 else (sorted(d)[len(d) // 2 - 1] + sorted(d)[len(d) // 2]) / 2) and x["max"] <= max(d) and x["min"] >= min(d) for x, d in zip(c["elements"], e)) and 9.0 in c["elements"][0]["outliers"]'

plotted two "a figure of two axes is a superchart of a line and a bar chart" \
	$'fig, (l, r) = plt.subplots(1, 2); l.plot([1, 2, 3], [3, 1, 2]); r.bar(["p", "q"], [5, 6]); fig.suptitle("both"); save("two", 0); plt.show()' \
	'c["type"] == "superchart" and c["title"] == "both" and [x["type"] for x in c["elements"]] == ["line", "bar"]'

plotted img "an image is unknown" \
	$'plt.imshow(rng.random((4, 4))); save("img", 0); plt.show()' \
	'c["type"] == "unknown"'

T0=$(now_ms)
check "a scatter of a million points" code py $'m = rng.random((1000000, 2)); plt.scatter(m[:, 0], m[:, 1], s=1); save("huge", m[:10000].tolist()); plt.show()' 120
T1=$(now_ms)
note "the million-point scatter took $((T1 - T0)) ms with its png"
assert_lt $((T1 - T0)) 60000 "a million points take seconds at most, png included" " ms"
assert_eq ok "$(chart_ok huge 'c["type"] == "scatter" and c["truncated"] is True and c["elements"][0]["truncated"] is True and close(sum(c["elements"][0]["points"], []), sum(e, []))')" \
	"a million points: the first 10000 kept, truncated said"
SIZE=$(stat -c %s "$P/results/1/chart.json")
assert_lt "$SIZE" 1000000 "and its chart.json is small" " bytes"

check "a reader broken by the code" code py $'import matplotlib.axes\norig = matplotlib.axes.Axes.get_title\nmatplotlib.axes.Axes.get_title = lambda self, *a, **k: 1 / 0\nplt.plot([1, 2]); save("broken", 0); plt.show()\n"still"'
assert_eq ok "$(chart_ok broken 'c == {"type": "unknown"}')" "an exception in the reader gives {\"type\": \"unknown\"}"
check "the execution succeeded, with its png" test -s "$P/results/1/png"
assert_file_eq "$P/result" $'\'still\'\n' "and its value"
assert_file_match "$P/stderr" "chart cannot be read .ZeroDivisionError" "one line on stderr says why"

# -------------------------------------------------------------- typescript
TSV=5.6.3
TSDIR=$(sfs_tp_cache "$(readlink -f "$SFS_BIN")" "$SFS_TMP/tp")/typescript-$TSV
sfs_tp_npm "$TSDIR" "typescript@$TSV" "$SFS_TMP/npm.log"
if [ -f "$TSDIR/node_modules/typescript/package.json" ]; then
	T=$CS/ts
	check "mkdir contexts/ts (cwd: the typescript package's)" mkctx ts typescript "$TSDIR"
	assert_file_eq "$T/language" $'typescript\n' "language is typescript"
	check "a type annotation" code ts 'let x: number = 41; x + 1'
	assert_file_eq "$T/result" $'42\n' "let x: number = 41; x + 1 gives 42"
	check "an interface and a function" code ts $'interface P { a: number; b?: string }
function twice(p: P): number {
  return p.a * 2;
}'
	check "the function in the next cell" code ts 'twice({ a: x } as P)'
	assert_file_eq "$T/result" $'82\n' "x and twice persist across cells"
	check "await" code ts 'const v: number = await Promise.resolve(5); v * 2'
	assert_file_eq "$T/result" $'10\n' "await works"
	code ts $'type Z = { z: number };\nfunction boom(z: Z): never {\n  throw new Error("boom " + z.z);\n}\nboom({ z: 3 })' 10
	assert_eq Error "$(timeout 5 python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$T/error")" "a thrown error"
	CELL=$(field "$T/status" execution_count)
	assert_file_match "$T/error" "at boom \\(<cell $CELL>:3:" "its stack names the throw's own line, 3 of its cell"
	code ts 'let y: = 1' 10
	assert_file_match "$T/error" 'SyntaxError' "a typescript syntax error is the execution's error"
	check "the context lives on" code ts 'twice({ a: 1 })'
	assert_file_eq "$T/result" $'2\n' "after it"
else
	fail "npm install typescript@$TSV" "$(tail -c 300 "$SFS_TMP/npm.log" | tr '\n' ' ')"
fi

# an upgrade in place keeps a figure's chart.json with its png, and a
# typescript context's language and state
check "a figure to keep" code py $'matplotlib.axes.Axes.get_title = orig\nplt.plot([3, 1, 2], label="kept"); save("kept", 0); plt.show()'
timeout 5 cat "$P/results/1/chart.json" >"$SFS_TMP/kept.chart"
check "it is a line chart" grep -q "\"type\": \"line\"" "$SFS_TMP/kept.chart"
check "upgrade" sfs_write "$MNT/ctl" $'upgrade\n'
check "the server was executed again" sfs_until 20 eval '[ "$(field "$MNT/health" upgrades)" = 1 ]'
assert_file_same "$P/results/1/chart.json" "$SFS_TMP/kept.chart" "chart.json is the same after the upgrade"
check "and png is there" test -s "$P/results/1/png"
if [ -n "${T:-}" ]; then
	assert_file_eq "$T/language" $'typescript\n' "a typescript context stays typescript"
	check "its function after the upgrade" code ts 'twice({ a: 21 })'
	assert_file_eq "$T/result" $'42\n' "and its state"
fi

N=$CS/nots
mkdir -p "$SFS_TMP/empty"
check "mkdir contexts/nots (a cwd without node_modules)" mkctx nots typescript "$SFS_TMP/empty"
check "NODE_PATH empty" sfs_write "$N/env/NODE_PATH" $'\n'
code nots 'let x: number = 1' 20
assert_eq dead "$(field "$N/status" state)" "no typescript: the context is dead"
assert_file_match "$N/error" "typescript: node v[0-9.]+ cannot strip types and no typescript package is installed \\(npm install typescript\\)" \
	"its error line says what is missing"
assert_file_match "$S/error" "contexts/nots: typescript: node" "so does the session's error"

sfs_done
