#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The transformer encoder block from its ONNX file (make-models.py transformer), through the
# firmware on ascend310 and its compiled scenario on ascend910, against NumPy: the block computed
# here in float64 from the file's own initializers (multi-head attention, LayerNorm, the
# feed-forward), not by the platform's host reference. The input is NumPy's, given with --input.
# The platform computes in fp16 with f32 accumulation: the output (LayerNorm's, of unit scale)
# must be within 0.03 of NumPy's everywhere, and 0.003 on average (a head, a bias, the scale or a
# transpose gone wrong moves it by far more). Then the per-layer table must list the layers.
#
# Usage: transformer.py DVP MAKE_MODELS OUT   (needs python3-onnx and python3-numpy)
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from numpy_graphs import preset_runs

DVP, MAKE, OUT = sys.argv[1:4]
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
subprocess.run([sys.executable, MAKE, OUT, "transformer"], check=True, stdout=subprocess.DEVNULL)
model = onnx.load(os.path.join(OUT, "transformer.onnx"))
W = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
tokens, d = 128, 256
heads = int(W["heads_shape"][2])
dh = d // heads


def linear(name, x):
    return x @ W[name + ".weight"] + W[name + ".bias"]


def norm(name, x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * W[name + ".weight"] + W[name + ".bias"]


def block(x):
    def split(t):  # tokens x d -> heads x tokens x dh
        return t.reshape(tokens, heads, dh).transpose(1, 0, 2)
    q, k, v = (split(linear(f"attn.{p}_proj", x)) for p in "qkv")
    s = q @ k.transpose(0, 2, 1) / np.sqrt(dh)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    ctx = (p @ v).transpose(1, 0, 2).reshape(tokens, d)
    h = norm("norm1", x + linear("attn.out_proj", ctx))
    f = linear("ff.linear2", np.maximum(linear("ff.linear1", h), 0))
    return norm("output", h + f)


rng = np.random.default_rng(17)
x = rng.normal(0, 1, (1, tokens, d)).astype(np.float32)
np.save(os.path.join(OUT, "x.npy"), x)
want = block(x[0].astype(np.float64))
failures = []
model = os.path.join(OUT, "transformer.onnx")
for preset, out in preset_runs(DVP, OUT, model, {"input": os.path.join(OUT, "x.npy")}, failures):
    got = np.load(os.path.join(out, "outputs", "output.npy")).astype(np.float64).reshape(tokens, d)
    err = np.abs(got - want)
    print(f"{preset}: max abs err {err.max():.4f}, mean {err.mean():.5f} (output peak {np.abs(want).max():.2f})")
    if not (err.max() <= 0.03 and err.mean() <= 0.003):  # NaN fails
        i = np.unravel_index(np.argmax(np.nan_to_num(err, nan=np.inf)), err.shape)
        failures.append(f"{preset}: off NumPy's block: worst [{i[0]}, {i[1]}] {got[i]:.4f} vs {want[i]:.4f}")
    with open(os.path.join(out, "summary.txt")) as f:
        summary = f.read()
    for layer in ("attn_qk_h3", "attn_softmax", "attn_ctx_transpose", "norm1", "ff_linear1", "output"):
        if f"\n  {layer} " not in summary.split("network ")[-1]:
            failures.append(f"{preset}: layer {layer} not in the per-layer table")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
