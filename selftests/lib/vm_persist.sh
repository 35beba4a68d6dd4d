#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Persisted tunables come back after a reboot (issue 30), in the virtual
# cluster: two kcoll-vm runs of one VM, each a fresh boot, share a host
# directory read-write that stands for the node's disk.
#
#   boot 1: collctl config --persist timeout_ms 12345 and an algo string
#           with a blank (quoted in modprobe.d); a value the module refuses
#           is neither set nor recorded.
#   boot 2: the module, loaded at boot by tools/vm/kcoll-load.sh, which
#           reads `modprobe -c`, has both values (collctl config NAME);
#           --show-persistent lists them; after --unpersist timeout_ms, an
#           rmmod and the same load again (the third boot), timeout_ms is
#           back to its default and algo still set.
#
# What is test-only: collctl writes KCOLL_MODPROBE_CONF=DIR/kcoll.conf
# (the shared directory) instead of /etc/modprobe.d/kcoll.conf, and
# vm-init.sh links that file in as /etc/modprobe.d/kcoll.conf before the
# module load (a VM's /etc is a throwaway overlay).  What is production:
# collctl's file, modprobe's reading of /etc/modprobe.d/kcoll.conf, the
# options it gives the module, the module's parameters.
#
# Usage, on the host as root (the VM lock is the caller's business, as for
# every kcoll-vm target):
#   [KCOLL_VM=tools/vm/kcoll-vm] selftests/lib/vm_persist.sh [MODULE.ko]
# In the VM the script runs itself as the rank command: vm_persist.sh
# boot1|boot2 (KCOLL_MODPROBE_CONF set, KCOLL_RANK set by kcoll-vm).
set -euo pipefail

top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
B=${COLL_BIN:-$top/build/bin}
T_VAL=12345
ALGO_VAL='level0:NA; level1:ring'

fail() {
	echo "vm_persist: FAIL: $*" >&2
	exit 1
}
ok() { echo "vm_persist: ok: $*"; }

# expect NAME VALUE: the module's current value of tunable NAME, via collctl
expect() {
	local got
	got=$("$B"/collctl config "$1") || fail "collctl config $1 failed"
	[ "$got" = "$2" ] || fail "$1 is '$got', expected '$2'"
	ok "$1 = '$got'"
}

boot1() {
	local out
	out=$("$B"/collctl config --show-persistent)
	[ "$out" = "$KCOLL_MODPROBE_CONF: nothing persisted" ] ||
		fail "a fresh disk shows persisted settings: $out"
	# The defaults, for boot 2's check after --unpersist.
	"$B"/collctl config timeout_ms >"$dir/default.timeout_ms"
	[ "$(<"$dir/default.timeout_ms")" != $T_VAL ] || fail "the default timeout_ms is already $T_VAL"

	"$B"/collctl config --persist timeout_ms $T_VAL || fail "config --persist timeout_ms $T_VAL failed"
	"$B"/collctl config --persist algo "$ALGO_VAL" || fail "config --persist algo '$ALGO_VAL' failed"
	expect timeout_ms $T_VAL
	"$B"/collctl config algo >"$dir/algo.shown"
	ok "algo = '$(<"$dir/algo.shown")' (as sysfs shows '$ALGO_VAL')"

	# A value the module refuses: an error naming it, nothing set, the
	# file as it was.
	cp "$KCOLL_MODPROBE_CONF" "$dir/before-bad"
	if "$B"/collctl config --persist timeout_ms abc 2>"$dir/bad.err"; then
		fail "config --persist timeout_ms abc was accepted"
	fi
	grep -q "the module refused timeout_ms = 'abc'" "$dir/bad.err" ||
		fail "no clear error for timeout_ms abc: $(cat "$dir/bad.err")"
	cmp -s "$dir/before-bad" "$KCOLL_MODPROBE_CONF" || fail "a refused value changed $KCOLL_MODPROBE_CONF"
	expect timeout_ms $T_VAL
	ok "timeout_ms abc refused: $(cat "$dir/bad.err")"
}

boot2() {
	local out algo def
	# The production path: modprobe's configuration holds the options.
	[ "$(readlink /etc/modprobe.d/kcoll.conf)" = "$KCOLL_MODPROBE_CONF" ] ||
		fail "/etc/modprobe.d/kcoll.conf is not the persisted file (vm-init.sh's test hook)"
	out=$(modprobe -c | grep '^options kcoll ') || fail "modprobe -c has no options kcoll line"
	ok "modprobe -c: $out"

	# Back after the boot, loaded by vm-init.sh through kcoll-load.sh.
	algo=$(<"$dir/algo.shown")
	expect timeout_ms $T_VAL
	expect algo "$algo"
	out=$("$B"/collctl config --show-persistent)
	printf '%s\n' "$out"
	grep -qx "$KCOLL_MODPROBE_CONF" <<<"$out" || fail "--show-persistent does not name $KCOLL_MODPROBE_CONF"
	grep -qx "timeout_ms  *$T_VAL" <<<"$out" || fail "--show-persistent does not list timeout_ms $T_VAL"
	grep -qx "algo  *$ALGO_VAL" <<<"$out" || fail "--show-persistent does not list algo '$ALGO_VAL'"
	ok "--show-persistent lists both"

	# --unpersist, then a load as the next boot would do it.
	"$B"/collctl config --unpersist timeout_ms || fail "config --unpersist timeout_ms failed"
	expect timeout_ms $T_VAL # the running value stays
	rmmod kcoll || fail "rmmod kcoll failed"
	"$top/tools/vm/kcoll-load.sh" /kcvm/run/modules/kcoll.ko || fail "kcoll-load.sh failed"
	def=$(<"$dir/default.timeout_ms")
	expect timeout_ms "$def"
	expect algo "$algo"
}

# ---- in the VM: one boot's checks
if [ -n "${KCOLL_RANK:-}" ]; then
	: "${KCOLL_MODPROBE_CONF:?run me through vm_persist.sh on the host}"
	dir=$(dirname "$KCOLL_MODPROBE_CONF")
	case ${1:-} in
	boot1 | boot2) "$1" ;;
	*) fail "unknown step '${1:-}' (boot1 or boot2)" ;;
	esac
	ok "$1 passed"
	exit 0
fi

# ---- on the host: two boots sharing $dir
vm=${KCOLL_VM:-$top/tools/vm/kcoll-vm}
mod=${1:-$top/kcoll.ko}
[ -f "$mod" ] || fail "no module $mod (make module)"
dir=$(mktemp -d /tmp/kcoll-vm-persist.XXXXXX)
trap 'rm -rf "$dir"' EXIT
conf=$dir/kcoll.conf
boot() { # boot N: one fresh VM running this script's step bootN
	local t0=$SECONDS
	echo "vm_persist: boot $1"
	"$vm" run -n 1 -t 600 --module "$mod" --rmmod --share-rw "$dir" \
		-e KCOLL_MODPROBE_CONF="$conf" -e COLL_BIN="$B" -- "$top/selftests/lib/vm_persist.sh" "boot$1" ||
		fail "boot $1 failed (kcoll-vm exit $?)"
	echo "vm_persist: boot $1 took $((SECONDS - t0)) s"
}
boot 1
grep -qx "options kcoll timeout_ms=$T_VAL algo=\"$ALGO_VAL\"" "$conf" ||
	fail "$conf after boot 1: $(cat "$conf")"
ok "the disk after boot 1: $(grep '^options' "$conf")"
boot 2
grep -qx "options kcoll algo=\"$ALGO_VAL\"" "$conf" || fail "$conf after boot 2: $(cat "$conf")"
ok "the disk after boot 2: $(grep '^options' "$conf")"
echo "vm_persist: PASS (${SECONDS} s)"
