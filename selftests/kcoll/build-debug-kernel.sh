#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-debug-kernel.sh [--key] FRAGMENT [PATCH...]
#
# Build (once) the sanitizer kernel of `make check-debug` and print the
# path of its build tree on stdout.  The kernel is Debian's linux-source-6.1
# with each PATCH applied (-p1, in the order given; see
# selftests/kcoll/debug-kernel-patches/), configured with `defconfig
# kvm_guest.config` plus FRAGMENT (selftests/kcoll/debug-kernel.config).
# It is cached outside the work tree, in $KCOLL_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/kcoll), in debug-kernel-SRCVERSION-INPUTHASH/:
# a new linux-source package or any change to FRAGMENT or to the patches
# builds a new tree, anything else reuses the old one.
# Older trees are removed once a new one is complete (each is ~3 GiB).
#
# --key   only print the cache directory's name, build nothing.
#
# Environment: KCOLL_KSRC_TAR (default /usr/src/linux-source-6.1.tar.xz),
# KCOLL_CACHE, KCOLL_JOBS (default nproc), KCOLL_NICE (default 10).
# The build log is kept in the tree as kcoll-build.log.
set -euo pipefail

key_only=0
if [ "${1:-}" = --key ]; then
	key_only=1
	shift
fi
frag=${1:?usage: build-debug-kernel.sh [--key] FRAGMENT [PATCH...]}
shift
patches=("$@")
tar=${KCOLL_KSRC_TAR:-/usr/src/linux-source-6.1.tar.xz}
cache=${KCOLL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcoll}
jobs=${KCOLL_JOBS:-$(nproc)}
prio=${KCOLL_NICE:-10}

die() {
	echo "build-debug-kernel: $*" >&2
	exit 1
}
[ -r "$frag" ] || die "cannot read config fragment $frag"
frag=$(realpath "$frag")
for p in "${patches[@]}"; do
	[ -r "$p" ] || die "cannot read patch $p"
done
[ -r "$tar" ] || die "no kernel source $tar (apt-get install linux-source-6.1)"
for t in bc bison flex make gcc patch; do
	command -v "$t" >/dev/null || die "$t not found (make deps)"
done
[ -e /usr/include/libelf.h ] || die "libelf.h not found (apt-get install libelf-dev)"
[ -e /usr/include/openssl/ssl.h ] || die "openssl headers not found (apt-get install libssl-dev)"

# Source version: the Debian package that owns the tarball; a tarball no
# package owns is identified by its content.
srcver=
if pkg=$(dpkg-query -S "$tar" 2>/dev/null); then
	pkg=${pkg%%:*}
	srcver=$pkg-$(dpkg-query -W -f='${Version}' "$pkg")
fi
[ -n "$srcver" ] || srcver=tar-$(sha256sum "$tar" | cut -c1-16)
# The key covers the fragment and the patches, in order.
cfghash=$(cat "$frag" "${patches[@]}" | sha256sum | cut -c1-16)
name=debug-kernel-$srcver-$cfghash
if [ "$key_only" = 1 ]; then
	echo "$name"
	exit 0
fi

tree=$cache/$name
stamp=$tree/.kcoll-built
mkdir -p "$cache"
# One builder at a time; a second caller waits and then reuses the tree.
exec 9>"$cache/debug-kernel.lock"
flock 9
if [ -e "$stamp" ] && [ -e "$tree/vmlinux" ] && [ -e "$tree/Module.symvers" ]; then
	echo "$tree"
	exit 0
fi

start=$(date +%s)
echo "build-debug-kernel: building $name in $tree (about 12 min on 2 idle cores, far longer on a busy host)" >&2
rm -rf "$tree"
mkdir -p "$tree"
log=$tree/kcoll-build.log
: >"$log"
fail() {
	tail -n 40 "$log" >&2
	die "$* (full log: $log)"
}
tar -xJf "$tar" -C "$tree" --strip-components=1 || die "cannot extract $tar"
for p in "${patches[@]}"; do
	echo "applying $p" >>"$log"
	patch -d "$tree" -p1 --batch --forward <"$p" >>"$log" 2>&1 ||
		fail "$p does not apply to $srcver"
done
kmake() { nice -n "$prio" make -C "$tree" "$@" >>"$log" 2>&1; }

kmake defconfig kvm_guest.config || fail "defconfig kvm_guest.config failed"
(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$frag") >>"$log" 2>&1 ||
	fail "merging $frag failed"
kmake olddefconfig || fail "olddefconfig failed"

# Kconfig drops what a dependency forbids without an error: check that
# every option of the fragment made it into the final .config.
bad=
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) want=$line opt=${line%%=*} ;;
	"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} want="# $opt is not set" ;;
	*) continue ;;
	esac
	have=$(grep -E "^$opt=|^# $opt is not set" "$tree/.config" || true)
	if [ "$want" != "$have" ] && ! { [ -z "$have" ] && [ "${want#\# }" != "$want" ]; }; then
		bad="$bad $opt(want '$want', got '${have:-absent}')"
	fi
done <"$frag"
[ -z "$bad" ] || die "the final .config lost options of $frag:$bad"

# `all` gives vmlinux (booted through PVH), bzImage, the few defconfig
# modules and Module.symvers, which out-of-tree module builds need.
kmake -j"$jobs" all || fail "kernel build failed"
echo "$srcver $cfghash $(date -u +%FT%TZ)" >"$stamp"

for old in "$cache"/debug-kernel-*; do
	[ -d "$old" ] && [ "$old" != "$tree" ] && rm -rf "$old"
done
echo "build-debug-kernel: built $(cat "$tree/include/config/kernel.release") in $(($(date +%s) - start)) s" >&2
echo "$tree"
