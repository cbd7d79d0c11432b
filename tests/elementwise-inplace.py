#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Element-wise kernels in place (z is x) on element counts that end inside a 32-byte block:
# the last block is recomputed from inputs that a tile's store may already have overwritten,
# unless the block that does the tail reads them first. Each case runs out of place (x -> z)
# and in place (x2 -> x2) in one scenario on both presets (2 and 32 cores): both results must
# be equal bit for bit, and equal NumPy's (fp16 / fp32 rounding of the same op; exp within
# 2 ulp-ish tolerance, the vector unit's own exp). n under one block (10 f16, 1 f32) too.
#
# Usage: elementwise-inplace.py DVP   (needs python3-numpy)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
# op, dtype, n: a tail only (n < a tile), whole tiles + whole blocks + a ragged block, f32.
# The last block reaching back into the last whole tile (another block's on 2 cores: 16384 f16
# and 8192 f32 elements a unary tile with a 256 KiB UB): 2 x 16384 + 5, 3 x 8192 + 3.
CASES = [("exp", "f16", 100), ("relu", "f16", 40003), ("add", "f16", 70001), ("mul", "f32", 33339),
         ("max", "f32", 17), ("exp", "f16", 32773), ("exp", "f32", 24579), ("add", "f16", 10), ("exp", "f32", 1)]
NP = {"f16": np.float16, "f32": np.float32}
REF = {"exp": lambda x, y: np.exp(x), "relu": lambda x, y: np.maximum(x, 0), "add": lambda x, y: x + y,
       "mul": lambda x, y: x * y, "max": np.maximum, "abs": lambda x, y: np.abs(x)}
BINARY = {"add", "mul", "max"}

SCENARIO = """
name: elementwise-inplace
platform: {{preset: {preset}}}
kernels:
  - name: out
    library: elementwise
    shape: {{op: {op}, dtype: {dt}, n: {n}}}
    tensors:
      - {{name: x, dtype: {dt}, elements: {n}, file: x.npy}}
{y}      - {{name: z, dtype: {dt}, elements: {n}, save: z.npy}}
    args: [x, {yarg}z]
  - name: inplace
    library: elementwise
    shape: {{op: {op}, dtype: {dt}, n: {n}}}
    tensors:
      - {{name: x2, dtype: {dt}, elements: {n}, file: x.npy, save: x2.npy}}
{y}    args: [x2, {yarg}x2]
run: {{trace: false}}
"""

failures = []
rng = np.random.default_rng(9)
with tempfile.TemporaryDirectory() as d:
    for op, dt, n in CASES:
        x = rng.uniform(-3, 3, n).astype(NP[dt])
        y = rng.uniform(-3, 3, n).astype(NP[dt])
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "y.npy"), y)
        want = REF[op](x.astype(np.float64), y.astype(np.float64))
        ytext = f"      - {{name: y, dtype: {dt}, elements: {n}, file: y.npy}}\n" if op in BINARY else ""
        for preset in ("ascend310", "ascend910"):
            what = f"{op} {dt} n = {n} on {preset}"
            path, out = os.path.join(d, "s.yaml"), os.path.join(d, "out")
            with open(path, "w") as f:
                f.write(SCENARIO.format(preset=preset, op=op, dt=dt, n=n, y=ytext,
                                        yarg="y, " if op in BINARY else ""))
            r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
                continue
            z, z2 = np.load(os.path.join(out, "z.npy")), np.load(os.path.join(out, "x2.npy"))
            if not np.array_equal(z.view(np.uint8), z2.view(np.uint8)):
                i = int(np.argmax(z != z2))
                failures.append(f"{what}: in place differs from out of place first at {i}: {z2[i]} vs {z[i]}")
                continue
            tol = 2e-3 if dt == "f16" else 1e-6
            bad = np.abs(z.astype(np.float64) - want) > tol * np.abs(want) + 1e-6
            if bad.any():
                i = int(np.argmax(bad))
                failures.append(f"{what}: {bad.sum()} elements off NumPy's; first at {i}: {z[i]} vs {want[i]}")
                continue
            print("ok  ", what)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
