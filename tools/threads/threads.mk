# SPDX-License-Identifier: GPL-2.0
#
# The threaded transport (tools/threads/tw.c: ranks served by a thread
# per CPU, algo/'s executor and plans, in-process message queues) and its
# case runner (tw_case.c), shared by demo_sim and the algorithm suite
# (selftests/algo/).
#
#   make demo-sim      an AllReduce sweep among 8 ranks in one process

TW_SRCS := $(sort $(wildcard tools/threads/tw*.c))
TW_OBJS := $(TW_SRCS:%.c=$(OBJDIR)/%.o)
DEMO_SIM := $(OBJDIR)/tools/threads/demo_sim

$(DEMO_SIM).o: CFLAGS_US += -I$(TOP)/tools/threads $(TOOLS_COMMON_CFLAGS)

# Sizes and numbers as every tool reads them (tools/common/size.c).
$(DEMO_SIM): $(DEMO_SIM).o $(TW_OBJS) $(TOOLS_COMMON_OBJS) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US)

# The same sweep as `make demo` among 8 ranks in one process (no VM, no
# module).
.PHONY: demo-sim
demo-sim: $(DEMO_SIM)
	$(DEMO_SIM)
