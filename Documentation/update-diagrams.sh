#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Rewrite the plan diagrams of a Markdown file from the real plans:
# between a line "<!-- plan-diagram: COLL-SIM OPTIONS -->" and the next
# "<!-- /plan-diagram -->" goes what plan-diagram.sh draws for those
# options.  Prints the result; `make docs` writes it back, `make lint-docs`
# compares it with the file.
#
#   update-diagrams.sh COLL-SIM FILE.md
set -eu

sim=$1
file=$2
here=$(dirname "$0")
skip=0
while IFS= read -r line; do
	if [[ $line =~ ^\<!--\ plan-diagram:\ (.*)\ --\>$ ]]; then
		printf '%s\n\n' "$line"
		read -r -a args <<<"${BASH_REMATCH[1]}"
		"$here/plan-diagram.sh" "$sim" "${args[@]}"
		printf '\n'
		skip=1
		continue
	fi
	if [ "$skip" = 1 ]; then
		[ "$line" = "<!-- /plan-diagram -->" ] || continue
		skip=0
	fi
	printf '%s\n' "$line"
done <"$file"
[ "$skip" = 0 ] || { echo "update-diagrams: $file: unterminated plan-diagram" >&2; exit 1; }
