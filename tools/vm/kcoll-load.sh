#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kcoll-load.sh MODULE.ko [ARG]...: load a kernel module from a file the
# way `modprobe NAME ARG...` loads an installed one.  Its `depends:`
# (modinfo) are modprobed first; then insmod gets the options the modprobe
# configuration holds for NAME (`options NAME ...` lines of
# /etc/modprobe.d/ and the other configuration directories, NAME.PARAM= of
# the kernel command line: what `modprobe -c` prints) followed by ARGs, so
# that an ARG wins over a configured value of the same parameter, as on
# modprobe's command line.
#
# kcoll-vm's stage 2 (vm-init.sh) loads the module under test with it at
# every boot: insmod alone ignores modprobe.d, and settings kept there
# (collctl config --persist) would not come back after a reboot.  A test
# may rmmod the module and call it again to load it as the next boot
# would (selftests/lib/vm_persist.sh).
#
# Prints "loaded NAME (depends: ...) with: ARGS" (the arguments insmod
# got); errors on stderr, exit 1 (2 for a usage error), nothing loaded.
set -uo pipefail
export LC_ALL=C
PROG=kcoll-load.sh

fail() {
	echo "$PROG: $*" >&2
	exit 1
}

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: $PROG MODULE.ko [ARG]..." >&2
	exit 2
fi
mod=$1
shift
[ -f "$mod" ] || fail "$mod: no such module file"

# modprobe's name of the module: '-' and '_' are the same to it.
name=$(modinfo -F name "$mod" 2>/dev/null)
[ -n "$name" ] || name=$(basename "$mod" .ko)
name=${name//-/_}

deps=$(modinfo -F depends "$mod") || fail "modinfo $mod failed"
for d in ${deps//,/ }; do
	modprobe "$d" || fail "modprobe $d (a dependency of $mod) failed"
done

conf=$(modprobe -c) || fail "modprobe -c failed: cannot read the modprobe configuration"
# Words as modprobe splits them; a quoted value with blanks ("a b") is
# split here but insmod joins its arguments with blanks again and the
# kernel honours the quotes.  No globbing of the words.
set -f
# shellcheck disable=SC2207 # split on blanks on purpose (see above)
args=($(sed -n "s/^options $name //p" <<<"$conf") "$@")
set +f
if ! insmod "$mod" ${args[@]+"${args[@]}"}; then
	fail "insmod $mod ${args[*]} failed: $(dmesg | tail -n 3 | tr '\n' ' ')"
fi
echo "loaded $name (depends: ${deps:-none}) with: ${args[*]:-no arguments}"
