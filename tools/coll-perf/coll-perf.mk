# SPDX-License-Identifier: GPL-2.0
#
# coll-perf (build/bin/coll-perf, man page tools/coll-perf/coll-perf.1):
# nccl-tests style sweeps of every operation through libcoll, one process
# per rank.

COLL_PERF := $(BUILD)/bin/coll-perf$(if $(filter 1,$(SAN)),-san)

$(OBJDIR)/tools/coll-perf/coll_perf.o: CFLAGS_US += -I$(TOP)/lib $(JSONC_CFLAGS) $(TOOLS_COMMON_CFLAGS)

# The tools link the static archive: they run from build/bin/ anywhere.
# Sizes, ranges and -V are the tools' shared ones (tools/common/).
$(COLL_PERF): $(OBJDIR)/tools/coll-perf/coll_perf.o $(TOOLS_COMMON_OBJS) $(TOOLS_VERSION_OBJ) $(COLL_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS)

TOOLS_BIN += $(COLL_PERF)
TOOLS_MAN1 += tools/coll-perf/coll-perf.1

# nccl-tests' program names: each runs coll-perf with its operation, so
# their command lines (all_reduce_perf -b 8 -e 128M -f 2 -g 1) run as they
# are.  Symbolic links beside coll-perf in build/bin/ and when installed.
NCCL_TESTS_NAMES := all_reduce_perf reduce_scatter_perf all_gather_perf broadcast_perf \
	reduce_perf scatter_perf gather_perf alltoall_perf
NCCL_TESTS_LINKS := $(NCCL_TESTS_NAMES:%=$(BUILD)/bin/%)

$(NCCL_TESTS_LINKS): | $(COLL_PERF)
	ln -sf coll-perf $@

coll-tools: $(if $(filter 1,$(SAN)),,$(NCCL_TESTS_LINKS))

.PHONY: install-nccl-tests-names uninstall-nccl-tests-names
install-tools: install-nccl-tests-names
install-nccl-tests-names:
	install -d $(DESTDIR)$(BINDIR)
	@for n in $(NCCL_TESTS_NAMES); do ln -sf coll-perf $(DESTDIR)$(BINDIR)/$$n; done
	@# man all_reduce_perf: coll-perf's page, which says what each name runs
	install -d $(DESTDIR)$(MANDIR)/man1
	@for n in $(NCCL_TESTS_NAMES); do ln -sf coll-perf.1 $(DESTDIR)$(MANDIR)/man1/$$n.1; done

uninstall-tools: uninstall-nccl-tests-names
uninstall-nccl-tests-names:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(NCCL_TESTS_NAMES)) \
		$(NCCL_TESTS_NAMES:%=$(DESTDIR)$(MANDIR)/man1/%.1)
