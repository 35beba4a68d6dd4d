#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside a kcoll-vm node (selftests/deb/check_deb.sh runs it): the module
# the kcoll-dkms package installed on the host (the VM sees the host's
# /usr, and so /lib/modules, over 9p) loads with `modprobe kcoll`, using
# the modules.dep dkms wrote on the host (no depmod here: minutes over 9p),
# gives /dev/kcoll, and the packaged collctl reads it.
#
#   vm_check.sh KERNEL_RELEASE   (the 6.1 release the host built for)
set -eu

want=$1
rel=$(uname -r)
ko=/lib/modules/$rel/updates/dkms/kcoll.ko
fail() { echo "deb-vm: FAIL: $*"; exit 1; }

[ "$rel" = "$want" ] || fail "VM runs $rel, the host built the module for $want"
[ ! -e /sys/module/kcoll ] || fail "kcoll is loaded before the test"
path=$(modinfo -n kcoll) || fail "modinfo does not find kcoll (modules.dep of $rel lacks it)"
case "$path" in
"$ko"*) echo "deb-vm: modinfo -n kcoll: $path";;
*) fail "modinfo finds $path, not the packaged $ko";;
esac
modprobe kcoll || fail "modprobe kcoll"
[ -e /sys/module/kcoll ] || fail "kcoll is not loaded after modprobe"
[ -c /dev/kcoll ] || fail "no /dev/kcoll after modprobe kcoll"
echo "deb-vm: $(ls -l /dev/kcoll)"
/usr/bin/collctl show || fail "/usr/bin/collctl show"
modprobe -r kcoll || fail "modprobe -r kcoll"
echo "deb-vm: PASS"
