// SPDX-License-Identifier: MIT
// Kernel library: max and average pooling on an fp16 feature map in NC1HWC0, with padding, and
// global average pooling. In NC1HWC0 one spatial position is one 32-byte block (16 channels),
// so a vector repeat with a source block stride of stride_w makes 8 output positions at once;
// the window is a loop of vmax (or vadd, then a scale) over the kh x kw offsets (dil_h, dil_w
// apart in a dilated window). The work is
// cut into units of one channel group and one band of output rows, sized so that the band's
// padded input rows and its output fit the UB (half of it: two buffers, where one row fits);
// units go round-robin to blocks. Padding is made in the UB: the band's padding gets the pad
// value (-inf for max, 0 for avg) and the input rows are copied beside it; an average divides by
// the whole window, padding included (count_include_pad). A global average sums in f32
// (pool.cpp: global_pool_batched, global_pool).
#pragma once
#include <cstdint>
#include <string>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct PoolShape {
  std::string mode = "max";           // max | avg
  std::uint32_t h = 0, w = 0, c = 0;  // c channels, stored in ceil(c / 16) groups of 16
  std::uint32_t kh = 2, kw = 2, stride_h = 2, stride_w = 2;
  std::uint32_t pad_t = 0, pad_b = 0, pad_l = 0, pad_r = 0;
  std::uint32_t dil_h = 1, dil_w = 1;  // the window's taps dil apart (a dilated max pool)
  std::uint32_t c1() const { return (c + 15) / 16; }
  // The rows and columns a window spans, its taps and the gaps between them.
  std::uint32_t span_h() const { return (kh - 1) * dil_h + 1; }
  std::uint32_t span_w() const { return (kw - 1) * dil_w + 1; }
  std::uint32_t ho() const { return (h + pad_t + pad_b - span_h()) / stride_h + 1; }
  std::uint32_t wo() const { return (w + pad_l + pad_r - span_w()) / stride_w + 1; }
  // An average whose window is the whole unpadded map: global average pooling, which streams
  // the map instead of holding a window's rows (global_pool in pool.cpp).
  bool global() const {
    return mode == "avg" && kh == h && kw == w && !pad_t && !pad_b && !pad_l && !pad_r && dil_h == 1 && dil_w == 1;
  }
};

// Positions of the map a global pool's unit sums at a time (one channel group a unit).
constexpr std::uint32_t kGlobalChunk = 512;

// The channel groups a global pool's unit sums at once (a map of at most 255 positions, when
// there are enough of them), or 0: one group a unit, its map in chunks of kGlobalChunk.
std::uint32_t pool_global_batch(const aicore::AiCoreConfig& cfg, const PoolShape& s);

// Output rows per unit (band): the most whose padded input rows and output rows fit the UB;
// throws dvp::Error when not even one does.
std::uint32_t pool_band_rows(const aicore::AiCoreConfig& cfg, const PoolShape& s);

// Arguments at argbase: x, y (GM addresses; y is NC1HoWoC0).
aicore::Image pool_kernel(const aicore::AiCoreConfig& cfg, const PoolShape& s);

}  // namespace dvp::kernels
