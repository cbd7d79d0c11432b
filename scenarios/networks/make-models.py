#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the networks dvp compiles, as ONNX files (python3-onnx's helper; seeded random weights,
# so nothing is downloaded):
#   resnet50.onnx  ResNet-50 v1.5, the exact layer structure of torchvision's resnet50 (the
#                  stride on each stage's first 3 x 3; the shortcut's 1 x 1 conv and batch norm
#                  after the block's third conv, as torch.onnx.export orders them), input
#                  1 x 3 x 224 x 224, output 1 x 1000 logits.
#   transformer.onnx  one encoder block as torch.onnx.export writes nn.TransformerEncoderLayer
#                  (post-norm, ReLU; opset 17): 128 tokens of 256, 4 heads of 64, a 1024-wide
#                  feed-forward. Q, K and V MatMuls with a bias Add; Reshape and Transpose to
#                  heads ((0, 2, 1, 3); the keys (0, 2, 3, 1)); a batched MatMul, Div by sqrt(64),
#                  Softmax, a batched MatMul; back to tokens; the output projection; Add of the
#                  block's input; LayerNormalization; MatMul, Add, Relu, MatMul, Add; Add;
#                  LayerNormalization. Input 1 x 128 x 256, output 1 x 128 x 256.
#   efficientnet_b0.onnx  EfficientNet-B0, the layer structure of torchvision's efficientnet_b0
#                  as torch.onnx.export writes it (opset 13): a 3 x 3 stem of 32, 16 MBConv blocks
#                  (a 1 x 1 expansion by 6 but in the first, a depthwise 3 x 3 or 5 x 5, squeeze-
#                  and-excitation to a quarter of the block's input channels, a 1 x 1 projection,
#                  the residual Add where the shape allows), SiLU as x times Sigmoid(x), a 1 x 1
#                  head of 1280, global pooling, a classifier of 1000. Channels 24, 40 and their SE
#                  widths (4, 6, 10, 20, ...) are no whole groups of 16. Input 1 x 3 x 224 x 224.
#   gpt2.onnx      a GPT-2 language model as torch.onnx.export writes Hugging Face's GPT2LMHeadModel
#                  (opset 17, no past key values): 2 blocks of 256, 4 heads of 64, a vocabulary of
#                  1024, 64 tokens. Input input_ids (int64, 1 x 64). The token embedding (Gather of
#                  wte) plus the position embedding (Gather of wpe by an arange); each block: ln_1
#                  (LayerNormalization), c_attn as Conv1D is exported (Reshape to 64 x 256, Gemm,
#                  Reshape back), Split into q, k and v, each to heads (Reshape, Transpose; k's
#                  transposed again for q k^T), MatMul, Div by sqrt(64), the causal mask (the bool
#                  buffer sliced to the scores' size by ends a Shape of k gives, Where it is false
#                  finfo(float32).min), Softmax, MatMul, back to tokens, c_proj, the residual Add;
#                  ln_2, the MLP (c_fc, gelu_new as transformers writes it: x halved, Pow 3, Mul
#                  0.044715, Add, Mul sqrt(2 / pi), Tanh, Add 1, Mul; c_proj), the residual Add;
#                  ln_f, and the logits by wte transposed (tied weights). Output 1 x 64 x 1024.
# Weights: He-normal convolutions (std sqrt(2 / fan-in)), batch norms with running statistics
# near 0 and 1, each block's last scale small (0.2 to 0.4) so activations stay bounded through
# 16 residual blocks, as a trained network's are. The transformer's projections are normal with
# std 1 / sqrt(fan-in) (activations of unit scale), biases small, LayerNorm's gamma near 1.
# GPT-2's embeddings are normal with std 0.5 (wte) and 0.1 (wpe), its projections as the
# transformer's, each c_proj's scaled by 1 / sqrt(2 x blocks) as GPT-2 initialises them.
#
# Usage: make-models.py OUT_DIR [--seed N] [MODEL...]   (MODEL: resnet50, transformer,
# efficientnet_b0, gpt2; default all; needs python3-onnx and python3-numpy)
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

    def model(self, name, input_shape, output_shape, opset, ir_version, input_type=TensorProto.FLOAT):
        graph = helper.make_graph(self.nodes, name,
                                  [helper.make_tensor_value_info("input", input_type, input_shape)],
                                  [helper.make_tensor_value_info("output", TensorProto.FLOAT, output_shape)],
                                  self.inits)
        return helper.make_model(graph, producer_name="davinci-vp make-models.py",
                                 opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


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
    return net.model("resnet50", [1, 3, 224, 224], [1, 1000], 13, 7)


def efficientnet_b0(seed):
    net = Net(seed)
    r = net.rng

    def silu(name, x):
        return net.op("Mul", name + ".silu", [x, net.op("Sigmoid", name + ".sigmoid", [x])])

    def conv_bn(name, x, cin, cout, k, stride=1, groups=1, act=True, gamma=(0.5, 1.5)):
        w = net.weight(name + ".weight", r.normal(0, np.sqrt(2.0 / (cin // groups * k * k)), (cout, cin // groups, k, k)))
        y = net.op("Conv", name, [x, w], kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4, group=groups)
        y = net.bn(name + ".bn", y, cout, gamma)
        return silu(name, y) if act else y

    def se(name, x, c, squeeze):
        s = net.op("GlobalAveragePool", name + ".avgpool", [x])
        w1 = net.weight(name + ".fc1.weight", r.normal(0, np.sqrt(2.0 / c), (squeeze, c, 1, 1)))
        b1 = net.weight(name + ".fc1.bias", r.uniform(-0.1, 0.1, squeeze))
        s = silu(name + ".fc1", net.op("Conv", name + ".fc1", [s, w1, b1]))
        w2 = net.weight(name + ".fc2.weight", r.normal(0, np.sqrt(1.0 / squeeze), (c, squeeze, 1, 1)))
        b2 = net.weight(name + ".fc2.bias", r.uniform(-0.1, 0.1, c))
        gate = net.op("Sigmoid", name + ".gate", [net.op("Conv", name + ".fc2", [s, w2, b2])])
        return net.op("Mul", name + ".scale", [x, gate])

    x = conv_bn("features.0", "input", 3, 32, 3, 2)
    cin, index = 32, 1
    for expand, k, stride, cout, layers in ((1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                                            (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)):
        for b in range(layers):
            name, s, c = f"features.{index}.{b}", stride if b == 0 else 1, cin * expand
            y = conv_bn(name + ".expand", x, cin, c, 1) if expand != 1 else x
            y = conv_bn(name + ".depthwise", y, c, c, k, s, groups=c)
            y = se(name + ".se", y, c, max(1, cin // 4))
            y = conv_bn(name + ".project", y, c, cout, 1, act=False, gamma=(0.2, 0.4))
            x = net.op("Add", name + ".add", [y, x]) if s == 1 and cin == cout else y
            cin = cout
        index += 1
    x = conv_bn("features.8", x, 320, 1280, 1)
    x = net.op("Flatten", "flatten", [net.op("GlobalAveragePool", "avgpool", [x])], axis=1)
    fc_w = net.weight("classifier.weight", r.normal(0, 1 / np.sqrt(1280), (1000, 1280)))
    fc_b = net.weight("classifier.bias", r.uniform(-0.1, 0.1, 1000))
    net.op("Gemm", "output", [x, fc_w, fc_b], transB=1)
    return net.model("efficientnet_b0", [1, 3, 224, 224], [1, 1000], 13, 7)


def transformer(seed, tokens=128, d=256, heads=4, ff=1024):
    net = Net(seed)
    r, dh = net.rng, d // heads

    def linear(name, x, cin, cout):
        w = net.weight(name + ".weight", r.normal(0, 1 / np.sqrt(cin), (cin, cout)))
        b = net.weight(name + ".bias", r.uniform(-0.1, 0.1, cout))
        return net.op("Add", name + ".add", [net.op("MatMul", name, [x, w]), b])

    def norm(name, x):
        g = net.weight(name + ".weight", r.uniform(0.8, 1.2, d))
        b = net.weight(name + ".bias", r.uniform(-0.1, 0.1, d))
        return net.op("LayerNormalization", name, [x, g, b], axis=-1, epsilon=1e-5)

    split, merge = "heads_shape", "tokens_shape"  # Reshape's shapes: int64 initializers
    net.inits.append(numpy_helper.from_array(np.array([1, tokens, heads, dh], np.int64), split))
    net.inits.append(numpy_helper.from_array(np.array([1, tokens, d], np.int64), merge))

    def to_heads(name, x, perm):
        return net.op("Transpose", name + ".transpose", [net.op("Reshape", name + ".reshape", [x, split])], perm=perm)

    q = to_heads("q", linear("attn.q_proj", "input", d, d), [0, 2, 1, 3])
    k = to_heads("k", linear("attn.k_proj", "input", d, d), [0, 2, 3, 1])
    v = to_heads("v", linear("attn.v_proj", "input", d, d), [0, 2, 1, 3])
    scale = net.weight("attn.scale", np.array(np.sqrt(dh)))
    scores = net.op("Div", "attn.scale_div", [net.op("MatMul", "attn.qk", [q, k]), scale])
    ctx = net.op("MatMul", "attn.pv", [net.op("Softmax", "attn.softmax", [scores], axis=-1), v])
    ctx = net.op("Reshape", "attn.merge", [net.op("Transpose", "attn.ctx_transpose", [ctx], perm=[0, 2, 1, 3]), merge])
    x = norm("norm1", net.op("Add", "attn.residual", ["input", linear("attn.out_proj", ctx, d, d)]))
    f = linear("ff.linear2", net.op("Relu", "ff.relu", [linear("ff.linear1", x, d, ff)]), ff, d)
    norm("output", net.op("Add", "ff.residual", [x, f]))
    return net.model("transformer", [1, tokens, d], [1, tokens, d], 17, 8)


def gpt2(seed, tokens=64, d=256, heads=4, blocks=2, vocab=1024, positions=1024):
    net = Net(seed)
    r, dh = net.rng, d // heads

    def ints(name, values):
        net.inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def conv1d(name, x, cin, cout, std):  # transformers' Conv1D: addmm on x viewed as rows
        w = net.weight(name + ".weight", r.normal(0, std, (cin, cout)))
        b = net.weight(name + ".bias", r.uniform(-0.1, 0.1, cout))
        rows = net.op("Reshape", name + ".view", [x, ints(name + ".rows", [-1, cin])])
        return net.op("Reshape", name + ".out", [net.op("Gemm", name, [rows, w, b]), ints(name + ".shape", [1, tokens, cout])])

    def norm(name, x):
        g = net.weight(name + ".weight", r.uniform(0.8, 1.2, d))
        b = net.weight(name + ".bias", r.uniform(-0.1, 0.1, d))
        return net.op("LayerNormalization", name, [x, g, b], axis=-1, epsilon=1e-5)

    def scalar(name, v):
        return net.weight(name, np.array(v))

    wte = net.weight("wte", r.normal(0, 0.5, (vocab, d)))
    pos = ints("position_ids", [list(range(tokens))])
    h = net.op("Add", "embed", [net.op("Gather", "wte.gather", [wte, "input"]),
                                net.op("Gather", "wpe.gather", [net.weight("wpe", r.normal(0, 0.1, (positions, d))), pos])])
    net.inits.append(numpy_helper.from_array(np.tril(np.ones((1, 1, positions, positions), bool)), "attn.bias"))
    heads_shape = ints("heads_shape", [1, tokens, heads, dh])
    for i in range(blocks):
        p = f"h.{i}."
        qkv = conv1d(p + "attn.c_attn", norm(p + "ln_1", h), d, 3 * d, 1 / np.sqrt(d))
        net.nodes.append(helper.make_node("Split", [qkv, ints(p + "split", [d, d, d])], [p + "q", p + "k", p + "v"],
                                          name=p + "split", axis=2))
        q, k, v = (net.op("Transpose", p + t + ".heads", [net.op("Reshape", p + t + ".view", [p + t, heads_shape])],
                          perm=[0, 2, 1, 3]) for t in "qkv")
        kt = net.op("Transpose", p + "k.t", [k], perm=[0, 1, 3, 2])
        w = net.op("Div", p + "attn.scale", [net.op("MatMul", p + "attn.qk", [q, kt]), scalar(p + "sqrt_dh", np.sqrt(dh))])
        # causal_mask = bias[:, :, key_length - query_length : key_length, :key_length], its ends
        # from the keys' shape (as traced), then Where(mask, w, finfo(float32).min)
        kl = net.op("Unsqueeze", p + "kl", [net.op("Gather", p + "kl.gather", [net.op("Shape", p + "k.shape", [k]),
                                                                                ints(p + "two", 2)]), ints(p + "zero", [0])])
        mask = net.op("Slice", p + "mask.cols", [net.op("Slice", p + "mask.rows", ["attn.bias", ints(p + "r0", [0]), kl,
                                                                                   ints(p + "ax2", [2])]),
                                                 ints(p + "c0", [0]), kl, ints(p + "ax3", [3])])
        w = net.op("Where", p + "attn.mask", [mask, w, scalar(p + "mask_value", np.finfo(np.float32).min)])
        ctx = net.op("MatMul", p + "attn.pv", [net.op("Softmax", p + "attn.softmax", [w], axis=-1), v])
        ctx = net.op("Reshape", p + "attn.merge", [net.op("Transpose", p + "attn.ctx", [ctx], perm=[0, 2, 1, 3]),
                                                   ints(p + "tokens", [1, tokens, d])])
        h = net.op("Add", p + "attn.residual", [h, conv1d(p + "attn.c_proj", ctx, d, d, 1 / np.sqrt(d * 2 * blocks))])
        x = conv1d(p + "mlp.c_fc", norm(p + "ln_2", h), d, 4 * d, 1 / np.sqrt(d))
        inner = net.op("Mul", p + "gelu.beta", [net.op("Add", p + "gelu.add", [x, net.op(
            "Mul", p + "gelu.kappa", [net.op("Pow", p + "gelu.cube", [x, scalar(p + "three", 3.0)]),
                                      scalar(p + "kappa", 0.044715)])]), scalar(p + "beta", np.sqrt(2 / np.pi))])
        g = net.op("Mul", p + "gelu", [net.op("Mul", p + "gelu.half", [x, scalar(p + "half", 0.5)]), net.op(
            "Add", p + "gelu.one", [net.op("Tanh", p + "gelu.tanh", [inner]), scalar(p + "one", 1.0)])])
        h = net.op("Add", p + "mlp.residual", [h, conv1d(p + "mlp.c_proj", g, 4 * d, d, 1 / np.sqrt(4 * d * 2 * blocks))])
    net.op("MatMul", "output", [norm("ln_f", h), net.op("Transpose", "lm_head", [wte], perm=[1, 0])])
    return net.model("gpt2", [1, tokens], [1, tokens, vocab], 17, 8, TensorProto.INT64)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: make-models.py OUT_DIR [--seed N]")
    out = sys.argv[1]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 50
    makers = {"resnet50": resnet50, "transformer": transformer, "efficientnet_b0": efficientnet_b0, "gpt2": gpt2}
    models = [a for a in sys.argv[2:] if a in makers] or list(makers)
    os.makedirs(out, exist_ok=True)
    for name in models:
        model = makers[name](seed)
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))
        print("wrote", os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
