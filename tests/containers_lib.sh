# tests/containers_lib.sh: the steps of tests/containers.sh (sourced by
# it; uses its pm, check, pass, fail, say and globals).
# shellcheck shell=bash disable=SC2034

# ct_engine_flags: ENGINE=(the flags podman run and build need here).
# Tried in order: none; then ulimits at or below the hard limits (where
# podman's defaults are above them, raising is refused); then with
# --runtime runc (crun refuses hybrid cgroups). Needs BASE.
ct_engine_flags() {
	local rt np nf hard err=$H.err
	hard=$(ulimit -Hu)
	nf=$(ulimit -Hn)
	for rt in "" runc; do
		[ -z "$rt" ] || command -v "$rt" >/dev/null || continue
		for np in "" "$hard" 32768 16384 8192 4096 1024; do
			[ -z "$np" ] || [ "$hard" = unlimited ] || [ "$np" -le "$hard" ] || continue
			ENGINE=()
			[ -z "$rt" ] || ENGINE+=(--runtime "$rt")
			[ -z "$np" ] || ENGINE+=(--ulimit "nofile=$nf:$nf" --ulimit "nproc=$np:$np")
			pm 120 run --rm "${ENGINE[@]}" "$BASE" true >/dev/null 2>"$err" && return 0
			ENGINE_ERR=$(head -c 300 "$err")
		done
	done
	return 1
}

# ct_mirror: the Debian mirror apt uses (the bookworm entry)
ct_mirror() {
	local m
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk 'BEGIN { RS = "" }
		/(^|\n)Suites:([^\n]* )?bookworm( |\n|$)/ {
			if (match($0, /URIs: *[^ \n]+/)) { u = substr($0, RSTART, RLENGTH); sub(/URIs: */, "", u); print u; exit } }')
	[ -n "$m" ] || m=$(grep -hE '^deb (\[[^]]*\] )?[a-z]+://[^ ]+ bookworm ' /etc/apt/sources.list 2>/dev/null |
		sed -E 's/^deb (\[[^]]*\] )?//; s/ .*//' | head -n 1)
	printf '%s\n' "${m:-http://deb.debian.org/debian}"
}

# ct_packages STAGE: the packages the Dockerfile's apt-get install of
# stage STAGE (1: build, 2: runtime) names, sorted, comma-separated
ct_packages() {
	sed -e '/^[[:space:]]*#/d' "$EX/Dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
		awk -v want="$1" '/^FROM /{ n++ } n == want && /apt-get install/' |
		sed -E 's/.*apt-get install[^&]*--no-install-recommends//; s/&&.*//' | tr -s ' \t' '\n' |
		grep -v '^$' | sort -u | paste -sd, -
}

# ct_hash WORDS...: a tag for an image made of WORDS (mirror, packages)
ct_hash() { printf '%s ' "$@" | sha256sum | cut -c1-16; }

# ct_prune REPO TAG: removes REPO's other tags (older package lists)
ct_prune() {
	local old
	for old in $(pm 30 images --format '{{.Repository}}:{{.Tag}}' "$1" 2>/dev/null); do
		[ "$old" = "$2" ] || pm 60 rmi "$old" >/dev/null 2>&1
	done
}

# ct_minbase: BASE, a minbase Debian 12 from the mirror apt uses, made by
# debootstrap and podman import unless podman has it already
ct_minbase() {
	local mirror root
	mirror=$(ct_mirror)
	BASE=localhost/sfs-base:$(ct_hash bookworm minbase "$mirror")
	if ! pm 30 image exists "$BASE"; then
		root=$(mktemp -d /tmp/sfs-ct-root.XXXXXX)
		if ! timeout 900 debootstrap --variant=minbase bookworm "$root" "$mirror" >"$H.boot" 2>&1 ||
			! tar -C "$root" -c . | pm 600 import - "$BASE" >>"$H.boot" 2>&1; then
			say "debootstrap or import: $(tail -n 3 "$H.boot" | tr '\n' ' ')"
			rm -rf "$root"
			return 1
		fi
		rm -rf "$root"
	fi
	ct_prune localhost/sfs-base "$BASE"
}

# ct_buildbase: BUILD_BASE, BASE with the packages of the Dockerfile's
# build stage (its apt-get install then finds them there), committed
# unless podman has it already. Needs ENGINE.
ct_buildbase() {
	local pkgs c
	pkgs=$(ct_packages 1)
	BUILD_BASE=localhost/sfs-build-base:$(ct_hash "$BASE" "$pkgs")
	pm 30 image exists "$BUILD_BASE" || {
		c=$(pm 60 create "${ENGINE[@]}" "$BASE" bash -c "apt-get update &&
			apt-get install -y --no-install-recommends ${pkgs//,/ } && rm -rf /var/lib/apt/lists/*") || return 1
		CTRS+=("$c")
		pm 900 start -a "$c" >"$H.boot" 2>&1 && pm 300 commit "$c" "$BUILD_BASE" >/dev/null 2>>"$H.boot" ||
			{ say "the build base: $(tail -n 3 "$H.boot" | tr '\n' ' ')"; return 1; }
	}
	ct_prune localhost/sfs-build-base "$BUILD_BASE"
}

# ct_readme_lines: the lines of examples/container/README.md's Docker
# section: HOST_LINES (the host's, once), README_BUILD, README_DAEMON,
# README_CONSUMER and README_CONFIG (the -v of the config file)
ct_readme_lines() {
	local all
	all=$(awk '/^## Docker/{ d = 1; next } /^## /{ d = 0 } d && /^```/{ b = !b; next } d && b' "$EX/README.md" |
		sed -e ':a' -e '/\\$/N; s/\\\n//; ta')
	mapfile -t HOST_LINES < <(grep -vE '^(docker|podman) ' <<<"$all")
	README_BUILD=$(grep -E '^docker build ' <<<"$all")
	README_DAEMON=$(grep -E '^docker run .*--device /dev/fuse' <<<"$all")
	README_CONSUMER=$(grep -E '^docker run .*:rslave' <<<"$all")
	README_CONFIG=$(grep -oE -- '-v [^ `]+:/etc/sessionfs.conf:ro' "$EX/README.md" | head -n 1)
	LINES_ERR="build '$README_BUILD', daemon '$README_DAEMON', consumer '$README_CONSUMER', config '$README_CONFIG'"
	[ ${#HOST_LINES[@]} -gt 0 ] && [ -n "$README_BUILD" ] && [ -n "$README_DAEMON" ] &&
		[ -n "$README_CONSUMER" ] && [ -n "$README_CONFIG" ]
}

# ct_run_line LINE: a host line of the README, /srv/sfs being H
ct_run_line() { timeout 30 bash -ec "${1//\/srv\/sfs/$H}"; }

# ct_words LINE EXTRA...: W=(LINE as podman words): docker is podman, the
# engine flags and EXTRA follow its verb, -v /srv/sfs... is H's, the
# conf's host file is H.conf, --name sessionfs is this run's, the image
# sessionfs is the one built (IMG), debian:12 is BASE
ct_words() {
	local line=$1 w prev=
	shift
	mapfile -d '' -t W < <(python3 -c 'import shlex, sys; sys.stdout.write("\0".join(shlex.split(sys.argv[1])))' "$line")
	local out=(podman "${W[1]}" "${ENGINE[@]}" "$@")
	for w in "${W[@]:2}"; do
		case $prev:$w in
		-v:/srv/sfs:*) w=$H${w#/srv/sfs} ;;
		-v:*:/etc/sessionfs.conf:ro) w=$H.conf:/etc/sessionfs.conf:ro ;;
		--name:sessionfs) w=$TAG-daemon ;;
		-t:sessionfs) w=localhost/$TAG ;;
		*:sessionfs) w=${IMG:-sessionfs} ;;
		*:debian:12) w=$BASE ;;
		esac
		out+=("$w")
		prev=$w
	done
	W=("${out[@]}")
}

# ct_build: the README's docker build line, from the top of the checkout,
# with the local bases as build arguments; IMG its id
ct_build() {
	ct_words "$README_BUILD" --format docker --layers=false \
		--build-arg "BASE=$BASE" --build-arg "BUILD_BASE=$BUILD_BASE"
	(cd "$top" && timeout -k 10 900 "${W[@]}" >"$H.build" 2>&1) ||
		return 1
	IMG=$(pm 30 image inspect -f '{{.Id}}' "localhost/$TAG") || return 1
}

# ct_runtime_files: the image holds the binary, sfsdrv.so and the context
# drivers, and no compiler
ct_runtime_files() {
	local f
	for f in /usr/local/bin/sessionfs '/usr/local/lib*/sessionfs/sfsdrv.so' \
		'/usr/local/lib*/sessionfs/sfsctx.py' '/usr/local/lib*/sessionfs/sfsctx.js'; do
		check "the image has $f" pm 60 run --rm "${ENGINE[@]}" --entrypoint /bin/sh "$IMG" -c "test -e $f"
	done
	check "the image has no compiler (multi-stage)" pm 60 run --rm "${ENGINE[@]}" --entrypoint /bin/sh "$IMG" \
		-c '! command -v gcc && ! command -v meson'
}

# ct_wait_mount [NOT-PID]: the host sees a serving mount at H/mnt (and, with
# NOT-PID, one whose server is another) within 60 s
ct_wait_mount() {
	local i pid
	for ((i = 0; i < 600; i++)); do
		if mountpoint -q "$H/mnt" && pid=$(ct_health pid) && [ -n "$pid" ] && [ "$pid" != "${1:-}" ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# ct_health KEY: that line's value in the host's H/mnt/health
ct_health() { timeout 5 awk -v k="$1" '$1 == k { print $2 }' "$H/mnt/health" 2>/dev/null; }

# ct_daemon: the README's daemon line, with the README's config volume;
# DAEMON its id, once the host sees its mount
ct_daemon() {
	ct_words "${README_DAEMON% *} $README_CONFIG ${README_DAEMON##* }"
	DAEMON=$(timeout -k 10 120 "${W[@]}" 2>"$H.err") ||
		{ fail "the README's daemon line runs" "$(head -c 300 "$H.err")"; return 1; }
	CTRS+=("$DAEMON")
	check "the README's daemon line runs" true
	check "the host sees the daemon's mount at /srv/sfs/mnt (rshared)" ct_wait_mount || return 1
}

# ct_consumer LINE [EXTRA...]: runs the README consumer line LINE (EXTRA
# after run) and prints what it printed
ct_consumer() {
	local line=$1
	shift
	ct_words "$line" "$@"
	timeout -k 10 120 "${W[@]}" </dev/null
}

# ct_steps LABEL: each "ok STEP" / "not ok STEP: why" line of stdin is a
# check "LABEL: STEP"; the last line must be "end"
ct_steps() {
	local line last=
	while IFS= read -r line; do
		case $line in
		"ok "*) pass "$1: ${line#ok }" ;;
		"not ok "*)
			line=${line#not ok }
			fail "$1: ${line%%: *}" "${line#*: }"
			;;
		esac
		last=$line
	done
	[ "$last" = end ] || fail "$1: the round trip ran to its end" "last line: $last"
}

# RT: a consumer line with the round trip of tests/containers_rt.sh
RT_LINE="docker run --rm -v /srv/sfs:/srv/sfs:rslave debian:12 bash /rt.sh /srv/sfs/mnt"

# ct_roundtrip LABEL NAME [EXTRA...]: the round trip in a new consumer
ct_roundtrip() {
	local label=$1 name=$2 t0
	shift 2
	t0=$(date +%s%N)
	ct_steps "$label" < <(ct_consumer "$RT_LINE $name" -v "$top/tests/containers_rt.sh:/rt.sh:ro" "$@" 2>&1)
	say "containers: $label: round trip in a new container $((($(date +%s%N) - t0) / 1000000)) ms"
}

# ct_sh EXTRA... -- SCRIPT ARGS...: bash -c SCRIPT in a new consumer
# container (the README's consumer flags, EXTRA after run), mount at $1
ct_sh() {
	local extra=()
	while [ "$1" != -- ]; do
		extra+=("$1")
		shift
	done
	shift
	ct_words "docker run --rm -v /srv/sfs:/srv/sfs:rslave debian:12" "${extra[@]}"
	timeout -k 10 120 "${W[@]}" bash -c "$1" _ /srv/sfs/mnt "${@:2}" </dev/null
}

# ct_users: root's session is closed to uid 1000 (allow_other: each
# session is its maker's)
ct_users() {
	check "root makes session c-priv and runs in it" ct_sh -- \
		'mkdir "$1/sessions/c-priv" && echo "echo secret" >"$1/sessions/c-priv/cmd"'
	local out
	out=$(ct_sh --user 1000 -- 's=$1/sessions/c-priv
		ls "$s" >/dev/null 2>&1 && echo "ls: allowed"
		cat "$s/stdout" 2>&1 | grep -q secret && echo "stdout: read"
		echo id 2>/dev/null >"$s/cmd" && echo "cmd: written"
		rmdir "$s" 2>/dev/null && echo "rmdir: done"
		cat "$s/stdout" 2>&1 | grep -o "Permission denied" | head -n 1' 2>&1)
	check "uid 1000 cannot list, read, run in or remove root's session (EACCES)" \
		test "$out" = "Permission denied"
	check "root removes c-priv" ct_sh -- 'rmdir "$1/sessions/c-priv"'
}

# ct_config: the config volume's max_sessions_per_user = 5 holds for uid 1000
ct_config() {
	local out
	out=$(ct_sh --user 1000 -- 'for i in 1 2 3 4 5 6; do mkdir "$1/sessions/q$i" 2>&1 || break; done
		for i in 1 2 3 4 5; do rmdir "$1/sessions/q$i"; done' 2>&1)
	check "the config volume's max_sessions_per_user = 5: the 6th mkdir fails (EDQUOT)" \
		grep -q "Disk quota exceeded" <<<"$out"
	check "and the 5 others were made and removed" test ! -e "$H/mnt/sessions/q1"
}

# ct_crash: kill -9 of the server inside the daemon container: the keeper
# (the container's process) starts a new one on the same mount; the
# container goes on, a session's finished run is kept
ct_crash() {
	local pid started out
	check "session c-keep with a finished run" ct_sh -- \
		'mkdir "$1/sessions/c-keep" && echo "echo kept" >"$1/sessions/c-keep/cmd"'
	pid=$(ct_health pid)
	started=$(pm 30 inspect -f '{{.State.StartedAt}}' "$DAEMON")
	check "crash: kill -9 of the server (health's pid $pid) in the daemon container" \
		pm 30 exec "$DAEMON" kill -9 "$pid"
	check "crash: the keeper serves the same mount with a new server" ct_wait_mount "$pid"
	check "crash: health counts the recovery" test "$(ct_health recoveries)" = 1
	check "crash: the container was not restarted" \
		test "$(pm 30 inspect -f '{{.State.StartedAt}}' "$DAEMON")" = "$started"
	out=$(ct_sh -- 's=$1/sessions/c-keep; cat "$s/stdout"; echo "echo again" >"$s/cmd"; cat "$s/stdout"' 2>&1)
	check "crash: c-keep's finished run is kept, and it runs again" test "$out" = $'kept\nagain'
}

# ct_upgrade: echo upgrade > ctl inside the daemon container: the same
# server pid, upgrades 1, c-keep's shell the same process
ct_upgrade() {
	local p1 p2 pid get='s=$1/sessions/c-keep; echo "echo \$\$" >"$s/cmd" && cat "$s/stdout"'
	p1=$(ct_sh -- "$get" 2>&1)
	pid=$(ct_health pid)
	check "upgrade: echo upgrade > ctl in the daemon container" \
		pm 60 exec "$DAEMON" sh -c 'echo upgrade >/srv/sfs/mnt/ctl'
	check "upgrade: health counts it, the server's pid is the same" \
		test "$(ct_health upgrades):$(ct_health pid)" = "1:$pid"
	p2=$(ct_sh -- "$get" 2>&1)
	check "upgrade: c-keep's shell is the same process" test -n "$p1" -a "$p1" = "$p2"
}

# ct_wait_restart N: the daemon container's RestartCount above N, in 90 s
ct_wait_restart() {
	local i
	for ((i = 0; i < 180; i++)); do
		[ "$(pm 30 inspect -f '{{.RestartCount}}' "$DAEMON")" -gt "$1" ] && return 0
		sleep 0.5
	done
	return 1
}

# ct_restarts: a consumer container runs throughout; the daemon container
# is stopped and started, then killed (--restart starts it again); each
# time the consumer sees the new mount without restarting
ct_restarts() {
	local cons n
	ct_words "docker run -d -v /srv/sfs:/srv/sfs:rslave debian:12 sleep 900" -v "$top/tests/containers_rt.sh:/rt.sh:ro"
	cons=$(timeout -k 10 120 "${W[@]}" 2>&1) || { fail "restart: a consumer container runs" "$cons"; return; }
	CTRS+=("$cons")
	check "restart: podman stop of the daemon container" pm 90 stop -t 30 "$DAEMON"
	check "restart: SIGTERM unmounted (the host has no mount)" bash -c '! mountpoint -q "$1"' _ "$H/mnt"
	check "restart: podman start of the daemon container" pm 90 start "$DAEMON"
	check "restart: the host sees the new mount" ct_wait_mount
	ct_steps "restart: the consumer, not restarted" < <(pm 120 exec "$cons" bash /rt.sh /srv/sfs/mnt r-start 2>&1)
	n=$(pm 30 inspect -f '{{.RestartCount}}' "$DAEMON")
	check "kill: kill -9 of the daemon container's process from the host" \
		kill -9 "$(pm 30 inspect -f '{{.State.Pid}}' "$DAEMON")"
	check "kill: --restart unless-stopped starts the container again" ct_wait_restart "$n"
	check "kill: the new daemon mounts over the dead mount" ct_wait_mount
	ct_steps "kill: the consumer, not restarted" < <(pm 120 exec "$cons" bash /rt.sh /srv/sfs/mnt r-kill 2>&1)
}
