#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""param-audit.py DVP OUT [KEY_PREFIX]: every platform parameter changes the model.

For each scalar key under platform (from the resolved configuration of quickstart, which runs
firmware, the task scheduler, AI Cores, an AI CPU, ring, L2 and DRAM), the key is changed to
another valid value (double or halve it, the next power of two, the next choice, the other
bool) and the scenario run again: its stats.json (host figures aside) must differ from the
unchanged run's. A key that quickstart does not exercise is tried on the scenarios in
FALLBACKS (some on the other preset: bank groups and the _S timings exist only on HBM2). A key that changes nothing anywhere is a parameter that does not change the model:
the audit fails, unless the key is listed in NO_EFFECT with the reason."""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import threading

dvp, out = sys.argv[1:3]
only = sys.argv[3] if len(sys.argv) > 3 else ""
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BASE = "scenarios/quickstart.yaml"
FALLBACKS = [("scenarios/memory/random-read.yaml", []), ("scenarios/memory/mixed.yaml", []),
             ("scenarios/kernels/gemm-fp16.yaml", []), ("scenarios/firmware/aicpu-argmax.yaml", []),
             ("scenarios/firmware/gtimer.yaml", []), ("scenarios/kernels/l1-ub-asm.yaml", []),
             ("scenarios/multistream.yaml", ["--preset", "ascend910"]),
             ("scenarios/memory/random-read.yaml", ["--preset", "ascend910"]),
             ("scenarios/dvpp/decode-check.yaml", []), ("scenarios/dvpp/bad-media.yaml", []),
             ("scenarios/dvpp/vpc-resize.yaml", []), ("scenarios/dvpp/vdec-h264-1080p.yaml", []),
             ("scenarios/dvpp/venc.yaml", []), ("scenarios/kernels/aipp.yaml", []),
             ("scenarios/firmware/preload.yaml", []), ("scenarios/firmware/prefetch.yaml", [])]
# Keys that only one fallback exercises, tried there first (the others cost minutes of audit time).
FIRST = {"platform.ts.sdma.": "scenarios/firmware/preload.yaml",
         "platform.l2.persist_fraction": "scenarios/firmware/prefetch.yaml",
         "platform.aicore.aipp_": "scenarios/kernels/aipp.yaml"}
# Keys whose effect shows only together with another change, made in both runs.
COMPANIONS = {
    "platform.cpu.l1.icache_ways": ["platform.cpu.l1.icache_kib=1"],  # the firmware's code fits 32 KiB
    "platform.aicore.icache_kib": ["platform.aicore.icache_fill_bytes=64"],  # kernels fit 16 KiB
    # Longer L2 lines and more ranks need an address mapping that has room for them.
    "platform.l2.line_bytes": ['platform.dram.address_mapping=["column:4",channel,bank,column,row]'],
    "platform.dram.ranks": ['platform.dram.address_mapping=["column:2",channel,bank,rank,column,row]'],
    # Longer bursts need a longer tCCD; a longer tCCD_S needs a longer tCCD_L.
    "platform.dram.burst_length": ["platform.dram.timing.tCCD_S=16", "platform.dram.timing.tCCD_L=16"],
    "platform.dram.timing.tCCD_S": ["platform.dram.timing.tCCD_L=32"],
    "platform.dram.timing.tRRD_S": ["platform.dram.timing.tRRD_L=88"],
    "platform.l2.seed": ["platform.l2.replacement=random"],  # the seed of random replacement
    # A bitstream rate shows where the bits, not the pixels, set a frame's time: frames fast by their
    # pixels (no per-stream cap, no shared rate, no setup).
    "platform.dvpp.vdec.max_mbps": ["platform.dvpp.vdec.fps_1080p=100000", "platform.dvpp.vdec.max_fps=0",
                                    "platform.dvpp.vdec.total_fps_1080p=0", "platform.dvpp.vdec.setup_us=0"],
    # A DVPP engine's largest side shows on pictures larger than it: with min_side 1, max_side 1 refuses all.
    **{f"platform.dvpp.{e}.max_side": [f"platform.dvpp.{e}.min_side=1"] for e in ("jpegd", "jpege", "pngd", "vdec", "venc", "vpc")},
}
# Keys that change no result by design, with the reason.
NO_EFFECT = {
    "platform.name": "the SoC's name, printed only",
    "platform.cpu.quantum_ns": "a host-speed setting: firmware-visible results do not depend on it "
                               "(scenario.quantum_invariance checks exactly that)",
}


def schema():
    """dotted key -> (type text, range text) from `dvp schema`."""
    text = subprocess.run([dvp, "schema"], capture_output=True, text=True, check=True).stdout
    keys, section = {}, ""
    for line in text.splitlines():
        m = re.match(r"### `([^`]+)`", line)
        if m:
            section = m.group(1)
        m = re.match(r"\| `([^`]+)` \| ([^|]*) \| [^|]* \| ([^|]*) \|", line)
        if m and section.startswith("platform"):
            keys[f"{section}.{m.group(1)}"] = (m.group(2).strip(), m.group(3).strip())
    return keys


def resolved(scenario):
    """dotted key -> value text for every scalar under platform."""
    text = subprocess.run([dvp, "config", scenario], capture_output=True, text=True, check=True).stdout
    values, path = {}, []
    for line in text.splitlines():
        m = re.match(r"^( *)([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?$", line)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        path = path[:depth] + [m.group(2)]
        value = (m.group(3) or "").split(" #")[0].strip()
        if path[0] == "platform" and value and not value.startswith("["):
            values[".".join(path)] = value
    return values


def candidates(type_text, range_text, value):
    if type_text == "bool":
        return ["false" if value == "true" else "true"]
    if type_text.startswith("one of"):
        choices = [c.strip() for c in type_text[len("one of"):].split(",")]
        i = choices.index(value) if value in choices else -1
        return [c for c in choices[i + 1:] + choices[:i] if c != value]
    if type_text not in ("integer", "number"):
        return []
    v = float(int(value, 0)) if type_text == "integer" else float(value)
    lo, hi = 0.0, float("inf")
    m = re.match(r"([-0-9.e+]+) \.\. ([-0-9.e+]+)", range_text)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
    m = re.match(r">= ([-0-9.e+]+)", range_text)
    if m:
        lo = float(m.group(1))
    tries = [v * 2, v / 2, lo, v + 1, v - 1, v * 4, v + 8] if v else [1, 2, 8, 64]
    if "power of 2" in range_text:
        tries = [v * 2, v / 2, lo, v * 4, v / 4]
    result = []
    for t in tries:
        if type_text == "integer":
            if t != int(t):
                continue
            t = int(t)
        if lo <= t <= hi and t != v and str(t) not in result:
            result.append(str(t))
    return result


def stats(scenario, tag, sets, extra=()):
    d = os.path.join(out, re.sub(r"[^A-Za-z0-9_.=-]+", "_", tag))
    cmd = [dvp, "run", scenario, "--quiet", "--no-trace", "--out", d, *extra]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return r.returncode, r.stderr.strip().splitlines()[-1:] if r.stderr else []
    j = json.load(open(os.path.join(d, "stats.json")))
    for k in [k for k in j["summary"] if "host" in k]:  # host figures name the host (summary.cpp)
        j["summary"].pop(k)
    return 0, j


class AuditError(Exception):
    """A scenario the audit needs fails unchanged: the audit stops at once."""


class Baselines:
    """(scenario, options...) -> the unchanged run, run once however many keys need it."""

    def __init__(self):
        self.lock, self.runs = threading.Lock(), {}

    def get(self, tag, scenario, companions, extra):
        with self.lock:
            run = self.runs.setdefault(tag, {"lock": threading.Lock(), "result": None})
        with run["lock"]:
            if run["result"] is None:
                run["result"] = stats(scenario, "base " + " ".join(tag), companions, extra)
            return run["result"]


def order_for(key):
    order = [(BASE, [])] + FALLBACKS
    if key.startswith("platform.dvpp."):  # media keys show on the media scenarios: try those first
        order = [f for f in FALLBACKS if "/dvpp/" in f[0]] + [f for f in order if "/dvpp/" not in f[0]]
    first = next((f for p, f in FIRST.items() if key.startswith(p)), None)
    if first:
        order = [f for f in order if f[0] == first] + [f for f in order if f[0] != first]
    return order


def audit(key, tries, baselines):
    """(changed, tried): whether some valid other value of key changed some scenario's stats."""
    tried = []
    for scenario, extra in order_for(key):
        where = os.path.basename(scenario) + (" on " + extra[-1] if extra else "")
        companions = COMPANIONS.get(key, [])
        rc0, base = baselines.get((scenario, *extra, *companions), scenario, companions, extra)
        if rc0 != 0 and companions:  # a companion may break a scenario's own checks: try the next
            continue
        if rc0 != 0:
            raise AuditError(f"{where} fails unchanged: {base}")
        valid = 0
        for t in tries:  # up to three valid values per scenario (a larger cache may change nothing, a smaller one does)
            rc, j = stats(scenario, "audit " + key, companions + [f"{key}={t}"], extra)
            if rc == 2:  # not a valid value together with the rest: try another
                tried.append(f"{t}: {j[0] if j else 'config error'}")
                continue
            tried.append(f"{t} on {where}" + (f": exit {rc}" if rc else ""))
            if rc != 0 or j != base:
                return True, tried
            valid += 1
            if valid == 3:
                break
    return False, tried


def main():
    os.chdir(src)
    spec = schema()
    values = resolved(BASE)
    baselines = Baselines()
    dead, unexercised, jobs = [], [], {}
    # Two keys at a time (ctest gives the test two processors): each key's runs are independent,
    # and the audit is the suite's longest test.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    for key, value in values.items():
        if not key.startswith(only) or key in NO_EFFECT:
            continue
        if key not in spec:
            dead.append(f"{key}: not in the schema")
            continue
        tries = candidates(*spec[key], value)
        if tries:
            jobs[key] = (value, pool.submit(audit, key, tries, baselines))
    done, _ = concurrent.futures.wait([j for _, j in jobs.values()], return_when=concurrent.futures.FIRST_EXCEPTION)
    failed = next((j.exception() for j in done if j.exception()), None)
    if failed:  # at once: not after the keys still queued or running (their runs end by themselves)
        print(failed if isinstance(failed, AuditError) else f"{type(failed).__name__}: {failed}", file=sys.stderr, flush=True)
        os._exit(1)
    pool.shutdown()
    for key, (value, job) in jobs.items():  # printed in the keys' order, whatever finished first
        changed, tried = job.result()
        print(f"{'ok' if changed else 'NO EFFECT'}  {key} = {value} -> {tried[-1] if tried else '-'}", flush=True)
        if not changed:
            (dead if any(" on " in t for t in tried) else unexercised).append(f"{key} = {value}: tried {'; '.join(tried[:6])}")
    print(f"{len(jobs)} parameters checked")
    for d in unexercised:
        print(f"NOT CHECKED (no valid other value): {d}")
    for d in dead:
        print(f"DOES NOT CHANGE THE MODEL: {d}")
    sys.exit(1 if dead or unexercised else 0)

main()
