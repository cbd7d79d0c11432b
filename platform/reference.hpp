// The reference implementations kernel outputs are checked against: plain C++ loops in double
// precision, independent of the AI Core model. Each gives the exact value of an output
// element before its rounding to the output type.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "aicore/isa.hpp"
#include "kernels/library/gemm.hpp"
#include "kernels/library/pool.hpp"

namespace dvp::platform {

// A tensor as read back from memory.
struct TensorView {
  const std::uint8_t* data;
  aicore::DType dtype;
  double at(std::uint64_t i) const;
};

struct Reference {
  std::string op;  // add sub mul max min relu copy exp | gemm | conv2d | pool | softmax | topk | argmax
  std::uint64_t m = 0, k = 0, n = 0;  // gemm
  bool b_transposed = false, relu = false;
  bool bias = false;  // gemm: in2 holds n values added to every row (before ReLU)
  std::uint64_t cols = 0;  // softmax, topk, argmax: elements per row (topk: k is above)
  kernels::ConvShape conv;  // conv2d: the kernel's own shape
  kernels::PoolShape pool;  // pool: likewise

  bool unary() const;
  // Output elements to compare (out_elems: the output tensor's size).
  std::uint64_t count(std::uint64_t out_elems) const;
  // The reference output, element by element.
  std::vector<double> compute(const std::vector<TensorView>& in, std::uint64_t count) const;
};

}  // namespace dvp::platform
