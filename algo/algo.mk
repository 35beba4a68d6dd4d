# SPDX-License-Identifier: GPL-2.0
#
# algo/ as the static archive libkcalgo.a that user space links (the
# module builds the same files through Kbuild).

ALGO_SRCS := $(sort $(wildcard algo/*.c))
ALGO_OBJS := $(ALGO_SRCS:%.c=$(OBJDIR)/%.o)
ALGO_LIB := $(OBJDIR)/libkcalgo.a

$(ALGO_LIB): $(ALGO_OBJS)
	@rm -f $@
	ar rcs $@ $^
