// SPDX-License-Identifier: MIT
// Kernel library: element-wise operations on vectors in GM, z = x op y (add, sub, mul, max, min)
// or z = op(x) (relu, exp, abs, sqrt), fp16 or fp32, and z = cast(x) between fp16, bf16, fp32,
// int8 and int32, on any n of at least one 32-byte block. Tiles sized from the UB go
// round-robin to the blocks; MTE2 (GM -> UB), the vector unit and MTE3 (UB -> GM) overlap on two
// buffers; one block does the tail (elementwise.cpp says how).
#pragma once
#include <cstdint>
#include <string>

#include "aicore/aicore_config.hpp"
#include "aicore/assembler.hpp"

namespace dvp::kernels {

struct ElementwiseShape {
  std::string op;                            // add, sub, mul, max, min, relu, exp, abs, sqrt, cast
  aicore::DType dtype = aicore::DType::F16;  // of x (and y)
  std::uint64_t n = 0;                       // elements
  aicore::DType to = aicore::DType::None;    // cast: the type of z (rounded to nearest even)
};

bool elementwise_binary(const std::string& op);
// Bytes per element of the wider of x and z (a cast's repeats are counted in it).
unsigned elementwise_wide_bytes(const ElementwiseShape& s);
// Elements in one 32-byte block of the narrower of x and z: the least n, and the granule of
// the tail (which recomputes part of the last block when n is not a multiple).
std::uint64_t elementwise_block_elems(const ElementwiseShape& s);
// Bytes of one operand tile: the largest power of two such that two buffers of each operand
// fit the UB and one vector instruction (255 repeats of 256 B) covers it.
std::uint32_t elementwise_tile_bytes(const aicore::AiCoreConfig& cfg, const ElementwiseShape& s);
// Arguments at argbase: x, y (binary ops only), z.
aicore::Image elementwise_kernel(const aicore::AiCoreConfig& cfg, const ElementwiseShape& s);

}  // namespace dvp::kernels
