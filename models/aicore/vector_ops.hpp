// SPDX-License-Identifier: MIT
// What a vector instruction computes, as the ISA table names it: its form (how operands are
// read and results written), the element types it accepts, and its per-element functions -
// floating point exact in a double (rounded once to the element type by the unit), integers
// wrapping in two's complement as the hardware's integer ALUs do.
#pragma once
#include <cstdint>

namespace dvp::aicore {

enum class VecForm : std::uint8_t {
  Binary,        // dst = f(src0, src1)
  Scalar,        // dst = f(src, scalar): the scalar is the low dtype bits of a register
  Unary,         // dst = f(src)
  Copy,          // dst = src, bit for bit
  Conv,          // dst (.dt1) = src (.dt2), converted with the rounding suffix
  Dup,           // dst = scalar
  Cmp,           // one bit per element: src0 <cmp> src1
  Sel,           // dst = selection bit ? src0 : src1
  ReduceRepeat,  // per repeat: the sum, or the (value, index) of the largest or smallest
  ReduceAll,     // the same over all repeats
  Transpose,     // 16 x 16 of 16-bit elements
};
enum class VecTypes : std::uint8_t { Any, Float, Int, Wide /* 16 and 32 bits */ };
enum class Reduce : std::uint8_t { None, Sum, Max, Min };

struct VecOp {
  VecForm form;
  VecTypes types;
  double (*f)(double a, double b) = nullptr;                                   // floating types
  std::int64_t (*i)(std::int64_t a, std::int64_t b, double scalar) = nullptr;  // integer types
  Reduce reduce = Reduce::None;
};

// The operations the ISA table uses (vector_ops.cpp).
namespace vec {
extern const VecOp add, sub, mul, div, max, min, and_, or_, adds, muls, maxs, mins, abs, exp, ln, sqrt, rsqrt, rec,
    relu, lrelu, copy, conv, cmp, sel, cadd, cmax, cmin, redsum, redmax, redmin, dup, transpose;
}

// An integer from a double: saturated, NaN as 0 (a cast out of range is undefined in C++).
std::int64_t to_int(double v);

}  // namespace dvp::aicore
