# SPDX-License-Identifier: GPL-2.0
"""What used each VM's vCPU during each phase of make bench.

tools/bench/bench-node.sh saves, on every rank, at the start and at the
end of each phase, REP/cpu/RANK.PHASE.start and .end: the guest's
/proc/stat "cpu" line, then one line per process, "p PID COMM SELF
CHILDREN" (jiffies: its utime+stime, and the cutime+cstime of the
children it reaped).  A phase's share of a command is what its processes
used between the two (the whole life of one started in the phase, and a
child that exited counts as "PARENT(children)"), over the jiffies of
the phase.  A VM's idle share is the time its vCPU had nothing to run
(waiting for the network or for the other VMs); a command that should
not be there (a leftover of an earlier phase) shows up by name.
"""
import glob
import os


def read(path):
    """([(total jiffies, idle jiffies)] of its cpu lines, {pid: (comm,
    self, children)})."""
    cpu, procs = [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            c = line.split()
            if len(c) >= 9 and c[0] == "cpu":
                # user nice system idle iowait irq softirq steal
                v = [int(x) for x in c[1:9]]
                cpu.append((sum(v), v[3] + v[4]))
            elif len(c) == 5 and c[0] == "p":
                procs[int(c[1])] = (c[2], int(c[3]), int(c[4]))
    return cpu, procs


def phase(start, end):
    """(busy share, [(command, share)] largest first), or None."""
    c0, p0 = read(start)
    c1, p1 = read(end)
    if not c0 or not c1 or c1[-1][0] <= c0[0][0]:
        return None
    span = c1[-1][0] - c0[0][0]
    use = {}
    for pid, (comm, own, kids) in p1.items():
        # A kworker's comm names the workqueue it last ran: same pid, same thread.
        before = p0.get(pid, (comm, 0, 0))
        for name, d in ((comm, own - before[1]), (comm + "(children)", kids - before[2])):
            if d > 0:
                use[name] = use.get(name, 0) + d
    top = sorted(((c, u / span) for c, u in use.items()), key=lambda x: -x[1])
    return 1 - (c1[-1][1] - c0[0][1]) / span, top


def table(rank0s, ntop=3):
    """Markdown lines: per repetition and phase, each rank's busy share and
    its ntop commands; [] when the run saved no snapshots."""
    rows, nranks = [], 0
    for r0 in rank0s:
        for d in sorted(glob.glob(os.path.join(r0, "rep*", "cpu"))):
            rep = os.path.basename(os.path.dirname(d))
            phases = {}
            for start in sorted(glob.glob(os.path.join(d, "*.start"))):
                rank, name = os.path.basename(start)[:-len(".start")].split(".", 1)
                end = start[:-len(".start")] + ".end"
                got = phase(start, end) if os.path.exists(end) else None
                if got:
                    phases.setdefault(name, {})[int(rank)] = got
            for name in sorted(phases):
                nranks = max(nranks, len(phases[name]))
                cells = []
                for rank in sorted(phases[name]):
                    busy, top = phases[name][rank]
                    cells.append("%d%%: %s" % (round(busy * 100), ", ".join(
                        "%s %d%%" % (c, round(s * 100)) for c, s in top[:ntop])))
                rows.append("| %s | %s | %s |" % (rep, name, " | ".join(cells)))
    if not rows:
        return []
    return ["\n### vCPU of every VM during each phase\n",
            "Busy share of the guest's vCPU (the rest it had nothing to run) and "
            "the commands that used most of it, per rank; COMM(children) is "
            "what COMM's exited children used (tools/bench/phase_cpu.py).\n",
            "| rep | phase | " + " | ".join("rank %d" % i for i in range(nranks)) + " |",
            "|---|---|" + "---|" * nranks] + rows
