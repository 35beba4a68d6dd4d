# SPDX-License-Identifier: GPL-2.0
#
# The kernel module (Kbuild writes .o/.ko next to the sources, see
# .gitignore; the file list is ./Kbuild).
#
#   make module          kcoll.ko in the tree, against KDIR (newest 6.1 headers)
#   make module-6.12     kcoll.ko against the 6.12 headers, in $(BUILD)/kmod-6.12
#   make module-w1       W=1 builds from scratch against 6.1 and 6.12; any
#                        warning fails
#   make module-info     modinfo sanity of the in-tree kcoll.ko
#   make install-module  a built kcoll.ko into DESTDIR/lib/modules/KREL/updates/,
#                        udev/60-kcoll.rules into DESTDIR/usr/lib/udev/rules.d/

# Newest installed headers of a series, generic flavour (not -cloud/-rt).
kc_newest_headers = $(patsubst /usr/src/linux-headers-%,%,$(lastword $(shell \
	ls -d /usr/src/linux-headers-$(1).*-amd64 2>/dev/null | \
	grep -Ev -- '-(cloud|rt)-amd64$$' | sort -V)))

ifeq ($(origin KVER61),undefined)
KVER61 := $(call kc_newest_headers,6.1)
endif
ifeq ($(origin KVER612),undefined)
KVER612 := $(call kc_newest_headers,6.12)
endif
KDIR ?= /usr/src/linux-headers-$(KVER61)
KDIR612 ?= /usr/src/linux-headers-$(KVER612)

# Debian 6.12 headers ship vmlinux and CONFIG_DEBUG_INFO_BTF_MODULES=y, so
# the module build runs pahole (package dwarves); without it, skip BTF.
KC_BTF_ARGS = $(if $(shell command -v pahole 2>/dev/null),,CONFIG_DEBUG_INFO_BTF_MODULES=)

# Kernel builds use every core unless the caller already runs make -jN.
KC_KJOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc))

# What a copy of the tree needs to build the module out of $(TOP).
KMOD_SRCS = Kbuild $(wildcard kmod/*.[ch] algo/*.[ch] uapi/linux/*.h)

# $(call kc_need_kdir,dir,series): fail early with a hint.
kc_need_kdir = [ -f $(1)/Makefile ] || { \
	echo "kernel $(2) headers not found at '$(1)'; run 'make deps' or set KDIR" >&2; \
	exit 1; }

# $(call kc_sync,dir): make dir/ hold exactly KMOD_SRCS.  Files that changed
# are copied with a fresh mtime so Kbuild rebuilds them; stale ones go.
kc_sync = mkdir -p $(1) && \
	for f in $(KMOD_SRCS); do \
		cmp -s $$f $(1)/$$f || { mkdir -p $$(dirname $(1)/$$f) && cp $$f $(1)/$$f; } || exit 1; \
	done && \
	( cd $(1) && find kmod algo uapi -name '*.[ch]' 2>/dev/null ) | \
	while read -r f; do [ -e "$$f" ] || rm -f $(1)/$$f; done

.PHONY: module module-6.12 module-w1 module-w1-6.1 module-w1-6.12 \
	module-clean module-info

module:
	@$(call kc_need_kdir,$(KDIR),6.1)
	$(MAKE) $(KC_KJOBS) -C $(KDIR) M=$(TOP) modules

module-6.12:
	@$(call kc_need_kdir,$(KDIR612),6.12)
	@$(call kc_sync,$(BUILD)/kmod-6.12)
	$(MAKE) $(KC_KJOBS) -C $(KDIR612) M=$(BUILD)/kmod-6.12 $(KC_BTF_ARGS) modules

# $(call kc_w1,series,kdir,extra make args): build a fresh copy with W=1,
# log to $(BUILD)/kmod-w1-<series>.log, fail on any "warning:".
# $(call kc_kwarn,name,series,kdir,kbuild args): a clean module build in
# build/kmod-<name>-<series> that fails on any warning (W=1, sparse).
define kc_kwarn
	@$(call kc_need_kdir,$(3),$(2))
	@d=$(BUILD)/kmod-$(1)-$(2); rm -rf $$d; \
	$(call kc_sync,$$d) || exit 1; \
	echo "  $(1)  kcoll.ko against $(notdir $(3))"; \
	if ! $(MAKE) $(KC_KJOBS) --no-print-directory -C $(3) M=$$d $(4) modules >$$d.log 2>&1; then \
		cat $$d.log; echo "$(1): build against $(2) failed (log: $$d.log)" >&2; exit 1; \
	fi; \
	n=$$(grep -ci 'warning:' $$d.log || true); \
	if [ "$$n" != 0 ]; then grep -i 'warning:' $$d.log; \
		echo "$(1): $$n warnings against $(2) (log: $$d.log)" >&2; exit 1; \
	fi; \
	echo "  $(1)  $(2): 0 warnings"
endef
kc_w1 = $(call kc_kwarn,w1,$(1),$(2),W=1 $(3))

module-w1: module-w1-6.1 module-w1-6.12

module-w1-6.1:
	$(call kc_w1,6.1,$(KDIR))

module-w1-6.12:
	$(call kc_w1,6.12,$(KDIR612),$(KC_BTF_ARGS))

# Without DKMS: copy a built module to DESTDIR/lib/modules/KREL/updates/
# and run depmod there, as DKMS does, so `modprobe kcoll` finds it and
# loads ib_core and rdma_cm first.  Defaults: the 6.1 build (kcoll.ko) and
# the release of its headers; KCOLL_KO and KREL choose another
# (e.g. KCOLL_KO=build/kmod-6.12/kcoll.ko KREL=6.12.117+deb12-amd64).
# The udev rule goes with it: without it the node is 0600 root.
KCOLL_KO ?= $(TOP)/kcoll.ko
KREL ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
.PHONY: install-module
install-module:
	@[ -f "$(KCOLL_KO)" ] || { echo "install-module: no $(KCOLL_KO); run 'make module' first" >&2; exit 1; }
	@vm=$$($(MODINFO) -F vermagic $(KCOLL_KO)); case "$$vm" in "$(KREL) "*) ;; \
		*) echo "install-module: $(KCOLL_KO) is for '$${vm%% *}', not '$(KREL)'" >&2; exit 1;; esac
	install -D -m 0644 $(KCOLL_KO) $(DESTDIR)/lib/modules/$(KREL)/updates/kcoll.ko
	depmod $(if $(DESTDIR),-b $(DESTDIR)) -a $(KREL)
	install -D -m 0644 $(TOP)/udev/60-kcoll.rules $(DESTDIR)/usr/lib/udev/rules.d/60-kcoll.rules
	@[ -n "$(DESTDIR)" ] || getent group kcoll >/dev/null || echo "install-module: there is no" \
		"group kcoll, so udev leaves /dev/kcoll 0600 root: create it with 'groupadd -r kcoll'" >&2

module-info:
	@m=$(TOP)/kcoll.ko; [ -f $$m ] || { echo "no $$m; run 'make module'" >&2; exit 1; }; \
	lic=$$($(MODINFO) -F license $$m); dep=$$($(MODINFO) -F depends $$m); \
	vm=$$($(MODINFO) -F vermagic $$m); rel=$$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$$/\1/p' $(KDIR)/include/generated/utsrelease.h); \
	echo "  kcoll.ko: license=$$lic depends=$${dep:-none} vermagic=$$vm"; \
	[ "$$lic" = GPL ] || { echo "module-info: license is '$$lic', expected GPL" >&2; exit 1; }; \
	case "$$vm" in "$$rel "*) ;; *) echo "module-info: vermagic '$$vm' is not $$rel" >&2; exit 1;; esac

# Kbuild's own `clean` would sweep every *.o/*.a under $(TOP), build/
# included, and needs KDIR; remove exactly what the in-tree build writes.
module-clean:
	rm -f kcoll.ko kcoll.o kcoll.mod kcoll.mod.c kcoll.mod.o .module-common.o \
		Module.symvers modules.order .*.cmd \
		kmod/*.o kmod/.*.cmd kmod/.*.d algo/*.o algo/.*.cmd algo/.*.d
	rm -rf .tmp_versions $(BUILD)/kmod-6.12 $(BUILD)/kmod-w1-*

