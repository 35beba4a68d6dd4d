#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""libcoll-mpi under mpi4py (Debian's python3-mpi4py, linked with Open MPI).

mpi4py initialises with MPI_Init_thread(MULTIPLE) and turns MPI errors
into exceptions.  Buffer-based collectives (array module, no numpy) on
COMM_WORLD and a dup, blocking and nonblocking, in place, and the pickle
based lowercase calls; every result checked against the value computed
here and hashed into OUT.RANK, so two runs (with and without the preload)
can be compared byte for byte.  Rank 0 prints "N passed, M failed".

    mpirun -np 2 python3 selftests/mpi/mpi4py_test.py /tmp/out
"""
import hashlib
import sys
from array import array

from mpi4py import MPI

world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()
out = open(f"{sys.argv[1]}.{rank}", "w")
res = [0, 0]
N = 37


def check(name, ok, buf=b""):
    out.write(f"{name:40s} {'ok' if ok else 'FAIL'} {hashlib.sha1(bytes(buf)).hexdigest()}\n")
    res[0 if ok else 1] += 1
    if not ok:
        print(f"rank {rank}: FAIL {name}", file=sys.stderr)


def val(r, i):
    return (r + 1) * (i % 5 + 1)


def run(comm, cname):
    me, n = comm.Get_rank(), comm.Get_size()
    for code, mt in (("d", MPI.DOUBLE), ("f", MPI.FLOAT), ("i", MPI.INT), ("q", MPI.INT64_T)):
        s = array(code, [val(rank, i) for i in range(N)])
        r = array(code, [0] * N)
        comm.Allreduce([s, mt], [r, mt], op=MPI.SUM)
        want = [sum(val(q, i) for q in range(size)) if n == size else None for i in range(N)]
        check(f"{cname} allreduce {code}", n != size or list(r) == want, r)
        comm.Allreduce(MPI.IN_PLACE, [s, mt], op=MPI.MAX)
        check(f"{cname} allreduce inplace max {code}",
              list(s) == [val(size - 1, i) for i in range(N)] or n != size, s)
        r2 = array(code, [0] * N)
        s2 = array(code, [val(rank, i) for i in range(N)])  # alive until Wait
        req = comm.Iallreduce([s2, mt], [r2, mt], op=MPI.SUM)
        req.Wait()
        check(f"{cname} iallreduce {code}", list(r2) == list(r), r2)
        b = array(code, [val(rank, i) if me == 0 else 0 for i in range(N)])
        comm.Bcast([b, mt], root=0)
        check(f"{cname} bcast {code}", list(b) == [val(0, i) for i in range(N)], b)
        g = array(code, [0] * (N * n))
        comm.Allgather([array(code, [val(rank, i) for i in range(N)]), mt], [g, mt])
        check(f"{cname} allgather {code}",
              list(g) == [val(q, i) for q in range(n) for i in range(N)], g)
        a = array(code, [0] * (N * n))
        comm.Alltoall([array(code, [val(rank, i) for i in range(N * n)]), mt], [a, mt])
        check(f"{cname} alltoall {code}",
              list(a) == [val(q, me * N + i) for q in range(n) for i in range(N)], a)
    comm.Barrier()
    check(f"{cname} barrier", True)
    # pickle based
    x = comm.allreduce(rank + 1, op=MPI.SUM)
    check(f"{cname} allreduce object", x == n * (n + 1) // 2, str(x).encode())
    y = comm.bcast({"from": rank} if me == 0 else None, root=0)
    check(f"{cname} bcast object", y == {"from": 0}, str(y).encode())


run(world, "world")
dup = world.Dup()
run(dup, "dup")
dup.Free()
for k in range(20):
    c = world.Dup()
    z = c.allreduce(k, op=MPI.MAX)
    c.Free()
check("dup freed 20 times", z == 19, str(z).encode())
out.close()
tot = [world.reduce(res[0], op=MPI.SUM, root=0), world.reduce(res[1], op=MPI.SUM, root=0)]
if rank == 0:
    print(f"{tot[0]} passed, {tot[1]} failed")
tot = world.bcast(tot, root=0)
sys.exit(1 if tot[1] else 0)
