// SPDX-License-Identifier: MIT
// Kernel library: max and average pooling on an fp16 feature map in NC1HWC0 (no padding).
// In NC1HWC0 one spatial position is one 32-byte block (16 channels), so a vector repeat with
// a source block stride of stride_w makes 8 output positions at once; the window is a loop of
// vmax (or vadd, then a scale) over the kh x kw offsets. Channel groups go round-robin to blocks.
#pragma once
#include <cstdint>
#include <string>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct PoolShape {
  std::string mode = "max";           // max | avg
  std::uint32_t h = 0, w = 0, c = 0;  // c: a multiple of 16
  std::uint32_t kh = 2, kw = 2, stride_h = 2, stride_w = 2;
  std::uint32_t ho() const { return (h - kh) / stride_h + 1; }
  std::uint32_t wo() const { return (w - kw) / stride_w + 1; }
};

// Arguments at argbase: x, y (GM addresses; y is NC1HoWoC0).
aicore::Image pool_kernel(const aicore::AiCoreConfig& cfg, const PoolShape& s);

}  // namespace dvp::kernels
