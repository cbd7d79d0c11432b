#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# platform.memory.fidelity: fast against detailed on shipped scenarios, each on its own preset and
# on ascend910: both runs pass their checks (a functional kernel's values are compared with its
# reference: the fast mode changes times, not bytes), the fast run's simulated time is within 5%
# of the detailed one's (docs/performance.md tabulates every shipped scenario), its ring links and
# DRAM channels report their busy time, and the same fast run twice gives the same stats.json.
#
# Usage: fast-fidelity.py DVP SCENARIOS_DIR OUT
import json
import os
import subprocess
import sys

DVP, SCENARIOS, OUT = sys.argv[1:4]
CASES = ["memory/stream-write", "memory/random-read", "kernels/add", "layers/resnet50-stem"]


def run(scenario, preset, fidelity, tag=""):
    d = os.path.join(OUT, f"{scenario.replace('/', '.')}.{preset or 'own'}.{fidelity}{tag}")
    cmd = [DVP, "run", os.path.join(SCENARIOS, scenario + ".yaml"), "--quiet", "--no-trace", "--out", d,
           "--set", "platform.memory.fidelity=" + fidelity] + (["--preset", preset] if preset else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}")
    with open(os.path.join(d, "stats.json")) as f:
        return json.load(f)


def host_free(stats):
    stats = dict(stats)
    stats.pop("dvp", None)
    stats["summary"] = {k: v for k, v in stats["summary"].items() if "host" not in k}
    return stats


failed = 0
for scenario in CASES:
    for preset in (None, "ascend910"):
        detailed, fast = run(scenario, preset, "detailed"), run(scenario, preset, "fast")
        td, tf = detailed["summary"]["simulated_ns"], fast["summary"]["simulated_ns"]
        error = (tf - td) / td
        name = f"{scenario} on {preset or 'its own preset'}"
        print(f"{name}: detailed {td:.0f} ns, fast {tf:.0f} ns, error {100 * error:+.2f}%")
        if abs(error) >= 0.05:
            print(f"FAIL {name}: the fast fidelity is {100 * error:+.2f}% off (at most 5%)")
            failed += 1
        busy = [v["data_bus_busy_fraction"] for k, v in fast.items() if k.startswith("soc.dram.mc") and ".ch" in k]
        if not busy or max(busy) <= 0 or fast["soc.ring"]["max_link_busy_fraction"] <= 0:
            print(f"FAIL {name}: the fast run reports no DRAM bus or ring link busy time")
            failed += 1
again = run(CASES[1], None, "fast", ".again")
if host_free(again) != host_free(run(CASES[1], None, "fast")):
    print(f"FAIL {CASES[1]}: two fast runs differ")
    failed += 1
sys.exit(1 if failed else 0)
