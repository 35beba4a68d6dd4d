#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The forced algorithms of 4 servers x 2 ranks run in the module as
# configured, and what cannot is reported (Documentation/algorithms.md,
# "Forced algorithms").  8 ranks on 4 VMs, about three minutes:
#   make check-vm-forced, or
#   tools/vm/kcoll-vm run -n 4 -k 2 --module kcoll.ko -- selftests/lib/vm_forced.sh
# On every rank coll-perf runs, each on a communicator of its own:
#   AllReduce 'level0:tree;level1:NA': Tree at level0, a flat algorithm
#     at level1, no fallback (Pipeline ran both levels before);
#   AlltoAll 'level0:pairwise;level1:NA': Pairwise, no fallback (NB ran);
#   Broadcast 'level0:tree;level1:NA': Tree cannot run below the top
#     level, the documented fallback, with the plan's note.
# Rank 0 reads its communicator's last operations from collctl -j show.
set -eu
B=${COLL_BIN:-build/bin}
r=${KCOLL_RANK:?run me through tools/vm/kcoll-vm}
n=${KCOLL_NRANKS:-0}
OUT=${KCOLL_OUTDIR:-/tmp}

fail() { echo "vm_forced: $*" >&2; exit 1; }

if [ "$n" != 8 ]; then
	echo "vm_forced: needs 8 ranks as 4 VMs x 2 (-n 4 -k 2), have $n: skipped"
	exit 0
fi
echo 120000 >/sys/class/misc/kcoll/connect_timeout_ms

# case OP ALGO CHECK: coll-perf on every rank; rank 0 checks the JSON of
# its communicator with the python expression CHECK on o (a last op).
case_run() {
	args="-t $1 -b 64K -e 64K -n 100 -w 1 -A $2"
	if [ "$r" != 0 ]; then
		# shellcheck disable=SC2086
		"$B"/coll-perf $args >/dev/null
		return
	fi
	# shellcheck disable=SC2086
	"$B"/coll-perf $args >"$OUT/forced.perf" 2>&1 &
	perf=$!
	id=
	while kill -0 $perf 2>/dev/null; do
		id=$("$B"/collctl show | awk '$1 ~ /^[0-9]+$/ && $3 == "0/8" && $4 == "ready" && $6 > 1 { print $1 }' | tail -1)
		[ -z "$id" ] || break
		sleep 0.2
	done
	[ -n "$id" ] || fail "$1: no communicator of rank 0 with completed operations"
	"$B"/collctl show "$id"
	"$B"/collctl -j show "$id" >"$OUT/forced.json"
	wait $perf || { cat "$OUT/forced.perf"; fail "$1: coll-perf failed"; }
	python3 - "$OUT/forced.json" "$1" "$3" <<'PY' || fail "$1 '$2' did not run as it should"
import json, sys
c = json.load(open(sys.argv[1]))
ops = [o for o in c["last_ops"] if o["op"] == sys.argv[2]]
assert ops, c["last_ops"]
for o in ops:
    assert eval(sys.argv[3]), o
print("vm_forced:", sys.argv[2], ops[-1]["algo"], ops[-1]["fallback"], ops[-1]["note"])
PY
}

case_run allreduce 'level0:tree;level1:NA' \
	'o["algo"]["level0"] == "tree" and o["algo"]["level1"] not in ("pipeline", "AHC", "AHC_BROKE") and o["fallback"] == []'
case_run alltoall 'level0:pairwise;level1:NA' \
	'o["algo"]["level0"] == "pairwise" and o["algo"]["level1"] == "pairwise" and o["fallback"] == []'
case_run broadcast 'level0:tree;level1:NA' \
	'o["fallback"] == ["level0"] and o["note"].startswith("level0 tree cannot run broadcast below the top level, ")'
echo "vm_forced: all cases as configured or reported"
