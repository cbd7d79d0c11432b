#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The reduce kernel (the sum, mean, maximum and minimum over the middle axis of outer x rows x
# inner) against NumPy on both presets, f16 and f32, with shapes of each of its ways:
# - inner 1, a row per output element: rows under one repeat (3), with a tail (200), of more
#   than 255 repeats (70001 f16: a row the UB does not hold, read in chunks), and outputs
#   that end inside a unit (33 rows of 16 f16 a unit; 7 of 8 f32);
# - inner whole 32-byte blocks, the rows of a piece by one strided copy (a sentence embedding's
#   mean over 128 tokens of 768: one output row in pieces across the cores; a channel axis over
#   56 x 56 positions; 1 x 300000, wider than the UB: pieces);
# - inner not whole blocks: one output row (outer 1: 3 x 49), and several (the ONNX suite's
#   3 x 2 x 2 over axis 1; 5 x 7 x 49: 16 output rows a unit, packed by the scalar unit; 37 x
#   3 x 3, the last unit short).
# Then means of values near 1e-4 (f16), NaNs (first in a row, inside one, a whole row), and
# output rows a packed unit of which the UB cannot hold. The maximum and minimum must equal
# NumPy's fmax / fmin bit for bit; the sums and means within the rounding of their type (sums
# in f32, f16 results rounded once). Inputs are NumPy's own, of both signs, with a mean away
# from 0. Each run also carries the kernel's own reference check (check: op reduce), which must
# pass.
#
# Then ONNX graphs as networks use the Reduce ops (dvp run model.onnx): a sentence embedding's
# mean over the tokens after a MatMul, a ReduceMax over the last axis, a ReduceSum over two
# adjacent axes (keepdims 0) and a ReduceMin over the channel axis of an ND activation, and at
# opset 18 the axes as an input and noop_with_empty_axes; their outputs against NumPy's of the
# same graph (the network computes in f16). Axes that are not one run (1 and 3 of 1 x 3 x 5 x 8)
# are refused with the node named.
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

NEIGHBOUR = """
name: reduce-neighbour
platform: {{preset: {preset}}}
kernels:
  - name: r
    library: reduce
    shape: {{dtype: f16, reduce: max, outer: 137, rows: 2, inner: 4081}}
    tensors:
      - {{name: x, dtype: f16, shape: [137, 2, 4081], file: x.npy}}
      - {{name: y, dtype: f16, shape: [137, 4081], save: y.npy}}
      - {{name: z, dtype: f16, shape: [64], file: z.npy, save: z.npy}}
    args: [x, y]
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


def check(d, dt, x, what_shape):
    """Each op over axis 1 of x on both presets, against NumPy's reduction of the same values."""
    outer, rows, inner = x.shape
    np.save(os.path.join(d, "x.npy"), x)
    x64 = x.astype(np.float64)
    # A NaN gives way to a number, as vmax's does (NumPy's fmax): a row of NaNs alone is NaN.
    wants = {"sum": x64.sum(axis=1), "mean": x64.mean(axis=1), "max": np.fmax.reduce(x64, axis=1),
             "min": np.fmin.reduce(x64, axis=1)}
    # Sums in f32 (f16 widened): rows roundings of 2^-24 of the largest partial sum, then (f16) the
    # result's own rounding, half a step: 2^-11 relative.
    atol = 2.0**-22 * float(np.nansum(np.abs(x64), axis=1).max())
    rtol = 2.0**-10 if dt == "f16" else 2.0**-22
    for op, want in wants.items():
        for preset in ("ascend310", "ascend910"):
            what = f"reduce {op} {dt} {what_shape} on {preset}"
            text = SCENARIO.format(preset=preset, dt=dt, op=op, outer=outer, rows=rows, inner=inner,
                                   rtol=0 if op in ("max", "min") else rtol, atol=0 if op in ("max", "min") else atol)
            out = run(d, text, what)
            if out is None:
                continue
            y = np.load(os.path.join(out, "y.npy")).astype(np.float64).reshape(want.shape)
            if op in ("max", "min"):
                ok = np.array_equal(y, want, equal_nan=True)
            else:
                ok = bool(np.all((np.abs(y - want) <= atol + rtol * np.abs(want)) | (np.isnan(y) & np.isnan(want))))
            if not ok:
                off = np.where(np.isnan(y) == np.isnan(want), np.nan_to_num(np.abs(y - want), nan=0), np.inf)
                i = np.unravel_index(np.argmax(off), want.shape)
                failures.append(f"{what}: off NumPy's; worst {i}: {y[i]} vs {want[i]}")
            else:
                print("ok  ", what)


with tempfile.TemporaryDirectory() as d:
    for dt, outer, rows, inner in SHAPES:
        check(d, dt, rng.normal(0.5, 2.0, (outer, rows, inner)).astype(NP[dt]), f"{outer} x {rows} x {inner}")
    # Means of small values (an f16 x / rows would be subnormal or 0 before the sum), a NaN first
    # in a row and within one, a row of NaNs, and output rows of 8190 B, 16 of which (a packed
    # unit) the UB cannot hold: one core writes them in order.
    for dt, shape in (("f16", (2, 8192, 1)), ("f16", (1, 4096, 48))):
        check(d, dt, rng.uniform(1e-4, 2e-4, shape).astype(NP[dt]), f"{shape} of 1e-4 to 2e-4")
    for dt, shape in (("f16", (3, 300, 1)), ("f32", (2, 5, 40))):
        x = rng.normal(0, 3, shape).astype(NP[dt])
        x[0, 0, :] = np.nan
        x[1, 7 % shape[1], :] = np.nan
        x[2 % shape[0], :, 0] = np.nan
        check(d, dt, x, f"{shape} with NaNs")
    check(d, "f16", rng.normal(0, 1, (3, 2, 4095)).astype(np.float16), "3 x 2 x 4095 (one core, in order)")
    # One core in order with rows of several pieces (the short one first); one output row of
    # 544000 f32 in pieces across 32 cores, the rows' gap past the strided copy's 16 bits of
    # blocks (one copy a row there).
    check(d, "f16", rng.normal(0, 1, (2, 2, 30001)).astype(np.float16), "2 x 2 x 30001 (one core, pieces)")
    check(d, "f32", rng.normal(0, 1, (1, 2, 544000)).astype(np.float32), "1 x 2 x 544000")
    # One core in order, the output ending 14 bytes before its page's end (137 x 4081 f16): each
    # row ends with a block of its own last 32 bytes, so the tensor placed after it is untouched.
    x = rng.normal(0, 1, (137, 2, 4081)).astype(np.float16)
    z = np.full(64, 7.0, np.float16)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "z.npy"), z)
    for preset in ("ascend310", "ascend910"):
        what = f"reduce max f16 137 x 2 x 4081 on {preset}, the next tensor"
        out = run(d, NEIGHBOUR.format(preset=preset), what)
        if out is None:
            continue
        y, z2 = np.load(os.path.join(out, "y.npy")), np.load(os.path.join(out, "z.npy"))
        if not np.array_equal(y.astype(np.float64), x.astype(np.float64).max(axis=1)):
            failures.append(f"{what}: the maximum is off NumPy's")
        elif not np.array_equal(z2, z):
            failures.append(f"{what}: the tensor after the output changed: {z2[:20]}")
        else:
            print("ok  ", what)
    # A what-if UB of 1 KiB, which holds no unit of 16 output rows of 6 bytes: refused by name.
    with open(os.path.join(d, "s.yaml"), "w") as f:
        f.write(SCENARIO.format(preset="ascend310", dt="f16", op="max", outer=3, rows=2, inner=3, rtol=0, atol=0))
    np.save(os.path.join(d, "x.npy"), rng.normal(0, 1, (3, 2, 3)).astype(np.float16))
    r = subprocess.run([DVP, "run", os.path.join(d, "s.yaml"), "--quiet", "--out", os.path.join(d, "o-ub"), "--set",
                        "platform.aicore.ub_kib=1"], capture_output=True, text=True)
    if r.returncode != 2 or "output rows of 6 B, 16 of them a unit, do not fit the UB (1024 B)" not in r.stderr:
        failures.append(f"a 1 KiB UB: exit {r.returncode}, {r.stderr.strip()[-300:]}")
    else:
        print("ok   a 1 KiB UB refused:", r.stderr.strip()[-90:])

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
    # Opset 18: the axes an input (a constant); noop_with_empty_axes and no axes: the input itself.
    g = helper.make_graph([helper.make_node("ReduceMean", ["z", "last"], ["zm"], keepdims=1),
                           helper.make_node("ReduceMax", ["z"], ["same"], noop_with_empty_axes=1)], "opset18",
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3, 5, 8])],
                          [helper.make_tensor_value_info("zm", TensorProto.FLOAT, [1, 3, 5, 1]),
                           helper.make_tensor_value_info("same", TensorProto.FLOAT, [1, 3, 5, 8])],
                          [numpy_helper.from_array(np.array([-1], np.int64), "last")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    r = subprocess.run([DVP, "run", path, "--quiet", "--no-trace", "--out", out, f"--input=z={d}/z.npy"],
                       capture_output=True, text=True)
    z16 = z.astype(np.float16).astype(np.float64)
    if r.returncode != 0:
        failures.append(f"opset 18 graph: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    else:
        for name, v in (("zm", z16.mean(axis=-1, keepdims=True)), ("same", z16)):
            y = np.load(os.path.join(out, "outputs", name + ".npy")).astype(np.float64)
            if y.shape != v.shape or not np.all(np.abs(y - v) <= 2e-3 * np.abs(v) + 1e-3):
                failures.append(f"opset 18 {name}: {y.ravel()[:4]} vs NumPy's {v.ravel()[:4]}")
            else:
                print("ok   onnx opset 18", name, v.shape)
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
