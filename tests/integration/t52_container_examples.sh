#!/usr/bin/env bash
# t52_container_examples: examples/container/ checked by parsing, as no
# container engine runs here (issue 11, item 8). daemonset.yaml: a
# DaemonSet, privileged, /dev/fuse from the host, the hostPath shared
# directory with Bidirectional propagation, a liveness probe that reads
# MOUNTPOINT/health under timeout (and its timeoutSeconds lets that timeout
# act first). consumer-pod.yaml: the same hostPath with HostToContainer,
# NODE_NAME from the downward API. Dockerfile: every FROM is debian:12, the
# build deps, meson setup/ninja/meson install, the runtime libraries, the
# mount point made, ENTRYPOINT ["sessionfs","-f","-o","allow_other",
# MOUNTPOINT]. The mount point is a directory below the shared directory
# (so that a consumer sees a restart), the same in all of them and in the
# README's docker run lines (daemon: /dev/fuse, SYS_ADMIN, rshared;
# consumer: rslave). No drift: the manifests hold what tests/containers.sh
# runs, read from the README's lines (found by containers_lib.sh's
# ct_readme_lines, as containers.sh finds them), the Dockerfile and the
# config containers.sh writes: each -v's hostPath, mount path,
# propagation (rshared = Bidirectional, rslave = HostToContainer) and
# ro, --device, --cap-add, no command or args over the ENTRYPOINT, the
# probe = the HEALTHCHECK's CMD, runtime_dir left to its default. Both
# manifests validated by the Kubernetes schema (npm kubernetes-models,
# cached), and a broken copy fails it. Nothing is mounted.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../thirdparty.sh
. "$(dirname "$0")/../thirdparty.sh"

EX=$(cd "$(dirname "$0")/../../examples/container" 2>/dev/null && pwd)
for f in Dockerfile daemonset.yaml consumer-pod.yaml README.md; do
	assert_true "examples/container/$f exists" "missing" test -f "$EX/$f"
done
# the README's docker lines, found as tests/containers.sh finds them
# shellcheck source=../containers_lib.sh
. "$(dirname "$0")/../containers_lib.sh"
assert_true "README: the host's, build, daemon, consumer and config lines" "$LINES_ERR" ct_readme_lines
DF=$EX/Dockerfile
# lines: continuation lines joined, comments dropped
df_lines() { sed -e '/^[[:space:]]*#/d' "$DF" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta'; }
EP=$(df_lines | grep -E '^ENTRYPOINT ' | tail -n 1)
EP=${EP#ENTRYPOINT }
HC=$(df_lines | grep -E '^HEALTHCHECK ' | sed -n 's/.*[[:space:]]CMD[[:space:]]*//p')
# sessionfs's mount point: the last word of the Dockerfile's ENTRYPOINT;
# the directory shared with the consumers: the container's side of the
# README daemon line's -v with rshared (checked to be MP's parent below)
MP=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])[-1])' "$EP" 2>/dev/null)
SHARED=$(python3 -c 'import shlex, sys
w = shlex.split(sys.argv[1])
print(next(v.split(":")[1] for o, v in zip(w, w[1:]) if o == "-v" and v.endswith(":rshared")))' "$README_DAEMON" 2>/dev/null)
assert_true "the mount point (ENTRYPOINT's last word) and the shared directory (the daemon's -v ...:rshared)" \
	"mount point '$MP', shared '$SHARED'" test -n "$MP" -a -n "$SHARED"

# ---------------------------------------------------------------- yaml

PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import yaml' 2>/dev/null; then
		PY=$p
		break
	fi
done

# the checks, in Python: one line "ok NAME" or "not ok NAME: why" each
read -r -d '' YAML_CHECKS <<'EOF'
import sys, yaml

ex, shared, mp = sys.argv[1:4]
def say(ok, name, why=""):
    print(("ok " if ok else "not ok ") + name + ("" if ok else ": " + why))

def load(name):
    with open(ex + "/" + name) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    say(len(docs) == 1, name + ": one yaml document", "%d documents" % len(docs))
    return docs[0] if docs else {}

def mounts_at(container, path):
    return [m for m in container.get("volumeMounts", []) if m.get("mountPath") == path]

ds = load("daemonset.yaml")
say(ds.get("kind") == "DaemonSet" and ds.get("apiVersion") == "apps/v1",
    "daemonset.yaml: kind DaemonSet, apps/v1", "%r %r" % (ds.get("kind"), ds.get("apiVersion")))
spec = ds.get("spec", {}).get("template", {}).get("spec", {})
cs = spec.get("containers", [])
c = cs[0] if cs else {}
say(len(cs) == 1, "daemonset.yaml: one container", "%d" % len(cs))
probe = c.get("livenessProbe") or {}
cmd = (probe.get("exec") or {}).get("command") or []
say(cmd[:1] == ["timeout"] and len(cmd) >= 4 and cmd[2:] == ["cat", mp + "/health"],
    "daemonset.yaml: the liveness probe is `timeout N cat " + mp + "/health`", "command: %r" % cmd)
try:
    t = float(cmd[1])
except (IndexError, ValueError):
    t = None
ts = probe.get("timeoutSeconds")
say(t is not None and isinstance(ts, int) and ts > t,
    "daemonset.yaml: the probe's timeoutSeconds is above its timeout (the timeout acts first)",
    "timeout %r, timeoutSeconds %r" % (t, ts))
say(isinstance(probe.get("periodSeconds"), int), "daemonset.yaml: the probe has a periodSeconds", "%r" % probe)
inits = spec.get("initContainers", [])
say(any(mp in " ".join(i.get("command", [])) and "mkdir" in " ".join(i.get("command", [])) for i in inits),
    "daemonset.yaml: an init container makes " + mp, "initContainers: %r" % inits)
say(all(mounts_at(i, shared) for i in inits), "daemonset.yaml: the init containers mount " + shared,
    "initContainers: %r" % inits)

pod = load("consumer-pod.yaml")
say(pod.get("kind") == "Pod", "consumer-pod.yaml: kind Pod", "%r" % pod.get("kind"))
pspec = pod.get("spec", {})
pc = (pspec.get("containers") or [{}])[0]
say(not (pc.get("securityContext") or {}).get("privileged"), "consumer-pod.yaml: the consumer is not privileged",
    "securityContext: %r" % pc.get("securityContext"))
env = {e.get("name"): e for e in pc.get("env", [])}
ref = ((env.get("NODE_NAME") or {}).get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")
say(ref == "spec.nodeName", "consumer-pod.yaml: NODE_NAME comes from spec.nodeName", "%r" % ref)
script = " ".join(pc.get("command", []) + pc.get("args", []))
say(mp + "/sessions" in script, "consumer-pod.yaml: the consumer uses " + mp + "/sessions", "command: %r" % script[:200])
EOF

# py_checks SCRIPT ARG...: each "ok NAME" / "not ok NAME: why" line
# SCRIPT prints is a check; it must run to its end
py_checks() {
	local out rc line
	out=$(timeout 30 "$PY" -c "$@" 2>"$SFS_TMP/py.err")
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "${line#ok }" ;;
		"not ok "*)
			line=${line#not ok }
			fail "${line%%: *}" "${line#*: }"
			;;
		esac
	done <<<"$out"
	assert_eq 0 "$rc" "the python checks ran to their end" || note "$(head -c 400 "$SFS_TMP/py.err" | tr '\n' ' ')"
}

if [ -z "$PY" ]; then
	pass "yaml: skip (no python3 with the yaml module; tests/install-deps.sh installs python3-yaml)"
else
	py_checks "$YAML_CHECKS" "$EX" "$SHARED" "$MP"
fi

# ---------------------------------------------------------------- no drift

# The manifests against what tests/containers.sh runs: the README's
# docker lines (the daemon's with the config volume, as containers.sh
# adds it), the Dockerfile's HEALTHCHECK and the config containers.sh
# gives the daemon. Every value is read from those files; the one table
# here maps docker's terms to Kubernetes'.
read -r -d '' DRIFT_CHECKS <<'EOF'
import json, re, shlex, sys, yaml

ex, daemon, consumer, healthcheck, ctsh = sys.argv[1:6]
# docker's propagation -> Kubernetes' mountPropagation
PROPAGATION = {"rshared": "Bidirectional", "rslave": "HostToContainer"}

def say(ok, name, why=""):
    print(("ok " if ok else "not ok ") + name + ("" if ok else ": " + why))

def load(name):
    with open(ex + "/" + name) as f:
        return yaml.safe_load(f)

def opts(line, flag):
    w = shlex.split(line)
    return [v for o, v in zip(w, w[1:]) if o == flag]

def volume(spec, name):
    return next((v for v in spec.get("volumes", []) if v.get("name") == name), {})

def same_volumes(label, line, spec, c):
    for v in opts(line, "-v"):
        host, path, *mode = v.split(":")
        mode = mode[0].split(",") if mode else []
        ms = [m for m in c.get("volumeMounts", []) if m.get("mountPath") == path]
        say(len(ms) == 1, label + ": -v " + v + ": a volume mounted at " + path, "volumeMounts: %r" % c.get("volumeMounts"))
        if not ms:
            continue
        hp = (volume(spec, ms[0].get("name")).get("hostPath") or {}).get("path")
        say(hp == host, label + ": -v " + v + ": its hostPath is " + host, "it is %r" % hp)
        for m in mode:
            if m in PROPAGATION:
                got = ms[0].get("mountPropagation")
                say(got == PROPAGATION[m], label + ": -v " + v + ": mountPropagation " + PROPAGATION[m], "it is %r" % got)
            if m == "ro":
                say(ms[0].get("readOnly") is True, label + ": -v " + v + ": readOnly", "%r" % ms[0])

def containers(doc):
    spec = doc.get("spec", {})
    spec = spec.get("template", {}).get("spec", spec)
    return spec, (spec.get("containers") or [{}])[0]

spec, c = containers(load("daemonset.yaml"))
same_volumes("daemonset.yaml", daemon, spec, c)
for dev in opts(daemon, "--device"):
    ms = [m for m in c.get("volumeMounts", []) if m.get("mountPath") == dev]
    hp = volume(spec, ms[0].get("name")).get("hostPath") or {} if ms else {}
    say(hp.get("path") == dev and hp.get("type") == "CharDevice",
        "daemonset.yaml: --device " + dev + ": the host's " + dev + " (hostPath, CharDevice)", "%r" % hp)
sc = c.get("securityContext") or {}
for cap in opts(daemon, "--cap-add"):
    say(sc.get("privileged") is True or cap in (sc.get("capabilities") or {}).get("add", []),
        "daemonset.yaml: --cap-add " + cap + ": privileged or capabilities.add " + cap, "securityContext: %r" % sc)
# the README's daemon line ends with the image: its ENTRYPOINT, whole
say("command" not in c and "args" not in c,
    "daemonset.yaml: the image's ENTRYPOINT and its arguments, as the README's daemon line (no command, no args)",
    "command %r, args %r" % (c.get("command"), c.get("args")))
probe = ((c.get("livenessProbe") or {}).get("exec") or {}).get("command")
say(probe == json.loads(healthcheck), "daemonset.yaml: the liveness probe runs the Dockerfile's HEALTHCHECK " + healthcheck,
    "it runs %r" % probe)
conf = re.findall(r"printf '([^']*)' >\"\$H\.conf\"", ctsh)
say(len(conf) == 1, "tests/containers.sh: one config for the daemon", "%r" % conf)
say(not any("runtime_dir" in t for t in conf) and "runtime_dir" not in json.dumps(load("daemonset.yaml")),
    "runtime_dir: the default, in tests/containers.sh's config and in the DaemonSet", "config %r" % conf)

pspec, pc = containers(load("consumer-pod.yaml"))
same_volumes("consumer-pod.yaml", consumer, pspec, pc)
EOF
if [ -z "$PY" ]; then
	pass "drift: skip (no python3 with the yaml module)"
else
	py_checks "$DRIFT_CHECKS" "$EX" "${README_DAEMON% *} $README_CONFIG ${README_DAEMON##* }" \
		"$README_CONSUMER" "$HC" "$(cat "$EX/../../tests/containers.sh")"
fi


# ---------------------------------------------------------------- the Kubernetes schema

# Both manifests validated against the Kubernetes API's schema by the npm
# package kubernetes-models (each kind's class, validate() on ajv),
# installed once into the build directory's thirdparty/; and a copy of
# the DaemonSet made invalid (mountPropagation: Sideways) must fail it.
# Skipped (passed, with a note) without python3-yaml, node, or npm's
# registry. The schema allows fields it does not know.
KMV=5.1.0
KMDIR=$(sfs_tp_cache "$(readlink -f "${SFS_BIN:-}")" "$SFS_TMP/tp")/kubernetes-models-$KMV
# the manifest as JSON; for the DaemonSet also FILE.broken, its
# propagation Sideways
read -r -d '' TO_JSON <<'EOF'
import json, sys, yaml
src, out = sys.argv[1:3]
with open(src) as f:
    doc = yaml.safe_load(f)
with open(out, "w") as f:
    json.dump(doc, f)
for c in doc["spec"]["template"]["spec"]["containers"] if doc["kind"] == "DaemonSet" else []:
    for m in c.get("volumeMounts", []):
        if "mountPropagation" in m:
            m["mountPropagation"] = "Sideways"
            with open(out + ".broken", "w") as f:
                json.dump(doc, f)
EOF
# the class KIND of kubernetes-models/APIVERSION/KIND.js validates it
read -r -d '' VALIDATE <<'EOF'
const [dir, file] = process.argv.slice(1);
const doc = JSON.parse(require("fs").readFileSync(file, "utf8"));
import(dir + "/node_modules/kubernetes-models/" + doc.apiVersion + "/" + doc.kind + ".js").then((m) => {
  try { new m[doc.kind](doc).validate(); console.log("valid"); }
  catch (e) { console.log("invalid: " + e.message); process.exitCode = 1; }
}, (e) => { console.log("no model: " + e.message); process.exitCode = 2; });
EOF
rc=2
[ -z "$PY" ] || ! command -v node >/dev/null || { sfs_tp_npm "$KMDIR" "kubernetes-models@$KMV" "$SFS_TMP/npm.log"; rc=$?; }
if [ -z "$PY" ] || ! command -v node >/dev/null; then
	pass "schema: skip (no python3-yaml or no node)"
elif [ "$rc" -eq 2 ]; then
	pass "schema: skip (npm is missing or cannot reach its registry: $(tail -n 1 "$SFS_TMP/npm.log" 2>/dev/null | head -c 200))"
elif [ "$rc" -ne 0 ]; then
	fail "schema: npm install kubernetes-models@$KMV" "$(tail -c 300 "$SFS_TMP/npm.log" | tr '\n' ' ')"
else
	for f in daemonset.yaml consumer-pod.yaml; do
		timeout 30 "$PY" -c "$TO_JSON" "$EX/$f" "$SFS_TMP/$f.json" 2>"$SFS_TMP/py.err" ||
			fail "schema: $f as JSON" "$(head -c 300 "$SFS_TMP/py.err")"
		assert_eq valid "$(timeout 60 node -e "$VALIDATE" "$KMDIR" "$SFS_TMP/$f.json" 2>&1)" \
			"schema: $f is valid (kubernetes-models@$KMV)"
	done
	out=$(timeout 60 node -e "$VALIDATE" "$KMDIR" "$SFS_TMP/daemonset.yaml.json.broken" 2>&1)
	assert_true "schema: a copy with mountPropagation: Sideways is invalid" "it says: $out" \
		bash -c 'grep -q "^invalid: .*mountPropagation must be equal to one of the allowed values" <<<"$1"' _ "$out"
fi

# ---------------------------------------------------------------- Dockerfile

froms=$(df_lines | grep -E '^FROM ')
assert_true "Dockerfile: there is a FROM" "none" test -n "$froms"
# FROM $BASE / $BUILD_BASE: build arguments whose defaults are debian:12
# (tests/containers.sh passes its local images)
bad=$(printf '%s\n' "$froms" | grep -vE '^FROM \$(BASE|BUILD_BASE)( AS [A-Za-z0-9_-]+)?[[:space:]]*$')
assert_eq "" "$bad" "Dockerfile: every FROM is \$BASE or \$BUILD_BASE"
assert_eq "ARG BASE=debian:12" "$(df_lines | grep -E '^ARG BASE=')" "Dockerfile: BASE defaults to debian:12"
assert_eq "ARG BUILD_BASE=\$BASE" "$(df_lines | grep -E '^ARG BUILD_BASE=')" "Dockerfile: BUILD_BASE defaults to BASE"
assert_true "Dockerfile: a HEALTHCHECK reads $MP/health" "none" bash -c 'grep -qE "^HEALTHCHECK .*$2/health" <<<"$1"' _ "$(df_lines)" "$MP"
assert_true "Dockerfile: labels" "none" bash -c 'grep -q "^LABEL " <<<"$1"' _ "$(df_lines)"
# the lines tests/containers.sh runs are this README's: it finds them as
# these checks do, and the consumer line it adds is the README's with its
# own script
assert_true "tests/containers.sh runs the README's docker lines" "it does not read them" \
	grep -q 'README_DAEMON=.*docker run' "$EX/../../tests/containers_lib.sh"
runs=$(df_lines | grep -E '^RUN ')
for pkg in gcc libc6-dev pkg-config meson ninja-build libfuse3-dev libconfig-dev fuse3 libfuse3-3 libconfig9 bash; do
	assert_true "Dockerfile: apt-get installs $pkg" "no RUN line installs it" \
		bash -c 'grep "apt-get install" <<<"$1" | grep -qw -- "$2"' _ "$runs" "$pkg"
done
for step in 'meson setup .* --buildtype=release' 'ninja -C' 'meson install .*--destdir' "mkdir -p $MP"; do
	assert_true "Dockerfile: RUN ... $step" "no RUN line matches" bash -c 'grep -qE -- "$2" <<<"$1"' _ "$runs" "$step"
done
ep=$EP
want="[\"sessionfs\",\"-f\",\"-o\",\"allow_other\",\"$MP\"]"
if [ -n "$PY" ]; then
	got=$("$PY" -c 'import json, sys; print(json.dumps(json.loads(sys.argv[1]), separators=(",", ":")))' "$ep" 2>&1)
else
	got=${ep//[[:space:]]/}
fi
assert_eq "$want" "$got" "Dockerfile: ENTRYPOINT is the exec form of sessionfs -f -o allow_other $MP"
assert_eq "$SHARED" "$(dirname "$MP")" "the mount point $MP is directly below the shared directory $SHARED"

# ---------------------------------------------------------------- README

RD=$EX/README.md
daemon=$README_DAEMON
consumer=$README_CONSUMER
assert_eq 1 "$(grep -c . <<<"$daemon")" "README: one docker run line for the daemon (--device /dev/fuse)"
assert_eq 1 "$(grep -c . <<<"$consumer")" "README: one docker run line for a consumer (:rslave)"
for w in '--cap-add SYS_ADMIN' "-v $SHARED:$SHARED:rshared"; do
	assert_true "README: the daemon's line has $w" "it is: $daemon" bash -c 'grep -qF -e "$2" <<<"$1"' _ "$daemon" "$w"
done
assert_true "README: the consumer's line has -v $SHARED:$SHARED:rslave" "it is: $consumer" \
	bash -c 'grep -qF -e "$2" <<<"$1"' _ "$consumer" "-v $SHARED:$SHARED:rslave"
assert_true "README: the consumer's line uses $MP/sessions" "it is: $consumer" \
	bash -c 'grep -qF -e "$2" <<<"$1"' _ "$consumer" "$MP/sessions/"
assert_true "README: the host makes $MP" "no 'mkdir -p $MP' line" grep -qxF "mkdir -p $MP" "$RD"
assert_true "README: the Dockerfile's build line" "no 'docker build -f examples/container/Dockerfile'" \
	grep -qF 'docker build -f examples/container/Dockerfile' "$RD"
other=$(grep -oE '/srv/[A-Za-z0-9_./-]*' "$RD" "$EX/Dockerfile" "$EX"/*.yaml | cut -d: -f2- |
	grep -vE "^($SHARED|$MP)(/(sessions|health|ctl)(/.*)?)?/?\$" | sort -u | tr '\n' ' ')
assert_eq "" "$other" "the examples name no /srv path but $SHARED, $MP and their files"
assert_true "README: says what was run and what was not" "no such section" \
	grep -q '^## What was run, what was not' "$RD"

SFS_DONE=1
exit 0
