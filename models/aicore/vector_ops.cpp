// SPDX-License-Identifier: MIT
#include "vector_ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dvp::aicore {

std::int64_t to_int(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return std::int64_t(v);
}

namespace {
// The integer ALU wraps in two's complement; C++ signed overflow is undefined, so sums and
// products are formed unsigned (u32 x u32 exceeds an int64).
std::int64_t wrap_add(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) + std::uint64_t(b)); }
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) - std::uint64_t(b)); }
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) * std::uint64_t(b)); }

double f_add(double a, double b) { return a + b; }
double f_sub(double a, double b) { return a - b; }
double f_mul(double a, double b) { return a * b; }
double f_div(double a, double b) { return a / b; }
double f_max(double a, double b) { return std::fmax(a, b); }
double f_min(double a, double b) { return std::fmin(a, b); }
double f_abs(double a, double) { return std::fabs(a); }
double f_exp(double a, double) { return std::exp(a); }
double f_ln(double a, double) { return std::log(a); }
double f_sqrt(double a, double) { return std::sqrt(a); }
double f_rsqrt(double a, double) { return 1.0 / std::sqrt(a); }
double f_rec(double a, double) { return 1.0 / a; }
double f_relu(double a, double) { return a > 0 ? a : 0.0; }
double f_lrelu(double a, double alpha) { return a >= 0 ? a : a * alpha; }

std::int64_t i_add(std::int64_t a, std::int64_t b, double) { return wrap_add(a, b); }
std::int64_t i_sub(std::int64_t a, std::int64_t b, double) { return wrap_sub(a, b); }
std::int64_t i_mul(std::int64_t a, std::int64_t b, double) { return wrap_mul(a, b); }
std::int64_t i_max(std::int64_t a, std::int64_t b, double) { return std::max(a, b); }
std::int64_t i_min(std::int64_t a, std::int64_t b, double) { return std::min(a, b); }
std::int64_t i_and(std::int64_t a, std::int64_t b, double) { return a & b; }
std::int64_t i_or(std::int64_t a, std::int64_t b, double) { return a | b; }
std::int64_t i_abs(std::int64_t a, std::int64_t, double) { return a < 0 ? wrap_sub(0, a) : a; }
std::int64_t i_relu(std::int64_t a, std::int64_t, double) { return std::max<std::int64_t>(a, 0); }
std::int64_t i_lrelu(std::int64_t a, std::int64_t, double alpha) {
  return a >= 0 ? a : to_int(std::nearbyint(double(a) * alpha));
}
}  // namespace

namespace vec {
using F = VecForm;
using T = VecTypes;
const VecOp add{F::Binary, T::Any, f_add, i_add};
const VecOp sub{F::Binary, T::Any, f_sub, i_sub};
const VecOp mul{F::Binary, T::Any, f_mul, i_mul};
const VecOp div{F::Binary, T::Float, f_div, nullptr};
const VecOp max{F::Binary, T::Any, f_max, i_max};
const VecOp min{F::Binary, T::Any, f_min, i_min};
const VecOp and_{F::Binary, T::Int, nullptr, i_and};
const VecOp or_{F::Binary, T::Int, nullptr, i_or};
const VecOp adds{F::Scalar, T::Any, f_add, i_add};
const VecOp muls{F::Scalar, T::Any, f_mul, i_mul};
const VecOp maxs{F::Scalar, T::Any, f_max, i_max};
const VecOp mins{F::Scalar, T::Any, f_min, i_min};
const VecOp abs{F::Unary, T::Any, f_abs, i_abs};
const VecOp exp{F::Unary, T::Float, f_exp, nullptr};
const VecOp ln{F::Unary, T::Float, f_ln, nullptr};
const VecOp sqrt{F::Unary, T::Float, f_sqrt, nullptr};
const VecOp rsqrt{F::Unary, T::Float, f_rsqrt, nullptr};
const VecOp rec{F::Unary, T::Float, f_rec, nullptr};
const VecOp relu{F::Unary, T::Any, f_relu, i_relu};
const VecOp lrelu{F::Scalar, T::Any, f_lrelu, i_lrelu};
const VecOp copy{F::Copy, T::Any};
const VecOp conv{F::Conv, T::Any};
const VecOp cmp{F::Cmp, T::Wide};
const VecOp sel{F::Sel, T::Wide};
const VecOp cadd{F::ReduceRepeat, T::Any, nullptr, nullptr, Reduce::Sum};
const VecOp cmax{F::ReduceRepeat, T::Any, nullptr, nullptr, Reduce::Max};
const VecOp cmin{F::ReduceRepeat, T::Any, nullptr, nullptr, Reduce::Min};
const VecOp redsum{F::ReduceAll, T::Any, nullptr, nullptr, Reduce::Sum};
const VecOp redmax{F::ReduceAll, T::Any, nullptr, nullptr, Reduce::Max};
const VecOp redmin{F::ReduceAll, T::Any, nullptr, nullptr, Reduce::Min};
const VecOp dup{F::Dup, T::Any};
const VecOp transpose{F::Transpose, T::Any};
}  // namespace vec

}  // namespace dvp::aicore
