#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libcoll's man pages against lib/coll.h, so the two cannot drift apart:
#  - every function coll.h declares has a page of its own name in PAGEDIR,
#    a family page (NAME lists it) or a link page (".so man3/FAMILY.3",
#    one line, FAMILY's NAME lists it), as rdma-core's ibv_* pages are;
#  - a family page's NAME and SYNOPSIS list the same functions, each
#    SYNOPSIS prototype is coll.h's (whitespace aside), and NAME lists
#    nothing coll.h does not declare;
#  - every family page and OVERVIEW format without a warning and name each
#    family page in SEE ALSO (OVERVIEW) so coll(3) leads to all of them.
#
#   libman.sh HEADER PAGEDIR OVERVIEW
#
# The SYNOPSIS is read as groff renders it (fonts and escapes gone); its
# prototypes are the text between semicolons, #-lines left out.
set -u

header=${1:-} dir=${2:-} overview=${3:-}
fail=0
bad() { echo "libman: $*"; fail=1; }

# One prototype a line, whitespace made canonical: "int f(int a, char *b)".
canon() {
	tr '\n' ' ' | tr -s ' \t' '  ' | tr ';' '\n' |
		sed -e 's/^ *//; s/ *$//' -e 's/ *\([(),*]\) */\1/g' -e 's/,/, /g' \
		    -e 's/\([A-Za-z0-9_]\)\*/\1 */g'
}

# coll.h's prototypes: comments and preprocessor lines out, then each
# declaration from the last brace before it to its semicolon.
header_protos() {
	gcc -fpreprocessed -dD -E -P -x c "$header" 2>/dev/null | grep -v '^#' | canon |
		sed 's/.*[{}] *//' | grep -E '^[a-z].*\bcoll_[a-z0-9_]+\(' | grep -v '^typedef'
}

# A page as text, wide enough that no prototype wraps.
render() {
	groff -t -man -Tascii -P-cbou -rLL=250n "$1" 2>/dev/null
}

page_protos() {
	render "$1" | awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' |
		grep -v '^ *#' | canon | grep -E '\bcoll_[a-z0-9_]+\('
}

# The function names of a page's NAME line(s), one a line.
page_names() {
	sed -n '/^\.SH NAME/,/\\-/p' "$1" | sed -e '1d' -e 's/\\-.*//' | tr -s ', ' '\n' | grep .
}

fname() { grep -oE '\bcoll_[a-z0-9_]+\(' | tr -d '('; }

if [ ! -f "$header" ] || [ ! -d "$dir" ] || [ ! -f "$overview" ]; then
	echo "usage: libman.sh HEADER PAGEDIR OVERVIEW" >&2
	exit 2
fi

hprotos=$(header_protos)
hnames=$(fname <<<"$hprotos" | sort)
[ -n "$hnames" ] || { bad "no prototypes found in $header"; exit 1; }

families=() nlinks=0 nprotos=0
for page in "$dir"/*.3; do
	base=${page##*/}
	if grep -q '^\.so' "$page"; then
		target=$(sed -n 's|^\.so man3/\(.*\)$|\1|p' "$page")
		if [ "$(grep -c . "$page")" != 1 ] || [ -z "$target" ]; then
			bad "$page: a link page is one line '.so man3/FAMILY.3'"
		elif [ ! -f "$dir/$target" ] || grep -q '^\.so' "$dir/$target"; then
			bad "$page: links to $target, which is not a family page in $dir"
		elif ! page_names "$dir/$target" | grep -qx "${base%.3}"; then
			bad "$page: links to $target, whose NAME does not list ${base%.3}"
		fi
		nlinks=$((nlinks + 1))
		continue
	fi
	families+=("$page")
	warn=$(groff -t -man -ww -z "$page" 2>&1)
	[ -z "$warn" ] || bad "$page: groff warns: $warn"
	names=$(page_names "$page" | sort)
	protos=$(page_protos "$page")
	snames=$(fname <<<"$protos" | sort)
	page_names "$page" | grep -qx "${base%.3}" || bad "$page: NAME does not list ${base%.3}"
	[ "$names" = "$snames" ] ||
		bad "$page: NAME and SYNOPSIS differ:" \
			"$(comm -3 <(echo "$names") <(echo "$snames") | tr -d '\t' | paste -sd' ')"
	for n in $(comm -23 <(echo "$names") <(echo "$hnames")); do
		bad "$page: NAME lists $n, which $header does not declare"
	done
	while read -r p; do
		[ -n "$p" ] || continue
		n=$(fname <<<"$p" | head -n1)
		h=$(grep -E "\b$n\(" <<<"$hprotos")
		[ -z "$h" ] || [ "$p" = "$h" ] ||
			bad "$page: SYNOPSIS of $n is '$p', $header says '$h'"
		nprotos=$((nprotos + 1))
	done <<<"$protos"
	sed -n '/^\.SH "\{0,1\}SEE ALSO/,/^\.SH/p' "$overview" | grep -qE "^\.BR ${base%.3} \(3\)" ||
		bad "$overview: SEE ALSO does not name ${base%.3}(3)"
done

for n in $hnames; do
	[ -f "$dir/$n.3" ] || bad "$n (declared in $header) has no page $dir/$n.3"
done
warn=$(groff -t -man -ww -z "$overview" 2>&1)
[ -z "$warn" ] || bad "$overview: groff warns: $warn"

[ "$fail" = 0 ] || exit 1
echo "  man  libcoll: $(wc -w <<<"$hnames") functions of ${header##*/}: ${#families[@]} family" \
	"pages ($nprotos prototypes as in ${header##*/}), $nlinks link pages"
