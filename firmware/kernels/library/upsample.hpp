// SPDX-License-Identifier: MIT
// Kernel library: nearest-neighbour upsampling of an f16 NC1HWC0 map by whole factors, y[c1][h][w]
// = x[c1][h / sh][w / sw] (each position's 16 channels, one 32-byte block): what ONNX's Resize
// and Upsample in nearest mode become when every output position reads the input position its
// index divided by the factor (YOLO's and FPN's 2x, a UNet decoder's). Per input row: MTE2 copies
// it into the UB; the vector unit's vcopy writes each block sw times, side by side (a repeat of 8
// blocks, destination block stride sw, once per offset); MTE3 writes the widened row sh times.
// Two UB buffers, so one row's copies overlap the next row's. Rows go round-robin to the blocks.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct UpsampleShape {
  std::uint32_t c = 0, h = 0, w = 0;  // the input map (c channels, stored in groups of 16)
  std::uint32_t sh = 1, sw = 1;       // the factors down and across
  std::uint32_t c1() const { return (c + 15) / 16; }
  std::uint64_t in_elems() const { return std::uint64_t(c1()) * h * w * 16; }
  std::uint64_t out_elems() const { return in_elems() * sh * sw; }
};

// Throws dvp::Error naming what the kernel cannot take (a row too wide for half the UB).
void check_upsample(const aicore::AiCoreConfig& cfg, const UpsampleShape& s);
// Arguments at argbase: x, y (GM addresses).
aicore::Image upsample_kernel(const aicore::AiCoreConfig& cfg, const UpsampleShape& s);

}  // namespace dvp::kernels
