#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the kcoll kselftest binaries given as arguments one after the other
# on this rank (inside a tools/vm/kcoll-vm node, where every rank runs the
# same list in the same order), each with its own TAP output, and end with
# one line per binary (its TAP counts and time) and a total.  Exits 1 if
# any binary failed or skipped everything (exit 4: in the cluster the
# module must be there).  A failed binary's summary line is followed by
# its failed checks and "not ok" lines, so that the end of a long log (all
# a CI report may keep) still says what failed.
#
#   kcoll-vm run -n 4 --module kcoll.ko -- selftests/kcoll/run-suite.sh \
#       build/obj/selftests/kcoll/kcoll_badinput build/obj/selftests/kcoll/kcoll_test
rc=0
passed=0
failed=0
tpass=0
tskip=0
tfail=0
summary=
tap=$(mktemp) || exit 1
status=$(mktemp) || exit 1
trap 'rm -f "$tap" "$status"' EXIT
for t in "$@"; do
	name=$(basename "$t")
	echo "# === $name"
	start=$(date +%s)
	# Streamed as it comes, and kept to count the TAP results.
	{ "$t"; echo $? >"$status"; } 2>&1 | tee "$tap"
	r=$(cat "$status")
	took=$(($(date +%s) - start))
	skip=$(grep -c '^ok [0-9]* # SKIP' "$tap")
	pass=$(($(grep -c '^ok [0-9]' "$tap") - skip))
	fail=$(grep -c '^not ok [0-9]' "$tap")
	tpass=$((tpass + pass))
	tskip=$((tskip + skip))
	tfail=$((tfail + fail))
	counts="$pass passed, $skip skipped, $fail failed"
	if [ "$r" = 0 ]; then
		passed=$((passed + 1))
		summary="$summary# $name: ok, $counts (${took} s)
"
	else
		failed=$((failed + 1))
		rc=1
		summary="$summary# $name: FAILED, exit $r, $counts (${took} s)
$(grep -E '^# [^ ]+\.c:[0-9]+:|^not ok [0-9]' "$tap" | head -n 20 | sed 's/^/#   /')
"
	fi
done
printf '%s' "$summary"
echo "# kcoll suite: $passed passed, $failed failed (tests: $tpass passed, $tskip skipped, $tfail failed)"
exit $rc
