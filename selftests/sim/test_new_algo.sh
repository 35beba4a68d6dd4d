#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An algorithm is one file plus its enum value and one line of the table.
# In a copy of the tree, alg_ring.c becomes alg_ring2.c under a new name
# ("ring2") and enum value (KCOLL_ALGO_RING2), tried first by automatic
# selection; the uapi enum and the table in algo/kc_algos.c are the only
# other files edited.  Then the HCCL_ALGO parser, --all-algos, automatic
# selection and the algorithm test matrix must all know it.
#
# usage: test_new_algo.sh [SOURCE_TREE]   (default: this script's tree)
set -eu

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fail=1; }

# the sources (no build/, no .git), and the harness headers already fetched
(cd "$src" && tar cf - --exclude=./build --exclude=./.git .) | (cd "$tmp" && tar xf -)
mkdir -p "$tmp/build"
cp -r "$src/build/ksft" "$tmp/build/ksft"

# 1. the algorithm's file: a copy of Ring under its new name, selection's first try
sed -e 's/kc_alg_ring\b/kc_alg_ring2/' -e 's/KC_ALGO_DECLARE(ring)/KC_ALGO_DECLARE(ring2)/' \
    -e 's/KCOLL_ALGO_RING,/KCOLL_ALGO_RING2,/' \
    -e 's/\.name = "ring"/.name = "ring2"/' -e 's/\.hccl = "ring"/.hccl = "ring2"/' \
    -e 's/\.auto_rank = [0-9]*/.auto_rank = 1/' \
    "$tmp/algo/alg_ring.c" > "$tmp/algo/alg_ring2.c"
# 2. its enum value, before the sentinel
sed -i 's/^\tKCOLL_ALGO_COUNT$/\tKCOLL_ALGO_RING2\t= KCOLL_ALGO_AHC_BROKE + 1,\n&/' \
    "$tmp/uapi/linux/kcoll.h"
# 3. its place in the table: declared, and listed last
sed -i -e 's/^KC_ALGO_DECLARE(tree);$/&\nKC_ALGO_DECLARE(ring2);/' \
    -e 's/^\t&kc_alg_tree,$/&\n\t\&kc_alg_ring2,/' "$tmp/algo/kc_algos.c"
grep -q 'KCOLL_ALGO_RING2' "$tmp/uapi/linux/kcoll.h" && grep -q '&kc_alg_ring2,' "$tmp/algo/kc_algos.c" ||
	{ echo "not ok - the copy was not edited (enum or table moved?)"; exit 1; }
[ "$(cd "$tmp" && diff -r -q "$src/algo" algo | wc -l)" = 2 ] ||
	{ echo "not ok - more than alg_ring2.c and kc_algos.c differ in algo/"; exit 1; }

sim=$tmp/build/bin/coll-sim
ta=$tmp/build/obj/selftests/algo/test_algo
nice make -s -C "$tmp" -j2 "$sim" "$ta" >"$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; echo "not ok - the copy with ring2 does not build"; exit 1; }
ok "the tree with alg_ring2.c builds"

# the parser takes its HCCL token and lists it among the algorithms
out=$("$sim" -P 5 --op allreduce --algo 'level0:NA;level1:ring2' --bytes 1M 2>&1) &&
	echo "$out" | grep -q 'ring2' && ok "HCCL_ALGO level1:ring2 parses and runs" ||
	bad "HCCL_ALGO level1:ring2: $out"
out=$("$sim" -P 5 --op allreduce --algo 'level0:bogus' --bytes 1M 2>&1) || true
echo "$out" | grep -q 'tree, ring2, NA or null' && ok "the parser's error text lists ring2" ||
	bad "parser error text: $out"

# --all-algos runs it beside the others
out=$("$sim" -P 6 --op allgather -b 64K -e 64K --all-algos 2>&1)
echo "$out" | grep -qw 'ring2' && ok "--all-algos lists ring2" || bad "--all-algos: $out"

# selection tries it first: where Ring ties for the least cost (2 ranks), it wins
out=$("$sim" -P 2 --op allreduce --bytes 1M --explain 2>&1)
echo "$out" | grep -q 'level1: ring2 .*automatic' && ok "automatic selection picks ring2" ||
	bad "selection: $(echo "$out" | head -5)"

# the algorithm test matrix runs it (quick sweep, ring2 only)
if KC_TEST_QUICK=1 KC_TEST_ALGO=ring2 "$ta" >"$tmp/test_algo.log" 2>&1; then
	ok "the algorithm test matrix passes for ring2"
else
	tail -20 "$tmp/test_algo.log"
	bad "the algorithm test matrix for ring2"
fi
exit $fail
