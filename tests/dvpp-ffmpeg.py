#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# VDEC's frames against the ffmpeg program (a decoder outside the platform: its own demuxer,
# threads and pixel-format conversion), for the shipped H.264 and H.265 streams (a 10-bit one as
# P010 against ffmpeg's p010le, sample for sample): every frame's
# luma and chroma, bit for bit. The run saves each output (.yuv: frames one after another, each
# NV12 at the strides the docs give: width rounded up to 16, height to 2); ffmpeg writes packed
# NV12.
#
# VENC's streams the other way round: the raw 128 x 128 NV12 file and the CIF stream's frames
# encoded (H.264 and H.265, one IDR frame then P frames), decoded by the ffmpeg program and
# compared with the frames encoded by PSNR (NumPy); ffprobe gives the codec and the frame types.
#
# Usage: dvpp-ffmpeg.py DVP SOURCE_DIR   (needs python3-numpy, ffmpeg)
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP, SRC = sys.argv[1], sys.argv[2]
MEDIA = os.path.join(SRC, "scenarios", "dvpp", "media")
RAW = "pattern-128x128-nv12.yuv"
# (file, width, height, bytes a sample: 2 for a 10-bit stream, written P010 and by ffmpeg p010le)
STREAMS = [("pattern-352x288-baseline.h264", 352, 288, 1), ("pattern-1280x720.h265", 1280, 720, 1),
           ("pattern-1080p.h264", 1920, 1080, 1), ("pattern-320x240-10bit.h265", 320, 240, 2)]


def up(v, a):
    return (v + a - 1) // a * a


def check_encoded(stream, source, codec, frames):
    """VENC's stream decoded by ffmpeg against the packed NV12 frames it encoded."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name:frame=pict_type",
                            "-of", "csv=p=0", stream], capture_output=True, text=True, check=True).stdout.split()
    types = [t.strip(",") for t in probe if t.strip(",") in ("I", "P", "B")]
    name = os.path.basename(stream)
    if codec not in probe or types != ["I"] + ["P"] * (frames - 1):
        return [f"{name}: ffprobe says {probe}, want {codec} with frames I then P x {frames - 1}"]
    dec = stream + ".yuv"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", stream, "-f", "rawvideo", "-pix_fmt", "nv12", dec],
                   check=True)
    have = np.fromfile(dec, np.uint8)
    if have.size != source.size:
        return [f"{name}: decodes to {have.size} bytes, the frames encoded are {source.size}"]
    mse = np.mean((have.astype(np.float64) - source.astype(np.float64)) ** 2)
    db = 10 * np.log10(255.0 ** 2 / mse) if mse else float("inf")
    if db < 35:
        return [f"{name}: PSNR {db:.1f} dB against the frames encoded (least 35)"]
    print(f"ok   {name}: {frames} frames (I, then P), decoded by ffmpeg, PSNR {db:.1f} dB against the source")
    return []


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        entries = [f"  - {{name: v{i}, engine: vdec, input: {os.path.join(MEDIA, f)}, save: v{i}.yuv}}"
                   for i, (f, _, _, _) in enumerate(STREAMS)]
        entries += [f"  - {{name: e0, engine: venc, from: v0, gop: 0, save: e0.h264}}",
                    f"  - {{name: e1, engine: venc, input: {os.path.join(MEDIA, RAW)}, picture: [128, 128], "
                    f"gop: 0, qp: 32, save: e1.h265}}"]
        path, out = os.path.join(d, "s.yaml"), os.path.join(d, "out")
        with open(path, "w") as f:
            f.write("name: dvpp-ffmpeg\nplatform: {preset: ascend310}\ndvpp:\n" + "\n".join(entries) +
                    "\nrun: {trace: false}\n")
        r = subprocess.run([DVP, "run", path, "--quiet", "--out", out], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: dvp exit", r.returncode, r.stderr[-400:])
            return 1
        for i, (name, w, h, b) in enumerate(STREAMS):
            ref = os.path.join(d, f"ref{i}.yuv")
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(MEDIA, name), "-f", "rawvideo",
                            "-pix_fmt", "p010le" if b == 2 else "nv12", ref], check=True)
            sample = np.uint16 if b == 2 else np.uint8  # compare samples, at the layout's strides
            want = np.fromfile(ref, sample)
            have = np.fromfile(os.path.join(out, f"v{i}.yuv"), sample)
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
            if i == 0:
                failures += check_encoded(os.path.join(out, "e0.h264"), want, "h264", 4)
        failures += check_encoded(os.path.join(out, "e1.h265"), np.fromfile(os.path.join(MEDIA, RAW), np.uint8),
                                  "hevc", 2)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


sys.exit(main())
