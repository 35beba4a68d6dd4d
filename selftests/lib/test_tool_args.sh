#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad arguments to coll-sim, coll-perf and collctl get the message that
# names the value and what was expected, and exit 2 (1 for --plot without
# gnuplot); subcommand --help and -V exit 0.  No module needed.
#
#   test_tool_args.sh COLL_SIM COLL_PERF COLLCTL
set -u
sim=$1 perf=$2 ctl=$3
# coll-perf and collctl name themselves as called (coll-perf-san with SAN=1)
P=${perf##*/} C=${ctl##*/}
n=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect STATUS TEXT CMD...: CMD exits STATUS and prints TEXT (stdout or stderr)
expect() {
	local want=$1 text=$2 out rc
	shift 2
	n=$((n + 1))
	out=$("$@" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" = "$want" ] && [[ "$out" == *"$text"* ]]; then
		echo "ok $n - ${*##*/}"
	else
		echo "not ok $n - $*: exit $rc (want $want), output: $(echo "$out" | head -3)"
		fail=1
	fi
}

# sizes
expect 2 "coll-sim: --bytes: '1X' is not a size: expected bytes such as 4096, 64K" "$sim" --bytes 1X
expect 2 "coll-sim: --bytes: '1.3K' is not a whole number of bytes" "$sim" --bytes 1.3K
expect 2 "coll-sim: --minbytes: '-8': a size cannot be negative" "$sim" -b -8
expect 2 "coll-sim: --maxbytes 2T out of range 0..1T" "$sim" -e 2T
expect 2 "coll-sim: --bytes: '99999999999999999999' is too large" "$sim" --bytes 99999999999999999999
expect 2 "$P: --minbytes '1Q' is not a size" "$perf" -b 1Q
expect 2 "$P: --maxbytes 2T out of range 0..1T" "$perf" -e 2T
expect 2 "$C: explain: --bytes: '4Q' is not a size" "$ctl" explain --op allreduce --bytes 4Q
# ranges
expect 2 "coll-sim: --ranks 0 out of range 1..1048576" "$sim" -P 0
expect 2 "coll-sim: --ranks 4294967295 out of range 1..1048576" "$sim" --ranks 4294967295
expect 2 "coll-sim: --root 9 out of range 0..7" "$sim" -r 9
expect 2 "coll-sim: --rank 8 out of range 0..7" "$sim" --explain --rank 8
expect 2 "coll-sim: --stepfactor 1 out of range 2..1024" "$sim" -f 1
expect 2 "coll-sim: --window 0 out of range 1..65536" "$sim" --window 0
expect 2 "$P: --average 7 out of range 0..3" "$perf" -a 7
expect 2 "$P: --iters '5x' is not a number (expected 0..2147483647)" "$perf" -n 5x
expect 2 "$P: --timeout 0 out of range 1..3600" "$perf" -T 0
# names
expect 2 "coll-sim: --dtype: unknown data type 'fp33'" "$sim" -d fp33
expect 0 "L1:" "$sim" -d float --bytes 1M
expect 0 "L1:" "$sim" -d bf16 --bytes 1.5M
expect 2 "coll-sim: unknown operation 'nosuch'" "$sim" -t nosuch
# plots
expect 1 "coll-sim: --plot needs gnuplot (apt-get install gnuplot-nox)" \
	env PATH=/nonexistent "$sim" --bytes 1K --plot "$tmp/x.png"
expect 2 "coll-sim: --plot $tmp/x.bad: unknown image type (FILE.png or FILE.svg)" \
	"$sim" --plot "$tmp/x.bad"
expect 2 "a file name with a line break" "$sim" --plot "$tmp/a
b.png"
if command -v gnuplot >/dev/null; then
	# a quote in the name reaches gnuplot as part of a string, not as a command
	expect 0 "# plot: $tmp/it's \"x\".svg" "$sim" -b 1K -e 64K --plot "$tmp/it's \"x\".svg"
	n=$((n + 1))
	if grep -q '<svg' "$tmp/it's \"x\".svg" 2>/dev/null && grep -q '>1K<' "$tmp/it's \"x\".svg"; then
		echo "ok $n - the SVG was written, its axis labelled 1K"
	else
		echo "not ok $n - no SVG with size labels"; fail=1
	fi
fi
# collctl's short options: coll-perf's meaning or none (collctl.8, COMPATIBILITY)
expect 0 "on 4 ranks (2 servers" "$ctl" -S /nonexistent explain -t allreduce --bytes 4M -P 4 -k 2
expect 2 "Try '$C explain --help'." "$ctl" explain -o allreduce --bytes 4M
expect 2 "Try '$C explain --help'." "$ctl" explain -t allreduce -b 4M
expect 2 "$C: explain: --ranks 0 out of range 1..4294967295" "$ctl" explain -t allreduce --bytes 4M -P 0
expect 2 "$C: usage: monitor [--count COUNT] [-T SECONDS]" "$ctl" monitor -t 1
expect 2 "$C: usage: monitor [--count COUNT] [-T SECONDS]" "$ctl" monitor -c 1
expect 2 "$C: monitor: --timeout 0 out of range 1..4294967295" "$ctl" monitor -T 0
expect 2 "$C: monitor: --count 'x' is not a number (expected 1..4294967295)" "$ctl" monitor --count x
expect 2 "$C: calibrate: --timeout 0 out of range 1..86400" "$ctl" calibrate -T 0
expect 2 "$C: calibrate: --iters 0 out of range 1..1000" "$ctl" calibrate --ranktable x --rank 0 -n 0
expect 2 "Try '$C calibrate --help'." "$ctl" calibrate -R 0
expect 2 "$C: usage: doctor [--rdma-device NAME] [--root DIR]" "$ctl" doctor -d rxe0
# doctor's pair checks: bad input is refused before any check or wait
printf '%s\n' '{"version":"1.0","server_count":"2","server_list":[' \
	'{"server_id":"n0","device":[{"device_ip":"10.0.0.1","rank_id":"0"},' \
	'{"device_ip":"10.0.0.1","device_port":"16668","rank_id":"1"}]},' \
	'{"server_id":"n1","device":[{"device_ip":"10.0.0.2","rank_id":"2"},' \
	'{"device_ip":"10.0.0.2","device_port":"16668","rank_id":"3"}]}]}' \
	>"$tmp/rt.json"
expect 2 "$C: doctor: --hosts: empty host list (expected addresses separated by commas, rank i the i-th, e.g. 10.0.0.1,10.0.0.2)" \
	"$ctl" doctor --hosts '' --rank 0
expect 2 "$C: doctor: --hosts: host 1 of '10.0.0.1,,10.0.0.3' is empty (expected an IPv4 or IPv6 address)" \
	"$ctl" doctor --hosts 10.0.0.1,,10.0.0.3 --rank 0
expect 2 "$C: doctor: --hosts: 'node1' (host 1) is not an IPv4 or IPv6 address" \
	"$ctl" doctor --hosts 10.0.0.1,node1 --rank 0
expect 2 "$C: doctor: --rank 2 out of range 0..1 (the host list has 2 ranks)" \
	"$ctl" doctor --hosts 10.0.0.1,fd00::2 --rank 2
expect 2 "$C: doctor: --rank 9 out of range 0..0 (the host list has 1 rank)" \
	env KCOLL_RANK=9 "$ctl" doctor --hosts 10.0.0.1
# without --rank and KCOLL_RANK, the one rank whose address is this node's
expect 2 "$C: doctor: the host list: none of its ranks has an address of this node: give this node's rank (--rank R or KCOLL_RANK)" \
	env -u KCOLL_RANK "$ctl" doctor --hosts 240.0.0.1,240.0.0.2
expect 2 "$C: doctor: the host list: more than one of its ranks have an address of this node" \
	env -u KCOLL_RANK "$ctl" doctor --hosts 127.0.0.1,240.0.0.2,127.0.0.1
expect 1 "pair 0-1 (240.0.0.1 -> 127.0.0.1): FAILED: listen: " \
	env -u KCOLL_RANK "$ctl" doctor --hosts 240.0.0.1,127.0.0.1 --wait 0 -T 1
expect 2 "$C: doctor: --rank 4 out of range 0..3 ($tmp/rt.json has 4 ranks)" \
	"$ctl" doctor --ranktable "$tmp/rt.json" --rank 4
expect 2 "$C: doctor: --rank 'x' is not a number (expected 0..3)" \
	"$ctl" doctor --ranktable "$tmp/rt.json" --rank x
expect 2 "$C: doctor: cannot open rank table $tmp/none.json" \
	"$ctl" doctor --ranktable "$tmp/none.json" --rank 0
expect 2 "$C: doctor: --ranktable and --hosts: give one of them" \
	"$ctl" doctor --ranktable "$tmp/rt.json" --hosts 10.0.0.1 --rank 0
expect 2 "$C: doctor: --timeout 0 out of range 1..3600" "$ctl" doctor -T 0
expect 2 "$C: doctor: --port 0 out of range 1..65535" "$ctl" doctor --port 0
expect 2 "$C: doctor: --wait 'soon' is not a number (expected 0..86400)" "$ctl" doctor --wait soon
expect 2 "$C: doctor: --port 65535: rank 1 would listen on port 65536, above 65535" \
	"$ctl" doctor --ranktable "$tmp/rt.json" --rank 0 --port 65535
# the second rank of an address listens on the next port; no address here has
# an RDMA device, so the highest rank fails its pair at the listen stage at once
expect 1 "pair 0-1 (10.0.0.1 -> 10.0.0.1): FAILED: listen: " \
	"$ctl" doctor --hosts 10.0.0.1,10.0.0.1 --rank 1 --port 17000 --wait 0 -T 1
expect 1 '"peer_addr":"10.0.0.1","port":17001,"status":"failed","stage":"listen"' \
	"$ctl" -j doctor --hosts 10.0.0.1,10.0.0.1 --rank 1 --port 17000 --wait 0 -T 1
expect 0 "-P, --ranks P" "$ctl" explain --help
# help and versions
for c in show config check-ranktable check-algo explain monitor history why calibrate doctor; do
	expect 0 "Usage: $C [OPTION]... $c" "$ctl" "$c" --help
done
expect 0 "Usage: $C [OPTION]... why" "$ctl" why -h
expect 2 "$C: unknown command 'nosuch'" "$ctl" nosuch --help
for t in "$sim" "$perf" "$ctl"; do
	expect 0 "libcoll 0.1" "$t" -V
	expect 0 "module: " "$t" --version
done
echo "# test_tool_args: $n checks, $([ $fail = 0 ] && echo all passed || echo FAILED)"
exit $fail
