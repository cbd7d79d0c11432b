#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# conv2d against NumPy: for shapes the kernel was not written around (any channel count, a
# feature map larger than L1 in bands, strides, dilation, uneven padding, cout not a multiple
# of the tile), NumPy writes the input (N x C x H x W) and the weights (cout x C x kh x kw) as
# .npy, computes the convolution itself, and dvp runs it on both presets with the tensors in
# layout nc1hwc0, checked against NumPy's result. The input is saved back and must equal what
# NumPy wrote (the layout conversion both ways).
#
# Usage: conv-numpy.py DVP   (needs python3-numpy)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
failures = []

# name: h, w, c, cout, kh, kw, stride (h, w), dilation (h, w), padding (t, b, l, r)
SHAPES = {
    "odd": (23, 19, 40, 24, 5, 3, (2, 1), (1, 1), (2, 1, 1, 1)),
    "stem": (64, 60, 3, 64, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3)),
    "bands-1x1": (60, 70, 200, 24, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0)),
    "bands-dilated": (100, 90, 72, 40, 3, 3, (1, 2), (2, 2), (2, 1, 2, 0)),
}


def conv_nhwc(x, w, stride, dil, pad):
    """y[oh, ow, co] = sum over c, i, j of x[c, oh*sh + i*dh - pt, ow*sw + j*dw - pl] * w[co, c, i, j]."""
    (sh, sw), (dh, dw), (pt, pb, pl, pr) = stride, dil, pad
    _, c, h, wd = x.shape
    cout, _, kh, kw = w.shape
    xp = np.pad(x[0].astype(np.float64), ((0, 0), (pt, pb), (pl, pr)))
    ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((ho, wo, cout))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dh:i * dh + sh * (ho - 1) + 1:sh, j * dw:j * dw + sw * (wo - 1) + 1:sw]
            y += np.einsum("chw,oc->hwo", patch, w[:, :, i, j].astype(np.float64))
    return y


SCENARIO = """
name: conv-numpy-{name}
platform: {{preset: {preset}}}
kernels:
  - name: conv
    library: conv2d
    shape: {{h: {h}, w: {w}, c: {c}, cout: {cout}, kh: {kh}, kw: {kw}, stride_h: {sh}, stride_w: {sw},
             dil_h: {dh}, dil_w: {dw}, pad_t: {pt}, pad_b: {pb}, pad_l: {pl}, pad_r: {pr}}}
    tensors:
      - {{name: x, dtype: f16, layout: nc1hwc0, shape: [1, {c}, {h}, {w}], file: x.npy, save: x_back.npy}}
      - {{name: wt, dtype: f16, layout: nc1hwc0, shape: [{cout}, {c}, {kh}, {kw}], file: w.npy}}
      - {{name: y, dtype: f32, shape: [{ho}, {wo}, {cout}]}}
    args: [x, wt, y]
    check: {{expected: y_ref.npy, output: y, atol: 1e-4, rtol: 1e-4}}
run: {{trace: false}}
"""

with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(11)
    for name, (h, w, c, cout, kh, kw, stride, dil, pad) in SHAPES.items():
        x = rng.uniform(-1, 1, (1, c, h, w)).astype(np.float16)
        wt = rng.uniform(-1, 1, (cout, c, kh, kw)).astype(np.float16)
        y = conv_nhwc(x, wt, stride, dil, pad)
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "w.npy"), wt)
        np.save(os.path.join(d, "y_ref.npy"), y.astype(np.float32))
        for preset in ("ascend310", "ascend910"):
            path = os.path.join(d, "s.yaml")
            with open(path, "w") as f:
                f.write(SCENARIO.format(name=name, preset=preset, h=h, w=w, c=c, cout=cout, kh=kh, kw=kw,
                                        sh=stride[0], sw=stride[1], dh=dil[0], dw=dil[1], pt=pad[0], pb=pad[1],
                                        pl=pad[2], pr=pad[3], ho=y.shape[0], wo=y.shape[1]))
            out = os.path.join(d, "out")
            r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
            what = f"{name} on {preset}"
            if r.returncode != 0:
                failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
                continue
            back = np.load(os.path.join(out, "x_back.npy"))
            if back.shape != x.shape or not np.array_equal(back, x):
                failures.append(f"{what}: the input saved back differs from the one written")
            print("ok  ", what)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
