#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# smoke.sh - `make check-vm-smoke`: proves the virtual cluster works.
#
# Two clusters of 2 VMs boot at the same time, one on Debian 6.1 and one on
# 6.12, and run tests/smoke-rank.sh: a real RDMA exchange between the VMs
# (ibv_rc_pingpong, rping, ib_write_bw over rxe), then fault hooks:
#   6.1:  kill-rank armed by a marker line (accepted), rxe-del inside a
#         node, and a rank failing on purpose: the runner must exit 1
#   6.12: kill-vm requested by a rank through $KCOLL_FAULT_REQ: the peer
#         must see its node go away and the runner must exit 0
# Then one VM with a 2 s boot time limit, which no VM meets (they need
# about 5 s): the runner must name the node and exit 5 at once, not wait
# out its run limit.
# Exit 0 when all checks pass, 4 when the runner cannot run here, else 1.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vm=$top/tools/vm/kcoll-vm
logs=${KCOLL_VM_CACHE:-$top/build/vm}/smoke
timeout=${SMOKE_TIMEOUT:-300}
mkdir -p "$logs"
cd "$top" || exit 1

t0=$SECONDS
rm -rf "$logs/run-6.1" "$logs/run-6.12" "$logs/run-boot"
"$vm" run -n 2 --kernel 6.1 -t "$timeout" -e SMOKE_MODE=rxe-kill --run-dir "$logs/run-6.1" \
	-f 'kill-rank:rank=0,delay=1,from=0,marker=^smoke: waiting for kill-rank' \
	-f 'rxe-del:node=1,from=1,marker=^smoke: waiting for rxe-del' \
	-- tools/vm/tests/smoke-rank.sh >"$logs/6.1.log" 2>&1 &
p61=$!
"$vm" run -n 2 --kernel 6.12 -t "$timeout" -e SMOKE_MODE=kill-vm --run-dir "$logs/run-6.12" \
	-- tools/vm/tests/smoke-rank.sh >"$logs/6.12.log" 2>&1 &
p612=$!
trap 'kill -TERM $p61 $p612 2>/dev/null; wait; exit 143' TERM INT
wait $p61
rc61=$?
wait $p612
rc612=$?
trap - TERM INT
tb=$SECONDS
"$vm" run -n 1 --kernel 6.1 -t "$timeout" --boot-timeout 2 --run-dir "$logs/run-boot" \
	-- true >"$logs/boot.log" 2>&1
rcboot=$?
tb=$((SECONDS - tb))

if [ $rc61 = 4 ] || [ $rc612 = 4 ] || [ $rcboot = 4 ]; then
	cat "$logs/6.1.log" "$logs/6.12.log" "$logs/boot.log"
	echo "check-vm-smoke: SKIP (the runner cannot run here)"
	exit 4
fi

fails=0 failed=
check() { # check NAME CONDITION-COMMAND...
	local name=$1
	shift
	if "$@"; then
		echo "  ok    $name"
	else
		echo "  FAIL  $name"
		fails=$((fails + 1))
		failed+="  FAIL  $name"$'\n'
	fi
}
has() { grep -qE -- "$2" "$1"; }
L61=$logs/6.1.log L612=$logs/6.12.log LB=$logs/boot.log

echo "== check-vm-smoke: 6.1 cluster (exit $rc61)"
sed -n 's/^kcoll-vm: \[[0-9.]*s\] all 2 nodes ready:/  boot:/p' "$L61"
grep -E '^\[rank [01]\] .*(usec/iter|#bytes| 65536 +[0-9]|rping: |exchange)' "$L61" | sed 's/^/  /'
check "6.1: ibv_rc_pingpong both ways" has "$L61" '^\[rank 1\] 100 iters in'
check "6.1: rping" has "$L61" '^\[rank 1\] rping: 10 pings ok'
check "6.1: RDMA exchange ok on both ranks" \
	bash -c "grep -q '^\[rank 0\] rank 0: rdma exchange ok' '$L61' && grep -q '^\[rank 1\] rank 1: rdma exchange ok' '$L61'"
check "6.1: rxe-del fault removed rxe0 in node1" has "$L61" '^\[rank 1\] smoke: rxe0 deleted by the fault hook'
check "6.1: kill-rank fault killed rank 0 (accepted)" has "$L61" 'rank 0 \(node0\): exit 137 \(killed by fault kill-rank'
check "6.1: the failing rank is reported" has "$L61" 'rank 1 \(node1\): exit 3 FAILED'
check "6.1: runner exit status 1 (rank failed)" test "$rc61" = 1
check "6.1: no kernel problem on the consoles" bash -c "! grep -q 'kernel problem' '$L61'"

echo "== check-vm-smoke: 6.12 cluster (exit $rc612)"
sed -n 's/^kcoll-vm: \[[0-9.]*s\] all 2 nodes ready:/  boot:/p' "$L612"
grep -E '^\[rank [01]\] .*(usec/iter|#bytes| 65536 +[0-9]|rping: |exchange)' "$L612" | sed 's/^/  /'
check "6.12: RDMA exchange ok on both ranks" \
	bash -c "grep -q '^\[rank 0\] rank 0: rdma exchange ok' '$L612' && grep -q '^\[rank 1\] rank 1: rdma exchange ok' '$L612'"
check "6.12: kill-vm requested through KCOLL_FAULT_REQ ran" has "$L612" 'fault: kill-vm node1'
check "6.12: the surviving rank saw node1 go" has "$L612" '^\[rank 0\] smoke: node1 is gone'
check "6.12: node1's rank reported lost (accepted)" has "$L612" 'rank 1 \(node1\): lost, VM killed by fault kill-vm'
check "6.12: runner exit status 0" test "$rc612" = 0

echo "== check-vm-smoke: boot time limit (exit $rcboot after $tb s)"
check "boot limit: node0 reported not ready" has "$LB" 'node0: not ready after 2 s \(--boot-timeout\)'
check "boot limit: its console named" has "$LB" 'node0: last console lines:'
check "boot limit: runner exit status 5" test "$rcboot" = 5
check "boot limit: ended within 60 s, not at -t $timeout" test "$tb" -lt 60

echo "== check-vm-smoke: $((SECONDS - t0)) s, logs in $logs"
if ((fails)); then
	for f in "$L61" "$L612" "$LB"; do
		echo "---- $f"
		cat "$f"
	done
	# again after the logs, so that the end of the output names them
	printf '%s' "$failed"
	echo "check-vm-smoke: FAILED ($fails check(s))"
	exit 1
fi
echo "check-vm-smoke: PASS"
