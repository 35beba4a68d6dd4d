#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitrd.sh KRELEASE OUTPUT [MODROOT] - build the stage-1 initramfs of
# kcoll-vm.
#
# The image holds a static busybox, the modules the guest needs before it
# can reach the host's /usr over 9p (virtio PCI, virtio-net, 9p, overlayfs),
# taken from the Debian kernel KRELEASE's own module tree and decompressed,
# and tools/vm/stage1-init as /init.  Everything else (modprobe, ip, rdma,
# the RDMA modules, the test programs) comes from the host over 9p at run
# time, so the image only changes when the kernel or stage1-init changes.
# With MODROOT the module tree is MODROOT/lib/modules/KRELEASE instead (a
# kernel built from source); what that kernel has built in is left out.
set -euo pipefail

krel=${1:?usage: mkinitrd.sh KRELEASE OUTPUT [MODROOT]}
out=${2:?usage: mkinitrd.sh KRELEASE OUTPUT [MODROOT]}
modroot=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
moddir=${modroot:-/usr}/lib/modules/$krel
modprobe_root=()
[ -z "$modroot" ] || modprobe_root=(-d "$modroot")

[ -d "$moddir/kernel" ] || { echo "mkinitrd: no module tree $moddir" >&2; exit 1; }
# The image has no libc: busybox must be the static one (busybox-static).
busybox=
for b in /usr/bin/busybox /bin/busybox "$(command -v busybox || true)"; do
	[ -x "$b" ] || continue
	case $(LC_ALL=C ldd "$b" 2>&1) in *'not a dynamic'*) ;; *) continue ;; esac
	busybox=$b
	break
done
[ -n "$busybox" ] || { echo "mkinitrd: no static busybox (install busybox-static)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcvm-initrd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,mods}
cp "$busybox" "$tmp/bin/busybox"
cp "$here/stage1-init" "$tmp/init"
chmod 755 "$tmp/init" "$tmp/bin/busybox"

# Load order: modprobe's own dependency resolution against KRELEASE's tree.
# One call per module (extra names would be taken as module parameters).
declare -A seen=()
n=0
: >"$tmp/mods/list"
for m in virtio_pci virtio_net 9pnet_virtio 9p overlay; do
	while read -r verb path _; do
		[ "$verb" = insmod ] || continue
		[ -z "${seen[$path]:-}" ] || continue
		seen[$path]=1
		name=$(printf '%02d-%s.ko' "$n" "$(basename "${path%%.ko*}")")
		case "$path" in
		*.ko.xz)  xz -dc "$path" >"$tmp/mods/$name" ;;
		*.ko.zst) zstd -qdc "$path" >"$tmp/mods/$name" ;;
		*.ko.gz)  gzip -dc "$path" >"$tmp/mods/$name" ;;
		*)        cp "$path" "$tmp/mods/$name" ;;
		esac
		echo "$name" >>"$tmp/mods/list"
		n=$((n + 1))
	done < <(modprobe "${modprobe_root[@]}" -S "$krel" --show-depends "$m")
done

mkdir -p "$(dirname "$out")"
if command -v cpio >/dev/null; then
	(cd "$tmp" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
else
	(cd "$tmp" && find . | "$busybox" cpio -o -H newc) | gzip -1 >"$out.tmp"
fi
mv "$out.tmp" "$out"
echo "mkinitrd: $out ($krel, $n modules, $(du -k "$out" | cut -f1) KiB)" >&2
