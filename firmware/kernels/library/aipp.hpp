// SPDX-License-Identifier: MIT
// Kernel library: AIPP, a network's input made from a picture. A u8 picture in GM, as DVPP
// writes it (NV12 / NV21, grey, RGB888 at a row pitch), becomes the f16 NC1HWC0 feature map
// (C1 = 1; c0 = 16, or 4 for a first layer's small-channel mode) a conv layer reads: each pixel's
// channels, converted by a colour matrix (YUV -> RGB) if asked, normalised per channel as
// (v - mean - min) x var_reci. The conversion is MTE2's (aipp.gm2l1, into L1); MTE1 moves each
// band of rows to UB and MTE3 to GM, the next band's conversion overlapping the last one's
// copy out. Bands of rows go round-robin to the blocks.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct AippShape {
  std::uint32_t h = 0, w = 0;                       // the picture, and the output's positions
  std::uint32_t format = 1;                         // enum dvpp_format: 1 nv12, 2 nv21, 5 yuv400, 6 rgb888
  std::uint32_t pitch = 0, plane_rows = 0;          // the source's row stride (pixels) and Y plane rows
  std::uint32_t c0 = 16;                            // output channels per position: 16 or 4
  bool csc = false;                                 // the colour matrix applied
  aicore::AippCsc matrix;                           // out = ((m x (in - in_bias)) >> 8) + out_bias
  std::uint16_t mean[3] = {0, 0, 0};                // per channel, subtracted first
  std::uint16_t min[3] = {0, 0, 0};                 // f16 bits, subtracted next
  std::uint16_t var[3] = {0x3c00, 0x3c00, 0x3c00};  // f16 bits (1.0), the multiplier
  unsigned channels() const { return format == 5 ? 1 : 3; }
  // Bytes of the source picture in GM.
  std::uint64_t in_bytes() const;
  std::uint64_t out_elems() const { return std::uint64_t(h) * w * c0; }
};

// The named conversions of a YUV picture to RGB (enum dvpp_csc's: BT.601 full range, BT.601 /
// BT.709 limited range) as AIPP's Q8 matrix and biases.
aicore::AippCsc aipp_yuv_to_rgb(unsigned csc);

// Rows per band: the most whose f16 output fits L1 and UB (and is whole 32-byte blocks).
// Throws dvp::Error for a shape the kernel cannot take, naming why.
std::uint32_t aipp_band_rows(const aicore::AiCoreConfig& cfg, const AippShape& s);

// Arguments at argbase: x (the picture, GM), y (f16, h x w x c0).
aicore::Image aipp_kernel(const aicore::AiCoreConfig& cfg, const AippShape& s);

}  // namespace dvp::kernels
