#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Rank program of `make check-vm-smoke` (tools/vm/smoke.sh): the RDMA
# exchange of rdma-exchange.sh, then a fault scenario chosen by SMOKE_MODE:
#   rxe-kill  rank 0 waits to be killed by a kill-rank fault (armed by the
#             marker line it prints); rank 1 waits until an rxe-del fault
#             removed rxe0, then exits 3 on purpose (the runner must fail)
#   kill-vm   rank 1 asks the runner, through $KCOLL_FAULT_REQ, to kill -9
#             its own VM; rank 0 waits until node1 stops answering pings
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
r=$KCOLL_RANK
read -r -a ips <<<"$KCOLL_NODE_IPS"

"$here/rdma-exchange.sh" || exit 1

case ${SMOKE_MODE:-} in
rxe-kill)
	if ((r == 0)); then
		echo "smoke: waiting for kill-rank"
		sleep 600
		echo "smoke: kill-rank did not come"
		exit 1
	fi
	echo "smoke: waiting for rxe-del"
	for ((i = 0; i < 300; i++)); do
		if ! rdma link show rxe0 >/dev/null 2>&1; then
			echo "smoke: rxe0 deleted by the fault hook; exiting 3 on purpose"
			exit 3
		fi
		sleep 0.2
	done
	echo "smoke: rxe0 is still there"
	exit 1 ;;
kill-vm)
	if ((r == 1)); then
		echo "smoke: requesting kill-vm of my own node"
		echo "kill-vm:node=$KCOLL_NODE" >>"$KCOLL_FAULT_REQ"
		sleep 600
		echo "smoke: still alive"
		exit 1
	fi
	echo "smoke: pinging node1 until it is gone"
	for ((i = 0; i < 120; i++)); do
		if ! busybox ping -c 1 -W 1 "${ips[1]}" >/dev/null 2>&1; then
			echo "smoke: node1 is gone"
			exit 0
		fi
		sleep 0.5
	done
	echo "smoke: node1 still answers"
	exit 1 ;;
*)
	echo "smoke: unknown SMOKE_MODE '${SMOKE_MODE:-}'"
	exit 1 ;;
esac
