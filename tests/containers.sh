#!/usr/bin/env bash
# tests/containers.sh: examples/container run by a real engine (podman).
# Makes Debian 12 base images with debootstrap from the mirror apt uses
# (cached in podman's store, tagged by a hash of their package lists),
# builds the image from examples/container/Dockerfile with them as BASE
# and BUILD_BASE (no registry is reached), and runs the docker lines of
# examples/container/README.md as podman lines: the host's shared
# directory, the daemon, a consumer. Then: a full round trip from a
# consumer container, one as --user 1000 (its own session; root's is
# closed to it), the config file as a volume, the HEALTHCHECK, a crash of
# the server (the keeper recovers it, the container goes on), an upgrade
# in place inside the container, and the daemon container stopped and
# started again (and killed, --restart brings it back) while a consumer
# container runs: it sees each new mount without restarting.
# Skips (status 0) without root, podman, debootstrap or /dev/fuse. Leaves
# no container, mount or image behind but the cached bases.
#
# Usage: tests/containers.sh [CACHE-DIR]   (timings go to stdout)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
EX=$top/examples/container
TAG=sfs-ct-$$ # the names of this run's containers and image
PASS=0 FAIL=0 START=$SECONDS
CTRS=() # ids of the containers this run made
IMG=    # the id of the image it built
H=      # the host's shared directory (the README's /srv/sfs)

say() { printf '%s\n' "$*"; }
pass() { PASS=$((PASS + 1)); say "ok - $1"; }
fail() { FAIL=$((FAIL + 1)); say "not ok - $1: $2"; }
# check NAME CMD...: passes when CMD succeeds
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(head -c 300 <<<"$out" | tr '\n' ' ')"; fi
}
# pm SECONDS ARGS...: podman under a timeout
pm() {
	local t=$1
	shift
	timeout -k 10 "$t" podman "$@"
}
skip() {
	say "containers: skip ($1)"
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip "not root"
for c in podman debootstrap; do
	command -v "$c" >/dev/null || skip "no $c (tests/install-deps.sh installs it)"
done
[ -c /dev/fuse ] || skip "no /dev/fuse"

# shellcheck source=containers_lib.sh
. "$top/tests/containers_lib.sh"

cleanup() {
	local c
	for c in "${CTRS[@]}"; do pm 60 rm -f --time 5 "$c" >/dev/null || say "cleanup: podman rm $c failed"; done
	[ -z "$IMG" ] || pm 60 rmi -f "$IMG" >/dev/null || say "cleanup: podman rmi $IMG failed"
	if [ -n "$H" ]; then
		mountpoint -q "$H/mnt" && { fusermount3 -uz "$H/mnt" 2>/dev/null || umount -l "$H/mnt"; }
		mountpoint -q "$H" && umount -l "$H"
		rm -rf "$H" "$H".*
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

H=$(mktemp -d /tmp/sfs-ct.XXXXXX)
chmod 755 "$H" # as /srv/sfs: other users go through it
t0=$SECONDS
ct_minbase || { say "not ok - the base image (debootstrap, podman import)"; exit 1; }
ct_engine_flags || { say "not ok - podman runs a container: ${ENGINE_ERR:-}"; exit 1; }
say "containers: engine flags this machine needs: ${ENGINE[*]:-(none)}"
ct_buildbase || { say "not ok - the build base (apt-get in a container, podman commit)"; exit 1; }
say "containers: bases $BASE and $BUILD_BASE, $((SECONDS - t0))s"

# ------------------------------------------------------------ the host and the image

ct_readme_lines || { say "not ok - the README's docker lines: $LINES_ERR"; exit 1; }
for l in "${HOST_LINES[@]}"; do
	check "host: $l" ct_run_line "$l"
done
t0=$SECONDS
if ct_build; then pass "podman build (the README's docker build line)"; else fail "podman build" "$(tail -n 5 "$H.build")"; fi
say "containers: image built in $((SECONDS - t0))s"
[ -n "$IMG" ] || exit 1
size=$(pm 30 image inspect -f '{{.Size}}' "$IMG")
say "containers: image size $((size / 1000000)) MB ($size bytes)"
check "the image has labels" bash -c '[ -n "$1" ] && [ "$1" != "map[]" ]' _ \
	"$(pm 30 image inspect -f '{{.Labels}}' "$IMG")"
check "the image has the HEALTHCHECK" bash -c 'grep -q health <<<"$1"' _ \
	"$(pm 30 image inspect -f '{{.HealthCheck}}' "$IMG" 2>&1)"
ct_runtime_files

# ------------------------------------------------------------ the daemon, consumers

# no runtime_dir: the default skips podman's /dev/shm, mounted noexec,
# where the shells of users other than root could not start (t88)
printf 'max_sessions_per_user = 5;\n' >"$H.conf"
ct_daemon || exit 1
check "podman healthcheck run (the image's HEALTHCHECK)" pm 60 healthcheck run "$DAEMON"
if pm 30 exec "$DAEMON" grep -qE '^[^ ]+ /dev/shm [^ ]+ ([^ ]*,)?noexec(,| )' /proc/mounts; then
	check "the default runtime directory skips the container's noexec /dev/shm (the daemon's log)" \
		bash -c 'timeout 30 podman logs "$1" 2>&1 | grep -q "/dev/shm is mounted noexec: not the runtime directory"' _ "$DAEMON"
fi
t0=$(date +%s%N)
out=$(ct_consumer "$README_CONSUMER" 2>&1)
say "containers: the README's consumer line, first round trip $((($(date +%s%N) - t0) / 1000000)) ms"
check "the README's consumer line runs uname -a in a session" grep -q '^Linux ' <<<"$out"

ct_roundtrip "consumer (root)" c-root
ct_roundtrip "consumer (--user 1000)" c-user --user 1000
ct_users
ct_config
ct_crash
ct_upgrade
ct_restarts

say "containers: $PASS passed, $FAIL failed, $((SECONDS - START))s"
[ "$FAIL" -eq 0 ]
