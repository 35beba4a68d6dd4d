#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# plan-snapshot.sh BINDIR BENCH_SELECT OUTDIR [--no-select]
#
# Writes what the planner and the cost model produce, one file per case,
# so that a change meant to keep behaviour can be checked byte for byte:
# run it on the build before and after, then `diff -r BEFORE AFTER`.
# BINDIR holds coll-sim and collctl (build/bin); BENCH_SELECT is
# build/obj/tools/bench/bench_select.  Cases: coll-sim on 7 topologies x
# 9 operations (the -A table of every algorithm, JSON sweeps for auto and
# 11 forced HCCL_ALGO strings, --explain plans of ranks 0 and 3),
# collctl explain, parser errors, and bench_select for every operation
# (the long part: about 20 minutes of CPU; --no-select leaves it out).
set -u
if [ $# -lt 3 ]; then
	sed -n '4,14s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
bin=$1 bsel=$2 out=$3 select=${4:-}
mkdir -p "$out" || exit 1
sim=$bin/coll-sim ctl=$bin/collctl
ops="allreduce reducescatter allgather broadcast reduce scatter gather alltoall barrier"
topos=("-P 8" "-P 5" "-P 16 -k 4" "-P 12 -k 3" "-s 2,3 -k 2" "-s 4,4 -k 2 --conv 4" "-P 64 -k 8")
algos=("" "level0:NA;level1:ring" "level0:NA;level1:H-D_R" "level0:NA;level1:NHR"
	"level0:NA;level1:NB" "level0:NA;level1:pairwise" "level0:NA;level1:AHC"
	"level0:NA;level1:tree" "level0:ring;level1:ring" "level0:fullmesh;level1:pipeline"
	"level0:NA;level1:AHC_BROKE" "level0:NA;level1:fullmesh")

# run FILE CMD...: CMD's output and exit status into OUT/FILE
run() {
	local f=$out/$1
	shift
	"$@" >"$f" 2>&1
	echo "rc=$?" >>"$f"
}

i=0
for t in "${topos[@]}"; do
	read -r -a ta <<<"$t"
	for op in $ops; do
		run "A.$i.$op" "$sim" "${ta[@]}" --op "$op" -b 8 -e 64M -f 16 --all-algos
		for a in "${algos[@]}"; do
			n=$(echo "$a" | tr -c 'A-Za-z0-9_\n' '_')
			al=()
			[ -n "$a" ] && al=(--algo "$a")
			run "J.$i.$op.$n" "$sim" "${ta[@]}" --op "$op" "${al[@]}" -b 8 -e 16M -f 64 --json
			for r in 0 3; do
				run "X.$i.$op.$n.$r" "$sim" "${ta[@]}" --op "$op" "${al[@]}" \
					--bytes 1M --explain --rank $r
			done
		done
	done
	i=$((i + 1))
done
for op in $ops; do
	for b in 8 64K 4M; do
		run "C.$op.$b" "$ctl" explain --op "$op" --bytes $b --ranks 16 --per-server 4
	done
done
for a in "level0:bogus" "level1:H-D_R;level1:ring" "allreduce=level1:AHC/x=y" ""; do
	run "E.$(echo "$a" | md5sum | cut -c1-8)" "$sim" -P 8 --op allreduce --algo "$a" --bytes 1M
done
[ "$select" = --no-select ] && exit 0
for op in $ops; do
	run "S.$op" nice -n 10 "$bsel" --op "$op"
done
