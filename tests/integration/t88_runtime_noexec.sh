#!/usr/bin/env bash
# t88_runtime_noexec: a runtime directory on a filesystem mounted noexec
# (podman's /dev/shm; issue 25). The shell of a session of another user
# (allow_other) runs the exec-only copy of bash kept there, so in such a
# directory it could never start (status 127, before the fix). Set in the
# config, with allow_other: the daemon refuses to start, with one line
# that names the directory, and leaves no mount. Without allow_other (no
# such shell) it starts there and root's runs work. Chosen by default
# ($XDG_RUNTIME_DIR a noexec tmpfs): the daemon says it skips it, spools
# elsewhere, and another user's session runs. A directory that allows
# exec, with allow_other: another user's session runs (the control).
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

sfs_need setpriv
[ "$(id -u)" -eq 0 ] || { pass "skip: not root (setpriv, mount)"; SFS_DONE=1; exit 0; }

RT=$SFS_TMP/rt # a tmpfs of the test's own, remounted noexec
sfs_tmpfs "$RT" 64m
timeout 10 mount -o remount,noexec "$RT" || { pass "skip: cannot remount a tmpfs noexec"; SFS_DONE=1; exit 0; }
assert_true "the test's tmpfs is mounted noexec" "$(findmnt -no OPTIONS "$RT")" \
	bash -c 'findmnt -no OPTIONS "$1" | tr , "\n" | grep -qx noexec' _ "$RT"
chmod 711 "$SFS_TMP" # another user's shell goes through it to its bash
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups -- env -C /)

# other_runs LABEL: uid 65534 makes a session and runs in it: its output
# and exit 0
other_runs() {
	local s=$MNT/sessions/t88-other out
	out=$(timeout -k 2 30 "${NOBODY[@]}" bash -c 'mkdir "$1" && echo "echo \"ran as \$(id -u)\"" >"$1/cmd" &&
		cat "$1/stdout" "$1/exit"' _ "$s" 2>&1)
	assert_eq $'ran as 65534\n0' "$out" "$1: a session of uid 65534 runs (its shell starts)" ||
		note "error: $(timeout 5 cat "$s/error" 2>&1 | head -c 300)"
	timeout -k 2 30 "${NOBODY[@]}" rmdir "$s"
}

# ---------------------------------------------------------------- set in the config, allow_other

CFG=$SFS_TMP/noexec.conf
printf 'runtime_dir = "%s";\n' "$RT" >"$CFG"
M=$(mktemp -d "${TMPDIR:-/tmp}/sfs-mnt-$SFS_TEST.XXXXXX")
timeout -k 5 60 "$SFS_BIN" -f -c "$CFG" -o allow_other "$M" >"$SFS_TMP/refused.log" 2>&1 </dev/null \
	{SFS_OUT}>&- {SFS_ERR}>&-
rc=$?
mountpoint -q "$M" && { fusermount3 -uz "$M" 2>/dev/null || umount -l "$M"; }
assert_eq 1 "$rc" "noexec runtime_dir, allow_other: the daemon refuses to start (status 1)"
assert_file_match "$SFS_TMP/refused.log" "error: runtime_dir $RT is mounted noexec: .* set runtime_dir to a directory whose filesystem allows exec" \
	"noexec runtime_dir, allow_other: one line names the directory and what to do"
assert_eq 1 "$(grep -c 'mounted noexec' "$SFS_TMP/refused.log")" "noexec runtime_dir, allow_other: said once"
assert_true "noexec runtime_dir, allow_other: no mount is left" "$M is mounted" \
	bash -c '! mountpoint -q "$1"' _ "$M"
assert_eq "" "$(ls -A "$RT/sessionfs" 2>&1)" "noexec runtime_dir, allow_other: its spool directory is removed"
rmdir "$M"

# ---------------------------------------------------------------- set in the config, no allow_other

if sfs_start_mount "noexec runtime_dir, no allow_other" -c "$CFG"; then
	assert_eq "root-ran" "$(sfs_run_out "$MNT/sessions/default" 'echo root-ran')" \
		"noexec runtime_dir, no allow_other: root's runs work (no exec-only copy is run)"
	assert_true "noexec runtime_dir, no allow_other: the spool is there" "$(ls -A "$RT/sessionfs" 2>&1)" \
		test -d "$RT/sessionfs/$SFS_SERVER"
	sfs_check_umount "noexec runtime_dir, no allow_other"
fi

# ---------------------------------------------------------------- the default: XDG_RUNTIME_DIR noexec

SFS_DAEMON_ENV=(XDG_RUNTIME_DIR="$RT")
if sfs_start_mount "default runtime_dir, XDG_RUNTIME_DIR noexec, allow_other" -o allow_other; then
	assert_file_match "$SFS_TMP/daemon.log" "notice: $RT is mounted noexec: not the runtime directory" \
		"default: the log says the noexec XDG_RUNTIME_DIR is skipped"
	used=$(sed -n 's/.* spool budget: [0-9]* bytes in //p' "$SFS_TMP/daemon.log" | head -n 1)
	assert_true "default: the log names the directory used, not in $RT" "it is '$used'" \
		test -n "$used" -a "${used#"$RT"/}" = "$used"
	assert_true "default: the directory used allows exec" "$(findmnt -no OPTIONS -T "$used" 2>&1)" \
		bash -c '! findmnt -no OPTIONS -T "$1" | tr , "\n" | grep -qx noexec' _ "$used"
	other_runs "default"
	sfs_check_umount "default runtime_dir"
fi
SFS_DAEMON_ENV=()

# ---------------------------------------------------------------- the control: a directory that allows exec

EX=$SFS_TMP/rt-exec
mkdir -m 755 "$EX"
printf 'runtime_dir = "%s";\n' "$EX" >"$SFS_TMP/exec.conf"
if sfs_start_mount "runtime_dir allowing exec, allow_other" -c "$SFS_TMP/exec.conf" -o allow_other; then
	other_runs "exec runtime_dir"
	sfs_check_umount "runtime_dir allowing exec"
fi

SFS_DONE=1
exit 0
