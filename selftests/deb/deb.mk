# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages (debian/): kcoll-dkms, libcoll1, libcoll-dev,
# libcoll-mpi, kcoll-tools.
#
#   make deb        build/deb/*.deb: dpkg-buildpackage -us -uc -b on a copy
#                   of the tree (the files git knows) in build/deb/kcoll-<ver>
#   make check-deb  make deb, lintian (fails on any error), then the install
#                   round trip on this host and in a 6.1 VM
#                   (selftests/deb/check_deb.sh; root, refuses to run when
#                   a kcoll package or a dkms kcoll is installed)
#   make check-deb-vm  make deb, then dpkg -i, use, dpkg -r and -P inside a
#                   6.12 VM, where dkms compiles the module under TCG
#                   (selftests/deb/check_deb_vm.sh; about 25 min, so not in
#                   make check)
#
# Debian packages: debhelper, dh-dkms, lintian, fakeroot (in deps).

DEB_OUT := $(BUILD)/deb

.PHONY: deb check-deb check-deb-vm
deb:
	@DEB_OUT=$(DEB_OUT) $(TOP)/selftests/deb/build_deb.sh

check-deb: deb
	@DEB_OUT=$(DEB_OUT) KCOLL_VM="$(KCOLL_VM)" $(TOP)/selftests/deb/check_deb.sh

check-deb-vm: deb
	@DEB_OUT=$(DEB_OUT) KCOLL_VM="$(KCOLL_VM)" $(TOP)/selftests/deb/check_deb_vm.sh
