# SPDX-License-Identifier: GPL-2.0
#
# kcoll top-level Makefile.
#
#   make deps        install every Debian package the build and tests need
#   make             user-space objects, tools and tests under build/, and
#                    kcoll.ko against KDIR (Debian's 6.1 headers by default)
#   make check       every test the project has (what CI runs)
#   make check-algo  the user-space algorithm suite (SAN=1: ASan + UBSan;
#                    FULL=1: every rank count up to 128)
#   make demo        simulated 8-rank AllReduce (until the virtual cluster)
#   make bench-plan  time and memory to build plans for 65,536 ranks
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

ALGO_SRCS := $(sort $(wildcard algo/*.c))
ALGO_OBJS := $(ALGO_SRCS:%.c=$(OBJDIR)/%.o)
ALGO_LIB := $(OBJDIR)/libkcalgo.a

# Test programs of the algorithm suite: one binary per selftests/algo/test_*.c,
# linked with the shared helpers selftests/algo/lib_*.c.
ALGO_TEST_SRCS := $(sort $(wildcard selftests/algo/test_*.c))
ALGO_TEST_LIBSRCS := $(sort $(wildcard selftests/algo/lib_*.c))
ALGO_TEST_LIBOBJS := $(ALGO_TEST_LIBSRCS:%.c=$(OBJDIR)/%.o)
ALGO_TESTS := $(ALGO_TEST_SRCS:selftests/algo/%.c=$(OBJDIR)/selftests/algo/%)

BENCH_PLAN := $(OBJDIR)/tools/bench_plan
DEMO_SIM := $(OBJDIR)/tools/demo_sim

.PHONY: all userspace deps check check-algo demo bench-plan clean module
.DEFAULT_GOAL := all

all: userspace module

userspace: $(ALGO_LIB) $(ALGO_TESTS) $(BENCH_PLAN) $(DEMO_SIM)

$(OBJDIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_US) -isystem $(KSFT_DIR) -c $< -o $@

$(ALGO_LIB): $(ALGO_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(OBJDIR)/selftests/algo/%: $(OBJDIR)/selftests/algo/%.o $(ALGO_TEST_LIBOBJS) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US)

# The demo and plan benchmark reuse the test build's threaded transport.
$(OBJDIR)/tools/%.o: CFLAGS_US += -I$(TOP)/selftests/algo

$(OBJDIR)/tools/%: $(OBJDIR)/tools/%.o $(ALGO_TEST_LIBOBJS) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US)

# The test helpers include the kselftest harness, extracted by `make deps`.
$(ALGO_TEST_LIBOBJS) $(ALGO_TESTS:%=%.o): | $(KSFT_DIR)/kselftest_harness.h

# FULL=1: rank counts 1..33, 48, 64, 100, 128 (slow); default: 1..9, 16, 33.
FULL ?= 0
check-algo: $(ALGO_TESTS)
	@set -e; fail=0; for t in $(ALGO_TESTS); do \
		echo "# running $${t#$(TOP)/}"; \
		KC_TEST_QUICK=$(if $(filter 1,$(FULL)),0,1) $$t || fail=1; \
	done; exit $$fail

demo: $(DEMO_SIM)
	$(DEMO_SIM)

bench-plan: $(BENCH_PLAN)
	$(BENCH_PLAN)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

clean:
	rm -rf $(BUILD)
	$(MAKE) module-clean

# >>> kernel module, deps, check (owned by the build section below)
#
# Kernel module (Kbuild writes .o/.ko next to the sources, see .gitignore),
# Debian dependencies, files taken from Debian's linux-source-6.1, and the
# `check` that CI runs (.ci/run).
#
#   make module          kcoll.ko in the tree, against KDIR (newest 6.1 headers)
#   make module-6.12     kcoll.ko against the 6.12 headers, in $(BUILD)/kmod-6.12
#   make module-w1       W=1 builds from scratch against 6.1 and 6.12; any
#                        warning fails
#   make module-info     modinfo sanity of the in-tree kcoll.ko
#   make checkpatch      checkpatch --strict on kmod/ and the uapi header
#   make check-version   dkms.conf and kmod/kcoll_version.h agree

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
	module-clean module-info deps deps-ksrc check checkpatch check-version

module:
	@$(call kc_need_kdir,$(KDIR),6.1)
	$(MAKE) $(KC_KJOBS) -C $(KDIR) M=$(TOP) modules

module-6.12:
	@$(call kc_need_kdir,$(KDIR612),6.12)
	@$(call kc_sync,$(BUILD)/kmod-6.12)
	$(MAKE) $(KC_KJOBS) -C $(KDIR612) M=$(BUILD)/kmod-6.12 $(KC_BTF_ARGS) modules

# $(call kc_w1,series,kdir,extra make args): build a fresh copy with W=1,
# log to $(BUILD)/kmod-w1-<series>.log, fail on any "warning:".
define kc_w1
	@$(call kc_need_kdir,$(2),$(1))
	@d=$(BUILD)/kmod-w1-$(1); rm -rf $$d; \
	$(call kc_sync,$$d) || exit 1; \
	echo "  W=1     kcoll.ko against $(notdir $(2))"; \
	if ! $(MAKE) $(KC_KJOBS) --no-print-directory -C $(2) M=$$d W=1 $(3) modules >$$d.log 2>&1; then \
		cat $$d.log; echo "module-w1: build against $(1) failed (log: $$d.log)" >&2; exit 1; \
	fi; \
	if grep -i 'warning:' $$d.log; then \
		echo "module-w1: warnings against $(1) (log: $$d.log)" >&2; exit 1; \
	fi; \
	echo "  W=1     $(1): 0 warnings"
endef

module-w1: module-w1-6.1 module-w1-6.12

module-w1-6.1:
	$(call kc_w1,6.1,$(KDIR))

module-w1-6.12:
	$(call kc_w1,6.12,$(KDIR612),$(KC_BTF_ARGS))

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

# ---------------------------------------------------------------- deps
# Everything the build and the tests need, from Debian.  The 6.12 headers
# depend on a 6.12 kernel image (and so pull initramfs-tools); acceptable.
DEB_PKGS := build-essential linux-headers-amd64 linux-headers-6.12-amd64 \
	dwarves linux-source-6.1 libjson-c-dev libnl-genl-3-dev pkg-config \
	gnuplot-nox sparse cppcheck

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
# at build time, not vendored): the kselftest harness and checkpatch.
KSRC61_TAR := /usr/src/linux-source-6.1.tar.xz
CHECKPATCH_DIR := $(BUILD)/checkpatch
CHECKPATCH := $(CHECKPATCH_DIR)/checkpatch.pl
KSRC_KSFT := kselftest_harness.h kselftest.h
KSRC_CHECKPATCH := checkpatch.pl spelling.txt const_structs.checkpatch
KSRC_FILES := $(KSRC_KSFT:%=$(KSFT_DIR)/%) $(KSRC_CHECKPATCH:%=$(CHECKPATCH_DIR)/%)

$(KSRC61_TAR):
	@$(call kc_apt_ensure,linux-source-6.1)

# One pass over the tarball for all five members (it takes a while).
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

# ---------------------------------------------------------------- checks
checkpatch: $(CHECKPATCH)
	$(CHECKPATCH) --no-tree -f --strict $(wildcard kmod/*.c kmod/*.h) uapi/linux/kcoll.h

check-version:
	@v1=$$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf); \
	v2=$$(sed -n 's/^#define[[:space:]]*KCOLL_VERSION[[:space:]]*"\(.*\)"$$/\1/p' kmod/kcoll_version.h); \
	[ -n "$$v1" ] && [ "$$v1" = "$$v2" ] || { \
		echo "check-version: dkms.conf says '$$v1', kmod/kcoll_version.h says '$$v2'" >&2; \
		exit 1; }

# Runs every step, then prints one line per step; fails if any failed.
KC_CHECK_STEPS := \
	"build everything|all" \
	"algo suite|check-algo" \
	"algo suite with ASan+UBSan|check-algo SAN=1" \
	"kcoll.ko modinfo|module-info" \
	"kcoll.ko W=1, 6.1 + 6.12|module-w1" \
	"dkms.conf version|check-version"

check: deps
	@rc=0; sum=; \
	for s in $(KC_CHECK_STEPS); do \
		name=$${s%%|*}; args=$${s#*|}; \
		echo "=== check: $$name (make $$args)"; \
		if $(MAKE) --no-print-directory $$args; then r=PASS; else r=FAIL; rc=1; fi; \
		sum="$$sum$$(printf '  %-4s  %s' $$r "$$name")\n"; \
	done; \
	printf '\n=== kcoll check summary\n'"$$sum"; \
	if [ $$rc = 0 ]; then echo "=== check: all passed"; else echo "=== check: FAILED"; fi; \
	exit $$rc
# <<<

endif # KERNELRELEASE
