#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A small kernel is not slower on the 32-core preset than on the 2-core one: a library kernel
# takes no more blocks than it has work units (a block with nothing to do still costs its
# dispatch through the task scheduler and its start), unless the scenario sets blocks. Runs
# the quickstart network (firmware, task scheduler) on both presets and compares each
# element-wise and pooling kernel's time, and checks the block counts.
#
# Usage: small-kernels-many-cores.py DVP SOURCE_DIR OUT_DIR
import json
import os
import subprocess
import sys

dvp, src, out = sys.argv[1:4]
times, blocks = {}, {}
for preset in ("ascend310", "ascend910"):
    d = os.path.join(out, preset)
    r = subprocess.run([dvp, "run", os.path.join(src, "scenarios", "quickstart.yaml"), "--preset", preset, "--quiet",
                        "--no-trace", "--out", d], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: quickstart on {preset} exits {r.returncode}: {r.stderr.strip()}")
    for k in json.load(open(os.path.join(d, "stats.json")))["soc.launcher"]["kernels"]:
        times[preset, k["name"]] = k["end_ns"] - k["start_ns"]
        blocks[preset, k["name"]] = k["blocks"]
failures = []
for name in ("relu", "cast", "maxpool"):
    a, b = times["ascend310", name], times["ascend910", name]
    print(f"{name}: {a:.0f} ns on ascend310, {b:.0f} ns on ascend910, {blocks['ascend910', name]} blocks")
    if b > a:
        failures.append(f"{name} takes {b:.0f} ns on ascend910's 32 cores, {a:.0f} ns on ascend310's 2")
# relu: 16384 f32 elements in 32 KiB tiles: 2 work units, so 2 blocks; maxpool: one channel group.
for name, want in (("relu", 2), ("maxpool", 1)):
    if blocks["ascend910", name] != want:
        failures.append(f"{name} runs {blocks['ascend910', name]} blocks on ascend910, want {want} (its work units)")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
