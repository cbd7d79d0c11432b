#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# conv2d against NumPy: for shapes the kernel was not written around (any channel count, a
# feature map larger than L1 in bands, strides, dilation, uneven padding, cout not a multiple
# of the tile), NumPy writes the input (N x C x H x W) and the weights (cout x C x kh x kw) as
# .npy, computes the convolution itself, and dvp runs it on both presets with the tensors in
# layout nc1hwc0, checked against NumPy's result. The input is saved back and must equal what
# NumPy wrote (the layout conversion both ways), and so must the weights. Then the fused
# epilogue: a folded batch norm's
# scale and bias per channel, a residual, ReLU or ReLU6, an f16 output, on whole and banded
# feature maps and a cout that is not a whole tile. Then the small-channel mode (c0: 4, layout
# nc1hwc0_c04: a first layer's 3 or 4 channels) whole and in bands, an odd width among them, and
# input planes of more than 65535 positions, and grouped convolutions: depthwise (with a channel multiplier, and in bands with its epilogue),
# ResNeXt-like groups of 8, and groups whose channels are not whole fractals (one extended group).
# One-row maps too large for L1 (1-D convs over long sequences) in bands of columns. Last, y stored NC1HWC0 (out_layout: nc1hwc0, as the next layer reads it; the residual too):
# through FixPipe and through the epilogue, with edge rows, a last column tile shifted, and bands.
# Every case runs with its weights stored row by row (layout nc1hwc0) on one preset and in the
# cube's fractal order (fractal_z, weights_layout: fractal_z, as ATC stores them) on the other,
# alternating from case to case, so each layout meets every shape and both presets' tilings. The
# fractal weights are marked read once (weights_once): a shape of one row of output tiles reads
# them past the L2 (no_alloc), the bytes from DRAM through the L2's other path.
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
    # 1 x 1 convs whose k takes more chunks than L1 holds: the first tile's map goes into L1 in two
    # copies (GemmBuilder::first_planes), the whole map here, and strided bands in the next (on
    # ascend910; ascend310's tiling copies it in one). Both fail without the second copy (tried).
    "wide-1x1": (14, 14, 1024, 48, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0)),
    "wide-1x1-s2-bands": (40, 36, 640, 32, 1, 1, (2, 2), (1, 1), (0, 0, 0, 0)),
}
# name: (shape name, epilogue keys, output type)
EPILOGUES = {
    "bn-relu-f16": ("odd-48", {"channel_scale": 1, "bias": 1, "relu": 1}, "f16"),
    "bn-residual-relu6": ("bands-1x1", {"channel_scale": 1, "bias": 1, "residual": 1, "relu6": 1}, "f32"),
    "bias-residual-relu-f16": ("resnet-1x1", {"bias": 1, "residual": 1, "relu": 1}, "f16"),
}
SHAPES["odd-48"] = (30, 28, 64, 48, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
SHAPES["resnet-1x1"] = (28, 28, 128, 64, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0))
# The shape's c0 or groups key (the weights' logical shape is cout x c / groups x kh x kw).
MODES = {
    "stem-c04": (64, 60, 3, 64, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3), {"c0": 4}),
    "c04-bands-odd-w": (380, 331, 4, 32, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), {"c0": 4}),
    "depthwise": (30, 26, 48, 48, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), {"groups": 48}),
    "depthwise-x2-s2": (33, 29, 32, 64, 5, 5, (2, 2), (1, 1), (2, 2, 2, 2), {"groups": 32}),
    "groups-8": (20, 22, 64, 64, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), {"groups": 8}),
    "groups-3": (17, 15, 24, 36, 3, 3, (1, 1), (1, 1), (0, 1, 1, 0), {"groups": 3}),
    # 78000 positions a plane (more than a copy's 16-bit fields): a copy per plane of each band.
    "big-plane": (300, 260, 32, 16, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), {}),
    "big-plane-one-c1": (310, 250, 10, 24, 3, 3, (2, 2), (1, 1), (1, 0, 1, 0), {}),
    # Many tiles of cout on one small map: the whole map in L1 on ascend310 (each tile's group
    # found by its offset there), bands on ascend910.
    "groups-2-whole": (7, 7, 32, 2048, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), {"groups": 2}),
}
SHAPES.update({k: v[:9] for k, v in MODES.items()})
# 40 f16 channels: y's rows (80 bytes) end inside 32-byte blocks, each row's last block apart.
EPILOGUES["bn-relu-f16-ragged-cout"] = ("cout-40", {"channel_scale": 1, "bias": 1, "relu": 1}, "f16")
EPILOGUES["bn-residual-relu-ragged-cout"] = ("cout-40", {"channel_scale": 1, "bias": 1, "residual": 1, "relu": 1},
                                             "f16")
# The same on 16 x 16 positions: whole tiles of rows (m = 256), the last column tile shifted.
EPILOGUES["residual-ragged-cout-whole-rows"] = ("cout-40-m256", {"bias": 1, "residual": 1}, "f16")
SHAPES["cout-40-m256"] = (16, 16, 32, 40, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
SHAPES["cout-40"] = (26, 30, 32, 40, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
# 3 f16 output channels (an image head): rows of 6 bytes, each tile's last block assembled.
EPILOGUES["bias-f16-cout-3"] = ("cout-3", {"bias": 1}, "f16")
EPILOGUES["bias-residual-f16-cout-3"] = ("cout-3", {"bias": 1, "residual": 1}, "f16")
SHAPES["cout-3"] = (40, 36, 16, 3, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
EPILOGUES["depthwise-bands-bn-relu6-f16"] = ("mobilenet-dw", {"channel_scale": 1, "bias": 1, "relu6": 1}, "f16")
SHAPES["mobilenet-dw"] = (112, 112, 96, 96, 3, 3, (2, 2), (1, 1), (0, 1, 0, 1))
MODES["mobilenet-dw"] = SHAPES["mobilenet-dw"] + ({"groups": 96},)
# Depthwise in bands with every epilogue input and edge tiles: the most registers the conv uses.
EPILOGUES["depthwise-299-bn-residual-f16"] = ("dw-299", {"channel_scale": 1, "bias": 1, "residual": 1, "relu": 1},
                                              "f16")
SHAPES["dw-299"] = (299, 299, 32, 32, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
MODES["dw-299"] = SHAPES["dw-299"] + ({"groups": 32},)
# y in NC1HWC0: name: (shape name, epilogue keys, output type).
OUT_NC1HWC0 = {
    "5hd-fixpipe-f32": ("cout-80", {}, "f32"),
    "5hd-fixpipe-relu-f16": ("cout-80", {"relu": 1}, "f16"),
    "5hd-bn-relu-f16": ("odd-48", {"channel_scale": 1, "bias": 1, "relu": 1}, "f16"),
    "5hd-bn-residual-relu-f16": ("resnet-1x1", {"channel_scale": 1, "bias": 1, "residual": 1, "relu": 1}, "f16"),
    "5hd-bands-residual-f32": ("bands-48", {"bias": 1, "residual": 1}, "f32"),
    "5hd-stem-c04-bn-relu": ("stem-c04", {"channel_scale": 1, "bias": 1, "relu": 1}, "f16"),
}
SHAPES["cout-80"] = (27, 25, 48, 80, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1))
# One-row maps (a 1-D conv over a long sequence) whose row does not fit L1: bands of input
# columns, strided; grouped and dilated; the longest row a shape takes (65535 positions); and y in
# NC1HWC0 through the epilogue, as a compiled 1-D network stores it.
MODES["one-row-s2"] = (1, 3001, 512, 64, 1, 3, (1, 2), (1, 1), (0, 0, 1, 1), {})
MODES["one-row-grouped-dilated"] = (1, 4999, 256, 256, 1, 5, (1, 1), (1, 3), (0, 0, 6, 5), {"groups": 16})
MODES["one-row-longest"] = (1, 65535, 32, 16, 1, 3, (1, 1), (1, 1), (0, 0, 1, 1), {})
SHAPES.update({k: v[:9] for k, v in MODES.items()})
OUT_NC1HWC0["5hd-one-row-bias-relu-f16"] = ("one-row-s2", {"bias": 1, "relu": 1}, "f16")
SHAPES["bands-48"] = (60, 70, 200, 48, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0))


def conv_nhwc(x, w, stride, dil, pad, groups=1):
    """y[oh, ow, co] = sum over c, i, j of x[c, oh*sh + i*dh - pt, ow*sw + j*dw - pl] * w[co, c, i, j],
    c over the channels of co's group."""
    if groups > 1:
        cg, og = x.shape[1] // groups, w.shape[0] // groups
        return np.concatenate([conv_nhwc(x[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], stride, dil, pad)
                               for g in range(groups)], axis=2)
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
             dil_h: {dh}, dil_w: {dw}, pad_t: {pt}, pad_b: {pb}, pad_l: {pl}, pad_r: {pr}, out: {out}{keys}{mode}}}
    tensors:
      - {{name: x, dtype: f16, layout: {layout}, shape: [1, {c}, {h}, {w}], file: x.npy, save: x_back.npy}}
      - {{name: wt, dtype: f16, layout: {wlayout}, shape: [{cout}, {cg}, {kh}, {kw}], groups: {groups}, file: w.npy,
          save: w_back.npy}}
      - {{name: y, dtype: {out}, {ystore}}}
{extra}    args: [x, wt, y{args}]
    check: {{expected: y_ref.npy, output: y, atol: {atol}, rtol: {rtol}}}
run: {{trace: false}}
"""


def nhwc(y):
    return f"shape: [{y.shape[0]}, {y.shape[1]}, {y.shape[2]}]"


def run(d, text, what, x=None):
    if "weights_layout: fractal_z" in text:
        what += " (weights fractal_z)"
    path = os.path.join(d, "s.yaml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(d, "out")
    r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{what}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        return
    if x is not None:
        back = np.load(os.path.join(out, "x_back.npy"))
        if back.shape != x.shape or not np.array_equal(back, x):
            failures.append(f"{what}: the input saved back differs from the one written")
            return
        w, w_back = np.load(os.path.join(d, "w.npy")), np.load(os.path.join(out, "w_back.npy"))
        if w_back.shape != w.shape or not np.array_equal(w_back, w):
            failures.append(f"{what}: the weights saved back differ from the ones written")
            return
    print("ok  ", what)


CASES = [0]  # cases run so far: which layout the weights take on which preset


def fields(name, preset):
    """The scenario's fields for shape `name` on `preset`, the weights' layout alternating."""
    h, w, c, cout, kh, kw, stride, dil, pad = SHAPES[name]
    mode = dict(MODES.get(name, (None,) * 9 + ({},))[9])
    groups = mode.get("groups", 1)
    layout = "nc1hwc0_c04" if mode.get("c0") == 4 else "nc1hwc0"
    fractal = (CASES[0] + (preset == "ascend910")) % 2 == 1
    if fractal:  # read once, too: a shape of one row of tiles reads them without allocating in the L2
        mode["weights_layout"] = "fractal_z"
        mode["weights_once"] = "true"
    return dict(h=h, w=w, c=c, cout=cout, kh=kh, kw=kw, sh=stride[0], sw=stride[1], dh=dil[0], dw=dil[1],
                pt=pad[0], pb=pad[1], pl=pad[2], pr=pad[3], cg=c // groups, groups=groups,
                mode="".join(f", {k}: {v}" for k, v in mode.items()), layout=layout,
                wlayout=layout.replace("nc1hwc0", "fractal_z") if fractal else layout)


def write_inputs(d, rng, name):
    h, w, c, cout, kh, kw, stride, dil, pad = SHAPES[name]
    groups = fields(name, "")["groups"]
    x = rng.uniform(-1, 1, (1, c, h, w)).astype(np.float16)
    wt = rng.uniform(-1, 1, (cout, c // groups, kh, kw)).astype(np.float16)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "w.npy"), wt)
    return x, conv_nhwc(x, wt, stride, dil, pad, groups)


def epilogue(d, rng, y, keys, out, nc1hwc0=False):
    """The epilogue's inputs as .npy, its tensors and arguments for the scenario, and its result."""
    cout = y.shape[2]
    extra, args = "", ""
    if keys.get("bias"):
        b = rng.uniform(-1, 1, cout).astype(np.float32)
        np.save(os.path.join(d, "bias.npy"), b)
        extra += f"      - {{name: bias, dtype: f32, shape: [{cout}], file: bias.npy}}\n"
        args += ", bias"
    if keys.get("channel_scale"):
        sc = rng.uniform(0.5, 2, cout).astype(np.float32)
        np.save(os.path.join(d, "scale.npy"), sc)
        extra += f"      - {{name: scale, dtype: f32, shape: [{cout}], file: scale.npy}}\n"
        args += ", scale"
        y = y * sc.astype(np.float64)
    if keys.get("bias"):
        y = y + b.astype(np.float64)
    if keys.get("residual"):
        r = rng.uniform(-4, 4, y.shape).astype(np.float16 if out == "f16" else np.float32)
        if nc1hwc0:  # the file in the logical N x C x H x W, stored like y
            np.save(os.path.join(d, "res.npy"), r.transpose(2, 0, 1)[None])
            extra += (f"      - {{name: res, dtype: {out}, layout: nc1hwc0, shape: [1, {cout}, {y.shape[0]}, "
                      f"{y.shape[1]}], file: res.npy}}\n")
        else:
            np.save(os.path.join(d, "res.npy"), r)
            extra += f"      - {{name: res, dtype: {out}, shape: {list(y.shape)}, file: res.npy}}\n"
        args += ", res"
        y = y + r.astype(np.float64)
    if keys.get("relu") or keys.get("relu6"):
        y = np.maximum(y, 0)
    if keys.get("relu6"):
        y = np.minimum(y, 6)
    return extra, args, y


SHAPES_OF_EPILOGUES = {shape for shape, _, _ in EPILOGUES.values()}

with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(11)
    for name in ("odd", "stem", "bands-1x1", "bands-dilated", "wide-1x1", "wide-1x1-s2-bands",
                 *[m for m in MODES if m not in SHAPES_OF_EPILOGUES]):
        x, y = write_inputs(d, rng, name)
        np.save(os.path.join(d, "y_ref.npy"), y.astype(np.float32))
        for preset in ("ascend310", "ascend910"):
            run(d, SCENARIO.format(name=name, preset=preset, ho=y.shape[0], wo=y.shape[1], out="f32", keys="",
                                   extra="", args="", atol="1e-4", rtol="1e-4", ystore=nhwc(y), **fields(name, preset)),
                f"{name} on {preset}", x)
        CASES[0] += 1
    for name, (shape, keys, out) in EPILOGUES.items():
        x, y = write_inputs(d, rng, shape)
        extra, args, y = epilogue(d, rng, y, keys, out)
        np.save(os.path.join(d, "y_ref.npy"), y.astype(np.float32))
        # An f16 output is the f32 result rounded once: half an f16 step, relative.
        atol, rtol = ("1e-3", "1e-3") if out == "f16" else ("1e-4", "1e-4")
        for preset in ("ascend310", "ascend910"):
            run(d, SCENARIO.format(name=name, preset=preset, ho=y.shape[0], wo=y.shape[1], out=out,
                                   keys="".join(f", {k}: true" for k in keys), extra=extra, args=args, atol=atol,
                                   rtol=rtol, ystore=nhwc(y), **fields(shape, preset)),
                f"{name} ({shape}) on {preset}", x)
        CASES[0] += 1
    for name, (shape, keys, out) in OUT_NC1HWC0.items():
        x, y = write_inputs(d, rng, shape)
        extra, args, y = epilogue(d, rng, y, keys, out, nc1hwc0=True)
        np.save(os.path.join(d, "y_ref.npy"), np.ascontiguousarray(y.transpose(2, 0, 1)[None], np.float32))
        atol, rtol = ("1e-3", "1e-3") if out == "f16" else ("1e-4", "1e-4")
        ystore = f"layout: nc1hwc0, shape: [1, {y.shape[2]}, {y.shape[0]}, {y.shape[1]}]"
        for preset in ("ascend310", "ascend910"):
            run(d, SCENARIO.format(name=name, preset=preset, ho=y.shape[0], wo=y.shape[1], out=out,
                                   keys="".join(f", {k}: true" for k in keys) + ", out_layout: nc1hwc0", extra=extra,
                                   args=args, atol=atol, rtol=rtol, ystore=ystore, **fields(shape, preset)),
                f"{name} ({shape}) on {preset}", x)
        CASES[0] += 1

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
