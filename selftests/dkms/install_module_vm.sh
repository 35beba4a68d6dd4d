#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside a kcoll-vm node: install kcoll.ko the way an operator without DKMS
# would (`make install-module`), then check that `modprobe kcoll` finds it
# through depmod, loads its dependencies (ib_core, rdma_cm) itself, creates
# /dev/kcoll, and that `modprobe -r` removes it again.
#
#   install_module_vm.sh TREE KCOLL_KO
#
# The VM's module tree is the host's, shared read-only; a tmpfs overlay
# makes it writable for this VM only, so the host is never touched.
set -eu

tree=$1
ko=$2
rel=$(uname -r)
mods=/lib/modules/$rel
fail() { echo "install-module-vm: FAIL: $*"; exit 1; }

[ ! -e /sys/module/kcoll ] || fail "kcoll is loaded before the test"
scratch=$(mktemp -d)
mount -t tmpfs tmpfs "$scratch"
mkdir -p "$scratch/upper" "$scratch/work"
mount -t overlay overlay -o "lowerdir=$mods,upperdir=$scratch/upper,workdir=$scratch/work" "$mods" ||
	fail "cannot make $mods writable with an overlay"
# install-module also installs the udev rule into /usr, read-only here too.
rules=/usr/lib/udev/rules.d
mkdir -p "$scratch/rupper" "$scratch/rwork"
mount -t overlay overlay -o "lowerdir=$rules,upperdir=$scratch/rupper,workdir=$scratch/rwork" "$rules" ||
	fail "cannot make $rules writable with an overlay"

t0=$SECONDS
make -s --no-print-directory -C "$tree" install-module KCOLL_KO="$ko" KREL="$rel" ||
	fail "make install-module"
# depmod reads every module of the tree over 9p: minutes under TCG
echo "install-module-vm: make install-module (depmod -a) took $((SECONDS - t0)) s"
path=$(modinfo -n kcoll) || fail "modinfo does not find kcoll after depmod"
[ "$path" = "$mods/updates/kcoll.ko" ] || fail "modinfo finds $path, not $mods/updates/kcoll.ko"
cmp -s "$tree/udev/60-kcoll.rules" "$rules/60-kcoll.rules" || fail "no udev rule $rules/60-kcoll.rules"
# The runner brought RDMA up; take it down so modprobe must load the
# dependencies itself.
rdma link delete rxe0 2>/dev/null || true
modprobe -r rdma_ucm rdma_rxe ib_uverbs rdma_cm iw_cm ib_cm ib_core ||
	fail "cannot unload the RDMA modules before the test"
[ ! -e /sys/module/ib_core ] || fail "ib_core is still loaded"
modprobe kcoll || fail "modprobe kcoll"
for m in kcoll ib_core rdma_cm; do
	[ -e /sys/module/$m ] || fail "$m is not loaded after modprobe kcoll"
done
[ -c /dev/kcoll ] || fail "no /dev/kcoll after modprobe"
echo "install-module-vm: $rel: make install-module, depmod, modprobe kcoll (+ ib_core, rdma_cm): ok"
modprobe -r kcoll || fail "modprobe -r kcoll"
[ ! -e /sys/module/kcoll ] || fail "kcoll still loaded after modprobe -r"
umount "$mods"
umount "$rules"
umount "$scratch"
rmdir "$scratch"
echo "install-module-vm: PASS"
