#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check_deb_vm.sh: `make check-deb-vm`, after `make deb`.  The packages
# installed, used and removed inside one VM, as on a cluster node: dpkg -i
# there runs kcoll-dkms's postinst, so dkms compiles kcoll.ko inside the
# VM, under TCG (22 min for dpkg -i here; too long for `make check`, whose
# check-deb installs on the host and loads the packaged module in a VM).
# selftests/deb/vm_install.sh is what runs in the VM.
#
# The VM boots 6.12, the newest kernel with headers here: dkms builds for
# the running kernel and the newest one, so one build, not two.  Nothing
# reaches the host: the VM writes /usr and dpkg's database (the host's
# /var/lib/dpkg, shared read-only) through tmpfs layers of its own.
#
# Usage: DEB_OUT=DIR [KCOLL_VM=tools/vm/kcoll-vm] check_deb_vm.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${DEB_OUT:-$top/build/deb}
vm=${KCOLL_VM:-$top/tools/vm/kcoll-vm}
. "$top/selftests/deb/deb_checks.sh"
ver=$(kcoll_version "$top")

die() { echo "check-deb-vm: $*" >&2; exit 1; }
[ -n "$ver" ] || die "no PACKAGE_VERSION in $top/dkms.conf"
deb_paths "$out" "$ver" "${KCOLL_PKGS[@]}" || die "$DEB_ERR"
debs=()
for f in "${DEBS[@]}"; do debs+=("$(readlink -f "$f")"); done
case "${debs[0]}" in
"$top"/*) ;;
*) die "the packages must lie in the tree the VM sees ($top), not in $out";;
esac

t0=$SECONDS
# gcc under TCG: 1 GiB, and 40 min for the build and depmod over 9p.
"$vm" run -n 1 -t 2400 --kernel 6.12 --mem 1024 --share /var/lib/dpkg -- \
	"$top/selftests/deb/vm_install.sh" "${debs[@]}" ||
	die "failed after $((SECONDS - t0)) s (the VM's output is above)"
echo "check-deb-vm: passed in $((SECONDS - t0)) s"
