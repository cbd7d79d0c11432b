// SPDX-License-Identifier: MIT
// The cube (the M pipe): mmad multiplies A in L0A by B in L0B into C in L0C, fp16 / bf16 / fp32
// into fp32 and int8 into int32, in whole fractals of cube_m x cube_k x cube_n per step.
// Layouts: fractal.hpp.
#pragma once
#include <vector>

#include "pipe_unit.hpp"

namespace dvp::aicore {

class CubeUnit {
 public:
  explicit CubeUnit(CoreServices& core);
  Span mmad(const Issued& e);
  // The cube's steps for an mmad of mf x kf x nf fractals.
  std::uint64_t steps(std::uint64_t mf, std::uint64_t kf, std::uint64_t nf) const;
  double flops() const { return flops_; }      // floating-point multiply-adds x 2 executed
  double int_ops() const { return int_ops_; }  // int8 multiply-adds x 2

 private:
  struct Job;
  void decode(const Job& j);    // a_, bt_ = A's rows, B's columns
  void products(const Job& j);  // prod_ = A x B, exact (see decode)
  void accumulate_f32(const Job& j);
  void accumulate_s32(const Job& j);
  CoreServices& core_;
  double flops_ = 0, int_ops_ = 0;
  // Scratch of the functional cube, kept from mmad to mmad: the operands decoded (A's rows, B's
  // columns) and their products.
  std::vector<double> a_, bt_, prod_;
};

}  // namespace dvp::aicore
