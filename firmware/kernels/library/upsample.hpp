// SPDX-License-Identifier: MIT
// Kernel library: nearest-neighbour upsampling of an f16 NC1HWC0 map by whole factors, y[c1][h][w]
// = x[c1][h / sh][w / sw] (each position's 16 channels, one 32-byte block): what ONNX's Resize
// and Upsample in nearest mode become when every output position reads the input position its
// index divided by the factor (YOLO's and FPN's 2x, a UNet decoder's). Per input row: MTE2 copies
// it into the UB; the vector unit's vcopy writes each block sw times, side by side (a repeat of 8
// blocks, destination block stride sw, once per offset); MTE3 writes the widened row sh times.
// Two UB buffers, so one row's copies overlap the next row's. Rows go round-robin to the blocks.
// With `zeros`, the zero insertion a transposed convolution's stride makes of its input (CANN's
// Conv2DBackpropInput dilates dy so): y[c1][h sh][w sw] = x[c1][h][w], zeros between, the map
// (h - 1) sh + 1 + pad_b by (w - 1) sw + 1 + pad_r; each block written once into a row zeroed at
// the start (vdup), which the gaps keep, and sh - 1 zero rows after each input row (pad_b after
// the last).
#pragma once
#include <algorithm>
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct UpsampleShape {
  std::uint32_t c = 0, h = 0, w = 0;  // the input map (c channels, stored in groups of 16)
  std::uint32_t sh = 1, sw = 1;       // the factors down and across
  bool zeros = false;                 // zero insertion instead of copies
  // With zeros: rows and columns of zeros after the map (a transposed conv's output_padding past
  // its pads: output rows no input reaches).
  std::uint32_t pad_b = 0, pad_r = 0;
  std::uint32_t c1() const { return (c + 15) / 16; }
  std::uint64_t oh() const { return zeros ? std::uint64_t(h - 1) * sh + 1 + pad_b : std::uint64_t(h) * sh; }
  std::uint64_t ow() const { return zeros ? std::uint64_t(w - 1) * sw + 1 + pad_r : std::uint64_t(w) * sw; }
  // A UB buffer's blocks: the input row and the widened one (with zeros, the zeros after it too).
  std::uint64_t buffer_blocks() const { return w + std::max<std::uint64_t>(std::uint64_t(w) * sw, ow()); }
  std::uint64_t in_elems() const { return std::uint64_t(c1()) * h * w * 16; }
  std::uint64_t out_elems() const { return std::uint64_t(c1()) * oh() * ow() * 16; }
};

// Throws dvp::Error naming what the kernel cannot take (a row too wide for half the UB).
void check_upsample(const aicore::AiCoreConfig& cfg, const UpsampleShape& s);
// Arguments at argbase: x, y (GM addresses).
aicore::Image upsample_kernel(const aicore::AiCoreConfig& cfg, const UpsampleShape& s);

}  // namespace dvp::kernels
