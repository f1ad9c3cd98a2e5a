# common.sh: process and mount checks shared by the test runners
# (integration/run.sh, examples.sh) and the integration tests' lib.sh.
# Sourcing it only defines functions.

# sfs_alive PID: true if PID exists and is not a zombie
sfs_alive() {
	local s
	{ s=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}

# sfs_mounted PATH: PATH is a mount point (from /proc/self/mounts, so that
# a dead or hung FUSE mount counts too, without touching it)
sfs_mounted() {
	local _dev mp _rest
	while read -r _dev mp _rest; do
		[ "$mp" = "$1" ] && return 0
	done </proc/self/mounts
	return 1
}

# sfs_default_bin: the daemon of the checkout these tests are in: the build
# tests/run.sh makes (build-test), else the quickstart's (build)
sfs_default_bin() {
	local top
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -x "$top/build-test/sessionfs" ]; then
		echo "$top/build-test/sessionfs"
	else
		echo "$top/build/sessionfs"
	fi
}
