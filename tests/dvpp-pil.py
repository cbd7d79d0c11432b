#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# DVPP's decoded pixels against PIL, a decoder outside the platform: JPEGD's luma plane (and,
# for 4:4:4, its chroma) against PIL's YCbCr decode of the same file, and PNGD's RGB / RGBA
# against PIL's own PNG decoder (its own inflate, not libpng), for the shipped test media. The
# outputs are saved by the run (.yuv: the buffer as laid out; .png) and read back here with the
# strides the docs give (width rounded up to 16, height to 2). VPC's resize of the 1080p JPEG
# to 224 x 224 RGB888 against PIL's bilinear resize of PIL's own RGB decode: 30 dB PSNR or more.
#
# Usage: dvpp-pil.py DVP SOURCE_DIR   (needs python3-pil, python3-numpy)
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

DVP, SRC = sys.argv[1], sys.argv[2]
MEDIA = os.path.join(SRC, "scenarios", "dvpp", "media")
JPEGS = ["scene-1080p-420.jpg", "scene-333x211-420.jpg", "scene-400x300-422.jpg", "scene-640x480-444.jpg",
         "grey-320x240.jpg"]
PNGS = ["rgb-300x200.png", "rgba-257x129.png", "grey-64x64.png", "palette-100x100.png"]


def up(v, a):
    return (v + a - 1) // a * a


def jpeg_check(path, yuv):
    im = Image.open(path)
    w, h = im.size
    sw, sh = up(w, 16), up(h, 2)
    if im.mode == "L":
        return [("Y", np.frombuffer(yuv, np.uint8)[: sw * sh].reshape(sh, sw)[:h, :w], np.asarray(im))]
    im.draft("YCbCr", im.size)  # libjpeg's YCbCr, no colour conversion
    ycc = np.asarray(im.convert("YCbCr") if im.mode != "YCbCr" else im)
    y = np.frombuffer(yuv, np.uint8)[: sw * sh].reshape(sh, sw)[:h, :w]
    out = [("Y", y, ycc[:, :, 0])]
    if np.frombuffer(yuv, np.uint8).size == 3 * sw * sh:  # 4:4:4: UV interleaved at full size
        uv = np.frombuffer(yuv, np.uint8)[sw * sh:].reshape(sh, 2 * sw)[:h, : 2 * w]
        out += [("U", uv[:, 0::2], ycc[:, :, 1]), ("V", uv[:, 1::2], ycc[:, :, 2])]
    return out


def main():
    entries = [f"  - {{name: j{i}, engine: jpegd, input: {os.path.join(MEDIA, f)}, save: j{i}.yuv}}"
               for i, f in enumerate(JPEGS)]
    entries += [f"  - {{name: p{i}, engine: pngd, input: {os.path.join(MEDIA, f)}, save: p{i}.png}}"
                for i, f in enumerate(PNGS)]
    entries += ["  - {name: v224, engine: vpc, from: j0, resize: [224, 224], format: rgb888, save: v224.png}"]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        path, out = os.path.join(d, "s.yaml"), os.path.join(d, "out")
        with open(path, "w") as f:
            f.write("name: dvpp-pil\nplatform: {preset: ascend310}\ndvpp:\n" + "\n".join(entries) +
                    "\nrun: {trace: false}\n")
        r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: dvp exit", r.returncode, r.stderr[-400:])
            return 1
        for i, f in enumerate(JPEGS):
            yuv = open(os.path.join(out, f"j{i}.yuv"), "rb").read()
            for plane, have, want in jpeg_check(os.path.join(MEDIA, f), yuv):
                bad = np.count_nonzero(have != want)
                (failures.append(f"{f} {plane}: {bad} of {want.size} differ from PIL") if bad
                 else print(f"ok   {f} {plane} ({want.size} samples) equal to PIL's"))
        for i, f in enumerate(PNGS):
            have = np.asarray(Image.open(os.path.join(out, f"p{i}.png")))
            src = Image.open(os.path.join(MEDIA, f))
            alpha = src.mode in ("RGBA", "LA") or "transparency" in src.info
            want = np.asarray(src.convert("RGBA" if alpha else "RGB"))
            bad = np.count_nonzero(have != want) if have.shape == want.shape else want.size
            (failures.append(f"{f}: {bad} of {want.size} differ from PIL ({have.shape} vs {want.shape})") if bad
             else print(f"ok   {f} ({want.shape}) equal to PIL's"))
        have = np.asarray(Image.open(os.path.join(out, "v224.png"))).astype(np.float64)
        want = np.asarray(Image.open(os.path.join(MEDIA, JPEGS[0])).convert("RGB").resize((224, 224), Image.BILINEAR))
        mse = np.mean((have - want.astype(np.float64)) ** 2)
        db = 10 * np.log10(255.0 ** 2 / mse) if mse else float("inf")
        (failures.append(f"vpc 224 x 224: PSNR {db:.1f} dB against PIL, under 30") if db < 30
         else print(f"ok   vpc 1080p -> 224 x 224 rgb888: PSNR {db:.1f} dB against PIL's bilinear resize"))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


sys.exit(main())
