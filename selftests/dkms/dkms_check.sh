#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms_check.sh: install kcoll with Debian's dkms the way a cluster
# operator does, against every kernel series whose headers are installed
# (Debian 6.1 and 6.12), and take it out again.
#
#   add -> build -> install -> kcoll.ko under /lib/modules/<rel>/updates/dkms
#   -> remove -> kcoll.ko gone
#
# The tree is copied to a temporary source directory (the files git tracks,
# or everything but build/ outside a checkout) and registered with
# `dkms add --sourcetree`, so /usr/src is not touched.  Everything the run
# creates (dkms tree entry, module files, an empty updates/dkms directory,
# a MOK signing key dkms generates when there was none) is removed again,
# also on failure or Ctrl-C.  A kcoll that dkms already manages is never
# touched: the check refuses to run instead.
#
# Usage: dkms_check.sh [KERNEL_RELEASE...]   (default: every installed
# /lib/modules/<rel>/build of the 6.1 and 6.12 series)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/dkms/kernels.sh"
name=kcoll
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
mok_dir=/var/lib/dkms
tmp=
made_dirs=()
had_mok=0

die() { echo "dkms-check: $*" >&2; exit 1; }

[ -n "$ver" ] || die "no PACKAGE_VERSION in $top/dkms.conf"
[ "$(id -u)" = 0 ] || die "needs root (dkms installs into /lib/modules)"
command -v dkms >/dev/null || die "dkms is not installed (make deps installs it)"

if [ $# -gt 0 ]; then
	kernels=("$@")
else
	mapfile -t kernels < <(kc_dkms_kernels)
fi
[ ${#kernels[@]} -gt 0 ] || die "no 6.1 or 6.12 kernel headers under /lib/modules (make deps installs them)"

if dkms status -m "$name" 2>/dev/null | grep -q .; then
	die "dkms already manages $name ($(dkms status -m "$name" | head -n1)); not touching it"
fi

[ -e "$mok_dir/mok.key" ] && had_mok=1

cleanup() {
	local rc=$?

	dkms remove -m "$name" -v "$ver" --all >/dev/null 2>&1 || true
	rm -rf "/var/lib/dkms/$name"
	for d in "${made_dirs[@]}"; do
		rmdir --ignore-fail-on-non-empty "$d" 2>/dev/null || true
	done
	if [ $had_mok = 0 ]; then
		rm -f "$mok_dir/mok.key" "$mok_dir/mok.pub"
	fi
	[ -n "$tmp" ] && rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

tmp=$(mktemp -d /tmp/kcoll-dkms.XXXXXX)
src="$tmp/$name-$ver"
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		(cd "$top" && xargs -0 cp --parents -t "$src" 2>/dev/null || true)
else
	tar -C "$top" --exclude=./build -cf - . | tar -C "$src" -xf -
fi
[ -f "$src/dkms.conf" ] && [ -f "$src/Kbuild" ] || die "copy of the tree in $src is incomplete"

for rel in "${kernels[@]}"; do
	d=/lib/modules/$rel/updates/dkms
	[ -d "$d" ] || made_dirs+=("$d" "/lib/modules/$rel/updates")
done

echo "# dkms add $name/$ver (source tree $src)"
dkms add -m "$name" -v "$ver" --sourcetree "$tmp"
fail=0
for rel in "${kernels[@]}"; do
	echo "# $rel: dkms build"
	if ! dkms build -m "$name" -v "$ver" -k "$rel"; then
		cat "/var/lib/dkms/$name/$ver/build/make.log" 2>/dev/null | tail -n 30 >&2
		echo "not ok: $rel build" >&2
		fail=1
		continue
	fi
	echo "# $rel: dkms install"
	dkms install -m "$name" -v "$ver" -k "$rel" --force
	ko=$(ls "/lib/modules/$rel/updates/dkms/$name.ko"* 2>/dev/null | head -n1 || true)
	if [ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$rel "; then
		echo "ok: $rel installed $ko ($(modinfo -F version "$ko"))"
	else
		echo "not ok: $rel: no $name.ko for $rel under updates/dkms" >&2
		fail=1
	fi
done
dkms status -m "$name"
echo "# dkms remove $name/$ver --all"
dkms remove -m "$name" -v "$ver" --all
for rel in "${kernels[@]}"; do
	if ls "/lib/modules/$rel/updates/dkms/$name.ko"* >/dev/null 2>&1; then
		echo "not ok: $rel: $name.ko still installed after dkms remove" >&2
		fail=1
	else
		echo "ok: $rel: $name.ko removed"
	fi
done
[ $fail = 0 ] && echo "dkms-check: passed for ${kernels[*]}"
exit $fail
