#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A forced algorithm that does not run is reported end to end, run on every
# rank (vm_e2e.sh runs it; alone, 2 VMs take about a minute):
#   tools/vm/kcoll-vm run -n 2 --module kcoll.ko -- selftests/lib/vm_fallback.sh
# coll-perf runs AlltoAll with 'level0:NA;level1:ring' on every rank: Ring
# has no AlltoAll, so each operation falls back to automatic selection
# (Documentation/algorithms.md, "Forced algorithms").  Rank 0 checks that
# collctl show COMM marks level1 of the last operations with '!' and
# prints the plan's note, that its JSON has "fallback" and "note", and that
# collctl monitor saw exactly one algo-fallback event for the communicator
# (once per kind of operation, not one per operation).
set -eu
B=${COLL_BIN:-build/bin}
r=${KCOLL_RANK:?run me through tools/vm/kcoll-vm}
OUT=${KCOLL_OUTDIR:-/tmp}

fail() { echo "vm_fallback: $*" >&2; exit 1; }

fb="-t alltoall -b 64K -e 64K -n 300 -w 1 -A level0:NA;level1:ring"
if [ "$r" != 0 ]; then
	# shellcheck disable=SC2086
	"$B"/coll-perf $fb
	exit 0
fi
"$B"/collctl monitor -T 900 >"$OUT/fallback.monitor" 2>&1 &
mon=$!
sleep 2
# shellcheck disable=SC2086
"$B"/coll-perf $fb >"$OUT/fallback.perf" 2>&1 &
perf=$!
id=
while kill -0 $perf 2>/dev/null; do
	id=$("$B"/collctl show | awk '$1 ~ /^[0-9]+$/ && $4 == "ready" && $6 > 1 { print $1; exit }')
	[ -z "$id" ] || break
	sleep 0.2
done
[ -n "$id" ] || fail "no ready communicator with completed operations seen during coll-perf"
"$B"/collctl show "$id" | tee "$OUT/fallback.show"
"$B"/collctl -j show "$id" >"$OUT/fallback.json"
wait $perf || { cat "$OUT/fallback.perf"; fail "coll-perf failed"; }
i=0
while ! grep -q "comm-del  *comm $id " "$OUT/fallback.monitor" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -TERM $mon
wait $mon || { cat "$OUT/fallback.monitor"; fail "collctl monitor did not stop cleanly"; }
cat "$OUT/fallback.monitor"

grep -Eq '^  [0-9]+ +alltoall .* [A-Za-z_-]+! ' "$OUT/fallback.show" ||
	fail "show $id does not mark the level whose forced algorithm did not run"
grep -q '! not as configured: level1 ring cannot run alltoall, ' "$OUT/fallback.show" ||
	fail "show $id does not say which algorithm ran instead and why"
python3 - "$OUT/fallback.json" <<'PY' || fail "collctl -j show $id lacks the fallback"
import json, sys
c = json.load(open(sys.argv[1]))
ops = [o for o in c["last_ops"] if o["op"] == "alltoall"]
assert ops, c["last_ops"]
for o in ops:
    assert o["fallback"] == ["level1"], o
    assert o["note"].startswith("level1 ring cannot run alltoall, "), o
assert c["algos"]["alltoall"]["configured"]["level1"] == "ring", c["algos"]["alltoall"]
print("fallback in JSON:", ops[-1]["note"])
PY
n=$(grep -c "algo-fallback comm $id .* alltoall .*level1 not as configured: level1 ring cannot run alltoall" "$OUT/fallback.monitor" || true)
[ "$n" = 1 ] || fail "expected one algo-fallback event for comm $id, saw $n"
echo "vm_fallback: show, JSON and one algo-fallback event for comm $id"
