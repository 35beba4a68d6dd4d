#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the kcoll kselftest binaries given as arguments one after the other
# on this rank (inside a tools/kcoll-vm node, where every rank runs the
# same list in the same order), each with its own TAP output, and end with
# one line per binary and a total.  Exits 1 if any binary failed or
# skipped everything (exit 4: in the cluster the module must be there).
#
#   kcoll-vm run -n 4 --module kcoll.ko -- selftests/kcoll/run-suite.sh \
#       build/obj/selftests/kcoll/kcoll_badinput build/obj/selftests/kcoll/kcoll_test
rc=0
passed=0
failed=0
summary=
for t in "$@"; do
	name=$(basename "$t")
	echo "# === $name"
	start=$(date +%s)
	"$t"
	r=$?
	took=$(($(date +%s) - start))
	if [ "$r" = 0 ]; then
		passed=$((passed + 1))
		summary="$summary# $name: ok (${took} s)
"
	else
		failed=$((failed + 1))
		rc=1
		summary="$summary# $name: FAILED, exit $r (${took} s)
"
	fi
done
printf '%s' "$summary"
echo "# kcoll suite: $passed passed, $failed failed"
exit $rc
