#!/usr/bin/env bash
# t40_config: the configuration file (conf/sessionfs.conf, sessionfs.conf(5)).
# Refusals: an unknown setting, wrong types, values out of range, relative
# paths, a bad log_level, a syntax error, a duplicate, a missing file, bad
# env entries: each exits 2 with "FILE:LINE: message" on stderr and nothing
# mounted. Precedence: -c or -o config= beats $SESSIONFS_CONFIG, which beats
# /etc/sessionfs.conf (tested in a private mount namespace with an overlay
# on /etc, so the real /etc is never written), else built-in defaults.
# Limits: max_sessions (the default session counts), max_command_bytes
# (E2BIG, nothing runs), max_output_bytes (cut, the run goes on, truncated
# 1), max_procs_per_session, history, default_timeout_ms, kill_grace_ms,
# shell_spin_us (its effect is t31's),
# env, default_session, shell, workspace, runtime_dir, log_level; a
# refusal is one line of the daemon's stderr naming the session.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

unset SESSIONFS_CONFIG
REF=             # the mount point of the starts that must be refused

# ---------------------------------------------------------------- helpers

# mkcfg NAME LINE...: write the lines to $SFS_TMP/NAME.conf; path in CFG
mkcfg() {
	CFG=$SFS_TMP/$1.conf
	shift
	printf '%s\n' "$@" >"$CFG"
}

# unmount_stray MNT: unmount MNT if something got mounted there, and kill a
# daemon still serving it (by pid)
unmount_stray() {
	local p
	if sfs_mounted "$1"; then
		timeout 10 fusermount3 -u "$1" 2>/dev/null || timeout 10 umount -l "$1" 2>/dev/null
	fi
	for p in $(sfs_daemon_pids_at "$1"); do
		sfs_wait_gone "$p" 3 || kill -KILL "$p" 2>/dev/null
	done
}

# the EXIT trap: lib.sh's, after the refused-start mount point is cleaned
# shellcheck disable=SC2317
t40_cleanup() {
	local rc=$?
	if [ -n "$REF" ]; then
		unmount_stray "$REF"
		rmdir "$REF" 2>/dev/null
	fi
	(exit "$rc")
	sfs_cleanup
}
trap t40_cleanup EXIT

REF=$(mktemp -d "${TMPDIR:-/tmp}/sfs-ref-$SFS_TEST.XXXXXX") || {
	fail setup "mktemp failed"
	exit 1
}

# refused LABEL PREFIX WORD ARG...: "$SFS_BIN" ARG... REF (environment as
# in sfs_start_mount) exits with 2, a line of its stderr starts with PREFIX
# ("FILE:LINE: ") and holds WORD, and nothing got mounted on REF
refused() {
	local label=$1 prefix=$2 word=$3 rc pid i err=$SFS_TMP/refused.err line ok=0 shown
	shift 3
	env -u SESSIONFS_CONFIG "${SFS_DAEMON_ENV[@]}" "$SFS_BIN" "$@" "$REF" \
		>/dev/null 2>"$err" </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
	pid=$!
	# it should end at once; if it mounts instead, stop it without waiting
	for ((i = 0; i < 100; i++)); do
		sfs_alive "$pid" || break
		sfs_mounted "$REF" && break
		sleep 0.1
	done
	if sfs_alive "$pid"; then
		if sfs_mounted "$REF"; then rc="none: it mounted $REF and kept running"; else
			rc="none: still running after 10 s"
		fi
		unmount_stray "$REF"
		sfs_wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	else
		wait "$pid"
		rc=$?
	fi
	case $rc in
	2) pass "$label: exit status 2" ;;
	*) fail "$label: exit status 2" "exit status $rc" ;;
	esac
	while IFS= read -r line; do
		if [[ $line == "$prefix"* && $line == *"$word"* ]]; then ok=1; fi
	done <"$err"
	shown="'${prefix#"$SFS_TMP"/}...$word'"
	if [ "$ok" = 1 ]; then
		pass "$label: stderr says $shown"
	else
		fail "$label: stderr says $shown" "stderr: $(head -c 300 "$err" | tr '\n' '|')"
	fi
	if sfs_mounted "$REF" || [ -n "$(sfs_daemon_pids_at "$REF")" ]; then
		fail "$label: nothing is mounted" "$REF got mounted (or a daemon serves it)"
		unmount_stray "$REF"
	else
		pass "$label: nothing is mounted"
	fi
}

# log_count FIXED...: lines of the daemon's log holding every FIXED string
log_count() {
	local n=0 line w hit
	while IFS= read -r line; do
		hit=1
		for w in "$@"; do [[ $line == *"$w"* ]] || hit=0; done
		n=$((n + hit))
	done <"$SFS_TMP/daemon.log"
	echo "$n"
}

# numbered_runs DIR: the numbered entries of DIR/runs, sorted, on one line
numbered_runs() { timeout 5 ls "$1/runs" 2>/dev/null | grep -x '[0-9]*' | sort -n | tr '\n' ' '; }

# etc_main: the /etc/sessionfs.conf cases; runs inside a private mount
# namespace (unshare -m) where /etc is an overlay whose upper layer is in
# $SFS_TMP, so the file is created there and never in the real /etc
etc_main() {
	local ov=$SFS_TMP/ovl
	mkdir -p "$ov/upper" "$ov/work"
	if ! timeout 10 mount -t overlay overlay \
		-o "lowerdir=/etc,upperdir=$ov/upper,workdir=$ov/work" /etc 2>"$SFS_TMP/ovl.err"; then
		note "skip /etc/sessionfs.conf cases: cannot mount an overlay on /etc in a private namespace: $(head -c 200 "$SFS_TMP/ovl.err")"
		SFS_DONE=1
		exit 77
	fi
	local E=/etc/sessionfs.conf
	mkcfg env-e 'env = { T40_WHICH = "SESSIONFS_CONFIG"; };'
	local envcfg=$CFG
	mkcfg c-e 'env = { T40_WHICH = "-c"; };'
	local ccfg=$CFG

	printf '%s\n' '# /etc/sessionfs.conf of t40' 'env = { T40_WHICH = "/etc"; };' >"$E"
	SFS_DAEMON_ENV=()
	if sfs_start_mount "/etc only"; then
		assert_eq "/etc" "$(sfs_run_out "$MNT/sessions/default" 'echo "${T40_WHICH-unset}"')" \
			"/etc only: /etc/sessionfs.conf applies without -c and \$SESSIONFS_CONFIG"
		sfs_check_umount "/etc only"
	fi

	printf '%s\n' '# /etc/sessionfs.conf of t40' 'history = 0;' >"$E"
	refused "bad /etc" "$E:2: " history -f
	SFS_DAEMON_ENV=(SESSIONFS_CONFIG=)
	refused "bad /etc, empty \$SESSIONFS_CONFIG" "$E:2: " history -f
	SFS_DAEMON_ENV=(SESSIONFS_CONFIG="$envcfg")
	if sfs_start_mount "bad /etc, \$SESSIONFS_CONFIG set"; then
		assert_eq "SESSIONFS_CONFIG" "$(sfs_run_out "$MNT/sessions/default" 'echo "${T40_WHICH-unset}"')" \
			"\$SESSIONFS_CONFIG beats /etc/sessionfs.conf (which is not read)"
		sfs_check_umount "bad /etc, \$SESSIONFS_CONFIG set"
	fi
	SFS_DAEMON_ENV=()
	if sfs_start_mount "bad /etc, -c" -c "$ccfg"; then
		assert_eq "-c" "$(sfs_run_out "$MNT/sessions/default" 'echo "${T40_WHICH-unset}"')" \
			"-c beats /etc/sessionfs.conf (which is not read)"
		sfs_check_umount "bad /etc, -c"
	fi
	timeout 10 umount /etc || note "cannot unmount the overlay on /etc (it goes with the namespace)"
	SFS_DONE=1
	exit 0
}

if [ "${1:-}" = --etc-ns ]; then
	etc_main
fi

# ---------------------------------------------------------------- refusals

# 1. each bad setting: exit 2, FILE:LINE: message, nothing mounted
mkcfg unknown '# a comment' 'history = 5;' 'bogus_setting = 1;'
refused "unknown setting" "$CFG:3: " bogus_setting -f -c "$CFG"
mkcfg unknown-group '# a comment' '' '' 'limits = { history = 3; };'
refused "unknown group" "$CFG:4: " limits -f -c "$CFG"
mkcfg str-for-int '# a comment' '' 'max_sessions = "10";'
refused "a string for an integer" "$CFG:3: " max_sessions -f -c "$CFG"
mkcfg float-for-int 'history = 1.5;'
refused "a float for an integer" "$CFG:1: " history -f -c "$CFG"
mkcfg int-for-bool 'history = 5;' 'default_session = 1;'
refused "an integer for a boolean" "$CFG:2: " default_session -f -c "$CFG"
mkcfg str-for-bool 'default_session = "yes";'
refused "a string for a boolean" "$CFG:1: " default_session -f -c "$CFG"
mkcfg int-for-str '# shell' 'history = 5;' '' 'shell = 5;'
refused "an integer for a string" "$CFG:4: " shell -f -c "$CFG"
mkcfg history0 '# h' 'history = 0;'
refused "history = 0" "$CFG:2: " history -f -c "$CFG"
mkcfg history-big 'history = 100001;'
refused "history = 100001" "$CFG:1: " history -f -c "$CFG"
mkcfg history-wrap 'history = 4294967298;'
refused "history = 4294967298 (2^32 + 2)" "$CFG:1: " history -f -c "$CFG"
mkcfg typo 'kill_grace_ms = 2000;' 'kill_grace_ms_typo = 1;'
refused "a misspelt setting" "$CFG:2: " kill_grace_ms_typo -f -c "$CFG"
mkcfg grace-big '' 'kill_grace_ms = 9999999;'
refused "kill_grace_ms = 9999999" "$CFG:2: " kill_grace_ms -f -c "$CFG"
mkcfg sessions0 'history = 3;' 'max_sessions = 0;'
refused "max_sessions = 0" "$CFG:2: " max_sessions -f -c "$CFG"
mkcfg procs-neg 'max_procs_per_session = -1;'
refused "max_procs_per_session = -1" "$CFG:1: " max_procs_per_session -f -c "$CFG"
mkcfg spin-big 'shell_spin_us = 1000001;'
refused "shell_spin_us = 1000001" "$CFG:1: " shell_spin_us -f -c "$CFG"
mkcfg spin-neg '# s' 'shell_spin_us = -1;'
refused "shell_spin_us = -1" "$CFG:2: " shell_spin_us -f -c "$CFG"
mkcfg poll-big 'cpu_poll_ms = 60001;'
refused "cpu_poll_ms = 60001" "$CFG:1: " cpu_poll_ms -f -c "$CFG"
mkcfg poll-neg '# p' 'cpu_poll_ms = -1;'
refused "cpu_poll_ms = -1" "$CFG:2: " cpu_poll_ms -f -c "$CFG"
mkcfg cmd0 'max_command_bytes = 0;'
refused "max_command_bytes = 0" "$CFG:1: " max_command_bytes -f -c "$CFG"
mkcfg timeout-big 'default_timeout_ms = 31536000001L;'
refused "default_timeout_ms = 31536000001L (a year + 1 ms)" "$CFG:1: " default_timeout_ms -f -c "$CFG"
mkcfg timeout-wrap 'default_timeout_ms = 34359738369;'
refused "default_timeout_ms = 34359738369 (8 * 2^32 + 1, over a year)" "$CFG:1: " default_timeout_ms -f -c "$CFG"
mkcfg ws-rel '# w' 'workspace = "relative/dir";'
refused "a relative workspace" "$CFG:2: " workspace -f -c "$CFG"
mkcfg rt-rel 'runtime_dir = "run";'
refused "a relative runtime_dir" "$CFG:1: " runtime_dir -f -c "$CFG"
mkcfg shell-rel 'shell = "bash";'
refused "a relative shell" "$CFG:1: " shell -f -c "$CFG"
mkcfg level-bad 'history = 5;' 'log_level = "loud";'
refused "log_level = \"loud\"" "$CFG:2: " log_level -f -c "$CFG"
mkcfg level-int 'log_level = 3;'
refused "log_level = 3" "$CFG:1: " log_level -f -c "$CFG"
mkcfg syntax '# s' 'history = 5;' 'max_sessions = = 3;' 'history = 6;'
refused "a syntax error" "$CFG:3: " "" -f -c "$CFG"
mkcfg unclosed 'env = {' '  A = "x";' '' 'history = 5;'
refused "an unclosed group" "$CFG:" "" -f -c "$CFG"
mkcfg dup 'history = 5;' '' 'history = 6;'
refused "a duplicate setting" "$CFG:3: " "" -f -c "$CFG"
mkcfg env-name 'env = {' '  GOOD = "x";' '  BAD-NAME = "y";' '};'
refused "env: a bad variable name" "$CFG:3: " BAD-NAME -f -c "$CFG"
mkcfg env-int 'env = {' '  N = 5;' '};'
refused "env: an integer value" "$CFG:2: " N -f -c "$CFG"
mkcfg env-notgroup '# e' 'env = "A=1";'
refused "env: not a group" "$CFG:2: " env -f -c "$CFG"

# 2. a missing or unreadable file: exit 2, the file named, nothing mounted
missing=$SFS_TMP/no-such.conf
refused "a missing file (-c)" "$missing" "" -f -c "$missing"
refused "a directory as the file (-c)" "$SFS_TMP" "" -f -c "$SFS_TMP"
assert_true "a directory as the file: the message does not say it does not exist" \
	"stderr: $(head -c 200 "$SFS_TMP/refused.err")" bash -c '! grep -q "No such file" "$1"' _ "$SFS_TMP/refused.err"
note "(a missing file has no line: the check is only that stderr starts with its name)"

# 3. the same through -o config=, $SESSIONFS_CONFIG, and without -f
mkcfg bad-o '# o' '' 'history = 0;'
refused "-o config=BAD" "$CFG:3: " history -f -o "config=$CFG"
refused "-o default_permissions,config=BAD" "$CFG:3: " history -f -o "default_permissions,config=$CFG"
SFS_DAEMON_ENV=(SESSIONFS_CONFIG="$CFG")
refused "\$SESSIONFS_CONFIG=BAD" "$CFG:3: " history -f
SFS_DAEMON_ENV=(SESSIONFS_CONFIG="$missing")
refused "\$SESSIONFS_CONFIG=MISSING" "$missing" "" -f
SFS_DAEMON_ENV=()
refused "a bad file without -f (daemon mode)" "$CFG:3: " history -c "$CFG"
mkcfg good 'history = 5;'
SFS_DAEMON_ENV=(SESSIONFS_CONFIG="$CFG")
refused "-c MISSING beats a good \$SESSIONFS_CONFIG" "$missing" "" -f -c "$missing"
SFS_DAEMON_ENV=()

# ---------------------------------------------------------------- precedence

mkcfg envvar 'env = { T40_WHICH = "SESSIONFS_CONFIG"; };'
ENVCFG=$CFG
mkcfg c '# -c' 'history = 100000;' 'kill_grace_ms = 600000;' 'max_sessions = 1000000;' \
	'default_timeout_ms = 31536000000L;' 'env = { T40_WHICH = "-c"; };'
CCFG=$CFG
mkcfg o 'env = { T40_WHICH = "-o config"; };'
OCFG=$CFG
mkcfg bad '# bad' 'history = 0;'
BADCFG=$CFG

# 4. -c beats $SESSIONFS_CONFIG (a bad one, so it must not even be read);
# also the largest values of the ranges are accepted
SFS_DAEMON_ENV=(SESSIONFS_CONFIG="$BADCFG")
if sfs_start_mount "-c with a bad \$SESSIONFS_CONFIG" -c "$CCFG"; then
	D=$MNT/sessions/default
	assert_eq "-c" "$(sfs_run_out "$D" 'echo "${T40_WHICH-unset}"')" "-c beats \$SESSIONFS_CONFIG"
	assert_file_eq "$D/env/T40_WHICH" "-c"$'\n' "the env group's variable is in the session's env/"
	note "(history = 100000, kill_grace_ms = 600000, max_sessions = 1000000, default_timeout_ms = 31536000000L accepted)"
	sfs_check_umount "-c with a bad \$SESSIONFS_CONFIG"
fi
# 5. -o config= beats $SESSIONFS_CONFIG
if sfs_start_mount "-o config= with a bad \$SESSIONFS_CONFIG" -o "config=$OCFG"; then
	assert_eq "-o config" "$(sfs_run_out "$MNT/sessions/default" 'echo "${T40_WHICH-unset}"')" \
		"-o config=FILE beats \$SESSIONFS_CONFIG"
	sfs_check_umount "-o config= with a bad \$SESSIONFS_CONFIG"
fi
# 6. $SESSIONFS_CONFIG alone
SFS_DAEMON_ENV=(SESSIONFS_CONFIG="$ENVCFG")
if sfs_start_mount "\$SESSIONFS_CONFIG"; then
	assert_eq "SESSIONFS_CONFIG" "$(sfs_run_out "$MNT/sessions/default" 'echo "${T40_WHICH-unset}"')" \
		"\$SESSIONFS_CONFIG is read without -c"
	sfs_check_umount "\$SESSIONFS_CONFIG"
fi
# 7. nothing: built-in defaults (only if this machine has no /etc/sessionfs.conf)
for mode in unset empty; do
	if [ -e /etc/sessionfs.conf ]; then
		note "skip the built-in defaults case: this machine has /etc/sessionfs.conf"
		break
	fi
	# (with XDG_RUNTIME_DIR on a directory that is not a tmpfs: the spool
	# goes to "the first tmpfs among $XDG_RUNTIME_DIR, /run and /dev/shm")
	XDG=$SFS_TMP/xdg-$mode
	mkdir -p "$XDG"
	if [ "$mode" = unset ]; then SFS_DAEMON_ENV=(XDG_RUNTIME_DIR="$XDG"); else
		SFS_DAEMON_ENV=(SESSIONFS_CONFIG= XDG_RUNTIME_DIR="$XDG")
	fi
	if sfs_start_mount "no file, \$SESSIONFS_CONFIG $mode"; then
		D=$MNT/sessions/default
		assert_true "defaults ($mode): sessions/default exists" "it does not" timeout 5 test -d "$D"
		assert_eq "unset" "$(sfs_run_out "$D" 'echo "${T40_WHICH-unset}"')" "defaults ($mode): no variable from a file"
		assert_true "defaults ($mode): info lines in the log (log_level info)" "none in: $(head -c 200 "$SFS_TMP/daemon.log")" \
			grep -q ': info: ' "$SFS_TMP/daemon.log"
		if [ "$mode" = unset ] && [ "$(stat -f -c %T "$XDG")" != tmpfs ]; then
			assert_true "defaults ($mode): runtime_dir is a tmpfs, not \$XDG_RUNTIME_DIR on $(stat -f -c %T "$XDG")" \
				"the spool is in \$XDG_RUNTIME_DIR: $(find "$XDG" -maxdepth 2 | tr '\n' ' ')" test ! -e "$XDG/sessionfs"
		fi
		sfs_check_umount "no file, \$SESSIONFS_CONFIG $mode"
	fi
done
SFS_DAEMON_ENV=()

# 8. /etc/sessionfs.conf, in a private mount namespace with /etc overlaid
if [ -e /etc/sessionfs.conf ]; then
	note "skip the /etc/sessionfs.conf cases: this machine has one"
elif ! command -v unshare >/dev/null; then
	note "skip the /etc/sessionfs.conf cases: no unshare"
else
	sfs_run_in_ns /etc/sessionfs.conf --etc-ns 60
	assert_true "the real /etc/sessionfs.conf was not created" "it exists" test ! -e /etc/sessionfs.conf
fi

# 9. values past 2^32 that are in range are kept as they are
mkcfg large '# in range, past 2^32' 'default_timeout_ms = 4294967297;' 'max_output_bytes = 4294967297;'
if sfs_start_mount "large in-range values" -c "$CFG"; then
	D=$MNT/sessions/default
	assert_run_ok "default_timeout_ms = 4294967297: a run" "$D" 'sleep 0.3; echo ok' 10
	assert_file_eq "$D/exit" $'0\n' "default_timeout_ms = 4294967297 (49.7 days): sleep 0.3 does not time out"
	assert_file_match "$D/status" '^timeout_ms 4294967297$' "default_timeout_ms = 4294967297: status says timeout_ms 4294967297"
	check "echo 10000 > sessions/default/timeout (the session's own timeout)" sfs_write "$D/timeout" $'10000\n'
	assert_run_ok "max_output_bytes = 4294967297: a run" "$D" 'echo ok' 10
	assert_file_eq "$D/stdout" $'ok\n' "max_output_bytes = 4294967297: 3 bytes of output are kept"
	assert_file_match "$D/status" '^truncated 0$' "max_output_bytes = 4294967297: status says truncated 0"
	sfs_check_umount "large in-range values"
fi

# 10. shell as a list: the path, then arguments given before -c
mkcfg shell-list 'shell = [ "/bin/bash", "-O", "extglob" ];'
if sfs_start_mount "shell as a list" -c "$CFG"; then
	D=$MNT/sessions/default
	assert_run_ok "shell list: a run" "$D" 'shopt -q extglob && echo on' 10
	assert_file_eq "$D/stdout" $'on\n' "shell list: bash got -O extglob"
	sfs_check_umount "shell as a list"
fi
mkcfg shell-rel 'shell = [ "bash", "-O", "extglob" ];'
refused "shell list with a relative path" "$CFG:1: " shell -f -c "$CFG"

# ---------------------------------------------------------------- limits (A)

WS=$SFS_TMP/ws
RT=$SFS_TMP/rt
mkdir -p "$WS" "$RT"
echo here >"$WS/in-workspace.txt"
printf '%s\n' '#!/bin/bash' 'export T40_SHELL=wrapped' 'exec /bin/bash "$@"' >"$SFS_TMP/shell"
chmod +x "$SFS_TMP/shell"
mkcfg limits \
	'# limits of t40' \
	"shell = \"$SFS_TMP/shell\";" \
	"workspace = \"$WS\";" \
	"runtime_dir = \"$RT\";" \
	'max_sessions = 4;' \
	'max_procs_per_session = 2;' \
	'max_command_bytes = 1000;' \
	'max_output_bytes = 1000;' \
	'history = 3;' \
	'default_session = true;' \
	'env = {' \
	'  T40_VAR = "from config";' \
	'  T40_RAW = "$HOME `id` x";' \
	'};'
if sfs_start_mount "limits" -c "$CFG"; then
	D=$MNT/sessions/default
	A=$MNT/sessions/a
	B=$MNT/sessions/b
	C=$MNT/sessions/c

	# default_session = true
	assert_true "default_session: sessions/default exists" "ls sessions: $(timeout 5 ls "$MNT/sessions" | tr '\n' ' ')" \
		timeout 5 test -d "$D"
	assert_errno EBUSY "default_session: rmdir sessions/default is EBUSY" rmdir "$D"
	assert_eq "from config" "$(sfs_run_out "$D" 'echo "$T40_VAR"')" "the default session runs commands; env: T40_VAR seen by a run"
	assert_eq '$HOME `id` x' "$(sfs_run_out "$D" 'printf "%s\n" "$T40_RAW"')" "env: a value is taken as it is, never evaluated"
	assert_eq "from config" "$(sfs_run_out "$D" 'bash -c "echo \"\$T40_VAR\""')" "env: exported to the run's children"
	assert_eq "wrapped" "$(sfs_run_out "$D" 'echo "${T40_SHELL-unset}"')" "shell: the configured shell runs the session"
	assert_eq "$WS" "$(sfs_run_out "$D" 'pwd')" "workspace: the cwd of the session"
	assert_file_eq "$MNT/files/in-workspace.txt" $'here\n' "workspace: the root of files/"
	assert_true "runtime_dir: the spool directory is RT/sessionfs/PID" \
		"$RT holds: $(find "$RT" -maxdepth 2 | tr '\n' ' ')" test -d "$RT/sessionfs/$SFS_SERVER"

	# max_sessions = 4, the default session counts
	check "max_sessions: mkdir sessions/a" sfs_mkdir "$A"
	check "max_sessions: mkdir sessions/b" sfs_mkdir "$B"
	check "max_sessions: mkdir sessions/c" sfs_mkdir "$C"
	assert_errno ENOSPC "max_sessions: a 5th session (default + a b c + d) is ENOSPC" mkdir "$MNT/sessions/d"
	assert_true "max_sessions: sessions/d does not exist" "it does" timeout 5 test ! -e "$MNT/sessions/d"
	assert_errno ENOSPC "max_sessions: opening sessions/clone to write is ENOSPC" bash -c 'cat <>"$1"' _ "$MNT/sessions/clone"
	assert_eq 1 "$(log_count 'sessions/d' 'No space left')" "log: the ENOSPC mkdir is one line naming sessions/d"

	# max_command_bytes = 1000: at the limit runs; one byte more is E2BIG, nothing runs
	mk=$SFS_TMP/ran-at-limit
	cmd="touch '$mk' #"
	pad=$((1000 - ${#cmd} - 1))
	printf -v padding '%*s' "$pad" ''
	cmd=$cmd${padding// /x}
	sfs_run "$A" "$cmd" 10
	rc=$?
	assert_eq 0 "$rc" "max_command_bytes: a command of exactly 1000 bytes runs (write status)"
	assert_true "max_command_bytes: the 1000-byte command ran" "$mk missing" test -e "$mk"
	before=$(numbered_runs "$A")
	latest0=$(timeout 5 readlink "$A/runs/latest")
	mk=$SFS_TMP/ran-over-limit
	cmd="touch '$mk' #"
	pad=$((1001 - ${#cmd} - 1))
	printf -v padding '%*s' "$pad" ''
	cmd=$cmd${padding// /x}
	assert_eq 1001 "$(($(printf '%s\n' "$cmd" | wc -c)))" "max_command_bytes: (the over-limit command is 1001 bytes)"
	n0=$(log_count 'session a' max_command_bytes)
	sfs_run "$A" "$cmd" 10
	rc=$?
	assert_true "max_command_bytes: 1001 bytes fail with E2BIG" "status $rc: $(head -c 200 "$SFS_TMP/write.err")" \
		grep -qF "$(sfs_errtext E2BIG)" "$SFS_TMP/write.err"
	sleep 0.3
	assert_true "max_command_bytes: nothing ran (no marker file)" "$mk exists" test ! -e "$mk"
	assert_eq "$before" "$(numbered_runs "$A")" "max_command_bytes: runs/ did not grow"
	assert_eq "$latest0" "$(timeout 5 readlink "$A/runs/latest")" "max_command_bytes: runs/latest unchanged"
	assert_file_match "$A/error" 'max_command_bytes' "max_command_bytes: a line in the session's error file"
	assert_eq 1 "$(($(log_count 'session a' max_command_bytes) - n0))" "log: the E2BIG is one line naming session a"
	big=$SFS_TMP/big.cmd
	{
		printf "touch '%s'\n" "$mk"
		head -c 300000 /dev/zero | tr '\0' '#'
		echo
	} >"$big"
	sfs_write_file "$A/cmd" "$big" 10
	rc=$?
	assert_true "max_command_bytes: a 300 KB command fails with E2BIG" "status $rc: $(head -c 200 "$SFS_TMP/write.err")" \
		grep -qF "$(sfs_errtext E2BIG)" "$SFS_TMP/write.err"
	sleep 0.3
	assert_true "max_command_bytes: the 300 KB command did not run" "$mk exists" test ! -e "$mk"
	assert_eq "$latest0" "$(timeout 5 readlink "$A/runs/latest")" "max_command_bytes: runs/latest still unchanged"
	assert_eq "ok" "$(sfs_run_out "$A" 'echo ok')" "max_command_bytes: the session runs the next command"

	# max_output_bytes = 1000: cut at the limit, the run goes on
	mk=$SFS_TMP/output-went-on
	t0=$(now_ms)
	assert_run_ok "max_output_bytes: a run printing 1 MB to stdout and stderr" "$D" \
		"head -c 1000000 /dev/zero | tr '\\0' a; head -c 1000000 /dev/zero | tr '\\0' b >&2; touch '$mk'; echo after" 20
	note "(the 1 MB run took $(($(now_ms) - t0)) ms)"
	assert_true "max_output_bytes: the run went on past the limit" "$mk missing" test -e "$mk"
	assert_file_eq "$D/exit" $'0\n' "max_output_bytes: exit 0"
	assert_file_same "$D/stdout" <(head -c 1000 /dev/zero | tr '\0' a) "max_output_bytes: stdout is its first 1000 bytes"
	assert_file_same "$D/stderr" <(head -c 1000 /dev/zero | tr '\0' b) "max_output_bytes: stderr is its first 1000 bytes"
	assert_eq 1000 "$(timeout 5 stat -c %s "$D/stdout")" "max_output_bytes: stat size of stdout is 1000"
	assert_file_match "$D/status" '^truncated 1$' "max_output_bytes: status says truncated 1"
	assert_file_match "$D/result.json" '"stdoutTruncated":true' "max_output_bytes: result.json stdoutTruncated true"
	assert_file_match "$D/result.json" '"stderrTruncated":true' "max_output_bytes: result.json stderrTruncated true"
	assert_run_ok "max_output_bytes: a small run" "$D" 'echo small'
	assert_file_match "$D/status" '^truncated 0$' "max_output_bytes: the next small run says truncated 0"

	# max_procs_per_session = 2
	check "max_procs_per_session: mkdir procs/p1" sfs_mkdir "$B/procs/p1"
	check "max_procs_per_session: p1 runs exit 0" sfs_write "$B/procs/p1/cmd" $'exit 0\n' 10
	check "max_procs_per_session: mkdir procs/p2" sfs_mkdir "$B/procs/p2"
	n0=$(log_count 'session b' max_procs)
	assert_errno ENOSPC "max_procs_per_session: mkdir procs/p3 is ENOSPC" mkdir "$B/procs/p3"
	assert_eq 1 "$(($(log_count 'session b' max_procs) - n0))" "log: the procs ENOSPC is one line naming session b"
	assert_file_match "$B/error" 'max_procs_per_session' "max_procs_per_session: a line in the session's error file"
	check "max_procs_per_session: another session has its own count (mkdir sessions/a/procs/q1)" sfs_mkdir "$A/procs/q1"
	check "max_procs_per_session: rmdir procs/p1" timeout 10 rmdir "$B/procs/p1"
	check "max_procs_per_session: then mkdir procs/p3 works" sfs_mkdir "$B/procs/p3"

	# history = 3
	for i in 1 2 3 4 5; do
		sfs_run "$C" "echo r$i" 10 || fail "history: run $i" "the write failed"
	done
	assert_eq "3 4 5 " "$(numbered_runs "$C")" "history: after 5 runs only runs 3 4 5 are kept"
	assert_eq 5 "$(timeout 5 readlink "$C/runs/latest")" "history: runs/latest -> 5"
	assert_file_eq "$C/runs/3/stdout" $'r3\n' "history: runs/3 is still readable"
	assert_true "history: runs/1 is gone" "it still exists" timeout 5 test ! -e "$C/runs/1"
	check "history: mkdir runs/named" sfs_mkdir "$C/runs/named"
	check "history: the named run runs" sfs_write "$C/runs/named/cmd" $'echo named\n' 10
	for i in 6 7 8 9; do sfs_run "$C" "echo r$i" 10; done
	assert_eq "7 8 9 " "$(numbered_runs "$C")" "history: then only the last 3 numbered runs"
	assert_file_eq "$C/runs/named/stdout" $'named\n' "history: a named run stays"

	# a session freed makes room again
	check "max_sessions: rmdir sessions/c" timeout 10 rmdir "$C"
	check "max_sessions: then mkdir sessions/d works" sfs_mkdir "$MNT/sessions/d"

	# logs: each refusal is one line of the daemon's stderr naming the session
	assert_errno EINVAL "log: mkdir 'sessions/bad name' is EINVAL" mkdir "$MNT/sessions/bad name"
	assert_eq 1 "$(log_count 'bad name')" "log: the bad mkdir is one line naming 'bad name'"
	assert_errno EINVAL "log: echo bogus > ctl is EINVAL" bash -c 'echo bogus >"$1"' _ "$A/ctl"
	assert_eq 1 "$(log_count bogus)" "log: the bad ctl line is one line"
	assert_eq 1 "$(log_count 'session a' bogus)" "log: that line names session a"
	sfs_check_umount "limits"
fi

# ---------------------------------------------------------------- limits (B)

mkcfg timing \
	'default_session = false;' \
	'max_sessions = 2;' \
	'default_timeout_ms = 500;' \
	'kill_grace_ms = 300;' \
	'log_level = "error";'
if sfs_start_mount "timing" -c "$CFG"; then
	X=$MNT/sessions/x
	assert_true "default_session = false: no sessions/default" "ls sessions: $(timeout 5 ls "$MNT/sessions" | tr '\n' ' ')" \
		timeout 5 test ! -e "$MNT/sessions/default"
	check "mkdir sessions/x" sfs_mkdir "$X"
	check "mkdir sessions/y" sfs_mkdir "$MNT/sessions/y"
	assert_errno ENOSPC "max_sessions = 2 without a default session: a 3rd is ENOSPC" mkdir "$MNT/sessions/z"

	# default_timeout_ms = 500
	t0=$(now_ms)
	sfs_run "$X" "sleep 5.$$" 10
	el=$(($(now_ms) - t0))
	assert_file_eq "$X/exit" $'124\n' "default_timeout_ms: sleep 5 ends with 124"
	assert_file_match "$X/status" '^state timed-out$' "default_timeout_ms: state timed-out"
	assert_file_match "$X/status" '^timeout_ms 500$' "default_timeout_ms: status says timeout_ms 500"
	assert_true "default_timeout_ms: it ended after about 0.5 s" "after $el ms" test "$el" -ge 400 -a "$el" -lt 2000
	note "(sleep 5 with default_timeout_ms 500 ended after $el ms)"
	assert_eq "fast" "$(sfs_run_out "$X" 'echo fast')" "default_timeout_ms: a quick run is not affected"

	# kill_grace_ms = 300: TERM ignored, KILL 0.3 s later
	t0=$(now_ms)
	sfs_run "$X" "trap '' TERM; sleep 6.$$" 10
	el=$(($(now_ms) - t0))
	assert_file_eq "$X/exit" $'124\n' "kill_grace_ms: a TERM-ignoring run still ends with 124"
	assert_true "kill_grace_ms: it ended after 0.5 + 0.3 s (not 0.5 + 2 s)" "after $el ms" test "$el" -ge 700 -a "$el" -lt 2000
	note "(the TERM-ignoring run ended after $el ms)"
	assert_true "kill_grace_ms: no sleep is left" "still running" test -z "$(sfs_pids_with_arg "6.$$")"
	sfs_run "$X" 'trap - TERM' 10

	# kill_grace_ms with procs: echo kill > ctl, TERM ignored
	check "kill_grace_ms: mkdir procs/stubborn" sfs_mkdir "$X/procs/stubborn"
	sfs_marker "7.$$"
	check "kill_grace_ms: start a TERM-ignoring process" sfs_write "$X/procs/stubborn/cmd" "trap '' TERM; sleep 7.$$"$'\n' 10
	sfs_wait_pids_with_arg "7.$$" 5 >/dev/null
	t0=$(now_ms)
	check "kill_grace_ms: echo kill > procs/stubborn/ctl" sfs_write "$X/procs/stubborn/ctl" $'kill\n' 10
	el=
	for ((i = 0; i < 50; i++)); do
		if timeout 5 grep -qx 'state killed' "$X/procs/stubborn/status"; then
			el=$(($(now_ms) - t0))
			break
		fi
		sleep 0.05
	done
	assert_true "kill_grace_ms: the process is KILLed about 0.3 s after kill" "after ${el:-more than 2500} ms" \
		test -n "$el" -a "${el:-0}" -ge 200 -a "${el:-0}" -lt 1800
	note "(the TERM-ignoring process was killed $el ms after the ctl write)"
	assert_file_match "$X/procs/stubborn/status" '^signal 9$' "kill_grace_ms: the process ended by signal 9"

	# log_level = "error": refusals (warnings) and info lines are not logged
	assert_errno EINVAL "log_level error: echo bogus > ctl is EINVAL" bash -c 'echo bogus >"$1"' _ "$X/ctl"
	assert_eq 0 "$(log_count bogus)" "log_level error: the refusal (a warning) is not logged"
	assert_eq 0 "$(log_count ': info: ')" "log_level error: no info lines"
	assert_file_match "$X/error" 'bogus' "log_level error: the session's error file still has it"
	sfs_check_umount "timing"
fi

SFS_DONE=1
exit 0
