# SPDX-License-Identifier: GPL-2.0
#
# kcoll top-level Makefile: the global variables, `deps`, `check`, the
# targets that gather several parts, and the fragments that hold each
# part's rules (FOLDER/NAME.mk, listed below, each with its targets in its
# header).
#
#   make deps        install every Debian package the build and tests need
#   make             user-space objects, tools and tests under build/, and
#                    kcoll.ko against KDIR (Debian's 6.1 headers by default)
#   make check       every test the project has (what CI runs)
#   make check-algo  the user-space algorithm suite, every rank count up to
#                    128 (SAN=1: ASan + UBSan; QUICK=1: up to 33, as in check)
#   make demo        4 VMs (Debian 6.1, soft-RoCE) run an AllReduce sweep through kcoll.ko
#   make fuzz        10^6 fuzzed ioctls on /dev/kcoll in a VM of 6.1 and of 6.12
#   make bench-plan  time and memory to build plans for 65,536 ranks
#   make install     libcoll, coll-perf, collctl, coll-sim and their man
#                    pages into $(DESTDIR)$(PREFIX) (PREFIX=/usr/local)
#   make uninstall   removes exactly what make install put there
#   make deb         the Debian packages in build/deb/ (selftests/deb/deb.mk)
#
# When invoked by Kbuild (KERNELRELEASE set) this file defers to ./Kbuild.

ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD ?= $(TOP)/build
SAN ?= 0

# ---------------------------------------------------------------- user space
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
CSTD := -std=c11 -D_GNU_SOURCE
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT ?= -O2 -g
ifeq ($(SAN),1)
OPT := -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
OBJDIR := $(BUILD)/san
else
SANFLAGS :=
OBJDIR := $(BUILD)/obj
endif
KSFT_DIR := $(BUILD)/ksft
CFLAGS_US := $(CSTD) $(WARN) $(OPT) $(SANFLAGS) -I$(TOP) -I$(TOP)/algo -MMD -MP
LDFLAGS_US := $(SANFLAGS) -pthread -lm

JSONC_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSONC_LIBS := $(or $(shell pkg-config --libs json-c 2>/dev/null),-ljson-c)
LIBNL_CFLAGS := $(or $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null),-I/usr/include/libnl3)
LIBNL_LIBS := $(or $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null),-lnl-genl-3 -lnl-3)

# Where `make install` puts things.
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man

# What the tool fragments install (install-tools): programs into BINDIR,
# man pages into MANDIR/man1 and man8.
TOOLS_BIN :=
TOOLS_MAN1 :=
TOOLS_MAN8 :=

MODINFO ?= $(or $(shell command -v modinfo 2>/dev/null),/sbin/modinfo)
KC_SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

# $(call kc_apt_ensure,packages): install what is missing, silent otherwise.
kc_apt_ensure = have=" $$(dpkg-query -W -f='$${Package}=$${db:Status-Status} ' $(1) 2>/dev/null) "; \
	missing=; \
	for p in $(1); do \
		case "$$have" in *" $$p=installed "*) ;; *) missing="$$missing $$p";; esac; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		$(KC_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(KC_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $$missing; \
	fi

# Single files from Debian's linux-source-6.1 (GPL-2.0 kernel code, used
# at build time, not vendored): the kselftest harness, checkpatch and
# kernel-doc.
KSRC61_TAR := /usr/src/linux-source-6.1.tar.xz
CHECKPATCH_DIR := $(BUILD)/checkpatch
CHECKPATCH := $(CHECKPATCH_DIR)/checkpatch.pl
KSRC_KSFT := kselftest_harness.h kselftest.h
KSRC_CHECKPATCH := checkpatch.pl spelling.txt const_structs.checkpatch kernel-doc
KSRC_FILES := $(KSRC_KSFT:%=$(KSFT_DIR)/%) $(KSRC_CHECKPATCH:%=$(CHECKPATCH_DIR)/%)


.DEFAULT_GOAL := all

$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_US) -isystem $(KSFT_DIR) -c $< -o $@

# ---------------------------------------------------------------- the parts
# In this order: a fragment may use in its rules' targets and
# prerequisites what the ones before it define.
include algo/algo.mk
include kmod/kmod.mk
include lib/lib.mk
include tools/common/common.mk
include tools/threads/threads.mk
include tools/coll-perf/coll-perf.mk
include tools/collctl/collctl.mk
include tools/sim/sim.mk
include tools/bench/bench.mk
include tools/vm/vm.mk
include selftests/algo/algo.mk
include selftests/sim/sim.mk
include selftests/lib/lib.mk
include selftests/kcoll/kcoll.mk
include selftests/dkms/dkms.mk
include selftests/deb/deb.mk
include selftests/lint/lint.mk

# ---------------------------------------------------------------- gathered
#   make sim           build/bin/coll-sim, the selftests/sim programs and
#                      bench_select
#   make coll-tools    build/bin/coll-perf and build/bin/collctl (and the
#                      cluster test program selftests/lib/vm_async)
#   make install-tools coll-perf, collctl and coll-sim into
#                      $(DESTDIR)$(PREFIX)/bin, their man pages into MANDIR
#   make install       install-lib and install-tools
#   make uninstall     uninstall-lib and uninstall-tools: exactly those files
.PHONY: all userspace sim coll-tools install install-tools clean uninstall uninstall-tools
all: userspace module

userspace: $(ALGO_LIB) $(ALGO_TESTS) $(BENCH_PLAN) $(DEMO_SIM) libcoll coll-tools sim \
	kcoll-tests

sim: $(COLL_SIM) $(SIM_TESTS) $(BENCH_SELECT)

coll-tools: $(COLL_PERF) $(COLLCTL) $(LIB_VM_TESTS)

install-tools: coll-tools $(COLL_SIM)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(TOOLS_BIN) $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 $(TOOLS_MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(TOOLS_MAN8) $(DESTDIR)$(MANDIR)/man8/

install: install-lib install-tools

uninstall-tools:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(TOOLS_BIN))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(TOOLS_MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(TOOLS_MAN8)))

uninstall: uninstall-lib uninstall-tools

-include $(shell find $(OBJDIR) -type f -name '*.d' 2>/dev/null)

clean:
	rm -rf $(BUILD)
	$(MAKE) module-clean

# ---------------------------------------------------------------- deps
# Everything the build and the tests need, from Debian.  The 6.12 headers
# depend on a 6.12 kernel image (and so pull initramfs-tools); acceptable.
DEB_PKGS := build-essential linux-headers-amd64 linux-headers-6.12-amd64 \
	dwarves linux-source-6.1 libjson-c-dev libnl-genl-3-dev pkg-config \
	librdmacm-dev libibverbs-dev \
	gnuplot-nox sparse cppcheck dkms g++ $(VM_DEB_PACKAGES) \
	bc bison flex libelf-dev libssl-dev patch \
	debhelper dh-dkms lintian fakeroot

$(KSRC61_TAR):
	@$(call kc_apt_ensure,linux-source-6.1)

# One pass over the tarball for all its members (it takes a while).
$(KSRC_FILES) &: | $(KSRC61_TAR)
	@echo "deps: extracting kselftest harness and checkpatch from $(KSRC61_TAR)"
	@t=$(BUILD)/ksrc.tmp; p=$(notdir $(KSRC61_TAR:.tar.xz=)); \
	rm -rf $$t && mkdir -p $$t $(KSFT_DIR) $(CHECKPATCH_DIR) && \
	tar -xJf $(KSRC61_TAR) -C $$t \
		$(KSRC_KSFT:%=$$p/tools/testing/selftests/%) \
		$(KSRC_CHECKPATCH:%=$$p/scripts/%) && \
	cp $(KSRC_KSFT:%=$$t/$$p/tools/testing/selftests/%) $(KSFT_DIR)/ && \
	cp $(KSRC_CHECKPATCH:%=$$t/$$p/scripts/%) $(CHECKPATCH_DIR)/ && \
	touch $(KSRC_FILES) && rm -rf $$t

deps-ksrc: $(KSRC_FILES)

# apt first, then (a fresh make that sees what apt installed) the tarball.
deps:
	@$(call kc_apt_ensure,$(DEB_PKGS))
	@$(MAKE) -s --no-print-directory deps-ksrc

.PHONY: deps deps-ksrc

# ---------------------------------------------------------------- check
# Runs every step, then prints one line per step; fails if any failed.
# Each step's output is also kept in build/check/STEP.log, and the last
# KC_CHECK_TAIL lines of every failed step are printed again after the
# summary: a CI report may keep only the end of a long log.
KC_CHECK_TAIL ?= 30
KC_CHECK_STEPS := \
	"build everything|all" \
	"lint: checkpatch, uapi alone, cppcheck, sparse, W=1 6.1 + 6.12|lint" \
	"algo suite, quick sweep|check-algo QUICK=1" \
	"algo suite, quick sweep, ASan+UBSan|check-algo SAN=1 QUICK=1" \
	"simulator conformance, HCCL_ALGO parser, selection|check-sim" \
	"libcoll unit tests|check-lib" \
	"libcoll unit tests, ASan+UBSan|check-lib SAN=1" \
	"libcoll install + pkg-config|check-lib-install" \
	"kcoll.ko modinfo|module-info" \
	"dkms.conf version|check-version" \
	"dkms add/build/install/remove, 6.1 + 6.12|dkms-check" \
	"Debian packages: build, lintian, install round trip|check-deb" \
	"virtual cluster smoke, 6.1 + 6.12|check-vm-smoke" \
	"kcoll.ko loads in VMs, 6.1 + 6.12|check-vm-modload" \
	"kcoll.ko kselftests + killed rank in VMs, 6.1 + 6.12|check-vm" \
	"kcoll.ko connect on need, 32 ranks (4 VMs x 8), 6.1 + 6.12|check-vm-on-need" \
	"libcoll and tools end to end in VMs|check-vm-lib"

.PHONY: check
check: deps
	@rc=0; sum=; failed=(); i=0; logs=$(BUILD)/check; \
	rm -rf "$$logs"; mkdir -p "$$logs"; \
	for s in $(KC_CHECK_STEPS); do \
		name=$${s%%|*}; args=$${s#*|}; i=$$((i + 1)); \
		log=$$logs/$$(printf '%02d' $$i)-$${args// /_}.log; \
		echo "=== check: $$name (make $$args)"; \
		$(MAKE) --no-print-directory $$args 2>&1 | tee "$$log"; \
		if [ "$${PIPESTATUS[0]}" = 0 ]; then r=PASS; else r=FAIL; rc=1; failed+=("$$log"); fi; \
		sum="$$sum$$(printf '  %-4s  %s' $$r "$$name")\n"; \
	done; \
	printf '\n=== kcoll check summary (logs in %s)\n'"$$sum" "$$logs"; \
	for log in "$${failed[@]}"; do \
		printf '=== check: last $(KC_CHECK_TAIL) lines of %s\n' "$$log"; \
		tail -n $(KC_CHECK_TAIL) "$$log"; \
	done; \
	if [ $$rc = 0 ]; then echo "=== check: all passed"; else echo "=== check: FAILED"; fi; \
	exit $$rc

# Last: it adds to DEB_PKGS and KC_CHECK_STEPS, defined above.
include lib/mpi/mpi.mk
include lib/torch/torch.mk


endif # KERNELRELEASE
