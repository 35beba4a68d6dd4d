# SPDX-License-Identifier: GPL-2.0
#
# libcoll's and the tools' tests: unit tests (selftests/lib/test_*.c, no
# module needed), the README example, and the end-to-end runs in the
# virtual cluster (vm_*.sh and vm_async).
#
#   make check-lib     the selftests/lib suite (SAN=1: ASan + UBSan)
#   make check-lib-install  install-lib into a scratch DESTDIR and build the
#                      README example (selftests/lib/example.c) with pkg-config
#   make check-vm-lib  selftests/lib/vm_e2e.sh on 2 VMs (coll-perf, collctl,
#                      the async API; uses coll-perf-san if built with SAN=1),
#                      then vm_persist.sh (1 VM booted twice), then collctl
#                      doctor's pair checks on 4 VMs, healthy and with one
#                      node's RoCE deleted (vm_doctor.sh, two short boots)

LIB_TEST_SRCS := $(sort $(wildcard selftests/lib/test_*.c))
LIB_TESTS := $(LIB_TEST_SRCS:selftests/lib/%.c=$(OBJDIR)/selftests/lib/%)

$(LIB_TESTS:%=%.o) $(OBJDIR)/selftests/lib/vm_async.o: CFLAGS_US += -I$(TOP)/lib $(JSONC_CFLAGS)
$(OBJDIR)/selftests/lib/test_collctl.o: \
	CFLAGS_US += -I$(TOP)/tools/collctl $(JSONC_CFLAGS) $(LIBNL_CFLAGS)
$(LIB_TESTS:%=%.o): | $(KSFT_DIR)/kselftest_harness.h

# collctl's parsers and formatters under test; it also runs collctl itself.
$(OBJDIR)/selftests/lib/test_collctl: $(COLLCTL_PARTS) $(ALGO_LIB)
# collctl_fmt.o names faults with libcoll (lib/coll_fault.c): the archive again, after it.
$(OBJDIR)/selftests/lib/test_collctl: LDFLAGS_US += $(COLL_A) $(LIBNL_LIBS)
# collctl calibrate's fit against the module's model, no cluster needed.
$(OBJDIR)/selftests/lib/test_collctl_fit: $(OBJDIR)/tools/collctl/collctl_fit.o $(ALGO_LIB)
$(OBJDIR)/selftests/lib/test_collctl_fit.o: CFLAGS_US += -I$(TOP)/tools/collctl
# collctl ranktable's generator, its tables read back by libcoll's parser.
$(OBJDIR)/selftests/lib/test_collctl_ranktable: $(OBJDIR)/tools/collctl/collctl_ranktable.o \
	$(TOOLS_COMMON_OBJS)
$(OBJDIR)/selftests/lib/test_collctl_ranktable.o: CFLAGS_US += -I$(TOP)/tools/collctl
# The tools' shared size and range parser (tools/common/size.c).
$(OBJDIR)/selftests/lib/test_size: $(TOOLS_COMMON_OBJS)
$(OBJDIR)/selftests/lib/test_size.o: CFLAGS_US += $(TOOLS_COMMON_CFLAGS)

# The end-to-end programs of the virtual cluster (selftests/lib/vm_e2e.sh).
LIB_VM_TESTS := $(OBJDIR)/selftests/lib/vm_async

$(OBJDIR)/selftests/lib/%: $(OBJDIR)/selftests/lib/%.o $(COLL_A)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS)

.PHONY: check-lib
# test_tool_args.sh: the tools' messages for bad arguments, --help, -V.
check-lib: $(LIB_TESTS) $(COLLCTL) $(COLL_SIM) $(COLL_PERF)
	@fail=0; for t in $(LIB_TESTS); do \
		echo "# running $${t#$(TOP)/}"; \
		COLL_TEST_DATA=$(TOP)/selftests/lib/data COLLCTL_BIN=$(COLLCTL) $$t || fail=1; \
	done; \
	echo "# running selftests/lib/test_tool_args.sh"; \
	$(TOP)/selftests/lib/test_tool_args.sh $(COLL_SIM) $(COLL_PERF) $(COLLCTL) || fail=1; \
	echo "# running selftests/lib/test_bad_input.sh"; \
	COLL_SIM_BIN=$(COLL_SIM) COLLCTL_BIN=$(COLLCTL) \
		$(TOP)/selftests/lib/test_bad_input.sh || fail=1; \
	exit $$fail

# End to end in the virtual cluster: every op checked by coll-perf, the
# asynchronous API, collctl (with the netlink family), a mismatch that
# must be caught, then rmmod (the family and device go cleanly; needs
# root, see tools/vm/).  KCOLL_VM_ARGS adds runner options (e.g. "-k 2").
# Then collctl config --persist across a reboot: two boots of one VM
# (selftests/lib/vm_persist.sh).
KCOLL_VM_ARGS ?=
.PHONY: check-vm-lib
check-vm-lib: module coll-tools
	$(KCOLL_VM) run -n 2 -t 1200 $(KCOLL_VM_ARGS) --module $(TOP)/kcoll.ko --rmmod -- \
		$(TOP)/selftests/lib/vm_e2e.sh
	KCOLL_VM="$(KCOLL_VM)" $(TOP)/selftests/lib/vm_persist.sh $(TOP)/kcoll.ko
	$(KCOLL_VM) run -n 4 -t 400 --module $(TOP)/kcoll.ko -- \
		$(TOP)/selftests/lib/vm_doctor.sh healthy
	$(KCOLL_VM) run -n 4 -t 400 --module $(TOP)/kcoll.ko -f rxe-del:node=3,at=0 -- \
		$(TOP)/selftests/lib/vm_doctor.sh broken

# Forced algorithms of 4 servers x 2 ranks run as configured, or the
# fallback is reported (selftests/lib/vm_forced.sh; 4 VMs, -k 2).
.PHONY: check-vm-forced
check-vm-forced: module coll-tools
	$(KCOLL_VM) run -n 4 -k 2 -t 900 --module $(TOP)/kcoll.ko --rmmod -- \
		$(TOP)/selftests/lib/vm_forced.sh

# The same on the 6.12 kernel (module built by module-6.12).
.PHONY: check-vm-lib-6.12
check-vm-lib-6.12: module-6.12 coll-tools
	$(KCOLL_VM) run -n 2 -t 1200 --kernel 6.12 $(KCOLL_VM_ARGS) \
		--module $(BUILD)/kmod-6.12/kcoll.ko --rmmod -- $(TOP)/selftests/lib/vm_e2e.sh

# make install-lib into a scratch DESTDIR, build selftests/lib/example.c
# with `pkg-config --cflags --libs libcoll` from there, run it (without
# the module it must fail saying to load it).
.PHONY: check-lib-install
check-lib-install:
	@sed -n '/^```c$$/,/^```$$/p' README.md | sed '1d;$$d' | diff -u selftests/lib/example.c - || \
		{ echo "check-lib-install: README's example differs from selftests/lib/example.c" >&2; exit 1; }
	@d=$(BUILD)/install-test; rm -rf $$d; \
	$(MAKE) --no-print-directory -s install-lib DESTDIR=$$d PREFIX=/usr/local && \
	flags=$$(PKG_CONFIG_SYSROOT_DIR=$$d PKG_CONFIG_PATH=$$d/usr/local/lib/pkgconfig \
		pkg-config --cflags --libs libcoll) && echo "  pkg-config libcoll: $$flags" && \
	$(CC) -std=c11 -Wall -Wextra -Werror -o $$d/example selftests/lib/example.c $$flags && \
	out=$$(KCOLL_RANKTABLE=/nonexistent LD_LIBRARY_PATH=$$d/usr/local/lib $$d/example 2>&1); \
	echo "  example: $$out"; \
	case "$$out" in *"cannot open rank table /nonexistent"*) echo "  check-lib-install: OK";; \
	*) echo "check-lib-install: unexpected output" >&2; exit 1;; esac
