#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kcoll-vm --setup step of `make bench`, run as root on every node: start
# dropbear so that node0 can start Open MPI's daemons and perftest's peers
# on the other nodes.  Host keys are made at first use (-R) in the tmpfs
# overlay of /etc; the benchmark's public key (BENCH_SSH_KEY.pub, made on
# the host) is the only one authorized; password logins are off (-s).
set -eu
key=${1:?usage: sshd-setup.sh KEY}
mkdir -p /root/.ssh /etc/dropbear
chmod 700 /root /root/.ssh
cp "$key.pub" /root/.ssh/authorized_keys
chmod 600 /root/.ssh/authorized_keys
dropbear -R -s -p 22 -P /run/dropbear.pid
