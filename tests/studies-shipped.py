#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The shipped studies (scenarios/studies/): each runs with `dvp sweep --jobs 2`, every point ends
# ok (or failed a check of its scenario, which its description names), results.csv has a row per
# point, its plots are drawn, and the shape its description states holds.
# Usage: studies-shipped.py DVP STUDIES OUT
import csv
import os
import shutil
import subprocess
import sys

DVP, STUDIES, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(cond, what):
    print("ok  " if cond else "FAIL", what)
    if not cond:
        failures.append(what)


def table(name):
    out = os.path.join(OUT, name)
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([DVP, "sweep", os.path.join(STUDIES, name + ".yaml"), "--jobs", "2", "--out", out, "--quiet"],
                       capture_output=True, text=True)
    rows = list(csv.DictReader(open(os.path.join(out, "results.csv")))) if r.returncode == 0 else []
    plots = sorted(f for f in os.listdir(os.path.join(out, "plots")) if f.endswith(".png")) \
        if os.path.isdir(os.path.join(out, "plots")) else []
    check(r.returncode == 0 and rows and all(x["status"] in ("ok", "check_failed") for x in rows) and plots,
          f"{name}: exit {r.returncode}, {len(rows)} points, plots {plots} {r.stderr[-400:]}")
    return rows


def value(rows, metric, pairs):
    for x in rows:
        if all(x[k] == str(v) for k, v in pairs):
            return float(x[metric])
    raise KeyError(pairs)


T = "summary.simulated_ns"
rows = table("l2-x-scheduler")
if rows:
    L2, S = "platform.l2.size_kib", "platform.dram.scheduler"
    hit = {(k, s): value(rows, "summary.l2_hit_rate", [(L2, k), (S, s)]) for k in (8192, 32768) for s in ("fcfs",)}
    t8, t32 = value(rows, T, [(L2, 8192), (S, "fcfs")]), value(rows, T, [(L2, 32768), (S, "fcfs")])
    gap = max(abs(value(rows, T, [(L2, k), (S, "fcfs")]) / value(rows, T, [(L2, k), (S, "frfcfs")]) - 1)
              for k in (2048, 8192, 32768, 131072))
    check(hit[(8192, "fcfs")] < 0.02 and hit[(32768, "fcfs")] > 0.2 and t32 < 0.7 * t8 and gap < 0.01,
          f"l2-x-scheduler: hit rate {hit}, time 8 MiB {t8:.0f} -> 32 MiB {t32:.0f} ns, scheduler gap {gap:.4f}")

rows = table("cores-x-l2-gemm")
if rows:
    C, L2 = "platform.aicore.cores", "platform.l2.size_kib"
    t = {c: value(rows, T, [(C, c), (L2, 32768)]) for c in (4, 8, 16, 32)}
    d8, d32 = (value(rows, "summary.dram_bytes_read", [(C, 16), (L2, k)]) for k in (8192, 32768))
    check(all(0.45 < t[2 * c] / t[c] < 0.6 for c in (4, 8, 16)) and d32 < 0.5 * d8,
          f"cores-x-l2-gemm: time per core count {t}, DRAM bytes at 16 cores {d8:.0f} (8 MiB) {d32:.0f} (32 MiB)")

rows = table("mte2-x-l1-conv")
if rows:
    R, L1 = "platform.aicore.gm_read_bytes_per_cycle", "platform.aicore.l1_kib"
    t = {r: value(rows, T, [(R, r), (L1, 1024)]) for r in (16, 32, 64, 128)}
    small = all(value(rows, T, [(R, r), (L1, 64)]) > value(rows, T, [(R, r), (L1, 1024)]) for r in (16, 64, 128))
    check(t[16] > t[32] > t[64] and abs(t[128] / t[64] - 1) < 0.05 and small,
          f"mte2-x-l1-conv: time per MTE2 rate at 1 MiB L1 {t}; 64 KiB of L1 slower at each rate: {small}")

rows = table("ring-x-dram-910")
if rows:
    W, D = "platform.ring.link_bytes_per_cycle", "platform.dram.type"
    lp = [value(rows, T, [(W, w), (D, "lpddr4")]) for w in (32, 64, 128, 256)]
    hb = [value(rows, T, [(W, w), (D, "hbm2")]) for w in (32, 64, 128, 256)]
    check(max(lp) / min(lp) < 1.02 and 1.8 < hb[0] / hb[1] < 2.2 and 1.8 < hb[1] / hb[2] < 2.2 and hb[3] < lp[0],
          f"ring-x-dram-910: LPDDR4 {lp}, HBM2 {hb}")

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("every shipped study ran and has the shape its description states")
