#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where a VM's one vCPU goes during a large AllReduce, and during the link
# test that loads it the same way (make bench-profile): what limits busbw
# against ib_write_bw (Documentation/benchmark.md).  Run on every rank of
# 4 VMs by
#   tools/vm/kcoll-vm run -n 4 --module kcoll.ko -- tools/bench/profile-node.sh
# Every node samples its whole system (perf record -a, cpu-clock: TCG has
# no hardware counters) during
#   kcoll   coll-perf AllReduce of PROFILE_BYTES (default 8M), automatic;
#   link    ib_write_bw -b between node0-node1 and node2-node3 at once, at
#           the same size (every VM sends and receives, as in the ring);
# and keeps the vCPU by command, the top symbols, and the deltas of rxe's
# hardware counters (retries, NAKs, sequence errors) over each phase in
# $KCOLL_OUTDIR.
set -eu
B=${COLL_BIN:-build/bin}
r=${KCOLL_RANK:?run me through tools/vm/kcoll-vm}
: "${KCOLL_NODE:?}"	# perf_node pairs the nodes by it
OUT=${KCOLL_OUTDIR:?}
BYTES=${PROFILE_BYTES:-8M}
HW=/sys/class/infiniband/rxe0/ports/1/hw_counters
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C

counters() { # FILE
	local f
	for f in "$HW"/*; do printf '%s %s\n' "${f##*/}" "$(cat "$f")"; done >"$1"
}

# The counters that moved between two snapshots.
counter_delta() { # BEFORE AFTER
	join "$1" "$2" | awk '$3 != $2 { printf "%s %d\n", $1, $3 - $2 }'
}

# Sample the whole VM while "$@" runs; keep the report, drop the data.
profile() { # NAME CMD...
	local name=$1
	shift
	counters "$OUT/$name.hw.before"
	perf record -q -a -e cpu-clock -F 250 -o "$OUT/$name.data" -- "$@" \
		>"$OUT/$name.out" 2>"$OUT/$name.err" || {
		echo "profile: $name failed: $(tail -n 3 "$OUT/$name.err")" >&2
		return 1
	}
	counters "$OUT/$name.hw.after"
	counter_delta "$OUT/$name.hw.before" "$OUT/$name.hw.after" >"$OUT/$name.hw"
	perf report -i "$OUT/$name.data" --no-children --sort sym --stdio 2>/dev/null |
		grep -v '^#' | grep -v '^$' | head -n 40 >"$OUT/$name.top"
	perf report -i "$OUT/$name.data" --no-children --sort comm --stdio 2>/dev/null |
		grep -v '^#' | grep -v '^$' | head -n 15 >"$OUT/$name.comm"
	rm -f "$OUT/$name.data"
}

# nap (a sleep without a fork) and perf_node (perftest on two pairs).
# shellcheck source=tools/bench/node-common.sh
. "$(dirname "$0")/node-common.sh"

# Every rank starts both phases together: coll-perf's set-up waits for
# all; the link phase waits for a file rank 0 posts once every rank is
# done with coll-perf.
R=$OUT/..
bytes=$(numfmt --from=iec "$BYTES")
profile kcoll "$B/coll-perf" -t allreduce -b "$BYTES" -e "$BYTES" -n 3 -w 1
: >"$R/kcoll-done.$r"
while [ "$(find "$R" -maxdepth 1 -name 'kcoll-done.*' | wc -l)" -lt "${KCOLL_NRANKS:?}" ]; do
	nap 0.5
done
# perftest's output in link.pair0.txt (client), link.server.1.txt, ...; a
# hung pair ends the phase after 1200 s.
export -f perf_node nap
export nap_fd
# shellcheck disable=SC2016 # $1 and $2 belong to the inner shell
profile link timeout 1200 bash -c 'perf_node ib_write_bw "$1" -b -s "$2" -n 20' \
	link "$OUT/link" "$bytes"
echo "profile: rank $r done"
