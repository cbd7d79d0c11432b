#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The reduce kernel (the sum, mean, maximum and minimum over the middle axis of outer x rows x
# inner) against NumPy on both presets, f16 and f32, with shapes of each of its ways:
# - inner 1, a row per output element: rows under one repeat (3), with a tail (200), of more
#   than 255 repeats (70001 f16: a row the UB does not hold, read in chunks), and outputs
#   that end inside a unit (33 rows of 16 f16 a unit; 7 of 8 f32);
# - inner whole 32-byte blocks (a sentence embedding's mean over 128 tokens of 768; a channel
#   axis over 56 x 56 positions; 1 x 300000, wider than the UB: pieces);
# - inner not whole blocks: one output row (outer 1: 3 x 49), and several (the ONNX suite's
#   3 x 2 x 2 over axis 1; 5 x 7 x 49: 16 output rows a unit, packed by the scalar unit; 37 x
#   3 x 3, the last unit short).
# The maximum and minimum must equal NumPy's bit for bit; the sums and means within the
# rounding of their type (f16: each element's scaling by 1 / rows for a mean, and the result's
# rounding). Inputs are NumPy's own, of both signs, with a mean away from 0. Each run also
# carries the kernel's own reference check (check: op reduce), which must pass.
#
# Then ONNX graphs as networks use the Reduce ops (dvp run model.onnx): a sentence embedding's
# mean over the tokens after a MatMul, a ReduceMax over the last axis, a ReduceSum over two
# adjacent axes (keepdims 0) and a ReduceMin over the channel axis of an ND activation; their
# outputs against NumPy's of the same graph in f32 (the network computes in f16). Axes that are
# not one run (1 and 3 of 1 x 3 x 5 x 8) are refused with the node named.
#
# Usage: reduce-numpy.py DVP   (needs python3-numpy and python3-onnx)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
NP = {"f16": np.float16, "f32": np.float32}
# dtype, outer, rows, inner
SHAPES = [("f16", 33, 3, 1), ("f32", 7, 200, 1), ("f16", 2, 70001, 1), ("f16", 1, 128, 768), ("f16", 1, 64, 3136),
          ("f32", 3, 5, 24), ("f16", 1, 3, 49), ("f16", 3, 2, 2), ("f16", 5, 7, 49), ("f32", 37, 3, 3),
          ("f16", 1, 2, 300000)]
OPS = ("sum", "mean", "max", "min")

SCENARIO = """
name: reduce
platform: {{preset: {preset}}}
kernels:
  - name: r
    library: reduce
    shape: {{dtype: {dt}, reduce: {op}, outer: {outer}, rows: {rows}, inner: {inner}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{outer}, {rows}, {inner}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{outer}, {inner}], save: y.npy}}
    args: [x, y]
    check: {{op: reduce, inputs: [x], output: y, rtol: {rtol}, atol: {atol}}}
run: {{trace: false}}
"""

failures = []
rng = np.random.default_rng(5)


def run(d, text, what):
    path, out = os.path.join(d, "s.yaml"), os.path.join(d, "out")
    with open(path, "w") as f:
        f.write(text)
    r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        return None
    return out


with tempfile.TemporaryDirectory() as d:
    for dt, outer, rows, inner in SHAPES:
        x = rng.normal(0.5, 2.0, (outer, rows, inner)).astype(NP[dt])
        np.save(os.path.join(d, "x.npy"), x)
        x64 = x.astype(np.float64)
        for op in OPS:
            want = {"sum": x64.sum(axis=1), "mean": x64.mean(axis=1), "max": x64.max(axis=1),
                    "min": x64.min(axis=1)}[op]
            exact = op in ("max", "min")
            # f16: the result's rounding (2^-11 relative) and, for a mean, each element's scaling
            # by 1 / rows (a sum of rows errors of 2^-11 of |x| / rows each: below 2^-11 x max |x|
            # in all). f32 sums in f32 (inner above 1): rows roundings of 2^-24 of the partial sum.
            if dt == "f16":
                rtol, atol = 2.0**-10, 2.0**-10 * float(np.abs(x64).max()) * (2 if op == "mean" else 1)
            else:
                rtol, atol = 1e-6, 1e-6 * float(np.abs(x64).sum(axis=1).max())
            for preset in ("ascend310", "ascend910"):
                what = f"reduce {op} {dt} {outer} x {rows} x {inner} on {preset}"
                text = SCENARIO.format(preset=preset, dt=dt, op=op, outer=outer, rows=rows, inner=inner,
                                       rtol=rtol, atol=atol)
                out = run(d, text, what)
                if out is None:
                    continue
                y = np.load(os.path.join(out, "y.npy")).astype(np.float64).reshape(want.shape)
                if exact:
                    ok = np.array_equal(y, want)
                else:
                    ok = bool(np.all(np.abs(y - want) <= atol + rtol * np.abs(want)))
                if not ok:
                    i = np.unravel_index(np.argmax(np.abs(y - want)), want.shape)
                    failures.append(f"{what}: off NumPy's; worst {i}: {y[i]} vs {want[i]}")
                else:
                    print("ok  ", what)



def onnx_part(d):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = rng.normal(0, 0.2, (40, 48)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("ReduceMean", ["h"], ["emb"], axes=[1], keepdims=0),
             helper.make_node("ReduceMax", ["h"], ["peak"], axes=[-1]),
             helper.make_node("ReduceSum", ["z", "sum_axes"], ["zsum"], keepdims=0),
             helper.make_node("ReduceMin", ["z"], ["zmin"], axes=[1])]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([1, 2], np.int64), "sum_axes")]
    g = helper.make_graph(nodes, "reduce", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 40]),
                                            helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3, 5, 8])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
                           (("emb", [1, 48]), ("peak", [1, 6, 1]), ("zsum", [1, 8]), ("zmin", [1, 1, 5, 8]))], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(d, "reduce.onnx")
    onnx.save(m, path)
    x = rng.normal(0, 1, (1, 6, 40)).astype(np.float32)
    z = rng.normal(0.5, 2, (1, 3, 5, 8)).astype(np.float32)
    for name, v in (("x", x), ("z", z)):
        np.save(os.path.join(d, name + ".npy"), v)
    h = x.astype(np.float64) @ w.astype(np.float64)
    want = {"emb": h.mean(axis=1), "peak": h.max(axis=-1, keepdims=True), "zsum": z.astype(np.float64).sum(axis=(1, 2)),
            "zmin": z.astype(np.float64).min(axis=1, keepdims=True)}
    out = os.path.join(d, "net")
    r = subprocess.run([DVP, "run", path, "--quiet", "--no-trace", "--out", out, f"--input=x={d}/x.npy",
                        f"--input=z={d}/z.npy"], capture_output=True, text=True)
    if r.returncode != 0:
        return failures.append(f"onnx reduce graph: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    for name, v in want.items():
        y = np.load(os.path.join(out, "outputs", name + ".npy")).astype(np.float64)
        tol = 2e-3 * np.abs(v) + 4e-3 * max(1.0, float(np.abs(v).max()))  # f16 inputs, products and results
        if y.shape != v.shape or not np.all(np.abs(y - v) <= tol):
            failures.append(f"onnx {name}: {y.ravel()[:4]} vs NumPy's {v.ravel()[:4]} (shape {y.shape} vs {v.shape})")
        else:
            print("ok   onnx", name, v.shape)
    bad = helper.make_graph([helper.make_node("ReduceMean", ["z"], ["y"], axes=[1, 3])], "split",
                            [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3, 5, 8])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 5, 1])])
    onnx.save(helper.make_model(bad, opset_imports=[helper.make_opsetid("", 13)]), path)
    r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
    if r.returncode != 2 or "not one run of adjacent axes (axis 2 of 5" not in r.stderr:
        failures.append(f"axes 1 and 3: exit {r.returncode}, {r.stderr.strip()[-300:]}")
    else:
        print("ok   onnx axes 1 and 3 refused:", r.stderr.strip().splitlines()[-1][-110:])


with tempfile.TemporaryDirectory() as d:
    onnx_part(d)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
