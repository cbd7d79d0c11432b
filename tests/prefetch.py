#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A prefetch the L2 keeps (scenarios/firmware/prefetch.yaml): B's 2 MiB, prefetched before a GEMM
# that streams 10.5 MiB through the 8 MiB L2, are still there when their GEMM reads them: every
# line was kept (kept_stashes, half of each set's 16 ways being room for 4 MiB), the reads hit,
# and the GEMM is faster than with persist_fraction 0, where LRU evicts B first (its reads miss
# as without the prefetch). Both runs are checked against the reference.
#
# Usage: prefetch.py DVP SCENARIO OUT
import json
import os
import subprocess
import sys

dvp, scenario, out = sys.argv[1:4]
line, b_bytes = 128, 4096 * 256 * 2  # ascend310's L2 line; fc's B


def run(name, *sets):
    args = [dvp, "run", scenario, "--quiet", "--no-trace", "--out", os.path.join(out, name)]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{scenario} {' '.join(sets)}: exit {r.returncode}: {r.stderr}")
    s = json.load(open(os.path.join(out, name, "stats.json")))
    fc = [k for k in s["soc.launcher"]["kernels"] if k["name"] == "fc"][0]
    kept = sum(s[k]["kept_stashes"] for k in s if k.startswith("soc.l2.hn"))
    return fc["end_ns"] - fc["start_ns"], kept, s["soc.periph.ts.sdma"]


kept_ns, kept, sdma = run("kept")
lru_ns, kept0, sdma0 = run("lru", "platform.l2.persist_fraction=0")
print(f"fc: {kept_ns:.0f} ns with B kept ({kept} lines), {lru_ns:.0f} ns without; sdma {sdma}")
bad = []
if sdma["prefetches"] != 1 or sdma["prefetch_bytes"] != b_bytes or sdma0["prefetch_bytes"] != b_bytes:
    bad.append("the engine did not prefetch all of B in both runs")
if kept != b_bytes // line or kept0 != 0:
    bad.append(f"kept stashes {kept} and {kept0}, not {b_bytes // line} and 0")
if not kept_ns < 0.7 * lru_ns:
    bad.append("the GEMM reading kept lines is not 30% faster")
if bad:
    sys.exit("; ".join(bad))
