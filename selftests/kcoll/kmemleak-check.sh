#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kmemleak-check.sh --baseline
# kmemleak-check.sh MODULE
#
# The kmemleak step of `make check-debug`, run as root inside each VM of a
# debug kernel (CONFIG_DEBUG_KMEMLEAK=y, automatic scanning off).
#
# --baseline (kcoll-vm --setup, after the module was loaded): scan once and
#     mark every suspect found so far as seen (`clear`), so that the check
#     afterwards reports only what leaked while the tests ran.
# MODULE (kcoll-vm --post, after the ranks exited and --rmmod unloaded the
#     module): scan twice, print every new suspect and fail if any is
#     attributed to MODULE.  A report is attributed to MODULE when a frame
#     of its allocation backtrace is a MODULE symbol, or an address in the
#     module area that no longer resolves to a symbol: in these VMs every
#     driver is built in, the module under test is the only one ever
#     loaded, and once it is unloaded its code addresses print as bare
#     0xffffffff... values.
#
# Exit status: 0 no leak attributed to MODULE; 1 at least one; 2 the check
# could not be made (no kmemleak, kmemleak disabled, MODULE still loaded).
set -uo pipefail

KL=/sys/kernel/debug/kmemleak

die() {
	echo "kmemleak-check: $*"
	exit 2
}
usage() {
	echo "usage: kmemleak-check.sh --baseline | MODULE" >&2
	exit 2
}

[ $# -eq 1 ] || usage
[ -e "$KL" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
[ -e "$KL" ] || die "$KL missing: this kernel has no CONFIG_DEBUG_KMEMLEAK"

# A write fails with EPERM/EBUSY once kmemleak turned itself off (an
# internal error, or its early object pool ran out): then nothing was
# tracked and a clean result would be a lie.
kl_cmd() {
	echo "$1" >"$KL" 2>/dev/null ||
		die "'echo $1 > $KL' failed: kmemleak is disabled ($(dmesg | grep -i kmemleak | tail -n 2 | tr '\n' ' '))"
}

if [ "$1" = --baseline ]; then
	kl_cmd scan
	n=$(grep -c '^unreferenced object' "$KL")
	kl_cmd clear
	echo "kmemleak-check: baseline: $n suspects from before the tests set aside"
	exit 0
fi

mod=$1
[[ $mod =~ ^[A-Za-z0-9_]+$ ]] || usage
grep -q "^$mod " /proc/modules && die "$mod is still loaded (run after rmmod)"
others=$(cut -d' ' -f1 /proc/modules | tr '\n' ' ')
[ -z "$others" ] ||
	echo "kmemleak-check: note: other modules are loaded ($others); bare module-area addresses may be theirs"

# An object is reported only when no scan finds a reference to it and it
# is older than 5 s; a second scan catches what the first saw in transit.
kl_cmd scan
sleep 6
kl_cmd scan
report=$(cat "$KL") || die "cannot read $KL"

# One report: "unreferenced object 0x... (size N):", comm, hex dump,
# "backtrace:" and one "[<hash>] symbol+off/len [module]" line per frame.
attributed=$(awk -v mod="$mod" '
	# Only report blocks count: an empty report is one empty line.
	function flush() {
		if (block ~ /^unreferenced object/) {
			total++
			if (hit) { mine++; printf "%s", block }
		}
		block = ""; hit = 0
	}
	/^unreferenced object/ { flush() }
	{ block = block $0 "\n" }
	/^ +\[<[0-9a-f]+>\] / {
		if ($0 ~ "\\[" mod "\\]$" || $0 ~ /\] 0xffffffff[a-f][0-9a-f]+$/)
			hit = 1
	}
	END { flush(); printf "@@ %d %d\n", total, mine }
' <<<"$report")
counts=${attributed##*@@ }
total=${counts%% *}
mine=${counts##* }
if [ "$mine" != 0 ]; then
	echo "kmemleak-check: $mine of $total new suspected leaks are attributed to $mod:"
	printf '%s\n' "${attributed%@@ *}"
	exit 1
fi
echo "kmemleak-check: no leak attributed to $mod ($total other new suspects)"
[ "$total" = 0 ] || printf '%s\n' "$report" | head -n 60
exit 0
