#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# VDEC's frames against the ffmpeg program (a decoder outside the platform: its own demuxer,
# threads and pixel-format conversion), for the shipped H.264 and H.265 streams: every frame's
# luma and chroma, bit for bit. The run saves each output (.yuv: frames one after another, each
# NV12 at the strides the docs give: width rounded up to 16, height to 2); ffmpeg writes packed
# NV12.
#
# Usage: dvpp-ffmpeg.py DVP SOURCE_DIR   (needs python3-numpy, ffmpeg)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP, SRC = sys.argv[1], sys.argv[2]
MEDIA = os.path.join(SRC, "scenarios", "dvpp", "media")
STREAMS = [("pattern-352x288-baseline.h264", 352, 288), ("pattern-1280x720.h265", 1280, 720),
           ("pattern-1080p.h264", 1920, 1080)]


def up(v, a):
    return (v + a - 1) // a * a


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        entries = [f"  - {{name: v{i}, engine: vdec, input: {os.path.join(MEDIA, f)}, save: v{i}.yuv}}"
                   for i, (f, _, _) in enumerate(STREAMS)]
        path, out = os.path.join(d, "s.yaml"), os.path.join(d, "out")
        with open(path, "w") as f:
            f.write("name: dvpp-ffmpeg\nplatform: {preset: ascend310}\ndvpp:\n" + "\n".join(entries) +
                    "\nrun: {trace: false}\n")
        r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: dvp exit", r.returncode, r.stderr[-400:])
            return 1
        for i, (name, w, h) in enumerate(STREAMS):
            ref = os.path.join(d, f"ref{i}.yuv")
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(MEDIA, name), "-f", "rawvideo",
                            "-pix_fmt", "nv12", ref], check=True)
            want = np.fromfile(ref, np.uint8)
            have = np.fromfile(os.path.join(out, f"v{i}.yuv"), np.uint8)
            sw, sh = up(w, 16), up(h, 2)
            frames, per = want.size // (w * h * 3 // 2), sw * sh * 3 // 2
            if have.size != frames * per:
                failures.append(f"{name}: {have.size // per} frames, ffmpeg {frames}")
                continue
            bad = 0
            for k in range(frames):
                fw, fh = want[k * w * h * 3 // 2:(k + 1) * w * h * 3 // 2], have[k * per:(k + 1) * per]
                y = fh[:sw * sh].reshape(sh, sw)[:h, :w]
                uv = fh[sw * sh:].reshape(sh // 2, sw)[:h // 2, :w]
                bad += np.count_nonzero(y != fw[:w * h].reshape(h, w))
                bad += np.count_nonzero(uv != fw[w * h:].reshape(h // 2, w))
            (failures.append(f"{name}: {bad} samples differ from ffmpeg's") if bad
             else print(f"ok   {name}: {frames} frames of {w} x {h} equal to ffmpeg's"))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


sys.exit(main())
