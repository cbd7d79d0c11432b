#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The f16 epilogue's vector time against the f32 one's, on the ResNet bottleneck's last conv
# (scenarios/kernels/conv-residual.yaml, then the same with shape.epilogue: f16), timing-only.
# Per row of 128 output channels the f32 epilogue takes ten 256-byte vector repeats (the bias
# add, the shortcut's cast to f32, its add, ReLU, each two repeats of 64 f32, and the cast to
# f16 over 64 f32 a repeat: two), the f16 one three (bias, shortcut, ReLU over 128 f16): 0.3 of
# the vector time, and a little more for each instruction's start-up.
import json, os, subprocess, sys, tempfile

dvp, src = sys.argv[1], sys.argv[2]
with open(src) as f:
    text = f.read()
assert "weights_layout: fractal_z}" in text
vector = {}
with tempfile.TemporaryDirectory() as d:
    for mode in ("f32", "f16"):
        path = os.path.join(d, mode + ".yaml")
        with open(path, "w") as f:
            f.write(text.replace("weights_layout: fractal_z}", f"weights_layout: fractal_z, epilogue: {mode}}}"))
        out = os.path.join(d, mode)
        subprocess.run([dvp, "run", path, "--timing-only", "--no-trace", "--quiet", "--out", out], check=True)
        with open(os.path.join(out, "stats.json")) as f:
            s = json.load(f)
        t = s["summary"]["simulated_ns"]
        vector[mode] = sum(s[f"soc.aicore.core{c}"]["vector_busy"] * t for c in (0, 1))
        print(f"{mode} epilogue: {t / 1000:.1f} us, vector busy {vector[mode] / 2000:.1f} us a core")
ratio = vector["f16"] / vector["f32"]
print(f"f16 / f32 vector time: {ratio:.3f} (want 0.3, up to 0.36 with start-ups)")
sys.exit(0 if 0.28 <= ratio <= 0.36 else 1)
