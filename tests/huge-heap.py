#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A run of an ONNX model of 8 MiB or more starts dvp again with glibc's malloc on transparent
# huge pages (platform/dvp_main.cpp, heap_on_huge_pages), where the host's transparent huge pages
# are "madvise" (the tunable does nothing otherwise, and dvp then starts once): the dynamic loader
# hands control to the program twice, once without. The run's results are those of a run without
# it, bit for bit, and its page faults are far fewer. A smaller model and a GLIBC_TUNABLES that
# already names the tunable start once; a user's other tunables are kept (the second start's
# environment, read from /proc); dvp compile starts twice as run does, and so do a run with an option
# before the command and a scenario whose model: names the large model.
# usage: huge-heap.py DVP OUT_DIR
import json
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

DVP, OUT = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
failures = []


def expect(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def model(path, n):
    """x [1, n] -> MatMul(W [n, n], f32) -> Relu: n = 2048 is a 16 MiB file."""
    w = (np.random.default_rng(7).standard_normal((n, n)) / n).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["m"], name="mm"),
                           helper.make_node("Relu", ["m"], ["y"], name="relu")], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                          [numpy_helper.from_array(w, "W")])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def run(args, name, tunables=None):
    """Runs dvp with the loader's log; returns (exit code, program starts, minor faults, log)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "LD_DEBUG", "LD_DEBUG_OUTPUT")}
    env["LD_DEBUG"] = "files"
    if tunables is not None:
        env["GLIBC_TUNABLES"] = tunables
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    more = ["--no-trace", "--quiet"] if args[0] == "run" else []
    r = subprocess.run([DVP] + args + ["--out", os.path.join(OUT, name)] + more, env=env, capture_output=True,
                       text=True)
    faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
    return r.returncode, r.stderr.count("transferring control"), faults, r.stderr


def stats(name):
    with open(os.path.join(OUT, name, "stats.json")) as f:
        j = json.load(f)
    for k in [k for k in j["summary"] if "host" in k]:
        j["summary"].pop(k)
    j.pop("dvp", None)
    return j


try:
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
        MADVISE = "[madvise]" in f.read()
except OSError:  # a kernel without transparent huge pages
    MADVISE = False
TWICE = 2 if MADVISE else 1  # the starts of a large model's run
if not MADVISE:
    print("(the host's transparent huge pages are not 'madvise': dvp starts once, and faults are not compared)")

big = model(os.path.join(OUT, "big.onnx"), 2048)
small = model(os.path.join(OUT, "small.onnx"), 256)
rc, starts, faults_huge, log = run(["run", big], "big")
expect(rc == 0 and starts == TWICE, f"a 16 MiB model's run starts {TWICE} times (exit {rc}, {starts} starts)")
rc0, starts0, faults_small_pages, _ = run(["run", big], "big-small-pages", "glibc.malloc.hugetlb=0")
expect(rc0 == 0 and starts0 == 1, f"with GLIBC_TUNABLES naming the tunable, once ({starts0} starts)")
if rc == 0 and rc0 == 0:
    expect(stats("big") == stats("big-small-pages"), "the same stats.json either way (host fields aside)")
    a = np.load(os.path.join(OUT, "big", "outputs", "y.npy"))
    b = np.load(os.path.join(OUT, "big-small-pages", "outputs", "y.npy"))
    expect(a.tobytes() == b.tobytes(), "the same output bytes either way")
if "ASAN_OPTIONS" in os.environ:  # the sanitizer job: AddressSanitizer's allocator, not glibc's malloc
    print(f"(AddressSanitizer's allocator: page faults not compared, {faults_huge} and {faults_small_pages})")
elif MADVISE:
    expect(faults_huge < 0.7 * faults_small_pages,
           f"fewer page faults on huge pages: {faults_huge} against {faults_small_pages}")
rc, starts, _, _ = run(["run", small], "small")
expect(rc == 0 and starts == 1, f"a model under 8 MiB starts once ({starts} starts)")
rc, starts, _, _ = run(["compile", big], "compiled")
expect(rc == 0 and starts == TWICE, f"its compile too ({starts} starts, exit {rc})")
# Options before the command, and a scenario whose model: names the large model (relative to it).
rc, starts, _, _ = run(["--preset", "ascend910", "run", big, "--timing-only"], "preset-first")
expect(rc == 0 and starts == TWICE, f"with an option before the command too ({starts} starts, exit {rc})")
# (dvp reads a scenario's lines first: one written as a flow map, or with its root indented, has no
# line that starts with model.)
for name, onnx in (("big", "big.onnx"), ("small", "small.onnx"), ("big-flow", "big.onnx"), ("big-indented", "big.onnx")):
    keys = [f"name: {name}", "platform: {preset: ascend310}", f"model: {{onnx: {onnx}}}", "run: {timing_only: true}"]
    text = {"big-flow": "{" + ", ".join(keys) + "}\n", "big-indented": "".join(f"  {k}\r\n" for k in keys)}
    with open(os.path.join(OUT, f"scenario-{name}.yaml"), "w", newline="") as f:
        f.write(text.get(name, "\n".join(keys) + "\n"))
    rc, starts, _, _ = run(["run", os.path.join(OUT, f"scenario-{name}.yaml")], f"scenario-{name}")
    want = TWICE if onnx == "big.onnx" else 1
    expect(rc == 0 and starts == want, f"a scenario whose model: is the {name} model starts {want} times "
                                       f"({starts} starts, exit {rc})")
if MADVISE:
    # The second start's environment: the user's tunable, then the heap's.
    env = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "LD_DEBUG")}
    env["GLIBC_TUNABLES"] = "glibc.malloc.perturb=0"
    p = subprocess.Popen([DVP, "run", big, "--timing-only", "--out", os.path.join(OUT, "big-other-tunable"),
                          "--no-trace", "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # glibc parses the value in place, a ':' becoming a NUL: either separator is the one string.
    want = re.compile(rb"GLIBC_TUNABLES=glibc\.malloc\.perturb=0[:\0]glibc\.malloc\.hugetlb=1\0")
    seen = b""
    while p.poll() is None and not want.search(seen):
        try:
            with open(f"/proc/{p.pid}/environ", "rb") as f:
                seen = f.read()
        except OSError:
            break
        time.sleep(0.002)
    rc = p.wait()
    at = seen.find(b"GLIBC_TUNABLES=")
    expect(rc == 0 and want.search(seen) is not None,
           f"another tunable of the user's is kept, and the heap's added: {seen[at:at + 64]!r} (exit {rc})")
sys.exit(1 if failures else 0)
