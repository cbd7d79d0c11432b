# SPDX-License-Identifier: MIT
"""The shipped scenarios that the whole-project scripts run (stats-snapshot, fidelity-error): every
scenarios/**/*.yaml but the presets, the studies (their points are runs of other scenarios) and the
host benchmarks (bench-*.yaml)."""
import glob
import os

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def scenarios():
    """(path, name) of each in a fixed order; name is its path under scenarios/ without .yaml."""
    base = os.path.join(root, "scenarios")
    for path in sorted(glob.glob(os.path.join(base, "**", "*.yaml"), recursive=True)):
        rel = os.path.relpath(path, base)
        if rel.startswith(("presets", "studies")) or os.path.basename(rel).startswith("bench-"):
            continue
        yield path, rel[:-5]
