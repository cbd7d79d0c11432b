#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# References computed on a host worker while the kernel runs (functional runs) stand only while
# the inputs are the bytes the worker was given. Here, in firmware mode, a kernel that runs first
# writes its output over a later kernel's input (an alias of it): that later check must compute
# its reference from the bytes read back after the run (else it fails whenever the worker got
# to it first: its copy is the input's random initial values), while the first kernel's inputs
# are unchanged. stats.json: host_early_references (checks whose inputs were unchanged) = 1,
# every check passed; the same run timing-only hands the worker nothing. Bare mode (no firmware,
# the kernels in their order: the add checked before the other kernel writes its x): 2. Then the
# firmware run again with an x of 2 MiB overwritten only in its second MiB: inputs are compared
# with memory a MiB at a time, and a change in a later piece must be seen too.
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
    shape: {op: add, dtype: f16, n: @N@}
    tensors:
      - {name: x, dtype: f16, elements: @N@, init: random, seed: 1, min: -2, max: 2}
      - {name: y, dtype: f16, elements: @N@, init: random, seed: 2, min: -2, max: 2}
      - {name: z, dtype: f16, elements: @N@}
    args: [x, y, z]
    check: {op: add, inputs: [x, y], output: z}
  - name: overwrite
    library: elementwise
    shape: {op: exp, dtype: f16, n: 4096}
    tensors:
      - {name: a, dtype: f16, elements: 4096, init: random, seed: 3, min: -2, max: 2}
      - {name: o, dtype: f16, elements: 4096, alias: add.x, offset: @OFFSET@}   # over the add's x, before the add runs
    args: [a, o]
    check: {op: exp, inputs: [a], output: o, atol: 1e-2, rtol: 1e-2}
tasks:
  - {kernel: overwrite}
  - {kernel: add}
"""
SMALL = SCENARIO.replace("@N@", "4096").replace("@OFFSET@", "0")


def run(d, *extra):
    r = subprocess.run([DVP, "run", os.path.join(d, "s.yaml"), "--quiet", "--no-trace", "--out", d, *extra],
                       capture_output=True, text=True)
    s = json.load(open(os.path.join(d, "stats.json")))["summary"]
    return r.returncode, s


with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "s.yaml"), "w").write(SMALL)
    rc, s = run(d)
    print(f"functional: exit {rc}, checks failed {s['kernel_checks_failed']}, inputs unchanged "
          f"{s['host_early_references']}, worker {s['host_worker_seconds']:.4f} s")
    # (Not asserted: that the worker began it before the check needed it, which depends on the
    # host's load; the check's values are the same either way.)
    ok = rc == 0 and s["kernel_checks_failed"] == 0 and s["host_early_references"] == 1
    rc, s = run(d, "--timing-only")
    print(f"timing-only: exit {rc}, inputs unchanged {s['host_early_references']}")
    ok = ok and rc == 0 and s["host_early_references"] == 0 and s["host_worker_seconds"] == 0
    bare = SMALL.split("tasks:")[0].replace("firmware: {image: runtime, cores: [0]}\n", "")
    open(os.path.join(d, "s.yaml"), "w").write(bare)
    rc, s = run(d)
    print(f"bare mode: exit {rc}, checks failed {s['kernel_checks_failed']}, inputs unchanged "
          f"{s['host_early_references']}")
    ok = ok and rc == 0 and s["kernel_checks_failed"] == 0 and s["host_early_references"] == 2
    later = SCENARIO.replace("@N@", str(1 << 20)).replace("@OFFSET@", str(3 << 19))  # 2 MiB; 1.5 MiB in
    open(os.path.join(d, "s.yaml"), "w").write(later)
    rc, s = run(d)
    print(f"x overwritten in its second MiB: exit {rc}, checks failed {s['kernel_checks_failed']}, inputs "
          f"unchanged {s['host_early_references']}")
    ok = ok and rc == 0 and s["kernel_checks_failed"] == 0 and s["host_early_references"] == 1
    sys.exit(0 if ok else 1)
