#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Bad HCCL_ALGO strings and rank tables through the real tools (issue 30):
# each must fail with the tool's documented status and a message naming
# the fault (the key part is asserted exactly).  coll-sim's bad input is a
# usage error (2); collctl's check-algo/explain refuse a string with 1, as
# collctl.8 says for a value that is refused.  coll-perf takes HCCL_ALGO
# only through libcoll, which the module checks: see vm_e2e.sh.
#
# Usage: test_bad_input.sh  (COLL_SIM_BIN, COLLCTL_BIN: the tools to run)

SIM=${COLL_SIM_BIN:-build/bin/coll-sim}
CTL=${COLLCTL_BIN:-build/bin/collctl}
TMP=$(mktemp -d /tmp/kcoll-bad-input.XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
n=0
fail=0

# expect STATUS TEXT COMMAND...: the command exits STATUS, its stderr holds TEXT.
expect() {
	want=$1 text=$2
	shift 2
	n=$((n + 1))
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" != "$want" ] || ! grep -qF -- "$text" "$TMP/err"; then
		echo "not ok $n - $*: status $rc (want $want), stderr:"
		sed 's/^/#   /' "$TMP/err"
		echo "#   lacks: $text"
		fail=1
	else
		echo "ok $n - $*"
	fi
}

# algo STRING TEXT: through coll-sim --algo, collctl check-algo and explain --algo.
algo() {
	expect 2 "$2" "$SIM" -P 8 --algo "$1" -b 1M
	expect 1 "$2" "$CTL" check-algo "$1"
	expect 1 "$2" "$CTL" explain --op allreduce --bytes 1M --ranks 8 --algo "$1"
}

algo 'level1 ring' "missing ':' after \"level1\" at column 7"
algo 'level0:rign' "unknown algorithm \"rign\" at column 8"
algo 'level0:rign' 'did you mean "ring"?'
algo 'leve1:ring' 'unknown level "leve1" at column 1'
algo 'leve1:ring' 'did you mean "level1"?'
algo 'level0:' "missing algorithm after \"level0:\" at column 8"
algo 'level0:NA;level0:NA' 'level "level0" given twice at column 11'
algo 'level3:ring' 'level3 is not used by kcoll (levels are 0 server, 1 super-node, 2 cluster)'
algo ' level0:ring ; ' "trailing ';' at column 14"
algo 'level1:ring;;level2:NHR' 'empty level entry at column 13'
algo 'level1:NHR_V1' 'NHR_V1 is not implemented by kcoll at column 8'
algo 'level0:AHC' 'multi-level algorithm "AHC" at level0 at column 8'
algo 'level1:ri#ng' 'unexpected character "#" at column 10'
algo 'alreduce=level1:ring' 'did you mean "allreduce"?'
algo 'allreduce=level1:ring/allreduce=level1:NHR' 'operation "allreduce" given twice at column 23'
algo 'level1:ring/allreduce=level1:NHR' 'global and per-operation forms mixed at "level1" at column 1'
algo 'allreduce=level0:null;level1:ring' 'level0:null in a per-operation entry at column 18'
algo 'level1=ring' "missing ':' after \"level1\" at column 7"
# the echo and the caret, as a whole
expect 2 '  level0:rign
           ^~~~
  expected one of ring,' "$SIM" -P 8 --algo 'level0:rign' -b 1M

# rank tables: coll-sim --rank-table (libcoll's parser; coll-perf and
# coll_comm_init_ranktable() share it)
dev='{"device_id":"0","device_ip":"10.0.0.1","rank_id":"0"}'
srv="{\"server_id\":\"n0\",\"device\":[$dev]}"
table() { printf '%s' "$2" >"$TMP/$1.json"; echo "$TMP/$1.json"; }
rt() {
	expect 2 "$1.json:$2" "$SIM" --rank-table "$(table "$1" "$3")" --algo level1:ring -b 1M
}
rt comma '1:123: invalid JSON: unexpected character '"']'"' (a trailing comma before it?)' \
	"{\"status\":\"completed\",\"server_list\":[$srv,]}"
rt dupkey '2:2: key "status" given twice in one object' \
	"{\"status\":\"completed\",
 \"status\":\"completed\",\"server_list\":[$srv]}"
rt quote "1:11: invalid JSON" "{\"status\":'completed'}"
rt trunc "1:23: invalid JSON: unexpected end of data" '{"status":"completed",'
rt after "1:124: invalid JSON: unexpected character 'x'" "{\"status\":\"completed\",\"server_list\":[$srv]}x"
rt bomin "1:1: invalid JSON" "$(printf '\357\273\277\357\273\277{}')"
# semantic errors: file:line:col of the faulty value (or of the object
# lacking a field), then its JSON path
pretty() {	# pretty DEVICE1 [TAIL]: two servers, one device each, one a line
	printf '{\n  "status": "completed",\n  "server_list": [\n'
	printf '    { "server_id": "n0", "device": [ %s ] },\n' "$dev"
	printf '    { "server_id": "n1",\n      "device": [ %s ] }\n  ]%s\n}\n' "$1" "$2"
}
rt ip '6:34: server_list[1].device[0].device_ip is "10.0.0.300" (rank 1): not an IPv4' \
	"$(pretty '{ "device_ip": "10.0.0.300", "rank_id": "1" }')"
rt norank '6:19: server_list[1].device[0].rank_id is missing' \
	"$(pretty '{ "device_ip": "10.0.0.2" }')"
rt range '6:57: server_list[1].device[0].rank_id is "5": out of range' \
	"$(pretty '{ "device_ip": "10.0.0.2", "rank_id": "5" }')"
rt port '6:61: server_list[1].device[0].device_port is "x": expected a decimal integer' \
	"$(pretty '{ "device_ip": "10.0.0.2", "device_port": "x", "rank_id": "1" }')"
rt pod '10:37: super_pod_list[0].server_list[0].server_id is "n9": no such server' \
	"$(pretty '{ "device_ip": "10.0.0.2", "rank_id": "1" }' ',
  "version": "1.2",
  "super_pod_list": [ { "super_pod_id": "0",
    "server_list": [ { "server_id": "n9" } ] } ]')"
# a BOM at the start is skipped (columns count from after it): the table
# fails later, for its content
expect 2 'bom.json:1:1: $.server_list is missing' \
	"$SIM" --rank-table "$(table bom "$(printf '\357\273\277{"status":"completed"}')")" \
	--algo level1:ring -b 1M

echo "# $n bad inputs"
[ "$n" -ge 40 ] || { echo "not ok - only $n cases"; fail=1; }
exit $fail
