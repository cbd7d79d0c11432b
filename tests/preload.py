#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A weight preload pays (scenarios/firmware/preload.yaml): the GEMM whose B the SDMA engine
# preloaded while another GEMM ran is faster than the same GEMM without the preload, both
# checked against the reference; the engine stashed all of B (2 MiB), each line once (a line
# the GEMM reached first is not filled again).
# A prefetch (the engine's low priority) of B's second half queued before a preload of its first
# half yields to it: the trace shows the prefetch paused while the preload ran, then finished;
# the GEMM is as fast, and each line was stashed once.
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
half = 4096 * 256 * 2 // 2
prefetched = os.path.join(out, "prefetch.yaml")
with open(prefetched, "w") as f:
    f.write(text.replace("  - {preload: fc.b}\n", f"  - {{prefetch: fc.b, offset: {half}}}\n"
                         f"  - {{preload: fc.b, bytes: {half}}}\n"))


def run(path, name, trace=False):
    r = subprocess.run([dvp, "run", path, "--quiet", "--out", os.path.join(out, name)] + ([] if trace else ["--no-trace"]),
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

prefetch_ns, s2 = run(prefetched, "prefetch", trace=True)
sdma2 = s2["soc.periph.ts.sdma"]
stashes2 = sum(s2[k]["stashes"] for k in s2 if k.startswith("soc.l2.hn"))
with open(os.path.join(out, "prefetch", "trace.json")) as f:
    trace = json.load(f)
events = trace["traceEvents"] if isinstance(trace, dict) else trace
lanes = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
slices = sorted((e["ts"], e["ts"] + e["dur"], e["name"].split()[0]) for e in events
                if e.get("ph") == "X" and lanes.get((e["pid"], e["tid"])) == "sdma")
print(f"fc: {prefetch_ns:.0f} ns with the prefetch and preload; sdma {sdma2}; slices {slices}")
if [k for _, _, k in slices] != ["prefetch", "preload", "prefetch"]:
    bad.append("the prefetch did not pause for the preload and then finish")
elif not all(slices[i][1] <= slices[i + 1][0] + 1e-3 for i in range(2)):  # us, as the trace rounds
    bad.append("the prefetch and the preload overlap")
if (sdma2["preloads"], sdma2["bytes"], sdma2["prefetches"], sdma2["prefetch_bytes"]) != (1, half, 1, half):
    bad.append("the engine did not preload one half and prefetch the other")
if stashes2 != 2 * half // line:
    bad.append("B's lines were not stashed once each with the prefetch")
if not prefetch_ns < 0.8 * without_ns:
    bad.append("the GEMM is not 20% faster with the prefetch and the preload")
sys.exit("; ".join(bad) or 0)
