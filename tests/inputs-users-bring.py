#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Inputs as users bring them, each accepted and computed right, or refused by name with exit 2:
# - ONNX: weights in an external data file, an IR 10 model, PyTorch 2's output names (with '/')
#   and a name that would climb out of the output folder: values against NumPy, files where they
#   belong; a scalar graph input computed; external data outside the model's folder or past its
#   file's end refused by name.
# - Cast and Dropout: a mixed-precision graph (float16 weights, Casts at its ends, a Dropout), a
#   shape and a bias cast from float constants, an Identity of the input as an output, against
#   NumPy; a Cast of an activation to an integer type refused by name. CastLike to a float16
#   weight's type, to the input's, and of a double scalar to an activation's, against NumPy; a
#   CastLike to an integer type refused by name. uint8 pixels (.npy, .pb) normalised in the model
#   (Cast, / 255, - mean, / std per channel) before a conv and a pool, against NumPy; a .pb input
#   of another type than the model's refused by name.
# - ReduceMean over H and W (x.mean([2, 3]) before a Gemm), ReduceMax over a 1-D map's L, against
#   NumPy; a ReduceMean over the channels refused by name.
# - x.view(x.size(0), -1) as PyTorch exports it (Shape, Gather, Unsqueeze, Concat, Reshape) at
#   --batch 2, each image against NumPy; a Div of the shape's integers refused by name.
# - Gather on the AI CPU: a token embedding by int64 ids at --batch 2 and a class token's row
#   (x[:, 0]) against NumPy; an id past the table refused by name.
# - Firmware: the SDK's ELF runs as its raw image does (the same stats); an empty image, a raw
#   image at an address not 4-byte aligned, an ELF of another machine, firmware.cores: [] refused.
# - Scenarios: YAML merge keys (<<) and x- keys as anchor holders; a second YAML document, a check
#   with no bound or with min above max, two requesters, kernels, tensors or media jobs of one
#   name, a decoded picture saved under a format's name (.jpg) refused.
# - --set of a list's item (traffic[0].count), also as a study's grid or sensitivity parameter; a
#   study's misspelt metric said (with the nearest name) once its first point ran, refused once its
#   table is written.
# - Trace files: a zero-padded decimal read as decimal (not octal); a negative address and an
#   access past 2^64 refused. Command line: --batch -1 refused.
#
# Usage: inputs-users-bring.py DVP     (needs python3-onnx and python3-numpy)
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DVP = os.path.abspath(sys.argv[1])
FIRMWARE = os.path.join(os.path.dirname(os.path.abspath(DVP)), "..", "share", "davinci-vp", "firmware")
rng = np.random.default_rng(11)
failures = []


def expect(ok, what):
    print("ok  " if ok else "FAIL", what)
    if not ok:
        failures.append(what)


def dvp(args, want_rc, pattern, what):
    """Runs dvp; true when it exits want_rc and its output matches pattern."""
    r = subprocess.run([DVP] + args, capture_output=True, text=True, cwd=WORK)  # out/NAME of a run without --out
    said = r.stdout + r.stderr
    ok = r.returncode == want_rc and re.search(pattern, said) is not None
    expect(ok, what if ok else f"{what}: exit {r.returncode} (want {want_rc}), output: {said[-600:]}")
    return ok


def stats(out):
    with open(os.path.join(out, "stats.json")) as f:
        j = json.load(f)
    for k in [k for k in j["summary"] if "host" in k]:
        j["summary"].pop(k)
    j.pop("dvp", None)
    return j


def linear_model(path, w, out_names, ir_version=8, external=None):
    """x [1, 32] -> MatMul(W) -> Relu; each name of out_names an output (the MatMul's, the Relu's)."""
    nodes = [helper.make_node("MatMul", ["x", "W"], [out_names[0]], name="mm"),
             helper.make_node("Relu", [out_names[0]], [out_names[1]], name="relu")]
    g = helper.make_graph(nodes, "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])],
                          [helper.make_tensor_value_info(out_names[1], TensorProto.FLOAT, [1, 16])],
                          [numpy_helper.from_array(w, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = ir_version
    if external:
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location=external,
                        size_threshold=0)
    else:
        onnx.save(m, path)


def compare(out_file, want, what):
    have = np.load(out_file).astype(np.float64) if os.path.exists(out_file) else None
    err = np.abs(have - want).max() if have is not None and have.shape == want.shape else None
    expect(err is not None and err < 2e-2, f"{what}: max abs error {err} against NumPy")


def onnx_cases(d):
    w = rng.uniform(-1, 1, (32, 16)).astype(np.float32)
    x = rng.uniform(-1, 1, (1, 32)).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    h = x.astype(np.float16).astype(np.float64) @ w.astype(np.float16).astype(np.float64)
    relu = np.maximum(h, 0)
    inp = ["--input", "x=" + os.path.join(d, "x.npy"), "--no-trace", "--quiet"]
    # External data, in a folder of its own; an IR 10 model.
    os.makedirs(os.path.join(d, "ext"))
    linear_model(os.path.join(d, "ext", "m.onnx"), w, ["h", "y"], external="m.weights")
    with open(os.path.join(d, "ext", "m.onnx"), "rb") as f:
        expect(w.tobytes() not in f.read(), "the model file holds no weights (they are in m.weights)")
    if dvp(["run", os.path.join(d, "ext", "m.onnx"), "--out", os.path.join(d, "o-ext")] + inp, 0, "", "external data"):
        compare(os.path.join(d, "o-ext", "outputs", "y.npy"), relu, "external data")
    linear_model(os.path.join(d, "ir10.onnx"), w, ["h", "y"], ir_version=10)
    if dvp(["run", os.path.join(d, "ir10.onnx"), "--out", os.path.join(d, "o-ir10")] + inp, 0, "", "an IR 10 model"):
        compare(os.path.join(d, "o-ir10", "outputs", "y.npy"), relu, "an IR 10 model")
    # Output names as PyTorch 2 writes them, and one that would climb out of the outputs.
    names = ["/features/mm/MatMul_output_0", "../../escaped"]
    linear_model(os.path.join(d, "torch.onnx"), w, names)
    out = os.path.join(d, "work", "o-torch")
    os.makedirs(os.path.join(d, "work"))
    if dvp(["run", os.path.join(d, "torch.onnx"), "--out", out, "--output", names[0], "--output", names[1]] + inp, 0,
           "", "PyTorch-style output names"):
        compare(os.path.join(out, "outputs", "_features_mm_MatMul_output_0.npy"), h, "the MatMul's output, '/' in its name")
        compare(os.path.join(out, "outputs", ".._.._escaped.npy"), relu, "the output named ../../escaped")
    written = [os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs if "escaped" in f]
    expect(sorted(written) == [os.path.join("work", "o-torch", sub, ".._.._escaped.npy")
                               for sub in (os.path.join("compiled", "reference"), "outputs")],
           f"the output named ../../escaped written in outputs/ and reference/ only: {written}")
    # A scenario with model: sets its compiled kernels' items once they are compiled.
    write(d, "model.yaml", f"name: ms\nplatform: {{preset: ascend310}}\nmodel: {{onnx: ir10.onnx}}\n")
    dvp(["config", os.path.join(d, "model.yaml"), "--set", "kernels[0].cores=1"], 0, r"\n    cores: 1\n",
        "--set of a compiled model's kernel")
    # A name that needs no change keeps it; the changed one beside it takes _2.
    linear_model(os.path.join(d, "meet.onnx"), w, ["a/b", "a_b"])
    out = os.path.join(d, "o-meet")
    if dvp(["run", os.path.join(d, "meet.onnx"), "--out", out, "--output", "a/b", "--output", "a_b"] + inp, 0, "",
           "outputs a/b and a_b"):
        compare(os.path.join(out, "outputs", "a_b.npy"), relu, "a_b keeps its name")
        compare(os.path.join(out, "outputs", "a_b_2.npy"), h, "a/b, changed, takes a_b_2")
    # External data where ONNX's own loader refuses it (outside its folder, through a link), and
    # past its file's end.
    os.symlink(os.path.join(d, "ext", "m.weights"), os.path.join(d, "ext", "link.weights"))
    def variant(name, location=None, length=None):
        m = onnx.load(os.path.join(d, "ext", "m.onnx"), load_external_data=False)
        for kv in m.graph.initializer[0].external_data:
            if kv.key == "location" and location:
                kv.value = location
        if length:
            m.graph.initializer[0].external_data.add(key="length", value=length)
        onnx.save(m, os.path.join(d, "ext", name + ".onnx"))
        return os.path.join(d, "ext", name + ".onnx")
    for name, location, length, pattern, what in (
            ("link", "link.weights", None, r"in .*link\.weights, a symbolic link", "external data through a link"),
            ("climbs", "../x.npy", None, r"in '\.\./x\.npy', not a file in the model's folder", "external data outside"),
            ("long", None, "1000000", r"in .*m\.weights at bytes 0 \.\. 1000000, past its end \(2048 bytes\)",
             "external data past its file's end")):
        dvp(["compile", variant(name, location, length), "--out", os.path.join(d, "c")], 2,
            r"tensor 'W' keeps its data " + pattern, what)
    dvp(["run", os.path.join(d, "ir10.onnx"), "--batch", "-1"], 2, r"'-1'.*'--batch' is invalid", "--batch -1")
    g = helper.make_graph([helper.make_node("Relu", ["s"], ["y"], name="relu")], "scalar",
                          [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "scalar.onnx"))
    for v in (0.75, -0.5):  # a scalar graph input, held as one element, its output saved as a scalar
        np.save(os.path.join(d, "s.npy"), np.array(v, np.float32))
        out = os.path.join(d, f"o-scalar{v}")
        if dvp(["run", os.path.join(d, "scalar.onnx"), "--input", "s=" + os.path.join(d, "s.npy"), "--out", out,
                "--no-trace", "--quiet"], 0, "", f"a scalar graph input ({v})"):
            compare(os.path.join(out, "outputs", "y.npy"), np.array(max(v, 0.0)), f"Relu of the scalar {v}")
            compare(os.path.join(out, "compiled", "reference", "y.npy"), np.array(max(v, 0.0)),
                    f"the reference of the scalar {v}")


def cast_cases(d):
    """Cast and Dropout as exporters write them: a mixed-precision graph (Cast to float16 at the
    input, float16 weights, Cast back to float at the output, a Dropout between), a shape and a
    bias given as float constants cast (folded when the model is read), an Identity of the input
    as an output; a Cast of an activation to an integer type refused by name."""
    w = rng.uniform(-1, 1, (32, 16)).astype(np.float32)
    x = rng.uniform(-1, 1, (1, 32)).astype(np.float32)
    np.save(os.path.join(d, "cx.npy"), x)
    h = x.astype(np.float16).astype(np.float64) @ w.astype(np.float16).astype(np.float64)
    inp = ["--input", "x=" + os.path.join(d, "cx.npy"), "--no-trace", "--quiet"]
    vi = helper.make_tensor_value_info
    f16 = TensorProto.FLOAT16
    nodes = [helper.make_node("Cast", ["x"], ["xh"], name="to_half", to=f16),
             helper.make_node("MatMul", ["xh", "W"], ["h"], name="mm"),
             helper.make_node("Dropout", ["h", "ratio"], ["hd"], name="drop"),
             helper.make_node("Relu", ["hd"], ["r"], name="relu"),
             helper.make_node("Cast", ["r"], ["y"], name="to_float", to=TensorProto.FLOAT)]
    g = helper.make_graph(nodes, "mixed", [vi("x", TensorProto.FLOAT, [1, 32])], [vi("y", TensorProto.FLOAT, [1, 16])],
                          [numpy_helper.from_array(w.astype(np.float16), "W"),
                           numpy_helper.from_array(np.array(0.1, np.float32), "ratio")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "mixed.onnx"))
    if dvp(["run", os.path.join(d, "mixed.onnx"), "--out", os.path.join(d, "o-mixed")] + inp, 0, "",
           "a mixed-precision graph (Cast, float16 weights, Dropout)"):
        compare(os.path.join(d, "o-mixed", "outputs", "y.npy"), np.maximum(h, 0), "Cast, MatMul, Dropout, Relu, Cast")
    b = rng.uniform(-1, 1, 16).astype(np.float32) + np.float32(1e-4)  # not an f16 value: the Cast rounds it
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("Constant", [], ["bf"], name="bias", value=numpy_helper.from_array(b, "bf")),
             helper.make_node("Cast", ["bf"], ["bh"], name="bias_half", to=f16),
             helper.make_node("Cast", ["bh"], ["bb"], name="bias_back", to=TensorProto.FLOAT),
             helper.make_node("Add", ["m", "bb"], ["a"], name="add"),
             helper.make_node("Constant", [], ["sf"], name="shape",
                              value=numpy_helper.from_array(np.array([16, 1], np.float32), "sf")),
             helper.make_node("Cast", ["sf"], ["s"], name="shape_int", to=TensorProto.INT64),
             helper.make_node("Reshape", ["a", "s"], ["y"], name="reshape"),
             helper.make_node("Identity", ["x"], ["xi"], name="same")]
    g = helper.make_graph(nodes, "folded", [vi("x", TensorProto.FLOAT, [1, 32])],
                          [vi("y", TensorProto.FLOAT, [16, 1]), vi("xi", TensorProto.FLOAT, [1, 32])],
                          [numpy_helper.from_array(w, "W")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "folded.onnx"))
    out = os.path.join(d, "o-folded")
    if dvp(["run", os.path.join(d, "folded.onnx"), "--out", out, "--output", "y", "--output", "xi"] + inp, 0, "",
           "a shape and a bias cast from float constants, an Identity of the input as an output"):
        want = (h + b.astype(np.float16).astype(np.float64)).reshape(16, 1)
        compare(os.path.join(out, "outputs", "y.npy"), want, "MatMul + bias cast to float16 and back, reshaped")
        compare(os.path.join(out, "outputs", "xi.npy"), x.astype(np.float64), "an Identity of the input")
    # ArgMax's indices (s32) cast to float and scaled: a cast kernel converts them.
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("ArgMax", ["m"], ["k"], name="argmax", axis=1, keepdims=1),
             helper.make_node("Cast", ["k"], ["kf"], name="index_float", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["kf", "half"], ["y"], name="scale")]
    g = helper.make_graph(nodes, "index", [vi("x", TensorProto.FLOAT, [1, 32])], [vi("y", TensorProto.FLOAT, [1, 1])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "index.onnx"))
    out = os.path.join(d, "o-index")
    if dvp(["run", os.path.join(d, "index.onnx"), "--out", out] + inp, 0, "", "ArgMax's indices cast to float"):
        compare(os.path.join(out, "outputs", "y.npy"), np.array([[np.argmax(h) * 0.5]]), "ArgMax, Cast, Mul")
    # An Identity of the input as an output, listed before the conv that reads the input too.
    xc = rng.uniform(-1, 1, (1, 8, 4, 4)).astype(np.float32)
    wc = rng.uniform(-0.5, 0.5, (16, 8, 1, 1)).astype(np.float32)
    np.save(os.path.join(d, "cx4.npy"), xc)
    nodes = [helper.make_node("Identity", ["x"], ["xi"], name="same"),
             helper.make_node("Conv", ["x", "W"], ["y"], name="conv")]
    g = helper.make_graph(nodes, "first", [vi("x", TensorProto.FLOAT, [1, 8, 4, 4])],
                          [vi("xi", TensorProto.FLOAT, [1, 8, 4, 4]), vi("y", TensorProto.FLOAT, [1, 16, 4, 4])],
                          [numpy_helper.from_array(wc, "W")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "first.onnx"))
    out = os.path.join(d, "o-first")
    if dvp(["run", os.path.join(d, "first.onnx"), "--out", out, "--input", "x=" + os.path.join(d, "cx4.npy"),
            "--no-trace", "--quiet"], 0, "", "an Identity output before a conv of the same input"):
        x16 = xc.astype(np.float16).astype(np.float64)
        compare(os.path.join(out, "outputs", "xi.npy"), x16, "the Identity's output")
        compare(os.path.join(out, "outputs", "y.npy"),
                np.einsum("nchw,oc->nohw", x16, wc[:, :, 0, 0].astype(np.float16).astype(np.float64)), "the conv's")
        expect(np.load(os.path.join(out, "outputs", "xi.npy")).dtype == np.float32, "the Identity's output is float32")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("Cast", ["m"], ["y"], name="to_int", to=TensorProto.INT32)]
    g = helper.make_graph(nodes, "int", [vi("x", TensorProto.FLOAT, [1, 32])], [vi("y", TensorProto.INT32, [1, 16])],
                          [numpy_helper.from_array(w, "W")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "int.onnx"))
    dvp(["compile", os.path.join(d, "int.onnx"), "--out", os.path.join(d, "c-int")], 2,
        r"node 'to_int' \(Cast\): a Cast of an activation to INT32 is not lowered", "a Cast to int32 refused by name")


def cast_like_cases(d):
    """CastLike (opset 15): an activation given a float16 weight's type and the input's again (a view
    each), a double scalar given an activation's (folded), against NumPy; a CastLike to int32
    refused by name."""
    vi = helper.make_tensor_value_info
    w = rng.uniform(-1, 1, (32, 16)).astype(np.float32)
    x = rng.uniform(-1, 1, (1, 32)).astype(np.float32)
    np.save(os.path.join(d, "cx.npy"), x)
    h = x.astype(np.float16).astype(np.float64) @ w.astype(np.float16).astype(np.float64)
    inp = ["--input", "x=" + os.path.join(d, "cx.npy"), "--no-trace", "--quiet"]
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("CastLike", ["m", "like_half"], ["mh"], name="like_half"),
             helper.make_node("Relu", ["mh"], ["r"], name="relu"),
             helper.make_node("CastLike", ["r", "x"], ["rf"], name="like_input"),
             helper.make_node("CastLike", ["three", "rf"], ["k"], name="like_scalar"),
             helper.make_node("Mul", ["rf", "k"], ["y"], name="scale")]
    g = helper.make_graph(nodes, "like", [vi("x", TensorProto.FLOAT, [1, 32])], [vi("y", TensorProto.FLOAT, [1, 16])],
                          [numpy_helper.from_array(w.astype(np.float16), "W"),
                           numpy_helper.from_array(np.array([1], np.float16), "like_half"),
                           numpy_helper.from_array(np.array(3, np.float64), "three")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)], ir_version=8),
              os.path.join(d, "like.onnx"))
    out = os.path.join(d, "o-like")
    if dvp(["run", os.path.join(d, "like.onnx"), "--out", out] + inp, 0, "", "CastLike to a weight's, an input's type"):
        compare(os.path.join(out, "outputs", "y.npy"), np.maximum(h, 0) * 3, "MatMul, CastLike, Relu, CastLike, Mul")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
             helper.make_node("CastLike", ["m", "like_int"], ["y"], name="like_int")]
    g = helper.make_graph(nodes, "like_int", [vi("x", TensorProto.FLOAT, [1, 32])],
                          [vi("y", TensorProto.INT32, [1, 16])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array([1], np.int32), "like_int")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)], ir_version=8),
              os.path.join(d, "like-int.onnx"))
    dvp(["compile", os.path.join(d, "like-int.onnx"), "--out", os.path.join(d, "c-like-int")], 2,
        r"node 'like_int' \(Cast\): a Cast of an activation to INT32 is not lowered", "a CastLike to int32 refused by name")


def pixel_cases(d):
    """An image model with its own preprocessing: uint8 pixels (.npy and .pb), Cast, / 255, - mean
    and / std per channel, then a conv and a pool (the normalised map placed as a feature map),
    against NumPy; a .pb input of another type than the model's refused by name."""
    vi = helper.make_tensor_value_info
    wc = rng.uniform(-0.2, 0.2, (8, 3, 3, 3)).astype(np.float32)
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
    px = rng.integers(0, 256, (1, 3, 12, 12), dtype=np.uint8)
    np.save(os.path.join(d, "px.npy"), px)
    with open(os.path.join(d, "px.pb"), "wb") as f:
        f.write(numpy_helper.from_array(px, "img").SerializeToString())
    nodes = [helper.make_node("Cast", ["img"], ["xf"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("Div", ["xf", "k255"], ["x1"], name="to_unit"),
             helper.make_node("Sub", ["x1", "mean"], ["x2"], name="center"),
             helper.make_node("Div", ["x2", "std"], ["x3"], name="normalise"),
             helper.make_node("Conv", ["x3", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2])]
    g = helper.make_graph(nodes, "pixels", [vi("img", TensorProto.UINT8, [1, 3, 12, 12])],
                          [vi("y", TensorProto.FLOAT, [1, 8, 6, 6])],
                          [numpy_helper.from_array(wc, "W"), numpy_helper.from_array(np.array(255, np.float32), "k255"),
                           numpy_helper.from_array(mean, "mean"), numpy_helper.from_array(std, "std")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "pixels.onnx"))
    xn = (px.astype(np.float64) / 255 - mean) / std
    xp = np.pad(xn, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = sum(np.einsum("nchw,oc->nohw", xp[:, :, i:i + 12, j:j + 12], wc[:, :, i, j].astype(np.float64))
               for i in range(3) for j in range(3))
    want = conv.reshape(1, 8, 6, 2, 6, 2).max(axis=(3, 5))
    for fmt in ("npy", "pb"):
        out = os.path.join(d, "o-pixels-" + fmt)
        if dvp(["run", os.path.join(d, "pixels.onnx"), "--out", out, "--input",
                "img=" + os.path.join(d, "px." + fmt), "--no-trace", "--quiet"], 0, "",
               f"uint8 pixels ({fmt}) normalised in the model before its conv"):
            compare(os.path.join(out, "outputs", "y.npy"), want, f"Cast, Div, Sub, Div, Conv, MaxPool ({fmt})")
    with open(os.path.join(d, "px-float.pb"), "wb") as f:  # the pixels as floats: not the model's input type
        f.write(numpy_helper.from_array(px.astype(np.float32), "img").SerializeToString())
    dvp(["run", os.path.join(d, "pixels.onnx"), "--out", os.path.join(d, "o-pixels-f"), "--input",
         "img=" + os.path.join(d, "px-float.pb"), "--no-trace", "--quiet"], 2,
        r"px-float.pb: tensor 'img' has data type FLOAT, the model's input is UINT8", "a .pb of another type refused")
    # A .npy is converted from any integer type (int64 pixels here), but a float array for an integer
    # input is refused (its fractions would be cut), as is a value the type does not hold.
    np.save(os.path.join(d, "px-int64.npy"), px.astype(np.int64))
    out = os.path.join(d, "o-pixels-int64")
    if dvp(["run", os.path.join(d, "pixels.onnx"), "--out", out, "--input", "img=" + os.path.join(d, "px-int64.npy"),
            "--no-trace", "--quiet"], 0, "", "uint8 pixels given as an int64 .npy"):
        compare(os.path.join(out, "outputs", "y.npy"), want, "int64 pixels, converted")
    np.save(os.path.join(d, "px-float.npy"), px.astype(np.float64) + 0.5)
    dvp(["run", os.path.join(d, "pixels.onnx"), "--out", os.path.join(d, "o-pixels-fn"), "--input",
         "img=" + os.path.join(d, "px-float.npy"), "--no-trace", "--quiet"], 2,
        r"--input img: \S*px-float.npy holds <f8 values \(a float array's fractions would be cut\)[^\n]*takes UINT8",
        "a float .npy for a uint8 input refused")
    wide = px.astype(np.int64)
    wide[0, 1, 2, 3] = 300
    np.save(os.path.join(d, "px-300.npy"), wide)
    dvp(["run", os.path.join(d, "pixels.onnx"), "--out", os.path.join(d, "o-pixels-300"), "--input",
         "img=" + os.path.join(d, "px-300.npy"), "--no-trace", "--quiet"], 2,
        r"px-300.npy holds 300 at element 171, outside 0 \.\. 255", "a pixel of 300 for a uint8 input refused")


def reduce_cases(d):
    """ReduceMean over H and W as PyTorch exports x.mean([2, 3]) (a ShuffleNetV2 head: conv, mean,
    Gemm) and ReduceMax over a 1-D map's L keeping its axis, against NumPy; a ReduceMean over the
    channels of an ND activation against NumPy, and over a conv's map's channels refused by name."""
    vi = helper.make_tensor_value_info
    x = rng.uniform(-1, 1, (1, 8, 6, 6)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (24, 8, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (10, 24)).astype(np.float32)
    np.save(os.path.join(d, "rx.npy"), x)
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("ReduceMean", ["r"], ["m"], name="mean", axes=[2, 3], keepdims=0),
             helper.make_node("Gemm", ["m", "B"], ["y"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "head", [vi("x", TensorProto.FLOAT, [1, 8, 6, 6])],
                          [vi("y", TensorProto.FLOAT, [1, 10])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "head.onnx"))
    h16 = lambda a: a.astype(np.float16).astype(np.float64)
    win = np.lib.stride_tricks.sliding_window_view(np.pad(h16(x)[0], ((0, 0), (1, 1), (1, 1))), (3, 3), axis=(1, 2))
    conv = np.einsum("chwij,ocij->ohw", win, h16(w))
    mean = np.maximum(conv, 0).mean(axis=(1, 2))
    out = os.path.join(d, "o-head")
    if dvp(["run", os.path.join(d, "head.onnx"), "--input", "x=" + os.path.join(d, "rx.npy"), "--out", out,
            "--no-trace", "--quiet"], 0, "", "ReduceMean over H and W (x.mean([2, 3])) before a Gemm"):
        compare(os.path.join(out, "outputs", "y.npy"), (mean @ h16(b).T)[None, :], "conv, ReLU, mean over H, W, Gemm")
    s = rng.uniform(-1, 1, (1, 8, 20)).astype(np.float32)
    w1 = rng.uniform(-0.5, 0.5, (16, 8, 3)).astype(np.float32)
    np.save(os.path.join(d, "rs.npy"), s)
    nodes = [helper.make_node("Conv", ["s", "W"], ["c"], name="conv1d", pads=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("ReduceMax", ["r"], ["y"], name="max", axes=[-1])]
    g = helper.make_graph(nodes, "seq", [vi("s", TensorProto.FLOAT, [1, 8, 20])], [vi("y", TensorProto.FLOAT, [1, 16, 1])],
                          [numpy_helper.from_array(w1, "W")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "seq.onnx"))
    win = np.lib.stride_tricks.sliding_window_view(np.pad(h16(s)[0], ((0, 0), (1, 1))), 3, axis=1)
    conv = np.einsum("clk,ock->ol", win, h16(w1))
    out = os.path.join(d, "o-seq")
    if dvp(["run", os.path.join(d, "seq.onnx"), "--input", "s=" + os.path.join(d, "rs.npy"), "--out", out,
            "--no-trace", "--quiet"], 0, "", "ReduceMax over a 1-D map's L, keepdims"):
        compare(os.path.join(out, "outputs", "y.npy"), np.maximum(conv, 0).max(axis=1, keepdims=True)[None],
                "Conv1d, ReLU, max over L")
    # Over the channels of an ND activation (a Relu of the input): the reduce kernel; over those of a
    # conv's NC1HWC0 map (channels in groups of 16): refused by name.
    for src, name in (("relu", "x"), ("conv", "c")):
        nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu")] if src == "relu" else \
            [helper.make_node("Conv", ["x", "W"], ["r"], name="conv", pads=[1, 1, 1, 1])]
        nodes.append(helper.make_node("ReduceMean", ["r"], ["y"], name="chan", axes=[1]))
        channels = 8 if src == "relu" else 24
        g = helper.make_graph(nodes, "chan", [vi("x", TensorProto.FLOAT, [1, 8, 6, 6])],
                              [vi("y", TensorProto.FLOAT, [1, 1, 6, 6])],
                              [numpy_helper.from_array(w, "W")] if src == "conv" else [])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
                  os.path.join(d, "chan.onnx"))
        out = os.path.join(d, "o-chan-" + src)
        if src == "conv":
            dvp(["compile", os.path.join(d, "chan.onnx"), "--out", out], 2,
                r"node 'chan' \(ReduceMean\): over a feature map \(stored NC1HWC0, its channels in groups of 16\) it is "
                r"lowered over every spatial axis", "a ReduceMean over a map's C refused")
        elif dvp(["run", os.path.join(d, "chan.onnx"), "--input", "x=" + os.path.join(d, "rx.npy"), "--out", out,
                  "--no-trace", "--quiet"], 0, "", f"ReduceMean over the {channels} channels of a Relu's output"):
            compare(os.path.join(out, "outputs", "y.npy"), np.maximum(h16(x), 0).mean(axis=1, keepdims=True),
                    "ReLU, mean over C")


def opset18_cases(d):
    """A model of opset 18 (PyTorch's exporter's since 2.5), which the packaged libonnx 1.12 does not
    know: read as opset 17. A Resize with antialias 1 upscaling and keep_aspect_ratio_policy stretch
    (neither changes its answer) and a ReduceMean over H and W whose axes are an input give the same
    bytes as the opset 13 model without them; a Resize with antialias 1 that shrinks is refused naming the node."""
    vi = helper.make_tensor_value_info
    x = rng.uniform(-1, 1, (1, 16, 4, 6)).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    outs = {}
    for opset in (13, 18):
        extra = {"antialias": 1, "keep_aspect_ratio_policy": "stretch"} if opset == 18 else {}
        mean_in = ["r", "axes"] if opset == 18 else ["r"]
        mean_attr = {} if opset == 18 else {"axes": [2, 3]}
        nodes = [helper.make_node("Resize", ["x", "", "scales"], ["r"], name="up", mode="linear", **extra),
                 helper.make_node("ReduceMean", mean_in, ["y"], name="mean", **mean_attr)]
        inits = [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
        if opset == 18:
            inits.append(numpy_helper.from_array(np.array([2, -1], np.int64), "axes"))
        g = helper.make_graph(nodes, "o18", [vi("x", TensorProto.FLOAT, [1, 16, 4, 6])],
                              [vi("y", TensorProto.FLOAT, [1, 16, 1, 1])], inits)
        path = os.path.join(d, f"opset{opset}.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8), path)
        out = os.path.join(d, f"o{opset}")
        if dvp(["run", path, "--input", "x=" + os.path.join(d, "x.npy"), "--out", out, "--no-trace", "--quiet"], 0,
               "", f"a Resize and a ReduceMean at opset {opset}"):
            outs[opset] = np.load(os.path.join(out, "outputs", "y.npy"))
    if len(outs) == 2:
        expect(outs[13].tobytes() == outs[18].tobytes(), "opset 18's antialias on an upscale, stretch and axes "
               "as an input: the same bytes as at opset 13")
    g = helper.make_graph([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="down", mode="linear",
                                            antialias=1)], "down", [vi("x", TensorProto.FLOAT, [1, 16, 4, 6])],
                          [vi("y", TensorProto.FLOAT, [1, 16, 2, 3])],
                          [numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "scales")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8),
              os.path.join(d, "down.onnx"))
    dvp(["compile", os.path.join(d, "down.onnx"), "--out", os.path.join(d, "c-down")], 2,
        r"antialias[\s\S]*Name: down OpType: Resize", "opset 18's antialias on a downscale refused, the node named")


def shape_value_cases(d):
    """Shape values through a MatMul (Shape, Cast, Reshape, MatMul by a weight, Add to x): the
    MatMul reads only the shape and a weight, so it is a constant the compiler folds; a timing-only
    compile computes it too (it crashed when the reference took it for an activation's and dropped
    its values). Both runs exit 0, the functional one against NumPy. A Reduce of no axis of more
    than one element of a conv's map (axis 0, keepdims 1) is the map itself: the same bytes as an
    Identity there. At opset 18, an axes attribute (not a valid model there) is refused by name, and
    axes from a Constant's value_ints are read."""
    vi = helper.make_tensor_value_info
    x = rng.uniform(-1, 1, (1, 32)).astype(np.float32)
    w = rng.uniform(-0.1, 0.1, (2, 32)).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape"),
             helper.make_node("Cast", ["s"], ["c"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Reshape", ["c", "rs"], ["r"], name="reshape"),
             helper.make_node("MatMul", ["r", "W"], ["m"], name="mm"),
             helper.make_node("Add", ["x", "m"], ["y"], name="add")]
    g = helper.make_graph(nodes, "shapes", [vi("x", TensorProto.FLOAT, [1, 32])], [vi("y", TensorProto.FLOAT, [1, 32])],
                          [numpy_helper.from_array(np.array([1, 2], np.int64), "rs"), numpy_helper.from_array(w, "W")])
    path = os.path.join(d, "shapes.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)
    run = ["run", path, "--input", "x=" + os.path.join(d, "x.npy"), "--no-trace", "--quiet"]
    dvp(run + ["--timing-only", "--out", os.path.join(d, "o-t")], 0, "", "a MatMul of shape values, timing-only")
    if dvp(run + ["--out", os.path.join(d, "o-f")], 0, "", "a MatMul of shape values"):
        compare(os.path.join(d, "o-f", "outputs", "y.npy"), x + np.array([[1.0, 32.0]]) @ w, "x + Shape(x) @ W")
    cw = rng.uniform(-0.5, 0.5, (16, 32, 1, 1)).astype(np.float32)
    xm = rng.uniform(-1, 1, (1, 32, 4, 4)).astype(np.float32)
    np.save(os.path.join(d, "xm.npy"), xm)
    outs = []
    for name, mean in (("plain", False), ("mean0", True)):
        nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv")]
        nodes += [helper.make_node("ReduceMean", ["c"], ["m"], name="mean0", axes=[0]) if mean else
                  helper.make_node("Identity", ["c"], ["m"], name="same"),
                  helper.make_node("Relu", ["m"], ["y"], name="relu")]
        g = helper.make_graph(nodes, name, [vi("x", TensorProto.FLOAT, [1, 32, 4, 4])],
                              [vi("y", TensorProto.FLOAT, [1, 16, 4, 4])], [numpy_helper.from_array(cw, "W")])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
                  os.path.join(d, name + ".onnx"))
        out = os.path.join(d, "o-" + name)
        if dvp(["run", os.path.join(d, name + ".onnx"), "--input", "x=" + os.path.join(d, "xm.npy"), "--out", out,
                "--no-trace", "--quiet"], 0, "", f"a conv, {'a ReduceMean over axis 0' if mean else 'an Identity'}, a Relu"):
            outs.append(np.load(os.path.join(out, "outputs", "y.npy")))
    if len(outs) == 2:
        expect(outs[0].tobytes() == outs[1].tobytes(), "a ReduceMean over axis 0 (of 1) of a map: the same bytes")
    for name, nodes, inits in (
            ("attr", [helper.make_node("ReduceMax", ["z"], ["y"], name="rmax", axes=[1])], []),
            ("vints", [helper.make_node("Constant", [], ["ax"], value_ints=[-1]),
                       helper.make_node("ReduceMax", ["z", "ax"], ["y"], name="rmax")], [])):
        g = helper.make_graph(nodes, name, [vi("z", TensorProto.FLOAT, [1, 3, 40])],
                              [vi("y", TensorProto.FLOAT, [1, 3, 1] if name == "vints" else [1, 1, 40])], inits)
        path = os.path.join(d, name + ".onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), path)
        if name == "attr":
            dvp(["compile", path, "--out", os.path.join(d, "c-attr")], 2,
                r"node 'rmax' \(ReduceMax\): an axes attribute at opset 18", "opset 18's ReduceMax with axes as an "
                "attribute refused by name")
        else:
            dvp(["run", path, "--out", os.path.join(d, "o-vints"), "--no-trace", "--quiet"], 0, "",
                "opset 18's ReduceMax with its axes from a Constant's value_ints")


def shape_cases(d):
    """x.view(x.size(0), -1) as PyTorch exports it (Shape, Gather, Unsqueeze, Concat, Reshape)
    between a conv and a Gemm, at --batch 2: the shape arithmetic folded with the run's own shapes,
    each image against NumPy; a Div of the shape's integers refused by name."""
    vi = helper.make_tensor_value_info
    x = rng.uniform(-1, 1, (2, 8, 4, 4)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (16, 8, 3, 3)).astype(np.float32)
    b = rng.uniform(-0.2, 0.2, (10, 256)).astype(np.float32)
    np.save(os.path.join(d, "vx.npy"), x)
    def model(name, extra, shape_of_shape):
        nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c"], ["r"], name="relu"),
                 helper.make_node("Shape", ["r"], ["s"], name="shape"),
                 helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0)] + extra + [
                 helper.make_node("Unsqueeze", [shape_of_shape, "axes"], ["nu"], name="unsqueeze"),
                 helper.make_node("Concat", ["nu", "minus1"], ["spec"], name="concat", axis=0),
                 helper.make_node("Reshape", ["r", "spec"], ["f"], name="view"),
                 helper.make_node("Gemm", ["f", "B"], ["y"], name="fc", transB=1)]
        inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
                 numpy_helper.from_array(np.array(0, np.int64), "zero"),
                 numpy_helper.from_array(np.array([0], np.int64), "axes"),
                 numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
                 numpy_helper.from_array(np.array(2, np.int64), "two")]
        g = helper.make_graph(nodes, name, [vi("x", TensorProto.FLOAT, [1, 8, 4, 4])],
                              [vi("y", TensorProto.FLOAT, [1, 10])], inits)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
                  os.path.join(d, name + ".onnx"))
        return os.path.join(d, name + ".onnx")
    h16 = lambda a: a.astype(np.float16).astype(np.float64)
    out = os.path.join(d, "o-view")
    if dvp(["run", model("view", [], "n"), "--batch", "2", "--input", "x=" + os.path.join(d, "vx.npy"), "--out", out,
            "--no-trace", "--quiet"], 0, "", "x.view(x.size(0), -1) at --batch 2"):
        for img in range(2):
            win = np.lib.stride_tricks.sliding_window_view(np.pad(h16(x)[img], ((0, 0), (1, 1), (1, 1))), (3, 3),
                                                           axis=(1, 2))
            flat = np.maximum(np.einsum("chwij,ocij->ohw", win, h16(w)), 0).reshape(-1)
            compare(os.path.join(out, "outputs", f"y.b{img}.npy"), (flat @ h16(b).T)[None, :],
                    f"conv, view(x.size(0), -1), Gemm: image {img}")
    half = [helper.make_node("Div", ["n", "two"], ["nh"], name="halve")]
    dvp(["compile", model("div", half, "nh"), "--out", os.path.join(d, "c-div")], 2,
        r"node 'halve' \(Div\): a Div of integers is not implemented", "a Div of a shape's integers refused")


def gather_cases(d):
    """Gather as transformers write it, on the AI CPU: a token embedding (a weight by int64 ids, a
    negative one among them) at --batch 2, each image against NumPy; a class token's row (x[:, 0],
    an activation by a scalar index); an index past the table refused by the reference, by name."""
    vi = helper.make_tensor_value_info
    h16 = lambda a: a.astype(np.float16).astype(np.float64)
    emb = rng.uniform(-1, 1, (40, 32)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (32, 16)).astype(np.float32)
    ids = np.array([[3, 39, 0, 7, 7, -1], [1, 2, 3, 4, 5, -40]], np.int64)
    np.save(os.path.join(d, "ids.npy"), ids)
    nodes = [helper.make_node("Gather", ["E", "ids"], ["tok"], name="embed", axis=0),
             helper.make_node("MatMul", ["tok", "W"], ["y"], name="proj")]
    g = helper.make_graph(nodes, "embed", [vi("ids", TensorProto.INT64, ["batch", 6])],
                          [vi("y", TensorProto.FLOAT, ["batch", 6, 16])],
                          [numpy_helper.from_array(emb, "E"), numpy_helper.from_array(w, "W")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "embed.onnx"))
    out = os.path.join(d, "o-embed")
    if dvp(["run", os.path.join(d, "embed.onnx"), "--batch", "2", "--input", "ids=" + os.path.join(d, "ids.npy"),
            "--out", out, "--no-trace", "--quiet"], 0, "", "a token embedding's Gather at --batch 2"):
        for img in range(2):
            compare(os.path.join(out, "outputs", f"y.b{img}.npy"), (h16(emb)[ids[img]] @ h16(w))[None],
                    f"Gather of the embedding, MatMul: image {img}")
    # Ids not given: seeded with whole numbers (a fraction would be truncated by the host reference
    # and rounded by the platform: another row), so the run's checks pass.
    dvp(["run", os.path.join(d, "embed.onnx"), "--out", os.path.join(d, "o-embed-seeded"), "--no-trace", "--quiet"],
        0, "", "a token embedding whose ids are seeded")
    x = rng.uniform(-1, 1, (1, 5, 32)).astype(np.float32)
    np.save(os.path.join(d, "seq.npy"), x)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             helper.make_node("Gather", ["h", "zero"], ["cls"], name="cls", axis=1),
             helper.make_node("Relu", ["cls"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "cls", [vi("x", TensorProto.FLOAT, [1, 5, 32])], [vi("y", TensorProto.FLOAT, [1, 16])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array(0, np.int64), "zero")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "cls.onnx"))
    out = os.path.join(d, "o-cls")
    if dvp(["run", os.path.join(d, "cls.onnx"), "--input", "x=" + os.path.join(d, "seq.npy"), "--out", out,
            "--no-trace", "--quiet"], 0, "", "a class token's row (x[:, 0])"):
        compare(os.path.join(out, "outputs", "y.npy"), np.maximum(h16(x)[:, 0] @ h16(w), 0), "MatMul, Gather, Relu")
    # Rows 4 and 0 of a map as a graph output: f32, as the model declares it (the map cast first).
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             helper.make_node("Gather", ["h", "rows"], ["y"], name="pick", axis=1)]
    g = helper.make_graph(nodes, "pick", [vi("x", TensorProto.FLOAT, [1, 5, 32])],
                          [vi("y", TensorProto.FLOAT, [1, 2, 16])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.array([4, 0], np.int64), "rows")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "pick.onnx"))
    out = os.path.join(d, "o-pick")
    if dvp(["run", os.path.join(d, "pick.onnx"), "--input", "x=" + os.path.join(d, "seq.npy"), "--out", out,
            "--no-trace", "--quiet"], 0, "", "rows of a map gathered as a graph output"):
        compare(os.path.join(out, "outputs", "y.npy"), (h16(x) @ h16(w))[:, [4, 0]], "MatMul, Gather")
        expect(np.load(os.path.join(out, "outputs", "y.npy")).dtype == np.float32, "the gathered output is float32")
    # At --batch 2, rows of an activation picked by a graph input's indices: refused by name (each
    # image's rows would need the indices of its own image). Two indices, as the batch: a graph
    # input's first dimension is the batch at --batch, so indices of another count are refused
    # before, when the inputs are read (the second case).
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             helper.make_node("Gather", ["h", "rows"], ["y"], name="pick_by_input", axis=1)]
    g = helper.make_graph(nodes, "pickin", [vi("x", TensorProto.FLOAT, ["batch", 5, 32]),
                                            vi("rows", TensorProto.INT64, ["k"])],
                          [vi("y", TensorProto.FLOAT, ["batch", "k", 16])], [numpy_helper.from_array(w, "W")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8),
              os.path.join(d, "pickin.onnx"))
    np.save(os.path.join(d, "rows.npy"), np.array([4, 0], np.int64))
    dvp(["run", os.path.join(d, "pickin.onnx"), "--batch", "2", "--input", "rows=" + os.path.join(d, "rows.npy"),
         "--out", os.path.join(d, "o-pickin"), "--no-trace", "--quiet"], 2,
        r"node 'pick_by_input' \(Gather\): a Gather of an activation by indices that are not a constant is lowered "
        r"at a batch of 1", "at --batch 2, a Gather of an activation by a graph input's indices refused by name")
    np.save(os.path.join(d, "rows3.npy"), np.array([4, 0, 2], np.int64))
    dvp(["run", os.path.join(d, "pickin.onnx"), "--batch", "2", "--input", "rows=" + os.path.join(d, "rows3.npy"),
         "--out", os.path.join(d, "o-pickin3"), "--no-trace", "--quiet"], 2,
        r"'rows' is 3: with a batch of 2, every activation's first dimension is the batch",
        "at --batch 2, three indices in a graph input refused, naming it")
    np.save(os.path.join(d, "ids-bad.npy"), np.array([[3, 40, 0, 7, 7, -1]], np.int64))
    dvp(["run", os.path.join(d, "embed.onnx"), "--input", "ids=" + os.path.join(d, "ids-bad.npy"),
         "--out", os.path.join(d, "o-embed-bad"), "--no-trace", "--quiet"], 2, r"node 'embed' \(Gather\)",
        "an id past the embedding's rows refused by name")
    # An id past f32's exact integers is named as the file holds it (in f32, 2^24 + 1 reads 16777216).
    np.save(os.path.join(d, "ids-far.npy"), np.array([[3, 2**24 + 1, 0, 7, 7, -(2**40) - 3]], np.int64))
    dvp(["run", os.path.join(d, "embed.onnx"), "--input", "ids=" + os.path.join(d, "ids-far.npy"),
         "--out", os.path.join(d, "o-embed-far"), "--no-trace", "--quiet"], 2,
        r"ids-far\.npy holds 16777217 at element 1, outside -16777215 \.\. 16777215",
        "an id past 2^24 refused, named as written")


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
    return os.path.join(d, name)


def firmware_cases(d):
    run = ["--no-trace", "--quiet"]
    scen = "name: fw\nplatform: {preset: ascend310}\nfirmware:\n  image: %s\n%s" \
           "checks:\n  - {metric: summary.firmware_exit_code, min: 0, max: 0}\n"
    elf, raw = os.path.join(FIRMWARE, "printf.elf"), os.path.join(FIRMWARE, "printf.bin")
    a = write(d, "elf.yaml", scen % (elf, ""))
    b = write(d, "raw.yaml", scen % (raw, ""))
    if dvp(["run", a, "--out", os.path.join(d, "o-elf")] + run, 0, "", "the SDK's ELF") and \
            dvp(["run", b, "--out", os.path.join(d, "o-raw")] + run, 0, "", "its raw image"):
        expect(stats(os.path.join(d, "o-elf")) == stats(os.path.join(d, "o-raw")),
               "the ELF and the raw image run alike (the same stats.json)")
    with open(elf, "rb") as f:
        image = bytearray(f.read())
    image[24:32] = (0x90000000).to_bytes(8, "little")  # e_entry: past the image's one segment
    with open(os.path.join(d, "gap.elf"), "wb") as f:
        f.write(image)
    dvp(["run", write(d, "gap.yaml", scen % ("./gap.elf", ""))], 2,
        r"gap\.elf: its entry point 0x90000000 lies in no segment it loads", "an ELF whose entry is in no segment")
    open(os.path.join(d, "empty.bin"), "wb").close()
    dvp(["run", write(d, "empty.yaml", scen % ("./empty.bin", ""))], 2,
        r"key 'firmware\.image': .*empty\.bin is empty", "an empty image")
    dvp(["run", write(d, "odd.yaml", scen % (raw, "  load: 0x80000002\n"))], 2,
        r"key 'firmware\.load': 0x80000002 is not 4-byte aligned", "a raw image not 4-byte aligned")
    dvp(["run", write(d, "host.yaml", scen % (os.path.abspath(sys.executable), ""))], 2,
        r"an ELF file, but not a 64-bit little-endian AArch64 one", "an ELF of another machine")
    dvp(["run", write(d, "elfload.yaml", scen % (elf, "  load: 0x80000000\n"))], 2,
        r"key 'firmware\.load': an ELF image is placed by its program headers", "an ELF given a load address")
    dvp(["run", write(d, "nocore.yaml", scen % (raw, "  cores: []\n"))], 2,
        r"key 'firmware\.cores': lists no core", "firmware.cores: []")
    dvp(["run", write(d, "twice.yaml", scen % (raw, "  cores: [0, 0]\n"))], 2,
        r"key 'firmware\.cores\[1\]': core 0 is listed twice", "a core listed twice")


TRAFFIC = """name: t
platform: {preset: ascend310}
x-reader: &reader
  instances: 2
  pattern: sequential
  access_bytes: 512
  region_bytes: 1048576
  count: 10
traffic:
  - <<: *reader
    name: a
  - <<: [{count: 3, seed: 5}, *reader]
    name: b
    instances: 1
    region_offset: 4194304
"""


def scenario_cases(d):
    out = os.path.join(d, "o-merge")
    if dvp(["run", write(d, "merge.yaml", TRAFFIC), "--out", out, "--no-trace", "--quiet"], 0, "", "merge keys, x- keys"):
        req = {k.split(".")[-1]: v["transactions"] for k, v in stats(out).items() if k.startswith("soc.requesters.")}
        # 512-byte accesses, 128-byte lines: 4 each; b's own count (3) before *reader's (10).
        expect(req == {"a0": 40, "a1": 40, "b0": 12}, f"merged entries: transactions {req}")
    # --set of a list's item, named as errors name it.
    out = os.path.join(d, "o-set")
    if dvp(["run", os.path.join(d, "merge.yaml"), "--set", "traffic[1].count=5", "--set", "traffic[0]={instances: 1}",
            "--out", out, "--no-trace", "--quiet"], 0, "", "--set traffic[1].count and traffic[0]"):
        req = {k.split(".")[-1]: v["transactions"] for k, v in stats(out).items() if k.startswith("soc.requesters.")}
        expect(req == {"a0": 40, "b0": 20}, f"--set of items: transactions {req}")
    dvp(["config", os.path.join(d, "merge.yaml"), "--set", "traffic[2].count=5"], 2,
        r"'traffic' has 2 items: no \[2\]", "--set of an item the list does not have")
    dvp(["config", os.path.join(d, "merge.yaml"), "--set", "platform[0].x=1"], 2,
        r"'platform' is not a list here", "--set of an item of a section")
    study = ("name: s\nscenario: merge.yaml\ntiming_only: true\ngrid:\n  traffic[0].count: [2, 4]\n"
             "metrics: [summary.simulated_ns, summary.simulated_nss]\n")
    out = os.path.join(d, "o-study")
    dvp(["sweep", write(d, "study.yaml", study), "--out", out, "--quiet"], 2,
        r"warning: the study's metric summary\.simulated_nss is not in point 0's stats\.json \(the nearest names "
        r"there: summary\.simulated_ns[,)][\s\S]*metric summary\.simulated_nss is in no point's stats\.json \(the "
        r"nearest names there: summary\.simulated_ns[,)]",
        "a study's misspelt metric: said with its nearest name once the first point ran, refused at the end")
    rows = []
    if os.path.exists(os.path.join(out, "results.csv")):
        with open(os.path.join(out, "results.csv")) as f:
            rows = f.read().splitlines()
    expect(len(rows) == 3 and all(",ok," in r for r in rows[1:]), f"the study's points ran, a list item each: {rows}")
    # A sensitivity over a list's item: the base point (b's own count, 3), then count / 2 (1.5, an
    # integer key rounds: 2) and count x 2.
    sens = ("name: s\nscenario: merge.yaml\ntiming_only: true\nmetrics: [summary.simulated_ns]\n"
            "sensitivity: {factor: 2, parameters: ['traffic[1].count'], metric: summary.simulated_ns}\n")
    out = os.path.join(d, "o-sens")
    if dvp(["sweep", write(d, "sens.yaml", sens), "--sensitivity", "--out", out, "--quiet"], 0, "",
           "a sensitivity over traffic[1].count"):
        with open(os.path.join(out, "study.json")) as f:
            points = json.load(f)["points"]
        got = [p["traffic[1].count"] for p in points]
        expect(got == ["3", "2", "6"], f"the sensitivity's points of traffic[1].count: {points}")
    dvp(["sweep", write(d, "sens-bad.yaml", sens.replace("traffic[1]", "traffic[7]")), "--sensitivity", "--out",
         os.path.join(d, "o-sens-bad")], 2, r"traffic\[7\]\.count is not a value", "a sensitivity over an absent item")
    stacked = TRAFFIC.replace("x-reader: &reader\n  instances: 2\n", "x-base: &base {instances: 2}\nx-reader: &reader\n"
                              "  <<: *base\n")
    out = os.path.join(d, "o-stacked")
    if dvp(["run", write(d, "stacked.yaml", stacked), "--out", out, "--no-trace", "--quiet"], 0, "",
           "anchors stacked (a merged map's own <<)"):
        req = {k.split(".")[-1]: v["transactions"] for k, v in stats(out).items() if k.startswith("soc.requesters.")}
        expect(req == {"a0": 40, "a1": 40, "b0": 12}, f"stacked merges: transactions {req}")
    dvp(["config", write(d, "twice.yaml", TRAFFIC.replace("  - <<: *reader\n    name: a\n",
                                                          "  - <<: *reader\n    <<: {count: 4}\n    name: a\n"))],
        2, r"traffic\[0\]\.<<': duplicate key", "two merge keys in one map")
    dvp(["run", write(d, "two.yaml", TRAFFIC + "---\nname: second\n")], 2,
        r"two\.yaml:\d+:1: a second YAML document", "a second YAML document")
    write(d, "trailing.yaml", TRAFFIC + "---\n")
    dvp(["config", os.path.join(d, "trailing.yaml")], 0, "", "an empty document after ---")
    # yaml-cpp reads a stray ',' as an empty document it never gets past (a fuzz input hung).
    dvp(["config", write(d, "comma.yaml", ", " + TRAFFIC)], 2,
        r"comma\.yaml:1:1: YAML syntax error: ',' cannot start a value", "a ',' before the first key")
    dvp(["config", write(d, "comma2.yaml", TRAFFIC + "---\n, name: b\n")], 2,
        r"comma2\.yaml:\d+:1: YAML syntax error: ',' cannot start a value", "a ',' starting a second document")
    dvp(["run", write(d, "nobound.yaml", TRAFFIC + "checks:\n  - {metric: summary.dram_efficiency}\n")], 2,
        r"key 'checks\[0\]': a check needs min, max or both", "a check with no bound")
    dvp(["run", write(d, "minmax.yaml", TRAFFIC + "checks:\n  - {metric: summary.dram_efficiency, min: 1, max: 0.5}\n")],
        2, r"key 'checks\[0\]\.max': is below min", "a check with min above max")
    # Instances are named by their entry's name and number: rd's eleventh and rd1's first are both rd10.
    clash = TRAFFIC.replace("instances: 2", "instances: 11").replace("name: b", "name: a1")
    dvp(["run", write(d, "clash.yaml", clash)], 2,
        r"key 'traffic\[1\]\.name': requester 'a10' is already another traffic entry's instance",
        "two requesters of one name")
    one = ("  - name: {k}\n    library: elementwise\n    shape: {{op: add, dtype: f16, n: 256}}\n    tensors:\n"
           "      - {{name: x, dtype: f16, elements: 256, init: random}}\n"
           "      - {{name: {t}, dtype: f16, elements: 256, init: random}}\n"
           "      - {{name: z, dtype: f16, elements: 256}}\n    args: [x, {t}, z]\n")
    kern = "name: k\nplatform: {preset: ascend310}\nkernels:\n"
    dvp(["run", write(d, "kok.yaml", kern + one.format(k="add", t="y")), "--out", os.path.join(d, "o-k"), "--quiet"],
        0, "", "a kernel whose names are its own")
    dvp(["run", write(d, "kdup.yaml", kern + one.format(k="add", t="y") * 2)], 2,
        r"key 'kernels\[1\]\.name': a kernel named 'add' is already", "two kernels of one name")
    dvp(["run", write(d, "tdup.yaml", kern + one.format(k="add", t="x"))], 2,
        r"key 'kernels\[0\]\.tensors\[1\]\.name': kernel add already has a tensor named 'x'",
        "two tensors of one name")
    media = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "dvpp", "media", "grey-64x64.png")
    job = f"  - {{name: pic, engine: pngd, input: {media}}}\n"
    dvp(["run", write(d, "jdup.yaml", "name: j\nplatform: {preset: ascend310}\ndvpp:\n" + job * 2)], 2,
        r"key 'dvpp\[1\]\.name': a job named 'pic' is already in dvpp:", "two media jobs of one name")
    dvp(["run", write(d, "jsave.yaml", "name: j\nplatform: {preset: ascend310}\ndvpp:\n" +
                      job.replace("}", ", save: pic.JPG}"))], 2,
        r"key 'dvpp\[0\]\.save': a picture is saved as \.png .* encoded format \(\.jpg\)", "a decoded picture saved as .JPG")
    # VDEC takes an elementary stream: an MP4's box header, or H.265 under an .h264 name, named.
    with open(os.path.join(d, "clip.mp4"), "wb") as f:
        f.write(b"\0\0\0\x20ftypisom\0\0\x02\0isomiso2avc1mp41" + bytes(64))
    with open(os.path.join(os.path.dirname(media), "pattern-1280x720.h265"), "rb") as f:
        h265 = f.read()
    with open(os.path.join(d, "clip.h264"), "wb") as f:
        f.write(h265)
    vdec = "name: v\nplatform: {preset: ascend310}\ndvpp:\n  - {name: clip, engine: vdec, input: %s}\n"
    dvp(["run", write(d, "mp4.yaml", vdec % "clip.mp4, stream: h264")], 2,
        r"key 'dvpp\[0\]\.input': clip\.mp4 is an MP4 \(ISO BMFF\) file, not an elementary stream: .*"
        r"h264_mp4toannexb", "an MP4 given to VDEC")
    dvp(["run", write(d, "h265.yaml", vdec % "clip.h264")], 2,
        r"clip\.h264 starts with an H\.265 video parameter set: give stream: h265", "H.265 under an .h264 name")
    dvp(["run", write(d, "h265ok.yaml", vdec % "clip.h264, stream: h265, max_frames: 2"), "--out", os.path.join(d, "o-v"), "--quiet"],
        0, "", "the same file with stream: h265 decodes (checked against libavcodec)")

def trace_cases(d):
    scen = "name: tr\nplatform: {preset: ascend310}\ntraffic:\n  - {name: r, pattern: trace, trace_file: %s}\n"
    out = os.path.join(d, "o-trace")
    write(d, "padded.trace", "0 W 2148532224 0128\n10 R 0x80100000 0064\n")
    if dvp(["run", write(d, "padded.yaml", scen % "padded.trace"), "--out", out, "--no-trace", "--quiet"], 0, "",
           "zero-padded decimals"):
        r = stats(out)["soc.requesters.r0"]
        expect((r["bytes_written"], r["bytes_read"]) == (128, 64), f"0128 and 0064 read as decimal: {r}")
    write(d, "neg.trace", "0 R 0x80000000 64\n1 R -1 64\n")
    dvp(["run", write(d, "neg.yaml", scen % "neg.trace")], 2, r"neg\.trace:2: bad address '-1'", "a negative address")
    write(d, "top.trace", "0 W 0xffffffffffffff80 128\n")
    dvp(["run", write(d, "top.yaml", scen % "top.trace")], 2,
        r"top\.trace:1: the access at 0xffffffffffffff80 of 128 bytes reaches the top of the address space",
        "an access past 2^64")


with tempfile.TemporaryDirectory() as d:
    WORK = d
    for cases in (onnx_cases, cast_cases, cast_like_cases, pixel_cases, reduce_cases, opset18_cases, shape_cases,
                  shape_value_cases, gather_cases, firmware_cases, scenario_cases, trace_cases):
        os.makedirs(os.path.join(d, cases.__name__))
        cases(os.path.join(d, cases.__name__))

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
