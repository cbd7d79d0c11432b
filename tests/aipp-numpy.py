#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The aipp library kernel against NumPy, from AIPP's definition as CANN documents it (its
# published BT.601 / BT.709 YUV -> RGB matrices in Q8, input biases 0 / 16 and 128; out =
# clip(((M x (pixel - in_bias)) >> 8) + out_bias, 0, 255); then (out - mean_chn - min_chn) x
# var_reci_chn, in f32, rounded to f16; the channels past the picture's are 0). Seeded random
# pictures of sizes the kernel was not written around: NV12 with odd sides and a pitch, NV21,
# RGB888 without a matrix, grey, C0 = 4 and 16, on 1 and 2 cores; every output bit-equal.
#
# Usage: aipp-numpy.py DVP   (needs python3-numpy)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
MATRIX = {  # rows R, G, B; columns Y, U, V (CANN's AIPP examples)
    "bt601_full": ([[256, 0, 359], [256, -88, -183], [256, 454, 0]], [0, 128, 128]),
    "bt601_limited": ([[298, 0, 409], [298, -100, -208], [298, 516, 0]], [16, 128, 128]),
    "bt709_limited": ([[298, 0, 459], [298, -55, -136], [298, 541, 0]], [16, 128, 128]),
}
# (format, h, w, pitch, plane_rows, csc, c0, mean, min, var, cores)
CASES = [
    ("nv12", 75, 33, 48, 76, "bt601_full", 4, [0, 0, 0], [123.675, 116.28, 103.53], [0.0171, 0.0175, 0.0174], 2),
    ("nv21", 38, 130, 144, 38, "bt709_limited", 16, [10, 20, 30], [0.5, -1.25, 2], [0.5, 1, 2], 1),
    ("nv12", 224, 224, 224, 224, "bt601_limited", 16, [0, 0, 0], [0, 0, 0], [1, 1, 1], 2),
    ("rgb888", 50, 101, 101, 50, "none", 16, [128, 64, 32], [0, 0, 0], [0.0078125, 0.01, 0.02], 2),
    ("yuv400", 37, 99, 104, 37, "none", 4, [16, 0, 0], [0.25, 0, 0], [0.004, 1, 1], 2),
]


def picture_bytes(fmt, pitch, rows):
    return pitch * rows * {"nv12": 3, "nv21": 3, "rgb888": 6, "yuv400": 2}[fmt] // 2


def expected(pic, fmt, h, w, pitch, rows, csc, c0, mean, mn, var):
    """The f16 h x w x c0 output, from the definition."""
    if fmt == "rgb888":
        px = pic[:pitch * rows * 3].reshape(rows, pitch, 3)[:h, :w].astype(np.int64)
    else:
        y = pic[:pitch * rows].reshape(rows, pitch)[:h, :w].astype(np.int64)
        if fmt == "yuv400":
            px = y[:, :, None]
        else:
            uv = pic[pitch * rows:].reshape(-1, pitch)[(np.arange(h) // 2)][:, :2 * ((w + 1) // 2)]
            uv = uv.reshape(h, -1, 2).repeat(2, axis=1)[:, :w].astype(np.int64)
            u, v = (uv[..., 0], uv[..., 1]) if fmt == "nv12" else (uv[..., 1], uv[..., 0])
            px = np.stack([y, u, v], axis=-1)
    if csc != "none":
        m, bias = MATRIX[csc]
        px = np.clip(((px - np.array(bias)) @ np.array(m).T) >> 8, 0, 255)
    ch = px.shape[-1]
    mn16 = np.array(mn[:ch], np.float16).astype(np.float32)
    var16 = np.array(var[:ch], np.float16).astype(np.float32)
    val = ((px - np.array(mean[:ch])).astype(np.float32) - mn16) * var16
    out = np.zeros((h, w, c0), np.float16)
    out[..., :ch] = val.astype(np.float16)
    return out


def run_case(d, i, case):
    fmt, h, w, pitch, rows, csc, c0, mean, mn, var, cores = case
    rng = np.random.default_rng(100 + i)
    pic = rng.integers(0, 256, picture_bytes(fmt, pitch, rows), dtype=np.uint8)
    np.save(os.path.join(d, f"pic{i}.npy"), pic)
    lst = lambda v: "[" + ", ".join(str(x) for x in v) + "]"
    scen = os.path.join(d, f"a{i}.yaml")
    with open(scen, "w") as f:
        f.write(f"""name: aipp-numpy
platform: {{preset: ascend310}}
kernels:
  - name: aipp
    library: aipp
    cores: {cores}
    shape: {{h: {h}, w: {w}, format: {fmt}, pitch: {pitch}, plane_rows: {rows}, csc: {csc}, c0: {c0},
             mean: {lst(mean)}, min: {lst(mn)}, var_reci: {lst(var)}}}
    tensors:
      - {{name: x, dtype: u8, file: pic{i}.npy}}
      - {{name: y, dtype: f16, shape: [{h}, {w}, {c0}], save: y{i}.npy}}
    args: [x, y]
run: {{trace: false}}
""")
    out = os.path.join(d, f"out{i}")
    r = subprocess.run([DVP, "run", scen, "--quiet", "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        return f"case {i} ({fmt} {w} x {h}): dvp exit {r.returncode}: {r.stderr[-300:]}"
    have = np.load(os.path.join(out, f"y{i}.npy"))
    want = expected(pic, fmt, h, w, pitch, rows, csc, c0, mean, mn, var)
    bad = np.count_nonzero(have.view(np.uint16) != want.view(np.uint16))
    if bad:
        at = np.argwhere(have.view(np.uint16) != want.view(np.uint16))[0]
        return f"case {i} ({fmt} {w} x {h}): {bad} of {want.size} differ, first at {tuple(at)}: {have[tuple(at)]} vs {want[tuple(at)]}"
    print(f"ok   {fmt} {w} x {h} (pitch {pitch}, csc {csc}, c0 {c0}, {cores} cores): {want.size} values bit-equal")
    return None


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        for i, case in enumerate(CASES):
            e = run_case(d, i, case)
            if e:
                failures.append(e)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


sys.exit(main())
