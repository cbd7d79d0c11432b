#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A bare-mode kernel's memory is written into DRAM at its start, over whatever was there. Here
# traffic generators scribble over the second kernel's memory (found with `dvp map`) while the
# first kernel runs: over a quarter of y at the start, which the first kernel's stream (twice the
# L2's size) evicts, so it is written back to DRAM; over another part of y, and over its image's
# and argument table's pages, near the first kernel's end, so their lines stay dirty in the L2.
# The second kernel computes z = x + y and must see its memory as its scenario sets it up:
# - y of zeros: saved y is all zero and z equals x (place() clears the tensor where it is, and the
#   L2's lines of it are dropped);
# - y random: saved y equals y of the same run without the scribblers, and z equals NumPy's x + y;
# - its code and arguments: it runs (a scribbled image or argument table faults it);
# - a timing-only run takes the functional run's simulated time and drops the same lines.
# The kernel's own check cannot tell: its reference reads y back through the L2, as the kernel did.
# The premise is checked too: the scribbles end before the second kernel starts; the late one on
# y is among the dirty lines set-up drops; with y from a file (which set-up writes at load, not at
# the kernel's start) both scribbles show in y, and only the image's and arguments' lines drop.
# Both presets (4 and 16 L2 slices, lines of 128 and 256 bytes); the second kernel large (its
# lines found by a scan of each slice's tags) and small (each line looked up in its slice).
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
L2_BYTES = {"ascend310": 8 << 20, "ascend910": 32 << 20}  # the presets' l2.size_kib
LINE = {"ascend310": 128, "ascend910": 256}  # and l2.line_bytes
RANDOM = "init: random, seed: 5, min: -2, max: 2"
# case, y's set-up, the second kernel's elements, bytes of each scribble on y
CASES = [("zeros", "init: zeros", 1 << 21, 128 << 10), ("random", RANDOM, 1 << 21, 128 << 10),
         ("file", "file: y.npy", 1 << 21, 128 << 10), ("zeros, small", "init: zeros", 16384, 8 << 10)]

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


def write(d, name, preset, y_init, n, traffic=""):
    path = os.path.join(d, name + ".yaml")
    with open(path, "w") as f:
        f.write(SCENARIO.format(preset=preset, traffic="traffic:" + traffic if traffic else "", n=n,
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


def run(path, *opts):
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


def lines(lo_hi, line):
    return ((lo_hi[1] - 1) // line) - (lo_hi[0] // line) + 1


def scribblers(at, size, late):
    """(name, first byte, bytes, start ns) of each: early and late on y, late on code and args."""
    y0, quarter = at["second.y"][0], (at["second.y"][1] - at["second.y"][0]) // 4 // 4096 * 4096
    return (("early", y0 + quarter, size, 0), ("late", y0 + 2 * quarter, size, late),
            ("code", at["second image"][0], 4096, late), ("args", at["second arguments"][0], 4096, late))


def premise(case, stats, k, groups):
    # A requester issues its first write at its start_ns: its bytes over its achieved rate (from
    # the first issue to the last completion) end where it ends.
    for n, _, size, start in groups:
        req = stats[f"soc.requesters.{n}0"]
        done_ns = start + req["bytes_written"] / req["achieved_GBps"]
        check(f"{case}: the {n} scribble ({req['bytes_written']} B) ends at {done_ns:.0f} ns, before the "
              f"second kernel starts at {k['second']['start_ns']:.0f} ns",
              req["bytes_written"] == size and done_ns < k["second"]["start_ns"])


with tempfile.TemporaryDirectory() as d:
    for preset in ("ascend310", "ascend910"):
        y_random = None
        for name, y_init, n, size in CASES:
            case = f"{preset}, y {name}"
            if name == "file":  # the random case's y, as a file
                np.save(os.path.join(d, "y.npy"), y_random)
            clean = write(d, "clean", preset, y_init, n)
            _, k0, t0 = run(clean)
            at = placed(clean)
            groups = scribblers(at, size, int(k0["first"]["end_ns"] * 0.9))
            traffic = "".join(TRAFFIC.format(name=g, base=b, bytes=s, count=s // 4096, start=t) for g, b, s, t in groups)
            path = write(d, "scribbled", preset, y_init, n, traffic)
            stats, k, t = run(path)
            premise(case, stats, k, groups)
            dirty, line = l2_sum(stats, "invalidated_dirty"), LINE[preset]
            code_args = lines(at["second image"], line) + lines(at["second arguments"], line)
            if name == "file":
                # Set-up does not write a file's tensor at the kernel's start: both scribbles show in y.
                diff = np.flatnonzero(t["y"].view(np.uint16) != t0["y"].view(np.uint16)) * 2
                early, late = groups[0][1] - at["second.y"][0], groups[1][1] - at["second.y"][0]
                check(f"{case}: y shows the early and the late scribble ({diff.size} elements differ)",
                      np.any((diff >= early) & (diff < early + size)) and np.any((diff >= late) & (diff < late + size)))
                check(f"{case}: set-up dropped {dirty} dirty lines: the image's and arguments' ({code_args}) only",
                      0 < dirty <= code_args)
                continue
            check(f"{case}: set-up dropped {dirty} dirty lines: the image's and arguments' ({code_args}) and "
                  f"some of the late scribble's on y ({size // line}), none of the early one's",
                  code_args < dirty <= code_args + size // line)
            check(f"{case}: the kernel's own check passes", k["second"]["passed"])
            x, y, z = (t[v].astype(np.float64) for v in ("x", "y", "z"))
            if name.startswith("zeros"):
                check(f"{case}: y is all zero ({np.count_nonzero(y)} nonzero)", not np.any(y))
                check(f"{case}: z equals x", np.array_equal(z, x))
                continue
            y_random = t0["y"]
            check(f"{case}: y is as set up (as without the scribblers; "
                  f"{np.count_nonzero(t['y'].view(np.uint16) != t0['y'].view(np.uint16))} differ)",
                  np.array_equal(t["y"].view(np.uint16), t0["y"].view(np.uint16)))
            want = (t0["x"] + t0["y"]).astype(np.float64)  # f16 + f16, rounded once to f16
            check(f"{case}: z equals NumPy's x + y", np.array_equal(z, want))
            timing, _, _ = run(path, "--timing-only")
            same = [timing["summary"]["simulated_ns"] == stats["summary"]["simulated_ns"]] + \
                [l2_sum(timing, c) == l2_sum(stats, c) for c in ("invalidated", "invalidated_dirty")]
            check(f"{case}: timing-only takes the same simulated time ({timing['summary']['simulated_ns']} ns) and "
                  f"drops the same lines", all(same))

if failures:
    sys.exit(f"{len(failures)} failed")
