#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# References computed early on a host worker (firmware mode, functional) stand only while the
# inputs are the bytes the worker copied before the run. Here a kernel that runs first writes
# its output over a later kernel's input (an alias of it): that later check must compute its
# reference from the bytes read back after the run (else it fails: the worker's copy is the
# input's random initial values), while the first kernel's own check takes the worker's.
# stats.json: host_early_references = 1, every check passed; the same run timing-only uses none.
#
# Usage: early-reference.py DVP
import json
import os
import subprocess
import sys
import tempfile

DVP = sys.argv[1]
SCENARIO = """
name: early-reference
platform: {preset: ascend310}
firmware: {image: runtime, cores: [0]}
kernels:
  - name: add
    library: elementwise
    shape: {op: add, dtype: f16, n: 4096}
    tensors:
      - {name: x, dtype: f16, elements: 4096, init: random, seed: 1, min: -2, max: 2}
      - {name: y, dtype: f16, elements: 4096, init: random, seed: 2, min: -2, max: 2}
      - {name: z, dtype: f16, elements: 4096}
    args: [x, y, z]
    check: {op: add, inputs: [x, y], output: z}
  - name: overwrite
    library: elementwise
    shape: {op: exp, dtype: f16, n: 4096}
    tensors:
      - {name: a, dtype: f16, elements: 4096, init: random, seed: 3, min: -2, max: 2}
      - {name: o, dtype: f16, elements: 4096, alias: add.x}   # over the add's x, before the add runs
    args: [a, o]
    check: {op: exp, inputs: [a], output: o, atol: 1e-2, rtol: 1e-2}
tasks:
  - {kernel: overwrite}
  - {kernel: add}
"""


def run(d, *extra):
    r = subprocess.run([DVP, "run", os.path.join(d, "s.yaml"), "--quiet", "--no-trace", "--out", d, *extra],
                       capture_output=True, text=True)
    s = json.load(open(os.path.join(d, "stats.json")))["summary"]
    return r.returncode, s


with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "s.yaml"), "w").write(SCENARIO)
    rc, s = run(d)
    print(f"functional: exit {rc}, checks failed {s['kernel_checks_failed']}, early references used "
          f"{s['host_early_references']}, worker {s['host_reference_worker_seconds']:.4f} s")
    ok = rc == 0 and s["kernel_checks_failed"] == 0 and s["host_early_references"] == 1
    ok = ok and s["host_reference_worker_seconds"] > 0
    rc, s = run(d, "--timing-only")
    print(f"timing-only: exit {rc}, early references used {s['host_early_references']}")
    ok = ok and rc == 0 and s["host_early_references"] == 0 and s["host_reference_worker_seconds"] == 0
    sys.exit(0 if ok else 1)
