// SPDX-License-Identifier: MIT
// The vector unit (the V pipe): every V instruction on UB operands, with mask, repeats and
// block / repeat strides, computed element by element in the instruction's data type. What an
// instruction computes comes from its ISA table entry (vector_ops.hpp: its form, the types it
// takes, its element functions); the unit reads the operands and writes the results.
#pragma once
#include "pipe_unit.hpp"

namespace dvp::aicore {

class VectorUnit {
 public:
  explicit VectorUnit(CoreServices& core) : core_(core) {}
  Span execute(const Issued& e);

 private:
  struct Job;
  Span transpose(const Issued& e);
  bool ranges(const Job& j);
  void reduce(const Job& j);
  void compare(const Job& j);
  void elementwise(const Job& j);
  bool element_run(const Job& j, unsigned r, unsigned i, unsigned n, double scal);
  void element(const Job& j, unsigned r, unsigned i, double scal, std::int64_t scal_i);
  CoreServices& core_;
};

}  // namespace dvp::aicore
