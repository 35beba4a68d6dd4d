# SPDX-License-Identifier: GPL-2.0
#
# The simulator's suite (selftests/sim/): conformance of the simulated
# transport, the HCCL_ALGO and rank-table parsers, the cost model and
# automatic selection, linked with tools/sim/'s engine.
#
#   make check-sim     the selftests/sim suite

SIM_TEST_SRCS := $(sort $(wildcard selftests/sim/test_*.c))
SIM_TESTS := $(SIM_TEST_SRCS:selftests/sim/%.c=$(OBJDIR)/selftests/sim/%)

$(SIM_TESTS:%=%.o): CFLAGS_US += -I$(TOP)/tools/sim $(JSONC_CFLAGS)
$(SIM_TESTS:%=%.o): | $(KSFT_DIR)/kselftest_harness.h

$(OBJDIR)/selftests/sim/%: $(OBJDIR)/selftests/sim/%.o $(SIM_OBJS) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS)

.PHONY: check-sim
# test_new_algo.sh: a copy of the tree with one more algorithm (alg_ring2.c,
# its enum value and table line) builds, and everything picks it up.
check-sim: $(SIM_TESTS) $(COLL_SIM)
	@fail=0; for t in $(SIM_TESTS); do \
		echo "# running $${t#$(TOP)/}"; \
		$$t || fail=1; \
	done; \
	echo "# running selftests/sim/test_new_algo.sh"; \
	$(TOP)/selftests/sim/test_new_algo.sh $(TOP) || fail=1; \
	exit $$fail
