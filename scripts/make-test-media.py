#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Makes the DVPP test media in scenarios/dvpp/media/ (committed; run again only to change them):
# JPEG baseline 4:2:0, 4:2:2, 4:4:4 and grey, odd sizes, a progressive one and a tiny one; PNG
# 8-bit RGB, RGBA, grey, palette with transparency, a 16-bit one; and broken files (truncated,
# a bad CRC); H.264 and H.265 elementary streams of a few frames (8-bit, 1080p and smaller; a
# 10-bit one; one under VDEC's 128 pixels; a damaged one). Synthetic scenes (gradients, discs,
# bars, seeded noise), made with PIL and NumPy; the streams by ffmpeg's libx264 / libx265 from
# its testsrc2 pattern (single-threaded, so the bytes are the same every time).
#
# Usage: scripts/make-test-media.py   (needs python3-pil, python3-numpy, ffmpeg)
import os
import subprocess

import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "dvpp", "media")


def scene(w, h, seed, noise=4.0):
    """An RGB picture with smooth areas, edges and some texture, as a camera frame has."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = 128 + 100 * np.sin(x / w * 6.0 + seed)
    g = 128 + 100 * np.cos(y / h * 5.0)
    b = 255 * (x + y) / (w + h)
    img = np.stack([r, g, b], axis=-1)
    for _ in range(6):  # discs
        cx, cy, rad = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.05, 0.2) * min(w, h)
        mask = (x - cx) ** 2 + (y - cy) ** 2 < rad ** 2
        img[mask] = rng.uniform(0, 255, 3)
    img[:, (np.arange(w) // max(1, w // 24)) % 2 == 0] *= 0.85  # bars
    img += rng.normal(0, noise, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def save_jpeg(name, arr, **kw):
    Image.fromarray(arr).save(os.path.join(OUT, name), "JPEG", **kw)


def main():
    os.makedirs(OUT, exist_ok=True)
    save_jpeg("scene-1080p-420.jpg", scene(1920, 1080, 1), quality=60, subsampling=2)
    save_jpeg("scene-640x480-444.jpg", scene(640, 480, 2), quality=80, subsampling=0)
    save_jpeg("scene-400x300-422.jpg", scene(400, 300, 3), quality=80, subsampling=1)
    save_jpeg("scene-333x211-420.jpg", scene(333, 211, 4), quality=85, subsampling=2)
    Image.fromarray(scene(320, 240, 5)).convert("L").save(os.path.join(OUT, "grey-320x240.jpg"), quality=85)
    save_jpeg("progressive-320x240.jpg", scene(320, 240, 6), quality=80, progressive=True)
    save_jpeg("tiny-16x16.jpg", scene(16, 16, 7), quality=90)
    data = open(os.path.join(OUT, "scene-400x300-422.jpg"), "rb").read()
    open(os.path.join(OUT, "truncated.jpg"), "wb").write(data[: len(data) // 2])

    Image.fromarray(scene(300, 200, 8, noise=0)).save(os.path.join(OUT, "rgb-300x200.png"))
    rgba = np.dstack([scene(257, 129, 9, noise=0), (np.arange(257)[None, :] + np.zeros((129, 1))).astype(np.uint8)])
    Image.fromarray(rgba, "RGBA").save(os.path.join(OUT, "rgba-257x129.png"))
    Image.fromarray(scene(64, 64, 10, noise=0)).convert("L").save(os.path.join(OUT, "grey-64x64.png"))
    Image.fromarray(scene(12, 12, 12, noise=0)).save(os.path.join(OUT, "tiny-12x12.png"))
    pal = Image.fromarray(scene(100, 100, 11, noise=0)).convert("P", palette=Image.ADAPTIVE, colors=16)
    pal.save(os.path.join(OUT, "palette-100x100.png"), transparency=3)
    Image.fromarray((np.arange(64 * 64).reshape(64, 64) * 16).astype(np.uint16)).save(
        os.path.join(OUT, "grey16-64x64.png"))
    data = bytearray(open(os.path.join(OUT, "rgb-300x200.png"), "rb").read())
    open(os.path.join(OUT, "truncated.png"), "wb").write(data[: len(data) * 2 // 3])
    at = data.index(b"IDAT")
    length = int.from_bytes(data[at - 4:at], "big")
    data[at + 4 + length] ^= 0xFF  # the first IDAT chunk's CRC, one bit pattern off
    open(os.path.join(OUT, "bad-crc.png"), "wb").write(bytes(data))


def stream(name, size, frames, codec, extra):
    """An elementary stream of testsrc2 (a moving test pattern) by ffmpeg."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=30",
                    "-frames:v", str(frames), "-c:v", codec, "-threads", "1", *extra,
                    "-f", "hevc" if codec == "libx265" else "h264", os.path.join(OUT, name)], check=True)


def streams():
    x264 = ["-pix_fmt", "yuv420p", "-x264-params", "threads=1:lookahead-threads=1"]
    x265 = ["-x265-params", "pools=none:frame-threads=1:log-level=error"]
    stream("pattern-1080p.h264", "1920x1080", 6, "libx264", ["-crf", "38", "-preset", "veryfast", *x264])
    stream("pattern-352x288-baseline.h264", "352x288", 4, "libx264", ["-profile:v", "baseline", "-crf", "30", *x264])
    stream("pattern-1280x720.h265", "1280x720", 4, "libx265", ["-pix_fmt", "yuv420p", "-crf", "36", *x265])
    stream("pattern-4k.h265", "3840x2160", 2, "libx265", ["-pix_fmt", "yuv420p", "-crf", "45", *x265])
    stream("pattern-320x240-10bit.h265", "320x240", 2, "libx265", ["-pix_fmt", "yuv420p10le", *x265])
    stream("pattern-64x64.h264", "64x64", 2, "libx264", x264)
    stream("pattern-200x138.h264", "200x138", 3, "libx264", ["-crf", "30", *x264])  # sides off 32 and 4
    # Raw NV12 frames, as a user brings them to VENC (ffmpeg -pix_fmt nv12 -f rawvideo).
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=128x128:rate=30",
                    "-frames:v", "2", "-pix_fmt", "nv12", "-f", "rawvideo",
                    os.path.join(OUT, "pattern-128x128-nv12.yuv")], check=True)
    data = bytearray(open(os.path.join(OUT, "pattern-352x288-baseline.h264"), "rb").read())
    for i in range(len(data) // 2, len(data) // 2 + 64):  # slice data of a middle frame overwritten
        data[i] = 0xA5
    open(os.path.join(OUT, "damaged.h264"), "wb").write(bytes(data))


if __name__ == "__main__":
    main()
    streams()
