// SPDX-License-Identifier: MIT
// Kernel library: layer normalization, as a transformer's LayerNorm (ONNX LayerNormalization):
// y[r][c] = (x[r][c] - mean_r) / sqrt(var_r + epsilon) x gamma[c] + beta[c], mean and variance
// over each row of `cols` elements, fp32 or fp16, row-major in GM; gamma and beta are `cols`
// values of the same type. Rows go round-robin to the blocks, one row at a time through the UB.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct LayerNormShape {
  aicore::DType dtype = aicore::DType::F32;
  std::uint32_t rows = 0;
  // A row is whole 32-byte blocks (f16: a multiple of 16; f32: of 8), so that no two blocks
  // write one block of y; the UB holds it four times (x, its squares, gamma, beta).
  std::uint32_t cols = 0;
  double epsilon = 1e-5;
};

// Arguments at argbase: x, gamma, beta, y (GM addresses). Throws dvp::Error naming what does
// not fit.
aicore::Image layernorm_kernel(const aicore::AiCoreConfig& cfg, const LayerNormShape& s);

}  // namespace dvp::kernels
