#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A bare-mode kernel's memory is written into DRAM at its start, over whatever was there. Here
# traffic generators scribble over the second kernel's memory (found with `dvp map`) while the
# first kernel runs: over a part of y at the start, which the first kernel's stream (twice the
# L2's size) evicts, so it is written back to DRAM; over another part of y, and over its image's
# and argument table's pages, near the first kernel's end, so their lines stay dirty in the L2.
# The second kernel computes z = x + y and must see its memory as its scenario sets it up:
# - y of zeros: saved y is all zero and z equals x (place() clears the tensor where it is, and the
#   L2's lines of it are dropped);
# - y random: saved y equals y of the same run without the scribblers, and z equals NumPy's x + y;
# - its code and arguments: it runs (a scribbled image or argument table faults it);
# - a timing-only run takes the functional run's simulated time (the lines go in both).
# The kernel's own check cannot tell: its reference reads y back through the L2, as the kernel did.
# The premise is checked too: with y from a file (which set-up writes at load, not at the kernel's
# start) both scribbles show in y; only the late ones were dropped from the L2, dirty.
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
LINE = {"ascend310": 128, "ascend910": 256}  # and l2.line_bytes

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


def placed(path):
    # `dvp map`'s kernel memory: "  0xBASE 0xEND what contents"
    at = {}
    for line in dvp("map", path).splitlines():
        m = re.match(r"\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(second[ .]\w+)\s", line)
        if m:
            at[m.group(3)] = (int(m.group(1), 16), int(m.group(2), 16) + 1)
    return at


def run(d, path, *opts):
    out = path[:-5] + "".join(opts)
    dvp("run", path, "--quiet", "--out", out, *opts)
    with open(os.path.join(out, "stats.json")) as f:
        stats = json.load(f)
    kernels = {k["name"]: k for k in stats["soc.launcher"]["kernels"]}
    tensors = {} if opts else {n: np.load(os.path.join(out, n + ".npy")) for n in ("x", "y", "z")}
    return stats, kernels, tensors


def check(what, ok):
    if not ok:
        failures.append(what)
    print(f"{'ok  ' if ok else 'FAIL'} {what}")


def l2_sum(stats, counter):
    return sum(v[counter] for k, v in stats.items() if k.startswith("soc.l2.hn"))


def scribbled(d, preset, y_init, at, late):
    """The scenario with its scribblers (names, first byte, bytes, start), and their premise."""
    quarter = (at["second.y"][1] - at["second.y"][0]) // 4 // 4096 * 4096
    y0 = at["second.y"][0]
    groups = (("early", y0 + quarter, SCRIBBLE, 0), ("late", y0 + 2 * quarter, SCRIBBLE, late),
              ("code", at["second image"][0], 4096, late), ("args", at["second arguments"][0], 4096, late))
    traffic = "".join(TRAFFIC.format(name=n, base=b, bytes=size, count=size // 4096, start=t)
                      for n, b, size, t in groups)
    return write(d, "scribbled", preset, y_init, traffic), groups


with tempfile.TemporaryDirectory() as d:
    for preset in ("ascend310", "ascend910"):
        for y_init in ("init: zeros", "init: random, seed: 5, min: -2, max: 2", "file: y.npy"):
            case = f"{preset}, y {y_init.split(',')[0].split(': ')[1]}"
            clean = write(d, "clean", preset, y_init, "")
            if "file" in y_init:  # the random y of the run before, as a file
                np.save(os.path.join(d, "y.npy"), t0["y"])
            _, k0, t0 = run(d, clean)
            path, groups = scribbled(d, preset, y_init, placed(clean), int(k0["first"]["end_ns"] * 0.9))
            stats, k, t = run(d, path)
            for n, _, size, start in groups:
                req = stats[f"soc.requesters.{n}0"]
                done_ns = start + req["bytes_written"] / req["achieved_GBps"]
                check(f"{case}: the {n} scribble ({req['bytes_written']} B) ends at {done_ns:.0f} ns, before the "
                      f"second kernel starts at {k['second']['start_ns']:.0f} ns",
                      req["bytes_written"] == size and done_ns < k["second"]["start_ns"])
            dirty, late_lines = l2_sum(stats, "invalidated_dirty"), sum(g[2] for g in groups[1:]) // LINE[preset]
            if "file" in y_init:
                # Set-up does not write a file's tensor at the kernel's start: both scribbles show in y.
                diff = np.flatnonzero(t["y"].view(np.uint16) != t0["y"].view(np.uint16)) * 2
                at_y = groups[0][1] - placed(clean)["second.y"][0]  # the early scribble's offset; the late's is twice
                check(f"{case}: y shows the early and the late scribble ({diff.size} elements differ)",
                      np.any((diff >= at_y) & (diff < at_y + SCRIBBLE)) and
                      np.any((diff >= at_y * 2) & (diff < at_y * 2 + SCRIBBLE)))
                check(f"{case}: set-up dropped {dirty} dirty lines: of the code and arguments' "
                      f"({2 * 4096 // LINE[preset]}) only", 0 < dirty <= 2 * 4096 // LINE[preset])
                continue
            # The early scribble's lines were written back (not in the L2 at the second's start); the
            # late ones were there, dirty.
            check(f"{case}: set-up dropped {dirty} dirty lines: the late scribbles' ({late_lines}) at most",
                  0 < dirty <= late_lines)
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
                timing, _, _ = run(d, path, "--timing-only")
                check(f"{case}: timing-only takes the same simulated time "
                      f"({timing['summary']['simulated_ns']} ns, functional {stats['summary']['simulated_ns']})",
                      timing["summary"]["simulated_ns"] == stats["summary"]["simulated_ns"])

if failures:
    sys.exit(f"{len(failures)} failed")
