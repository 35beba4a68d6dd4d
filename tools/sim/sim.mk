# SPDX-License-Identifier: GPL-2.0
#
# The simulated transport (tools/sim/sim.c, simop.c: discrete-event time
# over the link model) and coll-sim, its command-line front end
# (tools/sim/coll_sim.c, man page tools/sim/coll-sim.1).  The simulator's
# tests are selftests/sim/, the selection regret benchmark
# tools/bench/bench_select.
#
#   make sim           build/bin/coll-sim, the selftests/sim programs and
#                      bench_select

SIM_SRCS := $(filter-out tools/sim/coll_sim.c,$(sort $(wildcard tools/sim/*.c)))
SIM_OBJS := $(SIM_SRCS:%.c=$(OBJDIR)/%.o)
# SAN=1 builds coll-sim-san, as coll-perf-san: never a sanitized coll-sim.
COLL_SIM := $(BUILD)/bin/coll-sim$(if $(filter 1,$(SAN)),-san)

$(SIM_OBJS) $(OBJDIR)/tools/sim/coll_sim.o: CFLAGS_US += -I$(TOP)/tools/sim $(JSONC_CFLAGS)

# Rank tables are read by libcoll's parser: its static archive.  Sizes,
# ranges and -V are the tools' shared ones (tools/common/).
$(OBJDIR)/tools/sim/coll_sim.o: CFLAGS_US += -I$(TOP)/lib $(TOOLS_COMMON_CFLAGS)
$(COLL_SIM): $(OBJDIR)/tools/sim/coll_sim.o $(SIM_OBJS) $(TOOLS_COMMON_OBJS) $(TOOLS_VERSION_OBJ) \
	$(ALGO_LIB) $(COLL_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS)

TOOLS_BIN += $(COLL_SIM)
TOOLS_MAN1 += tools/sim/coll-sim.1
