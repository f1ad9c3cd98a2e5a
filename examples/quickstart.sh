#!/usr/bin/env bash
# Installs what is missing, builds sessionfs, mounts it at ./mnt (in the
# repository) and shows a short session. It stays mounted afterwards:
#   fusermount3 -u mnt        unmounts it and ends every session.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash tests/install-deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null

mnt=$top/mnt
mkdir -p "$mnt"
if ! mountpoint -q "$mnt"; then
	build/sessionfs "$mnt"
fi
for _ in $(seq 50); do
	[ -d "$mnt/sessions" ] && break
	sleep 0.1
done

s=$mnt/sessions/demo
show() { printf '$ %s\n' "$*"; eval "$@"; }
[ -d "$s" ] && rmdir "$s"
show "mkdir $s"
show "echo 'cd /tmp && export GREETING=hi' > $s/cmd"
show "echo 'echo \"\$GREETING from \$PWD\"; echo oops >&2; exit 3' > $s/cmd"
show "cat $s/stdout"
show "cat $s/stderr"
show "cat $s/exit"
show "cat $s/cwd"
show "echo 42 > $s/env/ANSWER; cat $s/env/ANSWER"
show "cat $s/status"
show "rmdir $s"
echo
echo "sessionfs is mounted at $mnt (see $mnt/README); unmount with:"
echo "  fusermount3 -u $mnt"
