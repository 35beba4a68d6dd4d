#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libcoll-mpi on this host, no VM and no kcoll module: under Open MPI and
# under MPICH, selftests/mpi/mpi_coll_test on 2 ranks without the preload,
# with it (KCOLL_MPI_VERBOSE=1) and with it and KCOLL_MPI=0; the result
# files of the three runs must be identical byte for byte, and the counts
# printed at MPI_Finalize must say that nothing was routed, that every
# call fell back (for "no module", or the reason that comes first: a
# vector datatype, a user op, MAXLOC, unequal ReduceScatter counts, a
# one-rank communicator), and with KCOLL_MPI=0 for that.  The negative
# test's mode (--mismatch) with the preload: without the module it must
# skip the mismatched calls and pass the rest through (the VM test,
# vm_test.sh, runs it over kcoll).  Then selftests/mpi/mpi4py_test.py
# under Open MPI, with and without the preload.
#
#   MPI_LIBDIR=build/lib MPI_TESTDIR=build/obj/mpi selftests/mpi/host_test.sh
#
# Prints "N passed, M failed" and exits 1 if anything failed.
set -u
: "${MPI_LIBDIR:?}" "${MPI_TESTDIR:?}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -e /dev/kcoll ]; then
	echo "host_test: /dev/kcoll exists: this test expects a host without the module" >&2
fi
work=$(mktemp -d /tmp/kcoll-mpi-host.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# run IMPL NAME [VAR=VALUE...]: the test program, output in $work/IMPL-NAME.*
# (MODE, e.g. --mismatch, its second argument)
run() {
	local impl=$1 name=$2 env=() v
	shift 2
	for v in "$@"; do
		case $impl in
		openmpi) env+=(-x "$v");;
		mpich) env+=(-env "${v%%=*}" "${v#*=}");;
		esac
	done
	case $impl in
	openmpi) timeout 300 mpirun.openmpi -np 2 --oversubscribe "${env[@]}" \
		"$MPI_TESTDIR/mpi_coll_test-openmpi" "$work/$impl-$name" ${MODE:+"$MODE"};;
	mpich) timeout 300 mpirun.mpich -np 2 "${env[@]}" \
		"$MPI_TESTDIR/mpi_coll_test-mpich" "$work/$impl-$name" ${MODE:+"$MODE"};;
	esac >"$work/$impl-$name.out" 2>"$work/$impl-$name.err"
}

# has IMPL NAME TEXT: the run's stderr has the line
has() { grep -qF -- "$3" "$work/$1-$2.err"; }

for impl in openmpi mpich; do
	lib=$MPI_LIBDIR/libcoll-mpi-$impl.so
	if run "$impl" plain; then ok "$impl: plain run"; else bad "$impl: plain run"; fi
	if run "$impl" preload "LD_PRELOAD=$lib" KCOLL_MPI_VERBOSE=1; then
		ok "$impl: run with the preload"
	else
		bad "$impl: run with the preload"; cat "$work/$impl-preload.err"
	fi
	if run "$impl" off "LD_PRELOAD=$lib" KCOLL_MPI=0 KCOLL_MPI_VERBOSE=1; then
		ok "$impl: run with the preload and KCOLL_MPI=0"
	else
		bad "$impl: run with the preload and KCOLL_MPI=0"
	fi
	for name in preload off; do
		line=$(tail -n 1 "$work/$impl-$name.out")
		case $line in
		*" passed, 0 failed") ok "$impl $name: '$line'";;
		*) bad "$impl $name: closing line '$line'";;
		esac
		for r in 0 1; do
			if cmp -s "$work/$impl-plain.$r" "$work/$impl-$name.$r" &&
			   [ -s "$work/$impl-plain.$r" ]; then
				ok "$impl $name: rank $r's $(wc -l <"$work/$impl-plain.$r") results identical to the plain run"
			else
				bad "$impl $name: rank $r's results differ from the plain run"
				diff "$work/$impl-plain.$r" "$work/$impl-$name.$r" | head -5
			fi
		done
	done
	# What the counts must say.
	e=$impl-preload
	for want in "kcoll-mpi: calls of 2 ranks (no kcoll module here)" \
		"kcoll-mpi: iallreduce: 0 routed, 190 fell back (no module 190)" \
		"kcoll-mpi: allreduce: 0 routed, 480 fell back (no module 392, one rank 80, datatype 2, op 6)" \
		"kcoll-mpi: bcast: 0 routed, 66 fell back (no module 56, one rank 10)" \
		"kcoll-mpi: alltoallv: 0 routed, 34 fell back (no module 24, one rank 10)" \
		"kcoll-mpi: reduce_scatter: 0 routed, 122 fell back (no module 80, one rank 40, counts differ 2)" \
		"kcoll-mpi: ibarrier: 0 routed, 4 fell back (no module 4)"; do
		if has "$impl" preload "$want"; then ok "$e: '$want'"; else bad "$e: no '$want'"; fi
	done
	if grep -q 'kcoll-mpi: .*: [1-9][0-9]* routed' "$work/$e.err"; then
		bad "$e: something was routed without a module"
	else
		ok "$e: nothing routed"
	fi
	n=$(grep -c '^kcoll-mpi: [a-z_]*: ' "$work/$e.err")
	if [ "$n" = 22 ]; then ok "$e: counts for 22 operations"; else bad "$e: counts for $n operations, not 22"; fi
	for want in "kcoll-mpi: calls of 2 ranks (KCOLL_MPI=0)" \
		"kcoll-mpi: allreduce: 0 routed, 480 fell back (KCOLL_MPI=0 480)"; do
		if has "$impl" off "$want"; then ok "$impl off: '$want'"; else bad "$impl off: no '$want'"; fi
	done
	if [ ! -s "$work/$impl-plain.err" ] || ! grep -q kcoll "$work/$impl-plain.err"; then
		ok "$impl plain: no kcoll output"
	else
		bad "$impl plain: kcoll output without the preload"
	fi
	# The negative test's mode without the module: the mismatched calls
	# (undefined in plain MPI) skipped, the rest passed through, no hang.
	t0=$(date +%s)
	if MODE=--mismatch run "$impl" mismatch "LD_PRELOAD=$lib" KCOLL_MPI_VERBOSE=1 &&
	   [ "$(tail -n 1 "$work/$impl-mismatch.out")" = "4 passed, 0 failed" ] &&
	   has "$impl" mismatch "mismatch: not over kcoll, the mismatched calls skipped" &&
	   has "$impl" mismatch "kcoll-mpi: allreduce: 0 routed, 2 fell back (no module 2)"; then
		ok "$impl mismatch without the module: passed through ($(($(date +%s) - t0)) s)"
	else
		bad "$impl mismatch without the module"; cat "$work/$impl-mismatch.out" "$work/$impl-mismatch.err"
	fi
done
# mpi4py (Debian's links Open MPI only): the same comparison.
py=$(cd "$(dirname "$0")" && pwd)/mpi4py_test.py
for name in plain preload; do
	pre=()
	[ "$name" = preload ] && pre=(-x "LD_PRELOAD=$MPI_LIBDIR/libcoll-mpi-openmpi.so" -x KCOLL_MPI_VERBOSE=1)
	timeout 300 mpirun.openmpi -np 2 --oversubscribe "${pre[@]}" /usr/bin/python3 "$py" \
		"$work/py-$name" >"$work/py-$name.out" 2>"$work/py-$name.err"
	line=$(tail -n 1 "$work/py-$name.out")
	case $line in
	*" passed, 0 failed") ok "mpi4py $name: '$line'";;
	*) bad "mpi4py $name: closing line '$line'"; tail -n 5 "$work/py-$name.err";;
	esac
done
for r in 0 1; do
	if [ -s "$work/py-plain.$r" ] && cmp -s "$work/py-plain.$r" "$work/py-preload.$r"; then
		ok "mpi4py: rank $r's $(wc -l <"$work/py-plain.$r") results identical with the preload"
	else
		bad "mpi4py: rank $r's results differ with the preload"
	fi
done
if grep -qF "kcoll-mpi: iallreduce: 0 routed, 16 fell back (no module 16)" "$work/py-preload.err"; then
	ok "mpi4py: counts"
else
	bad "mpi4py: counts"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
