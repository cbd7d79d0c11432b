#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a trace.json the way Perfetto reads it: valid JSON, and on every track (pid, tid)
the complete ('X') slices nest -- a slice that starts inside another ends inside it too.
Perfetto drops or misdraws slices that partly overlap.   check-trace.py TRACE.json"""
import json
import sys


def ps(us):
    # Timestamps are microseconds with picosecond resolution; compare whole picoseconds so
    # that touching slices (one ends where the next starts) are not taken for overlapping.
    return round(us * 1e6)


def check_track(track, slices):
    # Sorted by start, the longer first: a parent comes before the slices it holds.
    slices.sort(key=lambda s: (s[0], -s[1]))
    open_ends = []
    for start, end, name in slices:
        while open_ends and open_ends[-1][0] <= start:
            open_ends.pop()
        if open_ends and end > open_ends[-1][0]:
            return "track %s: '%s' [%d, %d] ps overlaps '%s' ending at %d ps without nesting" % (
                track, name, start, end, open_ends[-1][1], open_ends[-1][0])
        open_ends.append((end, name))
    return None


def main(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    tracks = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            start = ps(e["ts"])
            tracks.setdefault((e["pid"], e["tid"]), []).append((start, start + ps(e["dur"]), e["name"]))
    count = sum(len(s) for s in tracks.values())
    for track, slices in sorted(tracks.items()):
        err = check_track(track, slices)
        if err:
            print("%s: %s" % (path, err))
            return 1
    print("%s: %d slices on %d tracks nest properly" % (path, count, len(tracks)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
