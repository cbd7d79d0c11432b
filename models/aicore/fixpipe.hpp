// SPDX-License-Identifier: MIT
// FixPipe (the FIX pipe): reads the accumulators in L0C (Nz), converts them (dequantisation
// scale for int32, ReLU, rounding to the output type) and writes them row by row in ND to GM
// through the bus or to L1. Layouts: fractal.hpp.
#pragma once
#include "pipe_unit.hpp"

namespace dvp::aicore {

class FixPipe {
 public:
  explicit FixPipe(CoreServices& core) : core_(core) {}
  Span fixp(const Issued& e);

 private:
  // Row r of the result, converted to the output type, into `row`.
  void convert_row(const Issued& e, std::uint64_t r, std::uint8_t* row) const;
  CoreServices& core_;
};

}  // namespace dvp::aicore
