#!/usr/bin/env bash
# t41_install: the command line and the installation. --help/-h and
# -V/--version exit 0; no mountpoint, an unknown option and -c without a
# file exit 2 with nothing mounted; -s is accepted; -d traces FUSE; without
# -f the daemon detaches and logs nothing to stderr; /proc/mounts shows
# "sessionfs MNT fuse.sessionfs" (a user's -o fsname= wins) with
# max_read=524288 (a user's -o max_read= wins, and big reads stay whole);
# the shipped
# conf/sessionfs.conf loads and documents every setting; `mount -t
# fuse.sessionfs none MNT -o config=FILE` and an fstab line work, umount
# ends the daemon, a bad config makes mount fail (these run in a private
# mount namespace where a temporary directory is bound over /usr/local/sbin,
# as mount(8) gives its helpers no PATH); the man pages render with no
# warnings (groff -ww, man --warnings); `meson install` installs the binary,
# the man pages (sessionfs.7 as built, its tree made from the rows) and the
# example configuration.
# shellcheck disable=SC2016
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

unset SESSIONFS_CONFIG
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN_REAL=$(readlink -f "$SFS_BIN")
SETTINGS="shell workspace runtime_dir default_timeout_ms kill_grace_ms max_sessions
max_procs_per_session max_command_bytes max_output_bytes history shell_spin_us cpu_poll_ms default_session env
log_level"

# ---------------------------------------------------------------- helpers

# mount_line MNT: "SOURCE TYPE" of MNT in /proc/self/mounts
mount_line() {
	local dev mp type _rest
	while read -r dev mp type _rest; do
		[ "$mp" = "$1" ] && printf '%s %s\n' "$dev" "$type"
	done </proc/self/mounts
}

# stop_detached LABEL MNT: unmount a mount served by a detached daemon;
# the daemon must then exit by itself (else it is killed, by pid)
stop_detached() { # LABEL MNT UMOUNT-COMMAND...
	local label=$1 mnt=$2 pids p rc
	shift 2
	pids=$(sfs_daemon_pids_at "$mnt")
	assert_true "$label: a daemon serves $(basename "$mnt")" "no process of $BIN_REAL has it as an argument" \
		test -n "$pids"
	timeout -k 2 10 "$@" "$mnt" 2>"$SFS_TMP/umount.err"
	rc=$?
	assert_eq 0 "$rc" "$label: $1 succeeds" || note "$(head -c 200 "$SFS_TMP/umount.err")"
	assert_true "$label: unmounted" "still in /proc/self/mounts" bash -c '! grep -qF " $1 " /proc/self/mounts' _ "$mnt"
	for p in $pids; do
		if sfs_wait_gone "$p" 5; then
			pass "$label: the daemon (pid $p) exits after the unmount"
		else
			fail "$label: the daemon (pid $p) exits after the unmount" "still running 5 s later; killed"
			kill -KILL "$p" 2>/dev/null
		fi
	done
	if sfs_mounted "$mnt"; then timeout 10 umount -l "$mnt" 2>/dev/null; fi
}

# cli LABEL WANT-RC ARG...: "$SFS_BIN" ARG... exits with WANT-RC; its
# stdout and stderr are in $SFS_TMP/cli.out and cli.err
cli() {
	local label=$1 want=$2 rc
	shift 2
	timeout -k 2 10 "$SFS_BIN" "$@" >"$SFS_TMP/cli.out" 2>"$SFS_TMP/cli.err" </dev/null {SFS_OUT}>&- {SFS_ERR}>&-
	rc=$?
	if [ "$rc" = "$want" ]; then pass "$label: exit status $want"; else
		fail "$label: exit status $want" "got $rc; stderr: $(head -c 200 "$SFS_TMP/cli.err" | tr '\n' '|')"
	fi
}

# ns_main: the mount(8) cases; runs inside a private mount namespace
ns_main() {
	local sbin=$SFS_TMP/sbin mnt cfg bad rc fstab
	mkdir -p "$sbin"
	ln -s "$SFS_BIN" "$sbin/sessionfs"
	if ! timeout 10 mount --bind "$sbin" /usr/local/sbin 2>"$SFS_TMP/bind.err"; then
		note "skip mount -t fuse.sessionfs: cannot bind a directory over /usr/local/sbin: $(head -c 200 "$SFS_TMP/bind.err")"
		SFS_DONE=1
		exit 77
	fi
	cfg=$SFS_TMP/mount.conf
	printf '%s\n' '# t41' 'env = { T41_FROM = "mount -t"; };' >"$cfg"
	bad=$SFS_TMP/bad.conf
	printf '%s\n' '# t41 bad' 'max_sessions = 0;' >"$bad"
	mnt=$(mktemp -d "${TMPDIR:-/tmp}/sfs-mnt-$SFS_TEST-t.XXXXXX") || exit 1

	# mount -t fuse.sessionfs none MNT -o config=FILE
	timeout -k 2 20 mount -t fuse.sessionfs none "$mnt" -o "config=$cfg" \
		>"$SFS_TMP/mount.out" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&-
	rc=$?
	assert_eq 0 "$rc" "mount -t fuse.sessionfs none MNT -o config=FILE: exit 0" ||
		note "mount said: $(head -c 300 "$SFS_TMP/mount.out" | tr '\n' '|')"
	for p in $(sfs_daemon_pids_at "$mnt"); do echo "$p" >>"$SFS_NS_PIDFILE"; done
	assert_eq "sessionfs fuse.sessionfs" "$(mount_line "$mnt")" "mount -t: /proc/mounts shows sessionfs MNT fuse.sessionfs"
	assert_eq "mount -t" "$(sfs_run_out "$mnt/sessions/default" 'echo "${T41_FROM-unset}"')" \
		"mount -t: it works, with the settings of config=FILE"
	stop_detached "mount -t" "$mnt" umount

	# an fstab line (a private fstab file given with mount -T)
	fstab=$SFS_TMP/fstab
	printf 'none  %s  fuse.sessionfs  config=%s  0 0\n' "$mnt" "$cfg" >"$fstab"
	timeout -k 2 20 mount -T "$fstab" "$mnt" >"$SFS_TMP/mount.out" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&-
	rc=$?
	assert_eq 0 "$rc" "fstab line: mount MNT exits 0" ||
		note "mount said: $(head -c 300 "$SFS_TMP/mount.out" | tr '\n' '|')"
	for p in $(sfs_daemon_pids_at "$mnt"); do echo "$p" >>"$SFS_NS_PIDFILE"; done
	assert_eq "sessionfs fuse.sessionfs" "$(mount_line "$mnt")" "fstab line: mounted as fuse.sessionfs"
	assert_eq "mount -t" "$(sfs_run_out "$mnt/sessions/default" 'echo "${T41_FROM-unset}"')" "fstab line: it works"
	stop_detached "fstab line" "$mnt" umount

	# a bad configuration: mount fails, the message names FILE:LINE
	timeout -k 2 20 mount -t fuse.sessionfs none "$mnt" -o "config=$bad" \
		>"$SFS_TMP/mount.out" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&-
	rc=$?
	assert_true "mount -t with a bad config=FILE fails" "exit status $rc" test "$rc" -ne 0
	assert_true "mount -t with a bad config: the message has FILE:2:" "it said: $(head -c 300 "$SFS_TMP/mount.out" | tr '\n' '|')" \
		grep -qF "$bad:2: " "$SFS_TMP/mount.out"
	if sfs_mounted "$mnt" || [ -n "$(sfs_daemon_pids_at "$mnt")" ]; then
		fail "mount -t with a bad config: nothing is mounted" "it got mounted"
		for p in $(sfs_daemon_pids_at "$mnt"); do echo "$p" >>"$SFS_NS_PIDFILE"; done
		stop_detached "bad config" "$mnt" umount
	else
		pass "mount -t with a bad config: nothing is mounted"
	fi
	rmdir "$mnt" 2>/dev/null
	timeout 10 umount /usr/local/sbin 2>/dev/null
	SFS_DONE=1
	exit 0
}

if [ "${1:-}" = --mount-ns ]; then
	ns_main
fi

# ---------------------------------------------------------------- command line

VER=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$TOP/meson.build" | head -n 1)
NOMNT=
# the EXIT trap: lib.sh's, after the mount point of the refused starts
# shellcheck disable=SC2317
t41_cleanup() {
	local rc=$?
	if [ -n "$NOMNT" ]; then
		sfs_mounted "$NOMNT" && timeout 10 umount -l "$NOMNT" 2>/dev/null
		rmdir "$NOMNT" 2>/dev/null
	fi
	(exit "$rc")
	sfs_cleanup
}
trap t41_cleanup EXIT
NOMNT=$(mktemp -d "${TMPDIR:-/tmp}/sfs-ref-$SFS_TEST.XXXXXX") || exit 1

for opt in --help -h; do
	cli "$opt" 0 "$opt"
	assert_true "$opt: prints the usage" "stdout: $(head -c 200 "$SFS_TMP/cli.out" | tr '\n' '|')" \
		grep -q '^usage: .*MOUNTPOINT' "$SFS_TMP/cli.out"
	for w in '-c FILE' 'config=FILE' '-f ' '-s ' '-V'; do
		assert_true "$opt: the usage lists $w" "it does not" grep -qF -e "$w" "$SFS_TMP/cli.out"
	done
done
for opt in -V --version; do
	cli "$opt" 0 "$opt"
	assert_true "$opt: prints 'sessionfs version $VER'" "stdout: $(head -c 200 "$SFS_TMP/cli.out" | tr '\n' '|')" \
		grep -qx "sessionfs version $VER" "$SFS_TMP/cli.out"
done
for page in fs/sessionfs.1 fs/sessionfs.7 conf/sessionfs.conf.5; do
	assert_true "$page: .TH names version $VER" "$(grep -m1 '^\.TH' "$TOP/$page")" \
		grep -q "^\.TH .*\"sessionfs $VER\"" "$TOP/$page"
done

cli "no mountpoint" 2
assert_true "no mountpoint: stderr says so" "stderr: $(head -c 200 "$SFS_TMP/cli.err")" grep -qi mountpoint "$SFS_TMP/cli.err"
cli "-f and no mountpoint" 2 -f
cli "-c without a file" 2 -c
cli "an unknown option (-x) with a mountpoint" 2 -f -x "$NOMNT"
cli "an unknown -o option with a mountpoint" 2 -f -o no_such_option_t41 "$NOMNT"
cli "-o config without =FILE" 2 -f -o config "$NOMNT"
if sfs_mounted "$NOMNT" || [ -n "$(sfs_daemon_pids_at "$NOMNT")" ]; then
	fail "bad command lines mount nothing" "$NOMNT got mounted"
	stop_detached "stray" "$NOMNT" fusermount3 -u
else
	pass "bad command lines mount nothing"
fi

# ---------------------------------------------------------------- mounting

# -s is accepted; /proc/mounts shows sessionfs ... fuse.sessionfs
if sfs_start_mount "-s" -s; then
	assert_eq "sessionfs fuse.sessionfs" "$(mount_line "$MNT")" "/proc/mounts shows sessionfs MNT fuse.sessionfs"
	assert_eq "hi" "$(sfs_run_out "$MNT/sessions/default" 'echo hi')" "-s: commands run"
	sfs_check_umount "-s"
fi
# a user's -o fsname= wins; reads are 512 KiB requests unless -o max_read
# says otherwise
if sfs_start_mount "-o fsname=t41src" -o fsname=t41src; then
	assert_eq "t41src fuse.sessionfs" "$(mount_line "$MNT")" "-o fsname=t41src: /proc/mounts shows t41src"
	assert_true "max_read=524288 by default" "$(grep -F " $MNT " /proc/self/mounts)" \
		bash -c 'grep -F " $1 " /proc/self/mounts | grep -qw max_read=524288' _ "$MNT"
	sfs_check_umount "-o fsname=t41src"
fi
if sfs_start_mount "-o max_read=131072" -o max_read=131072; then
	assert_true "-o max_read=131072: in /proc/mounts" "$(grep -F " $MNT " /proc/self/mounts)" \
		bash -c 'grep -F " $1 " /proc/self/mounts | grep -qw max_read=131072' _ "$MNT"
	D=$MNT/sessions/default
	sfs_run "$D" 'head -c 3000000 /dev/zero | tr "\\0" x'
	assert_eq "3000000 $(head -c 3000000 /dev/zero | tr '\0' x | cksum | cut -d' ' -f1)" \
		"$(timeout 10 dd if="$D/stdout" bs=1M 2>/dev/null | cksum | awk '{ print $2, $1 }')" \
		"-o max_read=131072: 1 MiB reads of 3 MB of output are whole"
	sfs_check_umount "-o max_read=131072"
fi
# -d: foreground with FUSE tracing
MNT=$(mktemp -d "${TMPDIR:-/tmp}/sfs-mnt-$SFS_TEST.XXXXXX") || exit 1
"$SFS_BIN" -d "$MNT" >"$SFS_TMP/daemon.log" 2>&1 </dev/null {SFS_OUT}>&- {SFS_ERR}>&- &
SFS_PID=$!
sfs_state
for ((i = 0; i < 50; i++)); do
	timeout 2 mountpoint -q "$MNT" && break
	sleep 0.1
done
assert_true "-d: mounted" "not mounted after 5 s" timeout 2 mountpoint -q "$MNT"
timeout 5 ls "$MNT/sessions" >/dev/null 2>&1
assert_true "-d: stays in the foreground (the started pid serves the mount)" "pid $SFS_PID is gone" sfs_alive "$SFS_PID"
assert_true "-d: FUSE requests are traced on stderr" "no 'opcode:' line in: $(head -c 200 "$SFS_TMP/daemon.log")" \
	grep -q 'opcode: ' "$SFS_TMP/daemon.log"
sfs_check_umount "-d"

# without -f: the daemon detaches once mounted; nothing on stderr
MNT=$(mktemp -d "${TMPDIR:-/tmp}/sfs-mnt-$SFS_TEST.XXXXXX") || exit 1
printf '%s\n' 'env = { T41_FROM = "daemon"; };' >"$SFS_TMP/daemon.conf"
timeout -k 2 20 "$SFS_BIN" -c "$SFS_TMP/daemon.conf" "$MNT" >"$SFS_TMP/bg.out" 2>"$SFS_TMP/bg.err" </dev/null {SFS_OUT}>&- {SFS_ERR}>&-
rc=$?
assert_eq 0 "$rc" "without -f: the command returns 0"
assert_true "without -f: mounted when it returns" "not mounted" timeout 2 mountpoint -q "$MNT"
assert_eq "daemon" "$(sfs_run_out "$MNT/sessions/default" 'echo "${T41_FROM-unset}"')" "without -f: it works"
assert_true "without -f: nothing on stdout or stderr (logs go to syslog)" \
	"stdout: $(head -c 100 "$SFS_TMP/bg.out") stderr: $(head -c 100 "$SFS_TMP/bg.err")" \
	test ! -s "$SFS_TMP/bg.out" -a ! -s "$SFS_TMP/bg.err"
stop_detached "without -f" "$MNT" fusermount3 -u
rmdir "$MNT" 2>/dev/null && MNT=

# the shipped configuration loads, and documents every setting
if sfs_start_mount "-c conf/sessionfs.conf (the shipped file)" -c "$TOP/conf/sessionfs.conf"; then
	assert_eq "ok" "$(sfs_run_out "$MNT/sessions/default" 'echo ok')" "the shipped configuration: commands run"
	sfs_check_umount "the shipped configuration"
fi
for s in $SETTINGS; do
	assert_true "conf/sessionfs.conf shows '$s'" "not there" grep -qE "^#? *$s = " "$TOP/conf/sessionfs.conf"
	assert_true "sessionfs.conf(5) documents '$s'" "not there" grep -qE "^\.BR? $s( |\$)" "$TOP/conf/sessionfs.conf.5"
done

# ---------------------------------------------------------------- mount(8)

if ! command -v unshare >/dev/null || [ ! -d /usr/local/sbin ] ||
	! { [ -x /sbin/mount.fuse3 ] || [ -x /usr/sbin/mount.fuse3 ]; }; then
	note "skip mount -t fuse.sessionfs: needs unshare, /usr/local/sbin and mount.fuse3"
else
	sfs_run_in_ns 'mount(8)' --mount-ns 90
	assert_true "/usr/local/sbin/sessionfs was not created on this machine" "it exists" \
		test ! -e /usr/local/sbin/sessionfs
fi

# ---------------------------------------------------------------- man pages

for page in fs/sessionfs.1 fs/sessionfs.7 conf/sessionfs.conf.5; do
	LC_ALL=C.UTF-8 timeout 20 groff -ww -man -Tutf8 "$TOP/$page" >"$SFS_TMP/man.out" 2>"$SFS_TMP/man.err"
	rc=$?
	assert_eq 0 "$rc" "groff -ww -man $page: exit 0"
	assert_true "groff -ww -man $page: no warnings" "stderr: $(head -c 300 "$SFS_TMP/man.err" | tr '\n' '|')" \
		test ! -s "$SFS_TMP/man.err"
	assert_true "groff $page: it renders text" "output: $(sfs_show "$SFS_TMP/man.out")" \
		test "$(wc -l <"$SFS_TMP/man.out")" -gt 20
	if command -v man >/dev/null; then
		LC_ALL=C.UTF-8 MANWIDTH=80 timeout 20 man --warnings -l "$TOP/$page" >/dev/null 2>"$SFS_TMP/man.err"
		rc=$?
		assert_true "man --warnings -l $page: exit 0, no warnings" "status $rc: $(head -c 300 "$SFS_TMP/man.err" | tr '\n' '|')" \
			test "$rc" -eq 0 -a ! -s "$SFS_TMP/man.err"
	fi
done

# ---------------------------------------------------------------- meson install

BUILD=$(dirname "$SFS_BIN")
if ! command -v meson >/dev/null || [ ! -f "$BUILD/build.ninja" ]; then
	note "skip meson install: $BUILD is not a meson build directory"
else
	DEST=$SFS_TMP/dest
	timeout -k 5 120 meson install -C "$BUILD" --no-rebuild --destdir "$DEST" >"$SFS_TMP/install.log" 2>&1
	rc=$?
	assert_eq 0 "$rc" "meson install --destdir: exit 0" || note "$(tail -n 5 "$SFS_TMP/install.log" | tr '\n' '|')"
	prefix=$(meson introspect --buildoptions "$BUILD" 2>/dev/null | tr ',' '\n' | grep -A3 '"name": "prefix"' |
		sed -n 's/.*"value": "\([^"]*\)".*/\1/p' | head -n 1)
	prefix=${prefix:-/usr/local}
	for f in bin/sessionfs share/man/man1/sessionfs.1 share/man/man7/sessionfs.7 share/man/man5/sessionfs.conf.5 \
		share/doc/sessionfs/sessionfs.conf.example; do
		assert_true "meson install: $prefix/$f" "missing; installed: $(find "$DEST" -type f | sed "s|^$DEST||" | tr '\n' ' ')" \
			test -f "$DEST$prefix/$f"
	done
	page=$DEST$prefix/share/man/man7/sessionfs.7
	if [ -f "$page" ]; then
		# the page built, its tree made from the rows, not the .in
		assert_true "meson install: sessionfs.7 is the page built ($BUILD/sessionfs.7)" \
			"$(cmp "$page" "$BUILD/sessionfs.7" 2>&1)" cmp -s "$page" "$BUILD/sessionfs.7"
		assert_true "meson install: sessionfs.7 has its tree (no @TREE@ line)" "$(grep -n '@TREE@' "$page")" \
			sh -c '! grep -q "^@TREE@" "$1" && grep -q "^  sessions/ *the sessions" "$1"' sh "$page"
	fi
	if [ -x "$DEST$prefix/bin/sessionfs" ]; then
		timeout 10 "$DEST$prefix/bin/sessionfs" --version >"$SFS_TMP/iv.out" 2>&1
		assert_true "the installed binary prints its version" "$(head -c 200 "$SFS_TMP/iv.out")" \
			grep -qx "sessionfs version $VER" "$SFS_TMP/iv.out"
	fi
fi

SFS_DONE=1
exit 0
