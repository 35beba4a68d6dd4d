#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Message size and send window against AllReduce time (make bench-tune,
# Documentation/benchmark.md): each pair of module defaults measured, not
# guessed.  Run on every rank of 4 VMs by
#   tools/vm/kcoll-vm run -n 4 --module kcoll.ko -- tools/bench/tune-node.sh
# Per repetition, in an order that rotates every repetition, each pair of
# module defaults in TUNE_CONFIGS ("chunk_bytes:slots ...") is written to
# /sys/class/misc/kcoll/ on every node (a file barrier makes every node
# write before any creates its communicator: both sides of a connection
# must agree on them), then coll-perf runs AllReduce from TUNE_MINBYTES to
# TUNE_MAXBYTES with each algorithm of TUNE_ALGOS forced between the
# nodes.  coll-perf's output: $KCOLL_OUTDIR/repR.CHUNK.SLOTS.ALGO.txt
# (rank 0 only); tools/bench/tune-report.py makes the table.
set -eu
B=${COLL_BIN:-build/bin}
r=${KCOLL_RANK:?run me through tools/vm/kcoll-vm}
OUT=${KCOLL_OUTDIR:?}
R=$OUT/..
REPS=${TUNE_REPS:-3}
CONFIGS=${TUNE_CONFIGS:-65536:8 65536:16 122880:8 122880:16}
ALGOS=${TUNE_ALGOS:-fullmesh NHR}
MINB=${TUNE_MINBYTES:-512K}
MAXB=${TUNE_MAXBYTES:-8M}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C

# nap, all_ranks (a file barrier in $R), with_module_defaults.
# shellcheck source=tools/bench/node-common.sh
. "$(dirname "$0")/node-common.sh"

# The algorithms of TUNE_ALGOS forced in turn, under one pair.
run_algos() { # REP CHUNK SLOTS
	local a out
	for a in $ALGOS; do
		out=/dev/null
		[ "$r" = 0 ] && out=$OUT/rep$1.$2.$3.$a.txt
		KCOLL_ALGO="level0:NA;level1:$a" "$B/coll-perf" -t allreduce \
			-b "$MINB" -e "$MAXB" -f 4 -n 1 -w 1 -c 1 >"$out" 2>&1 ||
			echo "tune: rank $r: coll-perf $2:$3 $a failed" >&2
	done
}

read -ra configs <<<"$CONFIGS"
[ "$r" = 0 ] && echo "$CONFIGS" >"$OUT/configs.txt"
n=${#configs[@]}
for ((rep = 1; rep <= REPS; rep++)); do
	for ((i = 0; i < n; i++)); do
		c=${configs[(i + rep - 1) % n]}
		chunk=${c%%:*} slots=${c#*:}
		with_module_defaults "$rep.$chunk.$slots" "chunk_bytes=$chunk slots=$slots" \
			"$R/refused.$rep.$chunk.$slots" run_algos "$rep" "$chunk" "$slots"
		if [ "$r" = 0 ]; then
			[ ! -e "$R/refused.$rep.$chunk.$slots" ] ||
				echo "tune: kcoll refused (rank value) $(refusals "$R/refused.$rep.$chunk.$slots"); not measured"
			echo "tune: $(date +%T) rep $rep chunk_bytes=$chunk slots=$slots done"
		fi
	done
done
