#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Row softmax on rows that end inside a 32-byte block, against NumPy, out of place and in place:
# each shape runs twice in one scenario, x -> y and x2 -> x2 (the same seeded input), on both
# presets (2 and 32 cores sharing the rows). Rows past half the UB (50257 f32, 128256 f16) take
# the three-pass softmax. Both results are saved as .npy; they must be equal
# bit for bit (in place, a row's write may not disturb the inputs of the rows after it), and
# within tolerance of NumPy's softmax of the same inputs (f64; f16 rounds each step on the
# vector unit, hence 4e-3 relative there).
#
# Usage: softmax-rows.py DVP   (needs python3-numpy)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
# dtype, rows, cols: 1000 classes in f16 (2000 B rows, units of 2), 10 (shorter than a block),
# 1 (one element), 1001 in f32, 37 f16 (74 B, units of 16).
SHAPES = [("f16", 37, 1000), ("f16", 203, 10), ("f16", 41, 1), ("f32", 70, 1001), ("f16", 100, 37),
          ("f32", 5, 50257), ("f16", 3, 128256), ("f16", 19, 70001), ("f32", 2, 32705)]
NP = {"f16": np.float16, "f32": np.float32}

SCENARIO = """
name: softmax-rows
platform: {{preset: {preset}}}
kernels:
  - name: out
    library: softmax
    shape: {{dtype: {dt}, rows: {rows}, cols: {cols}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{rows}, {cols}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{rows}, {cols}], save: y.npy}}
    args: [x, y]
  - name: inplace
    library: softmax
    shape: {{dtype: {dt}, rows: {rows}, cols: {cols}}}
    tensors:
      - {{name: x2, dtype: {dt}, shape: [{rows}, {cols}], file: x.npy, save: x2.npy}}
    args: [x2, x2]
run: {{trace: false}}
"""

failures = []
rng = np.random.default_rng(5)
with tempfile.TemporaryDirectory() as d:
    for dt, rows, cols in SHAPES:
        x = rng.uniform(-4, 4, (rows, cols)).astype(NP[dt])
        np.save(os.path.join(d, "x.npy"), x)
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
        # Relative, and absolute only at f16's subnormal step (a 128256-class row's values are
        # near 8e-6, under f16's least normal): a fixed atol would hide a wrong sum. f16: x - max
        # rounds to half a unit in the last place (2^-9 at |x - max| in [4, 8): 0.2% in its exp),
        # then exp, the sum and the division round.
        rtol, atol = (4e-3, 2.0**-24) if dt == "f16" else (1e-5, 1e-12)
        for preset in ("ascend310", "ascend910"):
            what = f"{dt} {rows} x {cols} on {preset}"
            path, out = os.path.join(d, "s.yaml"), os.path.join(d, "out")
            with open(path, "w") as f:
                f.write(SCENARIO.format(preset=preset, dt=dt, rows=rows, cols=cols))
            r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
                continue
            y, y2 = np.load(os.path.join(out, "y.npy")), np.load(os.path.join(out, "x2.npy"))
            if not np.array_equal(y.view(np.uint8), y2.view(np.uint8)):
                bad = np.argwhere(y.view(np.uint8).reshape(rows, -1) != y2.view(np.uint8).reshape(rows, -1))
                failures.append(f"{what}: in place differs from out of place, first at row {bad[0][0]}")
                continue
            err = np.abs(y.astype(np.float64) - want)
            over = err > atol + rtol * np.abs(want)
            if over.any():
                i = np.unravel_index(np.argmax(err - atol - rtol * np.abs(want)), want.shape)
                failures.append(f"{what}: {over.sum()} elements off NumPy's; worst {i}: {y[i]} vs {want[i]}")
                continue
            print("ok  ", what)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
