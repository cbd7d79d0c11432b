#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Networks through dvp, against NumPy: a small CNN written here with python3-onnx (a 3-channel
# image, conv + batch norm + ReLU, max pooling, a residual block whose 24 output channels are no
# whole group of 16 with a 1 x 1 shortcut conv, global average pooling, a fully connected layer
# and softmax) runs with `dvp run model.onnx --input ... --check-layers` on both presets, every
# layer checked by the platform, and its saved output is compared with NumPy's forward pass of
# the same weights; again in the activation arena, and with a batch of 3 (each image's output
# against NumPy). Then what users get wrong: an op the compiler does not lower, an input file
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
    r = subprocess.run([DVP] + args, capture_output=True, text=True)
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

    # What users get wrong.
    sig = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"], name="gate")], "g",
                            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    onnx.save(helper.make_model(sig, opset_imports=[helper.make_opsetid("", 13)], ir_version=7),
              os.path.join(d, "sigmoid.onnx"))
    dvp(["compile", os.path.join(d, "sigmoid.onnx"), "--out", os.path.join(d, "c")], 2,
        r"sigmoid\.onnx: node 'gate' \(Sigmoid\): op Sigmoid is not lowered onto the platform", "an op not lowered")
    # Views the compiler folds into a reader, with no reader to fold them: a Transpose of runs of
    # 4 bytes (f32), a scale by a constant that no Softmax reads; and a LayerNorm row of 20 f32.
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
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    path = one_op("scaled", [relu, helper.make_node("Mul", ["r", "two"], ["y"], name="twice")], [1, 16], [1, 16],
                  inits=[two])
    dvp(["compile", path, "--out", os.path.join(d, "c")], 2,
        r"output 'y' is a Transpose or a scaling by a constant that no layer computes", "a scale no Softmax reads")
    gamma = numpy_helper.from_array(np.ones(20, np.float32), "gamma")
    path = one_op("layernorm", [relu, helper.make_node("LayerNormalization", ["r", "gamma"], ["y"], name="ln")],
                  [3, 20], [3, 20], inits=[gamma])
    dvp(["compile", path, "--out", os.path.join(d, "c")], 2,
        r"node 'ln' \(LayerNormalization\): rows of 20 f32 elements: the layernorm kernel takes whole 32-byte blocks",
        "a LayerNorm row of 80 bytes")
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
    dvp(["run", os.path.join(d, "twice.onnx"), "--batch", "0"], 2, r"--batch 0: a batch is at least 1 image",
        "a batch of 0")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
