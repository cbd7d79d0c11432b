#!/bin/sh
# SPDX-License-Identifier: MIT
# sdk-project.sh DVP CMAKE BUILD SOURCE OUT HOST_MINIBENCH: the firmware SDK builds and runs an
# outside project (tests/sdk-project). It installs the SDK from BUILD into OUT/sdk, configures
# and builds the project against the installed SDK and against the source tree (same image),
# runs the image by its absolute path, and compares the checksums it prints with the host
# build of the same C (HOST_MINIBENCH).
set -u
dvp=$1; cmake=$2; build=$3; src=$4; out=$5; host=$6
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$out"; mkdir -p "$out"
"$cmake" --install "$build" --prefix "$out/sdk" --component firmware-sdk > "$out/install.log" ||
  fail "cmake --install (see $out/install.log)"
for how in installed source; do
  if [ $how = installed ]; then where="-DCMAKE_PREFIX_PATH=$out/sdk"; else where="-Ddavinci-vp_DIR=$src/cmake"; fi
  "$cmake" -S "$src/tests/sdk-project" -B "$out/$how" "$where" > "$out/$how.log" 2>&1 &&
    "$cmake" --build "$out/$how" >> "$out/$how.log" 2>&1 || { cat "$out/$how.log"; fail "building against the $how SDK"; }
done
cmp "$out/installed/minibench.bin" "$out/source/minibench.bin" || fail "the installed and the source SDK build different images"
# The image by its absolute path, in the scenario.
cat > "$out/minibench.yaml" <<YAML
name: minibench
description: an outside firmware built with the SDK
platform: {preset: ascend310}
firmware: {image: $out/installed/minibench.bin}
run: {trace: false}
YAML
"$dvp" run "$out/minibench.yaml" --quiet --out "$out/run" || fail "dvp run exited $?"
"$host" | grep checksum > "$out/expected.txt" || fail "the host build printed no checksum"
grep checksum "$out/run/uart-cpu0.txt" > "$out/got.txt" || fail "the firmware printed no checksum"
diff -u "$out/expected.txt" "$out/got.txt" || fail "the firmware's checksum (+) differs from the host's (-)"
cat "$out/run/uart-cpu0.txt"
echo "ok: the outside project's firmware printed the host's checksum"
