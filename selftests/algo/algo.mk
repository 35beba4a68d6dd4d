# SPDX-License-Identifier: GPL-2.0
#
# The algorithm suite: one binary per selftests/algo/test_*.c, ranks as
# threads on the threaded transport (tools/threads/).
#
#   make check-algo    every rank count up to 128 (SAN=1: ASan + UBSan;
#                      QUICK=1: up to 33, as in check)

ALGO_TEST_SRCS := $(sort $(wildcard selftests/algo/test_*.c))
ALGO_TESTS := $(ALGO_TEST_SRCS:selftests/algo/%.c=$(OBJDIR)/selftests/algo/%)

$(ALGO_TESTS:%=%.o): CFLAGS_US += -I$(TOP)/tools/threads

$(OBJDIR)/selftests/algo/%: $(OBJDIR)/selftests/algo/%.o $(TW_OBJS) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US)

# The tests include the kselftest harness, extracted by `make deps`.
$(ALGO_TESTS:%=%.o): | $(KSFT_DIR)/kselftest_harness.h

# The whole matrix: rank counts 1..33, 48, 64, 100, 128.  QUICK=1: rank
# counts 1..9, 16, 33 only, which is what `make check` runs to stay inside
# the CI time budget.
QUICK ?= 0
.PHONY: check-algo
check-algo: $(ALGO_TESTS)
	@set -e; fail=0; for t in $(ALGO_TESTS); do \
		echo "# running $${t#$(TOP)/}"; \
		KC_TEST_QUICK=$(if $(filter 1,$(QUICK)),1,0) $$t || fail=1; \
	done; exit $$fail
