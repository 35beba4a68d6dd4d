#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Report of `make bench` from the raw output of tools/bench/bench-node.sh.

Usage: bench-report.py OUTDIR

Reads OUTDIR/host-info.txt and OUTDIR/runs/boot*/out/rank.0/ (vm-info.txt,
bench-reduce.txt, rep*/...), writes OUTDIR/report.md (header, one table per
op, the MPI layer's table per op (Open MPI with libcoll-mpi preloaded
against plain Open MPI and coll-perf), the targets of
Documentation/benchmark.md, auto-selection regret), OUTDIR/bench.json
(every raw number and every statistic) and OUTDIR/busbw.png (gnuplot,
busbw against size per op).  Every point is the median over the
repetitions with min and max; a value a run did not produce is "-".
Exit status 1 if any contender reported a wrong element, or if a run of
the mpi.kcoll contender did not route every op to kcoll (its numbers,
plain Open MPI's, are then left out).
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

import phase_cpu

OPS = ["allreduce", "allgather", "reducescatter", "broadcast"]
MIB = 1 << 20
# The benchmark's targets (Documentation/benchmark.md; ratios from the same run).
T_AR_UCX, T_AR_TCP, T_AR_LINK, T_LAT, T_AGRS = 1.5, 1.0, 0.85, 0.7, 1.3
# Issue 24: Open MPI with libcoll-mpi within 5% of coll-perf's time, every size.
T_LAYER = 1.05
# mpi_coll_bench's ops as KCOLL_MPI_VERBOSE=1 names them.
MPI_OP = {"allreduce": "allreduce", "allgather": "allgather",
          "reducescatter": "reduce_scatter_block", "broadcast": "bcast"}
# The mpi.kcoll contender of bench-node.sh, as parse_rep names it.
LAYER = "ompi-kcoll"
GB = 1e9
PERFTEST_MB = 1 << 20           # perftest's MB/sec is MiB/s
BUS = {}
NODES = [4]


def set_bus_factors(n):
    """nccl-tests busbw factors for n ranks, as coll-perf and mpi_coll_bench."""
    BUS.update({"allreduce": 2.0 * (n - 1) / n, "allgather": (n - 1) / n,
                "reducescatter": (n - 1) / n, "broadcast": 1.0})
    NODES[0] = n


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8", errors="replace"):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                kv[k.strip()] = v.strip()
    return kv


def add(store, key, size, rep, rec):
    store.setdefault(key, {}).setdefault(size, {})[rep] = rec


def parse_routing(path):
    """The KCOLL_MPI_VERBOSE=1 lines of an mpi.kcoll run: module loaded?,
    ranks, and per op [routed, fell back, reasons]."""
    r = {"module": False, "nranks": None, "ops": {}, "lines": []}
    for line in open(path, errors="replace"):
        if not line.startswith("kcoll-mpi: "):
            continue
        r["lines"].append(line.strip())
        m = re.match(r"kcoll-mpi: calls of (\d+) ranks \((.*)\)", line)
        if m:
            r["nranks"], r["module"] = int(m.group(1)), m.group(2) == "kcoll module loaded"
            continue
        m = re.match(r"kcoll-mpi: (\w+): (\d+) routed, (\d+) fell back(?: \((.*)\))?", line)
        if m:
            r["ops"][m.group(1)] = [int(m.group(2)), int(m.group(3)), m.group(4) or ""]
    return r


def unrouted(rt, ops):
    """Why the mpi.kcoll run did not measure kcoll, or None when it did."""
    why = []
    if rt is None or not rt["lines"]:
        why.append("no KCOLL_MPI_VERBOSE counts (preload not loaded?)")
    elif not rt["module"]:
        why.append("libcoll-mpi saw no kcoll module")
    for op in sorted(ops):
        if rt and rt["lines"] and rt["ops"].get(MPI_OP[op], [0])[0] == 0:
            why.append("%s: none routed" % MPI_OP[op])
    return "; ".join(why) or None


def parse_rep(rep, d, raw, routing=None):
    """Fill raw[contender][op][size][rep] = {time_us, algbw, busbw, wrong};
    routing[rep] = the mpi.kcoll run's counts, with "unrouted" = why it did
    not measure kcoll (its numbers are then not in raw)."""
    for f in glob.glob(os.path.join(d, "mpi.*.txt")):
        name = "ompi-" + os.path.basename(f).split(".")[1]
        recs = {}
        for line in open(f, errors="replace"):
            if not line.startswith("mpi-coll "):
                continue
            kv = dict(t.split("=", 1) for t in line.split()[1:])
            # bandwidths again from the time: the printed ones are rounded
            us, size = float(kv["time_us"]), int(kv["size"])
            algbw = size / (us * 1e3) if us > 0 else 0.0
            recs[(kv["op"], size)] = {"time_us": us, "algbw": algbw,
                                      "busbw": algbw * BUS[kv["op"]],
                                      "wrong": int(kv["wrong"]), "iters": int(kv["iters"])}
        if name == LAYER:
            rt = parse_routing(f)
            rt["unrouted"] = unrouted(rt, {op for op, _ in recs})
            if os.path.exists(os.path.join(d, "mpi.kcoll-unrouted.txt")) and not rt["unrouted"]:
                rt["unrouted"] = open(os.path.join(d, "mpi.kcoll-unrouted.txt")).read().strip()
            if routing is not None:
                routing[rep] = rt
            if rt["unrouted"]:
                continue   # plain Open MPI under the layer's name: not reported
        for (op, size), rec in recs.items():
            add(raw.setdefault(name, {}), op, size, rep, rec)
    for f in glob.glob(os.path.join(d, "kcoll.*.json")):
        base = os.path.basename(f)[len("kcoll."):]
        algo, op = base.split(".")[0], base.split(".")[1]
        name = {"auto": "kcoll", "tuned": "kcoll-tuned", "unchecked": "kcoll-unchecked",
                "calibrated": "kcoll-calibrated"}.get(algo, "kcoll:" + algo)
        try:
            rows = json.load(open(f))
        except (ValueError, OSError):
            continue
        for r in rows:
            o = r.get("out_of_place") or {}
            if not o or not r.get("size"):  # AllGather/RS of 8 B: 0 per rank
                continue
            add(raw.setdefault(name, {}), op, int(r["size"]), rep,
                {"time_us": o["time"], "algbw": o["alg_bw"], "busbw": o["bus_bw"],
                 "wrong": o.get("nwrong") or 0,
                 "in_place_time_us": (r.get("in_place") or {}).get("time")})
    link = raw.setdefault("link", {})
    # perftest result lines: "#bytes #iterations ..." then the numbers.
    # -b: perftest reports both directions summed; kept per direction.
    for key, directions in (("write_bw", 1), ("write_bw_bidir", 2)):
        for f in glob.glob(os.path.join(d, key + ".*.pair*.txt")):
            for line in open(f, errors="replace"):
                t = line.split()
                if len(t) >= 4 and t[0].isdigit() and t[1].isdigit():
                    bw = float(t[3]) * PERFTEST_MB / GB / directions
                    link.setdefault(key, {}).setdefault(int(t[0]), {}).setdefault(
                        rep, []).append(bw)
    for f in glob.glob(os.path.join(d, "send_lat.*.pair*.txt")):
        for line in open(f, errors="replace"):
            t = line.split()
            if len(t) >= 6 and t[0].isdigit() and t[1].isdigit():
                link.setdefault("send_lat", {}).setdefault(int(t[0]), {}).setdefault(
                    rep, []).append({"typical_us": float(t[4]), "avg_us": float(t[5])})


def stats(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def aggregate(raw):
    agg = {}
    for name, ops in raw.items():
        if name == "link":
            continue
        for op, sizes in ops.items():
            for size, reps in sizes.items():
                recs = list(reps.values())
                agg.setdefault(name, {}).setdefault(op, {})[size] = {
                    "time_us": stats([r["time_us"] for r in recs]),
                    "busbw": stats([r["busbw"] for r in recs]),
                    "algbw": stats([r["algbw"] for r in recs]),
                    "wrong": sum(r["wrong"] for r in recs),
                }
    link = raw.get("link", {})
    # Per-link bandwidth of one repetition: the mean of the two pairs that ran at once.
    agg["link"] = {
        "write_bw": {s: stats([statistics.mean(v) for v in reps.values()])
                     for s, reps in link.get("write_bw", {}).items()},
        "write_bw_pairs_sum": {s: stats([sum(v) for v in reps.values()])
                               for s, reps in link.get("write_bw", {}).items()},
        "write_bw_bidir": {s: stats([statistics.mean(v) for v in reps.values()])
                           for s, reps in link.get("write_bw_bidir", {}).items()},
        "send_lat_typical": {s: stats([statistics.mean(x["typical_us"] for x in v)
                                       for v in reps.values()])
                             for s, reps in link.get("send_lat", {}).items()},
    }
    return agg


def med(agg, name, op, size, what):
    try:
        return agg[name][op][size][what]["median"]
    except (KeyError, TypeError):
        return None


def fmt_size(s):
    for unit, f in (("G", 1 << 30), ("M", MIB), ("K", 1024)):
        if s >= f and s % f == 0:
            return "%d%s" % (s // f, unit)
    return str(s)


def fmt_t(st):
    if not st:
        return "-"
    m = st["median"]
    p = "%.0f" if m >= 1000 else "%.1f"
    if st["n"] == 1:
        return p % m
    return (p + " (" + p + "-" + p + ")") % (m, st["min"], st["max"])


def fmt_bw(st):
    """GB/s statistics shown in MB/s (emulated links move a few MB/s)."""
    if not st:
        return "-"
    if st["n"] == 1:
        return "%.3g" % (1e3 * st["median"])
    return "%.3g (%.3g-%.3g)" % (1e3 * st["median"], 1e3 * st["min"], 1e3 * st["max"])


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def fmt_r(r):
    return "-" if r is None else "%.2f" % r


def op_table(agg, op, out):
    sizes = sorted(set().union(*[set(agg.get(n, {}).get(op, {}))
                                 for n in ("kcoll", "ompi-ucx", "ompi-tcp")]))
    link = agg["link"]["write_bw"]
    bidir = agg["link"].get("write_bw_bidir", {})
    out.append("\n### %s\n" % op)
    out.append("time us and busbw MB/s (1e6 B/s): median (min-max) over the repetitions; "
               "ratios of median busbw (time ratio for latency).  link = per-link "
               "ib_write_bw with both pairs running, one way; link -b = the same pairs "
               "both ways at once (every VM sends and receives, as in the collective), "
               "per direction.\n")
    out.append("| size | kcoll time | kcoll busbw | OMPI-UCX time | OMPI-UCX busbw | "
               "OMPI-TCP time | OMPI-TCP busbw | ib_write_bw | ib_write_bw -b | kcoll/UCX | "
               "kcoll/TCP | kcoll/link | kcoll/link -b | wrong |")
    out.append("|" + "---|" * 14)
    rows = []
    for s in sizes:
        k = agg.get("kcoll", {}).get(op, {}).get(s)
        u = agg.get("ompi-ucx", {}).get(op, {}).get(s)
        t = agg.get("ompi-tcp", {}).get(op, {}).get(s)
        lb, bb = link.get(s), bidir.get(s)
        kb, ub, tb = (x["busbw"]["median"] if x and x["busbw"] else None for x in (k, u, t))
        lbm = lb["median"] if lb else None
        bbm = bb["median"] if bb else None
        wrong = sum(x["wrong"] for x in (k, u, t) if x)
        r = {"size": s, "kcoll_over_ucx": ratio(kb, ub), "kcoll_over_tcp": ratio(kb, tb),
             "kcoll_over_link": ratio(kb, lbm), "kcoll_over_link_bidir": ratio(kb, bbm)}
        rows.append(r)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
            fmt_size(s), fmt_t(k and k["time_us"]), fmt_bw(k and k["busbw"]),
            fmt_t(u and u["time_us"]), fmt_bw(u and u["busbw"]),
            fmt_t(t and t["time_us"]), fmt_bw(t and t["busbw"]), fmt_bw(lb), fmt_bw(bb),
            fmt_r(r["kcoll_over_ucx"]), fmt_r(r["kcoll_over_tcp"]),
            fmt_r(r["kcoll_over_link"]), fmt_r(r["kcoll_over_link_bidir"]), wrong))
    return rows


def layer_table(agg, op, out):
    """Open MPI with libcoll-mpi against plain Open MPI and coll-perf."""
    pts = agg.get(LAYER, {}).get(op, {})
    if not pts:
        return []
    out.append("\n### %s: the MPI layer (Open MPI + libcoll-mpi)\n" % op)
    out.append("mpi_coll_bench under Open MPI over TCP with libcoll-mpi preloaded "
               "(OMPI+kcoll), against coll-perf (kcoll through libcoll, no MPI) and plain "
               "Open MPI.  layer = OMPI+kcoll time / coll-perf time (goal <= %.2f at every "
               "size); /UCX, /TCP = ratios of median busbw.\n" % T_LAYER)
    out.append("| size | OMPI+kcoll time | OMPI+kcoll busbw | coll-perf time | OMPI-UCX time | "
               "OMPI-TCP time | layer | within %d%% | OMPI+kcoll/UCX | OMPI+kcoll/TCP | wrong |"
               % round(100 * (T_LAYER - 1)))
    out.append("|" + "---|" * 11)
    rows = []
    for s in sorted(pts):
        m = pts[s]
        k, u, t = (agg.get(n, {}).get(op, {}).get(s) for n in ("kcoll", "ompi-ucx", "ompi-tcp"))
        mb = m["busbw"] and m["busbw"]["median"]
        r = {"size": s,
             "layer_over_collperf_time": ratio(m["time_us"] and m["time_us"]["median"],
                                               k and k["time_us"] and k["time_us"]["median"]),
             "layer_over_ucx": ratio(mb, u and u["busbw"] and u["busbw"]["median"]),
             "layer_over_tcp": ratio(mb, t and t["busbw"] and t["busbw"]["median"])}
        lr = r["layer_over_collperf_time"]
        rows.append(r)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |" % (
            fmt_size(s), fmt_t(m["time_us"]), fmt_bw(m["busbw"]), fmt_t(k and k["time_us"]),
            fmt_t(u and u["time_us"]), fmt_t(t and t["time_us"]), fmt_r(lr),
            "-" if lr is None else ("yes" if lr <= T_LAYER else "**no**"),
            fmt_r(r["layer_over_ucx"]), fmt_r(r["layer_over_tcp"]), m["wrong"]))
    return rows


def routing_lines(routing):
    """What libcoll-mpi routed in each repetition; loud when it did not."""
    out = []
    for rep in sorted(routing):
        rt = routing[rep]
        if rt["unrouted"]:
            out.append("\n**mpi.kcoll in repetition %d did not route to kcoll (%s): it measured "
                       "plain Open MPI, its numbers are left out.**" % (rep, rt["unrouted"]))
        out.append("\nmpi.kcoll repetition %d, KCOLL_MPI_VERBOSE=1: %s" % (
            rep, "; ".join(l[len("kcoll-mpi: "):] for l in rt["lines"]) or "nothing printed"))
    return out


def regret_table(agg, out):
    forced = sorted(n for n in agg if n.startswith("kcoll:"))
    if not forced:
        return []
    cal = "kcoll-calibrated" in agg
    sizes = sorted(agg.get("kcoll", {}).get("allreduce", {}))
    out.append("\n### AllReduce: automatic selection against each algorithm forced\n")
    out.append("median time us; best = the fastest forced algorithm; regret = "
               "auto / best - 1 (negative: auto beat every forced run, which is noise)%s.\n"
               % ("; auto = the module's default link model, calibrated = the model "
                  "`collctl calibrate` fitted at boot" if cal else ""))
    out.append("| size | auto | " + ("calibrated | " if cal else "") +
               " | ".join(n[6:] for n in forced) + " | best | regret |" +
               (" regret calibrated |" if cal else ""))
    out.append("|" + "---|" * (len(forced) + 4 + 2 * cal))
    res = []

    def fmt(v):
        return "-" if v is None else "%.1f" % v

    def fmt_reg(v):
        return "-" if v is None else "%+.1f%%" % (100 * v)
    for s in sizes:
        a = med(agg, "kcoll", "allreduce", s, "time_us")
        c = med(agg, "kcoll-calibrated", "allreduce", s, "time_us") if cal else None
        ts = {n: med(agg, n, "allreduce", s, "time_us") for n in forced}
        have = {n: v for n, v in ts.items() if v is not None}
        best = min(have, key=have.get) if have else None
        reg = a / have[best] - 1 if best and a else None
        creg = c / have[best] - 1 if best and c else None
        res.append({"size": s, "auto_us": a, "calibrated_us": c, "best": best and best[6:],
                    "best_us": best and have[best], "regret": reg, "regret_calibrated": creg})
        out.append("| %s | %s | %s%s | %s | %s |%s" % (
            fmt_size(s), fmt(a), (fmt(c) + " | ") if cal else "",
            " | ".join(fmt(ts[n]) for n in forced),
            best[6:] if best else "-", fmt_reg(reg), (" %s |" % fmt_reg(creg)) if cal else ""))
    return res


def calibration_lines(rank0s):
    """The link model collctl calibrate fitted at each boot (calibrate.repN.json)."""
    lines = []
    for r0 in rank0s:
        for f in sorted(glob.glob(os.path.join(r0, "calibrate.rep*.json"))):
            try:
                j = json.load(open(f))
            except (ValueError, OSError):
                lines.append("calibrate: %s unreadable (calibration failed?)" % f)
                continue
            for lv in j.get("levels", []):
                mesh = lv.get("auto_mesh")
                lines.append("calibrate.%s: level%d alpha_ns=%s gbps=%s reduce_gbps=%s "
                             "auto_mesh=%s overhead_us=%.0f fit_error=%.1f%% "
                             "default_model_error=%.1f%%" % (
                                 os.path.basename(f)[len("calibrate."):-len(".json")],
                                 lv["level"], lv["alpha_ns"], lv["gbps"], lv["reduce_gbps"],
                                 "kept" if mesh is None else "%d (Mesh/Ring worst %.2f)" % (
                                     mesh, lv["mesh_ring_worst"]),
                                 lv.get("overhead_us", 0.0), 100 * lv["rms_rel"],
                                 100 * lv["rms_rel_start"]))
    return lines


def tuned_table(agg, host, vm, out, refused):
    # A repetition whose BENCH_TUNE the module refused ran no tuned phase.
    for rep in sorted(refused):
        out.append("\nBENCH_TUNE refused in repetition %d (rank value): %s; no tuned run." %
                   (rep, ", ".join(refused[rep])))
    if "kcoll-tuned" not in agg:
        return []
    out.append("\n### AllReduce: module defaults against BENCH_TUNE (%s)\n" %
               vm.get("tune", "see bench-node.sh"))
    out.append("| size | default time | default busbw | tuned time | tuned busbw | tuned/default busbw |")
    out.append("|---|---|---|---|---|---|")
    res = []
    for s in sorted(agg.get("kcoll", {}).get("allreduce", {})):
        d = agg["kcoll"]["allreduce"][s]
        t = agg["kcoll-tuned"].get("allreduce", {}).get(s)
        r = ratio(t and t["busbw"] and t["busbw"]["median"], d["busbw"] and d["busbw"]["median"])
        res.append({"size": s, "tuned_over_default": r})
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            fmt_size(s), fmt_t(d["time_us"]), fmt_bw(d["busbw"]), fmt_t(t and t["time_us"]),
            fmt_bw(t and t["busbw"]), fmt_r(r)))
    return res


def fingerprint_table(raw, agg, out):
    # kcoll's AllReduce against the same with fingerprint=0.  The two run
    # back to back in every repetition, so the cost is the median of the
    # per-repetition ratios (the host's slow phases hit both alike).
    if "kcoll-unchecked" not in agg:
        return []
    out.append("\n### AllReduce: what the fingerprint costs (default against fingerprint=0)\n")
    out.append("Cost: median over repetitions of each repetition's time ratio minus 1 "
               "(lowest and highest in parentheses).\n")
    out.append("| size | fingerprint time | without time | repetitions | cost |")
    out.append("|---|---|---|---|---|")
    res = []
    for s in sorted(agg.get("kcoll", {}).get("allreduce", {})):
        d = agg["kcoll"]["allreduce"][s]
        u = agg["kcoll-unchecked"].get("allreduce", {}).get(s)
        with_fp = raw["kcoll"]["allreduce"][s]
        without = raw["kcoll-unchecked"].get("allreduce", {}).get(s, {})
        rs = sorted(100 * (with_fp[r]["time_us"] / without[r]["time_us"] - 1)
                    for r in with_fp if r in without and without[r]["time_us"])
        cost = statistics.median(rs) if rs else None
        res.append({"size": s, "cost_pct": cost, "n": len(rs),
                    "min_pct": rs[0] if rs else None, "max_pct": rs[-1] if rs else None})
        out.append("| %s | %s | %s | %d | %s |" % (
            fmt_size(s), fmt_t(d["time_us"]), fmt_t(u and u["time_us"]), len(rs),
            "-" if cost is None else "%+.1f%% (%+.1f%% to %+.1f%%)" % (cost, rs[0], rs[-1])))
    return res


def targets(agg, tables, out, layers=None):
    res = []

    def check(name, size, value, target, le=False):
        ok = None if value is None else (value <= target if le else value >= target)
        res.append({"target": name, "size": size, "value": value, "goal": target,
                    "met": ok})

    for r in tables["allreduce"]:
        if r["size"] >= MIB:
            check("allreduce busbw kcoll/OMPI-UCX", r["size"], r["kcoll_over_ucx"], T_AR_UCX)
            check("allreduce busbw kcoll/OMPI-TCP", r["size"], r["kcoll_over_tcp"], T_AR_TCP)
            check("allreduce busbw kcoll/ib_write_bw", r["size"], r["kcoll_over_link"], T_AR_LINK)
            check("allreduce busbw kcoll/ib_write_bw -b per direction", r["size"],
                  r["kcoll_over_link_bidir"], T_AR_LINK)
    for c in ("ompi-ucx", "ompi-tcp"):
        check("8 B allreduce time kcoll/" + c.upper(), 8,
              ratio(med(agg, "kcoll", "allreduce", 8, "time_us"),
                    med(agg, c, "allreduce", 8, "time_us")), T_LAT, le=True)
    # The same rows for automatic selection on the calibrated model (what
    # an operator who ran `collctl calibrate --write` gets).
    links = (("ib_write_bw", agg["link"]["write_bw"]),
             ("ib_write_bw -b per direction", agg["link"].get("write_bw_bidir", {})))
    cal = agg.get("kcoll-calibrated", {})
    for c in ("ompi-ucx", "ompi-tcp"):
        if 8 in cal.get("allreduce", {}):
            check("8 B allreduce time kcoll-calibrated/" + c.upper(), 8,
                  ratio(med(agg, "kcoll-calibrated", "allreduce", 8, "time_us"),
                        med(agg, c, "allreduce", 8, "time_us")), T_LAT, le=True)
    for op, goal in (("allreduce", None), ("allgather", T_AGRS), ("reducescatter", T_AGRS)):
        for s in sorted(x for x in cal.get(op, {}) if x >= MIB):
            cb = med(agg, "kcoll-calibrated", op, s, "busbw")
            for c, g in (("ompi-ucx", goal or T_AR_UCX), ("ompi-tcp", goal or T_AR_TCP)):
                check("%s busbw kcoll-calibrated/%s" % (op, c.upper()), s,
                      ratio(cb, med(agg, c, op, s, "busbw")), g)
            for name, lw in links if op == "allreduce" else ():
                check("allreduce busbw kcoll-calibrated/" + name, s,
                      ratio(cb, lw.get(s, {}).get("median")), T_AR_LINK)
    for op in ("allgather", "reducescatter"):
        for r in tables[op]:
            if r["size"] >= MIB:
                check(op + " busbw kcoll/OMPI-UCX", r["size"], r["kcoll_over_ucx"], T_AGRS)
                check(op + " busbw kcoll/OMPI-TCP", r["size"], r["kcoll_over_tcp"], T_AGRS)
    for op, rows in (layers or {}).items():
        have = [r for r in rows if r["layer_over_collperf_time"] is not None]
        if have:
            worst = max(have, key=lambda r: r["layer_over_collperf_time"])
            check("%s time OMPI+kcoll/coll-perf, worst size (issue 24)" % op, worst["size"],
                  worst["layer_over_collperf_time"], T_LAYER, le=True)
    out.append("\n## Targets of issues 8 and 24 (same run)\n")
    out.append("| target | size | measured | goal | met |")
    out.append("|---|---|---|---|---|")
    for t in res:
        out.append("| %s | %s | %s | %s%.2f | %s |" % (
            t["target"], fmt_size(t["size"]), fmt_r(t["value"]),
            "<= " if "time" in t["target"] else ">= ", t["goal"],
            {True: "yes", False: "**no**", None: "-"}[t["met"]]))
    return res


def plot(agg, outdir):
    """busbw against size, one panel per op; a data file per contender."""
    dat = os.path.join(outdir, "plot")
    os.makedirs(dat, exist_ok=True)
    curves = {}
    for op in OPS:
        for name in ("kcoll", "ompi-ucx", "ompi-tcp", LAYER):
            pts = agg.get(name, {}).get(op, {})
            if not pts:
                continue
            fn = os.path.join(dat, "%s.%s.dat" % (name, op))
            with open(fn, "w") as f:
                for s in sorted(pts):
                    b = pts[s]["busbw"]
                    if b and b["median"] > 0:
                        f.write("%d %g %g %g\n" % (s, b["median"], b["min"], b["max"]))
            curves.setdefault(op, []).append((name, fn))
        for key, name in (("write_bw", "ib_write_bw per link"),
                          ("write_bw_bidir", "ib_write_bw -b per direction")):
            lw = agg["link"].get(key)
            if not lw:
                continue
            fn = os.path.join(dat, "link.%s.dat" % key)
            with open(fn, "w") as f:
                for s in sorted(lw):
                    if lw[s]["median"] > 0:
                        f.write("%d %g %g %g\n" % (s, lw[s]["median"], lw[s]["min"], lw[s]["max"]))
            curves.setdefault(op, []).append((name, fn))
    g = ['set terminal pngcairo size 1400,1000 noenhanced',
         'set output "%s"' % os.path.join(outdir, "busbw.png"),
         'set multiplot layout 2,2 title "kcoll vs Open MPI vs the link, %s VMs soft-RoCE '
         '(median, min-max)"' % NODES[0],
         'set logscale xy', 'set format x "%.0s%cB"', 'set xlabel "size"',
         'set ylabel "busbw MB/s"', 'set key top left', 'set grid']
    colour = {"kcoll": "#d62728", "ompi-ucx": "#1f77b4", "ompi-tcp": "#2ca02c",
              LAYER: "#9467bd",
              "ib_write_bw per link": "#7f7f7f", "ib_write_bw -b per direction": "#bcbd22"}
    for op in OPS:
        g.append('set title "%s"' % op)
        cs = curves.get(op)
        if not cs:
            g.append('plot 1/0 notitle')
            continue
        g.append("plot " + ", ".join(
            '"%s" using 1:($2*1e3):($3*1e3):($4*1e3) with yerrorlines lc rgb "%s" title "%s"'
            % (fn, colour[name], name) for name, fn in cs))
    g.append("unset multiplot")
    try:
        subprocess.run(["gnuplot"], input="\n".join(g) + "\n", text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("bench-report: gnuplot failed: %s" % e, file=sys.stderr)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    host = read_kv(os.path.join(outdir, "host-info.txt"))
    raw, vm, reduce_lines, wall, refused, routing = {}, {}, [], {}, {}, {}
    rank0s = sorted(glob.glob(os.path.join(outdir, "runs", "boot*", "out", "rank.0")))
    if not rank0s:
        print("bench-report: no runs in %s/runs" % outdir, file=sys.stderr)
        return 1
    for r0 in rank0s:
        set_bus_factors(int(read_kv(os.path.join(r0, "vm-info.txt")).get("nodes", 4)))
        vm = vm or {k: v for k, v in read_kv(os.path.join(r0, "vm-info.txt")).items()
                    if not k.isupper() and k not in ("kcoll.uevent", "kcoll.dev")}
        p = os.path.join(r0, "bench-reduce.txt")
        if os.path.exists(p):
            reduce_lines += [l.strip() for l in open(p) if l.startswith("bench-reduce")]
        for d in sorted(glob.glob(os.path.join(r0, "rep*"))):
            rep = int(re.sub(r"\D", "", os.path.basename(d)))
            parse_rep(rep, d, raw, routing)
            t = os.path.join(d, "tuned-refused.txt")
            if os.path.exists(t):
                refused[rep] = sorted(l.strip() for l in open(t) if l.strip())
            w = os.path.join(d, "walltime.txt")
            if os.path.exists(w):
                wall[rep] = dict((l.split()[0], int(l.split()[1])) for l in open(w) if l.strip())
    agg = aggregate(raw)
    out = ["# kcoll benchmark (make bench, issue 8)\n"]
    out.append("```")
    for k in sorted(host):
        out.append("%s=%s" % (k, host[k]))
    for k in sorted(vm):
        out.append("vm.%s=%s" % (k, vm[k]))
    out += reduce_lines
    out += calibration_lines(rank0s)
    out.append("```")
    out.append("\nWall time per repetition and contender (s): " + "; ".join(
        "rep%d %s" % (r, ", ".join("%s %d" % kv for kv in wall[r].items())) for r in sorted(wall)))
    ns = [v["n"] for n in agg if n != "link" for o in agg[n].values() for p in o.values()
          for v in (p["time_us"],) if v]
    out.append("\nRepetitions per point: %s..%s (a run cut by its time limit leaves the "
               "last repetition incomplete; bench.json has n per point)." %
               (min(ns, default=0), max(ns, default=0)))
    out.append("\n## Tables\n")
    tables = {op: op_table(agg, op, out) for op in OPS}
    layers = {op: layer_table(agg, op, out) for op in OPS}
    out += routing_lines(routing)
    lat = agg["link"]["send_lat_typical"]
    if lat:
        out.append("\n### ib_send_lat (typical us, mean of the two pairs; median over repetitions)\n")
        out.append("| size | " + " | ".join(fmt_size(s) for s in sorted(lat)) + " |")
        out.append("|---|" + "---|" * len(lat))
        out.append("| us | " + " | ".join("%.1f" % lat[s]["median"] for s in sorted(lat)) + " |")
    regret = regret_table(agg, out)
    tuned = tuned_table(agg, host, vm, out, refused)
    fingerprint = fingerprint_table(raw, agg, out)
    tg = targets(agg, tables, out, layers)
    out += phase_cpu.table(rank0s)
    wrong = sum(v["wrong"] for n in agg if n != "link" for o in agg[n].values() for v in o.values())
    out.append("\nWrong elements over every checked run: %d" % wrong)
    bad_routing = sorted(r for r in routing if routing[r]["unrouted"])
    if bad_routing:
        out.append("\n**mpi.kcoll did not route to kcoll in repetition(s) %s: see above; "
                   "exit status 1.**" % ", ".join(map(str, bad_routing)))
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(out) + "\n")

    def keys_to_str(x):
        if isinstance(x, dict):
            return {str(k): keys_to_str(v) for k, v in x.items()}
        if isinstance(x, list):
            return [keys_to_str(v) for v in x]
        return x
    with open(os.path.join(outdir, "bench.json"), "w") as f:
        json.dump(keys_to_str({"host": host, "vm": vm, "bench_reduce": reduce_lines,
                               "walltime_s": wall, "raw": raw, "stats": agg,
                               "ratios": tables, "layer": layers, "routing": routing,
                               "regret": regret, "tuned": tuned, "fingerprint": fingerprint,
                               "targets": tg,
                               "wrong": wrong}), f, indent=1)
    plot(agg, outdir)
    print("\n".join(out))
    for r in bad_routing:
        print("bench-report: mpi.kcoll did not route to kcoll in repetition %d (%s)"
              % (r, routing[r]["unrouted"]), file=sys.stderr)
    return 1 if wrong or bad_routing else 0


if __name__ == "__main__":
    sys.exit(main())
