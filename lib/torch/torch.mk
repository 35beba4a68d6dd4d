# SPDX-License-Identifier: GPL-2.0
# kcoll_torch: the "kcoll" backend of torch.distributed (lib/torch/), a C++
# extension built against Debian bookworm's PyTorch 1.13.1 (python3-torch,
# libtorch-dev) for /usr/bin/python3, libcoll's PIC objects linked in
# (only PyInit_kcoll_torch exported, lib/torch/kcoll_torch.map).  Use:
#
#   PYTHONPATH=build/torch /usr/bin/python3 -c 'import kcoll_torch'
#
#   make torch-ext        build/torch/kcoll_torch$(EXT_SUFFIX)
#   make check-torch      selftests/torch/host_test.sh: builds, imports,
#                         registers "kcoll"; init_process_group("kcoll")
#                         without the module fails on every rank with
#                         kcoll's message (no VM)
#   make check-vm-torch   2 VMs: every collective x dtype against gloo in
#                         the same processes (selftests/torch/coll_test.py)
#   make check-vm-torch-full  4 VMs: the same (new_group of 2 of the 4
#                         ranks), then DDP training gloo vs kcoll
#                         (selftests/torch/ddp_test.py); the loss curves
#                         in build/torch/results/ddp_loss.{csv,png}
#   make bench-torch      2 VMs: DDP step time and all_reduce of a 25 MB
#                         bucket, kcoll against gloo in the same run
#                         (selftests/torch/bench.py; build/torch/results/
#                         bench.txt); TORCH_BENCH_NODES=4 for 4 VMs
#
# The `python3` on PATH may be another interpreter without Debian's
# packages: everything here runs /usr/bin/python3 (TORCH_PY).

TORCH_PY ?= /usr/bin/python3
TORCH_PYCONFIG := $(TORCH_PY)-config
TORCH_EXT_SUFFIX := $(or $(shell $(TORCH_PYCONFIG) --extension-suffix 2>/dev/null),.so)
TORCH_DIR := $(BUILD)/torch
TORCH_OBJDIR := $(BUILD)/obj/torch
TORCH_EXT := $(TORCH_DIR)/kcoll_torch$(TORCH_EXT_SUFFIX)
TORCH_SRCS := $(wildcard lib/torch/*.cpp)
TORCH_OBJS := $(TORCH_SRCS:lib/torch/%.cpp=$(TORCH_OBJDIR)/%.o)
# Debian's libtorch-dev puts the headers in /usr/include (the C++ API's
# below torch/csrc/api/include); system includes keep their warnings out
# of -Werror.  The ABI flag is the one Debian's torch was built with.
TORCH_CXXFLAGS := -std=c++17 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -Werror \
	-D_GLIBCXX_USE_CXX11_ABI=1 -DTORCH_API_INCLUDE_EXTENSION_H \
	-DTORCH_EXTENSION_NAME=kcoll_torch -I$(TOP) -I$(TOP)/lib \
	-isystem /usr/include/torch/csrc/api/include \
	$(patsubst -I%,-isystem %,$(sort $(shell $(TORCH_PYCONFIG) --includes 2>/dev/null))) -MMD -MP
TORCH_LIBS := -lc10 -ltorch -ltorch_cpu -ltorch_python
# Non-SAN PIC objects of libcoll, whatever SAN says.
TORCH_COLL_PIC := $(COLL_SRCS:lib/%.c=$(BUILD)/obj/lib/pic/%.o)

DEB_PKGS += python3-torch libtorch-dev pybind11-dev python3-dev

$(TORCH_OBJDIR)/%.o: lib/torch/%.cpp lib/torch/torch.mk
	@mkdir -p $(dir $@)
	g++ $(TORCH_CXXFLAGS) -c $< -o $@

$(TORCH_EXT): $(TORCH_OBJS) lib/torch/kcoll_torch.map \
	$(if $(filter 1,$(SAN)),,$(TORCH_COLL_PIC))
	@mkdir -p $(dir $@)
	g++ -shared -Wl,--version-script=lib/torch/kcoll_torch.map -o $@ $(TORCH_OBJS) \
		$(TORCH_COLL_PIC) $(TORCH_LIBS) $(JSONC_LIBS) -pthread

-include $(wildcard $(TORCH_OBJDIR)/*.d)

.PHONY: torch-ext check-torch check-vm-torch check-vm-torch-full bench-torch
ifneq ($(SAN),1)
torch-ext: $(TORCH_EXT)
userspace: torch-ext
else
torch-ext:
	@echo "torch-ext: not built with SAN=1"
endif

check-torch:
	@$(MAKE) --no-print-directory SAN=0 torch-ext
	@TORCH_PY=$(TORCH_PY) KCOLL_TORCH_DIR=$(TORCH_DIR) $(TOP)/selftests/torch/host_test.sh

# The VM runs share the extension's directory; every rank finds the store
# on node0 (10.77.0.1).  KCOLL_VM_ARGS adds runner options.
TORCH_VM_MEM ?= 1024
TORCH_BENCH_NODES ?= 2
kc_torch_vm = $(KCOLL_VM) run -n $(1) --mem $(TORCH_VM_MEM) -t $(2) $(KCOLL_VM_ARGS) \
	--module $(TOP)/kcoll.ko --rmmod -e TORCH_PY=$(TORCH_PY) \
	-e PYTHONPATH=$(TORCH_DIR) -e GLOO_SOCKET_IFNAME=eth0 \
	-e MASTER_ADDR=10.77.0.1 -e MASTER_PORT=29511

check-vm-torch: torch-ext module
	$(call kc_torch_vm,2,900) -- $(TORCH_PY) $(TOP)/selftests/torch/coll_test.py

check-vm-torch-full: torch-ext module
	@mkdir -p $(TORCH_DIR)/results
	$(call kc_torch_vm,4,2400) -e KCOLL_TORCH_OUT=$(TORCH_DIR)/results \
		--share-rw $(TORCH_DIR)/results -- $(TOP)/selftests/torch/vm_full.sh
	$(TOP)/selftests/torch/plot_loss.sh $(TORCH_DIR)/results/ddp_loss.csv \
		$(TORCH_DIR)/results/ddp_loss.png

bench-torch: torch-ext module
	@mkdir -p $(TORCH_DIR)/results
	$(call kc_torch_vm,$(TORCH_BENCH_NODES),1800) -e KCOLL_TORCH_OUT=$(TORCH_DIR)/results \
		--share-rw $(TORCH_DIR)/results -- $(TORCH_PY) $(TOP)/selftests/torch/bench.py

KC_CHECK_STEPS += "torch backend builds, imports, fails clearly without the module|check-torch" \
	"torch backend in VMs: collectives x dtypes vs gloo, 2 VMs|check-vm-torch"
