#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every option (and sub-command) a tool's --help lists must appear in its
# man page, so the two cannot drift apart.
#
#   manpages.sh TOOL=MANPAGE...
#
# TOOL is run with --help.  Options are the -x and --long-name tokens at the
# start of the help's option lines (after the indentation, and after "-x, "
# pairs); sub-commands are the first words of the indented lines under a
# "Commands:" or "COMMANDS" heading.  The man page is read as plain text
# (roff escapes and font changes removed).
set -u

fail=0
total=0

# Plain text of a man page: \- to -, \e to \, font escapes and requests out.
man_text() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' \
	    -e 's/\\&//g' -e 's/^\.[A-Z][A-Z]* *//' "$1"
}

# The options and sub-commands one --help text lists, one per line.
help_items() {
	awk '
	/^[[:space:]]*$/ { next }
	/^(Commands:|COMMANDS)[[:space:]]*$/ { cmds = 1; next }
	/^[^[:space:]]/ { cmds = 0 }
	cmds && /^[[:space:]]+[a-z][a-z0-9-]*([[:space:]]|$)/ {
		if (match($0, /^[[:space:]]+/) && RLENGTH <= 4) print $1
		next
	}
	/^[[:space:]]+-/ {
		line = $0
		sub(/^[[:space:]]+/, "", line)
		while (match(line, /^--?[A-Za-z0-9][A-Za-z0-9_-]*/)) {
			print substr(line, 1, RLENGTH)
			line = substr(line, RLENGTH + 1)
			sub(/^[^,]*, */, "", line)
			if (line !~ /^-/) break
		}
	}' | sort -u
}

for pair in "$@"; do
	tool=${pair%%=*}
	page=${pair#*=}
	if [ ! -x "$tool" ] || [ ! -f "$page" ]; then
		echo "manpages: $tool or $page missing" >&2
		fail=1
		continue
	fi
	help=$("$tool" --help 2>&1) || { echo "manpages: $tool --help failed" >&2; fail=1; continue; }
	text=$(man_text "$page")
	missing=
	n=0
	while read -r item; do
		[ -n "$item" ] || continue
		n=$((n + 1))
		# whole token: not part of a longer option or word
		if ! grep -qE -- "(^|[^A-Za-z0-9_-])${item}([^A-Za-z0-9_-]|\$)" <<<"$text"; then
			missing="$missing $item"
		fi
	done < <(help_items <<<"$help")
	total=$((total + n))
	if [ -n "$missing" ]; then
		echo "manpages: ${page}: lacks what '${tool##*/} --help' lists:$missing"
		fail=1
	else
		echo "  man  ${page##*/}: all $n options and commands of ${tool##*/} --help"
	fi
done
[ "$fail" = 0 ] || exit 1
echo "  man  $total items checked"
