# SPDX-License-Identifier: GPL-2.0
#
# What the tools share (tools/common/): the numeric arguments (size.c:
# sizes as 64K or 1.5M, whole numbers in a range), so coll-perf, coll-sim,
# collctl, demo_sim and the benchmarks read a size the same way, and -V
# (version.c).  The tools add $(TOOLS_COMMON_OBJS) to their link and
# $(TOOLS_COMMON_CFLAGS) to their objects' flags.

TOOLS_COMMON_OBJS := $(OBJDIR)/tools/common/size.o
TOOLS_COMMON_CFLAGS := -I$(TOP)/tools/common

# -V/--version of coll-perf, coll-sim and collctl (tools/common/version.c):
# asks the module through libcoll, so only tools that link $(COLL_A).
TOOLS_VERSION_OBJ := $(OBJDIR)/tools/common/version.o
$(TOOLS_VERSION_OBJ): CFLAGS_US += -I$(TOP)/lib
