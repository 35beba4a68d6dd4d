# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # KCOLL_PKGS, DEB_ERR: the callers'
#
# What check_deb.sh (on the host), check_deb_vm.sh and vm_install.sh
# (inside a VM) share, sourced: the packages and their version, finding
# the built .deb files, and what must hold once they are removed and
# purged.  The caller defines ok and bad (each prints a line; bad marks
# the run failed).

# Every binary package debian/control builds, dkms first.
KCOLL_PKGS=(kcoll-dkms libcoll1 libcoll-dev libcoll-mpi kcoll-tools)

# kcoll_version TOP: the version the packages carry (dkms.conf's).
kcoll_version() {
	sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$1/dkms.conf"
}

# The state of a package in dpkg's database, "not-installed" if unknown.
pkg_state() {
	dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || echo not-installed
}

# deb_paths OUT VERSION PACKAGE...: DEBS=(the .deb of each package under
# OUT); on a missing one returns 1 with DEB_ERR saying which.
DEBS=()
DEB_ERR=
deb_paths() {
	local out=$1 ver=$2 p f
	shift 2
	DEBS=()
	for p; do
		f=$(ls "$out/${p}_${ver}_"*.deb 2>/dev/null | head -n1 || true)
		if [ -z "$f" ]; then
			DEB_ERR="no $out/${p}_${ver}_*.deb (make deb builds them)"
			return 1
		fi
		DEBS+=("$f")
	done
}

# check_removed KERNEL...: after dpkg -r, dkms built nothing that is left.
check_removed() {
	local rel
	for rel; do
		if ls "/lib/modules/$rel/updates/dkms/kcoll.ko"* >/dev/null 2>&1; then
			bad "$rel: kcoll.ko still installed after dpkg -r"
		else
			ok "$rel: kcoll.ko removed"
		fi
	done
	if dkms status -m kcoll 2>/dev/null | grep -q .; then
		bad "dkms still lists kcoll: $(dkms status -m kcoll)"
	else
		ok "no dkms entry for kcoll"
	fi
	return 0
}

# check_purged FILES PACKAGE...: after dpkg -P, dpkg knows none of the
# packages and none of the paths in FILES (dpkg -L's, taken while they
# were installed) is left, nor the dkms source and tree.
check_purged() {
	local files=$1 p f left=0
	shift
	for p; do
		[ "$(pkg_state "$p")" = not-installed ] || bad "$p is still known to dpkg: $(pkg_state "$p")"
	done
	if ls -d /usr/src/kcoll-* >/dev/null 2>&1; then
		bad "left: $(ls -d /usr/src/kcoll-*)"
	else
		ok "no /usr/src/kcoll-*"
	fi
	[ ! -e /var/lib/dkms/kcoll ] && ok "no /var/lib/dkms/kcoll" || bad "/var/lib/dkms/kcoll is left"
	while read -r f; do
		# directories (/usr/bin, ...) belong to other packages too
		if [ -e "$f" ] && [ ! -d "$f" ] || [ -L "$f" ]; then
			bad "left after purge: $f"
			left=$((left + 1))
		fi
	done <"$files"
	[ $left = 0 ] && ok "none of the packages' $(wc -l <"$files") paths is left"
	return 0
}
