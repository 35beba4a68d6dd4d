#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# collctl doctor's pair checks in the virtual cluster, run on every rank
# of one rank per node (make check-vm-lib runs both):
#
#   kcoll-vm run -n 4 --module kcoll.ko -- selftests/lib/vm_doctor.sh healthy
#   kcoll-vm run -n 4 --module kcoll.ko -f rxe-del:node=3,at=0 -- \
#           selftests/lib/vm_doctor.sh broken
#
# healthy: every node's nine checks pass (module, permissions, rdma
# device, mtu, address, memlock, listen port, secret, persisted: none) and
# each of its pairs is "ok" (exit 0), then the same with -j (numbers as
# numbers, "failed_pairs":0).
# broken: the runner deletes the last node's rxe0 as the ranks start; that
# node waits until it is gone, then its doctor fails the rdma device check
# and every pair at the listen stage; every other node fails its pair with
# the last node at the connect stage (no answer: a RoCE failure, not "did
# not answer", which would mean doctor is not running there) and passes
# the others.  Each case must exit 1 exactly where it should.
set -u
B=${COLL_BIN:-build/bin}
r=${KCOLL_RANK:?run me through tools/vm/kcoll-vm}
n=${KCOLL_NRANKS:?}
mode=${1:?healthy or broken}
last=$((n - 1))
OUT=${KCOLL_OUTDIR:-/tmp}

fail() { echo "vm_doctor: rank $r: $*" >&2; exit 1; }
# count PATTERN: lines of the text output that match
count() { grep -c -- "$1" "$OUT/doctor.txt"; }

if [ "$mode" = broken ] && [ "$r" = "$last" ]; then
	i=0
	while rdma link show rxe0/1 >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "rxe0 still there after 60 s (fault rxe-del not run?)"
		sleep 0.2
	done
fi

"$B"/collctl doctor --ranktable "$KCOLL_RANKTABLE" -T 5 >"$OUT/doctor.txt" 2>&1
rc=$?
cat "$OUT/doctor.txt"

case $mode in
healthy)
	[ $rc = 0 ] || fail "doctor exited $rc on a healthy cluster"
	[ "$(count '^pair .*: ok [0-9.]* ms$')" = $((n - 1)) ] || fail "not every pair ok"
	[ "$(count '^9 checks, 0 problems$')" = 1 ] || fail "not 9 checks, 0 problems"
	for c in 'permissions  ok       0[0-7]* ' 'mtu          ok       .* MTU [0-9]*: RoCE path MTU ' \
		'persisted    ok       none '; do
		[ "$(count "^$c")" = 1 ] || fail "no line '$c'"
	done
	"$B"/collctl -j doctor --ranktable "$KCOLL_RANKTABLE" -T 5 >"$OUT/doctor.json" ||
		fail "doctor -j exited $? on a healthy cluster"
	grep -q '"failed_pairs":0' "$OUT/doctor.json" || fail "-j: $(cat "$OUT/doctor.json")"
	grep -q '"ms":[0-9]' "$OUT/doctor.json" || fail "-j: no time as a number"
	;;
broken)
	[ $rc = 1 ] || fail "doctor exited $rc with node $last's RoCE gone (want 1)"
	if [ "$r" = "$last" ]; then
		grep -q '^rdma device  problem' "$OUT/doctor.txt" || fail "no rdma device problem"
		[ "$(count 'FAILED: listen: ')" = $((n - 1)) ] || fail "not every pair failed at listen"
	else
		[ "$(count "^pair $r-$last .*FAILED: connect: .*no answer within 5 s")" = 1 ] ||
			fail "pair $r-$last did not fail at the connect stage"
		[ "$(count '^pair .*: ok [0-9.]* ms$')" = $((n - 2)) ] ||
			fail "the pairs without node $last are not all ok"
		[ "$(count '^[a-z ]* problem ')" = 0 ] || fail "a check of this node failed"
	fi
	;;
*)
	fail "mode '$mode': expected healthy or broken"
	;;
esac
echo "vm_doctor: rank $r: $mode as expected"
