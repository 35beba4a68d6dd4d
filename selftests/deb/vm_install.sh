#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside a kcoll-vm node (selftests/deb/check_deb_vm.sh runs it): the
# Debian packages installed, used and removed in the VM itself, as on a
# cluster node.  The VM's /usr is the host's, read-only over 9p, so /usr
# and dpkg's database (the host's /var/lib/dpkg, shared read-only) get a
# writable tmpfs layer first (overlayfs); nothing reaches the host.
#
#   dpkg -i every package -> dkms builds kcoll.ko for the running kernel
#   -> modprobe kcoll, /dev/kcoll as the udev rule says, collctl show ->
#   dpkg -r (the module goes, dkms forgets it) -> dpkg -P -> none of the
#   packages' files is left, nor the dkms tree.
#
#   vm_install.sh DEB...
set -u
. "$(dirname "$0")/deb_checks.sh"

rel=$(uname -r)
fail=0
say() { echo "deb-vm: $*"; }
ok() { echo "deb-vm: ok: $*"; }
bad() { echo "deb-vm: not ok: $*"; fail=1; }
die() { echo "deb-vm: FAIL: $*"; exit 1; }
elapsed() { echo "$((SECONDS - t0)) s"; }

[ $# -gt 0 ] || die "usage: vm_install.sh DEB..."
[ ! -e /sys/module/kcoll ] || die "kcoll is loaded before the test"
[ ! -e /lib/modules/$rel/updates/dkms/kcoll.ko ] || die "a kcoll.ko is installed already"

# A writable layer over a read-only directory: a tmpfs upper and work dir.
writable() {
	local dir=$1 layer
	layer=/tmp/overlay$(echo "$dir" | tr / _)
	mkdir -p "$layer/upper" "$layer/work" || return 1
	mount -t overlay overlay -o "lowerdir=$dir,upperdir=$layer/upper,workdir=$layer/work" "$dir"
}
writable /usr || die "cannot lay a writable layer over /usr"
writable /var/lib/dpkg || die "cannot lay a writable layer over /var/lib/dpkg"
mkdir -p /var/lib/dkms /var/cache/debconf /var/log /var/lib/ucf
echo "deb-vm: $rel, /usr and /var/lib/dpkg writable in the VM only"

t0=$SECONDS
names=$(for d in "$@"; do dpkg-deb -f "$d" Package; done)
# Long work under TCG: say every minute what dkms's make is at.
progress() {
	local l
	while sleep 60; do
		l=$(tail -n1 /var/lib/dkms/kcoll/*/build/make.log 2>/dev/null)
		echo "deb-vm: ... $(elapsed): ${l:-dpkg -i, dkms outside its make (add, install, depmod)}"
	done
}
# dpkg -i runs kcoll-dkms's postinst: dkms add, build, install, depmod.
progress &
reporter=$!
DEBIAN_FRONTEND=noninteractive dpkg -i "$@" >/tmp/dpkg-i.log 2>&1
st=$?
kill $reporter
if [ $st = 0 ]; then
	ok "dpkg -i $(echo $names) ($(elapsed))"
else
	cat /tmp/dpkg-i.log
	die "dpkg -i failed after $(elapsed)"
fi
grep -E 'Building (for|initial)|Installing to' /tmp/dpkg-i.log | sed 's/^/deb-vm:   /'
for p in $names; do
	s=$(pkg_state "$p")
	[ "$s" = installed ] && ok "$p installed" || bad "$p is '$s', not installed"
done
dpkg -L $names 2>/dev/null | sort -u >/tmp/files.txt

ko=$(ls /lib/modules/$rel/updates/dkms/kcoll.ko* 2>/dev/null | head -n1)
if [ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$rel "; then
	ok "dkms built and installed $ko for $rel"
else
	bad "no kcoll.ko for $rel under /lib/modules/$rel/updates/dkms"
fi
dkms status -m kcoll | grep -q "$rel.*installed" && ok "dkms status: $(dkms status -m kcoll -k "$rel")" ||
	bad "dkms does not list kcoll as installed for $rel"
getent group kcoll >/dev/null && ok "group kcoll exists (postinst)" || bad "no group kcoll"

modprobe kcoll && ok "modprobe kcoll" || bad "modprobe kcoll failed"
[ "$(modinfo -n kcoll)" = "$ko" ] && ok "the module loaded is the packaged one" ||
	bad "modinfo -n kcoll is $(modinfo -n kcoll), not $ko"
# No udevd in the VM: apply the packaged rule as udev would.
rule=/usr/lib/udev/rules.d/60-kcoll.rules
what=$("$(dirname "$0")/../../tools/vm/udev-apply.sh" "$rule" 2>&1) &&
	ok "udev rule $rule: $what" || bad "$what"
[ -c /dev/kcoll ] && [ "$(stat -c %G /dev/kcoll)" = kcoll ] && ok "$(ls -l /dev/kcoll)" ||
	bad "/dev/kcoll missing or not of group kcoll"
/usr/bin/collctl show >/tmp/show.txt 2>&1 && ok "collctl show: $(head -n1 /tmp/show.txt)" ||
	{ cat /tmp/show.txt; bad "/usr/bin/collctl show failed"; }
modprobe -r kcoll || bad "modprobe -r kcoll"

t0=$SECONDS
DEBIAN_FRONTEND=noninteractive dpkg -r $names >/tmp/dpkg-r.log 2>&1 && ok "dpkg -r ($(elapsed))" ||
	{ cat /tmp/dpkg-r.log; bad "dpkg -r failed"; }
check_removed "$rel"
DEBIAN_FRONTEND=noninteractive dpkg -P $names >/tmp/dpkg-p.log 2>&1 && ok "dpkg -P" ||
	{ cat /tmp/dpkg-p.log; bad "dpkg -P failed"; }
check_purged /tmp/files.txt $names

[ $fail = 0 ] && say PASS || say FAIL
exit $fail
