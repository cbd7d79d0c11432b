#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""signal-stop.py DVP SCENARIO OUT SIGNAL: a run that SIGNAL (INT or TERM) stops while it
simulates writes its outputs, names the stop in summary.txt and on stderr, and then ends
killed by that signal, as the shell's convention wants (its parent sees the signal, and a
shell reports exit 128 + signal). The signal is sent once the firmware has printed (the
simulation is under way)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

dvp, scenario, out, name = sys.argv[1:5]
sig = getattr(signal, "SIG" + name)
shutil.rmtree(out, ignore_errors=True)
err = open(out + ".err", "w")
p = subprocess.Popen([dvp, "run", scenario, "--set", "run.max_sim_ns=1e13", "--quiet", "--out", out], stderr=err)
uart = os.path.join(out, "uart-cpu0.txt")
deadline = time.monotonic() + 120
while not (os.path.exists(uart) and os.path.getsize(uart) > 0):
    if time.monotonic() > deadline or p.poll() is not None:
        p.kill()
        sys.exit("the firmware never printed")
    time.sleep(0.1)
p.send_signal(sig)
rc = p.wait()
err.close()
stderr = open(out + ".err").read()
if rc != -sig:
    sys.exit(f"ended with {rc}, expected to be killed by SIG{name} ({-sig}); stderr:\n{stderr}")
summary = open(os.path.join(out, "summary.txt")).read()
if f"result    STOPPED: stopped by SIG{name} at simulated" not in summary:
    sys.exit("summary.txt:\n" + summary)
if f"stopped by SIG{name}" not in stderr:
    sys.exit("stderr:\n" + stderr)
assert json.load(open(os.path.join(out, "stats.json")))["summary"]["simulated_ns"] > 0
json.load(open(os.path.join(out, "trace.json")))
print(f"ok: SIG{name} -> outputs written, the stop named, killed by SIG{name}")
