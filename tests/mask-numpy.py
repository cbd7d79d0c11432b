#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Comparisons, logic and Where (the ops of attention masks), against NumPy.
#
# The element-wise kernel's compare ops (eq, ne, lt, le, gt, ge: vcmp's bits selecting 1 or 0),
# not, where, and where with a value of one element (where_else, where_then, where_both: the vector
# unit's scalar) (library: elementwise), on both presets: f16 over 100003 elements (whole tiles, a
# tail of whole blocks and a ragged last block), f32 over 37 and over 5 (under one block). The
# inputs are small integers, so that many pairs are equal, with NaN, -0 and infinities among them.
# Each z must equal NumPy's bit for bit, and each run carries the kernel's own check.
#
# Then ONNX graphs (dvp run model.onnx --check-layers) against NumPy's evaluation of the same graph:
# GPT-2's causal mask as Hugging Face exports it (a bool buffer sliced to the scores' size, Where
# it is false the scores give way to finfo(float32).min, then Softmax); a padding mask from the
# token ids' attention_mask (Equal to 0, Where -10000 else 0, added to the scores); comparisons of
# activations cast to float and multiplied; Not, And, Or, Xor of bool graph inputs; a Where of three
# f32 activations broadcast; a leaky ReLU written as Where(x > 0, x, 0.1 x) on a feature map of 24
# channels (its pad channels: 0 <= 0 is 1 there, cleared before the conv after it reads them), and a
# Cast of the map to bool. Refused with the node named: a comparison of f16 scores with 1e5.
#
# Usage: mask-numpy.py DVP   (needs python3-numpy and python3-onnx)
import os
import subprocess
import sys

import numpy as np

from numpy_graphs import elementwise_scenario, run_parts

DVP = sys.argv[1]
NP = {"f16": np.float16, "f32": np.float32}
rng = np.random.default_rng(29)


OPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
       "ge": np.greater_equal}


def values(dt, n):
    """Small integers (ties are common), with NaN, -0, +-inf and 0.5 sprinkled in."""
    v = rng.integers(-3, 4, n).astype(NP[dt])
    special = np.array([np.nan, -0.0, np.inf, -np.inf, 0.5], NP[dt])
    at = rng.integers(0, n, max(1, n // 50))
    v[at] = special[rng.integers(0, len(special), at.size)]
    return v


def kernel_runs(B):
    d = B.d
    for dt, n in (("f16", 100003), ("f32", 37), ("f32", 5)):
        x, y, w = values(dt, n), values(dt, n), values(dt, n)
        with np.errstate(invalid="ignore"):
            cases = [(op, [x, y], f(x, y)) for op, f in OPS.items()]
        cases += [("not", [x], x == 0), ("where", [x, y, w], np.where(x != 0, y, w)),
                  ("where_else", [x, y], np.where(x != 0, y, -2.5)), ("where_then", [x, y], np.where(x != 0, -2.5, y)),
                  ("where_both", [x], np.where(x != 0, -2.5, 7.0))]
        for op, ins, want in cases:
            params = ", alpha: -2.5, beta: 7" if op == "where_both" else ", alpha: -2.5" if "where_" in op else ""
            want = want.astype(NP[dt])
            names = ["x", "y", "w"][:len(ins)]
            for name, v in zip(names, ins):
                np.save(os.path.join(d, name + ".npy"), v)
            for preset in ("ascend310", "ascend910"):
                what = f"elementwise {op} {dt} n={n} on {preset}"
                out = B.run(elementwise_scenario(preset, op, dt, n, names, params), what)
                if out is None:
                    continue
                z = np.load(os.path.join(out, "z.npy")).ravel()
                bits = np.uint16 if dt == "f16" else np.uint32
                if z.shape != want.shape or not np.array_equal(z.view(bits), want.view(bits)):
                    i = int(np.flatnonzero(z.view(bits) != want.view(bits))[0]) if z.shape == want.shape else 0
                    B.fail(f"{what}: differs from NumPy's first at {i}: {z[i]} vs {want[i]} "
                           f"(inputs {[float(v[i]) for v in ins]})")
                else:
                    print("ok  ", what)


MASKED = """
name: masked
platform: {{preset: {preset}}}
kernels:
  - name: k
    library: softmax
    shape: {{dtype: {dt}, rows: {rows}, cols: {s}, scale: {scale}, mask_rows: {mask_rows}, mask_fill: {fill}}}
    tensors:
      - {{name: x, dtype: {dt}, shape: [{rows}, {s}], file: x.npy}}
      - {{name: m, dtype: {dt}, shape: [{mask_rows}, {s}], file: m.npy}}
      - {{name: z, dtype: {dt}, shape: [{rows}, {s}], save: z.npy}}
    args: [x, m, z]
    check: {{op: softmax, cols: {s}, scale: {scale}, inputs: [x, m], output: z, atol: 1e-3, rtol: 1e-3}}
run: {{trace: false}}
checks:
  - {{metric: summary.kernel_checks_failed, max: 0}}
"""


def masked_softmax_runs(B):
    """The softmax kernel with a mask (mask_rows): z = softmax(where(mask row r % mask_rows, scale x,
    fill)), against NumPy: rows of only a tail (64 f16), of whole repeats and a tail (144 f16), of
    whole repeats (1024 f16), f32 (40, 208); a mask for every head (S rows) and one per head; a row
    masked whole (uniform); mask values other than 1 (any nonzero is true). A row of 100 f16 (not
    whole 32-byte blocks) is refused naming the kernel's shape."""
    cases = [("f16", 64, 4, 1, -65504.0), ("f16", 144, 3, 3, -65504.0), ("f16", 1024, 2, 1, -30000.0),
             ("f32", 40, 3, 1, -3.4e38), ("f32", 208, 2, 2, -1e30)]
    for dt, s, heads, per_head, fill in cases:
        x = (rng.standard_normal((heads * s, s)) * 4).astype(NP[dt])
        m = np.tril(rng.integers(1, 4, (s, s))).astype(NP[dt])  # nonzero below the diagonal
        m[s // 2] = 0  # a row masked whole
        m = np.tile(m, (per_head, 1))
        np.save(os.path.join(B.d, "x.npy"), x)
        np.save(os.path.join(B.d, "m.npy"), m)
        scale = 0.125
        v = np.where(np.tile(m, (heads // per_head, 1)) != 0, (x * NP[dt](scale)).astype(np.float64),
                     NP[dt](fill).astype(np.float64))
        with np.errstate(invalid="ignore"):
            e = np.exp(v - v.max(-1, keepdims=True))
            want = e / e.sum(-1, keepdims=True)
        for preset in ("ascend310", "ascend910"):
            what = f"masked softmax {dt} {heads * s} x {s}, mask of {per_head * s} rows, fill {fill:g} on {preset}"
            out = B.run(MASKED.format(preset=preset, dt=dt, rows=heads * s, s=s, scale=scale, mask_rows=per_head * s,
                                      fill=fill), what)
            if out is None:
                continue
            z = np.load(os.path.join(out, "z.npy")).astype(np.float64)
            with np.errstate(invalid="ignore"):
                ok = (np.abs(z - want) <= 1e-3) | (np.isnan(z) & np.isnan(want))
            if not ok.all():
                i = np.unravel_index(np.argmin(ok), ok.shape)
                B.fail(f"{what}: off NumPy's at {i}: {z[i]} vs {want[i]}")
            else:
                print("ok  ", what)
    np.save(os.path.join(B.d, "x.npy"), np.zeros((200, 100), np.float16))
    np.save(os.path.join(B.d, "m.npy"), np.ones((100, 100), np.float16))
    with open(os.path.join(B.d, "s.yaml"), "w") as f:
        f.write(MASKED.format(preset="ascend310", dt="f16", rows=200, s=100, scale=1, mask_rows=100, fill=-1))
    r = subprocess.run([B.dvp, "run", os.path.join(B.d, "s.yaml"), "--out", os.path.join(B.d, "bad")],
                       capture_output=True, text=True)
    if r.returncode != 2 or "a mask takes rows of whole 32-byte blocks" not in r.stderr or "shape" not in r.stderr:
        B.fail(f"masked softmax of 100 f16 columns: exit {r.returncode}, {r.stderr.strip()[-200:]}")
    else:
        print("ok   masked softmax of 100 f16 columns refused:", r.stderr.strip()[-100:])
    # A check of a masked kernel that does not read its mask is refused (it would check another softmax).
    with open(os.path.join(B.d, "s.yaml"), "w") as f:
        f.write(MASKED.format(preset="ascend310", dt="f16", rows=128, s=64, scale=1, mask_rows=64, fill=-1)
                .replace("inputs: [x, m]", "inputs: [x]"))
    np.save(os.path.join(B.d, "x.npy"), np.zeros((128, 64), np.float16))
    np.save(os.path.join(B.d, "m.npy"), np.ones((64, 64), np.float16))
    r = subprocess.run([B.dvp, "run", os.path.join(B.d, "s.yaml"), "--out", os.path.join(B.d, "bad")],
                       capture_output=True, text=True)
    if r.returncode != 2 or "its check reads it" not in r.stderr:
        B.fail(f"masked softmax checked without its mask: exit {r.returncode}, {r.stderr.strip()[-200:]}")
    else:
        print("ok   masked softmax checked without its mask refused:", r.stderr.strip()[-90:])


def softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mask_graphs(B):
    from onnx import helper
    mk = helper.make_node
    f64 = np.float64
    s, heads, dh = 6, 2, 8
    # GPT-2 (Hugging Face): w = q k^T; w = where(bias[:, :, :s, :s], w, finfo(float32).min); softmax.
    q = rng.normal(0, 1, (1, heads, s, dh)).astype(np.float32)
    kt = rng.normal(0, 1, (1, heads, dh, s)).astype(np.float32)
    bias = np.tril(np.ones((1, 1, 16, 16), bool))
    fill = np.array(np.finfo(np.float32).min, np.float32)
    w = q.astype(f64) @ kt
    want = softmax(np.where(bias[:, :, :s, :s], w, -np.inf))
    nodes = [mk("MatMul", ["q", "kt"], ["w"]), mk("Slice", ["bias", "z2", "ss", "a23"], ["causal"]),
             mk("Where", ["causal", "w", "fill"], ["wm"]), mk("Softmax", ["wm"], ["p"], axis=-1)]
    B.run_graph("gpt2-where", nodes, {"q": q, "kt": kt}, {"p": want},
                {"bias": bias, "fill": fill, "z2": np.array([0, 0], np.int64), "ss": np.array([s, s], np.int64),
                 "a23": np.array([2, 3], np.int64)}, opset=13)
    # The same at 64 tokens, the scores divided by sqrt(8) first, compiled for ascend910 (32 AI Cores:
    # the Where and the Div fused into the softmax kernel, its mask the buffer's rows) and ascend310 (2
    # cores and scores far under a quarter of its L2: three kernels).
    s64 = 64
    q64 = rng.normal(0, 1, (1, heads, s64, dh)).astype(np.float32)
    kt64 = rng.normal(0, 1, (1, heads, dh, s64)).astype(np.float32)
    causal = np.tril(np.ones((1, 1, 128, 128), bool))
    want = softmax(np.where(causal[:, :, :s64, :s64], q64.astype(f64) @ kt64 / np.sqrt(8), -np.inf))
    nodes = [mk("MatMul", ["q", "kt"], ["w"]), mk("Div", ["w", "root"], ["ws"]),
             mk("Slice", ["bias", "z2", "ss", "a23"], ["causal"]), mk("Where", ["causal", "ws", "fill"], ["wm"]),
             mk("Softmax", ["wm"], ["p"], axis=-1)]
    inits = {"bias": causal, "fill": fill, "root": np.array(np.sqrt(8), np.float32), "z2": np.array([0, 0], np.int64),
             "ss": np.array([s64, s64], np.int64), "a23": np.array([2, 3], np.int64)}
    for preset, fused in (("ascend910", True), ("ascend310", False)):
        name = "gpt2-masked-softmax-" + preset
        B.run_graph(name, nodes, {"q": q64, "kt": kt64}, {"p": want}, inits, opset=13, args=("--preset", preset))
        text = open(os.path.join(B.d, "net-" + name, "compiled", "model.yaml")).read()
        if ("ops: Softmax+Where" in text) != fused or ("mask_rows: 64" in text) != fused or ("ops: Div" in text) == fused:
            B.fail(f"onnx {name}: the Where and the Div {'not ' if fused else ''}fused into the softmax kernel")
    # Scores times -0.5 before the mask, on ascend910: the masked softmax takes a positive scale
    # only, so the Mul stays a kernel of its own (its check against NumPy's).
    nodes = [mk("MatMul", ["q", "kt"], ["w"]), mk("Mul", ["w", "neg"], ["ws"]),
             mk("Slice", ["bias", "z2", "ss", "a23"], ["causal"]), mk("Where", ["causal", "ws", "fill"], ["wm"]),
             mk("Softmax", ["wm"], ["p"], axis=-1)]
    want = softmax(np.where(causal[:, :, :s64, :s64], q64.astype(f64) @ kt64 * -0.5, -np.inf))
    B.run_graph("masked-softmax-negative-scale", nodes, {"q": q64, "kt": kt64}, {"p": want},
                {**inits, "neg": np.array(-0.5, np.float32)}, opset=13, args=("--preset", "ascend910"))
    # A padding mask from attention_mask: (mask == 0) -> -10000, else 0, added to the scores.
    am = np.array([[1, 1, 1, 1, 0, 0]], np.int64)
    nodes = [mk("MatMul", ["q", "kt"], ["w"]), mk("Equal", ["am", "zero"], ["pad"]),
             mk("Where", ["pad", "big", "nought"], ["add"]), mk("Unsqueeze", ["add", "ax12"], ["add4"]),
             mk("Add", ["w", "add4"], ["wm"]), mk("Softmax", ["wm"], ["p"], axis=-1)]
    want = softmax(w + np.where(am == 0, -10000.0, 0.0)[:, None, None, :])
    B.run_graph("padding-mask", nodes, {"q": q, "kt": kt, "am": am}, {"p": want},
                {"zero": np.array(0, np.int64), "big": np.array(-10000.0, np.float32),
                 "nought": np.array(0.0, np.float32), "ax12": np.array([1, 2], np.int64)}, opset=13)
    # Comparisons of activations, cast to float and multiplied back; Not, And, Or, Xor of bools.
    x = rng.integers(-4, 5, (3, 40)).astype(np.float32)
    t = rng.integers(-4, 5, (3, 40)).astype(np.float32)
    xr, tr = np.maximum(x, 0).astype(f64), np.maximum(t, 0).astype(f64)
    nodes = [mk("Relu", ["x"], ["xr"]), mk("Relu", ["t"], ["tr"])]
    want = {}
    for op, f in (("Greater", np.greater), ("LessOrEqual", np.less_equal), ("Equal", np.equal),
                  ("GreaterOrEqual", np.greater_equal), ("Less", np.less)):
        nodes += [mk(op, ["xr", "tr"], [op + "_b"]), mk("Cast", [op + "_b"], [op + "_f"], to=1),
                  mk("Mul", [op + "_f", "xr"], [op])]
        want[op] = f(xr, tr) * xr
    B.run_graph("compare", nodes, {"x": x, "t": t}, want, rtol=0, atol_scale=0)
    a, b = rng.integers(0, 2, (2, 3, 17)).astype(bool), rng.integers(0, 2, (17,)).astype(bool)
    nodes = [mk("Not", ["a"], ["na"]), mk("And", ["na", "b"], ["nab"]), mk("Or", ["a", "b"], ["ob"]),
             mk("Xor", ["nab", "ob"], ["x1"]), mk("Cast", ["x1"], ["y"], to=1), mk("Cast", ["nab"], ["y2"], to=1)]
    B.run_graph("logic", nodes, {"a": a, "b": b}, {"y": ((~a & b) ^ (a | b)).astype(f64), "y2": (~a & b).astype(f64)},
                rtol=0, atol_scale=0)
    # Where of three f32 inputs, broadcast: c (2 x 1 x 5), x (3 x 5), y (2 x 3 x 1).
    c = rng.integers(0, 2, (2, 1, 5)).astype(bool)
    xa = rng.normal(0, 100, (3, 5)).astype(np.float32)
    ya = rng.normal(0, 100, (2, 3, 1)).astype(np.float32)
    B.run_graph("where-bcast", [mk("Where", ["c", "xa", "ya"], ["y"])], {"c": c, "xa": xa, "ya": ya},
                {"y": np.where(c, xa, ya).astype(f64)}, rtol=0, atol_scale=0)
    B.refused("compare-range", [mk("MatMul", ["q", "kt"], ["w"]), mk("Greater", ["w", "huge"], ["g"]),
                                mk("Cast", ["g"], ["y"], to=1)],
              {"q": q, "kt": kt}, [1, heads, s, s], ["(Greater)", "past the range of f16"],
              {"huge": np.array(1e5, np.float32)})


def edges(B):
    """What helper-52's review found: a row masked whole by finfo(float32).min (left padding under a
    causal mask) gives a uniform Softmax, not NaN, and the mask value times 0 is 0: Where holds it as
    -65504, f16's bound, as Hugging Face masks in f16; a Where that is a graph output saves -65504
    there (its check: the reference as f16 holds it); masked_fill(-inf) keeps -inf. Token ids compared with a pad id and read by a
    Gather (in either order: the ids placed s32 for the Gather are cast to f32 for the comparison,
    or placed f32 by it and cast to s32 for the Gather), and an ArgMax's indices compared with a
    label and cast to bool (s32 values cast to f32 first); a scalar input against a scalar constant."""
    from onnx import helper
    mk = helper.make_node
    f64 = np.float64
    s = 4
    q = rng.normal(0, 1, (1, 1, s, 8)).astype(np.float32)
    kt = rng.normal(0, 1, (1, 1, 8, s)).astype(np.float32)
    m = np.tril(np.ones((1, 1, s, s), bool))
    m[0, 0, 0, :] = False
    fill = np.array(np.finfo(np.float32).min, np.float32)
    w = q.astype(f64) @ kt
    consts = {"m": m, "fill": fill, "zero": np.zeros((1, 1, 1, s), np.float32)}
    nodes = [mk("MatMul", ["q", "kt"], ["w"]), mk("Where", ["m", "w", "fill"], ["wm"]),
             mk("Softmax", ["wm"], ["p"], axis=-1), mk("Mul", ["wm", "zero"], ["z"]), mk("Identity", ["wm"], ["wo"])]
    B.run_graph("masked-row", nodes, {"q": q, "kt": kt},
                {"p": softmax(np.where(m, w, float(fill))), "z": np.zeros((1, 1, s, s)),
                 "wo": np.where(m, w, -65504.0)}, consts, opset=13)
    # masked_fill(-inf): an infinity is no scalar parameter; it stays a tensor of it, kept -inf.
    ninf = np.where(np.tril(np.ones((s, s), bool)), w, -np.inf)
    nodes = [mk("MatMul", ["q", "kt"], ["w"]), mk("Where", ["tri", "w", "ninf"], ["wm"]),
             mk("Softmax", ["wm"], ["p"], axis=-1), mk("Identity", ["wm"], ["wo"])]
    B.run_graph("masked-inf", nodes, {"q": q, "kt": kt}, {"p": softmax(ninf), "wo": ninf},
                {"tri": np.tril(np.ones((1, 1, s, s), bool)), "ninf": np.array(-np.inf, np.float32)}, opset=13)
    ids = np.array([[50257, 50256, 3, 50250, 1]], np.int64)
    emb = rng.normal(0, 1, (50300, 8)).astype(np.float32)
    want = {"y": (ids == 50256).astype(f64), "hr": np.maximum(emb[ids], 0).astype(f64)}
    gather, equal = mk("Gather", ["emb", "ids"], ["h"]), mk("Equal", ["ids", "pad"], ["e"])
    rest = [mk("Cast", ["e"], ["y"], to=1), mk("Relu", ["h"], ["hr"])]
    for name, first in (("ids-gather-first", [gather, equal]), ("ids-equal-first", [equal, gather])):
        B.run_graph(name, first + rest, {"ids": ids}, want, {"pad": np.array(50256, np.int64), "emb": emb},
                    rtol=1e-3, atol_scale=1e-3)
    # A scalar graph input (a threshold) against a scalar constant: the constant's file of one
    # element (shape () did not load into its tensor of 1).
    c0 = np.array(0.5, np.float32)
    B.run_graph("scalars", [mk("Greater", ["k0", "c0"], ["g"]), mk("Cast", ["g"], ["y"], to=1),
                            mk("Sub", ["k0", "c0"], ["d"])], {"c0": c0}, {"y": np.array(1.0), "d": np.array(1.5)},
                {"k0": np.array(2.0, np.float32)}, rtol=0, atol_scale=0)
    x = rng.normal(0, 1, (2, 10)).astype(np.float32)
    nodes = [mk("ArgMax", ["x"], ["a"], axis=1, keepdims=0), mk("Equal", ["a", "three"], ["e"]),
             mk("Cast", ["e"], ["y"], to=1), mk("Cast", ["a"], ["b"], to=9), mk("Cast", ["b"], ["y2"], to=1)]
    B.run_graph("argmax-label", nodes, {"x": x}, {"y": (x.argmax(1) == 3).astype(f64),
                                                  "y2": (x.argmax(1) != 0).astype(f64)},
                {"three": np.array(3, np.int64)}, rtol=0, atol_scale=0)


def map_graph(B):
    """A leaky ReLU written out on a map of 24 channels: where(c > 0, c, 0.1 c), then a 1 x 1 conv;
    c <= 0 cast to float as a second output (1 in the pad channels until cleared); c - 0.5 cast to
    bool (a ne with 0) selecting c or 0."""
    from onnx import helper
    mk = helper.make_node
    f64 = np.float64
    x = rng.normal(0, 1, (1, 8, 5, 7)).astype(np.float32)
    k1 = rng.normal(0, 0.5, (24, 8, 1, 1)).astype(np.float32)
    k2 = rng.normal(0, 0.5, (4, 24, 1, 1)).astype(np.float32)
    c = np.einsum("oc,nchw->nohw", k1[:, :, 0, 0].astype(f64), x.astype(f64))
    r = np.where(c > 0, c, 0.1 * c)
    y = np.einsum("oc,nchw->nohw", k2[:, :, 0, 0].astype(f64), r)
    nodes = [mk("Conv", ["x", "k1"], ["c"]), mk("Greater", ["c", "zero"], ["pos"]), mk("Mul", ["c", "tenth"], ["ct"]),
             mk("Where", ["pos", "c", "ct"], ["r"]), mk("Conv", ["r", "k2"], ["y"]),
             mk("LessOrEqual", ["c", "zero"], ["neg"]), mk("Cast", ["neg"], ["negf"], to=1),
             mk("Conv", ["negf", "k2"], ["yn"]), mk("Sub", ["c", "half"], ["ch"]), mk("Cast", ["ch"], ["cb"], to=9),
             mk("Where", ["cb", "c", "zero"], ["yb"]), mk("Where", ["pos", "two", "minus3"], ["yw"])]
    ch = (c.astype(np.float16) - np.float16(0.5)).astype(f64)  # as the map holds c: in f16
    B.run_graph("map-where", nodes, {"x": x}, {"y": y, "yn": np.einsum("oc,nchw->nohw", k2[:, :, 0, 0].astype(f64),
                                                                       (c <= 0).astype(f64)),
                                               "yb": np.where(ch != 0, c, 0.0), "yw": np.where(c > 0, 2.0, -3.0)},
                {"k1": k1, "k2": k2, "zero": np.array(0, np.float32), "tenth": np.array(0.1, np.float32),
                 "half": np.array(0.5, np.float32), "two": np.array(2, np.float32),
                 "minus3": np.array(-3, np.float32)})


run_parts(DVP, [kernel_runs, masked_softmax_runs, mask_graphs, edges, map_graph])
