# SPDX-License-Identifier: GPL-2.0
#
# coll-perf (build/bin/coll-perf, man page tools/coll-perf/coll-perf.1):
# nccl-tests style sweeps of every operation through libcoll, one process
# per rank.

COLL_PERF := $(BUILD)/bin/coll-perf$(if $(filter 1,$(SAN)),-san)

$(OBJDIR)/tools/coll-perf/coll_perf.o: CFLAGS_US += -I$(TOP)/lib $(JSONC_CFLAGS)

# The tools link the static archive: they run from build/bin/ anywhere.
$(COLL_PERF): $(OBJDIR)/tools/coll-perf/coll_perf.o $(COLL_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS)

TOOLS_BIN += $(COLL_PERF)
TOOLS_MAN1 += tools/coll-perf/coll-perf.1
