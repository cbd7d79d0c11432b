// SPDX-License-Identifier: MIT
// Kernel library: x (outer x inner) broadcast over a middle axis, y[o][r][i] = x[o][i] for
// r < rows: numpy's broadcasting, ONNX's Expand, CANN's BroadcastTo. It is what an element-wise op
// of an activation and one of fewer elements reads (RMSNorm's x / rms, a softmax written out, an
// attention mask). The inverse of the reduce kernel's shape: the same outer, rows and inner.
//
// Two ways, by inner:
// - runs (inner 1: each x value fills a run of `rows` elements of y). A unit is a range of y's
//   elements, whole 256-byte repeats (the last unit the rest). MTE2 copies the unit's x values
//   into the UB; the scalar unit reads each run's value (ld.ub) and vdup writes the run into the
//   unit's image. The runs go from the last to the first: a vdup starts at the 32-byte block its
//   run's first element is in, so it writes over the end of the run before it, which that run's
//   own vdup then writes again.
// - rows (inner whole 32-byte blocks: each x row a row of y). A unit is whole rows of y; the rows
//   of one x row are a segment of the image: MTE2 copies x's row to its start once, then vcopy
//   doubles what is there (rows 0..k-1 to k..2k-1) until it is full. A row wider than the image is
//   cut into pieces of the image's size, the last piece ending at the row's end (over the piece
//   before it: the same values).
// Each unit's image goes out in one copy (MTE3); the last unit's ends inside its last block. Units
// go round-robin to the blocks, on two UB buffers. Any other inner runs on the AI CPU (its expand
// kernel: byte copies).
#pragma once
#include <cstdint>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct ExpandShape {
  aicore::DType dtype = aicore::DType::F16;
  std::uint64_t outer = 1, rows = 1, inner = 1;
  std::uint64_t in_elems() const { return outer * inner; }
  std::uint64_t out_elems() const { return outer * rows * inner; }
};

// How the work is cut for the configured core.
struct ExpandPlan {
  bool runs = true;          // inner 1: runs of one value (else rows of whole blocks)
  std::uint64_t image = 0;   // bytes of y a unit's image holds at most (whole repeats)
  std::uint64_t unit = 0;    // runs: y's elements a unit; rows: y's rows a unit (0: a row in pieces)
  std::uint64_t pieces = 1;  // rows: pieces of a row, each a unit (1: whole rows)
  std::uint64_t units = 0;   // the units the blocks share
};

// Throws dvp::Error naming what it does not take (inner neither 1 nor whole blocks; a type of
// other than 2 or 4 bytes) or what does not fit.
ExpandPlan expand_plan(const aicore::AiCoreConfig& cfg, const ExpandShape& s);

// Arguments at argbase: x, y (GM addresses).
aicore::Image expand_kernel(const aicore::AiCoreConfig& cfg, const ExpandShape& s);

}  // namespace dvp::kernels
