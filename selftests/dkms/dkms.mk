# SPDX-License-Identifier: GPL-2.0
#
# Installing the module: with Debian's dkms (dkms.conf), and without it
# (make install-module, kmod/kmod.mk) inside VMs.
#
#   make dkms-check       dkms add/build/install/remove against 6.1 and 6.12
#   make check-version    dkms.conf and kmod/kcoll_version.h agree
#   make check-vm-install make install-module and modprobe in a VM per kernel

.PHONY: dkms-check check-version check-vm-install

# Install with Debian's dkms against 6.1 and 6.12, check, remove (root).
dkms-check:
	@$(TOP)/selftests/dkms/dkms_check.sh

check-version:
	@v1=$$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf); \
	v2=$$(sed -n 's/^#define[[:space:]]*KCOLL_VERSION[[:space:]]*"\(.*\)"$$/\1/p' kmod/kcoll_version.h); \
	[ -n "$$v1" ] && [ "$$v1" = "$$v2" ] || { \
		echo "check-version: dkms.conf says '$$v1', kmod/kcoll_version.h says '$$v2'" >&2; \
		exit 1; }

# In a VM of each kernel: make install-module into the VM's module tree
# (a writable overlay), then modprobe kcoll resolves its dependencies.
# Not in `check`: depmod -a reads the whole module tree over 9p, 4-6
# minutes per kernel under TCG.
check-vm-install: module module-6.12
	$(KCOLL_VM) run -n 1 -t 600 --kernel 6.1 -- $(TOP)/selftests/dkms/install_module_vm.sh \
		$(TOP) $(TOP)/kcoll.ko
	$(KCOLL_VM) run -n 1 -t 600 --kernel 6.12 -- $(TOP)/selftests/dkms/install_module_vm.sh \
		$(TOP) $(BUILD)/kmod-6.12/kcoll.ko
