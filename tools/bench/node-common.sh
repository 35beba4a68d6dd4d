# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the scripts make bench, bench-profile and bench-tune run on
# every rank of the virtual cluster (bench-node.sh, profile-node.sh,
# tune-node.sh).

# Sleep without a fork: under TCG each sleep(1) exec costs the vCPU tens
# of ms, and ranks that poll for the next phase while rank 0 runs the MPI
# contenders would take that CPU from them (tools/vm/vm-init.sh keeps its
# own copy: it runs from the run directory, before the share is a path).
nap_fifo=$(mktemp -u /tmp/nap.XXXXXX)
if mkfifo "$nap_fifo" && exec {nap_fd}<>"$nap_fifo"; then
	nap() { read -rt "$1" -u "$nap_fd" || :; }
else
	nap() { sleep "$1"; }
fi
rm -f "$nap_fifo"

# A file barrier in the run directory $R: every rank has reached NAME.
all_ranks() { # NAME
	local i
	: >"$R/$1.${KCOLL_RANK:?}"
	for ((i = 0; i < ${KCOLL_NRANKS:?}; i++)); do
		while [ ! -e "$R/$1.$i" ]; do nap 0.2; done
	done
}

# perftest between node PEER (server, odd node) and this node (client,
# even node): node0->node1 and node2->node3 at once.  Output in
# OUTPREFIX.server.NODE.txt and OUTPREFIX.pairN.txt.
perf_node() { # TOOL OUTPREFIX ARGS...
	local tool=$1 pre=$2 node=${KCOLL_NODE:?} peer
	shift 2
	if ((node % 2)); then
		"$tool" -d rxe0 -x 1 -F "$@" >"$pre.server.$node.txt" 2>&1
	else
		peer=node$((node + 1))
		for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
			sleep 1
			"$tool" -d rxe0 -x 1 -F "$@" "$peer" >"$pre.pair$((node / 2)).txt" 2>&1 && break
		done
	fi
}
