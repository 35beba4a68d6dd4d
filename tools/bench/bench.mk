# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks: nothing gates on their numbers, none is in `make check`.
#
#   make bench-plan    time and memory to build plans for 65,536 ranks
#                      (tools/bench/bench_plan.c)
#   make bench-select  regret of automatic selection on the topology grid
#                      (2..4096 ranks, 512x8, pods 64+128 and 3+5+7 with
#                      C = 1, 2, 4), every operation; no algorithm left
#                      out: symmetric runs and a lower bound keep it to
#                      about 30 min of CPU (AllReduce 12, Reduce 7)
#                      (tools/bench/bench_select.c, on tools/sim/)
#   make bench-scaling what the connection and memory model costs from 4 to
#                      65,536 ranks, now and with connect-on-need, from the
#                      plans (coll-sim --scaling; build/bench/scaling.txt)
#   make bench         kcoll against Open MPI and the link in 4 VMs (below)
#   make bench-profile, bench-tune, bench-report, bench-lint (below)

BENCH_PLAN := $(OBJDIR)/tools/bench/bench_plan
BENCH_SELECT := $(OBJDIR)/tools/bench/bench_select

$(BENCH_PLAN): $(BENCH_PLAN).o $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US)

.PHONY: bench-plan
bench-plan: $(BENCH_PLAN)
	$(BENCH_PLAN)

$(BENCH_SELECT).o: CFLAGS_US += -I$(TOP)/tools/sim $(JSONC_CFLAGS) $(TOOLS_COMMON_CFLAGS)

$(BENCH_SELECT): $(BENCH_SELECT).o $(SIM_OBJS) $(TOOLS_COMMON_OBJS) $(ALGO_LIB)
	$(CC) -o $@ $^ $(LDFLAGS_US) $(JSONC_LIBS)

# Every operation the model prices (AlltoAllv is priced as AlltoAll);
# BENCH_SELECT_OPS=allreduce for one, BENCH_SELECT_FLAGS='-f 2' for every
# power of two (default every third).  Fails when any regret is above 5%.
BENCH_SELECT_OPS ?= allreduce reducescatter allgather broadcast reduce scatter gather \
	alltoall barrier
BENCH_SELECT_FLAGS ?=
.PHONY: bench-select
bench-select: $(BENCH_SELECT)
	@fail=0; for op in $(BENCH_SELECT_OPS); do \
		nice -n 10 $(BENCH_SELECT) --op $$op $(BENCH_SELECT_FLAGS) || fail=1; \
	done; exit $$fail

# AllReduce and AlltoAll of 64 MiB, one rank per server and servers of 8.
SCALING_OUT := $(BUILD)/bench/scaling.txt
.PHONY: bench-scaling
bench-scaling: $(COLL_SIM)
	@mkdir -p $(dir $(SCALING_OUT))
	@{ for k in 1 8; do for op in allreduce alltoall; do \
		$(COLL_SIM) --scaling --per-server $$k --op $$op --bytes 64M || exit 1; \
		echo; \
	done; done; } > $(SCALING_OUT)
	@cat $(SCALING_OUT)
	@echo "bench-scaling: $(SCALING_OUT)"

# make bench: kcoll against Open MPI (UCX rc_verbs over rxe, and TCP),
# against Open MPI with libcoll-mpi preloaded (mpi.kcoll, the MPI layer's
# cost) and against the link (perftest) on one 4-VM soft-RoCE cluster of
# 6.1, every contender interleaved per repetition; report in build/bench/ (tables,
# bench.json, busbw.png).  A benchmark, not a test: not in `make check`,
# nothing gates on its numbers.  The default 5 repetitions take hours:
# BENCH_QUICK=1 is a short run, BENCH_REPS=N sets the repetitions
# (tools/bench/run-bench.sh lists every knob; Documentation/benchmark.md
# explains the output).
BENCH_PKGS := openmpi-bin libopenmpi-dev libucx0 ucx-utils perftest dropbear-bin \
	gnuplot-nox python3 rdma-core ibverbs-providers ibverbs-utils
BENCH_DIR := $(BUILD)/bench
MPI_COLL_BENCH := $(BENCH_DIR)/mpi_coll_bench
BENCH_REDUCE := $(BENCH_DIR)/bench_reduce

.PHONY: bench deps-bench bench-tools bench-report bench-lint

deps-bench:
	@$(call kc_apt_ensure,$(BENCH_PKGS))

# mpicc comes with deps-bench, so it is looked up when the rule runs.
# Sizes as every tool reads them: tools/common/size.c, compiled along.
$(MPI_COLL_BENCH): tools/bench/mpi_coll_bench.c tools/common/size.c | deps-bench
	@mkdir -p $(dir $@)
	mpicc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wshadow \
		-Wstrict-prototypes -Wmissing-prototypes $(TOOLS_COMMON_CFLAGS) -o $@ $^

$(BENCH_REDUCE): tools/bench/bench_reduce.c tools/common/size.c $(ALGO_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -I$(TOP) -I$(TOP)/algo $(TOOLS_COMMON_CFLAGS) -o $@ \
		$(filter %.c,$^) $(ALGO_LIB) -lm

# The mpi.kcoll contender preloads libcoll-mpi's Open MPI build.
bench-tools: $(MPI_COLL_BENCH) $(BENCH_REDUCE) $(BUILD)/lib/libcoll-mpi-openmpi.so coll-tools

bench:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory deps-bench
	@$(MAKE) --no-print-directory bench-tools module
	@t0=$$(date +%s); \
	BENCH_OUT=$(BENCH_DIR) KVER=6.1 $(TOP)/tools/bench/run-bench.sh; rc=$$?; \
	echo "=== bench: $$(( $$(date +%s) - t0 )) s, report in $(BENCH_DIR)/report.md"; \
	exit $$rc

# Where each VM's vCPU goes in a large AllReduce and in the link test at
# the same size (perf record -a inside every VM, rxe counter deltas):
# build/bench-profile/out/rank.N/{kcoll,link}.{top,comm,hw}.  PROFILE_BYTES.
.PHONY: bench-profile
bench-profile: deps-bench module coll-tools
	@$(call kc_apt_ensure,linux-perf)
	rm -rf $(BUILD)/bench-profile
	$(KCOLL_VM) run -n 4 --mem 1024 -t 1800 --module $(TOP)/kcoll.ko \
		--run-dir $(BUILD)/bench-profile -e PROFILE_BYTES=$(or $(PROFILE_BYTES),8M) \
		-- $(TOP)/tools/bench/profile-node.sh
	@for r in 0 1 2 3; do for p in kcoll link; do \
		echo "=== rank $$r $$p: vCPU by command, top symbols, rxe counters moved"; \
		cat $(BUILD)/bench-profile/out/rank.$$r/$$p.comm; \
		head -n 15 $(BUILD)/bench-profile/out/rank.$$r/$$p.top; \
		cat $(BUILD)/bench-profile/out/rank.$$r/$$p.hw; done; done

# AllReduce time against chunk_bytes:slots, every pair set on every node
# and interleaved (tools/bench/tune-node.sh): build/bench-tune/tune.md.
# TUNE_CONFIGS ("chunk:slots ..."; the first is the reference), TUNE_ALGOS,
# TUNE_REPS, TUNE_MINBYTES, TUNE_MAXBYTES.
TUNE_VARS := TUNE_CONFIGS TUNE_ALGOS TUNE_REPS TUNE_MINBYTES TUNE_MAXBYTES
.PHONY: bench-tune
bench-tune: deps-bench module coll-tools
	rm -rf $(BUILD)/bench-tune
	$(KCOLL_VM) run -n 4 --mem 1024 -t 3600 --module $(TOP)/kcoll.ko \
		--run-dir $(BUILD)/bench-tune \
		$(foreach v,$(TUNE_VARS),$(if $($(v)),-e "$(v)=$($(v))")) \
		-- $(TOP)/tools/bench/tune-node.sh
	python3 $(TOP)/tools/bench/tune-report.py $(BUILD)/bench-tune

# Static checks of the benchmark's scripts, and bench-report.py on made-up
# raw output (tools/bench/test-bench-report.sh: the MPI layer's table, and
# exit 1 when mpi.kcoll did not route); seconds, could join `make lint`.
bench-lint: $(MPI_COLL_BENCH) $(BENCH_REDUCE)
	shellcheck $(TOP)/tools/bench/*.sh
	$(TOP)/tools/bench/test-bench-report.sh
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
		--std=c11 -D__x86_64__ -I$(TOP) -I$(TOP)/algo \
		$(TOP)/tools/bench/mpi_coll_bench.c $(TOP)/tools/bench/bench_reduce.c
	for f in $(TOP)/tools/bench/*.py; do \
		python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' $$f || exit 1; done

# The report again from the raw output of the last run.
bench-report:
	python3 $(TOP)/tools/bench/bench-report.py $(BENCH_DIR)
