#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dvp plot: pictures of a study or of one run, as PNG and SVG (Debian's python3-matplotlib).

  dvp plot STUDY_DIR --y METRIC [--x KEY] [--hue KEY] [--kind line|bar|heatmap]
      a study's results.csv: METRIC against the parameter KEY (default: the study's first), one
      line or bar group per value of the --hue parameter (default: its second, if any); heatmap:
      KEY across, --hue down, METRIC as the colour. Points that failed are left out (named).
  dvp plot RUN_DIR --roofline   each kernel of a run (stats.json) on the platform's roofline
  dvp plot RUN_DIR --pipes      each AI Core's pipe utilisation, a bar per pipe
  dvp plot STUDY_DIR --tornado  a --sensitivity study's tornado: each parameter's low and high

Writes DIR/plots/NAME.png and NAME.svg and prints their paths. Run by dvp plot (which finds this
script in share/davinci-vp beside its bin/); it can be run by itself too.
"""
import argparse
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in the SVG (searchable, testable)
matplotlib.rcParams["svg.hashsalt"] = "dvp"  # the same ids in every run
import matplotlib.pyplot as plt  # noqa: E402

PIPES = ["scalar", "mte1", "mte2", "mte3", "cube", "vector", "fixp"]


def fail(msg):
    print(f"dvp plot: {msg}", file=sys.stderr)
    sys.exit(2)


def save(fig, folder, name):
    os.makedirs(os.path.join(folder, "plots"), exist_ok=True)
    paths = [os.path.join(folder, "plots", f"{name}.{ext}") for ext in ("png", "svg")]
    fig.tight_layout()
    for p in paths:
        fig.savefig(p, dpi=120, metadata={"Date": None} if p.endswith("svg") else {})
    plt.close(fig)
    print("\n".join(paths))


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def study_rows(folder, y):
    study = json.load(open(os.path.join(folder, "study.json")))
    with open(os.path.join(folder, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    if rows and y not in rows[0]:
        fail(f"{folder}/results.csv has no column {y}; it has: {', '.join(k for k in rows[0] if '.' in k)}")
    bad = [r["point"] for r in rows if r["status"] not in ("ok", "check_failed") or number(r[y]) is None]
    if bad:
        print(f"dvp plot: left out points {', '.join(bad)} (failed or without {y})", file=sys.stderr)
    if rows and len(bad) == len(rows):
        fail(f"no point of {folder} has a value of {y}: nothing to plot")
    return study, [r for r in rows if r["point"] not in bad]


def axis_values(rows, key):
    vals = sorted({r[key] for r in rows}, key=lambda v: (number(v) is None, number(v) or 0, v))
    return vals


def plot_study(a):
    study, rows = study_rows(a.dir, a.y)
    keys = study["keys"]
    x = a.x or (keys[0] if keys else fail("the study varies no parameter: give --x"))
    hue = a.hue if a.hue is not None else (next((k for k in keys if k != x), "") if len(keys) > 1 else "")
    for k in (x, hue):
        if k and rows and k not in rows[0]:
            fail(f"{a.dir}/results.csv has no column {k}")
    groups = axis_values(rows, hue) if hue else [""]
    xs = axis_values(rows, x)
    name = f"{a.y}-vs-{x}" + (f"-by-{hue}" if hue else "") + f"-{a.kind}"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    value = {}
    for r in rows:
        value.setdefault((r.get(hue, ""), r[x]), []).append(float(r[a.y]))
    mean = {k: sum(v) / len(v) for k, v in value.items()}  # points that share (hue, x): their mean
    if a.kind == "heatmap":
        if not hue:
            fail("a heatmap needs --hue (the rows)")
        grid = [[mean.get((g, v), math.nan) for v in xs] for g in groups]
        im = ax.imshow(grid, aspect="auto", origin="lower", cmap="viridis")
        ax.set_xticks(range(len(xs)), xs, rotation=30)
        ax.set_yticks(range(len(groups)), groups)
        ax.set_ylabel(hue)
        fig.colorbar(im, ax=ax, label=a.y)
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                if not math.isnan(v):  # dark text on the light end of the colour map
                    ax.text(j, i, f"{v:.4g}", ha="center", va="center", fontsize=8,
                            color="k" if im.norm(v) > 0.6 else "w")
    elif a.kind == "bar":
        width = 0.8 / len(groups)
        for gi, g in enumerate(groups):
            ax.bar([i + gi * width for i in range(len(xs))], [mean.get((g, v), 0) for v in xs], width,
                   label=f"{hue}={g}" if hue else None)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(xs))], xs)
        ax.set_ylabel(a.y)
    else:
        numeric = all(number(v) is not None for v in xs)
        for g in groups:
            pts = [(v, mean[(g, v)]) for v in xs if (g, v) in mean]
            px = [number(v) if numeric else xs.index(v) for v, _ in pts]
            ax.plot(px, [m for _, m in pts], marker="o", label=f"{hue}={g}" if hue else None)
        if not numeric:
            ax.set_xticks(range(len(xs)), xs)
        else:
            if len(xs) > 2 and min(map(number, xs)) > 0 and max(map(number, xs)) / min(map(number, xs)) >= 16:
                ax.set_xscale("log", base=2)
            if len(xs) <= 12:  # the values the study took, as it wrote them
                ax.set_xticks([number(v) for v in xs], xs)
                ax.minorticks_off()
        ax.set_ylabel(a.y)
    ax.set_xlabel(x)
    ax.set_title(f"{study.get('name', '')}: {a.y}")
    if hue and a.kind != "heatmap":
        ax.legend(fontsize=8)
    if a.kind != "heatmap":
        ax.grid(alpha=0.3)
    save(fig, a.dir, name.replace("/", "_"))


def plot_tornado(a):
    path = os.path.join(a.dir, "sensitivity.csv")
    if not os.path.exists(path):
        fail(f"{a.dir} has no sensitivity.csv (dvp sweep --sensitivity writes it)")
    with open(path) as f:
        bars = list(csv.DictReader(f))[::-1]  # the largest swing on top
    base = float(bars[0]["metric_base"]) if bars else fail("sensitivity.csv has no parameter")
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.5 * len(bars)))
    for i, b in enumerate(bars):
        lo, hi = (100 * (float(b[k]) - base) / base for k in ("metric_low", "metric_high"))
        ax.barh(i, lo, color="tab:blue", label="parameter / factor" if i == 0 else None)
        ax.barh(i, hi, color="tab:orange", label="parameter x factor" if i == 0 else None)
    ax.set_yticks(range(len(bars)), [f"{b['parameter']} ({b['low']} .. {b['high']})" for b in bars], fontsize=8)
    ax.axvline(0, color="k", lw=0.8)
    metric = bars[0].get("metric") or "the metric"
    ax.set_xlabel(f"change of {metric} from its base {base:.6g}, %")
    ax.set_title(f"sensitivity of {metric}: each parameter alone")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="x")
    save(fig, a.dir, "tornado")


def run_stats(folder):
    path = os.path.join(folder, "stats.json")
    if not os.path.exists(path):
        fail(f"{folder} has no stats.json (a run's folder, as dvp run --out writes it)")
    return json.load(open(path))


def plot_roofline(a):
    st = run_stats(a.dir)
    s = st["summary"]
    kernels = st.get("soc.launcher", {}).get("kernels", [])
    pts = [k for k in kernels if k.get("ops", 0) > 0 and k.get("min_dram_bytes", 0) > 0 and k["end_ns"] > k["start_ns"]]
    if not pts:
        fail(f"{a.dir}: no kernel with operations and DRAM bytes to place (stats.json soc.launcher.kernels)")
    fig, ax = plt.subplots(figsize=(7, 5))
    bw = s["dram_peak_GBps"] * 1e9
    for unit, peak in (("FLOP", s["peak_tflops"] * 1e12), ("OP", s.get("peak_tops_int8", 0) * 1e12)):
        ks = [k for k in pts if k.get("ops_unit") == unit]
        if not ks or not peak:
            continue
        oi = [k["ops"] / k["min_dram_bytes"] for k in ks]
        perf = [k["ops"] / ((k["end_ns"] - k["start_ns"]) * 1e-9) for k in ks]
        lo, hi = min(oi + [peak / bw]) / 4, max(oi + [peak / bw]) * 4
        xs = [lo * (hi / lo) ** (i / 100) for i in range(101)]
        ax.plot(xs, [min(peak, bw * x) for x in xs], "--", label=f"roofline: {peak / 1e12:g} T{unit}/s, "
                f"{bw / 1e9:.1f} GB/s")
        ax.scatter(oi, perf, label=f"kernels ({unit})", zorder=3)
        for k, x, y in zip(ks, oi, perf):
            if len(ks) <= 24:
                ax.annotate(k["name"], (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    others = [k["name"] for k in pts if k.get("ops_unit") not in ("FLOP", "OP")]
    if others:
        print(f"dvp plot: vector-op kernels not on the cube's roofline: {', '.join(others)}", file=sys.stderr)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("operations per DRAM byte (the kernel's minimum traffic)")
    ax.set_ylabel("operations per second achieved")
    ax.set_title(f"roofline of {os.path.basename(os.path.normpath(a.dir))}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    save(fig, a.dir, "roofline")


def plot_pipes(a):
    st = run_stats(a.dir)
    cores = sorted((k for k in st if k.startswith("soc.aicore.core")), key=lambda k: int(k.rsplit("core", 1)[1]))
    if not cores:
        fail(f"{a.dir}: no AI Core in stats.json")
    fig, ax = plt.subplots(figsize=(max(6, len(cores) * 0.9 + 3), 4.5))
    width = 0.8 / len(PIPES)
    for pi, p in enumerate(PIPES):
        ax.bar([i + pi * width for i in range(len(cores))], [100 * st[c].get(p + "_busy", 0) for c in cores], width,
               label=p.upper())
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cores))], [c.rsplit(".", 1)[1] for c in cores],
                  rotation=45 if len(cores) > 8 else 0)
    ax.set_ylabel("busy, % of simulated time")
    ax.set_ylim(0, 100)
    ax.set_title(f"AI Core pipes of {os.path.basename(os.path.normpath(a.dir))}")
    ax.legend(fontsize=7, ncol=len(PIPES))
    ax.grid(alpha=0.3, axis="y")
    save(fig, a.dir, "pipes")


def main():
    ap = argparse.ArgumentParser(prog="dvp plot", description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--x")
    ap.add_argument("--y")
    ap.add_argument("--hue")
    ap.add_argument("--kind", choices=["line", "bar", "heatmap"], default="line")
    ap.add_argument("--roofline", action="store_true")
    ap.add_argument("--pipes", action="store_true")
    ap.add_argument("--tornado", action="store_true")
    a = ap.parse_args()
    if not os.path.isdir(a.dir):
        fail(f"no folder {a.dir}")
    if a.roofline:
        plot_roofline(a)
    elif a.pipes:
        plot_pipes(a)
    elif a.tornado:
        plot_tornado(a)
    elif not a.y:
        fail("give --y METRIC (a column of results.csv), or --roofline / --pipes for a run")
    elif not os.path.exists(os.path.join(a.dir, "results.csv")):
        fail(f"{a.dir} has no results.csv (a study's folder; dvp collect writes it)")
    else:
        plot_study(a)


main()
