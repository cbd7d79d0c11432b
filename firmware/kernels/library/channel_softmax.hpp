// SPDX-License-Identifier: MIT
// Kernel library: softmax over the channels of an fp16 NC1HWC0 feature map, each position on its
// own (a segmentation head's per-pixel class probabilities, ONNX Softmax over axis 1 of
// N x C x H x W). A position's channels are spread over the C1 groups, 16 lanes of one 32-byte
// block in each; vtranspose turns 16 positions x 16 channels into 16 channels x 16 positions, so
// every channel becomes a row of positions and the softmax is element-wise across rows: max,
// subtract, exp, sum, divide, one vector op per channel for up to 128 positions at once; then
// transposed back. The pad channels of the last group are no rows of it (left as they are).
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct ChannelSoftmaxShape {
  std::uint32_t h = 0, w = 0, c = 0;  // one image; c channels stored in ceil(c / 16) groups of 16
  double scale = 1.0;                 // each value times it first (rounded to f16; > 0): a Mul before it
  std::uint32_t c1() const { return (c + 15) / 16; }
  std::uint64_t positions() const { return std::uint64_t(h) * w; }
};

// Tiles of 16 positions a work unit takes (1 to 8: the most whose input and transposed copies
// fit the UB); throws dvp::Error when not even one does.
std::uint32_t channel_softmax_tiles(const aicore::AiCoreConfig& cfg, const ChannelSoftmaxShape& s);

// Arguments at argbase: x, y (GM addresses; both NC1HWC0, f16).
aicore::Image channel_softmax_kernel(const aicore::AiCoreConfig& cfg, const ChannelSoftmaxShape& s);

}  // namespace dvp::kernels
