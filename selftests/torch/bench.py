#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""kcoll against gloo in the same processes (make bench-torch).

1. all_reduce (SUM) of a 25 MB float32 tensor, DDP's default bucket size:
   KCOLL_BENCH_ITERS timed calls per backend, alternating gloo and kcoll
   so that drift in the host's load hits both alike (after one warm-up
   each).
2. DDP step time (forward, backward with the bucketed gradient all_reduce,
   SGD step) of an MLP of 1024-2048-2048-1024 (8.4 M parameters, 33.6 MB
   of float32 gradients, two 25 MB-capped buckets), batch 16 per rank,
   alternating the two backends' DDP models step by step.

Reported: median and mean time per backend and the ratio kcoll / gloo of
the medians (below 1: kcoll faster).  Under qemu TCG soft-RoCE moves
data several times slower than the emulated NIC's TCP (see
Documentation/virtual-cluster.md): only the run on real RDMA hardware says
what the ratio is there.  Rank 0 prints the table and writes it to
$KCOLL_TORCH_OUT/bench.txt.
"""
import datetime
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import kcoll_torch  # noqa: F401  (registers the backend)

ITERS = int(os.environ.get("KCOLL_BENCH_ITERS", "5"))
STEPS = int(os.environ.get("KCOLL_BENCH_STEPS", "5"))
rank = int(os.environ.get("RANK", os.environ.get("KCOLL_RANK", "0")))
world = int(os.environ.get("WORLD_SIZE", os.environ.get("KCOLL_NRANKS", "1")))
os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def allreduce_bench(groups):
    n = 25 * 1000 * 1000 // 4
    t = {k: torch.ones(n) for k in groups}
    res = {k: [] for k in groups}
    for k, g in groups.items():                 # warm-up: connections, pinning
        dist.all_reduce(t[k], group=g)
    for _ in range(ITERS):
        for k, g in groups.items():
            dist.barrier(group=groups["gloo"])
            res[k].append(timed(lambda: dist.all_reduce(t[k], group=g)))
    return res


def net():
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                         nn.Linear(2048, 1024))


def ddp_bench(groups):
    models = {k: DDP(net(), process_group=g) for k, g in groups.items()}
    opts = {k: torch.optim.SGD(m.parameters(), lr=1e-3) for k, m in models.items()}
    x = torch.randn(16, 1024)
    res = {k: [] for k in groups}

    def step(k):
        opts[k].zero_grad()
        models[k](x).square().mean().backward()
        opts[k].step()
    for k in groups:
        step(k)                                 # warm-up
    for _ in range(STEPS):
        for k in groups:
            dist.barrier(group=groups["gloo"])
            res[k].append(timed(lambda: step(k)))
    return res


def report(name, res, lines):
    mg, mk = statistics.median(res["gloo"]), statistics.median(res["kcoll"])
    lines.append(f"| {name:34s} | {1000 * mg:15.1f} | {1000 * mk:16.1f} | {mk / mg:10.2f} | "
                 f"{1000 * statistics.mean(res['gloo']):9.1f} / "
                 f"{1000 * statistics.mean(res['kcoll']):9.1f} |")


def main():
    dist.init_process_group("kcoll", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=900))
    groups = {"gloo": dist.new_group(backend="gloo"), "kcoll": dist.group.WORLD}
    ar = allreduce_bench(groups)
    dd = ddp_bench(groups)
    if rank == 0:
        lines = [f"{world} ranks, {ITERS} all_reduce calls and {STEPS} DDP steps per backend",
                 f"| {'what':34s} | gloo ms, median | kcoll ms, median | kcoll/gloo | "
                 f"mean ms, gloo / kcoll |",
                 f"|{'-' * 36}|{'-' * 17}|{'-' * 18}|{'-' * 12}|{'-' * 23}|"]
        report("all_reduce 25 MB float32", ar, lines)
        report("DDP step, 8.4 M params (33.6 MB)", dd, lines)
        print("\n".join(lines), flush=True)
        out = os.environ.get("KCOLL_TORCH_OUT")
        if out:
            with open(os.path.join(out, "bench.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
    dist.barrier(group=groups["gloo"])
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
