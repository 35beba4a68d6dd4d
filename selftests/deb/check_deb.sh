#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check_deb.sh: `make check-deb`, after `make deb`.  The Debian packages in
# $DEB_OUT as a cluster operator meets them:
#
#   lintian (any E: fails) -> dpkg -i every package (dkms builds kcoll.ko
#   for every installed 6.1/6.12 kernel with headers) -> files where they
#   belong, libcoll's exported symbols are exactly coll.h's functions,
#   pkg-config, a program built and run against the installed libcoll,
#   collctl from /usr/bin -> in a 6.1 VM (which sees the host's /usr):
#   modprobe kcoll finds the packaged module, /dev/kcoll, collctl show
#   (selftests/deb/vm_check.sh) -> dpkg -r, dpkg -P -> nothing left.
#
# On this host, as root.  It refuses to run when a kcoll package is
# installed or dkms already manages a kcoll (make dkms-check running at the
# same time counts).  Everything the run adds (packages, dkms entries,
# modules, the group kcoll if it was not there, a MOK key dkms made) is
# removed again, also on failure or Ctrl-C.
#
# Usage: DEB_OUT=DIR [KCOLL_VM=tools/vm/kcoll-vm] check_deb.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/dkms/kernels.sh"
out=${DEB_OUT:-$top/build/deb}
vm=${KCOLL_VM:-$top/tools/vm/kcoll-vm}
. "$top/selftests/deb/deb_checks.sh"
pkgs=("${KCOLL_PKGS[@]}")
ver=$(kcoll_version "$top")
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$triplet
mok_dir=/var/lib/dkms
tmp=
had_mok=0
had_group=0
made_dirs=()
fail=0

die() { echo "check-deb: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
bad() { echo "not ok: $*" >&2; fail=1; }

[ "$(id -u)" = 0 ] || die "needs root (dpkg -i, dkms)"
[ -n "$ver" ] || die "no PACKAGE_VERSION in $top/dkms.conf"
command -v lintian >/dev/null || die "lintian is not installed (make deps installs it)"
deb_paths "$out" "$ver" "${pkgs[@]}" || die "$DEB_ERR"
debs=("${DEBS[@]}")
for p in "${pkgs[@]}"; do
	s=$(pkg_state "$p")
	[ "$s" = not-installed ] || die "$p is already on this host ($s); not touching it"
done
if dkms status -m kcoll 2>/dev/null | grep -q .; then
	die "dkms already manages kcoll ($(dkms status -m kcoll | head -n1)); not touching it"
fi
[ ! -e "/usr/src/kcoll-$ver" ] || die "/usr/src/kcoll-$ver exists; not touching it"

mapfile -t kernels < <(kc_dkms_kernels)
[ ${#kernels[@]} -gt 0 ] || die "no 6.1 or 6.12 kernel headers under /lib/modules (make deps installs them)"
rel61=
for rel in "${kernels[@]}"; do case "$rel" in 6.1.*) rel61=$rel;; esac; done

[ -e "$mok_dir/mok.key" ] && had_mok=1
getent group kcoll >/dev/null && had_group=1
for rel in "${kernels[@]}"; do
	d=/lib/modules/$rel/updates/dkms
	[ -d "$d" ] || made_dirs+=("$d" "/lib/modules/$rel/updates")
done

cleanup() {
	local rc=$?

	for p in "${pkgs[@]}"; do
		[ "$(pkg_state "$p")" = not-installed ] || dpkg -P "$p" >/dev/null 2>&1 || true
	done
	dkms remove -m kcoll -v "$ver" --all >/dev/null 2>&1 || true
	rm -rf /var/lib/dkms/kcoll
	for d in "${made_dirs[@]}"; do
		rmdir --ignore-fail-on-non-empty "$d" 2>/dev/null || true
	done
	[ $had_mok = 1 ] || rm -f "$mok_dir/mok.key" "$mok_dir/mok.pub"
	# The package keeps the group on purge (Debian practice); this test
	# leaves the host as it found it.
	[ $had_group = 1 ] || ! getent group kcoll >/dev/null || delgroup --system --quiet kcoll || true
	[ -n "$tmp" ] && rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
tmp=$(mktemp -d /tmp/kcoll-deb.XXXXXX)
t0=$SECONDS

# ---------------------------------------------------------------- lintian
echo "# lintian ${debs[*]##*/}"
lintian --fail-on none --display-info "${debs[@]}" >"$tmp/lintian.txt" 2>&1 || true
cat "$tmp/lintian.txt"
ne=$(grep -c '^E: ' "$tmp/lintian.txt" || true)
nw=$(grep -c '^W: ' "$tmp/lintian.txt" || true)
ni=$(grep -c '^I: ' "$tmp/lintian.txt" || true)
echo "# lintian: $ne errors, $nw warnings, $ni notes"
[ "$ne" = 0 ] && ok "lintian: no errors" || bad "lintian: $ne errors"
[ $fail = 0 ] || exit 1

# ---------------------------------------------------------------- install
echo "# dpkg -i (dkms builds kcoll.ko for ${kernels[*]})"
dpkg -i "${debs[@]}" >"$tmp/dpkg-i.log" 2>&1 || { cat "$tmp/dpkg-i.log" >&2; die "dpkg -i failed"; }
grep -E 'Building for|Done|Skipped|kcoll.ko' "$tmp/dpkg-i.log" || true
for p in "${pkgs[@]}"; do
	[ "$(pkg_state "$p")" = installed ] && ok "$p installed" || bad "$p: $(pkg_state "$p")"
	dpkg -L "$p" >>"$tmp/files.txt"
done

for f in "/usr/src/kcoll-$ver/dkms.conf" "/usr/src/kcoll-$ver/Kbuild" \
	"/usr/src/kcoll-$ver/kmod/kcoll_main.c" "/usr/src/kcoll-$ver/uapi/linux/kcoll.h" \
	/usr/lib/udev/rules.d/60-kcoll.rules "$libdir/libcoll.so.1.0.0" "$libdir/libcoll.a" \
	"$libdir/pkgconfig/libcoll.pc" /usr/include/coll.h /usr/share/man/man3/coll.3.gz \
	/usr/share/man/man3/coll_allreduce.3.gz /usr/share/man/man3/coll_wait.3.gz \
	"$libdir/kcoll/libcoll-mpi-openmpi.so" "$libdir/kcoll/libcoll-mpi-mpich.so" \
	/usr/bin/collctl /usr/bin/coll-perf /usr/bin/coll-sim /usr/share/man/man8/collctl.8.gz \
	/usr/share/man/man1/coll-perf.1.gz /usr/share/man/man1/coll-sim.1.gz; do
	[ -f "$f" ] && ok "$f" || bad "$f is missing"
done
[ "$(readlink "$libdir/libcoll.so.1")" = libcoll.so.1.0.0 ] &&
	[ "$(readlink "$libdir/libcoll.so")" = libcoll.so.1 ] &&
	ok "libcoll.so -> libcoll.so.1 -> libcoll.so.1.0.0" || bad "libcoll's links are wrong"
soname=$(objdump -p "$libdir/libcoll.so.1.0.0" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libcoll.so.1 ] && ok "soname $soname" || bad "soname is '$soname', not libcoll.so.1"
[ "$(readlink /usr/bin/all_reduce_perf)" = coll-perf ] && ok "all_reduce_perf -> coll-perf" ||
	bad "no /usr/bin/all_reduce_perf -> coll-perf"
getent group kcoll >/dev/null && ok "group kcoll exists" || bad "no group kcoll"

# Exported: exactly the functions coll.h declares, in version LIBCOLL_1.0.
nm -D --defined-only --with-symbol-versions "$libdir/libcoll.so.1.0.0" |
	awk '$2 == "T" && $3 ~ /@@LIBCOLL_/ {sub(/@.*/, "", $3); print $3}' | sort >"$tmp/exported.txt"
grep -o '\bcoll_[a-z0-9_]*(' "$top/lib/coll.h" | tr -d '(' | sort -u >"$tmp/declared.txt"
if diff -u "$tmp/declared.txt" "$tmp/exported.txt" >"$tmp/abi.diff"; then
	ok "libcoll.so.1 exports the $(wc -l <"$tmp/exported.txt") functions of coll.h, nothing else"
else
	cat "$tmp/abi.diff" >&2
	bad "libcoll.so.1's exports and coll.h differ (-: only declared, +: only exported; lib/libcoll.map)"
fi

for rel in "${kernels[@]}"; do
	ko=$(ls "/lib/modules/$rel/updates/dkms/kcoll.ko"* 2>/dev/null | head -n1 || true)
	if [ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$rel "; then
		ok "$rel: dkms installed $ko"
	else
		bad "$rel: no kcoll.ko under /lib/modules/$rel/updates/dkms"
	fi
	# dkms ran depmod: a VM of this kernel finds the module without one.
	grep -q '^updates/dkms/kcoll.ko' "/lib/modules/$rel/modules.dep" &&
		ok "$rel: modules.dep lists updates/dkms/kcoll.ko" || bad "$rel: kcoll.ko not in modules.dep"
done

libs=$(echo $(pkg-config --libs libcoll))
[ "$libs" = "-lcoll" ] && ok "pkg-config --libs libcoll: $libs" ||
	bad "pkg-config --libs libcoll says '$libs', not -lcoll"
flags=$(pkg-config --cflags --libs libcoll)
cc -std=c11 -Wall -Wextra -Werror -o "$tmp/example" "$top/selftests/lib/example.c" $flags ||
	bad "cannot build selftests/lib/example.c against the installed libcoll"
if [ -x "$tmp/example" ]; then
	# /lib is /usr/lib (merged /usr): compare where both lead
	got=$(ldd "$tmp/example" | awk '$1 == "libcoll.so.1" {print $3}')
	[ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$libdir/libcoll.so.1")" ] &&
		ok "example links $got" || bad "example links '$got', not $libdir/libcoll.so.1"
	msg=$(KCOLL_RANKTABLE=/nonexistent "$tmp/example" 2>&1 || true)
	case "$msg" in
	*"cannot open rank table /nonexistent"*) ok "example runs: $msg";;
	*) bad "example printed '$msg', not libcoll's 'cannot open rank table /nonexistent'";;
	esac
fi
/usr/bin/collctl --help >"$tmp/help.txt" 2>&1 && grep -q collctl "$tmp/help.txt" &&
	ok "/usr/bin/collctl --help" || bad "/usr/bin/collctl --help failed"

# ---------------------------------------------------------------- VM
if [ -n "$rel61" ]; then
	echo "# 6.1 VM: modprobe kcoll (the packaged module), /dev/kcoll, collctl show"
	"$vm" run -n 1 -t 600 --kernel 6.1 -- \
		"$top/selftests/deb/vm_check.sh" "$rel61" && ok "6.1 VM: packaged module loads" ||
		bad "6.1 VM: packaged module check failed"
else
	bad "no 6.1 kernel headers: the VM part did not run"
fi

# ---------------------------------------------------------------- remove
echo "# dpkg -r, dpkg -P"
dpkg -r "${pkgs[@]}" >"$tmp/dpkg-r.log" 2>&1 || { cat "$tmp/dpkg-r.log" >&2; bad "dpkg -r failed"; }
check_removed "${kernels[@]}"
dpkg -P "${pkgs[@]}" >"$tmp/dpkg-p.log" 2>&1 || { cat "$tmp/dpkg-p.log" >&2; bad "dpkg -P failed"; }
check_purged "$tmp/files.txt" "${pkgs[@]}"

echo "# check-deb took $((SECONDS - t0)) s after the build"
[ $fail = 0 ] && echo "check-deb: passed (${kernels[*]})"
exit $fail
