#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make demo, on every rank of the virtual cluster: first what an operator
# does once after installing (README, "Installing on a cluster"): fit the
# link model to this cluster and set it on every node (collctl calibrate
# --write; rank 0 prints the model), then the AllReduce sweep with
# automatic selection on that model.  The module's default model describes
# a 200 Gbit/s fabric, not an emulated one.
#   demo-node.sh COLLCTL COLL-PERF [coll-perf arguments]
set -eu
collctl=$1 coll_perf=$2
shift 2
"$collctl" calibrate --write
exec "$coll_perf" "$@"
