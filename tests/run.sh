#!/usr/bin/env bash
# The one test command: installs what is missing (when run as root on
# Debian), builds, runs the Check unit tests and the integration tests,
# then pjdfstest in files/ (tests/pjdfstest.sh: its failures against the
# expected ones), then the integration tests again in an
# AddressSanitizer+UBSan build.
#
# Usage: tests/run.sh            (from anywhere; builds under ./build-*)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# build DIR [meson options...]: configures DIR once (warnings are errors
# here, not in the project's defaults), then builds it.
build() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" --werror "$@" >/dev/null
	fi
	# quiet, but a failure shows what the compiler said
	ninja -C "$dir" >"$dir/ninja.log" 2>&1 ||
		{ tail -n 40 "$dir/ninja.log"; return 1; }
}

bash tests/install-deps.sh
echo "== code limits (file and function sizes, the family tables)"
bash tests/limits.sh
[ -e /dev/fuse ] || modprobe fuse 2>/dev/null || true

echo "== build (gcc debugoptimized, for the tests)"
build build-test
echo "== builds with warnings as errors: gcc release, clang debug and release"
build build-release -Dbuildtype=release
CC=clang build build-clang -Dbuildtype=debug
CC=clang build build-clang-release -Dbuildtype=release
echo "== unit tests"
meson test -C build-test --suite unit --print-errorlogs
echo "== integration tests"
SESSIONFS_BIN=$top/build-test/sessionfs bash tests/integration/run.sh
echo "== pjdfstest in files/ (POSIX conformance; the expected failures are in tests/pjdfstest.expected)"
SESSIONFS_BIN=$top/build-test/sessionfs bash tests/pjdfstest.sh
echo "== examples (shell, Python, Node.js)"
bash tests/examples.sh "$top/build-test/sessionfs"
if command -v podman >/dev/null; then
	echo "== containers (podman: the image built from examples/container, its daemon and consumers)"
	bash tests/containers.sh
fi

echo "== build with AddressSanitizer and UndefinedBehaviorSanitizer"
build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	-Dbuildtype=debug
echo "== unit and integration tests under ASan+UBSan"
# (ASan's quarantine keeps freed memory: t08's RSS bound is for plain builds)
export SFS_ASAN=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=/tmp/sessionfs-asan
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=/tmp/sessionfs-ubsan
rm -f /tmp/sessionfs-asan.* /tmp/sessionfs-ubsan.*
status=0
meson test -C build-asan --suite unit --print-errorlogs || status=$?
SESSIONFS_BIN=$top/build-asan/sessionfs bash tests/integration/run.sh || status=$?
for f in /tmp/sessionfs-asan.* /tmp/sessionfs-ubsan.*; do
	[ -e "$f" ] || continue
	echo "== sanitizer report $f"
	cat "$f"
	status=1
done
exit $status
