#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Slice and Split, against NumPy.
#
# The slice kernels, y[o][r][i] = x[start + o outer_stride + r row_stride + i], on both presets:
# - the AI Core's (library: slice): a third of a fused qkv row (128 x 768 of 2304 f16); every other
#   column of a map (64 x 28 runs of one block, two apart: merged into one gather); rows of 70000
#   f32 (longer than half the UB: chunks); one run of 300000 f16 (a copy, in chunks over every
#   core); rows that overlap (a stride of half a run) and rows of stride 0 (each run again); rows
#   further apart than a copy's gap (2.2 M elements); s8; 4097 rows of a block (past a copy's 4095
#   bursts: a short last piece); 37 rows of 8 f32 among 2 or 32 cores. Each must equal NumPy's
#   x.flat[index] bit for bit, and y's tensor past the slice (to its page's end and beyond) must be
#   untouched.
# - the AI CPU's (aicpu: slice: byte copies): rows backward (a negative row_stride), runs of 3 bytes,
#   runs of 6 bytes (3 f16) 10 bytes apart.
# Each run also carries the kernel's own check (op: slice), which must pass; slices whose numbers
# would run past their tensors are refused naming the key.
#
# Then ONNX graphs (dvp run model.onnx --check-layers) against NumPy's evaluation of the same graph:
# a fused qkv projection split in three (Split, opset 13's split input) and q k v used; opset 18's
# Split by num_outputs (10 in halves; 11 in 2, its last part smaller, refused by name); a map's channel halves (YOLOv8's C2f chunk: Split of a
# conv's output, one half through a conv, then Concat), its channel group 16..32, and its rows and
# columns at step 2 (Slice on NC1HWC0); the last token (x[:, -1:]), x[:, 2:] with INT64_MAX as the
# end, tokens reversed (step -1: the AI CPU), x[..., ::3] of f32 (runs of 4 bytes: the AI CPU);
# opset 9's Slice of attributes; a causal mask sliced from a constant buffer to the scores' size (GPT-2:
# folded when compiled) and added; token ids sliced (ids[:, :-1], int64: placed s32) before a
# Gather; a Slice whose end is computed from the input's Shape (a dynamic export: folded); a Split
# at --batch 2; the edges reviews found (edges_part). Refused with the node named: a map's channels from 8, ends computed from an
# activation, a slice of the batch's axis at --batch 2.
#
# Usage: slice-numpy.py DVP   (needs python3-numpy and python3-onnx)
import os
import subprocess
import sys

import numpy as np

from numpy_graphs import run_parts

DVP = sys.argv[1]
NP = {"f16": np.float16, "f32": np.float32, "s8": np.int8}
MAX, MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min

# dtype, outer, rows, inner, outer_stride, row_stride, start
CORE_SHAPES = [("f16", 1, 128, 768, 0, 2304, 768), ("f16", 64, 28, 16, 896, 32, 16), ("f32", 1, 2, 70000, 0, 100000, 8),
               ("f16", 1, 1, 300000, 0, 0, 1024), ("f32", 1, 10, 16, 0, 8, 0), ("f16", 3, 5, 16, 32, 0, 0),
               ("f16", 1, 3, 16, 0, 2200000, 0), ("s8", 2, 7, 64, 1024, 96, 32), ("f16", 1, 4097, 16, 0, 32, 16),
               ("f32", 1, 37, 8, 0, 24, 8)]
# dtype, outer, rows, inner, outer_stride, row_stride (negative: backward), start (elements)
CPU_SHAPES = [("f32", 3, 7, 1, 7, -1, 6), ("s8", 4, 5, 3, 20, 4, 1), ("f16", 2, 4, 3, 20, 5, 2)]

CORE = """
name: slice
platform: {{preset: {preset}}}
kernels:
  - name: s
    library: slice
    shape: {{dtype: {dt}, outer: {outer}, rows: {rows}, inner: {inner}, outer_stride: {ostride}, row_stride: {rstride},
             start: {start}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{xn}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{yn}], file: y0.npy, save: y.npy}}
    args: [x, y]
    check: {{op: slice, inputs: [x], output: y}}
run: {{trace: false}}
checks:
  - {{metric: summary.kernel_checks_failed, max: 0}}
"""

CPU = """
name: slice-aicpu
platform: {{preset: {preset}}}
firmware: {{image: runtime, cores: [0, 4]}}
kernels:
  - name: s
    aicpu: slice
    tensors:
      - {{name: x, dtype: {dt}, shape: [{xn}], file: x.npy}}
      - {{name: y, dtype: {dt}, shape: [{yn}], file: y0.npy, save: y.npy}}
    args: [y, x, {outer}, {ostride_b}, {rows}, {rstride_b}, {run_b}, {start_b}]
    check: {{op: slice, inputs: [x], output: y}}
tasks:
  - {{kernel: s}}
run: {{trace: false}}
checks:
  - {{metric: summary.kernel_checks_failed, max: 0}}
"""

rng = np.random.default_rng(13)


def values(dt, n):
    if dt == "s8":
        return rng.integers(-128, 128, n).astype(np.int8)
    return rng.normal(0, 3, n).astype(NP[dt])


def kernels_part(B):
    d = B.d
    for way, shapes in (("core", CORE_SHAPES), ("cpu", CPU_SHAPES)):
        for dt, outer, rows, inner, ostride, rstride, start in shapes:
            o, r, i = np.meshgrid(np.arange(outer), np.arange(rows), np.arange(inner), indexing="ij")
            index = start + o * ostride + r * rstride + i
            x = values(dt, int(index.max()) + 1 + 5)
            np.save(os.path.join(d, "x.npy"), x)
            want = x[index]
            eb = x.itemsize
            # y's tensor runs on past the slice to the end of its 4 KiB page and 64 elements more,
            # all 7 (the kernel's own check compares only the slice): a write past the slice shows.
            yn = (want.size * eb + 4095) // 4096 * 4096 // eb + 64
            np.save(os.path.join(d, "y0.npy"), np.full(yn, 7, x.dtype))
            for preset in ("ascend310", "ascend910"):
                what = f"slice ({way}) {dt} {outer} x {rows} x {inner}, strides {ostride}, {rstride}, from {start} on {preset}"
                text = (CORE if way == "core" else CPU).format(
                    preset=preset, dt=dt, outer=outer, rows=rows, inner=inner, ostride=ostride, rstride=rstride,
                    start=start, xn=x.size, yn=yn, ostride_b=ostride * eb, rstride_b=rstride * eb, run_b=inner * eb,
                    start_b=start * eb)
                out = B.run(text, what)
                if out is None:
                    continue
                saved = np.load(os.path.join(out, "y.npy")).ravel()
                y = saved[:want.size].reshape(want.shape)
                if not np.array_equal(y.view(np.uint8), want.view(np.uint8)):
                    bad = tuple(np.argwhere(y != want)[0])
                    B.fail(f"{what}: differs from NumPy's first at {bad}: {y[bad]} vs {want[bad]}")
                elif not np.all(saved[want.size:] == 7):
                    B.fail(f"{what}: wrote past the slice, first at element {want.size + np.argmax(saved[want.size:] != 7)}")
                else:
                    print("ok  ", what)


def bad_scenarios(B):
    """Slices whose numbers would run past their tensors are refused when the scenario is read (exit
    2), naming the key: a library slice whose y would hold 2^72 elements (wrapping to 0 in 64 bits
    it passed and wrote past y), an AI CPU slice reading before x (rows backward from too early a
    start), a negative start."""
    d = B.d
    np.save(os.path.join(d, "xw.npy"), np.zeros(64, np.float16))
    core = """
name: bad
platform: {preset: ascend310}
kernels:
  - name: s
    library: slice
    shape: {dtype: f16, outer: 16777216, rows: 16777216, inner: 65536, outer_stride: 0, row_stride: 0}
    tensors:
      - {name: x, dtype: f16, shape: [64], file: xw.npy}
      - {name: y, dtype: f16, shape: [16]}
    args: [x, y]
"""
    cpu = """
name: bad
platform: {preset: ascend310}
firmware: {image: runtime, cores: [0, 4]}
kernels:
  - name: s
    aicpu: slice
    tensors:
      - {name: x, dtype: f32, shape: [2, 12, 10], init: random, seed: 5}
      - {name: y, dtype: f32, shape: [2, 12, 10]}
    args: [y, x, 2, 480, 12, -40, 40, START]
tasks:
  - {kernel: s}
"""
    for text, words in ((core, ["kernels[0].shape", "past any DRAM"]),
                        (cpu.replace("START", "400"), ["kernels[0].args[1]", "read from byte -40"]),
                        (cpu.replace("START", "-8"), ["kernels[0].args[7]", "is negative"])):
        path = os.path.join(d, "bad.yaml")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([B.dvp, "run", path, "--quiet", "--out", os.path.join(d, "bad")], capture_output=True,
                           text=True)
        if r.returncode != 2 or not all(w in r.stderr for w in words):
            B.fail(f"bad slice scenario ({words[1]}): exit {r.returncode}, {r.stderr.strip()[-300:]}")
        else:
            print("ok   refused:", r.stderr.strip()[-100:])


def i64(*v):
    return np.array(v, np.int64)


def transformer_part(B):
    from onnx import helper
    mk = helper.make_node
    f64 = np.float64
    # A fused qkv projection (f16 activations) split in three; q k^T-like products of the parts.
    x = rng.normal(0, 1, (1, 6, 40)).astype(np.float32)
    w = rng.normal(0, 0.2, (40, 96)).astype(np.float32)
    h = x.astype(f64) @ w
    q, k, v = h[..., :32], h[..., 32:64], h[..., 64:]
    nodes = [mk("MatMul", ["x", "w"], ["qkv"]), mk("Split", ["qkv", "sizes"], ["q", "k", "v"], axis=-1),
             mk("Mul", ["q", "k"], ["qk"]), mk("Relu", ["v"], ["vr"]),
             mk("Slice", ["qkv", "s1", "e1", "a1"], ["last"]), mk("Slice", ["qkv", "s2", "e2", "a2"], ["tail"])]
    B.run_graph("qkv", nodes, {"x": x}, {"qk": q * k, "vr": np.maximum(v, 0), "last": h[:, -1:], "tail": h[:, 2:]},
                {"w": w, "sizes": i64(32, 32, 32), "s1": i64(-1), "e1": i64(MAX), "a1": i64(1), "s2": i64(2),
                 "e2": i64(MAX), "a2": i64(-2)}, opset=13)
    # Opset 18's Split by num_outputs (an axis of 10 in halves), and a slice backward and one of
    # step 3 (f32 runs of 4 bytes: the AI CPU).
    t = rng.normal(0, 1, (2, 10, 5)).astype(np.float32)
    tr = np.maximum(t.astype(f64), 0)
    nodes = [mk("Relu", ["t"], ["tr"]), mk("Split", ["tr"], ["p0", "p1"], axis=1, num_outputs=2),
             mk("Slice", ["tr", "sb", "eb", "ab", "stb"], ["back"]), mk("Slice", ["tr", "s3", "e3", "a3", "st3"], ["third"])]
    B.run_graph("split18", nodes, {"t": t}, {"p0": tr[:, :5], "p1": tr[:, 5:], "back": tr[:, ::-1],
                                          "third": tr[..., 1::3]},
                {"sb": i64(-1), "eb": i64(MIN), "ab": i64(1), "stb": i64(-1), "s3": i64(1), "e3": i64(5), "a3": i64(2),
                 "st3": i64(3)}, rtol=0, atol_scale=0, opset=18)
    # Its last part smaller (11 in 2): read as opset 17's equal parts, refused by name.
    u = rng.normal(0, 1, (2, 11)).astype(np.float32)
    B.refused("split18-uneven", [mk("Relu", ["u"], ["ur"]), mk("Split", ["ur"], ["y", "y2"], axis=1, num_outputs=2)],
              {"u": u}, [2, 6], ["(Split)", "does not split into 2 equal parts"], opset=18)
    # Opset 9: Slice's attributes.
    B.run_graph("slice9", [mk("Relu", ["t"], ["tr"]), mk("Slice", ["tr"], ["y"], starts=[1, -3], ends=[2, 1000],
                                                          axes=[0, 2])],
                {"t": t}, {"y": tr[1:2, :, -3:]}, rtol=0, atol_scale=0, opset=9)
    # A causal mask sliced from a constant buffer (GPT-2's bias[:, :, :S, :S], folded when compiled)
    # added to scores; token ids sliced (ids[:, :-1]) before an embedding's Gather; the end of a
    # Slice computed from the input's Shape (a dynamic export's x[:, :n - 1]: folded).
    s = 5
    sc = rng.normal(0, 1, (1, 2, s, s)).astype(np.float32)
    buf = np.triu(np.full((1, 1, 8, 8), -10000.0, np.float32), 1)
    ids = rng.integers(0, 50, (1, 7)).astype(np.int64)
    emb = rng.normal(0, 1, (50, 16)).astype(np.float32)
    consts = {"zero1": i64(0), "minus1": i64(-1), "one": i64(1), "one0": np.array(1, np.int64), "emb": emb}
    nodes = [mk("Slice", ["buf", "zero2", "ss", "a23"], ["mask"]), mk("Relu", ["sc"], ["sr"]),
             mk("Add", ["sr", "mask"], ["masked"])]
    srr = np.maximum(sc.astype(f64), 0)
    B.run_graph("gpt-mask", nodes, {"sc": sc}, {"masked": srr + buf[:, :, :s, :s]},
                {"buf": buf, "zero2": i64(0, 0), "ss": i64(s, s), "a23": i64(2, 3)}, rtol=1e-6, atol_scale=1e-9)
    nodes = [mk("Slice", ["ids", "zero1", "minus1", "one"], ["cut"]), mk("Gather", ["emb", "cut"], ["e"]),
             mk("Relu", ["e"], ["er"]), mk("Shape", ["er"], ["shp"]), mk("Gather", ["shp", "one0"], ["n"]),
             mk("Sub", ["n", "one0"], ["n1"]), mk("Unsqueeze", ["n1", "zero1"], ["n1v"]),
             mk("Slice", ["er", "zero1", "n1v", "one"], ["short"])]
    er = np.maximum(emb[ids[:, :-1]].astype(f64), 0)  # the table held in f16: a step of f16
    B.run_graph("gpt-ids", nodes, {"ids": ids}, {"er": er, "short": er[:, :er.shape[1] - 1]}, consts,
                rtol=1e-3, atol_scale=1e-3)
    # A Split at a batch of 2 (each image its copies).
    xb = rng.normal(0, 1, (2, 6, 40)).astype(np.float32)
    hb = xb.astype(f64) @ w
    B.run_graph("batch", [mk("MatMul", ["xb", "w"], ["h"]), mk("Split", ["h", "sizes"], ["a", "b", "c"], axis=2)],
                {"xb": xb}, {"a": hb[..., :32], "b": hb[..., 32:64], "c": hb[..., 64:]},
                {"w": w, "sizes": i64(32, 32, 32)}, opset=13, args=["--batch", "2"])


def map_part(B):
    from onnx import helper
    mk = helper.make_node
    f64 = np.float64
    img = rng.normal(0, 1, (1, 8, 12, 10)).astype(np.float32)
    k = rng.normal(0, 0.3, (64, 8, 3, 3)).astype(np.float32)
    k2 = rng.normal(0, 0.3, (16, 32, 1, 1)).astype(np.float32)
    c = conv(img.astype(f64), k, 1)
    r = np.maximum(c, 0)
    d = conv(r[:, 32:], k2, 0)
    # YOLOv8's C2f: the conv's channels in halves (Split), one half through a conv, then Concat;
    # channels 16..32 (one group); rows 2, 4, .. and columns 1, 3, .., 7 (Slice of H and W, step 2).
    nodes = [mk("Conv", ["img", "k"], ["c"], pads=[1, 1, 1, 1]), mk("Relu", ["c"], ["r"]),
             mk("Split", ["r"], ["a", "b"], axis=1), mk("Conv", ["b", "k2"], ["d"]), mk("Concat", ["a", "d"], ["cat"], axis=1),
             mk("Slice", ["r", "s1", "e1", "a1"], ["group"]), mk("Slice", ["r", "s2", "e2", "a2", "st2"], ["every2"])]
    B.run_graph("c2f", nodes, {"img": img}, {"cat": np.concatenate([r[:, :32], d], 1), "group": r[:, 16:32],
                                            "every2": r[:, :, 2::2, 1:9:2]},
                {"k": k, "k2": k2, "s1": i64(16), "e1": i64(32), "a1": i64(1), "s2": i64(2, 1), "e2": i64(MAX, 9),
                 "a2": i64(2, 3), "st2": i64(2, 2)}, opset=13)
    # Refused: channels from 8 of a map (not a group's start).
    B.refused("channels8", [mk("Conv", ["img", "k"], ["c"], pads=[1, 1, 1, 1]), mk("Slice", ["c", "s", "e", "a"], ["y"])],
              {"img": img}, [1, 8, 12, 10], ["(Slice)", "whole groups of 16"],
              {"k": k, "s": i64(8), "e": i64(16), "a": i64(1)}, opset=13)


def edges_part(B):
    """Reviewed edges: a graph input sliced before the conv that reads it too, and sliced into a conv
    and a Relu, and split where only the second half feeds a conv (placed NC1HWC0 by its first
    slice); an f32 graph input sliced (kept f32); the batch axis of a map
    at step 2 and a step of 2^49 (each one element: no copy of that axis); a Split of one output
    beside another reader of its input; a Slice and an Identity of all of a value that is a graph
    output itself, and a Transpose of it that moves an axis of 1 (each saved to its own file)."""
    from onnx import helper
    mk = helper.make_node
    f64 = np.float64
    img = rng.normal(0, 1, (1, 3, 12, 10)).astype(np.float32)
    k = rng.normal(0, 0.3, (16, 3, 3, 3)).astype(np.float32)
    cut = img.astype(f64)[:, :, 2:10, ::2]
    nodes = [mk("Slice", ["img", "s", "e", "a", "st"], ["cut"]), mk("Conv", ["img", "k"], ["whole"], pads=[1, 1, 1, 1]),
             mk("Conv", ["cut", "k"], ["part"], pads=[1, 1, 1, 1]), mk("Slice", ["whole", "s0", "e0", "a0", "st0"], ["b0"]),
             mk("Slice", ["cut", "z", "big", "w", "huge"], ["col0"]), mk("Relu", ["cut"], ["cr"]),
             mk("Split", ["img", "halves"], ["top", "bottom"], axis=2), mk("Conv", ["bottom", "k"], ["bot"])]
    B.run_graph("image", nodes, {"img": img},
                {"whole": conv(img.astype(f64), k, 1), "part": conv(cut, k, 1), "b0": conv(img.astype(f64), k, 1),
                 "col0": cut[..., ::2 ** 49], "cr": np.maximum(cut, 0), "bot": conv(img.astype(f64)[:, :, 6:], k, 0)},
                {"k": k, "s": i64(2, 0), "e": i64(10, MAX), "a": i64(2, 3), "st": i64(1, 2), "s0": i64(0), "e0": i64(1),
                 "a0": i64(0), "st0": i64(2), "z": i64(0), "big": i64(MAX), "w": i64(3), "huge": i64(2 ** 49),
                 "halves": i64(6, 6)},
                opset=13)
    x = rng.normal(0, 1, (1, 4, 32)).astype(np.float32)
    xr = np.maximum(x.astype(f64), 0)
    nodes = [mk("Split", ["x"], ["one"], axis=2), mk("Relu", ["x"], ["r"]), mk("Slice", ["r", "z", "big", "w"], ["all"]),
             mk("Identity", ["r"], ["same"]), mk("Transpose", ["r"], ["moved"], perm=[1, 0, 2])]
    B.run_graph("views", nodes, {"x": x}, {"one": x.astype(f64), "r": xr, "all": xr, "same": xr,
                                           "moved": xr.transpose(1, 0, 2)},
                {"z": i64(0), "big": i64(MAX), "w": i64(2)}, opset=13)
    # An f32 graph input sliced keeps f32 (values past f16's range: exact).
    wide = (rng.normal(0, 1, (1, 5, 8)) * 1e5).astype(np.float32)
    B.run_graph("f32-input", [mk("Slice", ["wide", "one", "three", "one"], ["y"])], {"wide": wide},
                {"y": wide[:, 1:3].astype(f64)}, {"one": i64(1), "three": i64(3)}, rtol=0, atol_scale=0, opset=13)


def conv(x, k, pad):
    """A plain-loop-free convolution (stride 1) in float64, NumPy's own."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = k.shape[2:]
    oh, ow = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    out = np.zeros((x.shape[0], k.shape[0], oh, ow))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + oh, j:j + ow], k[:, :, i, j].astype(np.float64))
    return out


def refusals(B):
    from onnx import helper
    mk = helper.make_node
    # An end computed from an activation (an ArgMax's index); a slice of the batch's axis at a batch of 2.
    x = rng.normal(0, 1, (1, 1, 8)).astype(np.float32)
    B.refused("computed-end", [mk("Relu", ["x"], ["r"]), mk("ArgMax", ["r"], ["am"], axis=2, keepdims=0),
                               mk("Reshape", ["am", "one"], ["end"]), mk("Slice", ["r", "zero", "end", "two"], ["y"])],
              {"x": x}, [1, 1, 1], ["(Slice)", "computed from the activations"],
              {"zero": i64(0), "one": i64(1), "two": i64(2)})
    # A step backward along a 1-D map's L (axis 2 of N x C x L, stored as 1 x C x 1 x L): named so.
    sig = rng.normal(0, 1, (1, 4, 20)).astype(np.float32)
    k1 = rng.normal(0, 0.3, (24, 4, 3)).astype(np.float32)
    B.refused("map1d-back", [mk("Conv", ["sig", "k1"], ["c"], pads=[1, 1]), mk("Slice", ["c", "m", "lo", "two", "m"], ["y"])],
              {"sig": sig}, [1, 24, 20], ["(Slice)", "a step backward along a feature map's axis 2"],
              {"k1": k1, "m": i64(-1), "lo": i64(MIN), "two": i64(2)}, opset=13)
    xb = rng.normal(0, 1, (2, 6, 8)).astype(np.float32)
    B.refused("batch-axis", [mk("Relu", ["xb"], ["r"]), mk("Slice", ["r", "zero", "one", "zero"], ["y"])],
              {"xb": xb}, [1, 6, 8], ["(Slice)", "axis 0 slices the batch"], {"zero": i64(0), "one": i64(1)},
              args=["--batch", "2"])


run_parts(DVP, [kernels_part, bad_scenarios, transformer_part, map_part, edges_part, refusals])
