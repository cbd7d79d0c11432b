#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Broadcasting, against NumPy.
#
# The expand kernels, y = x (outer x 1 x inner) broadcast to outer x rows x inner, on both presets:
# - the AI Core's (library: expand), both of its ways: runs of one value (inner 1: runs shorter
#   than a block, 3 x 5 f16 and 37 x 17 f16; a run longer than a unit, 2 x 70001 f16; 1000 runs
#   of 2 f32; 7 runs of 768 f16; a run of 1: a copy), and rows of whole blocks (2 x 3 x 16 f16,
#   128 copies of one row of 768 f16, 3 x 5 x 8 f32, rows of 100000 f16 wider than a unit:
#   pieces; units of many x rows, 64 x 4 x 128 f16 and 4096 x 2 x 8 f32, x cold in DRAM; rows 1). Each must equal NumPy's np.broadcast_to bit for bit, and a tensor placed after y
#   must be untouched (the last unit's write ends inside its last block).
# - the AI CPU's (aicpu: expand: byte copies), with rows of 6 bytes (3 f16) and of one byte.
# Each run also carries the kernel's own check (op: expand), which must pass.
#
# Then ONNX graphs whose element-wise ops broadcast an activation (dvp run model.onnx), against
# NumPy's evaluation of the same graph: RMSNorm as LLaMA's export writes it (Pow 2, ReduceMean,
# Add, Sqrt, Div of the activation by its rms), a softmax written out (ReduceMax, Sub, Exp,
# ReduceSum, Div), an L2 normalisation (x / sqrt(sum x^2)), an attention mask of 1 x 1 x 1 x S
# added to scores of 1 x H x S x S, a bias row computed from an activation added to every row,
# Expand of an activation (to more axes), axes broadcast in two runs (two expands), Reciprocal,
# Log and Pow by 2, 0.5 and -1; F.normalize as exported (ReduceL2, Clip, Expand, Div), ReduceSumSquare,
# ReduceL1 and ReduceLogSum (each its pre-op, the reduce kernel's sum, its post-op; norms and
# log-sums of f16 activations whose sums pass f16's range; at opset 18 no axes with
# noop_with_empty_axes: x x and |x|); an Expand of a feature map to its own shape. Broadcasting onto
# an NC1HWC0 feature map and ReduceLogSumExp are refused with the node named.
#
# Usage: broadcast-numpy.py DVP   (needs python3-numpy and python3-onnx)
import os
import subprocess
import sys
import tempfile

import numpy as np

from numpy_graphs import Bench

DVP = sys.argv[1]
NP = {"f16": np.float16, "f32": np.float32, "s8": np.int8}

# dtype, outer, rows, inner
CORE_SHAPES = [("f16", 3, 5, 1), ("f16", 37, 17, 1), ("f16", 2, 70001, 1), ("f32", 1000, 2, 1), ("f16", 7, 768, 1),
               ("f32", 5, 1, 1), ("f16", 2, 3, 16), ("f16", 1, 128, 768), ("f32", 3, 5, 8), ("f16", 2, 2, 100000),
               ("f16", 64, 4, 128), ("f32", 4096, 2, 8), ("f16", 5, 1, 16)]
CPU_SHAPES = [("f16", 4, 5, 3), ("s8", 3, 7, 1)]

CORE = """
name: expand
platform: {{preset: {preset}}}
kernels:
  - name: e
    library: expand
    shape: {{dtype: {dt}, outer: {outer}, rows: {rows}, inner: {inner}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{outer}, {inner}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{outer}, {rows}, {inner}], save: y.npy}}
      - {{name: z, dtype: f16, shape: [64], file: z.npy, save: z.npy}}
    args: [x, y]
    check: {{op: expand, inputs: [x], output: y, cols: {inner}, rows: {rows}}}
run: {{trace: false}}
checks:
  - {{metric: summary.kernel_checks_failed, max: 0}}
"""

CPU = """
name: expand-aicpu
platform: {{preset: {preset}}}
firmware: {{image: runtime, cores: [0, 4]}}
kernels:
  - name: e
    aicpu: expand
    tensors:
      - {{name: x, dtype: {dt}, shape: [{outer}, {inner}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{outer}, {rows}, {inner}], save: y.npy}}
    args: [y, x, {outer}, {rows}, {run}]
    check: {{op: expand, inputs: [x], output: y, cols: {inner}, rows: {rows}}}
tasks:
  - {{kernel: e}}
run: {{trace: false}}
checks:
  - {{metric: summary.kernel_checks_failed, max: 0}}
"""

rng = np.random.default_rng(11)


def values(dt, shape):
    if dt == "s8":
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.normal(0, 3, shape).astype(NP[dt])


def kernels_part(d):
    z = np.full(64, 7.0, np.float16)
    np.save(os.path.join(d, "z.npy"), z)
    for way, shapes in (("core", CORE_SHAPES), ("cpu", CPU_SHAPES)):
        for dt, outer, rows, inner in shapes:
            x = values(dt, (outer, 1, inner))
            np.save(os.path.join(d, "x.npy"), x.reshape(outer, inner))
            want = np.broadcast_to(x, (outer, rows, inner))
            for preset in ("ascend310", "ascend910"):
                what = f"expand ({way}) {dt} {outer} x {rows} x {inner} on {preset}"
                text = (CORE if way == "core" else CPU).format(preset=preset, dt=dt, outer=outer, rows=rows,
                                                               inner=inner, run=inner * x.itemsize)
                out = B.run(text, what)
                if out is None:
                    continue
                y = np.load(os.path.join(out, "y.npy")).reshape(want.shape)
                if not np.array_equal(y.view(np.uint8), np.ascontiguousarray(want).view(np.uint8)):
                    bad = np.argwhere(y != want)[0]
                    B.fail(f"{what}: differs from NumPy's first at {tuple(bad)}: {y[tuple(bad)]} vs "
                                    f"{want[tuple(bad)]}")
                elif way == "core" and not np.array_equal(np.load(os.path.join(out, "z.npy")), z):
                    B.fail(f"{what}: the tensor after y changed")
                else:
                    print("ok  ", what)


def onnx_part(d):
    from onnx import helper
    mk = helper.make_node
    f64 = np.float64
    # RMSNorm after a MatMul (f16 activations): T5's x / sqrt(mean x^2 + eps) and LLaMA's
    # x * (1 / sqrt(...)) (Reciprocal), each times a weight.
    x = rng.normal(0, 1, (1, 6, 40)).astype(np.float32)
    w = rng.normal(0, 0.2, (40, 48)).astype(np.float32)
    gw = rng.uniform(0.5, 1.5, 48).astype(np.float32)
    nodes = [mk("MatMul", ["x", "w"], ["h"]), mk("Pow", ["h", "two"], ["p"]), mk("ReduceMean", ["p"], ["m"], axes=[-1]),
             mk("Add", ["m", "eps"], ["a"]), mk("Sqrt", ["a"], ["s"]), mk("Div", ["h", "s"], ["hn"]),
             mk("Mul", ["hn", "g"], ["t5"]), mk("Reciprocal", ["s"], ["r"]), mk("Mul", ["h", "r"], ["hr"]),
             mk("Mul", ["hr", "g"], ["llama"])]
    h = x.astype(f64) @ w
    rms = np.sqrt((h * h).mean(-1, keepdims=True) + 1e-6)
    B.run_graph("rmsnorm", nodes, {"x": x}, {"t5": h / rms * gw, "llama": h * (1 / rms) * gw},
              {"w": w, "g": gw, "two": np.array(2, np.float32), "eps": np.array(1e-6, np.float32)})
    # A softmax written out over the last axis, and an L2 normalisation, of f32 activations.
    z = rng.normal(0, 2, (3, 5, 7)).astype(np.float32)
    nodes = [mk("Relu", ["z"], ["zr"]), mk("ReduceMax", ["zr"], ["mx"], axes=[-1]), mk("Sub", ["zr", "mx"], ["dz"]),
             mk("Exp", ["dz"], ["ez"]), mk("ReduceSum", ["ez", "last"], ["se"]), mk("Div", ["ez", "se"], ["soft"]),
             mk("Mul", ["z", "z"], ["zz"]), mk("ReduceSum", ["zz", "last"], ["ss"]), mk("Sqrt", ["ss"], ["nrm"]),
             mk("Div", ["z", "nrm"], ["unit"]), mk("Relu", ["z"], ["pos"]), mk("Add", ["pos", "one"], ["pos1"]),
             mk("Log", ["pos1"], ["logs"]), mk("Pow", ["pos1", "half"], ["root"]), mk("Pow", ["pos1", "minus"], ["inv"])]
    zr = np.maximum(z.astype(f64), 0)
    ez = np.exp(zr - zr.max(-1, keepdims=True))
    B.run_graph("written", nodes, {"z": z},
              {"soft": ez / ez.sum(-1, keepdims=True),
               "unit": z / np.sqrt((z.astype(f64) ** 2).sum(-1, keepdims=True)), "logs": np.log(zr + 1),
               "root": np.sqrt(zr + 1), "inv": 1 / (zr + 1)},
              {"last": np.array([-1], np.int64), "one": np.array(1, np.float32), "half": np.array(0.5, np.float32),
               "minus": np.array(-1, np.float32)}, rtol=1e-5, atol_scale=1e-6)
    # An attention mask computed from the ids' padding (1 x 1 x 1 x S) added to scores of
    # 1 x H x S x S: rows of whole blocks (S 8, f32) on the AI Core, of 24 bytes (S 6) on the AI CPU;
    # a bias row computed from the activation (its mean over the tokens) added to every token.
    for s in (8, 6):
        sc = rng.normal(0, 1, (1, 2, s, s)).astype(np.float32)
        pad = (rng.uniform(0, 1, (1, 1, 1, s)) < 0.3).astype(np.float32)
        nodes = [mk("Relu", ["sc"], ["sr"]), mk("Mul", ["pad", "big"], ["mask"]), mk("Add", ["sr", "mask"], ["y"]),
                 mk("ReduceMean", ["sr"], ["col"], axes=[2]), mk("Sub", ["sr", "col"], ["centred"])]
        srr = np.maximum(sc.astype(f64), 0)
        B.run_graph(f"mask{s}", nodes, {"sc": sc, "pad": pad},
                  {"y": srr + pad * -10000.0, "centred": srr - srr.mean(2, keepdims=True)},
                  {"big": np.array(-10000.0, np.float32)}, rtol=1e-6, atol_scale=1e-6)
    # Expand of an activation (3 runs of 4), and both operands broadcast (3 x 1 + 1 x 4).
    v = rng.normal(0, 1, (1, 3, 1)).astype(np.float32)
    u = rng.normal(0, 1, (1, 1, 4)).astype(np.float32)
    nodes = [mk("Relu", ["v"], ["vr"]), mk("Expand", ["vr", "shape"], ["ex"]), mk("Relu", ["u"], ["ur"]),
             mk("Add", ["vr", "ur"], ["outer"])]
    vr, ur = np.maximum(v.astype(f64), 0), np.maximum(u.astype(f64), 0)
    B.run_graph("expand", nodes, {"v": v, "u": u}, {"ex": np.broadcast_to(vr, (1, 3, 4)), "outer": vr + ur},
              {"shape": np.array([1, 3, 4], np.int64)}, rtol=1e-6, atol_scale=0)
    # F.normalize as PyTorch exports it (ReduceL2, Clip, Expand to the Shape of x, Div), after a
    # MatMul (f16); ReduceSumSquare, ReduceL1 and ReduceLogSum of an f32 activation, keepdims 0.
    nodes = [mk("MatMul", ["x", "w"], ["h"]), mk("ReduceL2", ["h"], ["n2"], axes=[-1]),
             mk("Clip", ["n2", "tiny"], ["nc"]), mk("Shape", ["h"], ["hs"]), mk("Expand", ["nc", "hs"], ["ne"]),
             mk("Div", ["h", "ne"], ["normalized"]), mk("Relu", ["z"], ["zr"]),
             mk("ReduceSumSquare", ["zr"], ["sq"], axes=[1], keepdims=0),
             mk("ReduceL1", ["z"], ["l1"], axes=[1, 2], keepdims=0), mk("Add", ["zr", "one"], ["zr1"]),
             mk("ReduceLogSum", ["zr1"], ["logsum"], axes=[-1])]
    B.run_graph("norms", nodes, {"x": x, "z": z},
              {"normalized": h / np.maximum(np.sqrt((h * h).sum(-1, keepdims=True)), 1e-12),
               "sq": (zr * zr).sum(1), "l1": np.abs(z.astype(f64)).sum((1, 2)),
               "logsum": np.log((zr + 1).sum(-1, keepdims=True))},
              {"w": w, "tiny": np.array(1e-12, np.float32), "one": np.array(1, np.float32)})
    # Norms and log-sums of f16 activations whose sums pass f16's range (a norm of about 330 is a sum
    # of 1e5): computed in f32. At opset 18, a ReduceSumSquare and a ReduceL1 of no axes with
    # noop_with_empty_axes are x x and |x|, as ONNX defines them.
    wb = rng.normal(0, 4, (40, 128)).astype(np.float32)
    wu = rng.uniform(0, 20, (40, 256)).astype(np.float32)
    u = rng.uniform(0, 1, (1, 6, 40)).astype(np.float32)
    hb, hu = x.astype(f64) @ wb, u.astype(f64) @ wu
    B.run_graph("wide-norms", [mk("MatMul", ["x", "wb"], ["hb"]), mk("ReduceL2", ["hb"], ["big"], axes=[-1]),
                                mk("MatMul", ["u", "wu"], ["hu"]), mk("ReduceLogSum", ["hu"], ["logbig"], axes=[-1])],
              {"x": x, "u": u}, {"big": np.sqrt((hb * hb).sum(-1, keepdims=True)),
                                 "logbig": np.log(hu.sum(-1, keepdims=True))}, {"wb": wb, "wu": wu})
    B.run_graph("noop18", [mk("Relu", ["z"], ["zr"]), mk("ReduceSumSquare", ["zr", "none"], ["each"], noop_with_empty_axes=1),
                            mk("ReduceL1", ["z", "none"], ["mag"], noop_with_empty_axes=1)],
              {"z": z}, {"each": zr * zr, "mag": np.abs(z.astype(f64))}, {"none": np.array([], np.int64)},
              rtol=1e-6, atol_scale=0, opset=18)
    B.refused("logsumexp", [mk("Relu", ["z"], ["zr"]), mk("ReduceLogSumExp", ["zr"], ["y"], axes=[-1])], {"z": z},
            [3, 5, 1], ["(ReduceLogSumExp)", "it is not lowered (ReduceSum"])
    # An additive mask made from a graph input's padding (f32) added to a MatMul's f16 scores (the
    # mask cast to f16, then expanded), and an operand of fewer axes but as many elements (read as
    # it is).
    am = (rng.uniform(0, 1, (1, 48)) < 0.3).astype(np.float32)
    a2 = rng.normal(0, 1, (4, 8)).astype(np.float32)
    a3 = rng.normal(0, 1, (1, 4, 8)).astype(np.float32)
    nodes = [mk("MatMul", ["x", "w"], ["h"]), mk("Sub", ["one", "am"], ["keep"]), mk("Mul", ["keep", "big"], ["mask"]),
             mk("Add", ["h", "mask"], ["masked"]), mk("Relu", ["a2"], ["r2"]), mk("Relu", ["a3"], ["r3"]),
             mk("Add", ["r3", "r2"], ["ranks"])]
    B.run_graph("hf-mask", nodes, {"x": x, "am": am, "a2": a2, "a3": a3},
              {"masked": h + (1 - am) * -10000.0, "ranks": np.maximum(a3, 0) + np.maximum(a2, 0)},
              {"w": w, "one": np.array(1, np.float32), "big": np.array(-10000, np.float32)})
    # Refused: an activation broadcast onto a feature map; broadcast axes that are not one run.
    img = rng.normal(0, 1, (1, 3, 6, 6)).astype(np.float32)
    k = rng.normal(0, 0.3, (16, 3, 3, 3)).astype(np.float32)
    B.refused("onto-map", [mk("Conv", ["img", "k"], ["c"], pads=[1, 1, 1, 1]),
                            mk("ReduceMean", ["c"], ["cm"], axes=[2, 3]), mk("Add", ["c", "cm"], ["y"])],
            {"img": img}, [1, 16, 6, 6], ["(Add)", "broadcast onto the feature map", "NC1HWC0"], {"k": k})
    # An Expand of a feature map to its own shape is the map itself (it compiles: no layout change).
    path = B.graph("own-shape", [mk("Conv", ["img", "k"], ["c"], pads=[1, 1, 1, 1]), mk("Expand", ["c", "sh"], ["e"]),
                                  mk("Relu", ["e"], ["y"])], {"img": img}, {"y": [1, 16, 6, 6]},
                 {"k": k, "sh": np.array([1, 16, 6, 6], np.int64)})
    r = subprocess.run([DVP, "compile", path, "--out", os.path.join(d, "c-own")], capture_output=True, text=True)
    if r.returncode != 0:
        B.fail(f"an Expand of a map to its own shape: exit {r.returncode}, {r.stderr.strip()[-300:]}")
    else:
        print("ok   an Expand of a map to its own shape compiles")
    # a map of 8 channels (its pad channels 0) divided by a graph input at a batch of 2 (0 / 0).
    k8 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
    img2 = rng.normal(0, 1, (2, 3, 6, 6)).astype(np.float32)
    den = rng.uniform(1, 2, (2, 8, 6, 6)).astype(np.float32)
    B.refused("div-map", [mk("Conv", ["img2", "k8"], ["c"], pads=[1, 1, 1, 1]), mk("Div", ["c", "den"], ["y"])],
            {"img2": img2, "den": den}, [2, 8, 6, 6], ["(Div)", "8 channels", "not finite"], {"k8": k8},
            ["--batch", "2"])
    # Two runs of axes broadcast (1 and 3 of 1 x 4 x 5 x 6, axis 2 kept between): two expands, the
    # last run first; and an Expand to more axes (3 x 1 to 2 x 3 x 6, as the ONNX suite's).
    a = rng.normal(0, 1, (1, 4, 5, 6)).astype(np.float32)
    b = rng.normal(0, 1, (1, 1, 5, 1)).astype(np.float32)
    c = rng.normal(0, 1, (3, 1)).astype(np.float32)
    nodes = [mk("Relu", ["a"], ["ar"]), mk("Relu", ["b"], ["br"]), mk("Add", ["ar", "br"], ["y"]),
             mk("Relu", ["c"], ["cr"]), mk("Expand", ["cr", "shape"], ["wide"])]
    ar, br, cr = (np.maximum(t.astype(f64), 0) for t in (a, b, c))
    B.run_graph("two-runs", nodes, {"a": a, "b": b, "c": c}, {"y": ar + br, "wide": np.broadcast_to(cr, (2, 3, 6))},
              {"shape": np.array([2, 1, 6], np.int64)}, rtol=1e-6, atol_scale=0)


with tempfile.TemporaryDirectory() as d:
    B = Bench(DVP, d)
    kernels_part(d)
    onnx_part(d)

for f in B.failures:
    print("FAIL:", f)
sys.exit(1 if B.failures else 0)
