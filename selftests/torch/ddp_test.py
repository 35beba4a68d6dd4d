#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""DDP training, gloo against kcoll, in the same processes (make check-vm-torch-full).

A small MLP (32-64-64-10, tanh, 6,922 parameters) is trained on a synthetic
classification set made here with a fixed seed (4,096 points, labels from
a fixed random teacher network; nothing is downloaded) with
DistributedDataParallel on every rank: once over a gloo group, once over
the kcoll default group, from the same initial parameters, on the same
batches (rank r takes rows r*B..r*B+B-1 of each step's global batch),
STEPS steps of plain SGD (lr 0.1).  Every rank logs the global mean loss
of each step (computed with a gloo all_reduce of the float64 losses, the
same arithmetic for both runs).

Checks:
- the final parameters are bit for bit identical on every rank, for each
  backend (DDP applies the same averaged gradient everywhere: a backend
  whose ranks got different sums would break this);
- the two loss curves agree within BOUND (1e-6, relative), i.e. to a few
  units in the last place of the float32 loss (2^-24 = 6e-8 relative):
  both backends sum the same 4 float32 gradients per element, in
  different orders (gloo's ring vs kcoll's algorithm), so each step's
  averaged gradient may differ in its last bit or two; the network is
  smooth (tanh) and plain SGD (lr 0.1) on it does not amplify such
  differences over 300 steps (measured: at most 1.5e-7).  With ReLU they
  jump by orders of magnitude whenever an activation flips sign on a
  sample (measured 1e-7 -> 1e-4 in one step, 2e-2 after 300 steps with
  momentum), which says nothing about the backend.
Rank 0 writes the curves to $KCOLL_TORCH_OUT/ddp_loss.csv.
Prints "N passed, M failed"; exits 1 on any failure.
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import kcoll_torch  # noqa: F401  (registers the backend)

STEPS = int(os.environ.get("KCOLL_DDP_STEPS", "300"))
B = 32                  # per-rank batch
BOUND = 1e-6            # relative loss difference allowed between the backends
rank = int(os.environ.get("RANK", os.environ.get("KCOLL_RANK", "0")))
world = int(os.environ.get("WORLD_SIZE", os.environ.get("KCOLL_NRANKS", "1")))
os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"rank {rank}: ok: {what}", flush=True)
    else:
        failed += 1
        print(f"rank {rank}: FAIL {what}", flush=True)


def dataset():
    g = torch.Generator().manual_seed(20261207)
    x = torch.randn(4096, 32, generator=g)
    teacher = torch.randn(32, 10, generator=g)
    y = (x @ teacher + 0.5 * torch.randn(4096, 10, generator=g)).argmax(1)
    return x, y


def model():
    torch.manual_seed(7)
    # tanh, not ReLU: a smooth network carries a last-bit difference of the
    # gradient forward smoothly; with ReLU an activation that flips sign on
    # one sample turns it into a jump (measured: 1e-7 to 1e-4 in one step).
    return nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 10))


def train(group, x, y, gloo):
    net = DDP(model(), process_group=group)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    lossf = nn.CrossEntropyLoss()
    losses = []
    t0 = time.monotonic()
    for step in range(STEPS):
        start = (step * world * B + rank * B) % (x.shape[0] - B)
        xb, yb = x[start:start + B], y[start:start + B]
        opt.zero_grad()
        loss = lossf(net(xb), yb)
        loss.backward()
        opt.step()
        mean = torch.tensor([loss.item()], dtype=torch.float64)
        dist.all_reduce(mean, group=gloo)
        losses.append(mean.item() / world)
    dt = time.monotonic() - t0
    flat = torch.cat([p.detach().reshape(-1) for p in net.module.parameters()])
    return losses, flat, dt


def identical_everywhere(flat, gloo):
    everyone = [torch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(everyone, flat, group=gloo)
    return all(torch.equal(everyone[0], e) for e in everyone)


def main():
    dist.init_process_group("kcoll", init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=600))
    gloo = dist.new_group(backend="gloo")
    x, y = dataset()
    lg, pg, tg = train(gloo, x, y, gloo)
    lk, pk, tk = train(dist.group.WORLD, x, y, gloo)
    check(identical_everywhere(pg, gloo), "gloo: final parameters identical on every rank")
    check(identical_everywhere(pk, gloo), "kcoll: final parameters identical on every rank")
    rel = max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(lg, lk))
    check(rel <= BOUND, f"loss curves agree: max relative difference {rel:.3g} <= {BOUND:g} "
          f"over {STEPS} steps")
    pdiff = (pg - pk).abs().max().item()
    check(lk[-1] < 0.8 * lk[0], f"kcoll run learned: loss {lk[0]:.4f} -> {lk[-1]:.4f}")
    if rank == 0:
        print(f"{world} ranks, {STEPS} steps: gloo {tg:.1f} s ({1000 * tg / STEPS:.1f} ms/step), "
              f"kcoll {tk:.1f} s ({1000 * tk / STEPS:.1f} ms/step)")
        print(f"loss gloo {lg[0]:.6f} -> {lg[-1]:.6f}, kcoll {lk[0]:.6f} -> {lk[-1]:.6f}; "
              f"max relative loss difference {rel:.3g}; max parameter difference {pdiff:.3g}; "
              f"steps with identical loss {sum(a == b for a, b in zip(lg, lk))}/{STEPS}")
        out = os.environ.get("KCOLL_TORCH_OUT")
        if out:
            with open(os.path.join(out, "ddp_loss.csv"), "w") as f:
                f.write("step,gloo,kcoll\n")
                for i, (a, b) in enumerate(zip(lg, lk)):
                    f.write(f"{i},{a:.9g},{b:.9g}\n")
    dist.barrier(group=gloo)
    print(f"rank {rank}: {passed} passed, {failed} failed", flush=True)
    dist.destroy_process_group()
    return failed == 0


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
