#!/bin/sh
# SPDX-License-Identifier: MIT
# libavcodec and libavformat are loaded by the first video command, not when dvp starts
# (models/dvpp/libav_loader.cpp): a run without video does not load them, a VDEC run does (so
# the check below sees a loaded library when there is one).
# usage: lazy-libav.sh DVP SCENARIOS_DIR OUT_DIR
set -e
dvp=$1 scenarios=$2 out=$3
mkdir -p "$out"
unset LD_DEBUG_OUTPUT  # the loader's log goes to stderr, read below
loaded() {  # the shared objects the dynamic loader opened for one run, in its own words
  LD_DEBUG=files "$dvp" run "$scenarios/$1" --quiet --no-trace --out "$out/$2" 2> "$out/$2.log" > /dev/null
}
loaded quickstart.yaml quickstart
if grep -q "file=libavcodec" "$out/quickstart.log"; then
  echo "quickstart.yaml: libavcodec was loaded by a run that decodes no video"
  exit 1
fi
loaded dvpp/vdec-720p.yaml vdec
for lib in libavcodec libavformat; do
  if ! grep -q "file=$lib" "$out/vdec.log"; then
    echo "dvpp/vdec-720p.yaml: $lib not loaded by a run that decodes and checks H.265"
    exit 1
  fi
done
echo "ok: libavcodec and libavformat loaded by the VDEC run only"
