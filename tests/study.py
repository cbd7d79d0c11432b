#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# What-if studies through dvp sweep, collect and diff, on a small memory scenario written here
# (random 128-byte reads by 8 requesters over 6 MiB, three passes: the L2 holds it at 8 MiB, not
# at 2 MiB).
#  - A grid of L2 size x DRAM scheduler run with --jobs 2: results.csv has a row per point in
#    order, each value what the point's own stats.json says, and the L2 hit rate grows with the
#    L2 (the shape the study expects); a zip, a range and Latin-hypercube samples give the points
#    their definitions say (each of 8 strata of a range holds one sample; the same seed, the same
#    points).
#  - A point that fails (a simulated-time limit too short for it) is recorded with its error and
#    the study goes on (exit 1). A study stopped by SIGINT after some points resumes with
#    --resume without running those again.
#  - --emit parallel: GNU parallel runs the commands; dvp collect's table equals the local run's.
#    --emit slurm: both scripts pass bash -n and the array body runs for task ids 0 and 1.
#  - dvp diff of a run against itself reports nothing; against the same run with half the L2 it
#    reports the L2 hit rate and the DRAM bytes among the summary's changes, and a gate on DRAM
#    bytes read fails (exit 1).
#  - What users get wrong (an unknown key in the study, a parameter the platform does not have,
#    zip lists of different lengths) ends in exit 2 naming the study file and line.
# Usage: study.py DVP
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

DVP = os.path.abspath(sys.argv[1])
failures = []

SCENARIO = """name: l2-reuse
description: random 128-byte reads over 6 MiB by 8 requesters, about three passes
platform:
  preset: ascend310
traffic:
  - name: rnd
    instances: 8
    pattern: random
    access_bytes: 128
    region_bytes: 6291456
    instance_stride_bytes: 0
    count: 18000
    outstanding: 16
"""


def check(cond, what):
    if cond:
        print("ok  ", what)
    else:
        failures.append(what)
        print("FAIL", what)
    return cond


def dvp(*args, cwd=None):
    return subprocess.run([DVP] + list(args), capture_output=True, text=True, cwd=cwd)


def rows(out):
    with open(os.path.join(out, "results.csv")) as f:
        return list(csv.DictReader(f))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


with tempfile.TemporaryDirectory() as d:
    write(os.path.join(d, "l2-reuse.yaml"), SCENARIO)
    grid = write(os.path.join(d, "grid.yaml"), """name: grid
description: L2 size x DRAM scheduler; the hit rate grows with the L2 until it holds the 6 MiB
scenario: l2-reuse.yaml
timing_only: true
grid:
  platform.l2.size_kib: [2048, 8192]
  platform.dram.scheduler: [fcfs, frfcfs]
metrics: [summary.l2_hit_rate, summary.dram_bytes_read, summary.simulated_ns]
plots: [{y: summary.dram_bytes_read, kind: bar}]
""")
    out = os.path.join(d, "grid-out")
    r = dvp("sweep", grid, "--jobs", "2", "--out", out)
    table = rows(out) if os.path.exists(os.path.join(out, "results.csv")) else []
    check(r.returncode == 0 and len(table) == 4, f"sweep of a 2 x 2 grid, --jobs 2: exit {r.returncode}, "
          f"{len(table)} rows {r.stderr[-300:]}")
    if len(table) == 4:
        want = [("2048", "fcfs"), ("2048", "frfcfs"), ("8192", "fcfs"), ("8192", "frfcfs")]
        got = [(t["platform.l2.size_kib"], t["platform.dram.scheduler"]) for t in table]
        check(got == want and all(t["status"] == "ok" for t in table), f"the grid's points in order: {got}")
        same = True
        for i, t in enumerate(table):  # each row is what its point's own run says
            st = json.load(open(os.path.join(out, "points", f"{i:04d}", "stats.json")))["summary"]
            for m in ("l2_hit_rate", "dram_bytes_read", "simulated_ns"):
                same &= float(t["summary." + m]) == float(st[m])
        check(same, "results.csv: each point's metrics as its stats.json has them")
        hit = [float(t["summary.l2_hit_rate"]) for t in table]
        check(hit[2] > hit[0] + 0.3 and hit[3] > hit[1] + 0.3,
              f"the L2 hit rate grows with the L2 (2 MiB {hit[0]:.3f}, 8 MiB {hit[2]:.3f})")
        check(json.load(open(os.path.join(out, "results.json")))[3]["metrics"]["summary.l2_hit_rate"] == hit[3],
              "results.json has the same values")
        check(os.path.exists(os.path.join(out, "plots", "summary.dram_bytes_read-vs-platform.l2.size_kib-by-"
                                                         "platform.dram.scheduler-bar.svg")),
              "the study's plots: drawn after the sweep")

    # Plots of the study: PNG and SVG (text kept as text); the heatmap writes each point's value.
    r = dvp("plot", out, "--y", "summary.l2_hit_rate")
    png = os.path.join(out, "plots", "summary.l2_hit_rate-vs-platform.l2.size_kib-by-platform.dram.scheduler-line")
    if check(r.returncode == 0 and os.path.getsize(png + ".png") > 1000, f"dvp plot: a line per scheduler: "
             f"{r.stdout.strip()} {r.stderr.strip()[-300:]}"):
        from PIL import Image
        svg = open(png + ".svg").read()
        check(Image.open(png + ".png").size[0] > 300 and "platform.dram.scheduler=frfcfs" in svg and
              "summary.l2_hit_rate" in svg, "the PNG decodes; the SVG has the legend and the metric")
    r = dvp("plot", out, "--y", "summary.l2_hit_rate", "--kind", "heatmap")
    hm = os.path.join(out, "plots", "summary.l2_hit_rate-vs-platform.l2.size_kib-by-platform.dram.scheduler-heatmap.svg")
    if check(r.returncode == 0 and os.path.exists(hm), f"dvp plot --kind heatmap: {r.stderr.strip()[-300:]}"):
        svg = open(hm).read()
        check(all(f"{float(t['summary.l2_hit_rate']):.4g}" in svg for t in table),
              "the heatmap shows every point's hit rate")
    r = dvp("plot", out, "--y", "summary.nosuch")
    check(r.returncode == 2 and "no column summary.nosuch" in r.stderr, f"dvp plot of a metric the table lacks: "
          f"{r.stderr.strip()[-200:]}")
    run = os.path.join(d, "gemm-run")
    dvp("run", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "kernels", "gemm-fp16.yaml"),
        "--timing-only", "--quiet", "--no-trace", "--out", run)
    r1, r2 = dvp("plot", run, "--roofline"), dvp("plot", run, "--pipes")
    ok = r1.returncode == 0 and r2.returncode == 0
    if check(ok, f"dvp plot --roofline and --pipes of a GEMM run: {r1.stderr[-200:]} {r2.stderr[-200:]}"):
        roof, pipes = open(os.path.join(run, "plots", "roofline.svg")).read(), \
            open(os.path.join(run, "plots", "pipes.svg")).read()
        check("roofline: 8 TFLOP/s" in roof and ">gemm<" in roof and "MTE2" in pipes and "core1" in pipes,
              "the roofline names the preset's peak and the kernel; the pipes chart each core's pipes")

    # zip, range and samples: the points their definitions give.
    mixed = write(os.path.join(d, "mixed.yaml"), """scenario: l2-reuse.yaml
zip:
  platform.ring.clock_mhz: [1000, 2000]
  platform.dram.scheduler: [fcfs, frfcfs]
grid:
  platform.l2.hit_cycles: {from: 10, to: 30, step: 10}
sample:
  method: lhs
  points: 8
  seed: 5
  ranges:
    platform.l2.clock_mhz: {min: 500, max: 1500}
""")
    r1, r2 = dvp("sweep", mixed, "--emit", "parallel", "--out", os.path.join(d, "m1")), \
        dvp("sweep", mixed, "--emit", "parallel", "--out", os.path.join(d, "m2"))
    s1 = json.load(open(os.path.join(d, "m1", "study.json"))) if r1.returncode == 0 else {}
    s2 = json.load(open(os.path.join(d, "m2", "study.json"))) if r2.returncode == 0 else {}
    pts = s1.get("points", [])
    check(len(pts) == 3 * 2 * 8 and s1.get("keys", [])[:3] == ["platform.l2.hit_cycles", "platform.ring.clock_mhz",
                                                               "platform.dram.scheduler"],
          f"grid x zip x sample: {len(pts)} points (want 48), keys {s1.get('keys')} {r1.stderr[-300:]}")
    if len(pts) == 48:
        check([p["platform.l2.hit_cycles"] for p in pts[::16]] == ["10", "20", "30"] and
              [(p["platform.ring.clock_mhz"], p["platform.dram.scheduler"]) for p in pts[:16:8]] ==
              [("1000", "fcfs"), ("2000", "frfcfs")], "the range 10..30 step 10, and the zip's pairs")
        u = sorted(float(p["platform.l2.clock_mhz"]) for p in pts[:8])
        check(all(500 + 125 * i <= v < 500 + 125 * (i + 1) for i, v in enumerate(u)),
              f"Latin hypercube: one sample in each eighth of 500..1500: {[round(v, 1) for v in u]}")
        check(s1["points"] == s2["points"], "the same seed gives the same samples")

    # A failing point is recorded and the study goes on.
    bad = write(os.path.join(d, "bad-point.yaml"), """scenario: l2-reuse.yaml
timing_only: true
grid:
  run.max_sim_ns: [1000, 100000000]
""")
    out = os.path.join(d, "bad-out")
    r = dvp("sweep", bad, "--out", out)
    t = rows(out) if os.path.exists(os.path.join(out, "results.csv")) else []
    check(r.returncode == 1 and len(t) == 2 and t[0]["status"] == "failed" and t[0]["exit_code"] == "3" and
          "simulated-time limit" in t[0]["error"] and t[1]["status"] == "ok",
          f"a point that fails is recorded with its error and the study goes on: exit {r.returncode}, {t}")

    # A point past its wall-clock limit (time_limit_s: run.max_wall_seconds) is recorded so: 20
    # million reads take tens of host seconds, the limit stops them at 0.5.
    write(os.path.join(d, "heavy.yaml"), SCENARIO.replace("count: 18000", "count: 2500000"))
    lim = write(os.path.join(d, "limit.yaml"), """scenario: heavy.yaml
timing_only: true
time_limit_s: 0.5
grid:
  platform.l2.size_kib: [4096]
""")
    r = dvp("sweep", lim, "--out", os.path.join(d, "limit-out"), "--quiet")
    t = rows(os.path.join(d, "limit-out")) if os.path.exists(os.path.join(d, "limit-out", "results.csv")) else []
    check(r.returncode == 1 and len(t) == 1 and t[0]["status"] == "failed" and
          "wall-clock limit run.max_wall_seconds (0.5 s) reached" in t[0]["error"],
          f"a point past time_limit_s is recorded with the limit named: exit {r.returncode}, {t} {r.stderr[-300:]}")

    # Stopped by SIGINT after two points finished; --resume runs only the others.
    slow = write(os.path.join(d, "slow.yaml"), """scenario: l2-reuse.yaml
timing_only: true
grid:
  platform.l2.size_kib: [1024, 2048, 4096, 8192, 16384, 32768]
metrics: [summary.l2_hit_rate]
""")
    out = os.path.join(d, "slow-out")
    # Ctrl-C at a terminal: SIGINT to the foreground process group (a session of its own here).
    p = subprocess.Popen([DVP, "sweep", slow, "--out", out, "--jobs", "2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    t0 = time.monotonic()
    finished = lambda: [i for i in range(6) if os.path.exists(os.path.join(out, "points", f"{i:04d}", "point.json"))]
    while time.monotonic() - t0 < 300 and len(finished()) < 2:  # two points done, whichever
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    done = sorted(i for i in range(6) if os.path.exists(os.path.join(out, "points", f"{i:04d}", "point.json")))
    check(p.returncode in (130, -signal.SIGINT) and 2 <= len(done) < 6 and "--resume" in err and
          " failed" not in err.split("stopped")[0].replace("0 failed", ""),
          f"a study stopped by Ctrl-C: exit {p.returncode}, finished {done}, {err[-300:]}")
    marks = {i: os.path.getmtime(os.path.join(out, "points", f"{i:04d}", "stats.json")) for i in done}
    r = dvp("sweep", slow, "--out", out, "--resume")
    t = rows(out) if os.path.exists(os.path.join(out, "results.csv")) else []
    check(r.returncode == 0 and len(t) == 6 and all(x["status"] == "ok" for x in t) and
          all(os.path.getmtime(os.path.join(out, "points", f"{i:04d}", "stats.json")) == m for i, m in marks.items())
          and f"{len(done)} from before" in r.stderr,
          f"--resume runs only the points not finished ({len(done)} kept): exit {r.returncode} {r.stderr[-300:]}")

    # A study whose fixed keys changed: --resume runs its points again (the same values, another run).
    with open(slow) as f:
        text = f.read()
    write(slow, text.replace("timing_only: true\n", "timing_only: true\nset: [run.max_sim_ns=50000000]\n"))
    r = dvp("sweep", slow, "--out", out, "--resume", "--quiet")
    check(r.returncode == 0 and all(os.path.getmtime(os.path.join(out, "points", f"{i:04d}", "stats.json")) != m
                                    for i, m in marks.items()),
          f"--resume after the study's set: changed runs every point again: exit {r.returncode}")

    # GNU parallel runs the emitted commands; the collected table equals the local run's.
    out = os.path.join(d, "par-out")
    r = dvp("sweep", grid, "--emit", "parallel", "--out", out)
    if check(r.returncode == 0 and "parallel" in r.stdout, f"--emit parallel: {r.stdout[-200:]} {r.stderr[-200:]}"):
        with open(os.path.join(out, "commands.txt")) as cmds:
            pr = subprocess.run(["parallel", "--will-cite", "-j", "2"], stdin=cmds, capture_output=True, text=True)
        c = dvp("collect", out)
        local = [{k: v for k, v in x.items() if k.startswith(("summary.", "platform.", "status"))}
                 for x in rows(os.path.join(d, "grid-out"))]
        par = [{k: v for k, v in x.items() if k.startswith(("summary.", "platform.", "status"))} for x in rows(out)]
        check(pr.returncode == 0 and c.returncode == 0 and par == local,
              f"GNU parallel's points, collected, equal the local sweep's: parallel {pr.returncode} "
              f"{pr.stderr[-200:]}, collect {c.returncode}")
        # The same folder named relatively (the commands named it absolutely): --resume keeps
        # every point the commands ran.
        marks = {i: os.path.getmtime(os.path.join(out, "points", f"{i:04d}", "stats.json")) for i in range(4)}
        r = dvp("sweep", grid, "--out", os.path.relpath(out, d), "--resume", cwd=d)
        check(r.returncode == 0 and "4 from before" in r.stderr and
              all(os.path.getmtime(os.path.join(out, "points", f"{i:04d}", "stats.json")) == m
                  for i, m in marks.items()),
              f"--resume with the folder named another way runs nothing again: exit {r.returncode} {r.stderr[-300:]}")

    # Slurm: the scripts parse, and the array body runs for two task ids here.
    out = os.path.join(d, "slurm-out")
    r = dvp("sweep", grid, "--emit", "slurm", "--out", out)
    sb, cb = os.path.join(out, "sweep.sbatch"), os.path.join(out, "collect.sbatch")
    if check(r.returncode == 0 and os.path.exists(sb) and os.path.exists(cb), f"--emit slurm: {r.stderr[-200:]}"):
        text = open(sb).read()
        check("#SBATCH --array=0-3" in text, "the job array spans the 4 points")
        check(all(subprocess.run(["bash", "-n", f]).returncode == 0 for f in (sb, cb)), "bash -n on both scripts")
        ok = all(subprocess.run(["bash", sb], env=dict(os.environ, SLURM_ARRAY_TASK_ID=str(i)),
                                capture_output=True).returncode == 0 for i in (0, 1))
        pj = [json.load(open(os.path.join(out, "points", f"{i:04d}", "point.json"))) for i in (0, 1)]
        check(ok and [x["status"] for x in pj] == ["ok", "ok"] and pj[1]["params"]["platform.dram.scheduler"] ==
              "frfcfs", "the array body runs points 0 and 1")

    # dvp diff: nothing against itself; half the L2: its hit rate and the DRAM bytes changed.
    a, b = os.path.join(d, "grid-out", "points", "0003"), os.path.join(d, "grid-out", "points", "0001")
    r = dvp("diff", a, a)
    check(r.returncode == 0 and "0 summary and 0 other keys changed" in r.stdout, f"diff of a run with itself: "
          f"{r.stdout[:200]}")
    half = os.path.join(d, "half-l2")
    dvp("run", os.path.join(d, "l2-reuse.yaml"), "--timing-only", "--quiet", "--no-trace", "--out", half, "--set",
        "platform.l2.size_kib=4096", "--set", "platform.dram.scheduler=frfcfs")
    r = dvp("diff", a, half)
    summary = r.stdout.split("\nstatistics\n")[0]
    keys = re.findall(r"^  [-+~] (\S+)", summary, re.M)
    check(r.returncode == 0 and "summary.l2_hit_rate" in keys and "summary.dram_bytes_read" in keys and
          "soc.l2.hn0.misses" in r.stdout, f"diff against half the L2 names its hit rate and DRAM bytes: {keys[:8]}")
    r = dvp("diff", a, half, "--max-increase", "summary.dram_bytes_read=5")
    check(r.returncode == 1 and "REGRESSION summary.dram_bytes_read" in r.stdout,
          f"a gate on DRAM bytes fails the comparison: exit {r.returncode} {r.stdout[-200:]}")

    # Sensitivity: the base, then each parameter / and x 2.
    sens = write(os.path.join(d, "sens.yaml"), """scenario: l2-reuse.yaml
timing_only: true
sensitivity:
  factor: 2
  parameters: [platform.ring.clock_mhz, platform.l2.size_kib]
  metric: summary.dram_bytes_read
""")
    r = dvp("sweep", sens, "--sensitivity", "--jobs", "2", "--out", os.path.join(d, "sens-out"), "--quiet")
    lines = [x for x in r.stdout.splitlines() if x.startswith("  platform.")]
    swing = float(lines[0].split("swing")[1].strip().rstrip("%")) if lines else 0
    st = json.load(open(os.path.join(d, "sens-out", "points", "0003", "stats.json")))["summary"]  # L2 / 2
    base = json.load(open(os.path.join(d, "sens-out", "points", "0000", "stats.json")))["summary"]
    want = 100 * abs(base["dram_bytes_read"] - st["dram_bytes_read"]) / base["dram_bytes_read"]
    check(r.returncode == 0 and len(lines) == 2 and lines[0].split()[0] == "platform.l2.size_kib" and
          "4096" in lines[0] and "16384" in lines[0] and abs(swing - want) < 0.01 and want > 10,
          f"--sensitivity: the L2 size moves DRAM bytes most (swing {swing}%, want {want:.2f}%): "
          f"{r.stdout[-400:]} {r.stderr[-200:]}")
    tornado = os.path.join(d, "sens-out", "plots", "tornado.svg")
    check(os.path.exists(tornado) and "platform.l2.size_kib (4096 .. 16384)" in open(tornado).read(),
          "the tornado plot names each parameter and its range")
    r = dvp("sweep", sens, "--sensitivity", "--emit", "parallel", "--out", os.path.join(d, "sens-emit"))
    cmds = open(os.path.join(d, "sens-emit", "commands.txt")).read().splitlines() if r.returncode == 0 else []
    p3 = subprocess.run(cmds[3], shell=True, capture_output=True, text=True) if len(cmds) == 5 else None
    pj = json.load(open(os.path.join(d, "sens-emit", "points", "0003", "point.json"))) if p3 else {}
    check(p3 is not None and p3.returncode == 0 and pj.get("params", {}).get("platform.l2.size_kib") == "4096",
          f"--sensitivity --emit: 5 commands, the 4th runs the L2 at half: {cmds[:1]} {pj}")

    # What users get wrong: exit 2, the study file and line named.
    for text, pattern, what in (
            ("scenario: l2-reuse.yaml\ngird:\n  platform.l2.size_kib: [1]\n", r"bad\.yaml:2.*unknown key 'gird'",
             "an unknown key"),
            ("scenario: l2-reuse.yaml\ngrid:\n  platform.l2.size_kb: [1024]\n",
             r"bad\.yaml:3.*platform\.l2\.size_kb.*does not load", "a parameter the platform does not have"),
            ("scenario: l2-reuse.yaml\ngrid:\n  platform.l2.size_kib: [1024, 0]\n",
             r"bad\.yaml:3.*size_kib=0", "a value out of range"),
            ("scenario: l2-reuse.yaml\nzip:\n  platform.l2.size_kib: [1024, 2048]\n  platform.ring.clock_mhz: [1000]\n",
             r"bad\.yaml:4.*1 values; the zip's first list has 2", "zip lists of different lengths"),
            ("scenario: nosuch.yaml\n", r"bad\.yaml:1.*no such file", "a scenario that does not exist")):
        f = write(os.path.join(d, "bad.yaml"), text)
        r = dvp("sweep", f, "--out", os.path.join(d, "bad-study"))
        check(r.returncode == 2 and re.search(pattern, r.stderr), f"{what}: exit {r.returncode}, {r.stderr.strip()}")

if failures:
    print(f"{len(failures)} failed:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("all study checks passed")
