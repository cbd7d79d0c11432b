#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The ONNX operator test suite through the platform: every case of Debian's libonnx-testdata
# whose graph is made of the ops in OPS (the Conv, Gemm, MatMul, Relu, MaxPool,
# AveragePool, GlobalAveragePool, Add, Softmax and BatchNormalization, and the others the
# compiler lowers) is compiled and run by `dvp run model.onnx --input ...` (the
# shipped input_N.pb), and the outputs it saves are compared with the shipped output_N.pb
# within an fp16 tolerance (the platform computes in fp16 with f32 accumulation). A case the
# compiler cannot lower ends in a named error (exit 2) and is listed as unsupported with that
# reason; anything else (a crash, another exit code, a wrong value) is a failure. A report per
# op type: pass / fail / unsupported.
#
# Usage: onnx-platform.py DVP [SUITE_DIR]     (needs python3-onnx and python3-numpy)
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DVP = sys.argv[1]
SUITE = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/libonnx-testdata/data/node"
OPS = {"Conv", "Gemm", "MatMul", "Relu", "MaxPool", "AveragePool", "GlobalAveragePool", "Add", "Softmax",
       "BatchNormalization", "Concat", "Sub", "Mul", "Div", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish",
       "Clip", "Abs", "Neg", "Sqrt", "Exp", "Max", "Min", "GlobalMaxPool", "Erf", "Resize", "Upsample", "ConvTranspose",
       "Cast", "CastLike", "Dropout", "ReduceMean", "ReduceMax", "ReduceSum", "ReduceMin", "Gather", "Expand", "Slice", "Split",
       "Reciprocal", "Log", "Pow", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
       "ReduceProd", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Where"}
EXPECTED_PASSES = 321  # 278 before Equal, Less, LessOrEqual, Greater, GreaterOrEqual, Not, And, Or, Xor and Where,
# 265 before Slice and Split, 236 before ReduceSumSquare, ReduceL1, ReduceL2 and ReduceLogSum, 229 before Expand, Reciprocal, Log and Pow (a constant exponent), 195 before ReduceSum, ReduceMin and Reduce ops over any one run of axes, 175 before linear, cubic and any nearest Resize, 171 before Gather, 156 before 8- and 16-bit integer tensors, 150 before CastLike, 133 before Cast and Dropout, 124 before ConvTranspose, 122 before nearest Resize and Upsample, 76 before the activations (Sigmoid, Tanh, Erf, LeakyRelu, HardSigmoid, HardSwish,
# Clip, Abs, Neg, Sqrt, Exp, Max, Min), GlobalMaxPool and float16 tensors, 75 before dilated pools, 73 before 1-D pools, 37 before batched MatMul, 39 before ceil_mode and count_include_pad 0, 46 before
# BatchNormalization alone, Gemm transA and matrix C, broadcast Add; then Concat, Sub, Mul and Div joined
# the suite (21 more)


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_case(case, tmp):
    model = onnx.load(os.path.join(case, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    data = sorted(glob.glob(os.path.join(case, "test_data_set_0", "input_*.pb")))
    args = [f"--input={name}={path}" for name, path in zip(inputs, data)]
    out = os.path.join(tmp, os.path.basename(case))
    r = subprocess.run([DVP, "run", os.path.join(case, "model.onnx"), "--out", out, "--quiet", "--no-trace"] + args,
                       capture_output=True, text=True)
    # A refusal names the node (the compiler or the host reference), the input's type or its lack of
    # elements; any other error (the compiled scenario refused by the platform, a crash) is the
    # compiler's failure.
    if r.returncode == 2 and re.search(r"node '[^']*' \(|has data type|has no elements", r.stderr):
        return "unsupported", r.stderr.strip().splitlines()[-1]
    if r.returncode != 0:
        return "fail", f"exit {r.returncode}: {r.stderr.strip()[-300:]}"
    for j, o in enumerate(model.graph.output):
        want = load(os.path.join(case, "test_data_set_0", f"output_{j}.pb")).astype(np.float64)
        have = np.load(os.path.join(out, "outputs", o.name + ".npy")).astype(np.float64).reshape(want.shape)
        # fp16 inputs and outputs, f32 sums: a relative half-step on each, and the sum's magnitude.
        tol = 2e-3 * np.abs(want) + 2e-3 * max(1.0, float(np.abs(want).max()))
        if not np.all(np.abs(have - want) <= tol):
            i = int(np.argmax(np.abs(have - want) - tol))
            return "fail", f"output {o.name}[{i}] = {have.flat[i]}, shipped {want.flat[i]}"
    return "pass", ""


def main():
    cases = []
    for case in sorted(glob.glob(os.path.join(SUITE, "test_*"))):
        try:
            ops = {n.op_type for n in onnx.load(os.path.join(case, "model.onnx")).graph.node}
        except Exception:
            continue
        if ops and ops <= OPS:
            cases.append((case, sorted(ops)))
    report = collections.defaultdict(collections.Counter)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, ops in cases:
            result, why = run_case(case, tmp)
            report["+".join(ops)][result] += 1
            print(f"{result:12} {os.path.basename(case)}  {why}")
            if result == "fail":
                failures.append(os.path.basename(case))
    print("\nop type                      pass  fail  unsupported")
    for op, c in sorted(report.items()):
        print(f"{op:28} {c['pass']:4}  {c['fail']:4}  {c['unsupported']:4}")
    passed = sum(c["pass"] for c in report.values())
    print(f"{len(cases)} cases: {passed} pass, {len(failures)} fail")
    # Every case that passed when this was written: a lowering lost (now unsupported) fails too.
    if passed != EXPECTED_PASSES:
        print(f"expected {EXPECTED_PASSES} passing cases, got {passed}")
    if failures or passed != EXPECTED_PASSES:
        sys.exit(1)


main()
