# SPDX-License-Identifier: GPL-2.0
#
# The module's kselftests (selftests/kcoll/), run inside the virtual
# cluster (tools/vm/kcoll-vm run -n N --module kcoll.ko -- TEST).
#
#   make kcoll-tests   build them
#   make check-vm      the suite and three faults on 6.1 and 6.12
#   make check-vm-faults, check-vm-asym, check-vm-big, check-vm-layouts,
#        soak, fuzz    the same binaries in other layouts and lengths (below)
#   make check-debug   the suite under a debug kernel (below)

KCOLL_SUITE := kcoll_badinput kcoll_limits kcoll_account kcoll_observe kcoll_connect kcoll_auth \
	kcoll_listen kcoll_ioctl kcoll_test kcoll_mismatch kcoll_matrix kcoll_soak kcoll_fuzz kcoll_regress \
	kcoll_lifetime kcoll_history kcoll_leave kcoll_stall
KCOLL_TESTS := $(KCOLL_SUITE:%=$(OBJDIR)/selftests/kcoll/%) $(OBJDIR)/selftests/kcoll/kcoll_fault \
	$(OBJDIR)/selftests/kcoll/kcoll_death $(OBJDIR)/selftests/kcoll/kcoll_shrink \
	$(OBJDIR)/selftests/kcoll/kcoll_on_need

.PHONY: kcoll-tests
kcoll-tests: $(KCOLL_TESTS)

$(KCOLL_TESTS:%=%.o): | $(KSFT_DIR)/kselftest_harness.h
# The 6.1 harness defines FIXTURE_SETUP/TEARDOWN functions non-static.
$(KCOLL_TESTS:%=%.o): CFLAGS_US += -Wno-missing-prototypes

$(OBJDIR)/selftests/kcoll/%: $(OBJDIR)/selftests/kcoll/%.o
	$(CC) -o $@ $^ $(LDFLAGS_US)

# kcoll_auth plays impostors with librdmacm and OpenSSL and reads the
# refusal counters through collctl's netlink client.
KC_AUTH := $(OBJDIR)/selftests/kcoll/kcoll_auth
$(KC_AUTH).o: CFLAGS_US += -I$(TOP)/tools/collctl $(LIBNL_CFLAGS)
$(KC_AUTH): $(KC_AUTH).o $(OBJDIR)/tools/collctl/collctl_nl.o
	$(CC) -o $@ $^ $(LDFLAGS_US) $(LIBNL_LIBS) -lrdmacm -libverbs -lcrypto

# kcoll_listen plays requests the node's listener must refuse, the same way.
KC_LISTEN := $(OBJDIR)/selftests/kcoll/kcoll_listen
$(KC_LISTEN).o: CFLAGS_US += -I$(TOP)/tools/collctl $(LIBNL_CFLAGS)
$(KC_LISTEN): $(KC_LISTEN).o $(OBJDIR)/tools/collctl/collctl_nl.o
	$(CC) -o $@ $^ $(LDFLAGS_US) $(LIBNL_LIBS) -lrdmacm -libverbs -lcrypto

# kcoll_history reads the flight records through collctl's own client.
KC_HIST := $(OBJDIR)/selftests/kcoll/kcoll_history
KC_HIST_PARTS := $(addprefix $(OBJDIR)/tools/collctl/,collctl_nl.o collctl_history.o collctl_fmt.o) \
	$(OBJDIR)/lib/coll_fault.o
$(KC_HIST).o: CFLAGS_US += -I$(TOP)/tools/collctl $(JSONC_CFLAGS) $(LIBNL_CFLAGS)
$(KC_HIST): $(KC_HIST).o $(KC_HIST_PARTS) $(ALGO_LIB) $(COLL_A)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS) $(LIBNL_LIBS)

# kcoll_shrink runs its communicators through libcoll and reads which
# connections were reused through collctl's netlink client (and prints
# what collctl show says).
KC_SHRINK := $(OBJDIR)/selftests/kcoll/kcoll_shrink
$(KC_SHRINK).o: CFLAGS_US += -I$(TOP)/lib -I$(TOP)/tools/collctl $(JSONC_CFLAGS) $(LIBNL_CFLAGS)
$(KC_SHRINK): $(KC_SHRINK).o $(addprefix $(OBJDIR)/tools/collctl/,collctl_nl.o collctl_fmt.o) \
	$(COLL_A) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS) $(LIBNL_LIBS)

# kcoll_on_need counts the connections a communicator holds through
# collctl's netlink client, and prints what collctl show says.
KC_ON_NEED := $(OBJDIR)/selftests/kcoll/kcoll_on_need
$(KC_ON_NEED).o: CFLAGS_US += -I$(TOP)/tools/collctl $(JSONC_CFLAGS) $(LIBNL_CFLAGS)
$(KC_ON_NEED): $(KC_ON_NEED).o $(addprefix $(OBJDIR)/tools/collctl/,collctl_nl.o collctl_fmt.o) \
	$(COLL_A) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS) $(LIBNL_LIBS)

# kcoll_stall reads the stall record through collctl's netlink client.
KC_STALL := $(OBJDIR)/selftests/kcoll/kcoll_stall
$(KC_STALL).o: CFLAGS_US += -I$(TOP)/tools/collctl $(LIBNL_CFLAGS)
$(KC_STALL): $(KC_STALL).o $(OBJDIR)/tools/collctl/collctl_nl.o
	$(CC) -o $@ $^ $(LDFLAGS_US) $(LIBNL_LIBS)

# kcoll_account opens the device through libcoll as a user it refuses.
KC_ACCOUNT := $(OBJDIR)/selftests/kcoll/kcoll_account
$(KC_ACCOUNT).o: CFLAGS_US += -I$(TOP)/lib
$(KC_ACCOUNT): $(KC_ACCOUNT).o $(COLL_A) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS)

# kcoll_observe asks the generic netlink family with libnl-genl-3.
$(OBJDIR)/selftests/kcoll/kcoll_observe.o: CFLAGS_US += $(LIBNL_CFLAGS)
$(OBJDIR)/selftests/kcoll/kcoll_observe: LDFLAGS_US += $(LIBNL_LIBS)

# The ioctl fuzzer is kcoll_fuzz.c (the driver) and its parts.
KC_FUZZ_PARTS := $(patsubst %.c,$(OBJDIR)/%.o,$(sort $(wildcard selftests/kcoll/kcoll_fuzz_*.c)))
$(OBJDIR)/selftests/kcoll/kcoll_fuzz: $(KC_FUZZ_PARTS)

# The module's kselftests in the virtual cluster, per kernel (KVER=6.1 or
# 6.12; default both), each part a run of its own (~10 min per kernel):
#  - the whole suite on 4 VMs in one boot (bad input, limits, a creation
#    that waits while the file's other ioctls go on, collectives,
#    every operation x every algorithm up to 1 MiB, a 300-operation soak,
#    20000 fuzzed ioctls on each VM alone (kcoll_fuzz), the reproducers of
#    what the fuzzer found (kcoll_regress), then process death and
#    unloading, which reloads the module);
#  - faults on 3 VMs during an AllReduce loop (kcoll_fault): a rank killed,
#    node2's rxe device deleted, node2's VM frozen with a 3 s operation
#    timeout.  Each checks the errno of every survivor, the time bound, and
#    that the pinned pages come back; --rmmod then unloads the module;
#  - a dead node and abort on 4 VMs (kcoll_death, ~75 s): node3's network
#    cut mid-AllReduce is noticed by every survivor within 5 s, and
#    KCOLL_IOC_ABORT returns within 100 ms with the peer stopped, killed
#    or cut off; then in the same boot node3's VM killed mid-AllReduce,
#    and the survivors shrink and run 100 exact AllReduces over 3 ranks
#    (kcoll_shrink, last: node3 is gone after it).
KVER ?= 6.1 6.12
KC_MODULES = $(if $(filter 6.1,$(KVER)),module) $(if $(filter 6.12,$(KVER)),module-6.12)
KC_T := $(OBJDIR)/selftests/kcoll
KC_ASYM_PODS := 1,3
# The algorithms, from the table (algo/kc_algos.c: &kc_alg_<name> for
# alg_<name>.c), and those among them that build whole operations (.build).
KC_ALGO_NAMES = $(shell sed -n 's/^\t&kc_alg_\([a-z0-9_]*\),$$/\1/p' algo/kc_algos.c)
KC_ALGO_BUILDERS = $(foreach a,$(KC_ALGO_NAMES),$(if $(shell grep -l '\.build = ' algo/alg_$(a).c),$(a)))
kc_comma := ,
kc_space := $(subst ,, )
ASYM_ALGOS = $(subst $(kc_space),$(kc_comma),$(strip auto $(KC_ALGO_BUILDERS)))
KC_FAULT_TIMEOUT = 600
KC_FAULT_RUN = $(KCOLL_VM) run -n 3 -t $(KC_FAULT_TIMEOUT) --kernel $$v --module $$ko --rmmod \
	$(KC_FAULT_EXTRA) -e KCOLL_FAULT_EXPECT=ECONNRESET,ETIMEDOUT,EHOSTUNREACH
KC_FAULT_MARK := from=0,marker=kcoll-fault: running
KC_FAULTS = echo "=== check-vm $$v: a rank killed mid-AllReduce"; \
	$(KC_FAULT_RUN) -f 'kill-rank:rank=2,$(KC_FAULT_MARK)' -- $(KC_T)/kcoll_fault; \
	echo "=== check-vm $$v: node2's rxe device deleted mid-AllReduce"; \
	$(KC_FAULT_RUN) -e KCOLL_FAULT_NODE=2 -e KCOLL_FAULT_EXPECT_NODE=ENODEV \
		-f 'rxe-del:node=2,$(KC_FAULT_MARK)' -- $(KC_T)/kcoll_fault; \
	echo "=== check-vm $$v: node2's VM frozen mid-AllReduce, 3 s timeout"; \
	$(KC_FAULT_RUN) -e KCOLL_FAULT_TIMEOUT_MS=3000 -e KCOLL_FAULT_MAX_MS=8000 \
		-f 'stop-vm:node=2,$(KC_FAULT_MARK)' -- $(KC_T)/kcoll_fault; \
	echo "=== check-vm $$v: node3 cut off mid-AllReduce, abort with a stopped, killed, cut-off peer," \
		"node3 killed and the survivors shrink"; \
	$(KCOLL_VM) run -n 4 -t $(KC_FAULT_TIMEOUT) --kernel $$v --module $$ko --rmmod \
		$(KC_FAULT_EXTRA) $(KC_DEATH_EXTRA) -- $(TOP)/selftests/kcoll/run-suite.sh \
		$(KC_T)/kcoll_death $(KC_T)/kcoll_shrink;
.PHONY: check-vm
check-vm: $(KC_MODULES) kcoll-tests
	@set -e; for v in $(KVER); do \
		ko=$(TOP)/kcoll.ko; [ $$v = 6.1 ] || ko=$(BUILD)/kmod-$$v/kcoll.ko; \
		echo "=== check-vm $$v: kselftests on 4 VMs"; \
		$(KCOLL_VM) run -n 4 -t 1500 --mem 512 --kernel $$v --module $$ko --rmmod -- \
			$(TOP)/selftests/kcoll/run-suite.sh $(KCOLL_SUITE:%=$(KC_T)/%); \
		$(KC_FAULTS) \
	done

# connect_on_need=1: the ranks connect what their operations use
# (selftests/kcoll/kcoll_on_need.c), on each kernel, at 32 ranks: 4 VMs
# x 8.  768 MiB a VM: a rank connected to all 31 others holds 36 MiB of
# receive slots, 288 MiB for the VM's eight (at 512 MiB the full mesh's
# creation times out).
KC_ON_NEED_SETUP := echo 1 >/sys/class/misc/kcoll/connect_on_need
KC_ON_NEED_PER_VM ?= 8
KC_ON_NEED_MEM ?= 768
.PHONY: check-vm-on-need
check-vm-on-need: $(KC_MODULES) kcoll-tests
	@set -e; for v in $(KVER); do \
		ko=$(TOP)/kcoll.ko; [ $$v = 6.1 ] || ko=$(BUILD)/kmod-$$v/kcoll.ko; \
		echo "=== check-vm-on-need $$v: 4 VMs x $(KC_ON_NEED_PER_VM) ranks, connect_on_need=1"; \
		$(KCOLL_VM) run -n 4 -k $(KC_ON_NEED_PER_VM) -t 900 --mem $(KC_ON_NEED_MEM) --kernel $$v \
			--module $$ko --rmmod \
			--setup '$(KC_ON_NEED_SETUP)' -- \
			$(TOP)/selftests/kcoll/run-suite.sh $(KC_T)/kcoll_on_need; \
	done

# The three faults alone.
.PHONY: check-vm-faults
check-vm-faults: $(KC_MODULES) kcoll-tests
	@set -e; for v in $(KVER); do \
		ko=$(TOP)/kcoll.ko; [ $$v = 6.1 ] || ko=$(BUILD)/kmod-$$v/kcoll.ko; \
		$(KC_FAULTS) \
	done

# The matrix's small sizes of $(ASYM_ALGOS) on 8 ranks, 2 per VM (level0),
# in super-nodes of 1 and 3 servers (2 + 6 ranks).  Not in check-vm: on
# 6.12 rdma_rxe has crashed under it (commit d7cb67f).
.PHONY: check-vm-asym
check-vm-asym: $(KC_MODULES) kcoll-tests
	@set -e; for v in $(KVER); do \
		ko=$(TOP)/kcoll.ko; [ $$v = 6.1 ] || ko=$(BUILD)/kmod-$$v/kcoll.ko; \
		echo "=== check-vm-asym $$v: every op, $(ASYM_ALGOS), small sizes, 8 ranks" \
			"(2 per VM), super-nodes of $(KC_ASYM_PODS) servers"; \
		$(KCOLL_VM) run -n 4 -k 2 --super-nodes $(KC_ASYM_PODS) -t 900 --mem 512 \
			--kernel $$v --module $$ko --rmmod -e KCOLL_SUPER_NODES=$(KC_ASYM_PODS) \
			-e KCOLL_MATRIX_SIZES=small -e KCOLL_MATRIX_ALGOS=$(ASYM_ALGOS) \
			-- $(KC_T)/kcoll_matrix; \
	done

# Outside `make check`: every operation x every algorithm at 64 MiB, fp32
# sum, out of place and in place, on 4 VMs of 1.5 GiB (~3-4 min per
# algorithm on 6.1; split with BIG_ALGOS=auto,ring,... to keep each run
# short).  Operations get a 10-minute timeout.
BIG_ALGOS ?= $(subst $(kc_space),$(kc_comma),auto $(KC_ALGO_NAMES))
.PHONY: check-vm-big
check-vm-big: $(KC_MODULES) kcoll-tests
	@set -e; for v in $(KVER); do \
		ko=$(TOP)/kcoll.ko; [ $$v = 6.1 ] || ko=$(BUILD)/kmod-$$v/kcoll.ko; \
		echo "=== check-vm-big $$v: 64 MiB, $(BIG_ALGOS)"; \
		$(KCOLL_VM) run -n 4 -t 7200 --mem 1536 --kernel $$v --module $$ko --rmmod \
			-e KCOLL_MATRIX_SIZES=64m -e KCOLL_MATRIX_ALGOS=$(BIG_ALGOS) \
			-e KCOLL_TEST_TIMEOUT_MS=600000 -- $(KC_T)/kcoll_matrix; \
	done

# Outside `make check` (~25 min on 6.1): the matrix up to 1 MiB on 8 ranks
# as 2 per VM (every algorithm), then AHC, AHC_BROKE, Pipeline and
# automatic selection on asymmetric super-nodes: servers 1 + 3 (1 rank
# each), and 2 + 6 ranks up to 1 MiB.
.PHONY: check-vm-layouts
check-vm-layouts: $(KC_MODULES) kcoll-tests
	@set -e; for v in $(KVER); do \
		ko=$(TOP)/kcoll.ko; [ $$v = 6.1 ] || ko=$(BUILD)/kmod-$$v/kcoll.ko; \
		echo "=== check-vm-layouts $$v: 8 ranks, 2 per VM, up to 1 MiB"; \
		$(KCOLL_VM) run -n 4 -k 2 -t 1500 --mem 768 --kernel $$v --module $$ko --rmmod \
			-- $(KC_T)/kcoll_matrix; \
		echo "=== check-vm-layouts $$v: super-nodes of 1 and 3 servers, $(ASYM_ALGOS)"; \
		$(KCOLL_VM) run -n 4 --super-nodes $(KC_ASYM_PODS) -t 1500 --mem 768 \
			--kernel $$v --module $$ko --rmmod -e KCOLL_SUPER_NODES=$(KC_ASYM_PODS) \
			-e KCOLL_MATRIX_ALGOS=$(ASYM_ALGOS) -- $(KC_T)/kcoll_matrix; \
		echo "=== check-vm-layouts $$v: 2 + 6 ranks (2 per VM), $(ASYM_ALGOS)"; \
		$(KCOLL_VM) run -n 4 -k 2 --super-nodes $(KC_ASYM_PODS) -t 1500 --mem 768 \
			--kernel $$v --module $$ko --rmmod -e KCOLL_SUPER_NODES=$(KC_ASYM_PODS) \
			-e KCOLL_MATRIX_ALGOS=$(ASYM_ALGOS) -- $(KC_T)/kcoll_matrix; \
	done

# The long soak, outside `make check`: SOAK_OPS random operations (random
# operation, algorithm, size, element type, reduction, root, in place,
# registered) across 4 VMs, every element checked.  SOAK_SEED picks the
# sequence (printed; the same seed gives the same run).  ~25 min on 6.1.
SOAK_OPS ?= 10000
SOAK_SEED ?= $(shell date +%s)
SOAK_KVER ?= 6.1
.PHONY: soak
soak: $(if $(filter 6.1,$(SOAK_KVER)),module,module-$(SOAK_KVER)) kcoll-tests
	@ko=$(TOP)/kcoll.ko; [ $(SOAK_KVER) = 6.1 ] || ko=$(BUILD)/kmod-$(SOAK_KVER)/kcoll.ko; \
	echo "=== soak: $(SOAK_OPS) operations, seed $(SOAK_SEED), kernel $(SOAK_KVER), 4 VMs"; \
	$(KCOLL_VM) run -n 4 -t 7200 --mem 512 --kernel $(SOAK_KVER) --module $$ko --rmmod \
		-e KCOLL_SOAK_OPS=$(SOAK_OPS) -e KCOLL_SOAK_SEED=$(SOAK_SEED) -- \
		$(OBJDIR)/selftests/kcoll/kcoll_soak

# The ioctl fuzzer (selftests/kcoll/kcoll_fuzz, Documentation/fuzzing.md),
# outside `make check`: FUZZ_CALLS calls (10^6) from seed FUZZ_SEED (the
# clock; printed, and each VM adds its rank) on FUZZ_VMS VMs (1), each
# fuzzing alone, once per kernel in FUZZ_KVER (6.1 6.12), within
# FUZZ_SECONDS (3600) per run.  It fails on a kernel problem in the log, a
# pinned page left behind, a broken ABI promise, a crashed or hung epoch,
# and (--rmmod) a module that does not unload.  About 2 min per kernel on
# an idle host.  check-vm's suite runs the same binary with its short
# default budget (20000 calls).
FUZZ_CALLS ?= 1000000
FUZZ_SEED ?= $(shell date +%s)
FUZZ_KVER ?= 6.1 6.12
FUZZ_VMS ?= 1
FUZZ_SECONDS ?= 3600
FUZZ_THREADS ?= 4
.PHONY: fuzz
fuzz: $(if $(filter 6.1,$(FUZZ_KVER)),module) $(if $(filter 6.12,$(FUZZ_KVER)),module-6.12) \
	kcoll-tests
	@set -e; for v in $(FUZZ_KVER); do \
		ko=$(TOP)/kcoll.ko; [ $$v = 6.1 ] || ko=$(BUILD)/kmod-$$v/kcoll.ko; \
		echo "=== fuzz $$v: $(FUZZ_CALLS) calls, seed $(FUZZ_SEED), $(FUZZ_VMS) VM(s)"; \
		$(KCOLL_VM) run -n $(FUZZ_VMS) -t $$(($(FUZZ_SECONDS) + 600)) --mem 512 --kernel $$v \
			--module $$ko --rmmod -e KCOLL_FUZZ_CALLS=$(FUZZ_CALLS) \
			-e KCOLL_FUZZ_SEED=$(FUZZ_SEED) -e KCOLL_FUZZ_SECONDS=$(FUZZ_SECONDS) \
			-e KCOLL_FUZZ_THREADS=$(FUZZ_THREADS) -- $(KC_T)/kcoll_fuzz; \
	done

# make check-debug: kcoll.ko's kselftests under the kernel's own checkers,
# KASAN, lockdep, kmemleak, UBSAN, atomic-sleep and list debugging.  Not in
# `make check` (CI time); run it before calling any kernel-side change done.
#   1. selftests/kcoll/build-debug-kernel.sh builds Debian's linux-source-6.1
#      with defconfig + kvm_guest.config + selftests/kcoll/debug-kernel.config
#      and the upstream fixes in selftests/kcoll/debug-kernel-patches/
#      once, cached in ~/.cache/kcoll/ by source version and a hash of
#      config and patches (`make debug-kernel` does only this step);
#   2. kcoll.ko against that tree, in build/kmod-debug/;
#   3. the check-vm suite on 4 VMs of that kernel (every operation x
#      algorithm at kcoll_matrix's small sizes: its 1 MiB sweep would take
#      hours at debug speed; kcoll_test's 64 MiB AllReduce and Broadcast
#      still run), then check-vm's three faults on 3 VMs.  Every VM sets
#      a kmemleak baseline after loading the module and, once its ranks
#      exited, unloads it and fails on any leak
#      attributed to kcoll (selftests/kcoll/kmemleak-check.sh); the runner
#      fails on any KASAN/lockdep/UBSAN/atomic-sleep/WARNING report on a
#      console.  The debug kernel is several times slower under TCG: 1 GiB
#      per VM, operations time out after 15 min instead of 1, connecting
#      after 4 min instead of 30 s, and longer run limits.
DEBUG_KCONFIG := $(TOP)/selftests/kcoll/debug-kernel.config
DEBUG_KPATCHES := $(sort $(wildcard $(TOP)/selftests/kcoll/debug-kernel-patches/*.patch))
DEBUG_KBUILD := $(TOP)/selftests/kcoll/build-debug-kernel.sh
# The script's arguments: what the kernel is built from.
DEBUG_KINPUTS := $(DEBUG_KCONFIG) $(DEBUG_KPATCHES)
DEBUG_KMOD := $(BUILD)/kmod-debug
DEBUG_KMEMLEAK := $(TOP)/selftests/kcoll/kmemleak-check.sh
DEBUG_TIMEOUT_SUITE ?= 5400
DEBUG_TIMEOUT_FAULT ?= 1200
DEBUG_VM_ARGS = --mem 1024 --rmmod --setup '$(DEBUG_KMEMLEAK) --baseline' \
	--post '$(DEBUG_KMEMLEAK) kcoll' --boot-timeout 1200

.PHONY: check-debug check-debug-faults debug-kernel module-debug debug-shellcheck

debug-kernel:
	@$(DEBUG_KBUILD) $(DEBUG_KINPUTS)

debug-shellcheck:
	shellcheck $(DEBUG_KBUILD) $(DEBUG_KMEMLEAK)

module-debug:
	@set -e; tree=$$($(DEBUG_KBUILD) $(DEBUG_KINPUTS)); \
	$(call kc_sync,$(DEBUG_KMOD)); \
	$(MAKE) $(KC_KJOBS) --no-print-directory -C $$tree M=$(DEBUG_KMOD) modules

check-debug check-debug-faults: KC_FAULT_TIMEOUT = $(DEBUG_TIMEOUT_FAULT)
check-debug check-debug-faults: KC_FAULT_EXTRA = $(DEBUG_VM_ARGS)
# A cut node is found by the QP's retry timer, which fires late on a debug
# kernel under TCG: node_cut reached its 5 s bound there (stop 38); it
# takes 1.8 s on the release 6.1 kernel (check-vm).
check-debug check-debug-faults: KC_DEATH_EXTRA = -e KCOLL_DEATH_ABORT_MS=1000 -e KCOLL_SHRINK_MS=10000 \
	-e KCOLL_DEATH_DETECT_MS=10000

# Only the three faults on the debug kernel (check-debug runs them last).
check-debug-faults: module-debug kcoll-tests
	@set -e; v=$$($(DEBUG_KBUILD) $(DEBUG_KINPUTS)); ko=$(DEBUG_KMOD)/kcoll.ko; \
	$(KC_FAULTS)

check-debug: kcoll-tests
	@set -e; t0=$$(date +%s); \
	tree=$$($(DEBUG_KBUILD) $(DEBUG_KINPUTS)); \
	echo "=== check-debug: kernel $$tree ready after $$(($$(date +%s) - t0)) s"; \
	$(call kc_sync,$(DEBUG_KMOD)); \
	$(MAKE) $(KC_KJOBS) --no-print-directory -C $$tree M=$(DEBUG_KMOD) modules; \
	t1=$$(date +%s); v=$$tree; ko=$(DEBUG_KMOD)/kcoll.ko; \
	echo "=== check-debug: kselftests on 4 VMs"; \
	$(KCOLL_VM) run -n 4 -t $(DEBUG_TIMEOUT_SUITE) --kernel $$v --module $$ko $(DEBUG_VM_ARGS) \
		-e KCOLL_MATRIX_SIZES=small -e KCOLL_TEST_TIMEOUT_MS=900000 -e KCOLL_LEAVE_NOTICE_MS=5000 \
		-e KCOLL_STALL_NAME_MS=5000 \
		-e KCOLL_TEST_CONNECT_TIMEOUT_MS=240000 -- \
		$(TOP)/selftests/kcoll/run-suite.sh $(KCOLL_SUITE:%=$(KC_T)/%); \
	$(KC_FAULTS) \
	t2=$$(date +%s); \
	echo "=== check-debug: passed in $$((t2 - t0)) s ($$((t2 - t1)) s in VMs)"
