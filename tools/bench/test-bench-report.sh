#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bench/bench-report.py on made-up raw output (make bench-lint; no
# VM): 2 ranks, AllReduce at 8 B and 1 MiB from Open MPI over TCP, the
# mpi.kcoll contender (Open MPI with libcoll-mpi) and coll-perf.  With the
# preload's KCOLL_MPI_VERBOSE counts the report has the MPI layer's table
# with its ratios and exits 0; without them (the preload did not load, or
# routed nothing) it must say so, leave those numbers out and exit 1.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/bench-report-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "test-bench-report: FAIL: $*"; fail=1; }

# One repetition of raw output in $work/$1; $2: the mpi.kcoll run's
# KCOLL_MPI_VERBOSE lines.
fixture() {
	local d=$work/$1/runs/boot1/out/rank.0 r
	r=$d/rep1
	mkdir -p "$r"
	echo "nodes=2" >"$d/vm-info.txt"
	cat >"$r/mpi.tcp.txt" <<-'T'
	mpi-coll op=allreduce size=8 count=2 iters=5 time_us=300.00 algbw=0 busbw=0 wrong=0
	mpi-coll op=allreduce size=1048576 count=262144 iters=4 time_us=20000.00 algbw=0 busbw=0 wrong=0
	T
	cat >"$r/mpi.kcoll.txt" <<-'T'
	mpi-coll op=allreduce size=8 count=2 iters=5 time_us=105.00 algbw=0 busbw=0 wrong=0
	mpi-coll op=allreduce size=1048576 count=262144 iters=4 time_us=12000.00 algbw=0 busbw=0 wrong=0
	T
	printf '%s' "$2" >>"$r/mpi.kcoll.txt"
	cat >"$r/kcoll.auto.allreduce.small.json" <<-'T'
	[{"size": 8, "out_of_place": {"time": 100.0, "alg_bw": 8e-05, "bus_bw": 8e-05, "nwrong": 0}},
	 {"size": 1048576, "out_of_place": {"time": 10000.0, "alg_bw": 0.1048576, "bus_bw": 0.1048576, "nwrong": 0}}]
	T
}

fixture routed "kcoll-mpi: calls of 2 ranks (kcoll module loaded)
kcoll-mpi: allreduce: 24 routed, 0 fell back
"
fixture unrouted "kcoll-mpi: calls of 2 ranks (no kcoll module here)
kcoll-mpi: allreduce: 0 routed, 24 fell back (no module 24)
"
fixture silent ""

python3 "$TOP/tools/bench/bench-report.py" "$work/routed" >"$work/routed.out" 2>&1 ||
	bad "routed run: exit status $? (expected 0)"
rep=$work/routed/report.md
grep -q '^### allreduce: the MPI layer' "$rep" || bad "routed run: no MPI layer table"
# 105/100 at 8 B is within 5% of coll-perf; 12000/10000 at 1 MiB is not;
# busbw against Open MPI over TCP: 300/105 and 20000/12000.
grep -q '^| 8 | 105.0 | .* | 100.0 | - | 300.0 | 1.05 | yes | - | 2.86 | 0 |$' "$rep" ||
	bad "routed run: 8 B row of the layer table"
grep -q '^| 1M | 12000 | .* | 10000 | - | 20000 | 1.20 | \*\*no\*\* | - | 1.67 | 0 |$' "$rep" ||
	bad "routed run: 1 MiB row of the layer table"
grep -q 'allreduce time OMPI+kcoll/coll-perf, worst size (issue 24) | 1M | 1.20 | <= 1.05 | \*\*no\*\*' \
	"$rep" || bad "routed run: issue 24 target row"
grep -q 'allreduce: 24 routed, 0 fell back' "$rep" || bad "routed run: routing counts not shown"

for c in unrouted silent; do
	python3 "$TOP/tools/bench/bench-report.py" "$work/$c" >"$work/$c.out" 2>&1 &&
		bad "$c run: exit status 0 (expected 1)"
	grep -q "mpi.kcoll did not route to kcoll in repetition 1" "$work/$c.out" ||
		bad "$c run: no message on stderr"
	grep -q '^\*\*mpi.kcoll in repetition 1 did not route to kcoll' "$work/$c/report.md" ||
		bad "$c run: report does not say it"
	grep -q 'the MPI layer' "$work/$c/report.md" && bad "$c run: plain Open MPI reported as the layer"
done
grep -q 'libcoll-mpi saw no kcoll module; allreduce: none routed' "$work/unrouted/report.md" ||
	bad "unrouted run: reason"
grep -q 'no KCOLL_MPI_VERBOSE counts' "$work/silent/report.md" || bad "silent run: reason"

if [ "$fail" = 0 ]; then
	echo "test-bench-report: ok (routed, unrouted, silent)"
else
	for c in routed unrouted silent; do echo "--- $c"; cat "$work/$c.out"; done
fi
exit "$fail"
