#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a trace.json the way Perfetto reads it: valid JSON, and on every track (pid, tid)
the complete ('X') slices nest -- a slice that starts inside another ends inside it too; the
counter ('C') tracks step forward in time through sane values.
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
    err = check_counters([e for e in trace["traceEvents"] if e.get("ph") == "C"])
    if err:
        print("%s: %s" % (path, err))
        return 1
    print("%s: %d slices on %d tracks nest properly" % (path, count, len(tracks)))
    return 0


def check_counters(events):
    """Counter tracks: each step later than the one before on its track, its value a number that
    can be: not negative, a percentage at most 100."""
    last = {}
    for e in events:
        track, v = (e["pid"], e["name"]), e["args"]["value"]
        if not isinstance(v, (int, float)) or v != v or v < 0 or ("%" in e["name"] and v > 100 + 1e-9):
            return "counter '%s' at %s us: value %r" % (e["name"], e["ts"], v)
        if track in last and e["ts"] <= last[track]:
            return "counter '%s' steps back in time at %s us" % (e["name"], e["ts"])
        last[track] = e["ts"]
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
