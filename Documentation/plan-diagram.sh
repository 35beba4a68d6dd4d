#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Draw the plans of every rank of one operation as a table: one column per
# rank, one row per round of that rank's plan, from the real plans
# (coll-sim --explain).  `make docs` uses it for Documentation/algorithms.md.
#
#   plan-diagram.sh COLL-SIM [COLL-SIM OPTIONS...]
#
# Cells: ">3 4K" send 4 KiB to rank 3, "<3 4K" receive from rank 3,
# "<+3 4K" receive from rank 3 and reduce, "copy"/"red" local steps.
# Rounds are each rank's own: plans compose phase by phase, so round i of
# two ranks need not run at the same time (a send and its receive do).
set -eu

sim=$1
shift
nranks=$("$sim" "$@" --explain --rank 0 | sed -n 's/^# explain: .* on \([0-9]*\) ranks.*/\1/p')
[ -n "$nranks" ] || { echo "plan-diagram: coll-sim printed no plan" >&2; exit 1; }

for ((r = 0; r < nranks; r++)); do
	"$sim" "$@" --explain --rank "$r" | awk -v r="$r" '
	function human(b) {
		if (b >= 1048576 && b % 1048576 == 0) return b / 1048576 "M"
		if (b >= 1024 && b % 1024 == 0) return b / 1024 "K"
		return b
	}
	/^  round [0-9]+:/ {
		n = split($0, part, /\] *\[?/)
		cell = ""
		for (i = 1; i <= n; i++) {
			s = part[i]
			sub(/^.*\[/, "", s)
			if (s == "") continue
			len = s; sub(/^.*\+/, "", len)
			if (s ~ /^send to rank/) { split(s, w, " "); c = ">" w[4] " " human(len) }
			else if (s ~ /^recv\+reduce from rank/) { split(s, w, " "); c = "<+" w[4] " " human(len) }
			else if (s ~ /^recv from rank/) { split(s, w, " "); c = "<" w[4] " " human(len) }
			else if (s ~ /^copy/) c = "copy"
			else if (s ~ /^reduce/) c = "red"
			else { split(s, w, " "); c = w[1] }
			cell = cell (cell == "" ? "" : ", ") c
		}
		print r "\t" $2 "\t" cell
	}'
done | awk -F'\t' -v n="$nranks" '
	{ sub(/:$/, "", $2); cell[$1, $2] = $3; if ($2 + 1 > rows) rows = $2 + 1 }
	END {
		printf "| round |"
		for (r = 0; r < n; r++) printf " rank %d |", r
		printf "\n|---|"
		for (r = 0; r < n; r++) printf "---|"
		printf "\n"
		for (i = 0; i < rows; i++) {
			printf "| %d |", i
			for (r = 0; r < n; r++) printf " %s |", ((r, i) in cell) ? cell[r, i] : ""
			printf "\n"
		}
	}'
