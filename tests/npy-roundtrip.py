#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A .npy round trip: NumPy writes the inputs and the expected result, dvp reads them into a GEMM
# on the AI Cores and an element-wise kernel, saves the outputs, and NumPy reads those back and
# compares them with its own computation. Then a tampered expected file must fail its check with
# the tampered element named, and files that do not fit their tensors must be named errors.
#
# Usage: npy-roundtrip.py DVP   (needs python3-numpy)
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

DVP = sys.argv[1]
M, K, N = 48, 80, 64
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def run(d, scenario, *extra):
    path = os.path.join(d, "s.yaml")
    with open(path, "w") as f:
        f.write(scenario)
    return subprocess.run([DVP, "run", path, "--quiet", "--out", os.path.join(d, "out"), *extra],
                          capture_output=True, text=True)


SCENARIO = """
name: npy-roundtrip
platform: {{preset: ascend310}}
kernels:
  - name: mm
    library: gemm
    shape: {{m: {M}, k: {K}, n: {N}, out: f32}}
    tensors:
      - {{name: a, dtype: f16, file: a.npy}}
      - {{name: b, dtype: f16, file: b.npy}}
      - {{name: c, dtype: f32, shape: [{M}, {N}], save: c.npy}}
    args: [a, b, c]
    check: {{expected: {expected}, output: c, atol: 1e-4, rtol: 1e-5}}
  - name: add
    library: elementwise
    shape: {{op: add, n: {E}, dtype: f32}}
    tensors:
      - {{name: x, dtype: f32, file: x64.npy, convert: true}}
      - {{name: y, dtype: f32, elements: {E}, file: y.bin}}
      - {{name: z, dtype: f32, elements: {E}, save: sub/z.npy}}
    args: [x, y, z]
    check: {{op: add, inputs: [x, y], output: z}}
run: {{trace: false}}
"""
E = 16384  # the element-wise kernel takes whole tiles of 8192 (issue 8 lifts that)

with tempfile.TemporaryDirectory() as d:
    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, (M, K)).astype(np.float16)
    b = rng.uniform(-2, 2, (K, N)).astype(np.float16)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    np.save(os.path.join(d, "a.npy"), a)
    np.save(os.path.join(d, "b.npy"), b)
    np.save(os.path.join(d, "c_ref.npy"), want)
    x = rng.normal(0, 10, E)  # float64: converted to f32 by the platform
    y = rng.normal(0, 10, E).astype(np.float32)
    np.save(os.path.join(d, "x64.npy"), x)
    y.tofile(os.path.join(d, "y.bin"))

    r = run(d, SCENARIO.format(M=M, K=K, N=N, E=E, expected="c_ref.npy"), "--save-tensors",
            os.path.join(d, "all"))
    if r.returncode != 0:
        sys.exit(f"FAIL: the round trip exits {r.returncode}: {r.stderr.strip()}")
    out = os.path.join(d, "out")
    c = np.load(os.path.join(out, "c.npy"))
    check(c.dtype == np.float32 and c.shape == (M, N), f"c.npy is float32 {M}x{N} (got {c.dtype} {c.shape})")
    check(np.allclose(c, want, rtol=1e-5, atol=1e-4), "the GEMM's output matches NumPy's a @ b")
    z = np.load(os.path.join(out, "sub", "z.npy"))
    check(np.array_equal(z, x.astype(np.float32) + y), "the add's output is NumPy's f32 x + y exactly")
    check(np.array_equal(np.load(os.path.join(d, "all", "mm.a.npy")), a), "--save-tensors writes the inputs back")
    check(sorted(os.listdir(os.path.join(d, "all"))) ==
          ["add.x.npy", "add.y.npy", "add.z.npy", "mm.a.npy", "mm.b.npy", "mm.c.npy"],
          "--save-tensors writes every kernel's tensors as KERNEL.TENSOR.npy")
    with open(os.path.join(out, "stats.json")) as f:
        kernels = next(v["kernels"] for k, v in json.load(f).items() if isinstance(v, dict) and "kernels" in v)
    mm = kernels[0]
    check(mm["compared"] == M * N and mm["over_tolerance"] == 0, f"stats: {M * N} compared, none over ({mm})")
    err = np.abs(c.astype(np.float64) - want.astype(np.float64)).max()
    check(abs(mm["max_abs_err"] - err) <= 1e-12, f"stats max_abs_err {mm['max_abs_err']} is NumPy's {err}")

    # One element of the expected file off by 1.0: the check fails and names it.
    bad = want.copy()
    bad[17, 5] += 1.0
    np.save(os.path.join(d, "c_bad.npy"), bad)
    r = run(d, SCENARIO.format(M=M, K=K, N=N, E=E, expected="c_bad.npy"))
    check(r.returncode != 0, "a tampered expected file fails the run")
    with open(os.path.join(out, "summary.txt")) as f:
        summary = f.read()
    check(f"1 of {M * N} elements over" in summary and "worst c[17, 5]" in summary,
          "the summary counts one element over and names it: " +
          next((ln for ln in summary.splitlines() if "kernel mm" in ln), "no line"))

    # Files that do not fit their tensors: named errors, exit 2, nothing simulated.
    np.save(os.path.join(d, "a32.npy"), a.astype(np.float32))
    np.save(os.path.join(d, "a_t.npy"), np.ascontiguousarray(a.T))
    y[:25].tofile(os.path.join(d, "short.bin"))
    cases = [
        ("a.npy", "a32.npy", "kernels[0].tensors[0].file", "holds <f4 elements, the tensor is f16"),
        ("a.npy", "a_t.npy", "kernels[0].tensors[0].file", None),  # the GEMM's shape checks the count only
        ("y.bin", "short.bin", "kernels[1].tensors[1].file", "short.bin: a raw file of 100 bytes"),
        ("a.npy", "missing.npy", "kernels[0].tensors[0].file", "missing.npy: cannot open"),
    ]
    for old, new, key, msg in cases:
        r = run(d, SCENARIO.format(M=M, K=K, N=N, E=E, expected="c_ref.npy").replace(old, new, 1))
        if msg is None:
            check(r.returncode == 1, f"{new}: a transposed input runs and fails its check (got {r.returncode})")
            continue
        check(r.returncode == 2 and key in r.stderr and msg in r.stderr,
              f"{new} in place of {old}: exit 2 naming {key} and '{msg}' (got {r.returncode}: {r.stderr.strip()})")

print("npy round trip:", "FAIL" if failures else "ok")
sys.exit(1 if failures else 0)
