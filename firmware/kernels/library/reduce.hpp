// SPDX-License-Identifier: MIT
// Kernel library: a reduction over the middle axis of x, outer x rows x inner, row-major in GM:
// y[o][i] = op over r of x[o][r][i], op the sum, the mean (the sum times 1 / rows), the maximum
// or the minimum (a NaN gives way to a number, as vmax's and vmin's do); f16 or f32. ONNX's
// ReduceSum, ReduceMean, ReduceMax and ReduceMin over one run of adjacent axes (rows: their
// product; outer and inner: the axes before and after). f16 sums and means are taken in f32 (each
// piece widened by vconv, the result narrowed once), as CANN's ReduceSum widens them.
//
// inner 1 (a row per output element): each row is read in chunks and reduced across them
// (vredsum / vredmax / vredmin, folded), into a block of its own; a unit of 32 bytes' worth of
// rows is then gathered into one block (vcadd of each block's first element) and written.
// inner above 1: the rows of an output row are combined element by element, read many at once
// by one strided copy where output rows are whole 32-byte blocks, else one copy each. Where an
// output row is not whole 32-byte blocks, a unit is the fewest output rows that are, and the
// scalar unit packs their elements side by side before the unit's one write; where such a unit
// does not fit the UB, one core writes every output row in order, never a byte past it (a row's
// short piece first, its whole blocks rewritten by the next piece; a row of one piece ends with a
// block of its last 32 bytes, moved to an aligned UB block by the scalar unit). Few output rows
// are cut into pieces of whole repeats, each a unit.
// Units go round-robin to the blocks.
#pragma once
#include <cstdint>
#include <iterator>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

enum class ReduceOp { Sum, Mean, Max, Min };
inline constexpr const char* kReduceOps[] = {"sum", "mean", "max", "min"};
static_assert(std::size(kReduceOps) == std::size_t(ReduceOp::Min) + 1, "a name for every ReduceOp");

struct ReduceShape {
  aicore::DType dtype = aicore::DType::F16;
  ReduceOp op = ReduceOp::Sum;
  std::uint32_t outer = 1, rows = 0, inner = 1;
};

// How the work is cut for the configured core.
struct ReducePlan {
  bool widened = false;     // an f16 sum or mean, taken in f32
  std::uint32_t unit = 1;   // output rows per work unit
  std::uint64_t units = 1;  // the units the blocks share
  bool packed = false;      // a unit's output rows packed by the scalar unit, written at once
  std::uint64_t width = 0;  // elements read at once: of a row (inner 1), or of an output row's piece
  // Pieces of an output row (width elements each, the last the rest), each a unit of its own, so
  // that few output rows are still shared by the cores (a sentence embedding's mean: one row of
  // 768); 1 where a unit is whole output rows.
  std::uint64_t pieces = 1;
  // Rows of x one copy brings (a strided copy: each row's piece, inner apart), where output rows
  // are whole 32-byte blocks: the copies' latencies overlap instead of one per row.
  std::uint32_t batch = 1;
};

// Throws dvp::Error naming what does not fit.
ReducePlan reduce_plan(const aicore::AiCoreConfig& cfg, const ReduceShape& s);

// Arguments at argbase: x, y (GM addresses). Throws dvp::Error naming what does not fit.
aicore::Image reduce_kernel(const aicore::AiCoreConfig& cfg, const ReduceShape& s);

}  // namespace dvp::kernels
