// SPDX-License-Identifier: MIT
// Kernel library: element-wise operations on vectors in GM, z = x op y (add, sub, mul, max, min,
// and the comparisons eq ... ge, 1 or 0), z = op(x) (relu, exp, abs, sqrt, neg, not, and the
// activations: sigmoid, tanh, leaky_relu, hard_sigmoid, hard_swish, clip) or z = x != 0 ? y : w
// (where), z = x^alpha (pows), GELU (gelu, gelu_tanh), fp16 or fp32, and z = cast(x) between fp16, bf16, fp32, int8
// and int32, on any n. Each op is one entry of a table: its vector instructions per tile. Tiles sized from the UB go
// round-robin to the blocks; MTE2 (GM -> UB), the vector unit and MTE3 (UB -> GM) overlap on two
// buffers; one block does the tail (elementwise.cpp says how).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct ElementwiseShape {
  std::string op;                            // an ElementwiseOp's name, or cast
  aicore::DType dtype = aicore::DType::F16;  // of the inputs (and z, but for a cast)
  std::uint64_t n = 0;                       // elements
  aicore::DType to = aicore::DType::None;    // cast: the type of z (rounded to nearest even)
  double alpha = 0, beta = 0;                // the op's parameters (ElementwiseOp::params), rounded to dtype
};

struct ElementwiseSteps;
// One operation: its operands, the type it computes in, and its vector instructions per repeat
// (conversions aside), light and heavy (vexp, vrec, vsqrt: the complex rate), for the roofline.
struct ElementwiseOp {
  const char* name;
  unsigned inputs;   // 1 to 3 (x, y, w)
  bool f32_math;     // an f16 x is widened to f32 first and the result narrowed (2 more instructions)
  bool exact;        // z is the exact result rounded once to dtype (else several roundings, a rounded parameter)
  unsigned scratch;  // UB areas of a tile its steps use besides x's and z's (0 to 2)
  unsigned light, heavy;
  unsigned params;  // 0; 1: alpha; 2: alpha and beta
  const char* params_doc;
  const char* doc;
  void (*steps)(ElementwiseSteps& s);
  // light and heavy where they depend on alpha (pows: its exponent's bits); nullptr: the fields'
  std::pair<unsigned, unsigned> (*counts)(double alpha) = nullptr;
};
// The table (cast is not in it: a conversion, not an op), and one entry by name (nullptr: none).
const std::vector<ElementwiseOp>& elementwise_ops();
const ElementwiseOp* elementwise_op(const std::string& name);

// The op's inputs: 1 (x), 2 (x, y) or 3 (x, y, w); a cast's 1.
unsigned elementwise_inputs(const std::string& op);
// The op's vector instructions per element, light and heavy (the fields, or counts(alpha)).
std::pair<unsigned, unsigned> elementwise_counts(const ElementwiseOp& op, double alpha);
// Bytes per element of the wider of x and z (a cast's repeats are counted in it).
unsigned elementwise_wide_bytes(const ElementwiseShape& s);
// Elements in one 32-byte block of the narrower of x and z: the least n, and the granule of
// the tail (which recomputes part of the last block when n is not a multiple).
std::uint64_t elementwise_block_elems(const ElementwiseShape& s);
// Bytes of one operand tile: the largest power of two such that two buffers of each operand
// fit the UB and one vector instruction (255 repeats of 256 B) covers it.
std::uint32_t elementwise_tile_bytes(const aicore::AiCoreConfig& cfg, const ElementwiseShape& s);
// Arguments at argbase: the inputs (x, y, w: elementwise_inputs), then z.
aicore::Image elementwise_kernel(const aicore::AiCoreConfig& cfg, const ElementwiseShape& s);

}  // namespace dvp::kernels
