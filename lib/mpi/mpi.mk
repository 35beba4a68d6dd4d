# SPDX-License-Identifier: GPL-2.0
# libcoll-mpi: the PMPI interposition library (lib/mpi/coll_mpi.c), built
# once per MPI implementation of Debian bookworm with its own compiler
# wrapper, libcoll's PIC objects linked in (one file to preload; only the
# MPI_* symbols exported, lib/mpi/coll_mpi.map):
#
#   make libcoll-mpi   build/lib/libcoll-mpi-openmpi.so (mpicc.openmpi,
#                      Open MPI 4.1.4) and build/lib/libcoll-mpi-mpich.so
#                      (mpicc.mpich, MPICH 4.0.2); the test program
#                      selftests/mpi/mpi_coll_test for both
#   make check-mpi     selftests/mpi/host_test.sh: the test program under
#                      both MPIs on this host (2 ranks, no module), with and
#                      without the preload, results compared bit for bit,
#                      the fallback counts of KCOLL_MPI_VERBOSE=1 checked
#   make install-mpi   both libraries into $(DESTDIR)$(MPI_LIBDIR)
#                      (MPI_LIBDIR=LIBDIR; the Debian package libcoll-mpi:
#                      /usr/lib/<triplet>/kcoll, a private directory, as
#                      they are preloaded by path, never linked against:
#                      no soname)
#   make uninstall-mpi removes them again
#
# Debian packages: openmpi-bin libopenmpi-dev mpich libmpich-dev (and
# python3-mpi4py and dropbear-bin for the cluster tests), in deps.  SAN=1 builds no MPI
# objects (the preloaded library would need the sanitizer runtimes first).

MPI_IMPLS := openmpi mpich
MPI_OBJDIR := $(BUILD)/obj/mpi
COLL_MPI_LIBS := $(MPI_IMPLS:%=$(BUILD)/lib/libcoll-mpi-%.so)
MPI_TESTS := $(MPI_IMPLS:%=$(MPI_OBJDIR)/mpi_coll_test-%)
MPI_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g
# Non-SAN PIC objects of libcoll, whatever SAN says.
COLL_MPI_PIC := $(COLL_SRCS:lib/%.c=$(BUILD)/obj/lib/pic/%.o)

DEB_PKGS += openmpi-bin libopenmpi-dev mpich libmpich-dev python3-mpi4py dropbear-bin

$(MPI_OBJDIR)/coll_mpi-%.o: lib/mpi/coll_mpi.c lib/coll.h lib/mpi/mpi.mk
	@mkdir -p $(dir $@)
	mpicc.$* $(MPI_CFLAGS) -fPIC -I$(TOP)/lib -c $< -o $@

$(BUILD)/lib/libcoll-mpi-%.so: $(MPI_OBJDIR)/coll_mpi-%.o lib/mpi/coll_mpi.map \
	$(if $(filter 1,$(SAN)),,$(COLL_MPI_PIC))
	@mkdir -p $(dir $@)
	mpicc.$* -shared -Wl,--no-undefined -Wl,--version-script=lib/mpi/coll_mpi.map \
		$(LDFLAGS) -o $@ $< $(COLL_MPI_PIC) $(JSONC_LIBS)

$(MPI_OBJDIR)/mpi_coll_test-%: selftests/mpi/mpi_coll_test.c lib/mpi/mpi.mk
	@mkdir -p $(dir $@)
	mpicc.$* $(MPI_CFLAGS) -o $@ $<

.SECONDARY: $(MPI_IMPLS:%=$(MPI_OBJDIR)/coll_mpi-%.o)

.PHONY: libcoll-mpi check-mpi install-mpi check-vm-mpi
ifneq ($(SAN),1)
libcoll-mpi: $(COLL_MPI_LIBS) $(MPI_TESTS)
userspace: libcoll-mpi
else
libcoll-mpi:
	@echo "libcoll-mpi: not built with SAN=1"
endif

check-mpi:
	@$(MAKE) --no-print-directory SAN=0 libcoll-mpi
	@MPI_LIBDIR=$(BUILD)/lib MPI_TESTDIR=$(MPI_OBJDIR) $(TOP)/selftests/mpi/host_test.sh

# In the virtual cluster: selftests/mpi/vm_test.sh, the test program over
# Open MPI and MPICH (MPI_VM_IMPLS) on MPI_VM_NODES VMs of MPI_VM_PER_NODE
# ranks each with kcoll.ko, with and without the preload, the mismatch
# test and mpi4py (dropbear starts the MPI daemons, as in `make bench`).
# `make check` runs 2 VMs x 2 ranks; the closing notes' 4 x 2 is
# MPI_VM_NODES=4 MPI_VM_PER_NODE=2.  MPICH runs over UCX's rc_verbs and
# ud_verbs on rxe0 (MPI_VM_MPICH_UCX=verbs): over UCX's TCP transport
# (MPI_VM_MPICH_UCX=tcp) it hangs now and then in MPI_Finalize after
# every rank is done, without kcoll too (openucx/ucx#8738).
# KCOLL_VM_ARGS adds runner options.
MPI_VM_NODES ?= 2
MPI_VM_PER_NODE ?= 1
MPI_VM_MEM ?= 1024
MPI_VM_MPICH_UCX ?= verbs
kc_mpich_ucx_verbs := -e MPI_VM_MPICH_UCX_TLS=rc_verbs,ud_verbs,self,sm \
	-e MPI_VM_MPICH_UCX_DEVICES=rxe0:1
.PHONY: check-vm-mpi
check-vm-mpi: libcoll-mpi module
	@d=$(BUILD)/mpi-vm; rm -rf $$d; mkdir -p $$d/ssh && \
	dropbearkey -t ed25519 -f $$d/ssh/id | grep '^ssh-' >$$d/ssh/id.pub && \
	$(KCOLL_VM) run -n $(MPI_VM_NODES) -k $(MPI_VM_PER_NODE) --mem $(MPI_VM_MEM) -t 2400 \
		$(KCOLL_VM_ARGS) --module $(TOP)/kcoll.ko --rmmod \
		--run-dir $$d/run --setup "$(TOP)/tools/bench/sshd-setup.sh $$d/ssh/id" \
		-e BENCH_SSH_KEY=$$d/ssh/id -e MPI_TOP=$(TOP) $(if $(MPI_VM_IMPLS),-e "MPI_VM_IMPLS=$(MPI_VM_IMPLS)") \
		$(if $(filter verbs,$(MPI_VM_MPICH_UCX)),$(kc_mpich_ucx_verbs)) \
		-- $(TOP)/selftests/mpi/vm_test.sh

MPI_LIBDIR ?= $(LIBDIR)
install-mpi: libcoll-mpi
	install -d $(DESTDIR)$(MPI_LIBDIR)
	install -m 0755 $(COLL_MPI_LIBS) $(DESTDIR)$(MPI_LIBDIR)/

.PHONY: uninstall-mpi
uninstall-mpi:
	rm -f $(addprefix $(DESTDIR)$(MPI_LIBDIR)/,$(notdir $(COLL_MPI_LIBS)))

KC_CHECK_STEPS += "MPI layer pass-through, Open MPI + MPICH, no module|check-mpi" \
	"MPI layer in VMs, Open MPI + MPICH + mpi4py, 2 VMs x 2 ranks|check-vm-mpi MPI_VM_PER_NODE=2"
