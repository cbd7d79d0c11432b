// SPDX-License-Identifier: MIT
// Kernel library: a strided slice, y (outer x rows x inner) = runs of x:
//   y[o][r][i] = x[start + o outer_stride + r row_stride + i].
// It is ONNX's Slice and Split along one axis (CANN's StridedSlice and SplitD): x[:, a:b] of a
// matrix is rows of b - a elements, a row of x apart (a fused qkv projection split in three);
// x[..., ::2] is runs of one element's `inner`, two apart; a range of an NC1HWC0 map's channel
// groups or rows, or every other column, likewise (C0's 16 channels are one 32-byte block).
// No arithmetic: MTE2 gathers a piece (rows of one outer block) into the UB in one strided copy,
// and MTE3 writes it out in one run. Runs, gaps and the start are whole 32-byte blocks (MTE's
// unit); any other slice runs on the AI CPU (its slice kernel: byte copies). A run longer than
// half the UB goes in chunks, each a unit. Units go round-robin to the blocks, on two UB buffers,
// so one unit's gather overlaps the other's write.
#pragma once
#include <cstdint>
#include <string>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct SliceShape {
  aicore::DType dtype = aicore::DType::F16;
  std::uint64_t outer = 1, rows = 1, inner = 1;    // y's axes
  std::uint64_t outer_stride = 0, row_stride = 0;  // elements of x from an outer block to the next, a row to the next
  std::uint64_t start = 0;                         // x's element that is y's first
  std::uint64_t x_elems() const { return start + (outer - 1) * outer_stride + (rows - 1) * row_stride + inner; }
  std::uint64_t y_elems() const { return outer * rows * inner; }
};

// How the work is cut for the configured core. The shape is first merged where its runs touch
// (rows a run apart are one run; outer blocks of one row are rows).
struct SlicePlan {
  SliceShape merged;
  std::uint64_t piece_rows = 1;  // rows a piece gathers (1: a run in chunks)
  std::uint64_t chunks = 1;      // chunks a run goes in (1: whole runs)
  std::uint64_t chunk_blocks = 0;
  std::uint64_t units = 0;  // outer x pieces of the rows x chunks
};

// Why the kernel does not take s ("": it does): a run, stride or start, once runs that touch are
// merged, of other than whole 32-byte blocks (the AI CPU's slice takes those).
std::string slice_refusal(const SliceShape& s);

// Throws dvp::Error with slice_refusal's reason.
SlicePlan slice_plan(const aicore::AiCoreConfig& cfg, const SliceShape& s);

// Arguments at argbase: x, y (GM addresses).
aicore::Image slice_kernel(const aicore::AiCoreConfig& cfg, const SliceShape& s);

}  // namespace dvp::kernels
