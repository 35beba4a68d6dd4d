#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Apply kcoll's udev rule to /dev/kcoll as udevd would: kcoll-vm's nodes
# run no udevd.  Takes MODE and GROUP from the rule's KERNEL=="kcoll"
# line, adds the group if it is missing (kcoll-dkms's postinst does that
# on a real node), waits up to 5 s for /dev/kcoll after a modprobe, sets
# both and prints "mode MODE, group GROUP".  For vm-init.sh (the tree's
# rule, with --module kcoll.ko) and selftests/deb/vm_install.sh (the
# packaged rule).
#
#   udev-apply.sh RULE
set -u

die() { echo "udev-apply: $*" >&2; exit 1; }
[ $# = 1 ] || die "usage: udev-apply.sh RULE"
rule=$1
line=$(grep -E '^KERNEL=="kcoll",' "$rule" 2>/dev/null) || die "no KERNEL==\"kcoll\" line in $rule"
mode=$(sed -n 's/.*MODE="\([0-7]*\)".*/\1/p' <<<"$line")
group=$(sed -n 's/.*GROUP="\([^"]*\)".*/\1/p' <<<"$line")
if [ -z "$mode" ] || [ -z "$group" ]; then die "$rule: no MODE or GROUP in: $line"; fi
getent group "$group" >/dev/null || groupadd -r "$group" || die "groupadd -r $group failed"
for ((i = 0; i < 50; i++)); do
	[ -e /dev/kcoll ] && break
	sleep 0.1
done
if ! chgrp "$group" /dev/kcoll || ! chmod "$mode" /dev/kcoll; then
	die "cannot apply $rule to /dev/kcoll (mode $mode, group $group)"
fi
echo "mode $mode, group $group"
