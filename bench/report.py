#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Copyright (C) 2026 The qtimer authors
#
# Turns qtbench's CSV (and notes) into what bench/bench.sh shows: a text
# table, the cost growth from 100k to 1M timers, the goal ratios
# (PASS/MISS, for information: speed never fails a build) and the gnuplot
# plots.
#
#   report.py RESULTS.CSV [--notes NOTES.TXT] [--plot-dir DIR]

import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys

FIELDS = ["kernel", "mechanism", "workload", "n", "batch", "ns_per_op",
          "cpu_ns_per_expiry", "late_p50_ns", "late_p99_ns", "late_max_ns",
          "early", "delivered", "bytes_per_timer"]
OPS = ["arm", "modify", "cancel", "mixed", "reset", "startstop"]
WORKLOAD_ORDER = {w: i for i, w in enumerate(OPS + ["fire", "ticker"])}
# Distinct colours, so that nine or more series stay apart.
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
          "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8"]
MECH_ORDER = {m: i for i, m in enumerate(
    ["qtimer", "qtimer-batch", "qtimer-ring", "qtimer-table", "libtimerdev", "libtimerdev-table", "timerfd", "posix", "io_uring", "libuv"])}


def num(v):
    if v is None or v == "":
        return None
    try:
        return float(v)
    except ValueError:
        return None


def label(row):
    return row["mechanism"] + ("/" + row["batch"] if row["batch"] else "")


def load(path):
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("kernel") in (None, "kernel"):
                continue
            row["n"] = int(row["n"])
            rows.append(row)
    return rows


def load_notes(path):
    """(mechanism, workload, n, batch) -> [text]; and the notes themselves."""
    flags, lines = {}, []
    if not path or not os.path.exists(path):
        return flags, lines
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            lines.append(line)
            head, _, text = line.partition(": ")
            parts = head.split(",")
            if len(parts) == 4:
                flags.setdefault(tuple(parts), []).append(text)
    return flags, lines


def row_marks(mech, workload, n, batch, flags):
    """What the notes say about one row: PARTIAL, LOST, EARLY, late-start."""
    # modify and cancel run inside the arm workload, and its notes say so.
    key = (mech, "arm" if workload in ("modify", "cancel") else workload, str(n), batch)
    marks = []
    for text in flags.get(key, []):
        if text.startswith("partial: "):
            phase = text.split()[1]
            if phase == workload or (workload == "fire" and phase in ("arm", "delivery")):
                marks.append("PARTIAL")
        elif text.startswith(("LOST", "EARLY", "TOO MANY")):
            marks.append(text.split(":")[0])
        elif "overran" in text and workload in ("fire", "ticker"):
            marks.append("late-start")
    return " ".join(sorted(set(marks)))


def fmt_ns(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return "%.1fms" % (v / 1e6)
    if v >= 1e4:
        return "%.1fus" % (v / 1e3)
    return "%.0f" % v


def fmt_ms(v):
    return "-" if v is None else "%.3f" % (v / 1e6)


def table(rows, flags):
    out = []
    hdr = ("%-18s %-7s %9s %10s %10s %9s %9s %9s %6s %9s %7s  %s" %
           ("mechanism", "work", "N", "ns/op", "cpu/exp", "p50 ms", "p99 ms",
            "max ms", "early", "delivered", "B/timer", "notes"))
    out.append(hdr)
    out.append("-" * len(hdr))
    key = lambda r: (r["n"], MECH_ORDER.get(r["mechanism"], 99), int(r["batch"] or 0),
                     WORKLOAD_ORDER.get(r["workload"], 99))
    last_n = None
    for r in sorted(rows, key=key):
        if last_n is not None and r["n"] != last_n:
            out.append("")
        last_n = r["n"]
        marks = row_marks(r["mechanism"], r["workload"], r["n"], r["batch"], flags)
        b = num(r["bytes_per_timer"])
        out.append("%-18s %-7s %9d %10s %10s %9s %9s %9s %6s %9s %7s  %s" % (
            label(r), r["workload"], r["n"], fmt_ns(num(r["ns_per_op"])),
            fmt_ns(num(r["cpu_ns_per_expiry"])), fmt_ms(num(r["late_p50_ns"])),
            fmt_ms(num(r["late_p99_ns"])), fmt_ms(num(r["late_max_ns"])),
            r["early"] or "-", r["delivered"] or "-",
            "-" if b is None else "%.0f" % b, marks))
    return out


def index(rows):
    idx = {}
    for r in rows:
        idx[(r["mechanism"], r["batch"], r["workload"], r["n"])] = r
    return idx


def get(idx, mech, batch, workload, n, field):
    r = idx.get((mech, batch, workload, n))
    return None if r is None else num(r[field])


def growth(rows, idx, flags):
    out = []
    configs = sorted({(r["mechanism"], r["batch"]) for r in rows},
                     key=lambda c: (MECH_ORDER.get(c[0], 99), int(c[1] or 0)))
    for mech, batch in configs:
        cells = []
        for op in OPS:
            a = get(idx, mech, batch, op, 100000, "ns_per_op")
            b = get(idx, mech, batch, op, 1000000, "ns_per_op")
            partial = any(row_marks(mech, op, n, batch, flags).count("PARTIAL")
                          for n in (100000, 1000000))
            cells.append("%s=%s" % (op, "%.2fx%s" % (b / a, "*" if partial else "")
                                    if a and b else "-"))
        out.append("  %-18s %s" % (mech + ("/" + batch if batch else ""), "  ".join(cells)))
    return out


def verdict(out, verdicts, name, value, ok, detail):
    """One goal's line, PASS, MISS or (ok None) n/a with @detail, counted."""
    v = "n/a" if ok is None else ("PASS" if ok else "MISS")
    verdicts[v] += 1
    out.append("  %-4s  %-52s %s" % (v, name, value if ok is not None else detail))


def goals(rows, idx):
    """The issue's goals, from the measured numbers."""
    out = []
    batches = sorted({int(r["batch"]) for r in rows if r["mechanism"] == "qtimer-batch"
                      and r["batch"]})
    qb = str(batches[-1]) if batches else None
    uring_batch = next((r["batch"] for r in rows if r["mechanism"] == "io_uring"), "")
    fire_q = next((("qtimer-batch", r["batch"]) for r in rows
                   if r["mechanism"] == "qtimer-batch" and r["workload"] == "fire"),
                  ("qtimer", ""))
    verdicts = {"PASS": 0, "MISS": 0, "n/a": 0}

    def say(name, value, ok, detail):
        verdict(out, verdicts, name, value, ok, detail)

    def ratio_goal(name, num_v, den_v, limit, fmt="%.3f", below=False):
        """Goal: num/den at most limit, or below it with below=True."""
        if num_v is None or den_v is None or den_v == 0:
            say(name, None, None, "not measured")
            return
        r = num_v / den_v
        op = "<" if below else "<="
        say(name, (fmt % r) + " (goal " + op + " " + (fmt % limit) + ")",
            r < limit if below else r <= limit, "")

    if qb is None:
        out.append("  (no qtimer-batch results: goals cannot be computed)")
        return out, verdicts
    qlabel = "qtimer-batch/" + qb
    for n in (100000, 1000000):
        tag = "%dk" % (n // 1000) if n < 1000000 else "%dM" % (n // 1000000)
        qa = get(idx, "qtimer-batch", qb, "arm", n, "ns_per_op")
        ratio_goal("%s arm vs timerfd arm @%s" % (qlabel, tag), qa,
                   get(idx, "timerfd", "", "arm", n, "ns_per_op"), 0.1)
        ratio_goal("%s arm vs io_uring arm @%s" % (qlabel, tag), qa,
                   get(idx, "io_uring", uring_batch, "arm", n, "ns_per_op"), 0.1)
        ratio_goal("%s arm vs libuv arm @%s" % (qlabel, tag), qa,
                   get(idx, "libuv", "", "arm", n, "ns_per_op"), 2.0, "%.2f")
        # Cheaper than libuv's heap: lazy O(1) against its O(log n) pointer heap.
        for op in ("modify", "cancel"):
            ratio_goal("%s %s vs libuv %s @%s" % (qlabel, op, op, tag),
                       get(idx, "qtimer-batch", qb, op, n, "ns_per_op"),
                       get(idx, "libuv", "", op, n, "ns_per_op"), 1.0, "%.2f", below=True)
        ratio_goal("qtimer CPU/expiry vs io_uring @%s" % tag,
                   get(idx, fire_q[0], fire_q[1], "fire", n, "cpu_ns_per_expiry"),
                   get(idx, "io_uring", uring_batch, "fire", n, "cpu_ns_per_expiry"), 0.1)
    p99 = get(idx, fire_q[0], fire_q[1], "fire", 1000000, "late_p99_ns")
    if p99 is None:
        say("qtimer fire p99 lateness @1M", None, None, "not measured")
    else:
        say("qtimer fire p99 lateness @1M", "%.2f ms (goal <= 10 ms)" % (p99 / 1e6),
            p99 <= 10e6, "")
    for op in ("arm", "modify", "cancel"):
        a = get(idx, "qtimer-batch", qb, op, 100000, "ns_per_op")
        b = get(idx, "qtimer-batch", qb, op, 1000000, "ns_per_op")
        ratio_goal("%s %s growth 100k->1M" % (qlabel, op), b, a, 1.3, "%.2f")
    bpt = [(r["n"], num(r["bytes_per_timer"])) for r in rows
           if r["mechanism"] in ("qtimer", "qtimer-batch") and r["workload"] == "arm"
           and num(r["bytes_per_timer"]) is not None]
    if bpt:
        n, worst = max(bpt, key=lambda x: (x[0], x[1]))
        say("qtimer kernel bytes per timer (largest N)", "%.1f B @N=%d (goal <= 96)" % (worst, n),
            worst <= 96, "")
    else:
        say("qtimer kernel bytes per timer", None, None, "not measured")
    early = [(label(r), r["workload"], r["n"], int(r["early"])) for r in rows
             if r["mechanism"] in ("qtimer", "qtimer-batch", "qtimer-ring", "libtimerdev") and r["early"]]
    if early:
        bad = [e for e in early if e[3]]
        say("qtimer early expirations (fire, ticker)",
            "%d in %d runs" % (sum(e[3] for e in bad), len(bad)) if bad else
            "0 in %d runs" % len(early), not bad, "")
    else:
        say("qtimer early expirations", None, None, "not measured")
    return out, verdicts


def process_cpu(flags, mech, batch, n):
    """The consumer's own CPU per expiry from a fire run's notes (median)."""
    vals = sorted(float(m.group(1)) for text in flags.get((mech, "fire", str(n), batch), [])
                  for m in [re.search(r"this process (\d+) ns/expiry", text)] if m)
    return vals[len(vals) // 2] if vals else None


def delivery_goals(rows, idx, flags):
    """Issue 20's goals on delivery and growth, from the same numbers."""
    out = []
    verdicts = {"PASS": 0, "MISS": 0, "n/a": 0}

    def say(name, value, limit, fmt="%.0f", unit=""):
        if value is None or limit is None:
            verdict(out, verdicts, name, None, None, "not measured")
            return
        verdict(out, verdicts, name, "%s (goal <= %s)" % ((fmt % value) + unit,
                                                          (fmt % limit) + unit),
                value <= limit, "")

    def fire(mech, n, field):
        batch = next((r["batch"] for r in rows if r["mechanism"] == mech
                      and r["workload"] == "fire" and r["n"] == n), None)
        return (None, None) if batch is None else (get(idx, mech, batch, "fire", n, field), batch)

    ms = lambda v: None if v is None else v / 1e6
    ring99, ring_b = fire("qtimer-ring", 1000000, "late_p99_ns")
    read99, _ = fire("qtimer-batch", 1000000, "late_p99_ns")
    say("qtimer-ring p99 lateness @1M", ms(ring99), 50, fmt="%.1f", unit=" ms")
    say("qtimer-batch (read()) p99 lateness @1M", ms(read99), 100, fmt="%.1f", unit=" ms")
    say("qtimer-ring consumer CPU per record @1M",
        None if ring_b is None else process_cpu(flags, "qtimer-ring", ring_b, 1000000),
        200, unit=" ns")
    uring_cpu, _ = fire("io_uring", 1000000, "cpu_ns_per_expiry")
    uring99k, _ = fire("io_uring", 100000, "late_p99_ns")
    for mech in ("qtimer-ring", "qtimer-batch"):
        cpu, _ = fire(mech, 1000000, "cpu_ns_per_expiry")
        say("%s CPU/expiry over io_uring's @1M" % mech,
            None if cpu is None or not uring_cpu else cpu / uring_cpu, 0.5, fmt="%.2f")
        p99, _ = fire(mech, 100000, "late_p99_ns")
        say("%s p99 lateness @100k, io_uring's as goal" % mech, ms(p99), ms(uring99k),
            fmt="%.2f", unit=" ms")
    big = sorted({r["n"] for r in rows if r["n"] > 1000000 and r["mechanism"] == "qtimer-batch"})
    if big:
        batch = next(r["batch"] for r in rows if r["mechanism"] == "qtimer-batch" and r["n"] == big[-1])
        for op in ("arm", "modify", "cancel"):
            a = get(idx, "qtimer-batch", batch, op, 1000000, "ns_per_op")
            b = get(idx, "qtimer-batch", batch, op, big[-1], "ns_per_op")
            say("qtimer-batch/%s %s growth 1M->%dM" % (batch, op, big[-1] // 1000000),
                None if not a or b is None else b / a, 1.3, fmt="%.2f", unit="x")
    return out, verdicts


def lazy_goals(rows, idx):
    """Issue 40's goals: the timer table against libuv (lazy.c's workloads)."""
    out = []
    verdicts = {"PASS": 0, "MISS": 0, "n/a": 0}
    tb = next((r["batch"] for r in rows if r["mechanism"] == "qtimer-table"), None)
    qb = max((int(r["batch"]) for r in rows if r["mechanism"] == "qtimer-batch"
              and r["batch"]), default=None)
    qb = None if qb is None else str(qb)

    def ratio(name, a, b, limit):
        if a is None or not b:
            verdict(out, verdicts, name, None, None, "not measured")
            return
        verdict(out, verdicts, name, "%.2f (goal <= %.2f)" % (a / b, limit), a / b <= limit, "")

    for n in (100000, 1000000):
        tag = "%dk" % (n // 1000) if n < 1000000 else "%dM" % (n // 1000000)
        uv = lambda w, f: get(idx, "libuv", "", w, n, f)
        ratio("qtimer-table reset, caller CPU vs libuv @%s" % tag,
              get(idx, "qtimer-table", tb, "reset", n, "ns_per_op"), uv("reset", "ns_per_op"), 0.1)
        ratio("qtimer-table reset, all CPUs vs libuv @%s" % tag,
              get(idx, "qtimer-table", tb, "reset", n, "cpu_ns_per_expiry"),
              uv("reset", "cpu_ns_per_expiry"), 0.25)
        ratio("qtimer-table startstop vs libuv @%s" % tag,
              get(idx, "qtimer-table", tb, "startstop", n, "ns_per_op"),
              uv("startstop", "ns_per_op"), 0.75)
        ratio("qtimer-batch/%s arm vs libuv @%s" % (qb, tag),
              get(idx, "qtimer-batch", qb, "arm", n, "ns_per_op"), uv("arm", "ns_per_op"), 2.0)
        ratio("qtimer-batch/%s cancel vs libuv @%s" % (qb, tag),
              get(idx, "qtimer-batch", qb, "cancel", n, "ns_per_op"), uv("cancel", "ns_per_op"), 0.5)
    bpt = [num(r["bytes_per_timer"]) for r in rows if r["mechanism"] == "qtimer-table"
           and r["workload"] == "arm" and num(r["bytes_per_timer"]) is not None]
    if bpt:
        verdict(out, verdicts, "qtimer-table kernel bytes per timer",
                "%.1f B (goal <= 112)" % max(bpt), max(bpt) <= 112, "")
    else:
        verdict(out, verdicts, "qtimer-table kernel bytes per timer", None, None, "not measured")
    return out, verdicts


def plot(rows, plot_dir, kernel):
    """ns_per_op.png (one panel per op) and fire.png (CPU/expiry, p99)."""
    data_dir = os.path.join(plot_dir, "plotdata")
    shutil.rmtree(data_dir, ignore_errors=True)
    os.makedirs(data_dir)
    series = {}
    for r in rows:
        series.setdefault((r["workload"], label(r)), []).append(r)
    files = {}
    for (workload, lab), rs in series.items():
        path = os.path.join(data_dir, "%s_%s.dat" % (workload, lab.replace("/", "_")))
        with open(path, "w") as f:
            for r in sorted(rs, key=lambda r: r["n"]):
                vals = [num(r[k]) for k in ("ns_per_op", "cpu_ns_per_expiry", "late_p99_ns")]
                f.write("%d %s\n" % (r["n"], " ".join("NaN" if v is None else repr(v)
                                                      for v in vals)))
        files.setdefault(workload, []).append((lab, path))

    def panel(workload, col, title, ylabel, scale=False):
        entries = [(lab, p) for lab, p in sorted(files.get(workload, []),
                   key=lambda e: (MECH_ORDER.get(e[0].split("/")[0], 99),
                                  int(e[0].split("/")[1]) if "/" in e[0] else 0))
                   if any(not math.isnan(float(line.split()[col - 1]))
                          for line in open(p))]
        lines = ['set title "%s"' % title, 'set ylabel "%s"' % ylabel]
        if not entries:
            # An empty panel that keeps its place and says why it is empty.
            lines += ["unset logscale", 'set label 1 "no data" at graph 0.45,0.5',
                      "plot [0:1] [0:1] 2 notitle", "unset label 1", "set logscale xy"]
            return lines
        lines.append("plot " + ", \\\n     ".join(
            "'%s' using 1:%s with linespoints lw 1.5 pt %d lc rgb '%s' title '%s' noenhanced" %
            (p, ("($%d/1e6)" % col) if scale else str(col), 1 + i % 13,
             COLORS[i % len(COLORS)], lab)
            for i, (lab, p) in enumerate(entries)))
        return lines

    common = [
        "set logscale xy",
        'set xlabel "N (timers)"',
        "set grid",
        "set key outside right top font ',8'",
        "set format x '10^{%L}'",
        "set datafile missing 'NaN'",
    ]
    script = ["set terminal pngcairo size 1600,1500 font ',10'",
              "set output '%s'" % os.path.join(plot_dir, "ns_per_op.png")] + common
    script.append('set multiplot layout 3,2 title "qtimer benchmarks on %s: ns per op'
                  ' (reset, startstop: the caller\'s CPU)"' % kernel)
    for op in OPS:
        script += panel(op, 2, op, "ns / op")
    script.append("unset multiplot")
    script += ["set terminal pngcairo size 1600,600 font ',10'",
               "set output '%s'" % os.path.join(plot_dir, "fire.png")]
    script.append('set multiplot layout 1,2 title "fire: N timers over 1 s on %s"' % kernel)
    script += panel("fire", 3, "CPU per delivered expiry (all CPUs)", "ns / expiry")
    script += panel("fire", 4, "p99 lateness", "ms", scale=True)
    script.append("unset multiplot")
    return gnuplot(os.path.join(data_dir, "plot.gp"), script)


def gnuplot(gp, script):
    """Writes @script to @gp and runs gnuplot on it: None, or what went wrong."""
    with open(gp, "w") as f:
        f.write("\n".join(script) + "\n")
    try:
        res = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    except FileNotFoundError:
        return "gnuplot not found: no plots (install gnuplot-nox)"
    if res.returncode:
        return "gnuplot failed: " + res.stderr.strip().splitlines()[-1:][0] if res.stderr else "gnuplot failed"
    return None


def load_parallel(path):
    """parallel.csv (qtbench-par lines): one dict a figure."""
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r.get("mechanism")]


def parallel_report(prows, plot_dir, kernel):
    """The thread-scaling table and parallel.png; returns the printed lines."""
    series = {}
    for r in prows:
        key = (r["mechanism"] + ("/" + r["batch"] if r["batch"] else ""), r["fds"])
        series.setdefault(key, {})[(r["workload"], int(r["threads"]))] = r
    threads = sorted({int(r["threads"]) for r in prows})
    out = ["Parallel (N = %s timers shared among T threads, each on its own CPU;"
           " wall ns per timer over all threads, and the speed-up on one thread):"
           % prows[0]["n"]]
    head = "  %-22s %-7s" % ("mechanism", "fds")
    for w in ("startstop", "reset"):
        head += "".join(" %14s" % ("%s T=%d" % (w, t)) for t in threads)
    head += "".join(" %12s" % ("fire p99 T=%d" % t) for t in threads)
    out.append(head)
    goal = []
    for (mech, fds), figs in sorted(series.items(),
                                    key=lambda e: (MECH_ORDER.get(e[0][0].split("/")[0], 99), e[0][1])):
        line = "  %-22s %-7s" % (mech, fds)
        for w in ("startstop", "reset"):
            one = num(figs.get((w, 1), {}).get("ns_per_timer"))
            for t in threads:
                v = num(figs.get((w, t), {}).get("ns_per_timer"))
                cell = "-" if v is None else ("%.0f" % v) + (
                    " (%.2fx)" % (one / v) if one and t > 1 and v else "")
                line += " %14s" % cell
        for t in threads:
            v = num(figs.get(("fire", t), {}).get("late_p99_ns"))
            line += " %12s" % ("-" if v is None else "%.1f ms" % (v / 1e6))
        out.append(line)
        if fds == "shared" and mech.startswith("qtimer"):
            ss = {t: num(figs.get(("startstop", t), {}).get("ns_per_timer")) for t in threads}
            if ss.get(1) and ss.get(2):
                goal.append("  %s, one shared fd: 2 threads %.2fx one thread's throughput"
                            " (goal >= 1.6x): %s" % (mech, ss[1] / ss[2],
                                                     "PASS" if ss[1] / ss[2] >= 1.6 else "MISS"))
            if ss.get(2) and ss.get(4):
                goal.append("  %s, one shared fd: 4 threads %s than 2 (goal: no slower): %s"
                            % (mech, "slower" if ss[4] > ss[2] else "no slower",
                               "MISS" if ss[4] > ss[2] else "PASS"))
    if goal:
        out.append("Goals of the shared file (information only):")
        out += goal
    if plot_dir:
        data_dir = os.path.join(plot_dir, "plotdata-parallel")
        shutil.rmtree(data_dir, ignore_errors=True)
        os.makedirs(data_dir)
        script = ["set terminal pngcairo size 1600,600 font ',10'",
                  "set output '%s'" % os.path.join(plot_dir, "parallel.png"),
                  "set grid", "set key outside right top font ',8'",
                  'set xlabel "threads"', 'set ylabel "M timers / s"',
                  "set xtics (%s)" % ", ".join(str(t) for t in threads),
                  'set multiplot layout 1,2 title "throughput against threads on %s"' % kernel]
        for w in ("startstop", "reset"):
            plots = []
            for i, ((mech, fds), figs) in enumerate(sorted(series.items())):
                path = os.path.join(data_dir, "par_%s_%s_%s.dat" % (w, mech.replace("/", "_"), fds))
                with open(path, "w") as f:
                    for t in threads:
                        v = num(figs.get((w, t), {}).get("ns_per_timer"))
                        if v:
                            f.write("%d %r\n" % (t, 1e3 / v))
                plots.append("'%s' using 1:2 with linespoints lw 1.5 pt %d lc rgb '%s'"
                             " title '%s, %s fd' noenhanced"
                             % (path, 1 + i % 13, COLORS[i % len(COLORS)], mech,
                                "one" if fds == "shared" else "a"))
            script += ['set title "%s"' % w, "plot " + ", \\\n     ".join(plots)]
        script.append("unset multiplot")
        err = gnuplot(os.path.join(data_dir, "parallel.gp"), script)
        out.append(err or "Plot: %s" % os.path.join(plot_dir, "parallel.png"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--notes")
    ap.add_argument("--plot-dir")
    ap.add_argument("--parallel", help="parallel.csv: the qtbench-par lines")
    args = ap.parse_args()

    rows = load(args.csv)
    flags, notes = load_notes(args.notes)
    prows = load_parallel(args.parallel)
    if not rows:
        if prows:
            print("\n".join(parallel_report(prows, args.plot_dir, prows[0]["kernel"])))
            return 0
        print("no results in %s" % args.csv)
        return 1
    kernel = rows[0]["kernel"]
    idx = index(rows)
    print("Results (%s; ns/op is wall time per op; cpu/exp is the busy time of all CPUs"
          " per delivered expiry):" % kernel)
    print("\n".join(table(rows, flags)))
    print("PARTIAL: the phase ran out of its time budget (or of resources); its figures cover"
          " the ops done.\nlate-start: arming overran the start of the fire window.")
    print("\nCost growth 100k -> 1M (ns/op at 1M over ns/op at 100k; * = a partial run):")
    print("\n".join(growth(rows, idx, flags)))
    print("\nGoals (information only; speed never fails the build):")
    lines, verdicts = goals(rows, idx)
    print("\n".join(lines))
    print("  => %d PASS, %d MISS, %d n/a" % (verdicts["PASS"], verdicts["MISS"], verdicts["n/a"]))
    lines, verdicts = lazy_goals(rows, idx)
    print("\nThe timer table against libuv (issue 40; information only):")
    print("\n".join(lines))
    print("  => %d PASS, %d MISS, %d n/a" % (verdicts["PASS"], verdicts["MISS"], verdicts["n/a"]))
    print("\nScaling goals, delivery and growth (information only):")
    lines, verdicts = delivery_goals(rows, idx, flags)
    print("\n".join(lines))
    print("  => %d PASS, %d MISS, %d n/a" % (verdicts["PASS"], verdicts["MISS"], verdicts["n/a"]))
    loud = [n for n in notes if any(k in n for k in
                                    ("LOST", "EARLY", "TOO MANY", "CRASHED", "failed", "SKIP",
                                     "unexpected", "carry a scheduled", "partial", "skipped",
                                     "overran", "gave up"))]
    if loud:
        print("\nNotes that matter (all notes: %s):" % (args.notes or "-"))
        for n in loud:
            print("  " + n)
    if prows:
        print()
        print("\n".join(parallel_report(prows, args.plot_dir, kernel)))
    if args.plot_dir:
        err = plot(rows, args.plot_dir, kernel)
        if err:
            print("\n" + err)
        else:
            print("\nPlots: %s, %s" % (os.path.join(args.plot_dir, "ns_per_op.png"),
                                       os.path.join(args.plot_dir, "fire.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
