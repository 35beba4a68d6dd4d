#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-vm-torch-full, on every rank of kcoll-vm (4 VMs): the
# collectives x dtypes comparison (coll_test.py, which also makes a
# new_group of two ranks and overlaps async operations), then DDP
# training gloo vs kcoll (ddp_test.py).  Each python run gets its own
# store port, so the second never meets the first's store.
set -u
py=${TORCH_PY:-/usr/bin/python3}
d=$(dirname "$0")
rc=0
t0=$(date +%s)
MASTER_PORT=29521 "$py" "$d/coll_test.py" || rc=1
t1=$(date +%s)
MASTER_PORT=29522 "$py" "$d/ddp_test.py" || rc=1
t2=$(date +%s)
echo "rank ${KCOLL_RANK}: coll_test $((t1 - t0)) s, ddp_test $((t2 - t1)) s"
exit $rc
