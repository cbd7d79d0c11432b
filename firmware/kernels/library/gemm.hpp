// Kernel library: GEMM. C (m x n) = A (m x k) x B (k x n), row-major in GM. fp16 inputs give
// f32 or f16 C; int8 inputs give int32 C. B may be stored transposed (n x k, as inference
// weights usually are: [out features, in features]); for int8 it must be. The tiling comes
// from the core's buffer sizes, so a what-if on L0A / L0B / L0C needs no kernel edit.
#pragma once
#include <cstdint>
#include <string>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct GemmShape {
  std::uint32_t m = 0, k = 0, n = 0;
  aicore::DType out = aicore::DType::F32;
  aicore::DType in = aicore::DType::F16;  // F16 or S8
  bool b_transposed = false;              // B given as n x k
};

struct GemmTiling {
  std::uint32_t mt = 0, nt = 0, kt = 0;  // output tile mt x nt, k in chunks of kt
  std::string str() const;
};

// The largest tiles whose double-buffered L0A / L0B and single L0C fit the configuration;
// throws dvp::Error naming the constraint when the shape cannot be tiled.
GemmTiling gemm_tiling(const aicore::AiCoreConfig& cfg, const GemmShape& s);

// Arguments at argbase: A, B, C (GM addresses). Output tiles go to blocks round-robin by
// block id; within a block, MTE2 (GM -> L1), MTE1 (L1 -> L0A / L0B) and the cube overlap on
// two buffers each, and FixPipe writes each finished tile.
aicore::Image gemm_kernel(const aicore::AiCoreConfig& cfg, const GemmShape& s);

}  // namespace dvp::kernels
