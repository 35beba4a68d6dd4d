#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# libcoll end to end inside the virtual cluster, run on every rank:
#   tools/kcoll-vm run -n 2 --module kcoll.ko -- selftests/lib/vm_e2e.sh
# Every operation of coll-perf with exact checking (#wrong 0, else
# coll-perf exits 1), every type and reduction of AllReduce, a forced
# algorithm, the asynchronous API (vm_async), collctl show/config/check-*
# on rank 0, ASan builds when present, and a deliberate mismatch that
# must be caught.
set -eu
B=${COLL_BIN:-build/bin}
r=${KCOLL_RANK:?run me through tools/kcoll-vm}

if [ "$r" = 0 ]; then
	"$B"/collctl show
	"$B"/collctl -j show >/dev/null
	"$B"/collctl config
	"$B"/collctl check-ranktable "$KCOLL_RANKTABLE"
	if "$B"/collctl config algo 'level1:nosuch' 2>/dev/null; then
		echo "collctl accepted a bad algo string" >&2; exit 1
	fi
	"$B"/collctl config algo 'level0:NA;level1:ring'
	"$B"/collctl config algo ''
fi
for op in allreduce reducescatter allgather broadcast reduce scatter gather alltoall; do
	"$B"/coll-perf -t "$op" -b 64 -e 1K -f 4 -n 2 -w 1 -r all
done
# The asynchronous API: eventfd + coll_test, coll_wait_all.
"${COLL_OBJ:-build/obj}"/selftests/lib/vm_async
"$B"/coll-perf -t allreduce -d all -o all -b 256 -e 256 -n 1 -w 0
"$B"/coll-perf -t allreduce -A 'level0:NA;level1:ring' -b 1K -e 4K -f 4 -n 2 -J "$KCOLL_OUTDIR/perf.json"
[ "$r" != 0 ] || test -s "$KCOLL_OUTDIR/perf.json"

# Under ASan/UBSan/LSan (make coll-tools SAN=1), when built.
if [ -x "$B"/coll-perf-san ]; then
	ASAN_OPTIONS=detect_leaks=1 "$B"/coll-perf-san -t allgather -b 64 -e 4K -f 8 -n 2
	[ "$r" != 0 ] || ASAN_OPTIONS=detect_leaks=1 "$B"/collctl-san show >/dev/null
fi

# The check can fail: rank 1 sends int32 bit patterns where rank 0
# expects float ones, so coll-perf must report wrong values (or the module
# must refuse the mismatch) and exit non-zero on every rank.
if [ "$r" = 0 ]; then t=float; else t=int32; fi
if "$B"/coll-perf -t alltoall -d $t -b 64 -e 64 -n 1 -w 0 >"${KCOLL_OUTDIR:-/tmp}/mismatch.out" 2>&1; then
	cat "${KCOLL_OUTDIR:-/tmp}/mismatch.out"
	echo "coll-perf did not notice wrong values" >&2
	exit 1
fi
grep -E 'FAILED|#wrong|coll-perf:' "${KCOLL_OUTDIR:-/tmp}/mismatch.out" || true
echo "mismatch detected as expected"
