#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# extract-vmlinux.sh VMLINUZ OUTPUT - the uncompressed ELF kernel of a
# bzImage (xz, zstd, gzip, lz4 payloads), for qemu's PVH boot.  Under TCG the
# guest decompressing its own kernel costs seconds of emulated CPU at every
# boot; doing it once on the host saves them.
set -euo pipefail
export LC_ALL=C
in=${1:?usage: extract-vmlinux.sh VMLINUZ OUTPUT}
out=${2:?usage: extract-vmlinux.sh VMLINUZ OUTPUT}

try() { # try MAGIC-REGEX DECOMPRESSOR...
	local re=$1 off
	shift
	command -v "$1" >/dev/null || return 1
	for off in $(grep -obUaP "$re" "$in" | cut -d: -f1 | head -n 5); do
		tail -c +$((off + 1)) "$in" | "$@" >"$out.tmp" 2>/dev/null || true
		if [ "$(head -c 4 "$out.tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
			mv "$out.tmp" "$out"
			return 0
		fi
	done
	return 1
}

try '\xfd7zXZ\x00' xz -dc --single-stream ||
	try '\x28\xb5\x2f\xfd' zstd -dc ||
	try '\x1f\x8b\x08' gzip -dc ||
	try '\x02\x21\x4c\x18' lz4 -dc || {
	rm -f "$out.tmp"
	echo "extract-vmlinux: no ELF kernel found in $in" >&2
	exit 1
}
