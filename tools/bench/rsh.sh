#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Remote shell of `make bench` inside the virtual cluster: Open MPI's
# plm_rsh_agent and the driver's own remote commands.  dropbear's client
# with the benchmark's key (BENCH_SSH_KEY, made by tools/bench/run-bench.sh
# on the host), never asking about host keys (-y -y: the VMs' keys are
# made at boot).  Usage as ssh: rsh.sh HOST COMMAND...
exec dbclient -y -y -i "${BENCH_SSH_KEY:?BENCH_SSH_KEY is not set}" -l root "$@"
