#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A weight preload pays (scenarios/firmware/preload.yaml): the GEMM whose B the SDMA engine
# preloaded while another GEMM ran is faster than the same GEMM without the preload, both
# checked against the reference; the engine stashed all of B (2 MiB), each line once (a line
# the GEMM reached first is not filled again).
#
# Usage: preload.py DVP SCENARIO OUT
import json
import os
import subprocess
import sys

dvp, scenario, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
without = os.path.join(out, "no-preload.yaml")
with open(scenario) as f:
    text = f.read()
assert "  - {preload: fc.b}\n" in text
with open(without, "w") as f:
    f.write(text.replace("  - {preload: fc.b}\n", ""))


def run(path, name):
    r = subprocess.run([dvp, "run", path, "--quiet", "--no-trace", "--out", os.path.join(out, name)],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{path}: exit {r.returncode}: {r.stderr}")
    s = json.load(open(os.path.join(out, name, "stats.json")))
    fc = [k for k in s["soc.launcher"]["kernels"] if k["name"] == "fc"][0]
    return fc["end_ns"] - fc["start_ns"], s


with_ns, s = run(scenario, "with")
without_ns, s0 = run(without, "without")
sdma = s["soc.periph.ts.sdma"]
stashes = sum(s[k]["stashes"] for k in s if k.startswith("soc.l2.hn"))
stash_fills = sum(s[k]["stash_fills"] for k in s if k.startswith("soc.l2.hn"))
line = 128  # ascend310's L2 line
print(f"fc: {with_ns:.0f} ns with the preload, {without_ns:.0f} ns without; sdma {sdma}, {stashes} stashes, {stash_fills} filled")
bad = []
if not 0 < stash_fills <= stashes:
    bad.append("stash fills out of range")
if not with_ns < 0.8 * without_ns:
    bad.append("the preloaded GEMM is not 20% faster")
if sdma["bytes"] != 4096 * 256 * 2 or sdma["preloads"] != 1 or stashes != sdma["bytes"] // line:
    bad.append("the engine did not stash B's lines once each")
if "soc.periph.ts.sdma" in s0 and s0["soc.periph.ts.sdma"]["preloads"]:
    bad.append("the run without the task preloaded")
sys.exit("; ".join(bad) or 0)
