#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The camera pipeline through the firmware (scenarios/pipeline-jpeg-resnet.yaml): its checks pass, and
# in its trace DVPP works on a later frame while the AI Cores work on an earlier one: some slice
# of a DVPP channel lane (soc.dvpp) overlaps in time a CUBE slice of an AI Core; and every media
# task ran on DVPP (3 JPEGD and 3 VPC frames in stats.json).
#
# Usage: pipeline-overlap.py DVP SOURCE_DIR PRESET
import json
import os
import subprocess
import sys
import tempfile

DVP, SRC, PRESET = sys.argv[1:4]
with tempfile.TemporaryDirectory() as d:
    r = subprocess.run([DVP, "run", os.path.join(SRC, "scenarios", "pipeline-jpeg-resnet.yaml"), "--preset", PRESET,
                        "--quiet", "--out", d], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: dvp exit {r.returncode}: {r.stderr[-400:]}")
    trace = json.load(open(os.path.join(d, "trace.json")))
    stats = json.load(open(os.path.join(d, "stats.json")))
events = trace["traceEvents"] if isinstance(trace, dict) else trace
process = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
slices = [(process.get(e["pid"], ""), thread.get((e["pid"], e["tid"]), ""), e["ts"], e["ts"] + e["dur"])
          for e in events if e.get("ph") == "X"]
dvpp = [(a, b) for p, _, a, b in slices if p == "soc.dvpp"]
cube = [(a, b) for p, t, a, b in slices if p.startswith("aicore") and t.startswith("CUBE")]
frames = (stats["soc.dvpp.jpegd"]["frames"], stats["soc.dvpp.vpc"]["frames"])
if frames != (3, 3):
    sys.exit(f"FAIL: {frames[0]} JPEGD and {frames[1]} VPC frames, want 3 and 3")
overlaps = sum(1 for a, b in dvpp for c, e in cube if a < e and c < b)
if not overlaps:
    sys.exit("FAIL: no DVPP slice overlaps an AI Core's CUBE slice")
print(f"ok   3 + 3 DVPP frames; {overlaps} DVPP and AI Core CUBE slices overlap on {PRESET}")
