#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: kcoll against Open MPI (UCX over rxe, and TCP), against
# Open MPI with libcoll-mpi preloaded (the MPI layer) and against the link
# (perftest) on one 4-VM soft-RoCE cluster, then the report.
#
# Environment (all optional):
#   BENCH_REPS=N           repetitions of every point (default 5)
#   BENCH_REPS_PER_BOOT=M  repetitions per cluster boot (default: all in
#                          one boot); several boots keep each under a time
#                          limit or a lock (contenders stay interleaved
#                          inside every repetition)
#   BENCH_QUICK=1          a short run: 1 repetition, 8 B..2 MiB, AllReduce
#                          forced to ring and H-D_R only
#   BENCH_MAXBYTES=SIZE    largest size (default 64M; sizes 8 B * 4^k and
#                          this one)
#   BENCH_ALGOS="A B ..."  algorithms forced for AllReduce (HCCL_ALGO tokens;
#                          default ring H-D_R NHR fullmesh tree)
#   BENCH_ITERS=N          timed iterations of small sizes (default 10)
#   BENCH_OPS="OP ..."     ops of kcoll auto (default all four)
#   BENCH_CONTENDERS="C ..."  only these contenders of bench-node.sh (link
#                          ucx tcp mpi.kcoll kcoll forced tuned unchecked
#                          calibrated;
#                          default all)
#   BENCH_NODES=N          VMs, one rank each (default 4; at least 2)
#   BENCH_CALIBRATE=0      no `collctl calibrate` at boot and no calibrated
#                          AllReduce contender (default 1)
#   BENCH_MTU=BYTES        MTU of the cluster, every contender (default 9000)
#   BENCH_MODULE_ARGS=...  kcoll.ko parameters for the run (e.g. chunk_bytes=)
#   BENCH_TUNE="attr=value ..."
#                          module defaults of the "tuned" AllReduce
#                          contender (default "chunk_bytes=122880
#                          slots=16"; "" for no tuned contender)
#   BENCH_LOCK=FILE        flock FILE around every boot (a shared machine)
#   BENCH_TIMEOUT=S        time limit of one boot (default 5400 s per
#                          repetition it runs); the repetitions done by
#                          then are reported
#   BENCH_OUT=DIR          output directory (default build/bench)
#   KVER=6.1               guest kernel
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${BENCH_OUT:-$TOP/build/bench}
REPS=${BENCH_REPS:-5}
MAXB=${BENCH_MAXBYTES:-64M}
ALGOS=${BENCH_ALGOS:-ring H-D_R NHR fullmesh tree}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	REPS=${BENCH_REPS:-1}
	MAXB=${BENCH_MAXBYTES:-2M}
	ALGOS=${BENCH_ALGOS:-ring H-D_R}
fi
PER_BOOT=${BENCH_REPS_PER_BOOT:-$REPS}
MTU=${BENCH_MTU:-9000}
KVER=${KVER:-6.1}
NODES=${BENCH_NODES:-4}
MODULE=$TOP/kcoll.ko
[ "$KVER" = 6.1 ] || MODULE=$TOP/build/kmod-$KVER/kcoll.ko

known="link ucx tcp mpi.kcoll kcoll forced tuned unchecked calibrated"
for c in ${BENCH_CONTENDERS:-}; do
	[[ " $known " == *" $c "* ]] ||
		{ echo "run-bench: BENCH_CONTENDERS: no contender '$c' ($known)" >&2; exit 1; }
done
((NODES >= 2)) || { echo "run-bench: BENCH_NODES=$NODES: at least 2" >&2; exit 1; }

for f in "$MODULE" "$TOP/build/bin/coll-perf" "$OUT/mpi_coll_bench" "$OUT/bench_reduce" \
	"$TOP/build/lib/libcoll-mpi-openmpi.so"; do
	[ -e "$f" ] || { echo "run-bench: $f is missing (make bench builds it)" >&2; exit 1; }
done

# The key node0 logs in to the other nodes with (dropbear format).
mkdir -p "$OUT/ssh"
if [ ! -s "$OUT/ssh/id" ]; then
	rm -f "$OUT/ssh/id" "$OUT/ssh/id.pub"
	dropbearkey -t ed25519 -f "$OUT/ssh/id" | grep '^ssh-' >"$OUT/ssh/id.pub"
fi

rm -rf "$OUT/runs"
mkdir -p "$OUT/runs"
t0=$(date +%s)
{
	echo "date=$(date -u +%FT%TZ)"
	echo "host_kernel=$(uname -r)"
	echo "host_cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "host_nproc=$(nproc)"
	echo "host_load=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "qemu=$(qemu-system-x86_64 --version | head -n1)"
	echo "qemu_settings=-accel tcg -cpu max -smp 1 -m 1024, virtio-net tap on one bridge, $NODES VMs"
	echo "mtu=$MTU"
	echo "reps=$REPS reps_per_boot=$PER_BOOT maxbytes=$MAXB"
	echo "algos=$ALGOS"
	echo "contenders=${BENCH_CONTENDERS:-all}"
	echo "module_args=${BENCH_MODULE_ARGS:-}"
	echo "git=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown)"
	for p in openmpi-bin libucx0 perftest rdma-core ibverbs-providers dropbear-bin qemu-system-x86; do
		echo "pkg.$p=$(dpkg-query -W -f '${Version}' "$p" 2>/dev/null || echo missing)"
	done
} >"$OUT/host-info.txt"

boot=0
for ((first = 1; first <= REPS; first += PER_BOOT)); do
	n=$PER_BOOT
	((first + n - 1 > REPS)) && n=$((REPS - first + 1))
	boot=$((boot + 1))
	run=(nice -n 5 "$TOP/tools/vm/kcoll-vm" run -n "$NODES" --kernel "$KVER" --mem 1024 --mtu "$MTU"
		--module "$MODULE" -t "${BENCH_TIMEOUT:-$((5400 * n))}" --run-dir "$OUT/runs/boot$boot" --output-ranks 0
		--setup "$TOP/tools/bench/sshd-setup.sh $OUT/ssh/id"
		-e BENCH_TOP="$TOP" -e BENCH_SSH_KEY="$OUT/ssh/id" -e BENCH_REPS="$n"
		-e BENCH_FIRST_REP="$first" -e BENCH_MAXBYTES="$MAXB" -e "BENCH_ALGOS=$ALGOS")
	[ -n "${BENCH_MODULE_ARGS:-}" ] && run+=(--module-args "$BENCH_MODULE_ARGS")
	[ -n "${BENCH_OPS:-}" ] && run+=(-e "BENCH_OPS=$BENCH_OPS")
	[ -n "${BENCH_ITERS:-}" ] && run+=(-e "BENCH_ITERS=$BENCH_ITERS")
	[ -n "${BENCH_CONTENDERS:-}" ] && run+=(-e "BENCH_CONTENDERS=$BENCH_CONTENDERS")
	[ -n "${BENCH_CALIBRATE:-}" ] && run+=(-e "BENCH_CALIBRATE=$BENCH_CALIBRATE")
	[ -n "${BENCH_TUNE+set}" ] && run+=(-e "BENCH_TUNE=$BENCH_TUNE")
	[ -n "${BENCH_LOCK:-}" ] && run=(flock "$BENCH_LOCK" "${run[@]}")
	b0=$(date +%s)
	echo "run-bench: boot $boot: repetitions $first..$((first + n - 1))"
	"${run[@]}" -- "$TOP/tools/bench/bench-node.sh" || echo "run-bench: boot $boot exited $?" >&2
	echo "boot$boot $(( $(date +%s) - b0 ))" >>"$OUT/host-info.txt.walltime"
done
echo "wall_s=$(( $(date +%s) - t0 ))" >>"$OUT/host-info.txt"
cat "$OUT/host-info.txt.walltime" >>"$OUT/host-info.txt" && rm -f "$OUT/host-info.txt.walltime"
python3 "$TOP/tools/bench/bench-report.py" "$OUT"
