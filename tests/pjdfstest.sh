#!/usr/bin/env bash
# pjdfstest.sh: the POSIX conformance suite pjdfstest (8,798 assertions
# in 238 files) run in files/ of a fresh sessionfs, its failures
# compared with the ones expected (tests/pjdfstest.expected, each with
# its reason).
#
# Usage: tests/pjdfstest.sh [--backing] [--record] [PART...]
#   (as root; the daemon is $SESSIONFS_BIN, default build-test/sessionfs)
#   --backing  run in the backing directory itself, without sessionfs:
#              shows what the suite gives on the real file system (there
#              every assertion passes, and the expected list is not used)
#   --record   print the failures found in the expected list's format
#              (reasons left as "?"), instead of comparing
#   PART       only these parts of the suite: directories or files under
#              its tests/ (chmod, open/06.t); default all
#
# The daemon runs as root with -o allow_other (the suite acts as other
# users: uids 65534 and 65533; root needs no user_allow_other in
# /etc/fuse.conf), its workspace a directory of this run; the suite runs
# from files/pjd with `prove -r` under a timeout of $SFS_PJD_TIMEOUT s
# (default 900; it takes about 3.5 minutes on this project's 2-vCPU VM).
# Fails on any failed assertion not in the expected list, on a test file
# that did not run to its plan, and on a timeout; prints the expected
# failures that now pass (the list should then lose them). pjdfstest is
# built from ../shared/thirdparty (tests/thirdparty.sh) once into the
# daemon's build directory; without the tarballs this says so and exits 0.
# shellcheck source=integration/lib.sh
. "$(dirname "$0")/integration/lib.sh"
# shellcheck source=thirdparty.sh
. "$(dirname "$0")/thirdparty.sh"

here=$(cd "$(dirname "$0")" && pwd)
EXPECTED=${SFS_PJD_EXPECTED:-$here/pjdfstest.expected}
backing=0 record=0 parts=()
for a in "$@"; do
	case $a in
	--backing) backing=1 ;;
	--record) record=1 ;;
	-*) echo "usage: $0 [--backing] [--record] [PART...]" >&2; SFS_DONE=1; exit 2 ;;
	*) parts+=("$a") ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "pjdfstest.sh: needs root (the suite changes owners and acts as other users)" >&2
	SFS_DONE=1
	exit 1
fi

rc=0
cache=$(sfs_tp_cache "$(readlink -f "$SFS_BIN")" "$SFS_TMP/tp")
PJD=$(sfs_tp_build pjdfstest "$cache" 2>"$SFS_TMP/build.err") || rc=$?
if [ $rc -eq 2 ]; then
	echo "pjdfstest.sh: no third-party tarballs (\$SFS_THIRDPARTY, ../shared/thirdparty, /work/shared/thirdparty): skipped"
	SFS_DONE=1
	exit 0
fi
if [ $rc -ne 0 ]; then
	fail "pjdfstest builds" "$(tail -n 5 "$SFS_TMP/build.err" | tr '\n' ' ')"
	SFS_DONE=1
	exit 1
fi

WS=$SFS_TMP/ws
mkdir -p "$WS" && chmod 755 "$WS"
printf 'workspace = "%s";\n' "$WS" >"$SFS_TMP/pjd.conf"
export SESSIONFS_CONFIG=$SFS_TMP/pjd.conf HOME=$WS
if [ $backing -eq 1 ]; then
	DIR=$WS/pjd
	note "in the backing directory $DIR ($(stat -f -c %T "$WS"))"
else
	sfs_start_mount "allow_other" -o allow_other || { SFS_DONE=1; exit 1; }
	DIR=$MNT/files/pjd
fi
check "mkdir pjd" mkdir -m 755 "$DIR"

# ------------------------------------------------------------- the run
targets=()
for a in "${parts[@]}"; do targets+=("$PJD/tests/$a"); done
[ ${#targets[@]} -gt 0 ] || targets=("$PJD/tests")
# the test files run, relative to tests/ (the expected list's names)
find "${targets[@]}" -name '*.t' | sed 's|.*/tests/||' | sort -u >"$SFS_TMP/files"
ntests=$(wc -l <"$SFS_TMP/files")
t0=$(now_ms)
(cd "$DIR" && timeout -k 10 "${SFS_PJD_TIMEOUT:-900}" prove -r "${targets[@]}") \
	>"$SFS_TMP/prove.out" 2>&1 </dev/null
prc=$?
note "prove -r of $ntests files took $((($(now_ms) - t0) / 1000)) s (status $prc)"
if [ $prc -eq 124 ] || [ $prc -eq 137 ]; then
	fail "the suite ends in time" "prove was still running after ${SFS_PJD_TIMEOUT:-900} s"
fi
ran=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1 \2/p' "$SFS_TMP/prove.out")
assert_eq "$ntests" "${ran%% *}" "prove ran every test file (${ran#* } assertions)"

# prove's summary as lines "FILE N" (a failed assertion) and "FILE bad
# WHY" (a file that died or missed its plan); FILE relative to tests/
awk '
/^Test Summary Report/ { on = 1; next }
!on { next }
/^Files=/ { exit }
/^[^ ]/ {
	f = $1; sub(/.*\/tests\//, "", f); inlist = 0
	if (match($0, /Wstat: [0-9]+/) && substr($0, RSTART + 7, RLENGTH - 7) != "0")
		print f, "bad", "wait status " substr($0, RSTART + 7, RLENGTH - 7)
	next
}
/^  Failed tests:/ { inlist = 1; sub(/^  Failed tests:/, "") }
/^  [A-Z]/ && !/^  Failed tests:/ {
	inlist = 0
	if ($0 ~ /Parse errors|Non-zero/) { w = $0; sub(/^ +/, "", w); print f, "bad", w }
	next
}
inlist {
	n = split($0, parts, /[ ,]+/)
	for (i = 1; i <= n; i++) {
		if (parts[i] == "") continue
		if (split(parts[i], r, "-") == 2) { for (j = r[1]; j <= r[2]; j++) print f, j }
		else print f, parts[i]
	}
}' "$SFS_TMP/prove.out" | sort -u >"$SFS_TMP/failed"

# ranges FILE-SORTED "FILE N" lines: one line per file, "FILE 3-4,7"
ranges() {
	sort -k1,1 -k2,2n "$1" | awk '
	function flush() { if (f != "") { s = s (s == "" ? "" : ",") a (b > a ? "-" b : ""); } }
	$1 != f { if (f != "") { flush(); print f, s }; f = $1; a = b = $2; s = ""; next }
	$2 == b + 1 { b = $2; next }
	{ flush(); a = b = $2 }
	END { if (f != "") { flush(); print f, s } }'
}

grep ' bad ' "$SFS_TMP/failed" >"$SFS_TMP/bad"
grep -v ' bad ' "$SFS_TMP/failed" >"$SFS_TMP/asserts"
nfailed=$(wc -l <"$SFS_TMP/asserts")
if [ $record -eq 1 ]; then
	ranges "$SFS_TMP/asserts" | sed 's/$/  ?/'
	cat "$SFS_TMP/bad"
	SFS_DONE=1
	exit 0
fi
assert_eq "" "$(cat "$SFS_TMP/bad")" "every test file ran to its plan"
if [ $backing -eq 1 ]; then
	assert_eq "" "$(ranges "$SFS_TMP/asserts" | head -c 2000)" \
		"every assertion passes in the backing directory"
	SFS_DONE=1
	exit 0
fi

# the expected list: "FILE LIST WHY", LIST of N and N-M by commas; only
# the files that ran
awk 'NR == FNR { ran[$1] = 1; next }
!/^#/ && NF >= 2 && ($1 in ran) {
	n = split($2, parts, ",")
	for (i = 1; i <= n; i++) {
		if (split(parts[i], r, "-") == 2) { for (j = r[1]; j <= r[2]; j++) print $1, j }
		else print $1, parts[i]
	}
}' "$SFS_TMP/files" "$EXPECTED" | sort -u >"$SFS_TMP/expected"
comm -23 "$SFS_TMP/asserts" "$SFS_TMP/expected" >"$SFS_TMP/unexpected"
comm -13 "$SFS_TMP/asserts" "$SFS_TMP/expected" >"$SFS_TMP/fixed"
note "$nfailed assertions failed, $(wc -l <"$SFS_TMP/expected") expected to"
if [ -s "$SFS_TMP/unexpected" ]; then
	fail "no failure outside tests/pjdfstest.expected" \
		"$(wc -l <"$SFS_TMP/unexpected") unexpected: $(ranges "$SFS_TMP/unexpected" | paste -sd ';' - | head -c 1500)"
	# what those assertions tried, for the first few files
	for f in $(ranges "$SFS_TMP/unexpected" | awk '{ print $1 }' | head -n 5); do
		note "$f: $(cd "$DIR" && timeout 120 sh "$PJD/tests/$f" 2>&1 | grep -m 3 '^not ok' | tr '\n' ' ')"
	done
else
	pass "no failure outside tests/pjdfstest.expected"
fi
if [ -s "$SFS_TMP/fixed" ]; then
	note "expected failures that now pass (remove them from tests/pjdfstest.expected):"
	ranges "$SFS_TMP/fixed" | sed 's/^/#   /'
fi
sfs_check_umount "after the suite"
SFS_DONE=1
exit 0
