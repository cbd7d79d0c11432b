#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the networks dvp compiles, as ONNX files (python3-onnx's helper; seeded random weights,
# so nothing is downloaded):
#   resnet50.onnx  ResNet-50 v1.5, the exact layer structure of torchvision's resnet50 (the
#                  stride on each stage's first 3 x 3; the shortcut's 1 x 1 conv and batch norm
#                  after the block's third conv, as torch.onnx.export orders them), input
#                  1 x 3 x 224 x 224, output 1 x 1000 logits.
# Weights: He-normal convolutions (std sqrt(2 / fan-in)), batch norms with running statistics
# near 0 and 1, each block's last scale small (0.2 to 0.4) so activations stay bounded through
# 16 residual blocks, as a trained network's are.
#
# Usage: make-models.py OUT_DIR [--seed N]     (needs python3-onnx and python3-numpy)
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Net:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def weight(self, name, array):
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv(self, name, x, cin, cout, k, stride=1, pad=0):
        w = self.rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (cout, cin, k, k))
        self.nodes.append(helper.make_node("Conv", [x, self.weight(name + ".weight", w)], [name], name=name,
                                           kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4))
        return name

    def bn(self, name, x, c, gamma=(0.5, 1.5)):
        r = self.rng
        ins = [x] + [self.weight(f"{name}.{p}", v) for p, v in
                     (("weight", r.uniform(*gamma, c)), ("bias", r.uniform(-0.1, 0.1, c)),
                      ("running_mean", r.uniform(-0.1, 0.1, c)), ("running_var", r.uniform(0.5, 1.5, c)))]
        self.nodes.append(helper.make_node("BatchNormalization", ins, [name], name=name, epsilon=1e-5))
        return name

    def op(self, op, name, ins, **attrs):
        self.nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name


def bottleneck(net, x, name, cin, width, stride, down):
    out = net.op("Relu", name + ".relu1", [net.bn(name + ".bn1", net.conv(name + ".conv1", x, cin, width, 1), width)])
    out = net.op("Relu", name + ".relu2",
                 [net.bn(name + ".bn2", net.conv(name + ".conv2", out, width, width, 3, stride, 1), width)])
    out = net.bn(name + ".bn3", net.conv(name + ".conv3", out, width, width * 4, 1), width * 4, gamma=(0.2, 0.4))
    if down:
        x = net.bn(name + ".downsample.1", net.conv(name + ".downsample.0", x, cin, width * 4, 1, stride), width * 4)
    return net.op("Relu", name + ".relu3", [net.op("Add", name + ".add", [out, x])])


def resnet50(seed):
    net = Net(seed)
    x = net.op("Relu", "relu", [net.bn("bn1", net.conv("conv1", "input", 3, 64, 7, 2, 3), 64)])
    x = net.op("MaxPool", "maxpool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (width, blocks, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)), 1):
        for b in range(blocks):
            x = bottleneck(net, x, f"layer{stage}.{b}", cin, width, stride if b == 0 else 1, b == 0)
            cin = width * 4
    x = net.op("Flatten", "flatten", [net.op("GlobalAveragePool", "avgpool", [x])], axis=1)
    fc_w = net.weight("fc.weight", net.rng.normal(0, 1 / np.sqrt(2048), (1000, 2048)))
    fc_b = net.weight("fc.bias", net.rng.uniform(-0.1, 0.1, 1000))
    net.op("Gemm", "output", [x, fc_w, fc_b], transB=1)
    graph = helper.make_graph(net.nodes, "resnet50",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1000])], net.inits)
    return helper.make_model(graph, producer_name="davinci-vp make-models.py",
                             opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: make-models.py OUT_DIR [--seed N]")
    out = sys.argv[1]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 50
    os.makedirs(out, exist_ok=True)
    model = resnet50(seed)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "resnet50.onnx"))
    print("wrote", os.path.join(out, "resnet50.onnx"))


if __name__ == "__main__":
    main()
