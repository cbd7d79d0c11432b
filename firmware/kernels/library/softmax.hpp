// SPDX-License-Identifier: MIT
// Kernel library: row softmax. out[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r)
// (x times a scale first, if given; where a mask row is 0, a fill value in its place),
// rows of `cols` elements, fp32 or fp16, row-major in GM. Rows go round-robin to the blocks.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct SoftmaxShape {
  aicore::DType dtype = aicore::DType::F32;
  std::uint32_t rows = 0, cols = 0;  // any; a row the UB cannot hold twice takes three passes
  // Each row times scale first (> 0; rounded to the element type): an attention's 1 / sqrt(d),
  // fused as CANN's attention softmax fuses it.
  double scale = 1.0;
  // A mask, fused as CANN's masked softmax fuses an attention's causal or padding mask: with
  // mask_rows, row r of x reads row r % mask_rows of the mask (a bool held as 1 and 0 of dtype,
  // mask_rows x cols: one for every head), and where that is 0 the row holds `fill` (rounded to
  // dtype) in place of x times the scale. Rows of whole 32-byte blocks the UB holds (softmax_masks).
  std::uint32_t mask_rows = 0;
  double fill = 0;
};

// Rows per work unit: 1 when a row is whole 32-byte blocks, else the fewest whose bytes are
// whole blocks and at least a row's blocks and one more (softmax.cpp says why), so no two
// blocks write one 32-byte block.
std::uint32_t softmax_unit_rows(const SoftmaxShape& s);

// Whether a row fits the UB twice beside its sums (one pass over it), or takes three passes over
// chunks of it.
bool softmax_one_pass(const aicore::AiCoreConfig& cfg, const SoftmaxShape& s);

// Whether a masked softmax of this shape is built: rows of whole 32-byte blocks, at most 255
// repeats, the row twice beside its sums, the mask's row and its bits in the UB.
bool softmax_masks(const aicore::AiCoreConfig& cfg, const SoftmaxShape& s);

// Arguments at argbase: x, out (GM addresses); with a mask, x, mask, out.
aicore::Image softmax_kernel(const aicore::AiCoreConfig& cfg, const SoftmaxShape& s);

}  // namespace dvp::kernels
