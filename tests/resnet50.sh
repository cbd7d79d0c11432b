#!/bin/sh
# SPDX-License-Identifier: MIT
# resnet50.sh PYTHON DVP MAKE_MODELS OUT: writes ResNet-50 v1.5 with make-models.py and runs it
# from its ONNX file through the firmware on ascend310, then its compiled scenario on ascend910
# (the same model, another SoC); dvp's own checks decide: the firmware's exit code and the
# logits against the host f32 reference.
set -eu
py=$1; dvp=$2; make=$3; out=$4
rm -rf "$out"; mkdir -p "$out"
"$py" "$make" "$out" resnet50 >/dev/null
"$dvp" run "$out/resnet50.onnx" --out "$out/ascend310" --no-trace --quiet
grep -q "kernel output: 1000 elements within" "$out/ascend310/summary.txt"
"$dvp" run "$out/ascend310/compiled/model.yaml" --preset ascend910 --out "$out/ascend910" --no-trace --quiet
grep -q "kernel output: 1000 elements within" "$out/ascend910/summary.txt"
echo "ResNet-50 from ONNX: ok on ascend310 and ascend910"
