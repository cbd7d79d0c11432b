// SPDX-License-Identifier: MIT
// Kernel library: an f16 NC1HWC0 map times one value per channel, y[c1][p][c0] = x[c1][p][c0] x
// g[c1 x 16 + c0]: a squeeze-and-excitation block's gate (EfficientNet's, MobileNetV3's), g the
// gate's 1 x 1 map (its channels in order). Units of up to `band` positions of one channel
// group go round-robin to the blocks, two a turn on two UB buffers: MTE2 copies the positions and
// the group's 16 gate values (one 32-byte block) in; vmul reads that block for every block of a
// repeat (source block and repeat strides 0); MTE3 writes the product out.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct ChannelMulShape {
  std::uint32_t c = 0, h = 0, w = 0;  // the map (c channels, stored in groups of 16)
  std::uint32_t c1() const { return (c + 15) / 16; }
  std::uint64_t positions() const { return std::uint64_t(h) * w; }
  std::uint64_t elems() const { return std::uint64_t(c1()) * 16 * positions(); }
};

// Positions per unit: as many as half the UB holds, in whole vector repeats (8), up to 255 repeats.
std::uint32_t channel_mul_band(const aicore::AiCoreConfig& cfg, const ChannelMulShape& s);
std::uint64_t channel_mul_units(const aicore::AiCoreConfig& cfg, const ChannelMulShape& s);
// Arguments at argbase: x, g, y (GM addresses).
aicore::Image channel_mul_kernel(const aicore::AiCoreConfig& cfg, const ChannelMulShape& s);

}  // namespace dvp::kernels
