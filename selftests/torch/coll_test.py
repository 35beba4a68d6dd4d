#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Every collective of the kcoll backend, every dtype, against gloo.

Run as one process per rank (kcoll-vm: make check-vm-torch, 2 VMs; make
check-vm-torch-full, 4 VMs).  The default process group is kcoll
(init_method="env://", MASTER_ADDR/PORT; RANK and WORLD_SIZE from
KCOLL_RANK/KCOLL_NRANKS); a gloo group of the same ranks runs the same
call on the same input in the same process.  Inputs are small integers, so
every sum, product and average is exact in every dtype (float16 and
bfloat16 too) and the results must agree bit for bit, whatever order the
algorithms reduce in.  Each result is also checked against a reference
computed here from every rank's input (float64/int64, then cast): where
gloo lacks the call or dtype (reduce_scatter in 1.13, AVG, some integer
types) that reference is the comparison, and the table says "n/a".

Then: new_group() of the last two ranks, twice (kcoll communicators made
from the world's, checked to be), several async_op=True calls in flight at once, and the errors that
must be clear exceptions (non-contiguous, bitwise ops, AVG on integers,
send/recv).  Rank 0 prints the table; every rank prints
"N passed, M failed" and exits 1 on any failure.

KCOLL_TORCH_BACKEND=gloo runs the same test with gloo in place of kcoll (a
check of the test itself, on any host).
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

BACKEND = os.environ.get("KCOLL_TORCH_BACKEND", "kcoll")
if BACKEND == "kcoll":
    import kcoll_torch  # noqa: F401  (registers the backend)

rank = int(os.environ.get("RANK", os.environ.get("KCOLL_RANK", "0")))
world = int(os.environ.get("WORLD_SIZE", os.environ.get("KCOLL_NRANKS", "1")))
os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)
N = 37                  # odd, so no algorithm splits it evenly
ROWS = 3                # elements per row of the all_to_all_single tensors
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
          torch.uint8, torch.int16, torch.int32, torch.int64]
FLOATS = {torch.float32, torch.float64, torch.float16, torch.bfloat16}
R = dist.ReduceOp
OPS = [("sum", R.SUM), ("product", R.PRODUCT), ("min", R.MIN), ("max", R.MAX), ("avg", R.AVG)]

passed = failed = 0
rows = []               # (collective, dtype, op, kcoll, gloo)


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"rank {rank}: FAIL {what}", flush=True)
    return ok


def dname(dt):
    return str(dt).replace("torch.", "")


def inp(r, n, dt, op="sum", salt=0):
    """Rank r's input: small integers chosen so op's result is exact."""
    i = torch.arange(n, dtype=torch.int64) + salt
    if op == "product":
        v = 1 + (i + r) % 2                      # products of 1s and 2s: at most 2^world
    elif op in ("min", "max"):
        v = (i + 3 * r) % 7 + 1                  # varies by rank, not monotonic
    else:
        v = (r + 1) * (i % 5 + 1)                # sums at most 15 * world
    return v.to(dt)


def reduce_ref(ts, op, dt):
    """The exact result of reducing ts (one per rank), cast to dt."""
    w = torch.stack([t.to(torch.float64 if dt in FLOATS else torch.int64) for t in ts])
    if op in ("sum", "avg"):
        v = w.sum(0)
        if op == "avg":
            v = v / len(ts)
    elif op == "product":
        v = w.prod(0)
    elif op == "min":
        v = w.min(0).values
    else:
        v = w.max(0).values
    return v.to(dt)


def same(a, b):
    """Bit for bit (NaN never occurs here)."""
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def both(name, dt, op, call, ref, root=None, gcall=None, how=""):
    """Run call(group, dtype) on kcoll and on gloo (gcall if gloo lacks the call,
    in a wider dtype if gloo lacks dt); compare with ref (on root only if given)."""
    try:
        kres = call(KC, dt)
    except (RuntimeError, NotImplementedError, ValueError):
        if BACKEND == "kcoll":
            raise
        # Self-check with gloo as "kcoll": the gloo column's own path, as below.
        kres = [t.to(dt) for t in (gcall or call)(GLOO, WIDER.get(dt, dt))]
    gdt = WIDER.get(dt, dt)
    notes = [how] if gcall and how else []
    if gdt != dt:
        notes.append(f"in {dname(gdt)}")
    try:
        gres = [t.to(dt) for t in (gcall or call)(GLOO, gdt)]
    except (RuntimeError, NotImplementedError, ValueError) as e:
        gres = None
        NA_SEEN[f"{name} {dname(dt)} {op}"] = str(e).splitlines()[0][:70]
    if root is not None and rank != root:
        return
    k_ok = check(all(same(a, b) for a, b in zip(kres, ref)), f"{name} {dname(dt)} {op}: kcoll "
                 f"{[t.tolist()[:6] for t in kres]} != reference {[t.tolist()[:6] for t in ref]}")
    if gres is None:
        g = "n/a"
    else:
        g_ok = check(all(same(a, b) for a, b in zip(gres, kres)),
                     f"{name} {dname(dt)} {op}: kcoll and gloo differ")
        g = ("identical" if g_ok else "DIFFERENT") + (f" ({', '.join(notes)})" if notes else "")
    rows.append((name, dname(dt), op, "ok" if k_ok else "FAIL", g))


# gloo (Debian's 1.13) has no bfloat16, no int16 and no bool reductions: it
# runs those in a wider type, exact for these inputs, and the result is cast
# back.
WIDER = {torch.bfloat16: torch.float32, torch.int16: torch.int32, torch.bool: torch.uint8}
NA_SEEN = {}


def test_all_reduce(dt):
    for op, rop in OPS:
        if op == "avg" and (dt not in FLOATS or BACKEND == "gloo"):
            continue

        def call(g, dt, op=op, rop=rop):
            t = inp(rank, N, dt, op)
            if op == "avg" and g is GLOO:
                # gloo has no AVG: its SUM, divided here, is the comparison.
                dist.all_reduce(t, op=R.SUM, group=g)
                return [(t.to(torch.float64) / world).to(dt)]
            dist.all_reduce(t, op=rop, group=g)
            return [t]
        both("all_reduce", dt, op, call, [reduce_ref([inp(r, N, dt, op) for r in range(world)],
                                                      op, dt)])


def test_broadcast(dt):
    src = world - 1

    def call(g, dt):
        t = inp(rank, N, dt) if rank == src else torch.zeros(N, dtype=dt)
        dist.broadcast(t, src=src, group=g)
        return [t]
    both("broadcast", dt, "-", call, [inp(src, N, dt)])


def test_reduce(dt):
    for op, rop in (("sum", R.SUM), ("max", R.MAX)):
        def call(g, dt, op=op, rop=rop):
            t = inp(rank, N, dt, op)
            dist.reduce(t, dst=0, op=rop, group=g)
            return [t]
        both("reduce", dt, op, call, [reduce_ref([inp(r, N, dt, op) for r in range(world)],
                                                  op, dt)], root=0)


def gather_list(g, dt, t):
    out = [torch.zeros_like(t, dtype=dt) for _ in range(world)]
    dist.all_gather(out, t.to(dt), group=g)
    return out


def test_all_gather(dt):
    def call(g, dt):
        return gather_list(g, dt, inp(rank, N, dt))
    both("all_gather", dt, "-", call, [inp(r, N, dt) for r in range(world)])

    def call_base(g, dt):
        out = torch.zeros(world * N, dtype=dt)
        dist.all_gather_into_tensor(out, inp(rank, N, dt), group=g)
        return [out]
    both("all_gather_into_tensor", dt, "-", call_base,
         [torch.cat([inp(r, N, dt) for r in range(world)])],
         gcall=lambda g, dt: [torch.cat(call(g, dt))], how="via all_gather")


def test_reduce_scatter(dt):
    for op, rop in (("sum", R.SUM), ("min", R.MIN)):
        full = [inp(r, world * N, dt, op) for r in range(world)]
        ref = [reduce_ref(full, op, dt)[rank * N:(rank + 1) * N]]

        def call(g, dt, op=op, rop=rop):
            out = torch.zeros(N, dtype=dt)
            dist.reduce_scatter(out, list(inp(rank, world * N, dt, op).chunk(world)), op=rop,
                                group=g)
            return [out]

        def call_base(g, dt, op=op, rop=rop):
            out = torch.zeros(N, dtype=dt)
            dist.reduce_scatter_tensor(out, inp(rank, world * N, dt, op), op=rop, group=g)
            return [out]

        def gloo_rs(g, dt, op=op, rop=rop):
            # gloo 1.13 has no reduce_scatter: all_reduce, keep this rank's block.
            t = inp(rank, world * N, dt, op)
            dist.all_reduce(t, op=rop, group=g)
            return [t[rank * N:(rank + 1) * N]]
        both("reduce_scatter", dt, op, call, ref, gcall=gloo_rs, how="via all_reduce")
        both("reduce_scatter_tensor", dt, op, call_base, ref, gcall=gloo_rs,
             how="via all_reduce")


def split_rows(src, dst):
    """Rows rank src sends to rank dst in the uneven all_to_all_single."""
    return (src + 2 * dst) % 3 + 1


def test_all_to_all(dt):
    def call_eq(g, dt):
        out = torch.zeros(world * N, dtype=dt)
        dist.all_to_all_single(out, inp(rank, world * N, dt), group=g)
        return [out]
    both("all_to_all_single", dt, "equal", call_eq,
         [torch.cat([inp(r, world * N, dt)[rank * N:(rank + 1) * N] for r in range(world)])])

    def sent(src, dt):
        return inp(src, ROWS * sum(split_rows(src, d) for d in range(world)), dt, salt=src)

    def piece(src, dst, dt):
        start = ROWS * sum(split_rows(src, d) for d in range(dst))
        return sent(src, dt)[start:start + ROWS * split_rows(src, dst)]

    def call_v(g, dt):
        ins = [split_rows(rank, d) for d in range(world)]
        outs = [split_rows(s, rank) for s in range(world)]
        out = torch.zeros(sum(outs), ROWS, dtype=dt)
        dist.all_to_all_single(out, sent(rank, dt).view(-1, ROWS), outs, ins, group=g)
        return [out.view(-1)]
    both("all_to_all_single", dt, "splits", call_v,
         [torch.cat([piece(s, rank, dt) for s in range(world)])])

    def call_list(g, dt):
        ins = [piece(rank, d, dt).clone() for d in range(world)]
        outs = [torch.zeros(ROWS * split_rows(s, rank), dtype=dt) for s in range(world)]
        dist.all_to_all(outs, ins, group=g)
        return outs

    def gloo_list(g, dt):
        # gloo 1.13 has no list all_to_all: the single-tensor form, cut up here.
        return list(call_v(g, dt)[0].split([ROWS * split_rows(s, rank) for s in range(world)]))
    both("all_to_all", dt, "list", call_list, [piece(s, rank, dt) for s in range(world)],
         gcall=gloo_list, how="via all_to_all_single")


def test_scatter_gather(dt):
    def call_s(g, dt):
        out = torch.zeros(N, dtype=dt)
        dist.scatter(out, [inp(r, N, dt, salt=7) for r in range(world)] if rank == 0 else None,
                     src=0, group=g)
        return [out]
    both("scatter", dt, "-", call_s, [inp(rank, N, dt, salt=7)])

    def call_g(g, dt):
        out = [torch.zeros(N, dtype=dt) for _ in range(world)] if rank == 0 else None
        dist.gather(inp(rank, N, dt), out, dst=0, group=g)
        return out if rank == 0 else []
    both("gather", dt, "-", call_g, [inp(r, N, dt) for r in range(world)], root=0)


def test_coalesced():
    """all_reduce_coalesced: one flattened AllReduce, copied back per tensor."""
    shapes = [(5,), (3, 4), (7,)]
    ref = [reduce_ref([inp(r, 1, torch.float32, salt=j).expand(sh).clone() * (r + 1)
                       for r in range(world)], "sum", torch.float32)
           for j, sh in enumerate(shapes)]

    def call(g, dt):
        ts = [(inp(rank, 1, dt, salt=j).expand(sh).clone() * (rank + 1)).to(dt)
              for j, sh in enumerate(shapes)]
        dist.all_reduce_coalesced(ts, group=g)
        return ts
    both("all_reduce_coalesced", torch.float32, "sum", call, ref)


def test_bool():
    """bool: data movement and MIN/MAX (logical and/or) on 0/1 bytes."""
    def val(r):
        return (torch.arange(N) + r) % 3 == 0
    for op, rop in (("max", R.MAX), ("min", R.MIN)):
        def call(g, dt, rop=rop):
            t = val(rank).to(dt)
            dist.all_reduce(t, op=rop, group=g)
            return [t]
        ref = torch.stack([val(r) for r in range(world)])
        ref = ref.any(0) if op == "max" else ref.all(0)
        both("all_reduce", torch.bool, op, call, [ref])

    def call_b(g, dt):
        t = val(rank).to(dt)
        dist.broadcast(t, src=0, group=g)
        return [t]
    both("broadcast", torch.bool, "-", call_b, [val(0)])


def test_large():
    """One float32 SUM big enough to be cut into many chunks."""
    n = 1 << 18
    def call(g, dt):
        t = inp(rank, n, dt)
        dist.all_reduce(t, group=g)
        return [t]
    both("all_reduce 1 MiB", torch.float32, "sum", call,
         [reduce_ref([inp(r, n, torch.float32) for r in range(world)], "sum", torch.float32)])


def test_new_group():
    """A group of the last two ranks: a kcoll communicator of its own, made
    from the world's without the store bootstrap (coll_comm_create_group);
    a second group of the same ranks is another communicator, and both
    run at once."""
    members = [max(world - 2, 0), world - 1] if world > 1 else [0]
    sub = dist.new_group(members)       # the default backend: kcoll
    sub2 = dist.new_group(members)
    if rank not in members:
        return
    me = members.index(rank)
    if BACKEND == "kcoll":
        for g, what in ((sub, "new_group"), (sub2, "second new_group")):
            check(g.origin == "group" and list(g.parent_ranks) == members,
                  f"{what} {members}: made from the world communicator "
                  f"(origin {g.origin}, parent ranks {list(g.parent_ranks)})")
        a, b = torch.full((N,), me + 1.0), torch.full((N,), 10.0 * (me + 1))
        wa = dist.all_reduce(a, group=sub, async_op=True)
        wb = dist.all_reduce(b, group=sub2, async_op=True)
        wb.wait()
        wa.wait()
        n = len(members)
        check(same(a, torch.full((N,), n * (n + 1) / 2)) and
              same(b, torch.full((N,), 10.0 * n * (n + 1) / 2)),
              f"two groups of {members} at once")
    t = inp(me, N, torch.int32)
    dist.all_reduce(t, group=sub)
    check(same(t, reduce_ref([inp(m, N, torch.int32) for m in range(len(members))], "sum",
                             torch.int32)), f"new_group {members}: all_reduce")
    out = [torch.zeros(N, dtype=torch.int32) for _ in members]
    dist.all_gather(out, inp(me, N, torch.int32), group=sub)
    check(all(same(o, inp(m, N, torch.int32)) for m, o in enumerate(out)),
          f"new_group {members}: all_gather")
    check(dist.get_backend(sub) == BACKEND, f"new_group {members}: backend {BACKEND}")
    rows.append((f"new_group {members}", "int32", "sum", "ok", "-"))


def test_async():
    """Several operations in flight at once, waited for out of order."""
    k = 8
    ts = [inp(rank, N * (j + 1), torch.float32, salt=j) for j in range(k)]
    threads = len(os.listdir("/proc/self/task"))
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    # Completion comes through the group's one thread and eventfd: none per call.
    check(len(os.listdir("/proc/self/task")) == threads,
          f"no thread per call: {threads} threads before, "
          f"{len(os.listdir('/proc/self/task'))} with {k} operations in flight")
    futs = [w.get_future() for w in works]
    for w in reversed(works):
        w.wait()
    ok = all(same(t, reduce_ref([inp(r, N * (j + 1), torch.float32, salt=j)
                                 for r in range(world)], "sum", torch.float32))
             for j, t in enumerate(ts))
    ok &= all(f.done() for f in futs)
    check(ok, f"{k} async all_reduce in flight")
    rows.append((f"{k} x async all_reduce", "float32", "sum", "ok" if ok else "FAIL", "-"))


def expect_error(what, exc, words, fn):
    try:
        fn()
    except exc as e:
        msg = str(e).splitlines()[0]
        ok = all(w in msg for w in words)
        check(ok, f"{what}: message '{msg}' lacks {words}")
        if rank == 0:
            print(f"  {what}: {type(e).__name__}: {msg}", flush=True)
        return
    except Exception as e:  # noqa: BLE001  (any other type is a failure)
        check(False, f"{what}: {type(e).__name__} instead of {exc.__name__}: {e}")
        return
    check(False, f"{what}: no exception")


def test_errors():
    if BACKEND != "kcoll":
        return
    t = torch.ones(4, 4)
    expect_error("non-contiguous tensor", RuntimeError, ["not contiguous", "contiguous()"],
                 lambda: dist.all_reduce(t.t()))
    expect_error("BAND", NotImplementedError, ["BAND", "gloo"],
                 lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32), op=R.BAND))
    expect_error("AVG on int32", RuntimeError, ["AVG", "SUM"],
                 lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32), op=R.AVG))
    expect_error("send", NotImplementedError, ["send", "gloo"],
                 lambda: dist.send(torch.ones(4), dst=(rank + 1) % world))
    expect_error("allgather_coalesced", NotImplementedError, ["all_gather"],
                 lambda: dist.all_gather_coalesced([[torch.ones(2)] * world], [torch.ones(2)]))
    # Nothing was submitted: the group still works.
    t = torch.ones(3)
    dist.all_reduce(t)
    check(same(t, torch.full((3,), float(world))), "the group works after the errors")


def test_failures():
    """wait() raises kcoll's message instead of hanging: an operation
    timeout (the group's timeout is the operation's), then a peer that
    closed its communicator.  Each in a group of its own (new_group)."""
    if BACKEND != "kcoll" or world < 2:
        return
    last = world - 1
    tmo = dist.new_group(timeout=datetime.timedelta(seconds=5))
    t = torch.ones(N)
    t0 = time.monotonic()
    if rank != last:
        # The last rank does not take part in time: the others time out.
        expect_error("operation timeout", RuntimeError, ["kcoll allreduce failed"],
                     lambda: dist.all_reduce(t, group=tmo))
        dt = time.monotonic() - t0
        # Not the world's 30 min: the group's own timeout reached the module.
        check(dt < 20, f"timeout reported after {dt:.1f} s (group timeout 5 s)")
        rows.append(("all_reduce, a rank late", "float32", "sum",
                     f"raised in {dt:.0f} s", "-"))
    dist.barrier(group=GLOO)
    gone = dist.new_group()
    if rank == last:
        dist.destroy_process_group(gone)    # closes its kcoll communicator
    dist.barrier(group=GLOO)
    if rank != last:
        t0 = time.monotonic()
        expect_error("peer closed its communicator", RuntimeError, ["kcoll allreduce failed"],
                     lambda: dist.all_reduce(t, group=gone))
        dt = time.monotonic() - t0
        check(dt < 60, f"peer loss reported after {dt:.1f} s")
        rows.append(("all_reduce, a rank gone", "float32", "sum", f"raised in {dt:.0f} s",
                     "-"))


def main():
    global KC, GLOO
    t0 = time.monotonic()
    dist.init_process_group(BACKEND, init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=300))
    KC = dist.group.WORLD
    GLOO = dist.new_group(backend="gloo")
    t1 = time.monotonic()
    for dt in DTYPES:
        test_all_reduce(dt)
        test_broadcast(dt)
        test_reduce(dt)
        test_all_gather(dt)
        test_reduce_scatter(dt)
        test_all_to_all(dt)
        test_scatter_gather(dt)
    test_coalesced()
    test_bool()
    test_large()
    dist.barrier(group=KC)
    rows.append(("barrier", "-", "-", "ok", "-"))
    test_new_group()
    test_async()
    test_errors()
    check(isinstance(KC, kcoll_torch.ProcessGroupKcoll) if BACKEND == "kcoll" else True,
          "the default group is a ProcessGroupKcoll")
    test_failures()
    t2 = time.monotonic()
    if rank == 0:
        print(f"backend {BACKEND}, {world} ranks; setup {t1 - t0:.1f} s, tests {t2 - t1:.1f} s")
        print(f"| {'collective':26s} | {'dtype':8s} | {'op':7s} | kcoll = reference | "
              f"{'kcoll vs gloo':38s} |")
        print(f"|{'-' * 28}|{'-' * 10}|{'-' * 9}|{'-' * 19}|{'-' * 40}|")
        for r in rows:
            print(f"| {r[0]:26s} | {r[1]:8s} | {r[2]:7s} | {r[3]:17s} | {r[4]:38s} |")
        for k, v in NA_SEEN.items():
            print(f"  gloo n/a for {k}: {v}")
    dist.barrier(group=GLOO)
    print(f"rank {rank}: {passed} passed, {failed} failed", flush=True)
    dist.destroy_process_group()
    return failed == 0


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
