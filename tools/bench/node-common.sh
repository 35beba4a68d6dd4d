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
	# (A child shell given nap with export -f may lack the FIFO: sleep.)
	nap() { read -rt "$1" -u "$nap_fd" 2>/dev/null || (($? > 128)) || sleep "$1"; }
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
# OUTPREFIX.server.NODE.txt and OUTPREFIX.pairN.txt.  Each run is bounded
# by PERF_TIMEOUT (default 900 s): under load rxe can use up a QP's
# retries, and perftest then waits for ever (seen with -b at 12 MiB).  The
# client retries a run that failed (its server not listening yet), not one
# that timed out.
perf_node() { # TOOL OUTPREFIX ARGS...
	local tool=$1 pre=$2 node=${KCOLL_NODE:?} peer out rc
	local limit=${PERF_TIMEOUT:-900}
	shift 2
	if ((node % 2)); then
		timeout "$limit" "$tool" -d rxe0 -x 1 -F "$@" >"$pre.server.$node.txt" 2>&1
		return
	fi
	peer=node$((node + 1)) out=$pre.pair$((node / 2)).txt
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		nap 1
		timeout "$limit" "$tool" -d rxe0 -x 1 -F "$@" "$peer" >"$out" 2>&1 && return
		rc=$?
		if ((rc == 124)); then
			echo "perf_node: $tool $* timed out after $limit s" | tee -a "$out" >&2
			return $rc
		fi
	done
	return $rc
}

# Run CMD... with kcoll's module defaults ATTRS ("attr=value ...", files
# of /sys/class/misc/kcoll) set on every node, then put the old values
# back.  Both ends of a connection must agree on them, so every rank
# writes before any runs CMD, and every rank has run CMD before any
# restores (barriers NAME.set, .run, .restored).  A value some node
# refused is added to the shared file REFUSED ("RANK attr=value" lines)
# and then no node runs CMD: a run on the old defaults must not be
# reported under the new name.
with_module_defaults() { # NAME ATTRS REFUSED CMD...
	local name=$1 attrs=$2 refused=$3 kv sys=/sys/class/misc/kcoll old=()
	shift 3
	for kv in $attrs; do
		old+=("${kv%%=*}=$(cat "$sys/${kv%%=*}")")
		echo "${kv#*=}" >"$sys/${kv%%=*}" || echo "$KCOLL_RANK $kv" >>"$refused"
	done
	all_ranks "$name.set"
	[ -e "$refused" ] || "$@"
	all_ranks "$name.run"
	for kv in "${old[@]}"; do echo "${kv#*=}" >"$sys/${kv%%=*}"; done
	all_ranks "$name.restored"
}

# The "RANK attr=value" lines of a REFUSED file on one line, for a message.
refusals() { # REFUSED
	paste -sd, "$1" | sed 's/,/, /g'
}
