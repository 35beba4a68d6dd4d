# SPDX-License-Identifier: GPL-2.0
#
# The virtual soft-RoCE cluster (tools/vm/kcoll-vm, man page
# tools/vm/kcoll-vm.1, helpers beside it): Debian kernels booted under qemu
# TCG, rdma_rxe on an emulated Ethernet inside a private network namespace.
# Needs root.
#
#   make demo            4 VMs (Debian 6.1, soft-RoCE) run an AllReduce
#                        sweep through kcoll.ko
#
#   make check-vm-smoke  2 VMs on 6.1 + 2 VMs on 6.12 at once: a real RDMA
#                        exchange (ibv_rc_pingpong, rping, ib_write_bw) and
#                        the fault hooks (kill-rank, rxe-del, kill-vm, a
#                        failing rank makes the runner fail)
#   make check-vm-modload  build kcoll.ko for 6.1 and 6.12, load it in 2 VMs
#                        of each kernel (dependencies from the guest's own
#                        module tree), check /dev/kcoll, rmmod it
#   make vm-initrd       build the cached initramfs of both kernels
#   make vm-cleanup      delete network namespaces of killed runners
#   make vm-shellcheck   shellcheck the runner and its helpers
#
# Debian packages the cluster needs (deps installs them): qemu and its firmware,
# a static busybox for the initramfs, both guest kernels (6.12 comes from
# bookworm-security), and the RDMA user space the guests use from the
# host's /usr over 9p.
VM_DEB_PACKAGES := qemu-system-x86 qemu-system-data busybox-static cpio \
	xz-utils zstd kmod util-linux iproute2 shellcheck \
	linux-image-amd64 linux-image-6.12-amd64 \
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
KCOLL_VM := $(TOP)/tools/vm/kcoll-vm

.PHONY: check-vm-smoke check-vm-modload vm-initrd vm-cleanup vm-shellcheck

check-vm-smoke:
	@$(TOP)/tools/vm/smoke.sh

check-vm-modload: module module-6.12
	$(KCOLL_VM) run -n 2 -t 600 --module $(TOP)/kcoll.ko --rmmod -- test -c /dev/kcoll
	$(KCOLL_VM) run -n 2 -t 600 --module $(BUILD)/kmod-6.12/kcoll.ko --rmmod -- test -c /dev/kcoll

vm-initrd:
	@$(KCOLL_VM) initrd --kernel 6.1
	@$(KCOLL_VM) initrd --kernel 6.12

vm-cleanup:
	@$(KCOLL_VM) cleanup

vm-shellcheck:
	shellcheck $(KCOLL_VM) $(TOP)/tools/vm/*.sh $(TOP)/tools/vm/stage1-init \
		$(TOP)/tools/vm/tests/*.sh

# The demo: four VMs (Debian 6.1, soft-RoCE) each load kcoll.ko, fit the
# link model to the cluster (collctl calibrate --write) and run one rank
# of an nccl-tests style AllReduce sweep through libcoll.
# TCG emulation makes every time slow and noisy: #wrong is what counts.
DEMO_ARGS ?= -t allreduce -b 8 -e 64M -f 4 -n 3 -w 1
# Packages first, in a make of their own: the build needs what apt installs.
.PHONY: demo
demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	$(KCOLL_VM) run -n 4 --mem 1024 --module $(TOP)/kcoll.ko -t 1800 -- \
		$(TOP)/tools/vm/demo-node.sh $(COLLCTL) $(COLL_PERF) $(DEMO_ARGS)
