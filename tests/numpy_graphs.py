# SPDX-License-Identifier: MIT
# What the NumPy tests share: scenarios and ONNX graphs run through dvp in a scratch folder, their
# results against NumPy's, each failure kept (the test exits 1 at the end when there is one).
import os
import subprocess
import sys
import tempfile

import numpy as np


class Bench:
    def __init__(self, dvp, folder):
        self.dvp, self.d, self.failures = dvp, folder, []

    def fail(self, what):
        self.failures.append(what)

    def run(self, text, what, args=()):
        """Scenario `text` through dvp run: its output folder, or None (a failure kept)."""
        path, out = os.path.join(self.d, "s.yaml"), os.path.join(self.d, "out")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([self.dvp, "run", path, "--quiet", "--out", out, *args], capture_output=True, text=True)
        if r.returncode != 0:
            self.fail(f"{what}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
            return None
        return out

    def graph(self, name, nodes, inputs, outputs, inits=None, opset=17):
        """An ONNX model of `nodes` (inputs: name -> array, saved as NAME.npy; outputs: name -> shape, f32)."""
        import onnx
        from onnx import TensorProto, helper, mapping, numpy_helper
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype],
                                                                          v.shape) for n, v in inputs.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()],
                              [numpy_helper.from_array(v, n) for n, v in (inits or {}).items()])
        path = os.path.join(self.d, name + ".onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
        for n, v in inputs.items():
            np.save(os.path.join(self.d, n + ".npy"), v)
        return path

    def run_graph(self, name, nodes, inputs, want, inits=None, rtol=2e-3, atol_scale=4e-3, opset=17, args=()):
        """Graph `name` through dvp run --check-layers, each output against NumPy's `want` (f16
        activations: a few steps of f16 of the output's magnitude)."""
        path = self.graph(name, nodes, inputs, {n: v.shape for n, v in want.items()}, inits, opset)
        out = os.path.join(self.d, "net-" + name)
        r = subprocess.run([self.dvp, "run", path, "--quiet", "--no-trace", "--check-layers", "--out", out, *args] +
                           [f"--input={n}={self.d}/{n}.npy" for n in inputs], capture_output=True, text=True)
        if r.returncode != 0:
            return self.fail(f"onnx {name}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        for n, v in want.items():
            y = self.output(out, n)
            # An infinity is met only by the same infinity; the scale is the finite values'.
            finite = np.abs(v[np.isfinite(v)])
            tol = np.where(np.isfinite(v), rtol * np.abs(v), 0) + atol_scale * max(1.0, float(finite.max(initial=0)))
            with np.errstate(invalid="ignore"):
                off = np.where(y == v, 0.0, np.abs(y - v) - tol) if y.shape == v.shape else None
            if y.shape != v.shape or not np.all(off <= 0):
                i = np.unravel_index(np.nanargmax(np.where(np.isnan(off), np.inf, off)), v.shape) if y.shape == v.shape else 0
                self.fail(f"onnx {name} {n}: off NumPy's at {i}: {y.ravel()[:4]} vs {v.ravel()[:4]} "
                          f"(shapes {y.shape}, {v.shape})")
            else:
                print("ok   onnx", name, n, v.shape)

    @staticmethod
    def output(out, name):
        """Graph output `name` of the run in `out`: NAME.npy, or a batch's NAME.b0.npy, ... joined."""
        path = os.path.join(out, "outputs", name)
        if os.path.exists(path + ".npy"):
            return np.load(path + ".npy").astype(np.float64)
        images, b = [], 0
        while os.path.exists(f"{path}.b{b}.npy"):
            images.append(np.load(f"{path}.b{b}.npy").astype(np.float64))
            b += 1
        return np.concatenate(images) if images else np.zeros(0)

    def refused(self, name, nodes, inputs, y_shape, words, inits=None, args=(), opset=17):
        """Graph `name` refused by dvp compile (exit 2), the error holding each of `words`."""
        path = self.graph(name, nodes, inputs, {"y": y_shape}, inits, opset)
        r = subprocess.run([self.dvp, "compile", path, "--out", os.path.join(self.d, "c-" + name), *args] +
                           [f"--input={n}={self.d}/{n}.npy" for n in inputs], capture_output=True, text=True)
        if r.returncode != 2 or not all(w in r.stderr for w in words):
            self.fail(f"{name}: exit {r.returncode}, {r.stderr.strip()[-300:]}")
        else:
            print("ok  ", name, "refused:", r.stderr.strip().splitlines()[-1][-120:])


ELEMENTWISE = """
name: {op}
platform: {{preset: {preset}}}
kernels:
  - name: k
    library: elementwise
    shape: {{op: {op}, dtype: {dt}, n: {n}{params}}}
    tensors:
{tensors}
      - {{name: z, dtype: {dt}, shape: [{n}], save: z.npy}}
    args: [{args}, z]
    check: {{op: {op}, inputs: [{args}], output: z{params}{tolerance}}}
run: {{trace: false}}
checks:
  - {{metric: summary.kernel_checks_failed, max: 0}}
"""


def elementwise_scenario(preset, op, dt, n, inputs, params="", tolerance=""):
    """A scenario of one elementwise kernel: inputs (names) from NAME.npy, z saved as z.npy, checked."""
    tensors = "\n".join(f"      - {{name: {m}, dtype: {dt}, shape: [{n}], file: {m}.npy}}" for m in inputs)
    return ELEMENTWISE.format(preset=preset, op=op, dt=dt, n=n, tensors=tensors, args=", ".join(inputs),
                              params=params, tolerance=tolerance)


def preset_runs(dvp, out, model, inputs, failures):
    """ONNX `model` through the firmware on ascend310 (inputs: name -> .npy path), then its compiled
    scenario on ascend910: (preset, run folder) of each run that exits 0; a failure kept for another."""
    runs = [("ascend310", [dvp, "run", model] + [f"--input={n}={p}" for n, p in inputs.items()]),
            ("ascend910", [dvp, "run", os.path.join(out, "ascend310", "compiled", "model.yaml"), "--preset", "ascend910"])]
    for preset, cmd in runs:
        folder = os.path.join(out, preset)
        r = subprocess.run(cmd + ["--out", folder, "--no-trace", "--quiet"], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{preset}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        else:
            yield preset, folder


def run_parts(dvp, parts):
    """Each part(B) on one Bench in a scratch folder (B.d); every failure printed, exit 1 if any."""
    with tempfile.TemporaryDirectory() as d:
        B = Bench(dvp, d)
        for part in parts:
            part(B)
    for f in B.failures:
        print("FAIL:", f)
    sys.exit(1 if B.failures else 0)
