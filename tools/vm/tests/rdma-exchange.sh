#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real RDMA exchange between pairs of ranks of a kcoll-vm cluster (rank 2i
# serves, rank 2i+1 connects; an odd last rank only checks its device):
# ibv_rc_pingpong (RC send/recv over the RoCEv2 IPv4 GID, uverbs path),
# rping (rdma_cm connection + RDMA READ/WRITE) and ib_write_bw (a short
# RDMA WRITE bandwidth run).  Run as:  kcoll-vm run -n 2 -- tools/vm/tests/rdma-exchange.sh
set -u
r=${KCOLL_RANK:?not started by kcoll-vm}
dev=${KCOLL_RDMA_DEV:-rxe0}
read -r -a ips <<<"${KCOLL_NODE_IPS:?}"
rpn=${KCOLL_RANKS_PER_NODE:-1}
peer=$((r ^ 1))

echo "rank $r on $(hostname): $(rdma link show "$dev/1" | head -n 1)"
[ -s "$KCOLL_RANKTABLE" ] || { echo "no rank table"; exit 1; }
grep -q "\"rank_id\": \"$r\"" "$KCOLL_RANKTABLE" || { echo "rank $r missing from the rank table"; exit 1; }
if ((peer >= KCOLL_NRANKS)); then
	echo "rank $r has no partner; device check only"
	exit 0
fi
server_ip=${ips[$(((r & ~1) / rpn))]}
port_off=$((r / 2))

# client_retry CMD...: the server may not be listening yet.  Its node may
# have become ready well after this one, and on a loaded host it may take
# a while to get through the tool before: retry for a time, not a count.
client_retry() {
	local end=$((SECONDS + ${RDMA_EXCHANGE_WAIT:-90}))
	while :; do
		"$@" && return 0
		((SECONDS < end)) || return 1
		sleep 0.5
	done
}

fail=0
if ((r % 2 == 0)); then
	echo "== ibv_rc_pingpong server"
	ibv_rc_pingpong -d "$dev" -g 1 -n 100 -s 4096 -p $((18515 + port_off)) || fail=1
	echo "== rping server"
	if rping -s -a "$server_ip" -p $((7174 + port_off)) -C 10 -S 4096; then echo "rping: 10 pings ok"; else fail=1; fi
	echo "== ib_write_bw server"
	ib_write_bw -d "$dev" -x 1 -F -s 65536 -n 200 -p $((18600 + port_off)) >/tmp/bw.out 2>&1 || { cat /tmp/bw.out; fail=1; }
else
	echo "== ibv_rc_pingpong client -> $server_ip"
	client_retry ibv_rc_pingpong -d "$dev" -g 1 -n 100 -s 4096 -p $((18515 + port_off)) "$server_ip" || fail=1
	echo "== rping client -> $server_ip"
	if client_retry rping -c -a "$server_ip" -p $((7174 + port_off)) -C 10 -S 4096; then echo "rping: 10 pings ok"; else fail=1; fi
	echo "== ib_write_bw client -> $server_ip"
	client_retry ib_write_bw -d "$dev" -x 1 -F -s 65536 -n 200 -p $((18600 + port_off)) "$server_ip" >/tmp/bw.out 2>&1 || fail=1
	grep -E '^ *#bytes|^ *65536' /tmp/bw.out || { cat /tmp/bw.out; fail=1; }
fi
echo "rank $r: rdma exchange $( ((fail)) && echo FAILED || echo ok)"
exit $fail
