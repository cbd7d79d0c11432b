#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A GPT-2 language model from its ONNX file (make-models.py gpt2: Hugging Face's GPT2LMHeadModel
# as torch.onnx.export writes it, 2 blocks), token ids in, logits out, through the firmware on
# ascend310 and its compiled scenario on ascend910, against NumPy: the model computed here in
# float64 from the file's own initializers (embeddings, LayerNorm, Conv1D projections, causal
# attention, gelu_new, tied logits), not by the platform's host reference. The platform computes
# in fp16 with f32 accumulation: the logits must be within 2% of their peak everywhere and 0.3%
# on average, and pick NumPy's next token at 62 of the 64 positions or more (a head, the mask, the
# GELU or a transpose gone wrong moves them by far more). Each block's GELU is one gelu_tanh kernel.
# Then compiled for ascend910 (32 AI Cores), where each block's mask and scale are fused into its
# softmax kernel, the same checks.
#
# Usage: gpt2.py DVP MAKE_MODELS OUT   (needs python3-onnx and python3-numpy)
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
subprocess.run([sys.executable, MAKE, OUT, "gpt2"], check=True, stdout=subprocess.DEVNULL)
model = onnx.load(os.path.join(OUT, "gpt2.onnx"))
W = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
W = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in W.items()}
tokens, d = W["heads_shape"][1], W["wte"].shape[1]
heads, dh = W["heads_shape"][2], W["heads_shape"][3]
blocks = sum(1 for k in W if k.endswith(".ln_1.weight"))


def norm(name, x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * W[name + ".weight"] + W[name + ".bias"]


def conv1d(name, x):
    return x @ W[name + ".weight"] + W[name + ".bias"]


def gelu_new(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def lm(ids):
    h = W["wte"][ids] + W["wpe"][np.arange(tokens)]
    causal = np.tril(np.ones((tokens, tokens), bool))
    for i in range(blocks):
        p = f"h.{i}."
        q, k, v = np.split(conv1d(p + "attn.c_attn", norm(p + "ln_1", h)), 3, axis=-1)
        q, k, v = (t.reshape(tokens, heads, dh).transpose(1, 0, 2) for t in (q, k, v))
        s = np.where(causal, q @ k.transpose(0, 2, 1) / np.sqrt(dh), np.finfo(np.float32).min)
        a = np.exp(s - s.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        ctx = (a @ v).transpose(1, 0, 2).reshape(tokens, d)
        h = h + conv1d(p + "attn.c_proj", ctx)
        h = h + conv1d(p + "mlp.c_proj", gelu_new(conv1d(p + "mlp.c_fc", norm(p + "ln_2", h))))
    return norm("ln_f", h) @ W["wte"].T


ids = np.random.default_rng(23).integers(0, W["wte"].shape[0], (1, tokens)).astype(np.int64)
np.save(os.path.join(OUT, "ids.npy"), ids)
want = lm(ids[0])
failures = []
model = os.path.join(OUT, "gpt2.onnx")
runs = list(preset_runs(DVP, OUT, model, {"input": os.path.join(OUT, "ids.npy")}, failures))
# Compiled for ascend910 as well (32 AI Cores: each block's mask and scale fused into its softmax).
own = os.path.join(OUT, "ascend910-own")
r = subprocess.run([DVP, "run", model, "--preset", "ascend910", "--input", "input=" + os.path.join(OUT, "ids.npy"),
                    "--out", own, "--no-trace", "--quiet"], capture_output=True, text=True)
if r.returncode != 0:
    failures.append(f"compiled for ascend910: exit {r.returncode}: {r.stderr.strip()[-400:]}")
else:
    runs.append(("compiled for ascend910", own))
for preset, out in runs:
    got = np.load(os.path.join(out, "outputs", "output.npy")).astype(np.float64).reshape(want.shape)
    err, peak = np.abs(got - want), np.abs(want).max()
    same = int((got.argmax(axis=-1) == want.argmax(axis=-1)).sum())
    print(f"{preset}: max abs err {err.max():.4f}, mean {err.mean():.5f} (logits' peak {peak:.2f}); "
          f"next token as NumPy's at {same} of {tokens}")
    if not (err.max() <= 0.02 * peak and err.mean() <= 0.003 * peak and same >= tokens - 2):  # NaN fails
        i = np.unravel_index(np.argmax(np.nan_to_num(err, nan=np.inf)), err.shape)
        failures.append(f"{preset}: off NumPy's logits: worst [{i[0]}, {i[1]}] {got[i]:.4f} vs {want[i]:.4f}, "
                        f"{same} next tokens the same")
# Each block's GELU one gelu_tanh kernel; compiled for ascend910, its Softmax, Where and Div one kernel.
for out, fused in ((os.path.join(OUT, "ascend310"), 0), (own, blocks)):
    path = os.path.join(out, "compiled", "model.yaml")
    text = open(path).read() if os.path.exists(path) else ""
    if text.count("shape: {op: gelu_tanh,") != blocks or "shape: {op: pows," in text:
        failures.append(f"{path}: {text.count('shape: {op: gelu_tanh,')} gelu_tanh kernels for {blocks} GELUs")
    if text.count("ops: Softmax+Where,") != fused or text.count("ops: Div,") != blocks - fused:
        failures.append(f"{path}: {text.count('ops: Softmax+Where,')} masked softmaxes, want {fused}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
