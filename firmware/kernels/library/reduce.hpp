// SPDX-License-Identifier: MIT
// Kernel library: a reduction over the middle axis of x, outer x rows x inner, row-major in GM:
// y[o][i] = op over r of x[o][r][i], op the sum, the mean (each element times 1 / rows, then
// summed, so that an f16 sum cannot overflow where the mean does not), the maximum or the
// minimum; f16 or f32. ONNX's ReduceSum, ReduceMean, ReduceMax and ReduceMin over one run of
// adjacent axes (rows: their product; outer and inner: the axes before and after).
//
// inner 1 (a row per output element): each row is read in chunks and reduced across them
// (vredsum / vredmax / vredmin, folded), into a block of its own; a unit of 32 bytes' worth of
// rows is then gathered into one block (vcadd of each block's first element) and written.
// inner above 1: the rows of an output row are read one after another (one copy each) and
// combined element by element (f16 sums in f32, as CANN's ReduceSum widens them). Where an
// output row is not whole 32-byte blocks, a unit is the fewest output rows that are, and the
// scalar unit packs their elements together before the unit's one write. Units go round-robin
// to the blocks.
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

enum class ReduceOp { Sum, Mean, Max, Min };
inline constexpr const char* kReduceOps[] = {"sum", "mean", "max", "min"};

struct ReduceShape {
  aicore::DType dtype = aicore::DType::F16;
  ReduceOp op = ReduceOp::Sum;
  std::uint32_t outer = 1, rows = 0, inner = 1;
};

// Output rows (of inner elements) per work unit, and the units the blocks share.
std::uint32_t reduce_unit_outers(const ReduceShape& s);
std::uint64_t reduce_units(const ReduceShape& s);

// Arguments at argbase: x, y (GM addresses). Throws dvp::Error naming what does not fit.
aicore::Image reduce_kernel(const aicore::AiCoreConfig& cfg, const ReduceShape& s);

}  // namespace dvp::kernels
