// SPDX-License-Identifier: MIT
// Kernel library: row softmax. out[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r),
// rows of `cols` elements, fp32 or fp16, row-major in GM. Rows go round-robin to the blocks.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct SoftmaxShape {
  aicore::DType dtype = aicore::DType::F32;
  std::uint32_t rows = 0, cols = 0;  // cols: a multiple of one repeat (64 fp32, 128 fp16), at most 255 repeats
};

// Arguments at argbase: x, out (GM addresses).
aicore::Image softmax_kernel(const aicore::AiCoreConfig& cfg, const SoftmaxShape& s);

}  // namespace dvp::kernels
