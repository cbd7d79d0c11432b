#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The kernel library's pieces of a transformer's attention block against NumPy on both presets:
# layernorm, softmax with a scale (an attention's 1 / sqrt(d)) and transpose (2 and 32 cores sharing the rows): rows of a transformer's widths (64,
# 384, 768, 1024 f16; 8, 1000 and 4096 f32), a tail under a mask (400 f16: 3 repeats and 16
# elements), and rows of more than 255 repeats (40000 f32 and 40000 f16, on a what-if UB of 1 MiB:
# 256 KiB holds no row of 256 repeats four times; the ops and reductions go chunk by chunk).
# Inputs are NumPy's own, with a mean far from 0 and gamma / beta of any sign, so a kernel that
# skipped the mean, the variance, gamma or beta is off by far more than the tolerance. The
# layernorm is also run in place (x -> x): it must give the same bytes.
#
# transpose: the heads of BERT-base (128 tokens x 12 heads x 64 to 12 x 128 x 64) and back, a
# batch of two, f32 and s8 runs of one block, and more rows than half the UB holds (pieces, the
# last one short). Its result must equal NumPy's bit for bit.
#
# Usage: attention-numpy.py DVP   (needs python3-numpy)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
NP = {"f16": np.float16, "f32": np.float32}
LAYERNORM = [("f16", 6, 64), ("f16", 50, 384), ("f16", 9, 768), ("f16", 33, 1024), ("f16", 7, 400),
             ("f32", 5, 8), ("f32", 17, 1000), ("f32", 3, 4096), ("f32", 2, 40000, 1024), ("f16", 3, 40000, 1024)]
TRANSPOSE = [("f16", 1, 128, 12, 64), ("f16", 2, 12, 128, 64), ("f32", 3, 7, 5, 8), ("s8", 1, 9, 33, 32),
             ("f16", 1, 3000, 3, 64)]
SOFTMAX = [("f16", 40, 128, 0.125), ("f32", 12, 197, 1 / np.sqrt(96)), ("f16", 3, 70001, 0.3)]

LN_SCENARIO = """
name: layernorm
platform: {{preset: {preset}}}
kernels:
  - name: ln
    library: layernorm
    shape: {{dtype: {dt}, rows: {rows}, cols: {cols}, epsilon: {eps}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{rows}, {cols}], file: x.npy}}
      - {{name: gamma, dtype: {dt}, shape: [{cols}], file: g.npy}}
      - {{name: beta, dtype: {dt}, shape: [{cols}], file: b.npy}}
      - {{name: y, dtype: {dt}, shape: [{rows}, {cols}], save: y.npy}}
    args: [x, gamma, beta, y]
  - name: inplace
    library: layernorm
    shape: {{dtype: {dt}, rows: {rows}, cols: {cols}, epsilon: {eps}}}
    tensors:
      - {{name: x2, dtype: {dt}, shape: [{rows}, {cols}], file: x.npy, save: x2.npy}}
      - {{name: gamma, dtype: {dt}, alias: ln.gamma}}
      - {{name: beta, dtype: {dt}, alias: ln.beta}}
    args: [x2, gamma, beta, x2]
run: {{trace: false}}
"""
SM_SCENARIO = """
name: softmax-scale
platform: {{preset: {preset}}}
kernels:
  - name: sm
    library: softmax
    shape: {{dtype: {dt}, rows: {rows}, cols: {cols}, scale: {scale}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{rows}, {cols}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{rows}, {cols}], save: y.npy}}
    args: [x, y]
run: {{trace: false}}
"""

TR_SCENARIO = """
name: transpose
platform: {{preset: {preset}}}
kernels:
  - name: tr
    library: transpose
    shape: {{dtype: {dt}, outer: {outer}, rows: {rows}, cols: {cols}, inner: {inner}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{outer}, {rows}, {cols}, {inner}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{outer}, {cols}, {rows}, {inner}], save: y.npy}}
    args: [x, y]
run: {{trace: false}}
"""
NP["s8"] = np.int8

failures = []
rng = np.random.default_rng(11)


def run(d, text, what, ub_kib=None):
    path, out = os.path.join(d, "s.yaml"), os.path.join(d, "out")
    with open(path, "w") as f:
        f.write(text)
    cmd = [DVP, "run", path, "--quiet", "--out", out]
    if ub_kib:
        cmd += ["--set", f"platform.aicore.ub_kib={ub_kib}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
        return None
    return out


def compare(what, got, want, rtol, atol):
    err = np.abs(got.astype(np.float64) - want)
    over = ~(err <= atol + rtol * np.abs(want))  # NaN and inf are over
    if over.any():
        i = np.unravel_index(np.argmax(np.nan_to_num(err - atol - rtol * np.abs(want), nan=np.inf)), want.shape)
        failures.append(f"{what}: {over.sum()} elements off NumPy's; worst {i}: {got[i]} vs {want[i]}")
        return False
    return True


with tempfile.TemporaryDirectory() as d:
    for dt, rows, cols, *ub in LAYERNORM:
        x = (rng.normal(3.0, 2.0, (rows, cols))).astype(NP[dt])
        g = rng.uniform(-2, 2, cols).astype(NP[dt])
        b = rng.uniform(-1, 1, cols).astype(NP[dt])
        eps = 1e-5 if dt == "f32" else 1e-3
        for name, v in (("x", x), ("g", g), ("b", b)):
            np.save(os.path.join(d, name + ".npy"), v)
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=1, keepdims=True)
        var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
        want = (x64 - mean) / np.sqrt(var + eps) * g.astype(np.float64) + b.astype(np.float64)
        # f16 rounds each of the vector unit's steps (the mean, x - mean, the sums, 1 / sqrt):
        # about 1% of a normalized value's size, whose scale is |gamma| (up to 2).
        rtol, atol = (1e-2, 3e-2) if dt == "f16" else (1e-4, 1e-4)
        for preset in ("ascend310", "ascend910"):
            what = f"layernorm {dt} {rows} x {cols} on {preset}" + (f" (UB {ub[0]} KiB)" if ub else "")
            out = run(d, LN_SCENARIO.format(preset=preset, dt=dt, rows=rows, cols=cols, eps=eps), what, *ub)
            if out is None:
                continue
            y, y2 = np.load(os.path.join(out, "y.npy")), np.load(os.path.join(out, "x2.npy"))
            if not np.array_equal(y.view(np.uint8), y2.view(np.uint8)):
                failures.append(f"{what}: in place differs from out of place")
            elif compare(what, y, want, rtol, atol):
                print("ok  ", what)
    for dt, rows, cols, scale in SOFTMAX:
        x = rng.uniform(-20, 20, (rows, cols)).astype(NP[dt])
        np.save(os.path.join(d, "x.npy"), x)
        s = np.float64(np.float32(scale))
        e = np.exp(s * x.astype(np.float64) - (s * x.astype(np.float64)).max(axis=1, keepdims=True))
        want = e / e.sum(axis=1, keepdims=True)
        # f16: x x scale rounds to half a unit in the last place (up to 2^-8 at |x s| in [4, 8)).
        rtol, atol = (1.2e-2, 2.0**-24) if dt == "f16" else (1e-5, 1e-12)
        for preset in ("ascend310", "ascend910"):
            what = f"softmax {dt} {rows} x {cols} x {scale:.4g} on {preset}"
            out = run(d, SM_SCENARIO.format(preset=preset, dt=dt, rows=rows, cols=cols, scale=repr(float(scale))), what)
            if out is not None and compare(what, np.load(os.path.join(out, "y.npy")), want, rtol, atol):
                print("ok  ", what)

    for dt, outer, rows, cols, inner in TRANSPOSE:
        x = rng.uniform(-100, 100, (outer, rows, cols, inner)).astype(NP[dt])
        np.save(os.path.join(d, "x.npy"), x)
        want = x.transpose(0, 2, 1, 3)
        for preset in ("ascend310", "ascend910"):
            what = f"transpose {dt} {outer} x {rows} x {cols} x {inner} on {preset}"
            text = TR_SCENARIO.format(preset=preset, dt=dt, outer=outer, rows=rows, cols=cols, inner=inner)
            out = run(d, text, what)
            if out is None:
                continue
            y = np.load(os.path.join(out, "y.npy"))
            if y.shape != want.shape or not np.array_equal(y.view(np.uint8), want.view(np.uint8)):
                failures.append(f"{what}: differs from NumPy's transpose")
            else:
                print("ok  ", what)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
