#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The command every rank of `make bench` runs (tools/bench/run-bench.sh
# starts it with kcoll-vm, one rank per VM).  Every rank walks the same
# list of phases; rank 0 paces them (see sync_phase) and runs Open MPI.
#
# Per repetition, contenders interleaved (the order rotates each
# repetition so that slow phases of the host hit every contender alike):
#   link     perftest ib_write_bw, node0->node1 and node2->node3 at once
#            (every VM busy), then the same pairs both ways at once (-b:
#            every VM sends and receives, as in a collective), and
#            ib_send_lat on the same two pairs
#   ucx      Open MPI, pml ucx, rc_verbs on rxe0 (mpi_coll_bench)
#   tcp      Open MPI, pml ob1, btl tcp on eth0 (mpi_coll_bench)
#   mpi.kcoll  the tcp contender's command line with libcoll-mpi preloaded:
#            the same program's collectives over kcoll (the MPI layer);
#            it must route, or the phase fails loudly (check_routed)
#   kcoll    coll-perf, automatic selection, every op
#   forced   coll-perf AllReduce with each algorithm of BENCH_ALGOS forced
#   tuned    coll-perf AllReduce, automatic, with the module defaults of
#            BENCH_TUNE set through sysfs (restored afterwards)
#   unchecked  coll-perf AllReduce, automatic, with fingerprint=0 (first
#            messages carry no fingerprint; restored afterwards): against
#            kcoll's AllReduce, what the fingerprint costs
#   calibrated  coll-perf, every op, automatic, with the link model that
#            `collctl calibrate` fitted to this cluster at boot (set
#            through sysfs for the phase, restored afterwards; every other
#            contender runs on the module's default model)
# Raw output: out/rank.0/rep<R>/<contender>...txt, parsed by
# tools/bench/bench-report.py.  BENCH_CONTENDERS="ucx tcp ..." runs only
# those (default every one).
set -u
R=/kcvm/run

TOP=${BENCH_TOP:?}
# Every rank writes into rank 0's output directory (kept on the host).
OUT=$R/out/rank.0
REPS=${BENCH_REPS:-5}
FIRST=${BENCH_FIRST_REP:-1}
MAXB=${BENCH_MAXBYTES:-64M}
ALGOS=${BENCH_ALGOS:-ring H-D_R NHR fullmesh tree}
# Timed iterations of small sizes (MPI: at most this many, fewer from
# BUDGET/size on; coll-perf: this many up to 128 KiB, 1 from 512 KiB).
ITERS=${BENCH_ITERS:-10}
# Module defaults tried as one more AllReduce contender ("" to skip).
# 122880 B (30 pages) is the largest chunk the module takes with 4 KiB
# pages: one SGE for the executor's header, one per page plus one, and
# rxe offers 32.
TUNE=${BENCH_TUNE-chunk_bytes=122880 slots=16}
OPS=${BENCH_OPS:-allreduce allgather reducescatter broadcast}
# 0: no calibration at boot and no calibrated contender.
CALIBRATE=${BENCH_CALIBRATE:-1}
SYS=/sys/class/misc/kcoll
MODEL_ATTRS="level0_alpha_ns level0_gbps level0_reduce_gbps level1_alpha_ns level1_gbps
	level1_reduce_gbps level2_alpha_ns level2_gbps level2_reduce_gbps level1_auto_mesh
	level2_auto_mesh"
# Bytes per size and per contender that fix the iteration count of the
# MPI program (large sizes run 1-3 iterations).
BUDGET=${BENCH_BUDGET:-4M}
export BENCH_SSH_KEY=${BENCH_SSH_KEY:?}
RSH=$TOP/tools/bench/rsh.sh
COLL_PERF=$TOP/build/bin/coll-perf
MPI_BENCH=$TOP/build/bench/mpi_coll_bench
# libcoll-mpi for Open MPI (make libcoll-mpi), preloaded by mpi.kcoll.
MPI_PRELOAD=$TOP/build/lib/libcoll-mpi-openmpi.so
NN=${KCOLL_NNODES:-4}

log() { echo "bench: $(date +%T) $*"; }
hosts=""
for ((i = 0; i < NN; i++)); do hosts+="${hosts:+,}node$i:1"; done

# Sizes of the sweep: 8 B * 4^k up to MAXB, and MAXB itself when it is
# off that grid (the default 64 MiB is: ..., 32M, 64M).
max=$(numfmt --from=iec "$MAXB")
sizes=()
for ((s = 8; s <= max; s *= 4)); do sizes+=("$s"); done
off_grid=0
((${#sizes[@]} && sizes[-1] < max)) && sizes+=("$max") && off_grid=1

mpi_common=(mpirun --allow-run-as-root -np "$NN" --host "$hosts" --bind-to none
	--mca plm_rsh_agent "$RSH" --mca oob_tcp_if_include eth0
	-x BENCH_SSH_KEY -x PATH)
mpi_ucx=(--mca pml ucx --mca btl "^openib,ofi,uct,tcp" --mca osc "^ucx"
	-x "UCX_TLS=rc_verbs,ud_verbs,self,sm" -x UCX_NET_DEVICES=rxe0:1
	-x UCX_IB_GID_INDEX=0 -x UCX_WARN_UNUSED_ENV_VARS=n)
mpi_tcp=(--mca pml ob1 --mca btl "tcp,self,vader" --mca btl_tcp_if_include eth0)
# Open MPI with libcoll-mpi: the tcp contender plus the preload, so that
# the preload is the only difference from mpi.tcp.  What stays in Open MPI
# (the preload's bootstrap allgather, mpi_coll_bench's reductions of its
# timings, any fallback) goes over TCP on eth0 rather than UCX on rxe0:
# UCX would open its own QPs and register memory on the soft-RoCE device
# kcoll uses and its progress polling would take the one vCPU from the
# kernel work of kcoll, charging the layer for UCX.  KCOLL_MPI_VERBOSE=1
# prints the routed/fallback counts that check_routed reads.
mpi_kcoll=("${mpi_tcp[@]}" -x "LD_PRELOAD=$MPI_PRELOAD" -x KCOLL_MPI_VERBOSE=1)

# Info for the report header (once per boot).
[ "$KCOLL_RANK" = 0 ] && {
	echo "kernel=$(uname -r)"
	echo "mtu=$(cat /sys/class/net/eth0/mtu)"
	echo "rxe_mtu=$(ibv_devinfo -d rxe0 | awk '/active_mtu/ {print $2}')"
	echo "nodes=$NN"
	echo "tune=$TUNE"
	echo "nproc=$(nproc)"
	echo "mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)"
	for f in /sys/class/misc/kcoll/*; do
		[ -f "$f" ] && echo "kcoll.$(basename "$f")=$(cat "$f")"
	done
	echo "gid0=$(cat /sys/class/infiniband/rxe0/ports/1/gids/0) $(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/0)"
	echo "gid1=$(cat /sys/class/infiniband/rxe0/ports/1/gids/1) $(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1)"
} >"$OUT/vm-info.txt" 2>&1

# bench-reduce: reduction vs memcpy throughput inside the VM.
[ "$KCOLL_RANK" = 0 ] && "$TOP/build/bench/bench_reduce" >"$OUT/bench-reduce.txt" 2>&1

# nap (a sleep without a fork), all_ranks (a file barrier in $R) and
# perf_node (perftest on two pairs).
# shellcheck source=tools/bench/node-common.sh
. "$TOP/tools/bench/node-common.sh"

# The link model fitted to this cluster, once per boot, by every rank at
# once (collctl calibrate --write), kept as "attr=value ..." in $calib for
# the calibrated contender; the default model is put back at once.  Rank
# 0 keeps calibrate's JSON report.  A failure on any rank (calibrate
# exchanges it, so all fail together) leaves $calib empty on every rank.
calib=""
calibrate() {
	local a save="" cj=/dev/null err=$R/calibrate.$KCOLL_RANK.err
	for a in $MODEL_ATTRS; do save+=" $a=$(cat "$SYS/$a")"; done
	[ "$KCOLL_RANK" = 0 ] && cj=$OUT/calibrate.rep$FIRST.json
	log "collctl calibrate (every rank)"
	if "$TOP/build/bin/collctl" -j calibrate --write >"$cj" 2>"$err"; then
		for a in $MODEL_ATTRS; do calib+=" $a=$(cat "$SYS/$a")"; done
	else
		log "collctl calibrate failed: $(tail -n 3 "$err")"
		: >"$R/calibrate-failed.$KCOLL_RANK"
	fi
	for a in $save; do echo "${a#*=}" >"$SYS/${a%%=*}"; done
	all_ranks "calibrated.$FIRST"
	if compgen -G "$R/calibrate-failed.*" >/dev/null; then calib=""; fi
	[ "$KCOLL_RANK" = 0 ] && log "calibrated model:${calib:- none}"
}
[ "$CALIBRATE" = 1 ] && calibrate

# Every rank runs the same loop; rank 0 alone runs the MPI contenders
# (mpirun starts the other ranks' processes through dropbear), and at the
# start of a phase that needs every node it posts go.REP.PHASE in the run
# directory, which the other ranks wait for.  No ssh handshake (slow in an
# emulated CPU) is in the way of perftest or coll-perf.
sync_phase() { # NAME
	local f=$R/go.$1
	if [ "$KCOLL_RANK" = 0 ]; then
		: >"$f"
	else
		while [ ! -e "$f" ]; do nap 0.2; done
	fi
}

# Every size of the tool's -a sweep (2 B..8 MiB) in one connection, then
# each size of the sweep above 8 MiB alone.
run_link() {
	local d=$1 s
	perf_node ib_write_bw "$d/write_bw.all" -a -n 10
	for s in "${sizes[@]}"; do
		((s > 8 << 20)) && perf_node ib_write_bw "$d/write_bw.$s" -s "$s" -n 5
	done
	# Under emulation one vCPU moves both directions of its VM's traffic:
	# a collective's load (every VM sends and receives) is this one.
	perf_node ib_write_bw "$d/write_bw_bidir.all" -a -n 10 -b
	for s in "${sizes[@]}"; do
		((s > 8 << 20)) && perf_node ib_write_bw "$d/write_bw_bidir.$s" -s "$s" -n 5 -b
	done
	# Latency of the smallest size (the 8 B target) and of 32 KiB; -a
	# would ping-pong up to 8 MiB, minutes under emulation.
	perf_node ib_send_lat "$d/send_lat.8" -s 8 -n 100
	perf_node ib_send_lat "$d/send_lat.32768" -s 32768 -n 20
}

run_mpi() { # DIR NAME ARGS...
	local d=$1 name=$2
	shift 2
	[ "$KCOLL_RANK" = 0 ] || return 0
	"${mpi_common[@]}" "$@" "$MPI_BENCH" -b 8 -e "$MAXB" -f 4 -n "$ITERS" -w 1 -B "$BUDGET" \
		>"$d/$name.txt" 2>&1 || log "$name failed (rc $?)"
}

# The mpi.kcoll run of DIR must have routed every op of mpi_coll_bench to
# kcoll (with the module loaded on every rank); otherwise it measured
# plain Open MPI under another name: say so loudly and leave
# DIR/mpi.kcoll-unrouted.txt (bench-report.py checks the counts itself
# too, leaves those numbers out and exits 1).
check_routed() { # DIR
	local f=$1/mpi.kcoll.txt op why=""
	[ "$KCOLL_RANK" = 0 ] || return 0
	grep -q "^kcoll-mpi: calls of $NN ranks (kcoll module loaded)" "$f" ||
		why="no 'kcoll-mpi: calls of $NN ranks (kcoll module loaded)' line"
	for op in allreduce allgather reduce_scatter_block bcast; do
		grep -q "^kcoll-mpi: $op: [1-9][0-9]* routed" "$f" || why+="${why:+; }$op: none routed"
	done
	[ -z "$why" ] && return 0
	echo "$why" >"$1/mpi.kcoll-unrouted.txt"
	log "mpi.kcoll DID NOT ROUTE to kcoll ($why): its numbers are plain Open MPI's"
	grep '^kcoll-mpi' "$f" | sed 's/^/bench:   /'
}

# coll-perf on every rank, in two bands (iterations per size are fixed
# per invocation), and MAXB alone when it is off the grid (coll-perf's
# sweep, like nccl-tests', stops at the last step).  Only rank 0 keeps
# the output.
coll_perf() { # DIR NAME OP ALGO
	local d=$1 name=$2 op=$3 algo=$4 band lo hi n out=/dev/null json=()
	for band in small large top; do
		case $band in
		small) lo=8 hi=128K n=$ITERS ;;
		large) lo=512K hi=$MAXB n=1 ;;
		top) lo=$max hi=$max n=1 ;;
		esac
		[ $band = top ] && ((!off_grid)) && continue
		((max < $(numfmt --from=iec "$lo"))) && continue
		((max < $(numfmt --from=iec "$hi"))) && hi=$MAXB
		if [ "$KCOLL_RANK" = 0 ]; then
			out=$d/$name.$band.txt
			json=(-J "$d/$name.$band.json")
		fi
		# Automatic selection: no KCOLL_ALGO at all (the sysfs default).
		env ${algo:+"KCOLL_ALGO=$algo"} "$COLL_PERF" -t "$op" -b "$lo" -e "$hi" -f 4 -n "$n" -w 1 -c 1 \
			"${json[@]}" >"$out" 2>&1 || log "$name $band failed (rc $?)"
	done
}

# kcoll with automatic selection: coll-perf's output is DIR/kcoll.NAME.OP.*
run_ops() { # DIR NAME OPS
	local op
	for op in $3; do coll_perf "$1" "kcoll.$2.$op" "$op" ""; done
}

# The contender NAME: kcoll's OPS with other module defaults ("attr=value
# ..." of /sys/class/misc/kcoll/) on every node for the phase, restored
# after it (with_module_defaults: chunk_bytes is checked at connection
# time, so every rank writes before any creates its communicator).  A
# value the module refuses on any rank skips the phase on every rank.
run_with_defaults() { # DIR NAME ATTRS OPS
	local refused=$1/$2-refused.txt
	[ -n "$3" ] || return 0
	with_module_defaults "$2.$rep" "$3" "$refused" run_ops "$1" "$2" "$4"
	[ "$KCOLL_RANK" != 0 ] || [ ! -e "$refused" ] ||
		log "$2: kcoll refused (rank value) $(refusals "$refused"); no $2 run in repetition $rep"
}

run_forced() {
	local a
	for a in $ALGOS; do
		coll_perf "$1" "kcoll.$a.allreduce" allreduce "level0:NA;level1:$a"
	done
}

# What used this VM's vCPU during a phase (tools/bench/phase_cpu.py puts
# it in the report): every process's CPU time, "p PID COMM SELF
# CHILDREN" in jiffies, read without a fork, between two copies of the
# guest's /proc/stat cpu line (reading ~100 files takes a while under
# TCG: the phase spans from the first line of its start to the last of
# its end).  The benchmark explains its own noise with it, e.g. a
# process of an earlier phase that is still running.
cpu_snap() { # FILE
	local f line comm
	local -a v
	{
		read -r line </proc/stat && echo "$line"
		for f in /proc/[0-9]*/stat; do
			read -r line 2>/dev/null <"$f" || continue
			comm=${line#*(} && comm=${comm%)*}
			read -ra v <<<"${line##*) }"
			# fields 14-17 of proc(5): utime stime cutime cstime
			echo "p ${line%% *} ${comm//[ |]/_} $((v[11] + v[12])) $((v[13] + v[14]))"
		done
		read -r line </proc/stat && echo "$line"
	} >"$1"
}

contenders=(link ucx tcp mpi.kcoll kcoll forced tuned unchecked)
[ -n "$calib" ] && contenders+=(calibrated)
if [ -n "${BENCH_CONTENDERS:-}" ]; then
	keep=()
	for c in "${contenders[@]}"; do
		[[ " $BENCH_CONTENDERS " == *" $c "* ]] && keep+=("$c")
	done
	((${#keep[@]})) || { log "BENCH_CONTENDERS='$BENCH_CONTENDERS' names none of ${contenders[*]}"; exit 1; }
	contenders=("${keep[@]}")
fi
for ((rep = FIRST; rep < FIRST + REPS; rep++)); do
	d=$OUT/rep$rep
	mkdir -p "$d/cpu"
	k=$(( (rep - 1) % ${#contenders[@]} ))
	order=("${contenders[@]:k}" "${contenders[@]:0:k}")
	for c in "${order[@]}"; do
		t0=$(date +%s)
		case $c in ucx|tcp|mpi.kcoll) ;; *) sync_phase "$rep.$c" ;; esac
		cpu_snap "$d/cpu/$KCOLL_RANK.$c.start"
		case $c in
		link) run_link "$d" ;;
		ucx) run_mpi "$d" mpi.ucx "${mpi_ucx[@]}" ;;
		tcp) run_mpi "$d" mpi.tcp "${mpi_tcp[@]}" ;;
		mpi.kcoll) run_mpi "$d" mpi.kcoll "${mpi_kcoll[@]}" && check_routed "$d" ;;
		kcoll) run_ops "$d" auto "$OPS" ;;
		forced) run_forced "$d" ;;
		tuned) run_with_defaults "$d" tuned "$TUNE" allreduce ;;
		unchecked) run_with_defaults "$d" unchecked fingerprint=0 allreduce ;;
		calibrated) run_with_defaults "$d" calibrated "$calib" "$OPS" ;;
		esac
		# Rank 0 alone runs an MPI phase; the others wait for its end.
		case $c in ucx|tcp|mpi.kcoll) sync_phase "$rep.$c.done" ;; esac
		cpu_snap "$d/cpu/$KCOLL_RANK.$c.end"
		if [ "$KCOLL_RANK" = 0 ]; then
			log "rep $rep $c: $(( $(date +%s) - t0 )) s"
			echo "$c $(( $(date +%s) - t0 ))" >>"$d/walltime.txt"
		fi
	done
done
log "done"
