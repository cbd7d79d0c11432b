#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Pow by a constant and GELU's tanh form (GPT-2's gelu_new), against NumPy.
#
# The element-wise kernel's pows (x^alpha: products for an integral alpha, 1 / x^-alpha below 0,
# e^(alpha ln x) else, computed in f32) and gelu_tanh (library: elementwise), on both presets: f16
# over 100003 elements (whole tiles, a tail of whole blocks, a ragged last block) and f32 over 37
# and over 5, with 0, -0, +-inf, NaN, -1, tiny and large values among normal ones. Each z against
# NumPy's float64 result rounded to the dtype (a few steps of it), and each run carries the kernel's
# own check (atol 1e-3, rtol 4e-3, as the compiler asks of an op of several roundings).
#
# Then ONNX graphs (dvp run model.onnx --check-layers) against NumPy's evaluation of the same graph:
# GPT-2's MLP as Hugging Face exports it (gelu_new: x halved, a Pow of 3, ...), PyTorch's
# GELU(approximate="tanh") (x x x, halved last), gelu_fast's other grouping, each found whole (one
# gelu_tanh kernel); Pows by 3, 2, 1.5, -2, 0 and 0.25 of activations; a Pow of 3 and of 0 on a feature
# map of 24 channels between convs (its pad channels); a Tanh that is no GELU left alone. Refused
# with the node named: Pow by -2 on that map (0^-2 in the pad channels), Pow by a tensor.
#
# Usage: pow-numpy.py DVP   (needs python3-numpy and python3-onnx)
import os
import sys

import numpy as np

from numpy_graphs import elementwise_scenario, run_parts

DVP = sys.argv[1]
NP = {"f16": np.float16, "f32": np.float32}
rng = np.random.default_rng(41)

ALPHAS = [3, -3, 0, 1, 2, 5, 7, -2, 64, -63, 0.5, -0.5, 1.5, -2.5, 0.3333333, 2.2]
# Past 64, e^(m ln |x|): x near 1 (the powers from e^-9 to e^9), either sign, and the specials.
LARGE = [65, 100, -77, 100000, 1048577, 1e8 + 1]


def gelu_tanh(x):
    """x (1 + tanh u) / 2 as x / (1 + e^-2u): in float64 too, 1 + tanh u cancels where u nears -18."""
    with np.errstate(over="ignore"):
        return x / (1 + np.exp(-2 * np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def values(dt, n, alpha=None):
    v = (rng.standard_normal(n) * 2).astype(NP[dt])
    if alpha is not None:  # |x|^alpha from e^-9 to e^9
        v = (np.exp(rng.uniform(-9, 9, n) / abs(alpha)) * rng.choice([-1, 1], n)).astype(NP[dt])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-3, 300.0, -7.0], NP[dt])
    v[:min(n, special.size)] = special[:min(n, special.size)]
    return v


def close(z, want, dt, grow=1.0):
    """z within a few steps of dtype of want (times `grow`); a NaN met by a NaN, an infinity by the same one."""
    step = 2.0 ** (-9 if dt == "f16" else -21) * grow
    # f32: under the least normal number, 0 (x^-63 whose x^63 overflowed first: 1 / inf)
    tiny = 2.0 ** (-24 if dt == "f16" else -126)
    w = want.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ok = (z == want) | (np.isnan(z) & np.isnan(want)) | (np.abs(z.astype(np.float64) - w) <= step * np.abs(w) + tiny)
    return ok


def kernel_runs(B):
    d = B.d
    runs = [(dt, n, a) for dt, n in (("f16", 100003), ("f32", 37), ("f32", 5)) for a in [None] + LARGE[:2 + 4 * (n > 5)]]
    for dt, n, large in runs:
        x = values(dt, n, large)
        np.save(os.path.join(d, "x.npy"), x)
        x64 = x.astype(np.float64)
        with np.errstate(all="ignore"):
            cases = [("pows", a, np.power(x64, a)) for a in (ALPHAS if large is None else [large])]
            cases += [("gelu_tanh", None, gelu_tanh(x64))] if large is None else []
        for op, a, want in cases:
            params = f", alpha: {a:.17g}" if a is not None else ""
            with np.errstate(over="ignore"):
                want = want.astype(NP[dt])
            for preset in ("ascend310", "ascend910") if n > 37 else ("ascend310",):
                what = f"elementwise {op}{params} {dt} n={n} on {preset}"
                out = B.run(elementwise_scenario(preset, op, dt, n, ["x"], params, ", atol: 1e-3, rtol: 4e-3"), what)
                if out is None:
                    continue
                z = np.load(os.path.join(out, "z.npy"))
                # e^v in f32 (v = alpha ln x; gelu_tanh's -2u): v's rounding grows by |v| in e^v; n
                # products: each squaring doubles the error so far, n / 2 steps in all
                with np.errstate(all="ignore"):
                    v = a * np.log(np.abs(x64)) if op == "pows" else 1.6 * (x64 + 0.044715 * x64 ** 3)
                    grow = 1 + np.maximum(np.abs(np.nan_to_num(v, posinf=0, neginf=0)), abs(a or 0) / 2)
                ok = close(z, want, dt, grow)
                if not ok.all():
                    i = np.flatnonzero(~ok)[:4]
                    B.fail(f"{what}: {int((~ok).sum())} elements off NumPy's: x {x[i]}, z {z[i]}, NumPy {want[i]}")
                else:
                    print("ok  ", what)


def mm(name, a, b, out):
    from onnx import helper
    return helper.make_node("MatMul", [a, b], [out], name=name)


def node(op, ins, out, name=None):
    from onnx import helper
    return helper.make_node(op, ins, [out], name=name or out)


def scalars(**kw):
    return {k: np.array(v, np.float32) for k, v in kw.items()}


def fused_once(B, name, op):
    """The compiled model of run `name` holds one kernel of op and no pows."""
    text = open(os.path.join(B.d, "net-" + name, "compiled", "model.yaml")).read()
    kernels = text.count(f"shape: {{op: {op},")
    if kernels != 1 or "shape: {op: pows," in text:
        B.fail(f"onnx {name}: {kernels} {op} kernels (want 1), pows in it: {'op: pows' in text}")


def gelu_graphs(B):
    x = rng.standard_normal((1, 16, 64)).astype(np.float32)
    w1 = (rng.standard_normal((64, 256)) / 8).astype(np.float32)
    b1 = (rng.standard_normal(256) / 4).astype(np.float32)
    w2 = (rng.standard_normal((256, 64)) / 16).astype(np.float32)
    # GPT-2's MLP: c_fc, gelu_new as transformers writes it (the Pow first in the graph), c_proj.
    nodes = [mm("c_fc", "x", "w1", "m1"), node("Add", ["m1", "b1"], "h"),
             node("Pow", ["h", "three"], "p"), node("Mul", ["h", "half"], "hh"), node("Mul", ["p", "kappa"], "q"),
             node("Add", ["h", "q"], "r"), node("Mul", ["r", "beta"], "s"), node("Tanh", ["s"], "t"),
             node("Add", ["t", "one"], "u"), node("Mul", ["hh", "u"], "g"), mm("c_proj", "g", "w2", "y")]
    inits = {"w1": w1, "b1": b1, "w2": w2,
             **scalars(half=0.5, three=3.0, kappa=0.044715, beta=np.sqrt(2 / np.pi), one=1.0)}
    h = x.astype(np.float64) @ w1 + b1
    B.run_graph("gpt2_mlp", nodes, {"x": x}, {"y": gelu_tanh(h) @ w2}, inits)
    fused_once(B, "gpt2_mlp", "gelu_tanh")
    # PyTorch's GELU(approximate="tanh") at opset 17: x x x, halved last; the graph's output.
    nodes = [mm("fc", "x", "w1", "h"), node("Mul", ["h", "h"], "h2"), node("Mul", ["h", "h2"], "h3"),
             node("Mul", ["kappa", "h3"], "q"), node("Add", ["h", "q"], "r"), node("Mul", ["beta", "r"], "s"),
             node("Tanh", ["s"], "t"), node("Add", ["one", "t"], "u"), node("Mul", ["h", "u"], "g"),
             node("Mul", ["half", "g"], "y")]
    h = x.astype(np.float64) @ w1
    B.run_graph("torch_gelu_tanh", nodes, {"x": x}, {"y": gelu_tanh(h)}, {"w1": w1, **inits})
    fused_once(B, "torch_gelu_tanh", "gelu_tanh")
    # gelu_fast: tanh(x 0.7978845608 (1 + 0.044715 x x)), and 0.5 x first, a Div by 2 after.
    nodes = [mm("fc", "x", "w1", "h"), node("Mul", ["h", "beta"], "hb"), node("Mul", ["h", "kappa"], "hk"),
             node("Mul", ["hk", "h"], "hkh"), node("Add", ["one", "hkh"], "a"), node("Mul", ["hb", "a"], "s"),
             node("Tanh", ["s"], "t"), node("Add", ["t", "one"], "u"), node("Mul", ["u", "h"], "g"),
             node("Div", ["g", "two"], "y")]
    B.run_graph("gelu_fast", nodes, {"x": x}, {"y": gelu_tanh(h)}, {"w1": w1, **inits, **scalars(two=2.0)})
    fused_once(B, "gelu_fast", "gelu_tanh")
    # Near GELUs: gelu_new then a Mul by 1.0004 (the GELU fused, the Mul a kernel of its own, not
    # taken for part of it), and gelu_new plus 1e-9 x^8 after its Tanh (no GELU: not fused).
    nodes_gelu_new = [mm("fc", "x", "w1", "h"), node("Pow", ["h", "three"], "p"),
                                 node("Mul", ["h", "half"], "hh"), node("Mul", ["p", "kappa"], "q"),
                                 node("Add", ["h", "q"], "r"), node("Mul", ["r", "beta"], "s"), node("Tanh", ["s"], "t")]
    nodes = nodes_gelu_new + [node("Add", ["t", "one"], "u"), node("Mul", ["hh", "u"], "g"), node("Mul", ["g", "near"], "y")]
    B.run_graph("gelu_then_mul", nodes, {"x": x}, {"y": gelu_tanh(h) * np.float32(1.0004)},
                {"w1": w1, **inits, **scalars(near=1.0004)})
    fused_once(B, "gelu_then_mul", "gelu_tanh")
    if "shape: {op: muls," not in open(os.path.join(B.d, "net-gelu_then_mul", "compiled", "model.yaml")).read():
        B.fail("onnx gelu_then_mul: the Mul by 1.0004 after the GELU has no kernel (taken for part of the GELU)")
    nodes = nodes_gelu_new + [node("Pow", ["h", "eight"], "h8"), node("Mul", ["h8", "tiny"], "e"),
                              node("Add", ["t", "e"], "te"), node("Add", ["te", "one"], "u"), node("Mul", ["hh", "u"], "y")]
    B.run_graph("gelu_plus_h8", nodes, {"x": x}, {"y": (gelu_tanh(h) + 0.5 * h * 1e-9 * h ** 8)},
                {"w1": w1, **inits, **scalars(eight=8.0, tiny=1e-9)})
    # A Tanh that is no GELU (x tanh(x) / 2): its own kernels.
    nodes = [mm("fc", "x", "w1", "h"), node("Tanh", ["h"], "t"), node("Mul", ["h", "t"], "g"),
             node("Mul", ["g", "half"], "y")]
    B.run_graph("not_gelu", nodes, {"x": x}, {"y": h * np.tanh(h) / 2}, {"w1": w1, **scalars(half=0.5)})
    text = open(os.path.join(B.d, "net-not_gelu", "compiled", "model.yaml")).read()
    if "op: gelu" in text or "shape: {op: tanh," not in text:
        B.fail("onnx not_gelu: a Tanh that is no GELU was fused, or no tanh kernel ran")


def pow_graphs(B):
    x = rng.standard_normal((2, 24, 40)).astype(np.float32)
    w = (rng.standard_normal((40, 40)) / 6).astype(np.float32)
    h = x.astype(np.float64) @ w
    # A base away from 0 for a fractional or negative exponent: there x^0.25 and x^-2 turn the
    # f16 rounding of a MatMul's output into an error no output check's tolerance holds.
    for e in (3.0, 2.0, 1.5, -2.0, 0.0, 0.25):
        base, want = ("h", h) if e == int(e) and e >= 0 else ("a", np.abs(h) + 4)
        nodes = [mm("fc", "x", "w", "h"), node("Abs", ["h"], "ah"), node("Add", ["ah", "four"], "a"),
                 node("Pow", [base, "e"], "y")]
        B.run_graph(f"pow_{e:g}", nodes, {"x": x}, {"y": np.power(want, e)}, {"w": w, **scalars(e=e, four=4.0)})
    # A feature map of 24 channels (two groups of 16, the second half pad): Pow 3 and Pow 0 between convs.
    img = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
    k1 = (rng.standard_normal((24, 3, 3, 3)) / 4).astype(np.float32)
    k2 = (rng.standard_normal((8, 24, 1, 1)) / 4).astype(np.float32)
    from onnx import helper
    for e in (3.0, 0.0):
        nodes = [helper.make_node("Conv", ["img", "k1"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
                 node("Pow", ["c", "e"], "p"), helper.make_node("Conv", ["p", "k2"], ["y"], name="conv2")]
        c = conv(img.astype(np.float64), k1, 1)
        B.run_graph(f"map_pow_{e:g}", nodes, {"img": img}, {"y": conv(np.power(c, e), k2, 0)},
                    {"k1": k1, "k2": k2, **scalars(e=e)})
    nodes = [helper.make_node("Conv", ["img", "k1"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
             node("Pow", ["c", "e"], "y", name="pow_neg")]
    B.refused("map_pow_neg", nodes, {"img": img}, [1, 24, 12, 12], ["pow_neg", "not finite"],
              {"k1": k1, **scalars(e=-2.0)})
    nodes = [mm("fc", "x", "w", "h"), node("Pow", ["h", "x"], "y", name="pow_tensor")]
    B.refused("pow_tensor", nodes, {"x": x[:, :, :40]}, [2, 24, 40], ["pow_tensor", "tensor of exponents"], {"w": w})


def conv(x, k, pad):
    """A plain loop's conv2d, stride 1 (the reference of the map graphs)."""
    n, c, hh, ww = x.shape
    o, _, kh, kw = k.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], k[:, :, i, j])
    return y


run_parts(DVP, [kernel_runs, gelu_graphs, pow_graphs])
