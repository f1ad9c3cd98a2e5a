#!/usr/bin/env bash
# Installs the Debian packages that building and testing sessionfs need,
# when they are missing. Needs root for the install; says what is missing
# otherwise. Used by tests/run.sh and examples/quickstart.sh. bash-builtins
# has the headers the shell driver (a bash loadable builtin) is built with.
set -euo pipefail

packages=(gcc clang libc6-dev libfuse3-dev fuse3 libconfig-dev check meson
	ninja-build pkg-config curl psmisc bash-builtins)
# t51 runs the mount inside a bwrap sandbox; t52 parses the container examples' yaml
packages+=(bubblewrap python3-yaml)
# t76 runs the tools of files/' extended attributes, ACLs and inode flags
packages+=(attr acl libcap2-bin rsync e2fsprogs)
# the terminal's screen (tty/) is libvterm's; t60 drives vim, less and top
# in it, and bench/tty compares with util-linux's script
packages+=(libvterm-dev vim less procps bsdutils)
# the examples are run too: Python and Node.js (unless already on PATH)
command -v python3 >/dev/null || packages+=(python3)
command -v node >/dev/null || packages+=(nodejs)
# the benchmarks' baselines: pexpect (idle_latency's client on a pty) and
# tmux (unless Python already has the one and PATH the other)
python3 -c 'import pexpect' 2>/dev/null || packages+=(python3-pexpect)
command -v tmux >/dev/null || packages+=(tmux)
# code contexts (contexts/NAME): the tests plot with matplotlib and show a
# pandas DataFrame in Debian's python3; the benchmark's baseline is a
# Jupyter kernel (ipykernel through jupyter_client)
packages+=(python3-matplotlib python3-pandas python3-ipykernel
	python3-jupyter-client)
# the third-party suites (tests/thirdparty.sh): pjdfstest is built with
# autoconf and automake and run by perl's prove; passthrough_hp is C++;
# bench/files clones with git
packages+=(autoconf automake g++ perl git)
# t79 waits for a port that OpenBSD's nc -l listens on
packages+=(netcat-openbsd)
# tests/containers.sh: podman (runc: crun refuses hybrid cgroups) and a
# Debian base image made by debootstrap
packages+=(podman runc debootstrap)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "missing packages: ${missing[*]} (run as root to install them)" >&2
	exit 1
fi
echo "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
	{ apt-get update -qq &&
		apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
