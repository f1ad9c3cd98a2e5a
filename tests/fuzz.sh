#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz in their own clang build
# (build-fuzz: ASan, UBSan, coverage in the whole core library) and runs
# each for a bounded time from its checked-in seeds. Exits non-zero when a
# harness crashes or breaks an invariant, and says where the input is.
# Not part of tests/run.sh.
#
# Usage: tests/fuzz.sh [NAME...]   (names: ctl names env export frame conf
#                                  ctxframe keys term state wspec)
#   FUZZ_SECONDS  time per harness (default 30)
#   FUZZ_BUILD    build directory (default build-fuzz)
#   FUZZ_COVERAGE=1  then replays every corpus in a build with clang's
#                 source coverage ($FUZZ_BUILD-cov) and prints how much of
#                 each parser file the corpora reach
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
seconds=${FUZZ_SECONDS:-30}
dir=${FUZZ_BUILD:-build-fuzz}
all=(ctl names env export frame conf ctxframe keys term state wspec)
[ $# -gt 0 ] && all=("$@")

# Whether clang links a fuzzer (its libFuzzer runtime is installed).
has_libfuzzer() {
	local out
	out=$(mktemp)
	echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
		clang -fsanitize=fuzzer -x c - -o "$out" 2>/dev/null
	local rc=$?
	rm -f "$out"
	return $rc
}

# clang and its libFuzzer runtime, besides what every build needs
bash tests/install-deps.sh
if ! command -v clang >/dev/null || ! has_libfuzzer; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "fuzz.sh needs clang and libclang-rt-dev (run as root to install them)" >&2
		exit 1
	fi
	echo "installing clang libclang-rt-dev"
	DEBIAN_FRONTEND=noninteractive apt-get install -y \
		--no-install-recommends clang libclang-rt-dev >/dev/null
fi

# werror off: the project's -Wno-format-truncation is unknown to clang.
# shellcheck disable=SC2054 # the comma is meson's list, not bash's
opts=(-Dfuzz=true -Dwerror=false -Db_lundef=false
	-Db_sanitize=address,undefined -Dbuildtype=debugoptimized
	"-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all")
echo "== build ($dir)"
if [ -f "$dir/build.ninja" ]; then
	meson configure "$dir" "${opts[@]}" >/dev/null
else
	CC=clang meson setup "$dir" "${opts[@]}" >/dev/null
fi
ninja -C "$dir" "${all[@]/#/tests/fuzz/fuzz_}" >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/fuzz/lsan.supp}
mkdir -p "$dir/fuzz-logs" "$dir/fuzz-crashes"
status=0
for name in "${all[@]}"; do
	bin=$dir/tests/fuzz/fuzz_$name
	seeds=tests/fuzz/corpus/$name
	work=$dir/fuzz-corpus/$name # new inputs go here, not into the tree
	log=$dir/fuzz-logs/$name.log
	# the screen: a REP libvterm loops on is a hang, a finding
	timeout=10
	[ "$name" = term ] && timeout=2
	args=(-max_total_time="$seconds" -timeout="$timeout" -print_final_stats=1
		-artifact_prefix="$dir/fuzz-crashes/$name-")
	[ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
	mkdir -p "$work"
	echo "== fuzz_$name (${seconds}s)"
	rc=0
	"$bin" "${args[@]}" "$work" "$seeds" >"$log" 2>&1 || rc=$?
	# the last status line: "#N DONE cov: C ft: F corp: ..."
	grep -E '^#[0-9]+' "$log" | tail -n 1 || true
	grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' \
		"$log" | tr '\n' ' ' || true
	echo
	if [ $rc -ne 0 ]; then
		status=1
		echo "fuzz_$name FAILED (exit $rc); log: $log"
		grep -E 'ERROR: |invariant broken|SUMMARY: ' "$log" | head -n 5 || true
		input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" |
			tail -n 1)
		if [ -n "$input" ]; then
			echo "crashing input: $input"
			echo "reproduce: $bin $input"
		fi
	fi
done
[ "${FUZZ_COVERAGE:-0}" = 1 ] || exit $status

cov=$dir-cov
copts=(-Dfuzz=true -Dwerror=false -Db_lundef=false -Dbuildtype=debug
	"-Dc_args=-fsanitize=fuzzer-no-link -fprofile-instr-generate -fcoverage-mapping"
	-Dc_link_args=-fprofile-instr-generate)
echo "== coverage build ($cov)"
# meson runs what it compiles to check the compiler: no profile from that
export LLVM_PROFILE_FILE=/dev/null
if [ -f "$cov/build.ninja" ]; then
	meson configure "$cov" "${copts[@]}" >/dev/null
else
	CC=clang meson setup "$cov" "${copts[@]}" >/dev/null
fi
ninja -C "$cov" "${all[@]/#/tests/fuzz/fuzz_}" >/dev/null
rm -rf "$cov/profiles"
mkdir -p "$cov/profiles"
objects=()
for name in "${all[@]}"; do
	bin=$cov/tests/fuzz/fuzz_$name
	LLVM_PROFILE_FILE=$cov/profiles/$name.profraw "$bin" -runs=0 \
		"$dir/fuzz-corpus/$name" "tests/fuzz/corpus/$name" >/dev/null 2>&1 ||
		true
	objects+=(-object "$bin")
done
llvm-profdata merge -sparse -o "$cov/profiles/all.profdata" \
	"$cov"/profiles/*.profraw
echo "== coverage by the corpora (lines, branches)"
llvm-cov report "${objects[@]:1}" -instr-profile="$cov/profiles/all.profdata" |
	awk '$1 ~ /^(sessions\/[a-z]+|conf)\/(ctl|names|envmap|shell|load|ctxproto|keys|term|vtskip|vtwide|vtsize|wspec)\.c$/ {
		printf "%-20s lines %7s  branches %7s\n", $1, $10, $13 }'
# shell.c is mostly spawning: its parser alone
if [[ " ${all[*]} " == *" frame "* ]]; then
	missed=$(llvm-cov show -instr-profile="$cov/profiles/all.profdata" \
		"$cov/tests/fuzz/fuzz_frame" -name=shell_parse_frame |
		grep -cE '^ *[0-9]+\| +0\|' || true)
	echo "shell_parse_frame    lines never run: $missed"
fi
exit $status
