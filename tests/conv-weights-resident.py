#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A conv keeps its weights in L1 from one tile to the next of the same column: ResNet-50's 1 x 1
# 64 -> 256 conv on a 56 x 56 map in 128 x 128 tiles on the 310's two cores (two tile columns,
# one per core). Each core must read its column's weights once, not once per tile: its GM reads
# are the bands of its tiles (whole input rows, worked out here from the shape), its bias rows
# (a tile's at a time), one column of weights, and a little more (the kernel's arguments and
# code), less than one further weights load. With the weights loaded per tile it read 24 more.
# Its values are checked against the reference.
# Then the same conv with 384 outputs (three columns, so a core's column changes from tile to
# tile; the map whole in L1): the values are checked against the reference.
# Then stage 2's 1 x 1 512 -> 128 conv on a 28 x 28 map: k takes 8 chunks of 64, more than L1's
# six buffers, so it takes chunks of 128 (gemm.cpp resident_with_wider_chunks) and keeps its
# weights too: one column, seven tile rows of 112 (784 rows: gemm_tiling cuts the rows to fit m),
# each core reading its rows' bands (every other tile) and the 128 KB of weights once. With
# chunks of 64 it read them once per tile.
#
# Usage: conv-weights-resident.py DVP OUT
import json
import os
import re
import subprocess
import sys

dvp, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
H = W = 56
C, MT, NT, CORES = 64, 128, 128, 2


def scenario(cout, check, bands, chunk=64, mt=128):
    text = f"""name: conv-weights-resident-{cout}
platform:
  preset: ascend310
kernels:
  - name: c
    library: conv2d
    shape: {{h: {H}, w: {W}, c: {C}, cout: {cout}, kh: 1, kw: 1, stride_h: 1, stride_w: 1, pad_t: 0, pad_b: 0,
             pad_l: 0, pad_r: 0, out: f16, out_layout: nc1hwc0, weights_layout: fractal_z, bias: true}}
    tensors:
      - {{name: x, dtype: f16, layout: nc1hwc0, shape: [1, {C}, {H}, {W}], init: random, seed: 1}}
      - {{name: w, dtype: f16, layout: fractal_z, shape: [{cout}, {C}, 1, 1], init: random, seed: 2, min: -0.1, max: 0.1}}
      - {{name: y, dtype: f16, layout: nc1hwc0, shape: [1, {cout}, {H}, {W}]}}
      - {{name: bias, dtype: f32, shape: [{cout}], init: random, seed: 3}}
    args: [x, w, y, bias]
"""
    if check:
        text += "    check: {op: conv2d, inputs: [x, w, bias], output: y, atol: 2e-3, rtol: 2e-3}\n"
    path = os.path.join(out, f"conv-{cout}.yaml")
    with open(path, "w") as f:
        f.write(text)
    run_out = os.path.join(out, f"run-{cout}")
    r = subprocess.run([dvp, "run", path, "--quiet", "--no-trace", "--out", run_out], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{path}: exit {r.returncode}: {r.stderr}")
    summary = open(os.path.join(run_out, "summary.txt")).read()
    m = re.search(r"kernel c .* (\d+) x (\d+) tiles, k in chunks of (\d+).*(bands of up to|in L1)", summary)
    if not m or (int(m[1]), int(m[2]), int(m[3])) != (mt, NT, chunk) or (m[4] != "in L1") != bands:
        sys.exit(f"the conv's tiling changed (expected {mt} x {NT} tiles, k in chunks of {chunk}"
                 f"{', in bands' if bands else ''}): update this test\n{summary}")
    return json.load(open(os.path.join(run_out, "stats.json")))


failures = []


def check_reads(stats, cout, mt=MT):
    # Tiles go round-robin over the cores, row by row: tile t (row t // columns) to core t % CORES.
    tiles_m, columns = (H * W + mt - 1) // mt, cout // NT
    weights = C * NT * 2  # one column's
    for core in range(CORES):
        rows = [t // columns for t in range(tiles_m * columns) if t % CORES == core]
        band_bytes = 0  # the bands of its tiles: whole input rows
        for r in rows:
            first, last = r * mt // W, (min(H * W, (r + 1) * mt) - 1) // W
            band_bytes += (last - first + 1) * W * C * 2
        bias_bytes = len(rows) * NT * 4
        read = stats[f"soc.aicore.core{core}"]["gm_bytes_read"]
        rest = read - band_bytes - bias_bytes
        print(f"{C} -> {cout}, core {core}: {read} B read: bands {band_bytes}, bias {bias_bytes}, the rest {rest} "
              f"(one column of weights is {weights})")
        if not weights <= rest < 2 * weights:
            failures.append(f"{C} -> {cout}, core {core}: {rest} B besides the bands and bias rows, not one column's "
                            f"weights ({weights} B) and under {weights} B more")


check_reads(scenario(256, True, True), 256)  # values checked too: the path that keeps the weights
scenario(384, True, False)  # three columns: the weights change from tile to tile, values checked
H = W = 28
C = 512
check_reads(scenario(128, True, True, chunk=128, mt=112), 128, mt=112)  # chunks of 128 keep them; values checked
if failures:
    sys.exit("\n".join(failures))
print("ok")
