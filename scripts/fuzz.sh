#!/bin/sh
# SPDX-License-Identifier: MIT
# Fuzz smoke run: each libFuzzer target (fuzz/) for a fixed number of inputs (about 30 s each on
# a 2-core machine; SCALE multiplies them), from a fixed random seed, so the same tree gives the
# same run everywhere: CI cannot fail on a find the developer's run did not make. Seeds come
# from the shipped files: scenarios and presets, DV assembly, kernel images assembled from it, traffic traces,
# the .npy test files, the DVPP test media,
# and every input that once failed (fuzz/regressions/). Needs a build with -DDVP_FUZZ=ON
# (scripts/test-sanitize.sh makes one in build-asan/). A crash, a sanitizer report, a leak, a
# timeout (10 s for one input) or an out-of-memory (2 GiB) fails the run; the input is kept in
# build-asan/fuzz-artifacts/ (add it to fuzz/regressions/<target>/ with the fix).
#   sh scripts/fuzz.sh [SCALE] [BUILD_DIR]     (fuzz longer: SCALE 100, or see docs/testing.md)
set -eu
cd "$(dirname "$0")/.."
scale=${1:-1}
build=${2:-build-asan}
bin=$build/bin
work=$build/fuzz-work
art=$build/fuzz-artifacts
rm -rf "$work"
mkdir -p "$art"
seeds() {  # seeds TARGET DIR...: fills $work/TARGET-seeds from the files under each DIR
  t=$1; shift
  mkdir -p "$work/$t-seeds" "$work/$t-corpus"
  for f in "$@"; do cp "$f" "$work/$t-seeds/$(echo "$f" | tr / _)" 2>/dev/null || true; done  # unique names
  cp fuzz/regressions/"$t"/* "$work/$t-seeds/" 2>/dev/null || true
}
seeds scenario $(find scenarios tests/bad -name '*.yaml')
seeds assembler $(find firmware tests -name '*.s')
seeds trace scenarios/memory/traces/* tests/bad/*.trace tests/bad/bad-trace.txt
seeds npy tests/data/npy/*
seeds media $(ls scenarios/dvpp/media/* | grep -v '\.yuv$')
# ONNX: the operator suite's models of the ops the compiler lowers (libonnx-testdata), and the
# compiler's own refusals.
seeds onnx $(ls -d /usr/share/libonnx-testdata/data/node/test_*/ 2>/dev/null |
  grep -E '/test_(conv|gemm|relu|maxpool_2d|averagepool_2d|softmax|add|concat|batchnorm|matmul|globalaveragepool|transpose|layer_normalization_2d|flatten|reshape|sigmoid|clip|mul|sub|div)' |
  sed 's|$|model.onnx|') tests/bad/*.onnx
mkdir -p "$work/image-seeds"
for s in $(find firmware tests -name '*.s'); do
  "$bin/dvas" "$s" -o "$work/image-seeds/$(basename "$s" .s).bin" 2>/dev/null || true
done
seeds image
status=0
runs_scenario=1500; runs_assembler=100000; runs_image=200000; runs_trace=50000; runs_npy=50000; runs_media=6000
runs_onnx=20000
for t in scenario assembler image trace npy media onnx; do
  eval runs=\$runs_$t
  runs=$((runs * scale))
  echo "fuzz: $t, $runs inputs"
  if ! "$bin/fuzz_$t" -seed=1 -runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$art/$t-" "$work/$t-corpus" "$work/$t-seeds" > "$work/$t.log" 2>&1; then
    echo "fuzz: $t FAILED; the end of its log ($work/$t.log):"
    tail -40 "$work/$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$work/$t.log" | tail -1
  fi
done
exit $status
