#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# libcoll end to end inside the virtual cluster, run on every rank:
#   tools/vm/kcoll-vm run -n 2 --module kcoll.ko -- selftests/lib/vm_e2e.sh
# Every operation of coll-perf with exact checking (#wrong 0, else
# coll-perf exits 1), every type and reduction of AllReduce, a forced
# algorithm, a forced algorithm that falls back reported by collctl show
# and monitor (vm_fallback.sh), the asynchronous API (vm_async), collctl
# show/config/check-* on rank 0, the link model tunables (a bad write
# refused, the old value kept), collctl show / show COMM / explain /
# monitor against a live coll-perf run with a secret (the generic netlink
# family), ASan builds when present, a deliberate mismatch that must be
# caught, link rates with decimals, and collctl calibrate --write on both
# ranks (the same model on both nodes).
set -eu
B=${COLL_BIN:-build/bin}
r=${KCOLL_RANK:?run me through tools/vm/kcoll-vm}
OUT=${KCOLL_OUTDIR:-/tmp}
SYS=/sys/class/misc/kcoll

fail() { echo "vm_e2e: $*" >&2; exit 1; }

# On a loaded host one rank may start a collective long after the other:
# give connection set-up more than the default 30 s on every rank.
echo 120000 >"$SYS/connect_timeout_ms"

# A bad write to link-model attribute $1 ($2) is refused, by collctl and by
# sysfs itself, and the value stays what it was.
refuse() {
	old=$(cat "$SYS/$1")
	if "$B"/collctl config "$1" "$2" 2>"$OUT/refuse.err"; then
		fail "collctl config $1 '$2' was accepted"
	fi
	grep -q 'refused' "$OUT/refuse.err" || fail "no clear error for $1 '$2': $(cat "$OUT/refuse.err")"
	if (printf '%s' "$2" >"$SYS/$1") 2>/dev/null; then
		fail "sysfs accepted $1 = '$2'"
	fi
	[ "$(cat "$SYS/$1")" = "$old" ] || fail "$1 changed from $old to $(cat "$SYS/$1")"
}

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

# collctl against a live run: rank 0 listens for events, then looks at its
# communicator while coll-perf runs; rank 1 runs the same coll-perf.  The
# run has a secret, which libcoll reads from a file only its owner may
# read: collctl show says every peer proved it.
live="-t allreduce -b 1M -e 1M -n 200 -w 1"
(umask 077 && printf 'vm_e2e: the secret of this job\n' >"$OUT/secret")
if [ "$r" = 0 ]; then
	# Until SIGTERM: besides comm-new and comm-del it may see peer-lost
	# (rank 1 closing first), so no event count would be right.
	"$B"/collctl monitor -T 900 >"$OUT/monitor.out" 2>&1 &
	mon=$!
	"$B"/collctl -j monitor --count 1 -T 600 >"$OUT/monitor.json" 2>&1 &
	monj=$!
	sleep 2
	# shellcheck disable=SC2086
	KCOLL_SECRET_FILE="$OUT/secret" "$B"/coll-perf $live >"$OUT/live.out" 2>&1 &
	perf=$!
	id=
	while kill -0 $perf 2>/dev/null; do
		id=$("$B"/collctl show | awk '$1 ~ /^[0-9]+$/ && $4 == "ready" && $6 > 0 { print $1; exit }')
		[ -z "$id" ] || break
		sleep 0.2
	done
	[ -n "$id" ] || fail "no ready communicator with completed operations seen during coll-perf"
	"$B"/collctl show
	"$B"/collctl -j show | grep -q '"communicators"' || fail "collctl -j show lists no communicators"
	"$B"/collctl show "$id" | tee "$OUT/comm.txt"
	grep -q '^  1 ' "$OUT/comm.txt" || fail "show $id lists no peer 1"
	grep -q 'authenticated: every peer proved the secret' "$OUT/comm.txt" ||
		fail "show $id does not say its peers proved the secret"
	"$B"/collctl show | awk -v id="$id" '$1 == id && $NF == "secret" { ok = 1 } END { exit !ok }' ||
		fail "collctl show does not mark communicator $id authenticated"
	grep -Eq '^  [0-9]+ +allreduce ' "$OUT/comm.txt" || fail "show $id lists no last allreduce"
	"$B"/collctl -j show "$id" >"$OUT/comm.json"
	grep -q '"last_ops"' "$OUT/comm.json" || fail "collctl -j show $id has no last_ops"
	"$B"/collctl explain --op allreduce --bytes 1M "$id" | tee "$OUT/explain.txt"
	grep -q '^predicted time: ' "$OUT/explain.txt" || fail "explain predicts nothing"
	"$B"/collctl -j explain --op allgather --bytes 64K "$id" | grep -q '"predicted_us"' ||
		fail "collctl -j explain"
	"$B"/collctl explain --op allreduce --bytes 64M --ranks 4 --per-server 2
	"$B"/collctl config
	wait $perf || { cat "$OUT/live.out"; fail "coll-perf failed during collctl"; }
	i=0
	while ! grep -q "comm-del  *comm $id " "$OUT/monitor.out" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -TERM $mon
	wait $mon || { cat "$OUT/monitor.out"; fail "collctl monitor did not stop cleanly"; }
	wait $monj || { cat "$OUT/monitor.json"; fail "collctl -j monitor saw no event"; }
	cat "$OUT/monitor.out" "$OUT/monitor.json"
	grep -q "comm-new  *comm $id " "$OUT/monitor.out" || fail "monitor missed comm-new of $id"
	grep -q "comm-del  *comm $id " "$OUT/monitor.out" || fail "monitor missed comm-del of $id"
	grep -q '"event":"comm-new"' "$OUT/monitor.json" || fail "JSON monitor missed comm-new"
else
	# shellcheck disable=SC2086
	KCOLL_SECRET_FILE="$OUT/secret" "$B"/coll-perf $live
fi
# A forced algorithm that cannot run the operation: show and monitor say so.
"$(dirname "$0")"/vm_fallback.sh
for op in allreduce reducescatter allgather broadcast reduce scatter gather alltoall; do
	"$B"/coll-perf -t "$op" -b 64 -e 1K -f 4 -n 2 -w 1 -r all
done
# nccl-tests' command lines as they are, through its program names: -g 1,
# -t 1, CSV rows (-F); operations submitted back to back (-m 4), then each
# waited for (-z 1).
"$B"/all_reduce_perf -b 8 -e 256K -f 8 -g 1 -t 1 -n 2 -F "$OUT/perf.csv"
[ "$r" != 0 ] || grep -q '^262144,65536,float,sum,-1,[0-9.]*,[0-9.]*,[0-9.]*,0,' \
	"$OUT/perf.csv" || { cat "$OUT/perf.csv"; fail "all_reduce_perf -F: no 256K row"; }
"$B"/alltoall_perf -b 1K -e 4K -f 4 -g 1 -m 4 -n 2
"$B"/reduce_scatter_perf -b 1K -e 4K -f 4 -g 1 -z 1 -m 2 -n 2
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

# Rank 0 alone, with nothing running: the link model of automatic
# selection is listed, and bad writes are refused with the old value kept.
if [ "$r" = 0 ]; then
	for a in level0_alpha_ns level0_gbps level0_reduce_gbps level1_alpha_ns level1_gbps \
		 level1_reduce_gbps level2_alpha_ns level2_gbps level2_reduce_gbps level2_conv_pct \
		 level1_auto_mesh level2_auto_mesh; do
		"$B"/collctl config | grep -q "^$a " || fail "collctl config does not list $a"
	done
	[ "$(cat $SYS/level1_gbps)" = 200 ] || fail "level1_gbps default is not 200"
	refuse level1_gbps 0
	refuse level1_gbps abc
	refuse level1_gbps 1000001
	refuse level0_alpha_ns 10000001
	refuse level0_alpha_ns -1
	refuse level2_conv_pct 99
	# Mesh between servers is left out of automatic selection until admitted
	[ "$(cat $SYS/level1_auto_mesh)" = 0 ] || fail "level1_auto_mesh default is not 0"
	for bad in 2 -1 yes ' 1' 0x2; do refuse level1_auto_mesh "$bad"; done
	refuse level2_auto_mesh 10
	"$B"/collctl config level2_auto_mesh 1 | grep -q 'level2_auto_mesh = 1' ||
		fail "level2_auto_mesh 1 not taken"
	"$B"/collctl config level2_auto_mesh 0 >/dev/null
	"$B"/collctl config level1_gbps 100 | grep -q 'level1_gbps = 100' || fail "good write"
	"$B"/collctl config level1_gbps 200 >/dev/null
	"$B"/collctl -j config | grep -q '"level2_conv_pct"' || fail "collctl -j config"
	if "$B"/collctl show 999999 2>"$OUT/nocomm.err"; then fail "show of a missing comm"; fi
	grep -q 'no communicator 999999' "$OUT/nocomm.err" || fail "$(cat "$OUT/nocomm.err")"
fi

# Link rates take three decimals (an emulated link is far below 1 Gbit/s).
if [ "$r" = 0 ]; then
	for bad in 0.0001 1. .5 0.000 1000000.001 -1 1e3 ' 2'; do
		refuse level1_gbps "$bad"
	done
	"$B"/collctl config level1_gbps 0.16 | grep -q 'level1_gbps = 0.16$' ||
		fail "level1_gbps 0.16 not taken"
	printf '2.50\n' >"$SYS/level1_reduce_gbps"
	[ "$(cat "$SYS/level1_reduce_gbps")" = 2.5 ] || fail "level1_reduce_gbps 2.50 reads $(cat "$SYS/level1_reduce_gbps")"
	"$B"/collctl config level1_gbps 200 >/dev/null
	"$B"/collctl config level1_reduce_gbps 80 >/dev/null
fi

# collctl calibrate on both ranks: it writes the link model fitted to this
# cluster on both nodes, the values rank 0 reports, the same on both, and
# the fit explains the times it measured better than the defaults did.
"$B"/collctl -j calibrate --sizes 4K,64K,1M --iters 2 --write >"$OUT/calib.json" \
	2>"$OUT/calib.err" || { cat "$OUT/calib.err"; fail "collctl calibrate"; }
vals=$(cat "$SYS/level1_alpha_ns" "$SYS/level1_gbps" "$SYS/level1_reduce_gbps" | tr '\n' ' ')
echo "$vals" >"$OUT/calib.vals"
echo "calibrated level1: alpha_ns gbps reduce_gbps = $vals"
[ "$(cat "$SYS/level1_gbps")" != 200 ] || fail "calibrate --write left level1_gbps at 200"
if [ "$r" = 0 ]; then
	python3 - "$OUT/calib.json" "$SYS" <<'PY' || fail "calibrate's report and sysfs disagree"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["written"] is True, j
lv = [x for x in j["levels"] if x["level"] == 1]
assert len(lv) == 1 and lv[0]["ranks"] == 2, j["levels"]
lv = lv[0]
sysv = lambda n: float(open(f"{sys.argv[2]}/level1_{n}").read())
for n in ("alpha_ns", "gbps", "reduce_gbps"):
    assert abs(float(lv[n]) - sysv(n)) < 1e-9, (n, lv[n], sysv(n))
assert lv["rms_rel"] < lv["rms_rel_start"], lv
assert len(j["samples"]) == 12 and all(s["measured_us"] > 0 for s in j["samples"]), j
# two ranks run Mesh and Ring alike: no evidence, auto_mesh is kept (0)
assert lv["auto_mesh"] is None and open(f"{sys.argv[2]}/level1_auto_mesh").read() == "0\n", lv
print("calibrate: level1", lv)
PY
	# rank 1 wrote its node's values after its calibrate ended
	i=0
	while [ ! -s "$OUT/../rank.1/calib.vals" ] && [ $i -lt 120 ]; do sleep 1; i=$((i + 1)); done
	[ "$(cat "$OUT/../rank.1/calib.vals" 2>/dev/null)" = "$vals" ] ||
		fail "the nodes got different models: '$vals' here, '$(cat "$OUT/../rank.1/calib.vals" 2>/dev/null)' on rank 1"
fi
