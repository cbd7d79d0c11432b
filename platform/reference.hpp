// SPDX-License-Identifier: MIT
// The reference implementations kernel outputs are checked against: plain C++ loops in double
// precision, independent of the AI Core model. Each gives the exact value of an output
// element before its rounding to the output type. Each check (check.op) is one entry of a
// table: how many inputs it reads, the check keys it needs, how many output elements it
// compares, what each input must hold, and its loop.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "aicore/isa.hpp"
#include "common/config.hpp"
#include "common/error.hpp"
#include "kernels/library/aipp.hpp"
#include "kernels/library/channel_mul.hpp"
#include "kernels/library/channel_softmax.hpp"
#include "kernels/library/gemm.hpp"
#include "kernels/library/pool.hpp"
#include "kernels/library/reduce.hpp"
#include "kernels/library/resize.hpp"
#include "kernels/library/slice.hpp"
#include "kernels/library/transpose.hpp"
#include "kernels/library/upsample.hpp"

namespace dvp::platform {

// Values a check or an element-wise reference decodes at a time (32 KiB of doubles: stays in the
// host's caches, and a buffer kept, not a whole tensor's fresh pages).
inline constexpr std::uint64_t kDecodeChunk = 4096;

// A tensor as read back from memory. Reference::compute decodes each input once into `values`
// (a kernel's reference reads an element many times: a GEMM's k times).
struct TensorView {
  const std::uint8_t* data;
  aicore::DType dtype;
  std::uint64_t elems = 0;
  const double* values = nullptr;  // the decoded elements, when decoded
  double at(std::uint64_t i) const { return values ? values[i] : load(i); }
  double load(std::uint64_t i) const;
};

struct Reference;

struct RefCheck {
  const char* name;
  unsigned min_inputs, max_inputs;  // gemm: a third input is a bias row
  std::vector<const char*> needs;   // check keys without a default it reads (cols, k, m, n)
  // Output elements compared, given the output tensor's.
  std::uint64_t (*count)(const Reference& r, std::uint64_t out_elems);
  // What each input must hold (in order), given the output's: elements, and its role in messages.
  std::vector<std::pair<std::uint64_t, const char*>> (*input_elems)(const Reference& r, std::uint64_t out_elems);
  void (*compute)(const Reference& r, const std::vector<TensorView>& in, std::vector<double>& out);
  // The element-wise checks: out[i] = element(r, a[i], b[i]) (r: their alpha and beta).
  double (*element)(const Reference& r, double a, double b) = nullptr;
  bool whole_rows = false;  // the output is rows of `cols` (softmax, layernorm)
  bool chunks = false;      // compute decodes its inputs a chunk at a time itself (where)
};
const cfg::Choices<const RefCheck*>& reference_checks();

struct Reference {
  const RefCheck* op = nullptr;
  std::uint64_t m = 0, k = 0, n = 0;  // gemm; topk: k
  bool b_transposed = false, relu = false;
  bool b_fractal = false;                  // gemm: in1, B^T, in fractal order (layout fractal_z) ...
  std::uint64_t b_k0 = 16;                 // ... in fractal rows of b_k0 elements (32 bytes of in1's type)
  bool bias = false;                       // gemm: in2 holds n values added to every row (before ReLU)
  bool f16_epilogue = false;               // gemm: the bias added in f16 (the kernel's epilogue: f16)
  double scale = 1;                        // gemm: the result times scale (int8 requantization), as an f32
  std::uint64_t cols = 0;                  // softmax, layernorm, topk, argmax, gather, expand: elements per row
  std::uint64_t rows = 0;                  // expand: output rows per row of the input
  double epsilon = 1e-5;                   // layernorm: added to the variance
  double alpha = 0, beta = 0;              // leaky_relu's slope, hard_sigmoid's, clip's bounds
  kernels::ConvShape conv;                 // conv2d: the kernel's own shape
  kernels::PoolShape pool;                 // pool: likewise
  kernels::AippShape aipp;                 // aipp: likewise
  kernels::TransposeShape transpose;       // transpose: likewise
  kernels::ReduceShape reduce;             // reduce: likewise
  kernels::ChannelSoftmaxShape softmax_c;  // softmax_c: likewise
  kernels::UpsampleShape upsample;         // upsample: likewise
  kernels::ResizeShape resize;             // resize: likewise
  kernels::ChannelMulShape channel_mul;    // channel_mul: likewise
  kernels::SliceShape slice;               // slice: likewise, or the AI CPU slice's arguments
  std::uint64_t mask_rows = 0;             // softmax: a second input's rows, the mask's (the kernel's shape)
  double mask_fill = 0;                    // softmax: what a row holds where the mask is 0

  // Set by whoever computes it on another thread: the long loops (gemm, conv2d) end early with
  // dvp::Error when it becomes true (a run that ends before its check needs the values).
  const std::atomic<bool>* stop = nullptr;
  void poll() const {
    if (stop && stop->load(std::memory_order_relaxed)) throw Error("reference stopped: the run has ended");
  }

  std::uint64_t count(std::uint64_t out_elems) const { return op->count(*this, out_elems); }
  // The reference output, element by element.
  std::vector<double> compute(const std::vector<TensorView>& in, std::uint64_t count) const;
};

}  // namespace dvp::platform
