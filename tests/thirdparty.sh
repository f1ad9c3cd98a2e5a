# shellcheck shell=bash
# thirdparty.sh: finds the third-party test tools' tarballs (pjdfstest,
# xfstests' fsx, libfuse's example passthrough_hp; see
# ../shared/thirdparty/README.md) and builds each once into a cache
# directory outside the repository's sources. Sourcing it only defines
# functions.
#
#   sfs_tp_src              the tarballs' directory: $SFS_THIRDPARTY, else
#                           ../shared/thirdparty next to this checkout (or
#                           to its worktree's parent), else the absolute
#                           /work/shared/thirdparty (a clone under
#                           mktemp -d has no ../shared)
#   sfs_tp_cache BIN FALLBACK  BIN's build directory/thirdparty when BIN
#                           is in a meson build directory, else FALLBACK
#   sfs_tp_build NAME CACHE  NAME (fsx, pjdfstest, passthrough_hp) built
#                           under CACHE; prints the path of the program
#                           (for pjdfstest, of its source directory, which
#                           holds the program and its tests/). Status 2
#                           when there are no tarballs, 1 when the build
#                           failed (its log's end on stderr).
#   sfs_tp_npm DIR PKG@VER LOG  PKG@VER installed by npm into DIR (once:
#                           kept when DIR/node_modules/PKG is there);
#                           status 2 when npm is missing or cannot reach
#                           its registry, 1 when the install failed (LOG)

sfs_tp_src() {
	local top d
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	for d in "${SFS_THIRDPARTY:-}" "$top/../shared/thirdparty" \
		"$top/../../shared/thirdparty" /work/shared/thirdparty; do
		if [ -n "$d" ] && [ -f "$d/libfuse-3.14.0-example.tar.gz" ]; then
			(cd "$d" && pwd)
			return 0
		fi
	done
	return 1
}

sfs_tp_cache() {
	local dir
	dir=$(dirname "$1")
	if [ -f "$dir/build.ninja" ] && [ -w "$dir" ]; then
		printf '%s\n' "$dir/thirdparty"
	else
		printf '%s\n' "$2"
	fi
}

sfs_tp_npm() {
	local dir=$1 spec=$2 log=$3
	[ -f "$dir/node_modules/${spec%@*}/package.json" ] && return 0
	command -v npm >/dev/null || return 2
	timeout 60 npm ping >"$log" 2>&1 || return 2
	rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
		timeout 180 npm install --prefix "$dir.tmp" --no-audit --no-fund --silent "$spec" >>"$log" 2>&1 &&
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
}

# _sfs_tp_make NAME TARBALL WORKDIR: unpacks TARBALL in WORKDIR and builds
# NAME there (the build lines of the tarballs' README)
_sfs_tp_make() {
	local dir
	tar xzf "$2" -C "$3" || return 1
	dir=$(find "$3" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	case $1 in
	fsx)
		# config.h lacks HAVE_LINUX_FALLOC_H: without it fsx leaves out
		# fallocate, punch hole and zero range altogether
		(cd "$dir" && timeout 300 gcc -O2 -D_GNU_SOURCE -DHAVE_LINUX_FALLOC_H=1 \
			-I. -o fsx fsx.c) ;;
	pjdfstest)
		(cd "$dir" && timeout 600 autoreconf -ifs && timeout 600 ./configure &&
			timeout 600 make pjdfstest) ;;
	passthrough_hp)
		# libfuse's own build defines these on glibc (its config.h):
		# without HAVE_UTIMENSAT passthrough_hp refuses to set the times
		# of a file not open (EOPNOTSUPP: tar, cp -a, git clone, meson)
		# shellcheck disable=SC2046 # pkg-config's words are g++'s arguments
		(cd "$dir/example" && timeout 600 g++ -O2 -std=c++17 -DHAVE_UTIMENSAT \
			-DHAVE_POSIX_FALLOCATE -DHAVE_SETXATTR passthrough_hp.cc \
			$(pkg-config --cflags --libs fuse3) -o passthrough_hp) ;;
	esac
}

sfs_tp_build() {
	local name=$1 cache=$2 src pat prog tb out tmp rc
	case $name in
	fsx) pat='fsx-xfstests-*.tar.gz' prog=fsx ;;
	pjdfstest) pat='pjdfstest-*.tar.gz' prog=pjdfstest ;;
	passthrough_hp) pat='libfuse-*-example.tar.gz' prog=example/passthrough_hp ;;
	*) echo "thirdparty: no tool $name" >&2; return 1 ;;
	esac
	src=$(sfs_tp_src) || return 2
	tb=$(find "$src" -maxdepth 1 -name "$pat" | sort | tail -n 1)
	[ -n "$tb" ] || return 2
	# the tarball's name holds its version, .rN the build lines' (raise N
	# when _sfs_tp_make changes): either new is built afresh
	out=$cache/$(basename "$tb" .tar.gz).r2
	if [ ! -x "$out/$prog" ]; then
		mkdir -p "$cache" || return 1
		# one build at a time (runs at once share the cache); each in a
		# directory of its own, moved into place whole
		{
			flock 9
			if [ ! -x "$out/$prog" ]; then
				tmp=$(mktemp -d "$cache/.build.XXXXXX") || return 1
				_sfs_tp_make "$name" "$tb" "$tmp" >"$tmp.log" 2>&1
				rc=$?
				if [ $rc -eq 0 ]; then
					rm -rf "$out"
					mv "$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)" "$out"
				else
					echo "thirdparty: building $name failed (status $rc):" >&2
					tail -n 20 "$tmp.log" >&2
				fi
				rm -rf "$tmp" "$tmp.log"
			fi
		} 9>"$cache/.lock"
		[ -x "$out/$prog" ] || return 1
	fi
	if [ "$name" = pjdfstest ]; then
		printf '%s\n' "$out"
	else
		printf '%s\n' "$out/$prog"
	fi
}
