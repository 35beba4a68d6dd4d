#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libcoll-mpi in the virtual cluster (make check-vm-mpi): on every node of
# tools/kcoll-vm, kcoll.ko loaded.  Node 0 runs selftests/mpi/mpi_coll_test
# over Open MPI on all nodes (one rank each, TCP between them, daemons
# started through dropbear: tools/bench/rsh.sh and sshd-setup.sh), without
# and with the preload; every result file must be identical between the
# two runs, and the counts of KCOLL_MPI_VERBOSE=1 must show routed calls
# (every operation, blocking and nonblocking) and the expected fallbacks.
# The other nodes wait for node 0 to finish.  Prints "N passed, M failed".
set -u
R=/kcvm/run
TOP=${MPI_TOP:?}
NN=${KCOLL_NNODES:-2}
T=$TOP/build/obj/mpi/mpi_coll_test-openmpi
LIB=$TOP/build/lib/libcoll-mpi-openmpi.so
D=$R/mpi

if [ "${KCOLL_RANK:-0}" != 0 ]; then
	for _ in $(seq 1 3000); do
		[ -e "$R/mpi.done" ] && exit 0
		sleep 0.5
	done
	echo "node ${KCOLL_RANK}: node 0 did not finish" >&2
	exit 1
fi

mkdir -p "$D"
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

hosts=""
for ((i = 0; i < NN; i++)); do hosts+="${hosts:+,}node$i:1"; done
# shellcheck disable=SC2054 # commas inside MCA values
mpi=(mpirun.openmpi --allow-run-as-root -np "$NN" --host "$hosts" --bind-to none
	--mca plm_rsh_agent "$TOP/tools/bench/rsh.sh" --mca oob_tcp_if_include eth0
	--mca pml ob1 --mca btl tcp,self,vader --mca btl_tcp_if_include eth0
	-x BENCH_SSH_KEY -x PATH)

run() { # NAME ARGS...
	local name=$1
	shift
	timeout 1500 "${mpi[@]}" "$@" "$T" "$D/$name" --quick >"$D/$name.out" 2>"$D/$name.err"
}

t0=$(date +%s)
if run plain; then ok "plain run ($(($(date +%s) - t0)) s)"; else bad "plain run"; fi
t0=$(date +%s)
if run preload -x "LD_PRELOAD=$LIB" -x KCOLL_MPI_VERBOSE=1; then
	ok "run with the preload ($(($(date +%s) - t0)) s)"
else
	bad "run with the preload"
fi
tail -n 3 "$D/plain.out" "$D/plain.err"
cat "$D/preload.out" "$D/preload.err"
for name in plain preload; do
	line=$(tail -n 1 "$D/$name.out")
	case $line in
	*" passed, 0 failed") ok "$name: '$line'";;
	*) bad "$name: closing line '$line'";;
	esac
done
for ((r = 0; r < NN; r++)); do
	if [ -s "$D/plain.$r" ] && cmp -s "$D/plain.$r" "$D/preload.$r"; then
		ok "rank $r: $(wc -l <"$D/plain.$r") results identical with and without the preload"
	else
		bad "rank $r: results differ"
		diff "$D/plain.$r" "$D/preload.$r" | head -20
	fi
done
e=$D/preload.err
if grep -qF "kcoll-mpi: calls of $NN ranks (kcoll module loaded)" "$e"; then
	ok "module seen"
else
	bad "no 'kcoll module loaded' line"
fi
for op in allreduce reduce bcast allgather reduce_scatter_block reduce_scatter scatter gather \
	alltoall alltoallv barrier; do
	for p in "" i; do
		if grep -q "^kcoll-mpi: $p$op: [1-9][0-9]* routed" "$e"; then
			ok "$p$op routed"
		else
			bad "$p$op: nothing routed"
		fi
	done
done
for want in "op 6" "datatype 2" "counts differ 2"; do
	if grep -q "fell back (.*$want" "$e"; then ok "fallback '$want'"; else bad "no fallback '$want'"; fi
done
if grep -q 'kcoll communicator failed\|no module' "$e"; then
	bad "a communicator was not made"
else
	ok "every communicator made"
fi
echo "$passed passed, $failed failed"
: >"$R/mpi.done"
[ "$failed" = 0 ]
