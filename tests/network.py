#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Networks through dvp, against NumPy: a small CNN written here with python3-onnx (a 3-channel
# image, conv + batch norm + ReLU, max pooling, a residual block whose 24 output channels are no
# whole group of 16 with a 1 x 1 shortcut conv, global average pooling, a fully connected layer
# and softmax) runs with `dvp run model.onnx --input ... --check-layers` on both presets, every
# layer checked by the platform, and its saved output is compared with NumPy's forward pass of
# the same weights; again in the activation arena, and with a batch of 3 (each image's output
# against NumPy). Then small graphs for what the CNN lacks (views, a classifier head, MobileNet's
# ReLU6, batch norms no conv folds, constants broadcast, an Inception block's Concat), each against
# NumPy, and a 1-D CNN. Then what users get wrong: an op the compiler does not lower, an input file
# of the wrong shape, an input name the model does not have, a corrupt model file: each a named
# error and exit 2.
#
# Usage: network.py DVP     (needs python3-onnx and python3-numpy)
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DVP = sys.argv[1]
rng = np.random.default_rng(7)
failures = []


def conv(x, w, stride=1, pad=0):
    c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((o, ho, wo))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("chw,oc->ohw", xp[:, i:i + stride * (ho - 1) + 1:stride, j:j + stride * (wo - 1) + 1:stride],
                           w[:, :, i, j])
    return y


def bn(x, p):
    g, b, m, v = p
    return ((x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5)) * g[:, None, None] + b[:, None, None]


def maxpool(x):
    c, h, w = x.shape
    return x[:, :h // 2 * 2, :w // 2 * 2].reshape(c, h // 2, 2, w // 2, 2).max(axis=(2, 4))


def small_cnn(path):
    inits, nodes = [], []
    f32 = lambda a: a.astype(np.float32)

    def init(name, a):
        inits.append(numpy_helper.from_array(f32(a), name))
        return name

    def bn_params(c):
        return [f32(rng.uniform(0.5, 1.5, c)), f32(rng.uniform(-0.2, 0.2, c)), f32(rng.uniform(-0.2, 0.2, c)),
                f32(rng.uniform(0.5, 1.5, c))]

    w1, p1 = f32(rng.normal(0, 0.4, (16, 3, 3, 3))), bn_params(16)
    w2, p2 = f32(rng.normal(0, 0.15, (24, 16, 3, 3))), bn_params(24)
    ws = f32(rng.normal(0, 0.3, (24, 16, 1, 1)))
    fc, fb = f32(rng.normal(0, 0.3, (10, 24))), f32(rng.uniform(-0.1, 0.1, 10))
    nodes += [helper.make_node("Conv", ["x", init("w1", w1)], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
              helper.make_node("BatchNormalization", ["c1"] + [init(f"bn1.{i}", a) for i, a in enumerate(p1)], ["b1"],
                               name="bn1"),
              helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
              helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
              helper.make_node("Conv", ["p1", init("w2", w2)], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
              helper.make_node("BatchNormalization", ["c2"] + [init(f"bn2.{i}", a) for i, a in enumerate(p2)], ["b2"],
                               name="bn2"),
              helper.make_node("Conv", ["p1", init("ws", ws)], ["s"], name="shortcut"),
              helper.make_node("Add", ["b2", "s"], ["a"], name="add"),
              helper.make_node("Relu", ["a"], ["r2"], name="relu2"),
              helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
              helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
              helper.make_node("Relu", ["f"], ["fr"], name="relu3"),  # a layer of its own: elementwise
              helper.make_node("Gemm", ["fr", init("fc", fc), init("fb", fb)], ["l"], name="fc", transB=1),
              helper.make_node("Softmax", ["l"], ["prob"], name="softmax")]
    graph = helper.make_graph(nodes, "small-cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 21, 18])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7), path)

    def forward(x):
        y = maxpool(np.maximum(bn(conv(x[0], w1, 1, 1), p1), 0))
        y = np.maximum(bn(conv(y, w2, 1, 1), p2) + conv(y, ws), 0)
        logits = fc.astype(np.float64) @ y.mean(axis=(1, 2)) + fb
        e = np.exp(logits - logits.max())
        return (e / e.sum())[None]
    return forward


def dvp(args, want_rc, pattern, what):
    # A run stopped mid-simulation (exit 3) leaves thread processes suspended, their locals never
    # freed: no leak check there, as for the CLI tests (tests/CMakeLists.txt, NO_LEAK_CHECK).
    env = dict(os.environ, LSAN_OPTIONS="detect_leaks=0") if want_rc == 3 else None
    r = subprocess.run([DVP] + args, capture_output=True, text=True, env=env)
    if r.returncode != want_rc or not re.search(pattern, r.stdout + r.stderr):
        failures.append(f"{what}: exit {r.returncode} (want {want_rc}), output: {(r.stdout + r.stderr)[-600:]}")
        return False
    print("ok  ", what)
    return True


with tempfile.TemporaryDirectory() as d:
    model = os.path.join(d, "cnn.onnx")
    forward = small_cnn(model)
    x = rng.uniform(-1, 1, (1, 3, 21, 18)).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    want = forward(x.astype(np.float16).astype(np.float64))
    # Every layer checked (each its own memory), and the layers sharing the activation arena.
    for preset, flags in (("ascend310", ["--check-layers"]), ("ascend910", ["--check-layers"]), ("ascend310", [])):
        out = os.path.join(d, preset + "".join(flags))
        if dvp(["run", model, "--preset", preset, "--input", "x=" + os.path.join(d, "x.npy"), "--out", out,
                "--no-trace"] + flags, 0,
               ("" if flags else r"in an arena of \d+ KiB[\s\S]*") + r"kernel softmax: 10 elements within",
               f"small CNN on {preset} {' '.join(flags) or 'in the arena'}"):
            have = np.load(os.path.join(out, "outputs", "prob.npy")).astype(np.float64)
            err = np.abs(have - want).max()
            print(f"     max abs error against NumPy {err:.2e}")
            if have.shape != want.shape or err > 5e-3:
                failures.append(f"small CNN on {preset}: max abs error {err} against NumPy")

    # The precision mode: by default (force_fp16, as ATC's) the layers' epilogues run in f16 (their
    # kernels' shape says epilogue: f16); allow_fp32_to_fp16 runs them in f32. Both within the same
    # bound of NumPy; an unknown mode is named.
    out = os.path.join(d, "fp32-epilogue")
    if dvp(["run", model, "--precision-mode", "allow_fp32_to_fp16", "--input", "x=" + os.path.join(d, "x.npy"),
            "--out", out, "--no-trace"], 0, r"kernel softmax: 10 elements within", "small CNN, f32 epilogues"):
        err = np.abs(np.load(os.path.join(out, "outputs", "prob.npy")).astype(np.float64) - want).max()
        print(f"     max abs error against NumPy {err:.2e}")
        with open(os.path.join(out, "compiled", "model.yaml")) as f:
            f32_model = f.read()
        with open(os.path.join(d, "ascend310", "compiled", "model.yaml")) as f:
            f16_model = f.read()
        if err > 5e-3 or "epilogue: f16" in f32_model or f16_model.count("epilogue: f16") < 3:
            failures.append(f"small CNN, precision modes: error {err}, f16 epilogues in the f32 model "
                            f"{f32_model.count('epilogue: f16')}, in the default one {f16_model.count('epilogue: f16')}")
    dvp(["run", model, "--precision-mode", "fp8", "--out", os.path.join(d, "fp8")], 2,
        r"--precision-mode fp8: give force_fp16 or allow_fp32_to_fp16", "an unknown precision mode")
    # A batch norm whose scale (1e-7: variance 1e14) would take the folded weights out of f16's range
    # stays in the epilogue, after sums of 144000; an f16 epilogue would round them to inf first
    # (a review found it: NaN after the Relu's next conv). Such a layer keeps the f32 epilogue.
    bw, beye = np.full((16, 16, 3, 3), 100, np.float32), np.eye(16, dtype=np.float32).reshape(16, 16, 1, 1)
    bnp = {"bw": bw, "beye": beye, "g": np.ones(16, np.float32), "b": np.full(16, .5, np.float32),
           "m": np.zeros(16, np.float32), "v": np.full(16, 1e14, np.float32)}
    bg = helper.make_graph([helper.make_node("Conv", ["x", "bw"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                        helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["n"], name="bn"),
                        helper.make_node("Relu", ["n"], ["r"], name="relu"), helper.make_node("Conv", ["r", "beye"], ["y"], name="eye")],
                       "bnbig", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])],
                       [numpy_helper.from_array(v, k) for k, v in bnp.items()])
    onnx.save(helper.make_model(bg, opset_imports=[helper.make_opsetid("", 13)], ir_version=7), os.path.join(d, "bnbig.onnx"))
    np.save(os.path.join(d, "bnx.npy"), np.full((1, 16, 8, 8), 10, np.float32))
    dvp(["run", os.path.join(d, "bnbig.onnx"), "--input", "x=" + os.path.join(d, "bnx.npy"), "--out",
         os.path.join(d, "bnbig"), "--no-trace", "--check-layers"], 0, r"kernel eye: 1024 elements within",
        "a batch norm's scale kept out of the weights, under the default precision mode")

    # With --preload the weights are preloaded into the L2 (the SDMA's stashes); the output is the
    # same as a --no-preload run's, bit for bit: a preload moves no value. (The default plan on
    # ascend310 preloads them too: its LPDDR4 takes 2 us or more to stream the window.)
    import json
    out = os.path.join(d, "preload")
    none = os.path.join(d, "no-preload")
    dvp(["run", model, "--no-preload", "--input", "x=" + os.path.join(d, "x.npy"), "--out", none, "--no-trace"], 0,
        r"kernel softmax: 10 elements within", "small CNN, --no-preload")
    if dvp(["run", model, "--preload", "--input", "x=" + os.path.join(d, "x.npy"), "--out", out, "--no-trace"], 0,
           r"kernel softmax: 10 elements within", "small CNN, --preload"):
        st = json.load(open(os.path.join(out, "stats.json")))
        sdma, stashes = st["soc.periph.ts.sdma"], sum(st[k]["stashes"] for k in st if k.startswith("soc.l2.hn"))
        if sdma["preloads"] < 3 or sdma["bytes"] < 4096 or stashes < sdma["bytes"] // 128:
            failures.append(f"small CNN: the preloads did not run: sdma {sdma}, L2 stashes {stashes}")
        else:
            print(f"ok   preloads: {sdma['preloads']} of {sdma['bytes']} bytes, {stashes} L2 stashes")
        same = np.array_equal(np.load(os.path.join(out, "outputs", "prob.npy")),
                              np.load(os.path.join(none, "outputs", "prob.npy")))
        default = open(os.path.join(d, "ascend310", "compiled", "model.yaml")).read().split("tasks:")[1]
        plain = open(os.path.join(none, "compiled", "model.yaml")).read().split("tasks:")[1]
        if not same or "preload" not in default or "preload" in plain:
            failures.append("small CNN, --preload: output differs from --no-preload's, or the default on ascend310 "
                            "planned no preload, or --no-preload one")
        # A preload of a tensor the kernel does not have: named.
        bad = os.path.join(d, "preload", "compiled", "bad-preload.yaml")  # beside the tensors it names
        with open(os.path.join(d, "preload", "compiled", "model.yaml")) as f:
            text = f.read()
        i = text.index("- {preload: ")
        j = text.index(".", i)
        open(bad, "w").write(text[:j] + ".nosuch" + text[text.index("}", j):])
        dvp(["run", bad, "--out", os.path.join(d, "bad-preload"), "--quiet"], 2,
            r"kernel '[^']+' has no tensor 'nosuch'", "a preload of a tensor the kernel lacks")
    # Discards (--discard: every range; the default plans none for a network the L2 holds whole):
    # in the arena, the activations no later layer reads are dropped from the L2 after their last
    # reader (the SDMA's discard tasks), dirty lines unwritten, and the output is still NumPy's. A
    # discard moved before its tensor's reader drops what the reader needs: the L2 names the read
    # of a stale line (with firmware it keeps tags only, so the values alone would not show it).
    out = os.path.join(d, "discard")
    if dvp(["run", model, "--discard", "--input", "x=" + os.path.join(d, "x.npy"), "--out", out, "--no-trace"], 0,
           r"kernel softmax: 10 elements within", "small CNN, --discard"):
        st = json.load(open(os.path.join(out, "stats.json")))
        sdma = st["soc.periph.ts.sdma"]
        dropped = sum(st[k]["discarded_dirty"] for k in st if k.startswith("soc.l2.hn"))
        lines = open(os.path.join(out, "compiled", "model.yaml")).read().split("\n")
        default = open(os.path.join(d, "ascend310", "compiled", "model.yaml")).read()
        err = np.abs(np.load(os.path.join(out, "outputs", "prob.npy")).astype(np.float64) - want).max()
        if sdma["discards"] < 2 or dropped < 2 or "{discard: " in default or err > 5e-3:
            failures.append(f"small CNN, --discard: sdma {sdma}, dirty lines dropped {dropped}, error {err}, "
                            f"discards planned by default: {default.count('{discard: ')}")
        else:
            print(f"ok   discards: {sdma['discards']} of {sdma['discard_bytes']} bytes, {dropped} dirty lines dropped")
        early, most = None, 0  # the largest discard with a reader between its tensor's writer and it
        for i, ln in enumerate(lines):
            m = re.match(r"\s*- \{discard: ([^.,}]+)\..*bytes: (\d+)", ln)
            at = m and next(j for j, k in enumerate(lines) if j > lines.index("tasks:") and  # not network: layers:
                            re.match(r"\s*- \{kernel: " + re.escape(m.group(1)) + r"[,}]", k))
            if m and int(m.group(2)) > most and not all(re.match(r"\s*- \{discard: ", k) for k in lines[at + 1:i]):
                early = lines[:at + 1] + [ln] + [k for j, k in enumerate(lines[at + 1:], at + 1) if j != i]
                most = int(m.group(2))
        bad = os.path.join(out, "compiled", "early-discard.yaml")
        open(bad, "w").write("\n".join(early or lines))
        dvp(["run", bad, "--out", os.path.join(d, "early-discard"), "--quiet"], 3,
            r"l2\.hn\d: a read of line 0x[0-9a-f]+, which a discard dropped",
            "a discard moved before its tensor's reader: the read of a stale line named")
        past = [k if "offset" in k else re.sub(r"\{discard: ([^,]+), ", r"{discard: \1, offset: 1073741824, ", k)
                for k in lines]
        open(bad, "w").write("\n".join(past))
        dvp(["run", bad, "--out", os.path.join(d, "past-discard"), "--quiet"], 2,
            r"offset 1073741824 is past the tensor's \d+ bytes", "a discard past its tensor named")
    dvp(["compile", model, "--discard", "--no-discard", "--out", os.path.join(d, "both")], 2,
        r"give --discard or --no-discard, not both", "--discard with --no-discard refused")

    dvp(["compile", model, "--preload", "--no-preload", "--out", os.path.join(d, "both")], 2,
        r"give --preload or --no-preload, not both", "--preload with --no-preload refused")
    maybe = os.path.join(d, "maybe.yaml")
    open(maybe, "w").write(f"name: maybe\nplatform: {{preset: ascend310}}\nmodel: {{onnx: {model}, preload: maybe}}\n")
    dvp(["run", maybe, "--out", os.path.join(d, "maybe"), "--quiet"], 2, r"model\.preload.*'maybe'",
        "model: {preload: maybe} refused by name")

    # A timing-only run compiles without the host reference's arithmetic (it checks nothing): its
    # model has no check and no reference file, and it runs the same simulated time, to the
    # picosecond, as the functionally compiled model run timing-only.
    timing, full = os.path.join(d, "timing"), os.path.join(d, "timing-full")
    if dvp(["run", model, "--timing-only", "--input", "x=" + os.path.join(d, "x.npy"), "--out", timing, "--no-trace"],
           0, r"latency", "small CNN, a timing-only run") and \
       dvp(["run", os.path.join(d, "ascend310", "compiled", "model.yaml"), "--timing-only", "--out", full,
            "--no-trace", "--quiet"], 0, "", "small CNN, its functional compile run timing-only"):
        text = open(os.path.join(timing, "compiled", "model.yaml")).read()
        ns = [json.load(open(os.path.join(o, "stats.json")))["summary"]["simulated_ns"] for o in (timing, full)]
        ref = os.path.join(timing, "compiled", "reference")
        if "check:" in text or "nothing checked" not in text or os.path.exists(ref) or ns[0] != ns[1]:
            failures.append(f"small CNN, timing-only compile: checks {text.count('check:')}, reference dir "
                            f"{os.path.exists(ref)}, simulated ns {ns[0]} against {ns[1]}")
        else:
            print(f"ok   timing-only compile: no checks, {ns[0]} ns as the functional compile's")

    # A firmware that never submits the layers (it spins): the run ends at the limit derived from
    # the network's work, named, rather than running until the test's timeout.
    dvp(["run", os.path.join(d, "ascend310", "compiled", "model.yaml"), "--set", "firmware.image=fault-spin",
         "--out", os.path.join(d, "spin"), "--no-trace", "--quiet"], 3,
        r"simulated-time limit run\.max_sim_ns \([0-9.]+ ns\) reached \(derived from the network's work",
        "a hung firmware under a compiled network: the derived simulated-time limit")

    # The runtime's task table holds 4096 tasks: at batch 512 the small CNN's 8 layers per image
    # fill it, so its 6 preloads (--preload) are dropped (a speed-up only), not the model refused.
    c512 = os.path.join(d, "b512")
    if dvp(["compile", model, "--batch", "512", "--preload", "--out", c512], 0, "compiled",
           "small CNN at batch 512: compiled"):
        tasks = open(os.path.join(c512, "model.yaml")).read().split("\ntasks:")[1].split("\nchecks:")[0]
        n, pre = tasks.count("\n  - "), tasks.count("preload:")
        if n != 4096 or pre:
            failures.append(f"small CNN at batch 512: {n} tasks with {pre} preloads (want 4096, no preload)")
        else:
            print("ok   batch 512: 4096 tasks, the preloads dropped to fit the runtime's task table")

    # A platform of the user's own without the task scheduler's SDMA engine: the model asked to
    # preload runs without (a note says so), the same output bit for bit.
    presets = os.path.join(d, "presets")
    os.makedirs(presets)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "presets", "ascend310.yaml")
    lines, keep = open(src).read().split("\n"), []
    for ln in lines:  # the ts.sdma section: its line and the deeper-indented ones after it
        if ln.startswith("    sdma:") or (keep and keep[-1] is None and ln.startswith("      ")):
            keep.append(None)
        else:
            keep.append(ln)
    open(os.path.join(presets, "nosdma.yaml"), "w").write("\n".join(x for x in keep if x is not None))
    out = os.path.join(d, "nosdma")
    r = subprocess.run([DVP, "run", model, "--preload", "--preset", "nosdma", "--input", "x=" + os.path.join(d, "x.npy"), "--out",
                        out, "--no-trace"], capture_output=True, text=True, env=dict(os.environ, DVP_PRESETS=presets))
    if r.returncode or "has no SDMA engine (platform.ts.sdma): the model runs without weight preloads" not in r.stderr \
            or not np.array_equal(np.load(os.path.join(out, "outputs", "prob.npy")),
                                  np.load(os.path.join(d, "ascend310", "outputs", "prob.npy"))):
        failures.append(f"a platform without an SDMA: exit {r.returncode}, {(r.stdout + r.stderr)[-600:]}")
    else:
        print("ok   a platform without an SDMA engine: no preloads, the same output")

    # A batch of 3: each layer a kernel per image, the weights shared; each image against NumPy.
    xb = rng.uniform(-1, 1, (3, 3, 21, 18)).astype(np.float32)
    np.save(os.path.join(d, "xb.npy"), xb)
    out = os.path.join(d, "batch")
    if dvp(["run", model, "--batch", "3", "--input", "x=" + os.path.join(d, "xb.npy"), "--out", out, "--no-trace"], 0,
           r"network .*cnn\.onnx \(batch 3\)[\s\S]*conv1_b2 [\s\S]*images/s", "small CNN, a batch of 3"):
        for b in range(3):
            have = np.load(os.path.join(out, "outputs", f"prob.b{b}.npy")).astype(np.float64)
            err = np.abs(have - forward(xb[b:b + 1].astype(np.float16).astype(np.float64))).max()
            print(f"     image {b}: max abs error against NumPy {err:.2e}")
            if err > 5e-3:
                failures.append(f"small CNN, batch of 3, image {b}: max abs error {err} against NumPy")

    # The same network from a scenario's model: key, its own checks added to the compiled ones.
    with open(os.path.join(d, "scenario.yaml"), "w") as f:
        f.write("name: cnn-scenario\nplatform: {preset: ascend310}\n"
                "model: {onnx: cnn.onnx, inputs: [x=x.npy]}\n"
                "checks:\n  - {metric: summary.network.latency_us, max: 1000000}\n")
    out = os.path.join(d, "scenario")
    if dvp(["run", os.path.join(d, "scenario.yaml"), "--out", out, "--no-trace"], 0,
           r"ok   summary.firmware_exit_code[\s\S]*ok   summary.network.latency_us[\s\S]*"
           r"ok   kernel softmax: 10 elements within", "model: in a scenario"):
        err = np.abs(np.load(os.path.join(out, "outputs", "prob.npy")) - want).max()
        if err > 5e-3:
            failures.append(f"model: in a scenario: max abs error {err} against NumPy")
    # ... and timing-only (--timing-only, or run.timing_only): compiled without the reference's values.
    out = os.path.join(d, "scenario-timing")
    if dvp(["run", os.path.join(d, "scenario.yaml"), "--out", out, "--no-trace", "--set", "run.timing_only=true"], 0,
           r"ok   summary.network.latency_us", "model: in a scenario, timing-only"):
        if "check:" in open(os.path.join(out, "compiled", "model.yaml")).read():
            failures.append("model: in a scenario, timing-only: the compiled model has checks")

    # A graph input read twice by one layer: Add(x, x).
    twice = helper.make_graph([helper.make_node("Add", ["v", "v"], ["w"], name="double")], "twice",
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, [4, 40])],
                              [helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 40])])
    onnx.save(helper.make_model(twice, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "twice.onnx"))
    v = rng.uniform(-1, 1, (4, 40)).astype(np.float32)
    np.save(os.path.join(d, "v.npy"), v)
    if dvp(["run", os.path.join(d, "twice.onnx"), "--input", "v=" + os.path.join(d, "v.npy"), "--out",
            os.path.join(d, "twice"), "--no-trace"], 0, r"kernel double: 160 elements within", "Add(x, x)"):
        if not np.allclose(np.load(os.path.join(d, "twice", "outputs", "w.npy")), 2 * v, rtol=1e-6, atol=0):
            failures.append("Add(x, x): not 2x")

    # Views folded into their readers: a Transpose without perm (the axes reversed) read as a
    # MatMul's B, and a graph input another layer placed already, scaled by a constant before a
    # Softmax; against NumPy.
    a_in = helper.make_tensor_value_info("a", TensorProto.FLOAT, [8, 32])
    b_in = helper.make_tensor_value_info("b", TensorProto.FLOAT, [16, 32])
    views = helper.make_graph(
        [helper.make_node("Relu", ["b"], ["rb"], name="relu_b"),
         helper.make_node("Transpose", ["rb"], ["bt"], name="flip"),
         helper.make_node("MatMul", ["a", "bt"], ["ab"], name="ab"),
         helper.make_node("Relu", ["a"], ["ra"], name="relu_a"),
         helper.make_node("Mul", ["a", "half"], ["ah"], name="halve"),
         helper.make_node("Softmax", ["ah"], ["sm"], name="sm", axis=-1)], "views", [a_in, b_in],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, s) for v, s in (("ab", [8, 16]), ("ra", [8, 32]),
                                                                              ("sm", [8, 32]))],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    onnx.save(helper.make_model(views, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "views.onnx"))
    va, vb = rng.uniform(-2, 2, (8, 32)).astype(np.float32), rng.uniform(-2, 2, (16, 32)).astype(np.float32)
    np.save(os.path.join(d, "va.npy"), va)
    np.save(os.path.join(d, "vb.npy"), vb)
    vout = os.path.join(d, "views")
    if dvp(["run", os.path.join(d, "views.onnx"), "--input", "a=" + os.path.join(d, "va.npy"), "--input",
            "b=" + os.path.join(d, "vb.npy"), "--out", vout, "--no-trace"], 0, r"kernel ab: 128 elements within",
           "folded views"):
        e = np.exp(va / 2 - (va / 2).max(axis=1, keepdims=True))
        for name, want in (("ab", va @ np.maximum(vb, 0).T), ("sm", e / e.sum(axis=1, keepdims=True))):
            err = np.abs(np.load(os.path.join(vout, "outputs", name + ".npy")) - want).max()
            if not err <= 2e-2 * max(1.0, np.abs(want).max()):
                failures.append(f"folded views: {name} max abs error {err} against NumPy")

    # --output: a chosen value instead of the graph outputs (here a layer's the MatMul reads).
    vout = os.path.join(d, "views-rb")
    if dvp(["run", os.path.join(d, "views.onnx"), "--input", "a=" + os.path.join(d, "va.npy"), "--input",
            "b=" + os.path.join(d, "vb.npy"), "--output", "rb", "--out", vout, "--no-trace"], 0,
           r"kernel relu_b: 512 elements within", "--output rb"):
        if sorted(os.listdir(os.path.join(vout, "outputs"))) != ["rb.npy"]:
            failures.append(f"--output rb: saved {sorted(os.listdir(os.path.join(vout, 'outputs')))}")
        elif not np.allclose(np.load(os.path.join(vout, "outputs", "rb.npy")), np.maximum(vb, 0), rtol=1e-6, atol=0):
            failures.append("--output rb: not relu(b)")
    dvp(["compile", os.path.join(d, "views.onnx"), "--output", "nosuch", "--out", os.path.join(d, "c")], 2,
        r"--output nosuch: .*views\.onnx has no node output of that name", "--output of a name the model lacks")

    # A classifier's head on the AI CPU: TopK (5) of the softmax and ArgMax of the logits, their
    # indices exactly NumPy's (logits far apart for fp16), the values within fp16's rounding.
    wfc = rng.normal(0, 1, (64, 100)).astype(np.float32)
    head = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["logits"], name="fc"),
         helper.make_node("Softmax", ["logits"], ["prob"], name="sm", axis=-1),
         helper.make_node("TopK", ["prob", "k"], ["top_p", "top_i"], name="top5", axis=-1),
         helper.make_node("ArgMax", ["logits"], ["cls"], name="best", axis=1, keepdims=1)], "head",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("top_p", TensorProto.FLOAT, [1, 5]),
         helper.make_tensor_value_info("top_i", TensorProto.INT64, [1, 5]),
         helper.make_tensor_value_info("cls", TensorProto.INT64, [1, 1])],
        [numpy_helper.from_array(wfc, "W"), numpy_helper.from_array(np.array([5], np.int64), "k")])
    onnx.save(helper.make_model(head, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "head.onnx"))
    hx = rng.uniform(-1, 1, (1, 64)).astype(np.float32)
    np.save(os.path.join(d, "hx.npy"), hx)
    hout = os.path.join(d, "head")
    if dvp(["run", os.path.join(d, "head.onnx"), "--input", "x=" + os.path.join(d, "hx.npy"), "--out", hout,
            "--no-trace"], 0, r"kernel top5 +on an AI CPU core[\s\S]*ok   kernel top5: 5 elements", "TopK, ArgMax"):
        logits = hx.astype(np.float64) @ wfc
        p = np.exp(logits - logits.max())
        p /= p.sum()
        order = np.argsort(-logits[0], kind="stable")
        got = {n: np.load(os.path.join(hout, "outputs", n + ".npy")) for n in ("top_i", "top_p", "cls")}
        if list(got["top_i"].ravel()) != list(order[:5]) or int(got["cls"].ravel()[0]) != order[0]:
            failures.append(f"TopK, ArgMax: indices {got['top_i'].ravel()}, {got['cls'].ravel()}; NumPy {order[:5]}")
        elif not np.allclose(got["top_p"].ravel(), p[0][order[:5]], rtol=5e-3, atol=1e-4):
            failures.append(f"TopK: values {got['top_p'].ravel()}, NumPy {p[0][order[:5]]}")

    # MobileNet's Conv + BatchNormalization + Clip(0, 6), fused as ReLU6, and a depthwise conv
    # with Clip(0) alone (a ReLU), against NumPy: outputs above 6 and below 0 both occur.
    cw = rng.normal(0, 0.5, (16, 3, 3, 3)).astype(np.float32)
    dw = rng.normal(0, 0.5, (16, 1, 3, 3)).astype(np.float32)
    bn = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in
          (("g", rng.uniform(0.5, 2, 16)), ("b", rng.uniform(-1, 1, 16)), ("mu", rng.uniform(-0.2, 0.2, 16)),
           ("var", rng.uniform(0.5, 1.5, 16)))]
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("zero", 0.0), ("six", 6.0))]
    mobile = helper.make_graph(
        [helper.make_node("Conv", ["x", "cw"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c", "g", "b", "mu", "var"], ["n"], name="bn"),
         helper.make_node("Clip", ["n", "zero", "six"], ["r6"], name="relu6"),
         helper.make_node("Conv", ["r6", "dw"], ["d"], name="dwconv", pads=[1, 1, 1, 1], group=16),
         helper.make_node("Clip", ["d", "zero"], ["y"], name="relu")], "mobile",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 10, 12])],
        [numpy_helper.from_array(cw, "cw"), numpy_helper.from_array(dw, "dw")] + bn + consts)
    onnx.save(helper.make_model(mobile, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "mobile.onnx"))
    mx = rng.uniform(-3, 3, (1, 3, 10, 12)).astype(np.float32)
    np.save(os.path.join(d, "mx.npy"), mx)
    mout = os.path.join(d, "mobile")
    if dvp(["run", os.path.join(d, "mobile.onnx"), "--input", "x=" + os.path.join(d, "mx.npy"), "--out", mout,
            "--no-trace", "--check-layers"], 0, r"kernel conv: .*within[\s\S]*kernel dwconv: .*within",
           "Conv + BatchNormalization + Clip"):
        def conv(x, w, groups=1):
            c, h, wd = x.shape[1:]
            xp = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
            out = np.zeros((w.shape[0], h, wd))
            per = w.shape[0] // groups
            for o in range(w.shape[0]):
                g = o // per
                for i in range(w.shape[1]):
                    for a in range(3):
                        for b in range(3):
                            out[o] += w[o, i, a, b] * xp[g * w.shape[1] + i, a:a + h, b:b + wd]
            return out[None]
        g, b, mu, var = (numpy_helper.to_array(t).astype(np.float64)[None, :, None, None] for t in bn)
        r6 = np.clip((conv(mx, cw) - mu) / np.sqrt(var + 1e-5) * g + b, 0, 6)
        want = np.maximum(conv(r6, dw, 16), 0)
        got = np.load(os.path.join(mout, "outputs", "y.npy"))
        if not (r6 == 6).any():
            failures.append("Conv + BatchNormalization + Clip: no output reaches 6 (the test does not test ReLU6)")
        err = np.abs(got - want).max()
        if not err <= 2e-2 * max(1.0, np.abs(want).max()):
            failures.append(f"Conv + BatchNormalization + Clip: max abs error {err} against NumPy")

    # Constants the compiler writes out and batch norms no conv folds, against NumPy: a
    # BatchNormalization + Relu after a pool (32 channels: a depthwise 1 x 1 conv), an Add of a
    # bias per channel (1 x 32 x 1 x 1, broadcast), a Mul by a scalar no Softmax reads, a
    # BatchNormalization of 24 channels (no whole groups of 16: an elementwise mul and add in
    # NC1HWC0, pad channels and all), a Gemm whose C is an activation of m x n, and a Div of an
    # activation by a row.
    f32 = lambda a: np.asarray(a, np.float32)
    bn_a = [f32(rng.uniform(0.5, 2, 32)), f32(rng.uniform(-1, 1, 32)), f32(rng.uniform(-.3, .3, 32)),
            f32(rng.uniform(0.5, 1.5, 32))]
    bn_b = [f32(rng.uniform(0.5, 2, 24)), f32(rng.uniform(-1, 1, 24)), f32(rng.uniform(-.3, .3, 24)),
            f32(rng.uniform(0.5, 1.5, 24))]
    cb, half = f32(rng.uniform(-1, 1, (1, 32, 1, 1))), f32(0.5)
    wg, dv = f32(rng.normal(0, 0.3, (20, 9))), f32(rng.uniform(0.5, 2, 20))
    consts = {"cb": cb, "half": half, "wg": wg, "dv": dv}
    consts.update({f"bna{i}": v for i, v in enumerate(bn_a)})
    consts.update({f"bnb{i}": v for i, v in enumerate(bn_b)})
    extras = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["p"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("BatchNormalization", ["p", "bna0", "bna1", "bna2", "bna3"], ["n"], name="bn_a"),
         helper.make_node("Relu", ["n"], ["r"], name="relu_a"),
         helper.make_node("Add", ["r", "cb"], ["ac"], name="bias"),
         helper.make_node("Mul", ["ac", "half"], ["y1"], name="halve"),
         helper.make_node("MaxPool", ["z"], ["q"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("BatchNormalization", ["q", "bnb0", "bnb1", "bnb2", "bnb3"], ["y2"], name="bn_b",
                          epsilon=1e-3),
         helper.make_node("Relu", ["c"], ["rc"], name="relu_c"),
         helper.make_node("Gemm", ["a", "wg", "rc"], ["y3"], name="fc", alpha=0.5),
         helper.make_node("Relu", ["a"], ["ra"], name="relu_r"),
         helper.make_node("Div", ["ra", "dv"], ["y4"], name="per_col")], "extras",
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, s)
         for v, s in (("x", [1, 32, 10, 12]), ("z", [1, 24, 8, 8]), ("a", [6, 20]), ("c", [6, 9]))],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, s)
         for v, s in (("y1", [1, 32, 5, 6]), ("y2", [1, 24, 4, 4]), ("y3", [6, 9]), ("y4", [6, 20]))],
        [numpy_helper.from_array(v, n) for n, v in consts.items()])
    onnx.save(helper.make_model(extras, opset_imports=[helper.make_opsetid("", 15)], ir_version=8),
              os.path.join(d, "extras.onnx"))
    ins = {"x": rng.uniform(-3, 3, (1, 32, 10, 12)), "z": rng.uniform(-3, 3, (1, 24, 8, 8)),
           "a": rng.uniform(-2, 2, (6, 20)), "c": rng.uniform(-2, 2, (6, 9))}
    args = []
    for name, v in ins.items():
        ins[name] = f32(v).astype(np.float16).astype(np.float64)  # as the platform holds them
        np.save(os.path.join(d, f"e{name}.npy"), f32(v))
        args += ["--input", f"{name}={os.path.join(d, f'e{name}.npy')}"]
    eout = os.path.join(d, "extras")
    if dvp(["run", os.path.join(d, "extras.onnx"), "--out", eout, "--no-trace", "--check-layers"] + args, 0,
           r"kernel bn_a: .*within[\s\S]*kernel bn_b: .*within[\s\S]*kernel bn_b_bias: .*within",
           "BatchNormalization alone, constants broadcast"):
        def norm(x, p, eps):
            g, b, mu, var = (v.astype(np.float64)[None, :, None, None] for v in p)
            return (x - mu) / np.sqrt(var + eps) * g + b

        def pool(x):
            n, c, h, w = x.shape
            return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        wants = {"y1": (np.maximum(norm(pool(ins["x"]), bn_a, 1e-5), 0) + cb) * 0.5,
                 "y2": norm(pool(ins["z"]), bn_b, 1e-3),
                 "y3": 0.5 * ins["a"] @ wg + np.maximum(ins["c"], 0),
                 "y4": np.maximum(ins["a"], 0) / dv}
        for name, want in wants.items():
            got = np.load(os.path.join(eout, "outputs", name + ".npy")).astype(np.float64).reshape(want.shape)
            err = np.abs(got - want).max()
            if not err <= 1e-2 * max(1.0, np.abs(want).max()):
                failures.append(f"constants broadcast: {name} max abs error {err} against NumPy")

    # An Inception block's Concat (channels 32 + 16 + 16 + 8: the last no whole group of 16, so
    # the output's pad channels are its), also a graph output, at a batch of 2 given as a file,
    # every layer checked; against NumPy. Then a Concat whose first input is no whole group.
    wa, wb = f32(rng.normal(0, .3, (32, 16, 1, 1))), f32(rng.normal(0, .2, (16, 16, 3, 3)))
    wc, wm = f32(rng.normal(0, .3, (8, 16, 1, 1))), f32(rng.normal(0, .2, (24, 72, 1, 1)))
    incep = helper.make_graph(
        [helper.make_node("Conv", ["x", "wa"], ["a"], name="b1x1"),
         helper.make_node("Relu", ["a"], ["ar"], name="b1x1_relu"),
         helper.make_node("Conv", ["x", "wb"], ["b"], name="b3x3", pads=[1, 1, 1, 1]),
         helper.make_node("MaxPool", ["x"], ["p"], name="bpool", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["x", "wc"], ["cc"], name="bnarrow"),
         helper.make_node("Concat", ["ar", "b", "p", "cc"], ["c"], name="join", axis=1),
         helper.make_node("Conv", ["c", "wm"], ["y"], name="mix")], "incep",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 9, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 9, 7]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 72, 9, 7])],
        [numpy_helper.from_array(v, n) for n, v in (("wa", wa), ("wb", wb), ("wc", wc), ("wm", wm))])
    onnx.save(helper.make_model(incep, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "incep.onnx"))
    ix = f32(rng.uniform(-2, 2, (2, 16, 9, 7)))
    np.save(os.path.join(d, "ix.npy"), ix)
    np.save(os.path.join(d, "ix1.npy"), ix[:1])

    def conv1(x, w):
        return np.einsum("chw,oc->ohw", x, w[:, :, 0, 0].astype(np.float64))

    def conv3(x, w):  # 3 x 3, padding 1
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
        return sum(np.einsum("chw,oc->ohw", xp[:, i:i + x.shape[1], j:j + x.shape[2]], w[:, :, i, j])
                   for i in range(3) for j in range(3))

    def inception(x):  # the concat and the conv after it
        x = x.astype(np.float16).astype(np.float64)
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
        pool = np.max([xp[:, i:i + 9, j:j + 7] for i in range(3) for j in range(3)], axis=0)
        c = np.concatenate([np.maximum(conv1(x, wa), 0), conv3(x, wb.astype(np.float64)), pool, conv1(x, wc)])
        return {"c": c, "y": conv1(c, wm)}

    def compare(what, out, suffix, wants):
        for name, want in wants.items():
            got = np.load(os.path.join(out, "outputs", name + suffix + ".npy")).astype(np.float64)
            err = np.abs(got.reshape(want.shape) - want).max()
            if not err <= 1e-2 * max(1.0, np.abs(want).max()):
                failures.append(f"{what}: {name}{suffix}: max abs error {err} against NumPy")
    iout = os.path.join(d, "incep")
    if dvp(["run", os.path.join(d, "incep.onnx"), "--input", "x=" + os.path.join(d, "ix.npy"), "--batch", "2",
            "--out", iout, "--no-trace", "--check-layers"], 0,
           r"kernel join_0_b1: 5040 elements within[\s\S]*kernel join_3_b1: 1008 elements within",
           "Concat of an Inception block"):
        for b in range(2):
            compare("Concat", iout, f".b{b}", inception(ix[b]))
    # Batch 1 in the activation arena (no --check-layers): the output the copies share is kept apart
    # from every buffer live while any copy writes it.
    aout = os.path.join(d, "incep-arena")
    if dvp(["run", os.path.join(d, "incep.onnx"), "--input", "x=" + os.path.join(d, "ix1.npy"), "--out", aout,
            "--no-trace"], 0, r"kernel join_0: 5040 elements within[\s\S]*kernel mix: 2016 elements within",
           "Concat in the arena"):
        compare("Concat in the arena", aout, "", inception(ix[0]))
    incep.node[5].input[:] = ["cc", "ar", "b", "p"]
    onnx.save(helper.make_model(incep, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "incep-narrow-first.onnx"))
    dvp(["compile", os.path.join(d, "incep-narrow-first.onnx"), "--out", os.path.join(d, "c")], 2,
        r"node 'join' \(Concat\): input 0 has 8 channels: each but the last is whole groups of 16",
        "a Concat whose first input is no whole group of 16 channels")

    # Concats the AI Core's 32-byte moves cannot make, on the AI CPU: rows of 5 and 7 f32 (two
    # activations) joined along the last axis, and a Concat along axis 0 of f16 activations of 3 and
    # 2 rows of 9; against NumPy.
    na, nb = f32(rng.uniform(-2, 2, (6, 5))), f32(rng.uniform(-2, 2, (6, 7)))
    rows = helper.make_graph(
        [helper.make_node("Relu", ["a"], ["ra"], name="relu_a"), helper.make_node("Relu", ["b"], ["rb"], name="relu_b"),
         helper.make_node("Concat", ["ra", "rb"], ["y"], name="side_by_side", axis=-1),
         helper.make_node("Gemm", ["a", "w3"], ["g3"], name="fc3"), helper.make_node("Gemm", ["b", "w2"], ["g2"], name="fc2"),
         helper.make_node("Concat", ["g3", "g2"], ["z"], name="stacked", axis=0)], "rows",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [6, 5]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [6, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 12]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [12, 9])],
        [numpy_helper.from_array(f32(rng.normal(0, .5, (5, 9))), "w3"),
         numpy_helper.from_array(f32(rng.normal(0, .5, (7, 9))), "w2")])
    onnx.save(helper.make_model(rows, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "rows.onnx"))
    np.save(os.path.join(d, "na.npy"), na)
    np.save(os.path.join(d, "nb.npy"), nb)
    rout = os.path.join(d, "rows")
    if dvp(["run", os.path.join(d, "rows.onnx"), "--input", "a=" + os.path.join(d, "na.npy"), "--input",
            "b=" + os.path.join(d, "nb.npy"), "--out", rout, "--no-trace", "--check-layers"], 0,
           r"kernel side_by_side +on an AI CPU core[\s\S]*ok   kernel side_by_side: 72 elements[\s\S]*"
           r"ok   kernel stacked: 108 elements", "Concat on the AI CPU"):
        w3, w2 = (numpy_helper.to_array(t).astype(np.float64) for t in rows.initializer)
        h = lambda v: v.astype(np.float16).astype(np.float64)
        compare("Concat on the AI CPU", rout, "", {"y": np.concatenate([np.maximum(na, 0), np.maximum(nb, 0)], axis=1),
                                                   "z": np.concatenate([h(na) @ w3, h(nb) @ w2], axis=0)})

    # A 1-D CNN (an audio front end: a waveform of one channel, strided 1-D convs, 1-D pools), each
    # 1-D window run as its 2-D form over N x C x 1 x L: Conv1d (the small-channel mode) + batch
    # norm + Relu, MaxPool1d, Conv1d + Relu, an AvgPool1d whose divisor leaves the padding out (its
    # layer check allowing for the f16 sums), a depthwise Conv1d with dilation over 40 channels (no
    # whole group of 16: run over 48, the pad channels' filters zero), then global pooling and a
    # classifier. Against NumPy, the 3-D
    # map it also outputs saved as 1 x C x L, every layer checked on ascend310; on ascend910 too.
    def conv1d(x, w, stride=1, pad=0, dil=1, groups=1):
        xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad)))
        m, cg, k = w.shape
        ol = (xp.shape[1] - dil * (k - 1) - 1) // stride + 1
        y = np.zeros((m, ol))
        for o in range(m):
            g = o // (m // groups)
            for c in range(cg):
                for j in range(k):
                    y[o] += w[o, c, j] * xp[g * cg + c, j * dil:j * dil + stride * (ol - 1) + 1:stride]
        return y

    a1, a2, a3 = f32(rng.normal(0, .4, (32, 1, 10))), f32(rng.normal(0, .15, (40, 32, 3))), f32(rng.normal(0, .4, (40, 1, 5)))
    bn1 = [f32(rng.uniform(0.5, 1.5, 32)), f32(rng.uniform(-.2, .2, 32)), f32(rng.uniform(-.2, .2, 32)),
           f32(rng.uniform(0.5, 1.5, 32))]
    afc = f32(rng.normal(0, .3, (40, 6)))
    audio = helper.make_graph(
        [helper.make_node("Conv", ["x", "a1"], ["c1"], name="conv1", strides=[5]),
         helper.make_node("BatchNormalization", ["c1", "g1", "b1", "m1", "v1"], ["n1"], name="bn1"),
         helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
         helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2], strides=[2]),
         helper.make_node("Conv", ["p1", "a2"], ["c2"], name="conv2", kernel_shape=[3], pads=[1, 1]),
         helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
         helper.make_node("AveragePool", ["r2"], ["p2"], name="pool2", kernel_shape=[3], strides=[2], pads=[1, 1]),
         helper.make_node("Conv", ["p2", "a3"], ["c3"], name="dw", pads=[4, 4], dilations=[2], group=40),
         helper.make_node("GlobalAveragePool", ["c3"], ["g"], name="gap"),
         helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
         helper.make_node("MatMul", ["f", "afc"], ["y"], name="fc")], "audio",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 400])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6]),
         helper.make_tensor_value_info("c3", TensorProto.FLOAT, [1, 40, 20])],
        [numpy_helper.from_array(v, n) for n, v in (("a1", a1), ("a2", a2), ("a3", a3), ("afc", afc), ("g1", bn1[0]),
                                                    ("b1", bn1[1]), ("m1", bn1[2]), ("v1", bn1[3]))])
    onnx.save(helper.make_model(audio, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "audio.onnx"))
    wave = f32(rng.uniform(-1, 1, (1, 1, 400)))
    np.save(os.path.join(d, "wave.npy"), wave)

    def audio_forward(x):
        x = x[0].astype(np.float16).astype(np.float64)
        g, b, mu, var = (v.astype(np.float64)[:, None] for v in bn1)
        r1 = np.maximum((conv1d(x, a1, stride=5) - mu) / np.sqrt(var + 1e-5) * g + b, 0)
        p1 = r1[:, :78].reshape(32, 39, 2).max(axis=2)  # 79 positions: the last left out
        r2 = np.maximum(conv1d(p1, a2, pad=1), 0)
        rp = np.pad(r2, ((0, 0), (1, 1)))
        counts = np.array([3 - (o == 0) - (2 * o + 1 > 38) for o in range(20)])  # the input's of each window
        p2 = np.stack([rp[:, 2 * o:2 * o + 3].sum(axis=1) for o in range(20)], axis=1) / counts
        c3 = conv1d(p2, a3, pad=4, dil=2, groups=40)
        return {"c3": c3[None], "y": (c3.mean(axis=1) @ afc)[None]}
    for preset, flags in (("ascend310", ["--check-layers"]), ("ascend910", [])):
        aout = os.path.join(d, "audio-" + preset)
        if dvp(["run", os.path.join(d, "audio.onnx"), "--preset", preset, "--input", "x=" + os.path.join(d, "wave.npy"),
                "--out", aout, "--no-trace"] + flags, 0, r"kernel dw: 960 elements within[\s\S]*kernel fc: 6 elements within",
               f"a 1-D CNN on {preset}"):
            for name, want in audio_forward(wave).items():
                got = np.load(os.path.join(aout, "outputs", name + ".npy")).astype(np.float64)
                err = np.abs(got - want).max() if got.shape == want.shape else np.inf
                print(f"     {name} {got.shape}: max abs error against NumPy {err:.2e}")
                if not err <= 1e-2 * max(1.0, np.abs(want).max()):
                    failures.append(f"1-D CNN on {preset}: {name} of shape {got.shape}, max abs error {err}")

    # 1-D maps joined and added, at a batch of 2, every layer checked: two Conv1d branches
    # concatenated along the channels (copies into slices of a 1 x C x 1 x L map), a Conv1d with
    # the concat as its residual, then a MaxPool1d with ceil_mode; each image against NumPy.
    j0, j1, j2 = f32(rng.normal(0, .3, (32, 16, 1))), f32(rng.normal(0, .2, (16, 16, 3))), f32(rng.normal(0, .2, (48, 48, 3)))
    joined = helper.make_graph(
        [helper.make_node("Conv", ["x", "j0"], ["a"], name="ca"),
         helper.make_node("Conv", ["x", "j1"], ["b"], name="cb", pads=[1, 1]),
         helper.make_node("Concat", ["a", "b"], ["c"], name="cat", axis=1),
         helper.make_node("Conv", ["c", "j2"], ["e"], name="cd", pads=[1, 1]),
         helper.make_node("Add", ["e", "c"], ["s"], name="res"), helper.make_node("Relu", ["s"], ["r"], name="relu"),
         helper.make_node("MaxPool", ["r"], ["z"], name="mp", kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1)],
        "joined", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16, 33])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 48, 17])],
        [numpy_helper.from_array(v, n) for n, v in (("j0", j0), ("j1", j1), ("j2", j2))])
    onnx.save(helper.make_model(joined, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "joined.onnx"))
    jx = f32(rng.uniform(-1, 1, (2, 16, 33)))
    np.save(os.path.join(d, "jx.npy"), jx)
    jout = os.path.join(d, "joined")
    if dvp(["run", os.path.join(d, "joined.onnx"), "--batch", "2", "--input", "x=" + os.path.join(d, "jx.npy"), "--out",
            jout, "--no-trace", "--check-layers"], 0, r"kernel cat_1_b1: 528 elements within[\s\S]*kernel mp_b1: 816",
           "1-D maps joined and added, a batch of 2"):
        for b in range(2):
            xb = jx[b].astype(np.float16).astype(np.float64)
            c = np.concatenate([conv1d(xb, j0), conv1d(xb, j1, pad=1)])
            rp = np.pad(np.maximum(conv1d(c, j2, pad=1) + c, 0), ((0, 0), (1, 1)), constant_values=-np.inf)
            compare("1-D maps joined", jout, f".b{b}", {"z": np.stack([rp[:, 2 * o:2 * o + 3].max(axis=1)
                                                                         for o in range(17)], axis=1)[None]})

    # Identities on 1-D maps (the map keeps its stored 1 x C x 1 x L): Conv1d, Identity, a batch
    # norm no conv folds (a depthwise 1 x 1 conv), Identity, Flatten into a MatMul, TopK of it;
    # against NumPy, the indices exactly.
    iw, ifc = f32(rng.normal(0, .3, (32, 8, 3))), f32(rng.normal(0, .1, (640, 12)))
    ibn = [f32(rng.uniform(.5, 1.5, 32)), f32(rng.uniform(-.2, .2, 32)), f32(rng.uniform(-.2, .2, 32)),
           f32(rng.uniform(.5, 1.5, 32))]
    ident = helper.make_graph(
        [helper.make_node("Conv", ["x", "iw"], ["c"], name="conv", pads=[1, 1]),
         helper.make_node("Identity", ["c"], ["i"], name="id"),
         helper.make_node("BatchNormalization", ["i", "g", "b", "m", "v"], ["n"], name="bn"),
         helper.make_node("Identity", ["n"], ["i2"], name="id2"), helper.make_node("Flatten", ["i2"], ["f"], name="flat"),
         helper.make_node("MatMul", ["f", "ifc"], ["y"], name="fc"),
         helper.make_node("TopK", ["y", "k"], ["tv", "ti"], name="top", axis=1)], "ident",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12]),
         helper.make_tensor_value_info("ti", TensorProto.INT64, [1, 3])],
        [numpy_helper.from_array(a, n) for n, a in (("iw", iw), ("ifc", ifc), ("g", ibn[0]), ("b", ibn[1]), ("m", ibn[2]),
                                                    ("v", ibn[3]), ("k", np.array([3], np.int64)))])
    onnx.save(helper.make_model(ident, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "ident.onnx"))
    ix1 = f32(rng.uniform(-1, 1, (1, 8, 20)))
    np.save(os.path.join(d, "ix1d.npy"), ix1)
    iout = os.path.join(d, "ident")
    if dvp(["run", os.path.join(d, "ident.onnx"), "--input", "x=" + os.path.join(d, "ix1d.npy"), "--out", iout,
            "--no-trace", "--check-layers"], 0, r"kernel bn: 640 elements within[\s\S]*kernel top: 3 elements",
           "Identities on 1-D maps"):
        c = conv1d(ix1[0].astype(np.float16), iw, pad=1)
        g, b, mu, var = (v.astype(np.float64)[:, None] for v in ibn)
        y = (((c - mu) / np.sqrt(var + 1e-5) * g + b).reshape(1, -1) @ ifc)
        compare("Identities on 1-D maps", iout, "", {"y": y})
        if list(np.load(os.path.join(iout, "outputs", "ti.npy")).ravel()) != list(np.argsort(-y[0], kind="stable")[:3]):
            failures.append("Identities on 1-D maps: TopK's indices differ from NumPy's")

    # A grouped Conv1d whose output channels are no whole group of 16 (20 in 2 groups, 12 input
    # channels): a dense conv with weights zero across groups; against NumPy on both presets.
    gw = f32(rng.normal(0, .3, (20, 6, 3)))
    grouped = helper.make_graph([helper.make_node("Conv", ["x", "gw"], ["y"], name="gconv", pads=[1, 1], group=2)],
                                "grouped", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 30])],
                                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20, 30])],
                                [numpy_helper.from_array(gw, "gw")])
    onnx.save(helper.make_model(grouped, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "grouped.onnx"))
    gx = f32(rng.uniform(-1, 1, (1, 12, 30)))
    np.save(os.path.join(d, "gx.npy"), gx)
    for preset in ("ascend310", "ascend910"):
        gout = os.path.join(d, "grouped-" + preset)
        if dvp(["run", os.path.join(d, "grouped.onnx"), "--preset", preset, "--input", "x=" + os.path.join(d, "gx.npy"),
                "--out", gout, "--no-trace"], 0, r"kernel gconv: \d+ elements within", f"a grouped conv of 20 outputs on {preset}"):
            compare("a grouped conv of 20 outputs", gout, "",
                    {"y": conv1d(gx[0].astype(np.float16), gw, pad=1, groups=2)[None]})

    # A classifier of 65600 classes (a large vocabulary's head): more rows than the cube's fractal
    # order takes (its rows, padded to 16, are a copy's 16-bit gap), so its weight B^T is stored
    # row by row, as the compiled model says; against NumPy.
    wv = f32(rng.normal(0, .2, (32, 65600)))
    head = helper.make_graph([helper.make_node("MatMul", ["x", "wv"], ["y"], name="vocab")], "vocab",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 65600])],
                             [numpy_helper.from_array(wv, "wv")])
    onnx.save(helper.make_model(head, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "vocab.onnx"))
    vocab_x = f32(rng.uniform(-1, 1, (1, 32)))
    np.save(os.path.join(d, "vocab_x.npy"), vocab_x)
    vocab_out = os.path.join(d, "vocab")
    if dvp(["run", os.path.join(d, "vocab.onnx"), "--input", "x=" + os.path.join(d, "vocab_x.npy"), "--out", vocab_out,
            "--no-trace"], 0, r"kernel vocab: 65600 elements within", "a classifier of 65600 classes"):
        compiled = open(os.path.join(vocab_out, "compiled", "model.yaml")).read()
        if "b_layout: nd" not in compiled or "fractal_z" in compiled:
            failures.append("a classifier of 65600 classes: its weight is not stored row by row")
        compare("a classifier of 65600 classes", vocab_out, "",
                {"y": vocab_x.astype(np.float16).astype(np.float64) @ wv.astype(np.float16).astype(np.float64)})

    # A VGG's classifier: the last feature map (7 x 5 of 24 channels, no whole group of 16)
    # flattened into a fully connected layer, as torch exports nn.Linear (Gemm, transB), then a
    # MatMul to 10 f32 logits (rows of 40 bytes: two blocks, under 16 columns); the gemm reads the map where it is, B's rows put in the map's order when the model
    # is compiled. At a batch of 2, every layer checked, against NumPy; --output of the flattening
    # itself is saved in its own order (1 x 840); a Reshape of the map to another shape is refused.
    v1, v2, v3 = f32(rng.normal(0, .3, (24, 3, 3, 3))), f32(rng.normal(0, .05, (40, 840))), f32(rng.normal(0, .2, (40, 10)))
    vb = f32(rng.normal(0, .1, 40))
    vgg = helper.make_graph(
        [helper.make_node("Conv", ["x", "v1"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Flatten", ["p"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "v2", "vb"], ["h"], name="fc1", transB=1),
         helper.make_node("Relu", ["h"], ["hr"], name="relu1"),
         helper.make_node("MatMul", ["hr", "v3"], ["y"], name="fc2")], "vgg",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 14, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        [numpy_helper.from_array(v, n) for n, v in (("v1", v1), ("v2", v2), ("v3", v3), ("vb", vb))])
    onnx.save(helper.make_model(vgg, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "vgg.onnx"))
    vx = f32(rng.uniform(-1, 1, (2, 3, 14, 10)))
    np.save(os.path.join(d, "vx.npy"), vx)

    def vgg_forward(x):
        x = x.astype(np.float16).astype(np.float64)
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
        c = sum(np.einsum("chw,oc->ohw", xp[:, i:i + 14, j:j + 10], v1[:, :, i, j]) for i in range(3) for j in range(3))
        f = np.maximum(c, 0).reshape(24, 7, 2, 5, 2).max(axis=(2, 4)).reshape(1, 840)
        return f, np.maximum(f @ v2.T + vb, 0) @ v3
    vout = os.path.join(d, "vgg")
    if dvp(["run", os.path.join(d, "vgg.onnx"), "--batch", "2", "--input", "x=" + os.path.join(d, "vx.npy"), "--out",
            vout, "--no-trace", "--check-layers"], 0, r"kernel fc1_b1: 40 elements within[\s\S]*kernel fc2_b1: 10",
           "a feature map flattened into a fully connected layer, a batch of 2"):
        for b in range(2):
            compare("a flattened map", vout, f".b{b}", {"y": vgg_forward(vx[b])[1]})
    np.save(os.path.join(d, "vx1.npy"), vx[:1])
    vout = os.path.join(d, "vgg-f")
    if dvp(["run", os.path.join(d, "vgg.onnx"), "--input", "x=" + os.path.join(d, "vx1.npy"), "--output", "f",
            "--out", vout, "--no-trace"], 0, r"kernel pool: 1120 elements within", "--output of the flattened map"):
        got = np.load(os.path.join(vout, "outputs", "f.npy"))
        err = np.abs(got - vgg_forward(vx[0])[0]).max() if got.shape == (1, 840) else np.inf
        if not err <= 1e-2:
            failures.append(f"--output of the flattened map: shape {got.shape}, max abs error {err}")
    reshaped = helper.make_graph(
        [vgg.node[0], vgg.node[1], vgg.node[2], helper.make_node("Reshape", ["p", "to"], ["f"], name="flat"),
         helper.make_node("Softmax", ["f"], ["y"], name="sm", axis=-1)], "reshaped",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 14, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 35])],
        [numpy_helper.from_array(v1, "v1"), numpy_helper.from_array(np.array([1, 24, 35], np.int64), "to")])
    onnx.save(helper.make_model(reshaped, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "vgg-reshape.onnx"))
    dvp(["compile", os.path.join(d, "vgg-reshape.onnx"), "--out", os.path.join(d, "c")], 2,
        r"node 'flat' \(Reshape\): a reshape of an NC1HWC0 feature map of 7 x 5 to 1x24x35 needs a layout change",
        "a Reshape of a feature map to 1 x 24 x 35")

    def run_model(name, nodes, weights, shapes, x, pattern, what, *extra, rc=0):
        """A one-input model of these nodes (x -> y, opset 13) run on x, a batch when x holds more
        than one image; its output folder, or None when the run did not end as wanted (rc)."""
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shapes[0])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shapes[1])],
                              [numpy_helper.from_array(v, n) for n, v in weights.items()])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
                  os.path.join(d, name + ".onnx"))
        np.save(os.path.join(d, name + "-x.npy"), x)
        out = os.path.join(d, name)
        batch = ["--batch", str(len(x))] if len(x) > 1 else []
        return out if dvp(["run", os.path.join(d, name + ".onnx"), "--input", "x=" + os.path.join(d, name + "-x.npy"),
                           "--out", out, "--no-trace"] + batch + list(extra), rc, pattern, what) else None

    # A classifier head as SqueezeNet's: a 1 x 1 conv to 40 classes (no whole group of 16), a global
    # pool, Softmax over axis 1 of 1 x 40 x 1 x 1 (opset 13: the one axis, the later ones of one
    # element: the same rows), read where the pool left it; at a batch of 2, against NumPy.
    sw, hx = f32(rng.normal(0, .3, (40, 16, 1, 1))), f32(rng.uniform(-1, 1, (2, 16, 7, 5)))
    hout = run_model("head", [helper.make_node("Conv", ["x", "sw"], ["c"], name="classes"),
                              helper.make_node("GlobalAveragePool", ["c"], ["g"], name="gap"),
                              helper.make_node("Softmax", ["g"], ["y"], name="probs", axis=1)],
                     {"sw": sw}, (["N", 16, 7, 5], ["N", 40, 1, 1]), hx, r"kernel probs_b1: 40 elements within",
                     "Softmax over axis 1 of a pooled map")
    if hout:
        for b in range(2):
            g = np.einsum("chw,oc->o", hx[b].astype(np.float16).astype(np.float64), sw[:, :, 0, 0]) / 35
            e = np.exp(g - g.max())
            want = e / e.sum()  # values near 1/40: compared within 2% of each (compare's 1e-2 is coarse here)
            got = np.load(os.path.join(hout, "outputs", f"y.b{b}.npy")).astype(np.float64).reshape(-1)
            if got.shape != want.shape or not np.all(np.abs(got - want) <= 1e-4 + 2e-2 * want):
                failures.append(f"Softmax over axis 1 of a pooled map, image {b}: got {got[:4]}..., want {want[:4]}...")

    # A segmentation head: a 1 x 1 conv to 21 classes (a group and 5 more) on a 37 x 45 map (14 units
    # of 128 positions, the last of 1), Softmax over the channels (axis -3) per pixel, at a batch of
    # 2, every layer checked; and a 1-D model's per-frame classes (24 channels over 300 frames, axis
    # 1). The map stays NC1HWC0 (softmax_c transposes 16 x 16 blocks on the vector unit). Against
    # NumPy, each value within 1% (+ 2e-3: f16 near 1).
    def seg_check(what, out, xs, want_of):
        for b, xb in enumerate(xs):
            want = want_of(xb.astype(np.float16).astype(np.float64))
            name = f"y.b{b}.npy" if len(xs) > 1 else "y.npy"
            got = np.load(os.path.join(out, "outputs", name)).astype(np.float64).reshape(want.shape)
            if not np.all(np.abs(got - want) <= 2e-3 + 1e-2 * want):
                failures.append(f"{what}, image {b}: max abs error {np.abs(got - want).max()} against NumPy")

    def softmax0(c):  # over the first axis, of the conv's output as the platform holds it (f16)
        c = c.astype(np.float16).astype(np.float64)
        e = np.exp(c - c.max(axis=0))
        return e / e.sum(axis=0)
    segw, sx = f32(rng.normal(0, .4, (21, 16, 1, 1))), f32(rng.uniform(-1, 1, (2, 16, 37, 45)))
    what = "Softmax over the channels of a segmentation map"
    sout = run_model("seg", [helper.make_node("Conv", ["x", "segw"], ["c"], name="classes"),
                             helper.make_node("Softmax", ["c"], ["y"], name="pixels", axis=-3)],
                     {"segw": segw}, (["N", 16, 37, 45], ["N", 21, 37, 45]), sx,
                     r"kernel pixels_b1: 53280 elements within", what, "--check-layers")
    if sout:
        seg_check(what, sout, sx, lambda x: softmax0(np.einsum("chw,oc->ohw", x, segw[:, :, 0, 0])))
    seg1w, s1x = f32(rng.normal(0, .4, (24, 8, 1))), f32(rng.uniform(-1, 1, (1, 8, 300)))
    what = "Softmax over the channels of a 1-D map"
    s1out = run_model("seg1", [helper.make_node("Conv", ["x", "seg1w"], ["c"], name="frames"),
                               helper.make_node("Softmax", ["c"], ["y"], name="per_frame", axis=1)],
                      {"seg1w": seg1w}, ([1, 8, 300], [1, 24, 300]), s1x, r"kernel per_frame: 9600 elements within", what)
    if s1out:
        seg_check(what, s1out, s1x, lambda x: softmax0(np.einsum("cl,oc->ol", x, seg1w[:, :, 0])))

    # Softmax over the channels of a graph input (placed NC1HWC0 for it), and after a Mul by a
    # constant (folded into the kernel as its scale); a 1-D map pooled to 1 x 24 x 1, Softmax over
    # axis -2 (its channels: the model's rank 3, not the stored 4).
    gx = f32(rng.uniform(-3, 3, (1, 21, 5, 7)))
    what = "Softmax over the channels of a graph input"
    out = run_model("seg-in", [helper.make_node("Softmax", ["x"], ["y"], name="probs", axis=1)], {},
                    ([1, 21, 5, 7], [1, 21, 5, 7]), gx, r"kernel probs: .* within", what)
    if out:
        seg_check(what, out, gx, softmax0)
    mx, mw = f32(rng.uniform(-1, 1, (1, 8, 5, 7))), f32(rng.normal(0, .4, (21, 8, 1, 1)))
    what = "Softmax over the channels after a Mul"
    out = run_model("seg-mul", [helper.make_node("Conv", ["x", "mw"], ["c"], name="classes"),
                                helper.make_node("Mul", ["c", "two"], ["m"], name="sharpen"),
                                helper.make_node("Softmax", ["m"], ["y"], name="probs", axis=1)],
                    {"mw": mw, "two": f32(2.0)}, ([1, 8, 5, 7], [1, 21, 5, 7]), mx, r"kernel probs: .* within", what)
    if out:
        seg_check(what, out, mx, lambda x: softmax0(2 * np.einsum("chw,oc->ohw", x, mw[:, :, 0, 0]).astype(np.float16)))
    fx, fw = f32(rng.uniform(-1, 1, (1, 8, 40))), f32(rng.normal(0, .4, (24, 8, 1)))
    what = "Softmax over axis -2 of a pooled 1-D map"
    out = run_model("gap1d", [helper.make_node("Conv", ["x", "fw"], ["c"], name="frames"),
                              helper.make_node("GlobalAveragePool", ["c"], ["g"], name="gap"),
                              helper.make_node("Softmax", ["g"], ["y"], name="probs", axis=-2)],
                    {"fw": fw}, ([1, 8, 40], [1, 24, 1]), fx, r"kernel probs: 24 elements within", what)
    if out:
        seg_check(what, out, fx, lambda x: softmax0(np.einsum("cl,oc->o", x, fw[:, :, 0]) / 40))
    bx = f32(rng.uniform(-1, 1, (2, 4)))
    run_model("batch-axis", [helper.make_node("Softmax", ["x"], ["y"], name="across", axis=0)], {},
              (["N", 4], ["N", 4]), bx, r"node 'across' \(Softmax\): softmax over the batch axis: the images of a "
              r"batch of 2 are lowered one at a time", "Softmax over the batch axis", rc=2)

    # Dilated max pools (taps 2 and 3 apart; padded; one with ceil_mode), on 20 channels (no whole
    # group of 16) of the input, every layer checked, against NumPy's max over the same taps.
    dil = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], name="dpool", kernel_shape=[3, 3], strides=[1, 2],
                          dilations=[2, 3], pads=[2, 1, 1, 2]),
         helper.make_node("MaxPool", ["x"], ["z"], name="dpool_ceil", kernel_shape=[2, 3], strides=[2, 4],
                          dilations=[3, 2], ceil_mode=1)], "dil",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 20, 13, 15])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20, 12, 6]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 20, 6, 4])])
    onnx.save(helper.make_model(dil, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "dil.onnx"))
    dx = f32(rng.uniform(-2, 2, (1, 20, 13, 15)))
    np.save(os.path.join(d, "dx.npy"), dx)

    def dilated_max(x, k, s, dl, pads, out):  # pads: top, left, bottom, right (ceil_mode's extra rows: -inf)
        xp = np.full((x.shape[0], x.shape[1] + 32, x.shape[2] + 32), -np.inf)
        xp[:, pads[0]:pads[0] + x.shape[1], pads[1]:pads[1] + x.shape[2]] = x
        return np.max([xp[:, i * dl[0]::s[0], j * dl[1]::s[1]][:, :out[0], :out[1]]
                       for i in range(k[0]) for j in range(k[1])], axis=0)
    dout = os.path.join(d, "dil")
    if dvp(["run", os.path.join(d, "dil.onnx"), "--input", "x=" + os.path.join(d, "dx.npy"), "--out", dout,
            "--no-trace", "--check-layers"], 0, r"kernel dpool: .*within[\s\S]*kernel dpool_ceil: .*within",
           "dilated max pools"):
        r = dx[0].astype(np.float16).astype(np.float64)
        compare("dilated max pools", dout, "", {"y": dilated_max(r, (3, 3), (1, 2), (2, 3), (2, 1), (12, 6)),
                                                "z": dilated_max(r, (2, 3), (2, 4), (3, 2), (0, 0), (6, 4))})

    # Activations on feature maps (f16 NC1HWC0; 24 channels, so the second group has 8 pad
    # channels, which the Sigmoid and the HardSigmoid would leave at 0.5 and 0.4 but for the
    # layers that clear them): SiLU as a Sigmoid and a Mul, HardSwish, Tanh, LeakyRelu, Clip,
    # HardSigmoid, Max of two maps, Min of three, a GlobalMaxPool of the Sigmoid's map, each layer
    # checked by the platform (a graph output's pad channels too), and the graph's outputs
    # against NumPy from the f16 input.
    aw1, aw2 = f32(rng.normal(0, .25, (24, 12, 3, 3))), f32(rng.normal(0, .3, (40, 24, 1, 1)))
    lo, hi = f32(np.array(-.3)), f32(np.array(.5))
    mk = helper.make_node
    act = helper.make_graph(
        [mk("Conv", ["x", "aw1"], ["a"], name="conv_a", pads=[1, 1, 1, 1]), mk("Sigmoid", ["a"], ["s"], name="sig"),
         mk("Mul", ["a", "s"], ["silu"], name="silu"), mk("HardSwish", ["silu"], ["hs"], name="hswish"),
         mk("Conv", ["hs", "aw2"], ["b"], name="conv_b"), mk("Tanh", ["b"], ["t"], name="tanh"),
         mk("LeakyRelu", ["b"], ["l"], name="leaky", alpha=0.1), mk("Clip", ["l", "lo", "hi"], ["c"], name="clip"),
         mk("HardSigmoid", ["c"], ["g"], name="hsig", alpha=0.3, beta=0.4), mk("Max", ["t", "g"], ["mx"], name="max"),
         mk("Min", ["t", "g", "c"], ["mn"], name="min"), mk("GlobalMaxPool", ["s"], ["gm"], name="gmax")], "act",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 11, 9])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, c, h, w])
         for n, c, h, w in (("hs", 24, 11, 9), ("mx", 40, 11, 9), ("mn", 40, 11, 9), ("gm", 24, 1, 1))],
        [numpy_helper.from_array(v, n) for n, v in (("aw1", aw1), ("aw2", aw2), ("lo", lo), ("hi", hi))])
    onnx.save(helper.make_model(act, opset_imports=[helper.make_opsetid("", 14)], ir_version=7),
              os.path.join(d, "act.onnx"))
    ax = f32(rng.uniform(-2, 2, (1, 12, 11, 9)))
    np.save(os.path.join(d, "ax.npy"), ax)
    aout = os.path.join(d, "act")
    if dvp(["run", os.path.join(d, "act.onnx"), "--input", "x=" + os.path.join(d, "ax.npy"), "--out", aout,
            "--no-trace", "--check-layers"], 0,
           r"kernel sig_pads: 3168 elements within[\s\S]*kernel hsig_pads: .*within[\s\S]*kernel min_2: .*within",
           "activations"):
        a = conv3(ax[0].astype(np.float16).astype(np.float64), aw1.astype(np.float64))
        silu = a / (1 + np.exp(-a))
        hs = silu * np.clip(silu / 6 + .5, 0, 1)
        b = conv1(hs, aw2)
        t, c = np.tanh(b), np.clip(np.where(b >= 0, b, .1 * b), -.3, .5)
        g = np.clip(.3 * c + .4, 0, 1)
        compare("activations", aout, "", {"hs": hs, "mx": np.maximum(t, g), "mn": np.minimum(np.minimum(t, g), c),
                                          "gm": (1 / (1 + np.exp(-a))).max(axis=(1, 2)).reshape(24, 1, 1)})

    # A transformer's feed-forward block with GELU as PyTorch exports it (Div by sqrt 2, Erf, Add 1,
    # Mul by x, Mul by 0.5; its constants Constant nodes), once with the halving last and once
    # first: each GELU one gelu kernel, against NumPy's erf-exact GELU. Then constants of one
    # element: x * 3 - 0.25, / 8 and + 1 (the vector unit's scalar ops, no map written out).
    def const(name, v):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(f32(np.array(v)), name + "_v"))
    gw1, gw2 = f32(rng.normal(0, .2, (32, 64))), f32(rng.normal(0, .2, (64, 32)))
    gelu_nodes = [mk("MatMul", ["x", "gw1"], ["h"], name="fc1"), const("sqrt2", 1.4142135), const("one", 1.0),
                  const("half", 0.5), mk("Div", ["h", "sqrt2"], ["d"], name="div"), mk("Erf", ["d"], ["e"], name="erf"),
                  mk("Add", ["e", "one"], ["a"], name="add1"), mk("Mul", ["h", "a"], ["m"], name="mulx"),
                  mk("Mul", ["m", "half"], ["g"], name="half"), mk("MatMul", ["g", "gw2"], ["f"], name="fc2"),
                  mk("Mul", ["f", "half"], ["fh"], name="halfx"), mk("Mul", ["f", "half"], ["f2"], name="half2"),
                  mk("Erf", ["f2"], ["e2"], name="erf2"), mk("Add", ["one", "e2"], ["a2"], name="add2"),
                  mk("Mul", ["a2", "fh"], ["yy"], name="mulh"),
                  const("three", 3.0), const("quarter", 0.25), const("eight", 8.0),
                  mk("Mul", ["yy", "three"], ["s1"], name="times3"), mk("Sub", ["s1", "quarter"], ["s2"], name="minus"),
                  mk("Div", ["s2", "eight"], ["s3"], name="over8"), mk("Add", ["one", "s3"], ["y"], name="plus1")]
    # The second GELU: x / sqrt 2 as a Mul by 1 / sqrt 2, the halving of x first (before the Erf).
    gelu_nodes[11] = mk("Mul", ["f", "rsqrt2"], ["f2"], name="scale2")
    gelu_nodes.insert(0, const("rsqrt2", 0.70710678))
    fx = f32(rng.uniform(-2, 2, (1, 8, 32)))
    fout = run_model("ffn", gelu_nodes, {"gw1": gw1, "gw2": gw2}, ([1, 8, 32], [1, 8, 32]), fx,
                     r"kernel erf: 512 elements within[\s\S]*kernel erf2: 256 elements within[\s\S]*kernel plus1: 256 "
                     r"elements within", "GELU as exported, and scalar constants", "--check-layers")
    if fout:
        from math import erf
        gelu_np = np.vectorize(lambda v: v * (1 + erf(v / np.sqrt(2))) / 2)
        f = gelu_np(fx[0].astype(np.float16).astype(np.float64) @ gw1) @ gw2
        compare("GELU", fout, "", {"y": 1 + (gelu_np(f) * 3 - .25) / 8})
        with open(os.path.join(fout, "summary.txt")) as sf:
            layers = re.findall(r"^  kernel (\S+) ", sf.read(), re.M)
        if layers != ["fc1", "erf", "fc2", "erf2", "times3", "minus", "over8", "plus1"]:
            failures.append(f"GELU as exported: layers {layers}, want each GELU one kernel")

    # LayerNormalization as PyTorch exports it before opset 17 (ReduceMean over the last axis, Sub,
    # Pow 2, ReduceMean, Add epsilon, Sqrt, Div, Mul gamma, Add beta: BERT's and ViT's at opsets
    # 11 to 16) after a MatMul, then one without gamma and beta whose square is a Mul (d x d): each
    # one layernorm kernel, every layer checked, the output against NumPy; a lone ReduceMean named.
    lw, lg, lb = f32(rng.normal(0, .3, (32, 64))), f32(rng.uniform(.5, 1.5, 64)), f32(rng.normal(0, .2, 64))
    ln = lambda v, eps: (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + eps)
    def ln_nodes(x, tag, affine, square="Pow"):
        sq = mk("Pow", [tag + "d", "two"], [tag + "p"], name=tag + "pow") if square == "Pow" else \
            mk("Mul", [tag + "d", tag + "d"], [tag + "p"], name=tag + "sq")
        n = [mk("ReduceMean", [x], [tag + "m"], name=tag + "mean", axes=[-1]),
             mk("Sub", [x, tag + "m"], [tag + "d"], name=tag + "sub"), sq,
             mk("ReduceMean", [tag + "p"], [tag + "v"], name=tag + "var", axes=[-1]),
             mk("Add", [tag + "v", "eps"], [tag + "ve"], name=tag + "addeps"),
             mk("Sqrt", [tag + "ve"], [tag + "s"], name=tag + "sqrt"),
             mk("Div", [tag + "d", tag + "s"], [tag + "n"], name=tag + "div")]
        if affine:
            n += [mk("Mul", [tag + "n", "lg"], [tag + "g"], name=tag + "gamma"),
                  mk("Add", [tag + "g", "lb"], [tag + "out"], name=tag + "beta")]
        return n
    lnodes = [const("two", 2.0), const("eps", 1e-5), mk("MatMul", ["x", "lw"], ["h"], name="proj")] + \
        ln_nodes("h", "a", True) + ln_nodes("aout", "b", False, "Mul") + [mk("Relu", ["bn"], ["y"], name="relu")]
    lx = f32(rng.uniform(-1, 1, (1, 8, 32)))
    lout = run_model("lnorm", lnodes, {"lw": lw, "lg": lg, "lb": lb}, ([1, 8, 32], [1, 8, 64]), lx,
                     r"kernel amean: 512 elements within[\s\S]*kernel bmean: 512 elements within",
                     "LayerNormalization written out", "--check-layers")
    if lout:
        h = lx[0].astype(np.float16).astype(np.float64) @ lw
        compare("LayerNormalization written out", lout, "", {"y": np.maximum(ln(ln(h, 1e-5) * lg + lb, 1e-5), 0)})
        with open(os.path.join(lout, "summary.txt")) as sf:
            layers = re.findall(r"^  kernel (\S+) ", sf.read(), re.M)
        if layers != ["proj", "amean", "bmean", "relu"]:
            failures.append(f"LayerNormalization written out: layers {layers}, want each one kernel")
    # (Over the last axis of N x C x L it is a 1-D map's global pool: tests/inputs-users-bring.py.)
    # A ReduceMean of its own (over the tokens, not the pattern's last axis): the reduce kernel.
    lone = run_model("lnorm-lone", [mk("ReduceMean", ["x"], ["y"], name="lone", axes=[1])], {},
                     ([1, 8, 32], [1, 1, 32]), lx, r"kernel lone: 32 elements within", "a ReduceMean of its own")
    if lone:
        compare("a ReduceMean of its own", lone, "", {"y": lx.astype(np.float16).astype(np.float64).mean(axis=1,
                                                                                                      keepdims=True)})

    # A decoder's ConvTranspose layers (U-Net's and DCGAN's): 4 x 4 stride 2 pad 1 with a bias, then
    # batch norm and ReLU fused (a zero-insertion upsample, then one conv2d); 3 x 3 stride 2 pad 1
    # output_padding 1 (PyTorch's common form); 2 x 2 stride 2 in 2 groups; a stride-1 one, whose
    # padding is k - 1 - pad (no zeros inserted); at a batch of 2, every layer checked, against a
    # NumPy loop written from ONNX's definition.
    def deconv(x, w, b, s, p, op=(0, 0), g=1):
        C, H, W = x.shape
        mg, kh, kw = w.shape[1], w.shape[2], w.shape[3]
        oh, ow = s[0] * (H - 1) + op[0] + kh - p[0] - p[2], s[1] * (W - 1) + op[1] + kw - p[1] - p[3]
        full = np.zeros((mg * g, max(s[0] * (H - 1) + kh + op[0], p[0] + oh),  # negative pads: zeros past it
                         max(s[1] * (W - 1) + kw + op[1], p[1] + ow)))
        for c in range(C):
            gi = c // (C // g)
            for m in range(mg):
                for i in range(kh):
                    for j in range(kw):
                        full[gi * mg + m, i:i + s[0] * H:s[0], j:j + s[1] * W:s[1]] += x[c] * w[c, m, i, j]
        return full[:, p[0]:p[0] + oh, p[1]:p[1] + ow] + (0 if b is None else b[:, None, None])
    tw1, tb1 = f32(rng.normal(0, .3, (24, 16, 4, 4))), f32(rng.normal(0, .1, 16))
    tw2, tw3, tw4 = f32(rng.normal(0, .3, (16, 8, 3, 3))), f32(rng.normal(0, .3, (8, 4, 2, 2))), \
        f32(rng.normal(0, .3, (8, 16, 3, 3)))
    tbn = {"tg": f32(rng.uniform(.5, 1.5, 16)), "tbe": f32(rng.normal(0, .1, 16)), "tm": f32(rng.normal(0, .1, 16)),
           "tv": f32(rng.uniform(.5, 1.5, 16))}
    tnodes = [mk("ConvTranspose", ["x", "tw1", "tb1"], ["u1"], name="up1", strides=[2, 2], pads=[1, 1, 1, 1]),
              mk("BatchNormalization", ["u1", "tg", "tbe", "tm", "tv"], ["n1"], name="bn1"),
              mk("Relu", ["n1"], ["r1"], name="relu1"),
              mk("ConvTranspose", ["r1", "tw2"], ["u2"], name="up2", strides=[2, 2], pads=[1, 1, 1, 1],
                 output_padding=[1, 1]),
              mk("ConvTranspose", ["u2", "tw3"], ["u3"], name="up3", strides=[2, 2], group=2),
              mk("ConvTranspose", ["u3", "tw4"], ["y"], name="same", pads=[1, 1, 1, 1])]
    tx = f32(rng.uniform(-1, 1, (2, 24, 5, 4)))
    tout = run_model("deconv", tnodes, {"tw1": tw1, "tb1": tb1, "tw2": tw2, "tw3": tw3, "tw4": tw4, **tbn},
                     (["N", 24, 5, 4], ["N", 16, 40, 32]), tx, r"kernel same_b1: 20480 elements within",
                     "ConvTranspose (a decoder's)", "--check-layers")
    if tout:
        for b in range(2):
            u1 = deconv(tx[b].astype(np.float16).astype(np.float64), tw1, tb1, (2, 2), (1, 1, 1, 1))
            r1 = np.maximum((u1 - tbn["tm"][:, None, None]) / np.sqrt(tbn["tv"][:, None, None] + 1e-5)
                            * tbn["tg"][:, None, None] + tbn["tbe"][:, None, None], 0)
            u3 = deconv(deconv(r1, tw2, None, (2, 2), (1, 1, 1, 1), (1, 1)), tw3, None, (2, 2), (0, 0, 0, 0), g=2)
            compare("ConvTranspose", tout, f".b{b}", {"y": deconv(u3, tw4, None, (1, 1), (1, 1, 1, 1))})
    # SAME_LOWER with a 1 x 1 kernel at stride 2: ONNX's definition gives 12 x 14 from 6 x 7 (the
    # input times the stride), its shape inference 11 x 13, which the model declares. The run
    # computes the definition's, as the host reference does, and says that it differs.
    sw1 = f32(rng.normal(0, .3, (16, 16, 1, 1)))
    sx = f32(rng.uniform(-1, 1, (1, 16, 6, 7)))
    sout = run_model("deconv-same", [mk("ConvTranspose", ["x", "sw1"], ["y"], name="same_lower", strides=[2, 2],
                                        auto_pad="SAME_LOWER")], {"sw1": sw1}, ([1, 16, 6, 7], [1, 16, 11, 13]), sx,
                     r"kernel same_lower: 2688 elements within[\s\S]*dvp: note: .*graph output 'y' is 1x16x12x14 by "
                     r"its nodes' definitions; the model declares 1x16x11x13", "a declared output shape that differs")
    if sout:
        compare("SAME_LOWER ConvTranspose", sout, "", {"y": deconv(sx[0].astype(np.float16).astype(np.float64), sw1, None,
                                                                   (2, 2), (0, 0, -1, -1))})

    # An EfficientNet-style block (MBConv): a 1 x 1 expansion to 40 channels (no whole group of 16)
    # with SiLU, a depthwise 3 x 3 conv with SiLU, squeeze-and-excitation (a global pool, 1 x 1
    # convs 40 -> 10 -> 40, a Sigmoid gate, the map times the gate: one value per channel
    # broadcast over the map), a 1 x 1 projection and the residual Add; at a batch of 2, every
    # layer checked, the output against NumPy.
    ew, edw = f32(rng.normal(0, .3, (40, 24, 1, 1))), f32(rng.normal(0, .3, (40, 1, 3, 3)))
    esq, eex, epr = f32(rng.normal(0, .3, (10, 40, 1, 1))), f32(rng.normal(0, .3, (40, 10, 1, 1))), \
        f32(rng.normal(0, .2, (24, 40, 1, 1)))
    eb1, eb2 = f32(rng.normal(0, .1, 10)), f32(rng.normal(0, .1, 40))
    mb = [mk("Conv", ["x", "ew"], ["e"], name="expand"), mk("Sigmoid", ["e"], ["es"], name="e_sig"),
          mk("Mul", ["e", "es"], ["ea"], name="e_silu"),
          mk("Conv", ["ea", "edw"], ["dw"], name="dw", group=40, pads=[1, 1, 1, 1]),
          mk("Sigmoid", ["dw"], ["ds"], name="d_sig"), mk("Mul", ["ds", "dw"], ["da"], name="d_silu"),
          mk("GlobalAveragePool", ["da"], ["sq"], name="squeeze"), mk("Conv", ["sq", "esq", "eb1"], ["r"], name="reduce"),
          mk("Sigmoid", ["r"], ["rs"], name="r_sig"), mk("Mul", ["r", "rs"], ["ra"], name="r_silu"),
          mk("Conv", ["ra", "eex", "eb2"], ["ex"], name="excite"), mk("Sigmoid", ["ex"], ["gate"], name="gate"),
          mk("Mul", ["da", "gate"], ["se"], name="se"), mk("Conv", ["se", "epr"], ["pr"], name="project"),
          mk("Add", ["pr", "x"], ["y"], name="residual")]
    mx = f32(rng.uniform(-1, 1, (2, 24, 9, 7)))
    mout = run_model("mbconv", mb, {"ew": ew, "edw": edw, "esq": esq, "eex": eex, "epr": epr, "eb1": eb1, "eb2": eb2},
                     (["N", 24, 9, 7], ["N", 24, 9, 7]), mx, r"kernel se_b1: 3024 elements within",
                     "squeeze-and-excitation in an MBConv block", "--check-layers")
    if mout:
        with open(os.path.join(mout, "summary.txt")) as sf:
            kernels = re.findall(r"^  kernel (\S+) ", sf.read(), re.M)
        if "e_sig_b0" not in kernels or "e_silu_b0" in kernels:
            failures.append(f"SiLU (x times Sigmoid(x)) is not one layer: {kernels[:6]}")
        silu = lambda v: v / (1 + np.exp(-v))
        for b in range(2):
            xb = mx[b].astype(np.float16).astype(np.float64)
            ea = np.pad(silu(conv1(xb, ew)), ((0, 0), (1, 1), (1, 1)))
            da = silu(sum(ea[:, i:i + 9, j:j + 7] * edw[:, 0, i, j, None, None] for i in range(3) for j in range(3)))
            gate = 1 / (1 + np.exp(-(eex[:, :, 0, 0] @ silu(esq[:, :, 0, 0] @ da.mean(axis=(1, 2)) + eb1) + eb2)))
            compare("squeeze-and-excitation", mout, f".b{b}", {"y": conv1(da * gate[:, None, None], epr) + xb})

    # Pad (constant 0, as TF exports and PyTorch's ZeroPad2d write it) before a Conv: on the graph
    # input (placed padded) and on a map (folded into the conv's padding, uneven: 1 top, 1 left,
    # 1 bottom, 0 right, plus the conv's own 1); Squeeze and Unsqueeze as views of a pooled map.
    pw1, pw2 = f32(rng.normal(0, .3, (16, 8, 3, 3))), f32(rng.normal(0, .3, (24, 16, 3, 3)))
    pads = lambda *v: numpy_helper.from_array(np.array(v, np.int64))
    pnodes = [mk("Constant", [], ["p1"], value=pads(0, 0, 1, 1, 0, 0, 1, 1)),
              mk("Constant", [], ["p2"], value=pads(0, 0, 1, 1, 0, 0, 1, 0)),
              mk("Constant", [], ["ax"], value=pads(2, 3)), mk("Constant", [], ["ax0"], value=pads(0)),
              mk("Pad", ["x", "p1"], ["xp"], name="pad_in"), mk("Conv", ["xp", "pw1"], ["c1"], name="conv1"),
              mk("Relu", ["c1"], ["r1"], name="relu1"), mk("Pad", ["r1", "p2"], ["rp"], name="pad_map"),
              mk("Conv", ["rp", "pw2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
              mk("GlobalAveragePool", ["c2"], ["g"], name="gap"), mk("Squeeze", ["g", "ax"], ["sq"], name="squeeze"),
              mk("Unsqueeze", ["sq", "ax0"], ["un"], name="unsqueeze"), mk("Relu", ["un"], ["y"], name="out")]
    px = f32(rng.uniform(-1, 1, (1, 8, 10, 9)))
    pout = run_model("padconv", pnodes, {"pw1": pw1, "pw2": pw2}, ([1, 8, 10, 9], [1, 1, 24]), px,
                     r"kernel conv2: \d+ elements within[\s\S]*kernel out: 24 elements within", "Pad before a Conv",
                     "--check-layers")
    if pout:
        def conv3p(x, w, t, l, b, r):  # 3 x 3, no padding of its own, after a zero Pad
            xp = np.pad(x, ((0, 0), (t, b), (l, r)))
            ho, wo = xp.shape[1] - 2, xp.shape[2] - 2
            return sum(np.einsum("chw,oc->ohw", xp[:, i:i + ho, j:j + wo], w[:, :, i, j].astype(np.float64))
                       for i in range(3) for j in range(3))
        r1 = np.maximum(conv3p(px[0].astype(np.float16).astype(np.float64), pw1, 1, 1, 1, 1), 0)
        c2 = conv3p(r1, pw2, 2, 2, 2, 1)
        compare("Pad before a Conv", pout, "", {"y": np.maximum(c2.mean(axis=(1, 2)), 0).reshape(1, 1, 24)})

    # A YOLO-style neck: a stride-2 conv, a nearest Resize by 2 (asymmetric, floor, as PyTorch
    # exports nn.Upsample) back to the first map's size, a Concat along the channels with it, a
    # 1 x 1 conv. Against NumPy.
    yw1, yw2 = f32(rng.normal(0, .3, (32, 16, 3, 3))), f32(rng.normal(0, .2, (24, 48, 1, 1)))
    scl = lambda *v: numpy_helper.from_array(f32(np.array(v)))
    ynodes = [mk("Constant", [], ["sc"], value=scl(1, 1, 2, 2)),
              mk("Conv", ["x", "yw1"], ["d"], name="down", strides=[2, 2], pads=[1, 1, 1, 1]),
              mk("Resize", ["d", "", "sc"], ["u"], name="up", mode="nearest",
                 coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
              mk("Concat", ["x", "u"], ["cat"], name="cat", axis=1), mk("Conv", ["cat", "yw2"], ["y"], name="fuse")]
    yx = f32(rng.uniform(-1, 1, (1, 16, 12, 10)))
    yout = run_model("neck", ynodes, {"yw1": yw1, "yw2": yw2}, ([1, 16, 12, 10], [1, 24, 12, 10]), yx,
                     r"kernel up: 3840 elements within[\s\S]*kernel fuse: ", "nearest Resize in a YOLO neck",
                     "--check-layers")
    if yout:
        xb = yx[0].astype(np.float16).astype(np.float64)
        dn = conv3(xb, yw1.astype(np.float64))[:, ::2, ::2]
        up = dn.repeat(2, axis=1).repeat(2, axis=2)
        compare("nearest Resize", yout, "", {"y": conv1(np.concatenate([xb, up]), yw2)})

    # A segmentation head: a 3 x 3 conv to 20 classes (a padded channel group), a bilinear Resize
    # to sizes 2.5 x the map's (PyTorch's F.interpolate(mode="bilinear", align_corners=False) as
    # exported: pytorch_half_pixel), a 1 x 1 conv after it. Against NumPy's own bilinear.
    sw1, sw2 = f32(rng.normal(0, .3, (20, 16, 3, 3))), f32(rng.normal(0, .3, (8, 20, 1, 1)))
    szs = lambda *v: numpy_helper.from_array(np.array(v, np.int64))
    snodes = [mk("Constant", [], ["sz"], value=szs(1, 20, 30, 25)),
              mk("Conv", ["x", "sw1"], ["s"], name="classes", pads=[1, 1, 1, 1]),
              mk("Resize", ["s", "", "", "sz"], ["u"], name="bilinear", mode="linear",
                 coordinate_transformation_mode="pytorch_half_pixel"),
              mk("Conv", ["u", "sw2"], ["y"], name="after")]
    sx = f32(rng.uniform(-1, 1, (1, 16, 12, 10)))
    sout = run_model("seghead", snodes, {"sw1": sw1, "sw2": sw2}, ([1, 16, 12, 10], [1, 8, 30, 25]), sx,
                     r"kernel bilinear: 24000 elements within[\s\S]*kernel after: ", "bilinear Resize in a head",
                     "--check-layers")
    if sout:
        def bilinear_axis(n, m):  # (m x n) matrix: output index o reads (o + 0.5) n / m - 0.5, edges held
            a = np.zeros((m, n))
            for o in range(m):
                p = min(max((o + 0.5) * n / m - 0.5, 0), n - 1)
                i = int(np.floor(p))
                a[o, i] += 1 - (p - i)
                a[o, min(i + 1, n - 1)] += p - i
            return a
        s = conv3(sx[0].astype(np.float16).astype(np.float64), sw1.astype(np.float64))
        up = np.einsum("oh,chw,pw->cop", bilinear_axis(12, 30), s, bilinear_axis(10, 25))
        compare("bilinear Resize", sout, "", {"y": conv1(up, sw2)})
    # Its sizes hold N = 1 (exported at batch 1): at --batch 2 they would resize the batch too.
    dvp(["run", os.path.join(d, "seghead.onnx"), "--batch", "2", "--out", os.path.join(d, "seghead-b2"),
         "--no-trace"], 2, r"node 'bilinear' \(Resize\): its sizes or scales make N 1 where the batch is 2",
        "a Resize whose constant sizes hold the batch of 1, at --batch 2")

    # What users get wrong.
    sig = helper.make_graph([helper.make_node("Softplus", ["x"], ["y"], name="gate")], "g",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    onnx.save(helper.make_model(sig, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "softplus.onnx"))
    dvp(["compile", os.path.join(d, "softplus.onnx"), "--out", os.path.join(d, "c")], 2,
        r"softplus\.onnx: node 'gate' \(Softplus\): op Softplus is not implemented", "an op not lowered")
    # A Transpose of runs of 4 bytes (f32), no MatMul's B to fold it into; a LayerNorm row of 20 f32.
    def one_op(name, nodes, shape_in, shape_out, opset=17, inits=()):
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)], list(inits))
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8),
                  os.path.join(d, name + ".onnx"))
        return os.path.join(d, name + ".onnx")
    relu = helper.make_node("Relu", ["x"], ["r"], name="relu")
    path = one_op("transpose", [relu, helper.make_node("Transpose", ["r"], ["y"], name="swap", perm=[0, 2, 1])],
                  [1, 8, 6], [1, 6, 8])
    dvp(["compile", path, "--out", os.path.join(d, "c")], 2,
        r"node 'swap' \(Transpose\): the axes after the two it swaps hold 1 elements, 4 B: the transpose kernel "
        r"moves whole 32-byte blocks", "a transpose of 4-byte runs")
    gamma = numpy_helper.from_array(np.ones(20, np.float32), "gamma")
    path = one_op("layernorm", [relu, helper.make_node("LayerNormalization", ["r", "gamma"], ["y"], name="ln")],
                  [3, 20], [3, 20], inits=[gamma])
    dvp(["compile", path, "--out", os.path.join(d, "c")], 2,
        r"node 'ln' \(LayerNormalization\): rows of 20 f32 elements: the layernorm kernel takes whole 32-byte blocks",
        "a LayerNorm row of 80 bytes")
    # A Softmax over axis 1 of a map whose later axes hold more: refused by name.
    path = one_op("softmax1", [helper.make_node("Softmax", ["x"], ["y"], name="across", axis=1)], [2, 4, 5],
                  [2, 4, 5], opset=13)
    dvp(["compile", path, "--out", os.path.join(d, "c")], 2,
        r"node 'across' \(Softmax\): softmax over axis 1 of 2x4x5: the last is lowered, one whose later axes hold "
        r"one element each, or a feature map's channels", "Softmax over a middle axis")
    path = one_op("widepool", [helper.make_node("MaxPool", ["x"], ["y"], name="wide", kernel_shape=[2, 1],
                                                dilations=[300, 1])], [1, 16, 400, 4], [1, 16, 100, 4], opset=13)
    dvp(["compile", path, "--out", os.path.join(d, "c")], 2,
        r"node 'wide' \(MaxPool\): the pool kernel takes dil_h up to 255; this window needs 300",
        "a pool window past the kernel's range")
    path = one_op("widestride", [helper.make_node("MaxPool", ["x"], ["y"], name="hop", kernel_shape=[2, 2],
                                                  strides=[2, 40])], [1, 16, 20, 81], [1, 16, 10, 2], opset=13)
    dvp(["compile", path, "--out", os.path.join(d, "c")], 2,
        r"node 'hop' \(MaxPool\): a stride across of 40: the pool kernel takes up to 31", "a pool stride past a repeat's")
    np.save(os.path.join(d, "small.npy"), np.zeros((1, 3, 20, 18), np.float32))
    dvp(["compile", model, "--input", "x=" + os.path.join(d, "small.npy"), "--out", os.path.join(d, "c")], 2,
        r"--input x: .*small\.npy holds a tensor of shape 1x3x20x18, .*cnn\.onnx takes 1x3x21x18", "a wrong input shape")
    dvp(["compile", model, "--input", "image=" + os.path.join(d, "x.npy"), "--out", os.path.join(d, "c")], 2,
        r"--input image: .*cnn\.onnx has no input of that name", "an input the model does not have")
    with open(model, "rb") as f:
        head = f.read(3000)
    with open(os.path.join(d, "corrupt.onnx"), "wb") as f:
        f.write(head)
    dvp(["run", os.path.join(d, "corrupt.onnx"), "--out", os.path.join(d, "c")], 2, r"corrupt\.onnx", "a corrupt model")
    dvp(["compile", os.path.join(d, "corrupt.onnx"), "--out", os.path.join(d, "c")], 2, r"corrupt\.onnx",
        "a corrupt model, compiled")
    # A graph output that names no node's output (ONNX's checker lets it through; the fuzzer found
    # it ending in map::at): named.
    orphan = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="relu")], "orphan",
                               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                               [helper.make_tensor_value_info("nosuch", TensorProto.FLOAT, [1, 16])])
    onnx.save(helper.make_model(orphan, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "orphan.onnx"))
    dvp(["compile", os.path.join(d, "orphan.onnx"), "--out", os.path.join(d, "c")], 2,
        r"orphan\.onnx: graph output 'nosuch' is no node's output, initializer or graph input",
        "a graph output no node computes")
    dvp(["run", os.path.join(d, "twice.onnx"), "--batch", "0"], 2, r"--batch 0: a batch is at least 1 image",
        "a batch of 0")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
