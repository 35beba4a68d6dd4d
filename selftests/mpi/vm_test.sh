#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libcoll-mpi in the virtual cluster (make check-vm-mpi): on every node of
# tools/vm/kcoll-vm, kcoll.ko loaded.  Node 0 runs selftests/mpi/mpi_coll_test
# over Open MPI and over MPICH on all nodes (KCOLL_RANKS_PER_NODE ranks
# each, TCP between them, daemons started through dropbear:
# tools/bench/rsh.sh and sshd-setup.sh), without and with the preload;
# every result file must be identical between the two runs, and the
# counts of KCOLL_MPI_VERBOSE=1 must show routed calls (every operation,
# blocking and nonblocking) and the expected fallbacks (a data movement
# in any layout none but on a communicator of one rank).  Then the negative
# test (--mismatch, with the preload only): counts that differ between
# ranks are an MPI error through the communicator's handler (blocking) or
# from MPI_Wait (nonblocking), not a hang, within 120 s.
# Last selftests/mpi/mpi4py_test.py over Open MPI, the same comparison.
# The other ranks wait for node 0 to finish.  Prints "N passed, M failed".
set -u
R=/kcvm/run
TOP=${MPI_TOP:?}
NN=${KCOLL_NNODES:-2}
K=${KCOLL_RANKS_PER_NODE:-1}
NP=$((NN * K))
D=$R/mpi
IMPLS=${MPI_VM_IMPLS:-openmpi mpich}

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
for ((i = 0; i < NN; i++)); do hosts+="${hosts:+,}node$i:$K"; done
RSH=$TOP/tools/bench/rsh.sh

run() { # IMPL NAME MODE [VAR=VALUE...]
	local impl=$1 name=$2 mode=$3 env=() v
	shift 3
	case $impl in
	openmpi)
		for v in "$@"; do env+=(-x "$v"); done
		# shellcheck disable=SC2054 # commas inside MCA values
		timeout 600 mpirun.openmpi --allow-run-as-root -np "$NP" --host "$hosts" \
			--bind-to none --mca plm_rsh_agent "$RSH" --mca oob_tcp_if_include eth0 \
			--mca pml ob1 --mca btl tcp,self,vader --mca btl_tcp_if_include eth0 \
			-x BENCH_SSH_KEY -x PATH "${env[@]}" \
			"$TOP/build/obj/mpi/mpi_coll_test-openmpi" "$D/$impl-$name" "$mode";;
	mpich)
		for v in "$@"; do env+=(-genv "${v%%=*}" "${v#*=}"); done
		# Debian's MPICH is ch4:ucx; make check-vm-mpi passes UCX's
		# verbs transports on rxe0 in MPI_VM_MPICH_UCX_TLS/_DEVICES (its
		# TCP transport hangs now and then in MPI_Finalize after every
		# rank is done, openucx/ucx#8738), TCP is what is left without.
		timeout 600 mpirun.mpich -launcher rsh -launcher-exec "$RSH" -iface eth0 \
			-hosts "$hosts" -np "$NP" -genv BENCH_SSH_KEY "$BENCH_SSH_KEY" \
			-genv UCX_TLS "${MPI_VM_MPICH_UCX_TLS:-tcp,self,sm}" \
			-genv UCX_NET_DEVICES "${MPI_VM_MPICH_UCX_DEVICES:-eth0}" \
			-genv UCX_IB_GID_INDEX 0 "${env[@]}" \
			"$TOP/build/obj/mpi/mpi_coll_test-mpich" "$D/$impl-$name" "$mode";;
	esac >"$D/$impl-$name.out" 2>"$D/$impl-$name.err"
}

for impl in $IMPLS; do
lib=$TOP/build/lib/libcoll-mpi-$impl.so
t0=$(date +%s)
if run "$impl" plain --quick; then ok "$impl: plain run ($(($(date +%s) - t0)) s)"; else bad "$impl: plain run"; fi
t0=$(date +%s)
if run "$impl" preload --quick "LD_PRELOAD=$lib" KCOLL_MPI_VERBOSE=1; then
	ok "$impl: run with the preload ($(($(date +%s) - t0)) s)"
else
	bad "$impl: run with the preload"
fi
tail -n 3 "$D/$impl-plain.out" "$D/$impl-plain.err"
cat "$D/$impl-preload.out" "$D/$impl-preload.err"
for name in plain preload; do
	line=$(tail -n 1 "$D/$impl-$name.out")
	case $line in
	*" passed, 0 failed") ok "$impl $name: '$line'";;
	*) bad "$impl $name: closing line '$line'";;
	esac
done
for ((r = 0; r < NP; r++)); do
	if [ -s "$D/$impl-plain.$r" ] && cmp -s "$D/$impl-plain.$r" "$D/$impl-preload.$r"; then
		ok "$impl rank $r: $(wc -l <"$D/$impl-plain.$r") results identical with and without the preload"
	else
		bad "$impl rank $r: results differ"
		diff "$D/$impl-plain.$r" "$D/$impl-preload.$r" | head -20
	fi
done
e=$D/$impl-preload.err
if grep -qF "kcoll-mpi: calls of $NP ranks (kcoll module loaded)" "$e"; then
	ok "$impl: module seen"
else
	bad "no 'kcoll module loaded' line"
fi
for op in allreduce reduce bcast allgather reduce_scatter_block reduce_scatter scatter gather \
	alltoall alltoallv barrier; do
	for p in "" i; do
		if grep -q "^kcoll-mpi: $p$op: [1-9][0-9]* routed" "$e"; then
			ok "$impl: $p$op routed"
		else
			bad "$impl: $p$op: nothing routed"
		fi
	done
done
# The data movements take any layout (layouts() mixes them between
# ranks): their only fallback is a communicator of one rank.
for op in bcast allgather alltoall alltoallv gather scatter; do
	for p in "" i; do
		line=$(grep "^kcoll-mpi: $p$op: " "$e")
		case $line in
		*" 0 fell back"|*" fell back (one rank "*[0-9]")") ok "$impl: $line";;
		*) bad "$impl: $p$op: '$line'";;
		esac
	done
done
for want in "op $((3 * NP))" "datatype $NP" "counts differ $NP"; do
	if grep -q "fell back (.*$want" "$e"; then ok "$impl: fallback '$want'"; else bad "$impl: no fallback '$want'"; fi
done
if grep -q 'kcoll communicator failed\|no module' "$e"; then
	bad "$impl: a communicator was not made"
else
	ok "$impl: every communicator made"
fi
t0=$(date +%s)
run "$impl" mismatch --mismatch "LD_PRELOAD=$lib"
cat "$D/$impl-mismatch.out" "$D/$impl-mismatch.err"
line=$(tail -n 1 "$D/$impl-mismatch.out")
dt=$(($(date +%s) - t0))
case $line in
*" passed, 0 failed") ok "$impl mismatch ($dt s): '$line'";;
*) bad "$impl mismatch: closing line '$line'";;
esac
if [ "$dt" -le 120 ]; then ok "$impl mismatch: no hang"; else bad "$impl mismatch: $dt s"; fi
if grep -q "mismatched iallreduce returned .*kcoll" "$D/$impl-mismatch.err"; then
	ok "$impl mismatch: nonblocking error with kcoll's message"
else
	bad "$impl mismatch: no nonblocking error"
fi
done

# mpi4py (Debian's links Open MPI only), with and without the preload.
# shellcheck disable=SC2054 # commas inside MCA values
py=(timeout 600 mpirun.openmpi --allow-run-as-root -np "$NP" --host "$hosts" --bind-to none
	--mca plm_rsh_agent "$RSH" --mca oob_tcp_if_include eth0 --mca pml ob1
	--mca btl tcp,self,vader --mca btl_tcp_if_include eth0 -x BENCH_SSH_KEY -x PATH)
for name in plain preload; do
	pre=()
	[ "$name" = preload ] &&
		pre=(-x "LD_PRELOAD=$TOP/build/lib/libcoll-mpi-openmpi.so" -x KCOLL_MPI_VERBOSE=1)
	"${py[@]}" "${pre[@]}" /usr/bin/python3 "$TOP/selftests/mpi/mpi4py_test.py" "$D/py-$name" \
		>"$D/py-$name.out" 2>"$D/py-$name.err"
	line=$(tail -n 1 "$D/py-$name.out")
	case $line in
	*" passed, 0 failed") ok "mpi4py $name: '$line'";;
	*) bad "mpi4py $name: closing line '$line'"; tail -n 5 "$D/py-$name.err";;
	esac
done
grep '^kcoll-mpi' "$D/py-preload.err"
for ((r = 0; r < NP; r++)); do
	if [ -s "$D/py-plain.$r" ] && cmp -s "$D/py-plain.$r" "$D/py-preload.$r"; then
		ok "mpi4py rank $r: results identical with and without the preload"
	else
		bad "mpi4py rank $r: results differ"
	fi
done
if grep -q '^kcoll-mpi: allreduce: [1-9][0-9]* routed' "$D/py-preload.err"; then
	ok "mpi4py: allreduce routed"
else
	bad "mpi4py: nothing routed"
fi
echo "$passed passed, $failed failed"
: >"$R/mpi.done"
[ "$failed" = 0 ]
