#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""aicpu-memory.py DVP OUT SCENARIO: an AI CPU kernel's time follows the memory system. The
scenario (an AI CPU task streaming a tensor from DRAM) runs with the preset's DRAM and with a
slower one (LPDDR4 at 1600 MT/s instead of 4266): with the Arm cores' L1 caches timed, the
task takes longer and the AI CPU waits longer for its fills; with their timing off
(platform.cpu.l1.timing=false) the DRAM speed does not change the task's time at all."""
import json
import subprocess
import sys

dvp, out, scenario = sys.argv[1:4]


def run(name, *sets):
    d = f"{out}/{name}"
    cmd = [dvp, "run", scenario, "--quiet", "--no-trace", "--out", d]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd)
    if r.returncode != 0:
        sys.exit(f"{name}: dvp run exited {r.returncode}")
    stats = json.load(open(f"{d}/stats.json"))
    tasks = [t for t in stats["soc.periph.ts"]["task_records"] if t["kind"] == "aicpu"]
    if len(tasks) != 1 or tasks[0]["result"] != "ok":
        sys.exit(f"{name}: expected one AI CPU task that passed, got {tasks}")
    stall = stats["soc.cpu.aicpu0"].get("memory_stall_ps", 0)
    print(f"{name}: AI CPU task {tasks[0]['time_ns']:.3f} ns, memory stall {stall / 1000:.3f} ns")
    return tasks[0]["time_ns"], stall


slow_dram = "platform.dram.data_rate_mtps=1600"
fast_t, fast_stall = run("fast")
slow_t, slow_stall = run("slow", slow_dram)
if not slow_stall > fast_stall:
    sys.exit("the AI CPU did not wait longer for memory with the slower DRAM")
if not slow_t > fast_t:
    sys.exit("the AI CPU task did not take longer with the slower DRAM")
# Without the prefetcher every line is a wait: the gap grows.
np_fast_t, _ = run("fast-noprefetch", "platform.cpu.l1.prefetch_lines=0")
np_slow_t, _ = run("slow-noprefetch", "platform.cpu.l1.prefetch_lines=0", slow_dram)
if not np_slow_t - np_fast_t > slow_t - fast_t:
    sys.exit("without the prefetcher the slower DRAM should cost the task more")
off_fast_t, off_fast_stall = run("fast-untimed", "platform.cpu.l1.timing=false")
off_slow_t, _ = run("slow-untimed", "platform.cpu.l1.timing=false", slow_dram)
if off_fast_t != off_slow_t or off_fast_stall != 0:
    sys.exit("with the L1 timing off the AI CPU task must not depend on the DRAM")
print("ok")
