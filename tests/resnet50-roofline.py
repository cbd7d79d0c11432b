#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Issue 8's efficiency figures as a test, measured as scripts/bench-layers measures them (each
# layer of scenarios/layers/ run on its own, written by the folder's generate.py): every
# ResNet-50 convolution runs at 50% of its roofline bound or more on ascend310, and no layer
# (conv, pool, FC) on either preset beats its bound with its output left out of the DRAM's bytes:
# the L2 is write-back, and an output it holds (the 1.6 MB of a stage-1 conv's, in 8 MiB) goes to
# DRAM only when evicted, after the kernel; its inputs, cold, must come from DRAM within it.
# Timing-only runs (their times are the functional runs' own: scenario.same_time).
#
# Usage: resnet50-roofline.py DVP LAYERS_DIR OUT_DIR
import json
import math
import os
import re
import subprocess
import sys

DVP, LAYERS, OUT = sys.argv[1:4]
sys.path.insert(0, LAYERS)
import generate  # noqa: E402  (the layer scenarios' own generator: one source for shapes and seeds)

os.makedirs(OUT, exist_ok=True)
if not os.path.exists(os.path.join(OUT, "fc-input.npy")):  # the FC's shipped input, found beside the file
    os.symlink(os.path.abspath(os.path.join(LAYERS, "fc-input.npy")), os.path.join(OUT, "fc-input.npy"))
failures = []
for stage, what, kernels in generate.stages():
    for name, kernel in kernels:
        path = os.path.join(OUT, f"{name}.yaml")
        with open(path, "w") as f:
            f.write(generate.scenario(stage, what, [(name, kernel)]))
        for preset in ("ascend310", "ascend910"):
            out = os.path.join(OUT, f"{name}-{preset}")
            r = subprocess.run([DVP, "run", path, "--preset", preset, "--timing-only", "--no-trace", "--quiet",
                                "--out", out], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{name} on {preset}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
                continue
            stats = json.load(open(os.path.join(out, "stats.json")))
            k = stats["soc.launcher"]["kernels"][0]
            f = k["roofline_fraction"]
            print(f"{preset:10} {name:22} {100 * f:6.1f}% of its roofline bound ({k['bound']})")
            # The bound without the output's bytes (y: the last 2-byte tensor's shape, f16).
            y = re.search(r"name: y, dtype: f16,(?: layout: nc1hwc0,)? shape: \[([0-9, ]+)\]", kernel)
            out_bytes = 2 * math.prod(int(d) for d in y.group(1).split(","))
            peak = stats["summary"]["dram_peak_GBps"] * 1e-3  # bytes per ps
            read_ns = (k["min_dram_bytes"] - out_bytes) / peak / 1e3
            compute_ns = k["roofline_ns"] if k["bound"] == "compute" else 0
            took_ns = k["roofline_ns"] / f
            if took_ns < max(read_ns, compute_ns) * (1 - 1e-9):
                failures.append(f"{name} on {preset}: {took_ns:.0f} ns, under its bound of {max(read_ns, compute_ns):.0f}"
                                " ns (its inputs at the DRAM's peak, or its compute)")
            if "library: conv2d" in kernel and preset == "ascend310" and f < 0.50:
                failures.append(f"{name} on ascend310: {100 * f:.1f}% of its roofline bound (under 50%)")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
