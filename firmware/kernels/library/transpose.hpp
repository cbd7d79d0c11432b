// SPDX-License-Identifier: MIT
// Kernel library: a transpose of two axes, y (outer x cols x rows x inner) = x (outer x rows x
// cols x inner) with the rows and cols axes swapped, any element type: what ONNX's Transpose
// becomes when it moves whole runs of `inner` elements, as an attention's (0, 2, 1, 3) moves a
// head's d elements between (tokens, heads) and (heads, tokens). No arithmetic: MTE2 gathers
// a piece of one y row (rows of x, `inner` elements each, one every cols) into the UB with one
// strided copy, MTE3 writes it out in one run; two UB buffers, so the next piece's gather
// overlaps this one's write. Pieces go round-robin to the blocks.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct TransposeShape {
  aicore::DType dtype = aicore::DType::F16;
  std::uint32_t outer = 1, rows = 0, cols = 0;
  std::uint32_t inner = 1;  // inner x element bytes: whole 32-byte blocks (MTE's unit)
};

// Rows of x gathered per piece: as many as half the UB holds (and one copy's 4095 blocks).
std::uint32_t transpose_piece_rows(const aicore::AiCoreConfig& cfg, const TransposeShape& s);
// The pieces the blocks share.
std::uint64_t transpose_pieces(const aicore::AiCoreConfig& cfg, const TransposeShape& s);

// Arguments at argbase: x, y (GM addresses). Throws dvp::Error naming what cannot be moved.
aicore::Image transpose_kernel(const aicore::AiCoreConfig& cfg, const TransposeShape& s);

}  // namespace dvp::kernels
