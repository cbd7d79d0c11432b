// SPDX-License-Identifier: MIT
// Number formats of the AI Core: fp16, bf16, fp32 and integers, with the conversions and
// rounding modes the vector unit and FixPipe apply.
//
// Values are carried in a double, which holds every f16, bf16, f32, s32 and u32 value
// exactly; one routine rounds a double to a binary floating format of any width with a given
// rounding mode, so every conversion is rounded once, from the exact value. (Debian's Imath
// `half` rounds to nearest even only; the hardware has six modes.)
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "isa.hpp"

namespace dvp::aicore::num {

// Bits of the nearest value in a format with `mant_bits` fraction bits and `exp_bits`
// exponent bits (IEEE layout: sign, biased exponent, fraction; subnormals; inf; NaN).
// Round::None means Rint. NaN becomes the canonical quiet NaN.
std::uint32_t round_to_format(double x, int mant_bits, int exp_bits, Round mode);
double from_format(std::uint32_t bits, int mant_bits, int exp_bits);

// round_to_format's nearest-even rounding of a value that is normal in the target format, on the
// double's bits: the common case of every f16 / bf16 store (tensors set up, the vector unit,
// FixPipe), many times cheaper than frexp and ldexp. Returns false (and leaves `out`) for the rest:
// zero, subnormal in the target, beyond its largest binade, inf, NaN.
template <int M, int E>
inline bool round_normal_rint(double x, std::uint32_t& out) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  constexpr int bias = (1 << (E - 1)) - 1, shift = 52 - M;
  const int e = int((b >> 52) & 0x7ff) - 1023;
  if (e < 1 - bias || e > bias) return false;
  const std::uint64_t frac = b & ((std::uint64_t(1) << 52) - 1);
  std::uint64_t q = frac >> shift;
  const std::uint64_t rem = frac & ((std::uint64_t(1) << shift) - 1), half = std::uint64_t(1) << (shift - 1);
  q += rem > half || (rem == half && (q & 1));
  // A carry out of the fraction moves into the exponent, the largest binade's into infinity: as
  // round_to_format rounds.
  out = (std::uint32_t(b >> 63) << (M + E)) + (std::uint32_t(e + bias) << M) + std::uint32_t(q);
  return true;
}

inline std::uint16_t to_f16(double x, Round r = Round::Rint) {
  std::uint32_t u = 0;
  if (x == 0) return std::signbit(x) ? 0x8000 : 0;  // every mode keeps a zero and its sign
  if ((r == Round::Rint || r == Round::None) && round_normal_rint<10, 5>(x, u)) return std::uint16_t(u);
  return std::uint16_t(round_to_format(x, 10, 5, r));
}
inline std::uint16_t to_bf16(double x, Round r = Round::Rint) {
  std::uint32_t u = 0;
  if ((r == Round::Rint || r == Round::None) && round_normal_rint<7, 8>(x, u)) return std::uint16_t(u);
  return std::uint16_t(round_to_format(x, 7, 8, r));
}
std::uint32_t to_f32(double x, Round r = Round::Rint);
// Decoding a 16-bit format from its bits, the same double as from_format gives (bit for bit, NaN
// and -0 included, in any rounding mode), with a few integer operations and no table. A normal
// value's exponent and mantissa move into a double's fields; a subnormal is (2^emin + its
// mantissa) - 2^emin, both exact; an all-ones exponent is infinity or the quiet NaN. (Many elements
// at once: load_n, which uses the host's vector conversions where it has them.)
template <int Mant, int Exp>
inline double decode16(std::uint16_t b) {
  constexpr int bias = (1 << (Exp - 1)) - 1;
  constexpr std::uint32_t exp_all = (1u << Exp) - 1;
  constexpr std::uint64_t emin = std::uint64_t(1023 + 1 - bias) << 52;  // 2^(1 - bias)
  const std::uint64_t sign = std::uint64_t(b >> (Mant + Exp)) << 63;
  const std::uint32_t ex = (b >> Mant) & exp_all;
  const std::uint64_t man = std::uint64_t(b & ((1u << Mant) - 1)) << (52 - Mant);
  std::uint64_t bits = (std::uint64_t(ex) + 1023 - bias) << 52 | man;
  if (ex == exp_all) bits = 0x7ff0000000000000ull | (man ? 0x0008000000000000ull : 0);
  if (ex == 0 && man == 0) bits = 0;  // a zero as itself: the subtraction below gives -0 when rounding down
  if (ex == 0 && man != 0) {
    double lo, sub;
    std::memcpy(&lo, &emin, 8);
    const std::uint64_t with_man = emin | man;
    std::memcpy(&sub, &with_man, 8);
    sub -= lo;
    std::memcpy(&bits, &sub, 8);
  }
  bits |= sign;
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}
inline double f16(std::uint16_t b) { return decode16<10, 5>(b); }
inline double bf16(std::uint16_t b) { return decode16<7, 8>(b); }
double f32(std::uint32_t b);

// Integer conversions: rounded with `r` (None = Rint), then saturated to [lo, hi]; NaN -> 0.
std::int64_t to_int(double x, Round r, std::int64_t lo, std::int64_t hi);

// Reads / writes one element of type t at p (little-endian) as a double.
double load(const std::uint8_t* p, DType t);
// n consecutive elements of type t from p, decoded into out: the type chosen once, not once per
// element (a reference or the functional cube decodes whole tensors and fractal rows).
void load_n(const std::uint8_t* p, DType t, std::uint64_t n, double* out);
void store(std::uint8_t* p, DType t, double v, Round r = Round::Rint);
// n values stored as consecutive elements of type t at p, rounded to nearest even: the type
// chosen once (a tensor set up, a reference rounded to its output's type).
void store_n(std::uint8_t* p, DType t, const double* v, std::uint64_t n);
// n f32 elements at `from` stored as f16 at `to`: what store_n(to, DType::F16, ...) gives for their
// values (nearest even; NaN the canonical 0x7e00), without a double between (a network's f32
// weights loaded into its f16 tensors: tens of millions of elements).
void f16_from_f32_n(const std::uint8_t* from, std::uint8_t* to, std::uint64_t n);
// The bits of v as an element of type t (rounded to nearest even): a vector instruction's scalar
// operand, which the unit reads from a register's low bits.
std::uint64_t bits(double v, DType t);

}  // namespace dvp::aicore::num
