#!/bin/sh
# SPDX-License-Identifier: MIT
# layers-generated.sh PYTHON SOURCE: scenarios/layers/ holds what its generator writes (run in a
# scratch copy, every file compared byte for byte).
set -eu
py=$1; src=$2/scenarios/layers
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cp "$src/generate.py" "$d/"
"$py" "$d/generate.py"
for f in "$src"/*.yaml "$src/fc-input.npy"; do
  cmp "$f" "$d/$(basename "$f")" || { echo "$f differs from what generate.py writes: run it"; exit 1; }
done
for f in "$d"/*.yaml; do
  [ -f "$src/$(basename "$f")" ] || { echo "generate.py writes $(basename "$f"), which is not in $src"; exit 1; }
done
echo "ok: scenarios/layers is what generate.py writes"
