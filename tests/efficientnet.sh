#!/bin/sh
# SPDX-License-Identifier: MIT
# efficientnet.sh PYTHON DVP MAKE_MODELS OUT: writes EfficientNet-B0 with make-models.py (SiLU,
# depthwise 3 x 3 and 5 x 5 convs, squeeze-and-excitation gates, channels no whole groups of 16)
# and runs it from its ONNX file through the firmware on ascend310, then its compiled scenario on
# ascend910; dvp's own checks decide (the firmware's exit code, the logits against the host f32
# reference). Each SiLU is one silu layer and each gate one channel_mul (no broadcast Mul left).
set -eu
py=$1; dvp=$2; make=$3; out=$4
rm -rf "$out"; mkdir -p "$out"
"$py" "$make" "$out" efficientnet_b0 >/dev/null
"$dvp" run "$out/efficientnet_b0.onnx" --out "$out/ascend310" --no-trace --quiet
grep -q "kernel output: 1000 elements within" "$out/ascend310/summary.txt"
"$py" - "$out/ascend310/stats.json" <<'PY'
import json, sys
layers = json.load(open(sys.argv[1]))["summary"]["network"]["layers"]
ops = [x["ops"] for x in layers]
gates = [x for x in layers if x["kernel"].endswith("_se_scale")]
# 33 SiLUs after convs and 16 in the SE reductions, each one layer; the 16 gates (channel_mul),
# the only Mul layers.
assert ops.count("Sigmoid+Mul") == 49 and len(gates) == 16, (ops.count("Sigmoid+Mul"), len(gates))
assert ops.count("Mul") == 16 and all(g["ops"] == "Mul" for g in gates), "a Mul left unfused"
PY
"$dvp" run "$out/ascend310/compiled/model.yaml" --preset ascend910 --out "$out/ascend910" --no-trace --quiet
grep -q "kernel output: 1000 elements within" "$out/ascend910/summary.txt"
echo "EfficientNet-B0 from ONNX: ok on ascend310 and ascend910"
