#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A bare-mode kernel's tensors are written into DRAM at its start, over whatever was there: here a
# traffic generator scribbles over two parts of the second kernel's y (found with `dvp map`) while
# the first kernel runs: one at the start, which the first kernel's stream (twice the L2's size)
# evicts, so it is written back to DRAM; one near its end, whose lines stay dirty in the L2. The
# second kernel computes
# z = x + y and must see y as its scenario sets it up, not the scribble:
# - y of zeros: saved y is all zero and z equals x (place() clears the tensor where it is, and the
#   L2's lines of it are dropped);
# - y random: saved y equals y of the same run without the scribbler, and z equals NumPy's x + y.
# The kernel's own check cannot tell: its reference reads y back through the L2, as the kernel did.
# Both presets (their L2 lines are 128 and 256 bytes).
#
# Usage: place-over-written.py DVP   (needs python3-numpy)
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
N = 1 << 21  # elements of the second kernel's tensors (4 MiB each)
SCRIBBLE = 128 << 10  # bytes the traffic generator writes
L2_BYTES = {"ascend310": 8 << 20, "ascend910": 32 << 20}  # the presets' l2.size_kib

SCENARIO = """
name: place-over-written
platform: {{preset: {preset}}}
{traffic}kernels:
  - name: first
    library: elementwise
    shape: {{op: exp, dtype: f16, n: {n1}}}
    tensors:
      - {{name: x, dtype: f16, elements: {n1}, init: random, seed: 3}}
      - {{name: z, dtype: f16, elements: {n1}}}
    args: [x, z]
  - name: second
    library: elementwise
    shape: {{op: add, dtype: f16, n: {n}}}
    tensors:
      - {{name: x, dtype: f16, elements: {n}, init: random, seed: 1, save: x.npy}}
      - {{name: y, dtype: f16, elements: {n}, {y_init}, save: y.npy}}
      - {{name: z, dtype: f16, elements: {n}, save: z.npy}}
    args: [x, y, z]
    check: {{op: add, inputs: [x, y], output: z}}
run: {{trace: false}}
"""

TRAFFIC = """
  - name: {name}
    pattern: sequential
    access_bytes: 4096
    region_base: {base}
    region_bytes: {bytes}
    count: {count}
    read_fraction: 0
    start_ns: {start}
"""

failures = []


def dvp(*args):
    r = subprocess.run([DVP, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"dvp {' '.join(args)}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r.stdout


def write(d, name, preset, y_init, traffic):
    path = os.path.join(d, name + ".yaml")
    with open(path, "w") as f:
        f.write(SCENARIO.format(preset=preset, traffic="traffic:" + traffic if traffic else "", n=N,
                                n1=L2_BYTES[preset] // 2, y_init=y_init))
    return path


def y_range(path):
    # `dvp map`'s kernel memory: "  0xBASE 0xEND second.y ..."
    for line in dvp("map", path).splitlines():
        m = re.match(r"\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+second\.y\s", line)
        if m:
            return int(m.group(1), 16), int(m.group(2), 16) + 1
    sys.exit("dvp map does not list second.y")


def run(d, path):
    out = path[:-5]
    dvp("run", path, "--quiet", "--out", out)
    with open(os.path.join(out, "stats.json")) as f:
        stats = json.load(f)
    kernels = {k["name"]: k for k in stats["soc.launcher"]["kernels"]}
    return stats, kernels, {n: np.load(os.path.join(out, n + ".npy")) for n in ("x", "y", "z")}


def check(what, ok):
    if not ok:
        failures.append(what)
    print(f"{'ok  ' if ok else 'FAIL'} {what}")


with tempfile.TemporaryDirectory() as d:
    for preset in ("ascend310", "ascend910"):
        for y_init in ("init: zeros", "init: random, seed: 5, min: -2, max: 2"):
            case = f"{preset}, y {y_init.split(',')[0][6:]}"
            clean = write(d, "clean", preset, y_init, "")
            _, k0, t0 = run(d, clean)
            y_lo, y_hi = y_range(clean)
            quarter = (y_hi - y_lo) // 4 // 4096 * 4096
            late = int(k0["first"]["end_ns"] * 0.9)
            traffic = "".join(TRAFFIC.format(name=n, base=y_lo + at, bytes=SCRIBBLE, count=SCRIBBLE // 4096, start=t)
                              for n, at, t in (("early", quarter, 0), ("late", 2 * quarter, late)))
            stats, k, t = run(d, write(d, "scribbled", preset, y_init, traffic))
            # The premise: both scribbles wrote inside y, and were done before the second kernel started.
            for n, start in (("early", 0), ("late", late)):
                req = stats[f"soc.requesters.{n}0"]
                done_ns = start + req["bytes_written"] / req["achieved_GBps"]
                check(f"{case}: the {n} scribble ({req['bytes_written']} B) ends at {done_ns:.0f} ns, before the "
                      f"second kernel starts at {k['second']['start_ns']:.0f} ns",
                      req["bytes_written"] == SCRIBBLE and done_ns < k["second"]["start_ns"])
            check(f"{case}: the kernel's own check passes", k["second"]["passed"])
            x, y, z = (t[n].astype(np.float64) for n in ("x", "y", "z"))
            if "zeros" in y_init:
                check(f"{case}: y is all zero ({np.count_nonzero(y)} nonzero)", not np.any(y))
                check(f"{case}: z equals x", np.array_equal(z, x))
            else:
                check(f"{case}: y is as set up (as without the scribblers; "
                      f"{np.count_nonzero(t['y'].view(np.uint16) != t0['y'].view(np.uint16))} differ)",
                      np.array_equal(t["y"].view(np.uint16), t0["y"].view(np.uint16)))
                want = (t0["x"] + t0["y"]).astype(np.float64)  # f16 + f16, rounded once to f16
                check(f"{case}: z equals NumPy's x + y", np.array_equal(z, want))

if failures:
    sys.exit(f"{len(failures)} failed")
