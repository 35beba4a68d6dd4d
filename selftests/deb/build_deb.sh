#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build_deb.sh: `make deb`.  Copies the tree (the files git tracks or
# would track; everything but build/ outside a checkout) to
# $DEB_OUT/kcoll-<ver> and runs dpkg-buildpackage -us -uc -b there, so the
# packages build from exactly the sources, never from objects lying in the
# tree, and the tree's own build/ is left alone.  The .deb files land in
# $DEB_OUT.
#
# Usage: DEB_OUT=DIR build_deb.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${DEB_OUT:-$top/build/deb}
die() { echo "deb: $*" >&2; exit 1; }

command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null ||
	die "dpkg-buildpackage or dh_dkms missing (make deps installs dpkg-dev, debhelper, dh-dkms)"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
[ -n "$ver" ] || die "no PACKAGE_VERSION in $top/dkms.conf"
# The packages' version is the module's: a changelog entry per release.
deb_ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
[ "$deb_ver" = "$ver" ] ||
	die "debian/changelog says '$deb_ver', dkms.conf says '$ver'; add a changelog entry (dch -v $ver)"

src=$out/kcoll-$ver
rm -rf "$out"
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# --ignore-failed-read: a file deleted but not yet staged is skipped
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		tar -C "$top" --null --ignore-failed-read -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./build -cf - . | tar -C "$src" -xf -
fi
[ -x "$src/debian/rules" ] || die "copy of the tree in $src has no debian/rules"

echo "deb: dpkg-buildpackage in $src"
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	die "dpkg-buildpackage failed (whole log: $out/build.log)"
}
ls -1 "$out"/*.deb
